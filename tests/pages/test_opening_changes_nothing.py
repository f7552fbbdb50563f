"""Opening a page never changes the scenario.

From each preset, every page of the app is opened in one session, one after the other; after
each, the stored scenario's content (fingerprint), its title and its share link are those of
the preset — no page marks it "Edited from …" by merely being opened (Encoder–decoder did, by
storing the optional parts it fills) — and the sidebar still names it after the page ran. An
edit of a part a page filled is stored, with the part.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import APP, editor_state, grids, switch_to, user_key
from streamlit.testing.v1 import AppTest

from attnviz.io.scenario_io import to_link_param
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.presets import EDITED_FROM, PRESETS, preset_of
from attnviz.ui import state

PAGES = re.findall(r'st\.Page\("pages/(\w+)\.py"', Path(APP).read_text())
# every kind of scenario: the seed notebooks (one with Q, K, V given directly), cross-attention,
# additive, heads, a variant with settings of its own, a pattern
FROM = ["seed_000", "seed_001_causal", "seed_004_two_heads", "translation", "bahdanau",
        "alibi_local", "kv_decoding", "pattern_previous"]


def stored(at):
    return at.session_state[state.SCENARIO]


def test_the_pages_are_read_from_the_app():
    assert len(PAGES) >= 19 and "encoder_decoder" in PAGES


@pytest.mark.parametrize("key", FROM)
def test_opening_every_page_leaves_the_scenario_its_title_and_its_link_unchanged(key):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.session_state[state.SCENARIO] = PRESETS[key].build()
    at.run()
    before = stored(at)
    digest, title, link = fingerprint(before), before.title, to_link_param(before)
    for page in PAGES:
        switch_to(at, page, lazy_open=False, focus=None)
        assert not at.exception, (page, [e.message for e in at.exception])
        now = stored(at)
        assert fingerprint(now) == digest, f"opening {page} changed the scenario"
        assert now.title == title and not now.title.startswith(EDITED_FROM.format(title=""))
        assert to_link_param(now) == link
        assert preset_of(now) == key
        # the frame finished after the page, also after one that ended early: the sidebar
        # names the current scenario (a page's st.stop() once left it empty)
        assert title in [t.value for t in at.sidebar.text], page


def test_an_edit_of_a_filled_part_stores_the_part_and_the_edit():
    at = AppTest.from_file(APP, default_timeout=60).run()
    switch_to(at, "encoder_decoder")
    before = stored(at)
    assert not before.has_part("source")  # shown filled, not stored
    source = next(g for g in grids(at) if "src_x" in user_key(g))
    key = user_key(source)
    at.session_state[key] = editor_state(at, key, {0: {"d0": 0.625}})
    at.run()
    after = stored(at)
    assert after.has_part("source") and after.source_x[0, 0] == 0.625
    np.testing.assert_array_equal(after.source_x[1:], before.x[1:])  # the fill, kept
    assert after.source_tokens == before.tokens
    assert preset_of(after) is None  # now it is edited, and says so
