"""A guided lecture step that changes settings on top of its preset names them in its
scenario's title ("Four words (seed 000), causal mask"): the Masks step of Attention from
scratch read "Edited from Four words (seed 000)", as if someone had edited the preset. Once a
person edits it, it reads "Edited from <the step's title>"."""

from __future__ import annotations

import pytest
from apptest_helpers import APP
from streamlit.testing.v1 import AppTest

from attnviz.scenarios.presets import EDITED_FROM, PRESETS
from attnviz.teach.lectures import LECTURES, with_settings
from attnviz.teach.text import lectures as text

WITH_SETTINGS = [(lec.key, i, step) for lec in LECTURES.values()
                 for i, step in enumerate(lec.steps) if step.settings]


def test_some_steps_change_settings():
    assert len(WITH_SETTINGS) >= 5


@pytest.mark.parametrize("step", [s for _, _, s in WITH_SETTINGS],
                         ids=[f"{k}-{i + 1}" for k, i, _ in WITH_SETTINGS])
def test_a_steps_title_names_every_setting_it_changes(step):
    preset = PRESETS[step.preset].build()
    scenario = with_settings(preset, step.settings)
    words = [text.SETTING_WORDS[item] for item in step.settings.items()]  # each has words
    assert scenario.title == text.STEP_TITLE.format(title=preset.title,
                                                    settings=", ".join(words))
    assert scenario.description == ""  # the preset's claims may not hold with the settings


def test_settings_without_words_leave_the_title():
    preset = PRESETS["online_tiles"].build()
    assert with_settings(preset, {"variant": "scaled_dot_product"}).title == preset.title


def test_the_masks_step_names_its_causal_mask_and_an_edit_says_edited_from_it():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lecture"] = "scratch"
    at.query_params["step"] = "8"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    title = text.STEP_TITLE.format(title=PRESETS["seed_000"].build().title,
                                   settings=text.SETTING_WORDS[("mask_kind", "causal")])
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert captions[0] == title
    assert not any(c.startswith(EDITED_FROM.format(title="")) for c in captions)
    at.radio(key="masks_kind").set_value("none").run()  # the person's own edit
    assert not at.exception, [e.message for e in at.exception]
    assert at.caption[0].value.replace("\\", "") == EDITED_FROM.format(title=title)
