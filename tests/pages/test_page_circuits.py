"""Circuits through AppTest: the Model view's circuits section ranks and names the heads of the
example capture (its L0 H2 is a previous-token head, 0.52; its text repeats no token) and, for
a model of the models folder, of Olsson et al.'s probe — the page's table is the probe's own
ranking; the Induction heads page names both induction heads of the shipped model (0.83, 0.72).

The model tests skip where torch or transformers is not installed; nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from apptest_helpers import chart_keys, decode, open_page, spec_by_key

from attnviz.io import models_dir as md
from attnviz.io.examples.make_example import build_example
from attnviz.scenarios.circuits import THRESHOLD, score_heads, token_ids
from attnviz.teach.text import circuits as text
from attnviz.teach.text import induction as induction_text
from attnviz.ui import circuits_view
from attnviz.ui import model_view as mv

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TABLE, GRID = "model_view_circuits_fig_table", "model_view_circuits_fig_grid"


def rows(at) -> list[list[str]]:
    """The ranked table's rows (rank, head, the chosen score, the other scores, named)."""
    columns = spec_by_key(at, TABLE)["data"][0]["cells"]["values"]
    return [list(map(str, r)) for r in zip(*columns, strict=True)]


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    return open_page("model_view")


def test_the_example_capture_is_ranked_and_its_previous_token_head_named(at):
    assert not at.exception
    assert {TABLE, GRID} <= set(chart_keys(at))
    weights, tokens = build_example()
    expected = score_heads(weights, token_ids(tokens))
    # no token of "The sleepy child reads a book" repeats: the repeat scores say so
    assert text.NO_REPEAT.format(kinds="induction (prefix-matching), duplicate-token") in [
        i.value for i in at.info]
    # with nothing repeated, the grid opens on a score the text has (not an empty grid)
    assert at.radio(key=circuits_view.KIND_KEY).value == "previous_token"
    z = np.asarray(decode(spec_by_key(at, GRID)["data"][0]["z"]), dtype=float)
    assert np.isfinite(z).any()
    table = rows(at)
    assert len(table) == 8 and table[0][:3] == ["1", "L0 H2", "0.52"]
    assert [r[1] for r in table] == [f"L{a} H{b}" for a, b in expected.ranked("previous_token")]
    assert table[0][-1] == "previous-token" and all(r[-1] == "" for r in table[1:])
    assert text.NAMED.format(kind=text.KINDS["previous_token"], heads="L0 H2 (0.52)") in \
        markdown(at)
    assert text.NONE_NAMED.format(kind=text.KINDS["first_token"], threshold=f"{THRESHOLD:g}") \
        in markdown(at)
    grid = spec_by_key(at, GRID)
    np.testing.assert_allclose(decode(grid["data"][0]["z"]), expected.previous_token,
                               atol=1e-12)
    assert len(grid["layout"]["shapes"]) == 1  # the one named head outlined


def test_the_induction_page_names_both_induction_heads():
    at = open_page("induction")
    formed = [s.value for s in at.success if s.value.startswith(
        induction_text.FORMED.split(".")[0])]
    assert len(formed) == 1
    assert "Induction heads: L1 H1 (0.83), L1 H0 (0.72)" in formed[0]
    assert "Previous-token heads: L0 H1 (0.56). " in formed[0]  # L0 H0: 0.26


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_models import configs, save_model

    config, bert, pad = configs()["gpt2"]
    return save_model(config, bert, pad, tmp_path_factory.mktemp("store") / "gpt2")


def test_a_model_of_the_models_folder_is_probed_with_repeated_random_tokens(at, tmp_path,
                                                                              gpt2_folder):
    from attnviz.io.capture import load_model
    from attnviz.io.circuit_probe import probe_model

    folder = shutil.copytree(gpt2_folder, tmp_path / "models" / "gpt2")
    at.radio(key="model_view_source").set_value("directory").run()
    at.selectbox(key="model_view_model").set_value("gpt2")
    at.text_input(key="model_view_text").set_value("the cat sat on the mat")
    at.button(key="model_view_capture").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    on_text = rows(at)  # before the probe: the text's scores ("the" repeats)
    at.button(key="model_view_circuits_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    kept_folder, probe = at.session_state[circuits_view.PROBE_KEY]
    assert kept_folder == str(folder)
    expected = probe_model(*load_model(folder))  # the same probe, run here
    np.testing.assert_allclose(probe.scores.induction, expected.scores.induction, atol=1e-12)
    table = rows(at)
    assert [r[1] for r in table] == [f"L{a} H{b}" for a, b in expected.scores.ranked("induction")]
    assert [r[2] for r in table] == [f"{expected.scores.induction[a, b]:.2f}"
                                     for a, b in expected.scores.ranked("induction")]
    assert table != on_text
    caption = text.PROBE_DONE.format(batch=8, length=25, t=51,
                                     first=text.PROBE_FIRST.format(token=2))
    assert caption in [c.value for c in at.caption]
    assert "copying" in probe.scores.kinds  # GPT-2 ties its unembedding to W_E
