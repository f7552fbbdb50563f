"""AppTest: the Playground's lecture view (issue 15 item 1) — each focus shows the matrices it
names, computed by the core, beside the controls that change them; the cells a change moved
are outlined; "All" is the full view."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_keys, edit_cells, open_page, spec_by_key

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario

SEED_000 = PRESETS["seed_000"].build()
SLOTS = ["playground_fig_slot_0", "playground_fig_slot_1", "playground_fig_slot_2"]
FOCUS_MATRICES = {  # what each focus shows in the three chart slots, left to right
    "weights": ["scaled", "weights", "output"],
    "scores": ["scores", "scaled", "masked"],
    "projections": ["q", "k", "v"],
}


def z_of(at, key: str) -> np.ndarray:
    from apptest_helpers import decode

    return decode(spec_by_key(at, key)["data"][0]["z"]).astype(float)


def outlined(at, key: str) -> set[tuple[int, int]]:
    """The (row, col) cells outlined in a chart."""
    shapes = spec_by_key(at, key)["layout"].get("shapes", [])
    return {(round(s["y0"] + 0.5), round(s["x0"] + 0.5)) for s in shapes}


@pytest.mark.parametrize("focus", list(FOCUS_MATRICES))
def test_each_focus_shows_its_three_matrices_from_the_core(focus):
    at = open_page("playground", focus=focus)
    assert chart_keys(at) == SLOTS
    att = run_scenario(SEED_000).attention
    for key, name in zip(SLOTS, FOCUS_MATRICES[focus], strict=True):
        np.testing.assert_allclose(z_of(at, key), getattr(att, name), rtol=0, atol=1e-15)


def test_a_focus_switch_keeps_the_three_chart_slots():
    """One session switching Weights -> Scores -> Q K V -> Weights: the same three chart keys
    (the browser updates those charts in place), each showing the new focus's matrices."""
    at = open_page("playground", focus="weights")
    att = run_scenario(SEED_000).attention
    for focus in ("scores", "projections", "weights"):
        at.session_state["playground_focus"] = focus
        at.run()
        assert chart_keys(at) == SLOTS, focus
        for key, name in zip(SLOTS, FOCUS_MATRICES[focus], strict=True):
            np.testing.assert_allclose(z_of(at, key), getattr(att, name), rtol=0, atol=1e-15)


def test_the_default_is_the_weights_focus_and_all_is_the_full_view():
    at = open_page("playground", focus=None)
    assert at.session_state["playground_focus"] == "weights"
    assert chart_keys(at) == SLOTS
    at.session_state["playground_focus"] = "all"
    at.run()
    assert "playground_fig_mask" in chart_keys(at) and "playground_fig_x" in chart_keys(at)


def test_a_cell_edit_outlines_exactly_the_cells_it_moved():
    at = open_page("playground", focus="weights")
    assert not outlined(at, "playground_fig_slot_1")  # nothing changed yet
    version = at.session_state["editor_version"]
    before = run_scenario(SEED_000).attention
    at = edit_cells(at, f"playground_x_v{version}", {3: {"d2": "3"}})
    after = run_scenario(at.session_state["scenario"]).attention
    for slot, name in enumerate(("scaled", "weights", "output")):
        moved = {(int(r), int(c)) for r, c in np.argwhere(
            ~np.isclose(getattr(after, name), getattr(before, name), rtol=1e-9, atol=1e-12))}
        assert moved and outlined(at, f"playground_fig_slot_{slot}") == moved, name
    at.run()  # a rerun that changes nothing clears the outlines
    assert not outlined(at, "playground_fig_slot_1")


def test_temperature_beside_the_weights_changes_them():
    """Issue 28 item 4: in the weights focus τ has one control, the weights chart's own slider
    (no τ slider above it); the scaled scores and the output follow it in the browser (their
    frames share its group). Its release is checked in the browser (tests/browser/
    test_lecture.py); the τ slider above the scores (scores focus) still edits τ."""
    at = open_page("playground", focus="weights")
    assert not [s for s in at.slider if "temperature" in str(s.key)]
    weights = spec_by_key(at, "playground_fig_slot_1")
    (slider,) = weights["layout"]["sliders"]
    assert slider["steps"][slider["active"]]["label"] == "1"
    for key in ("playground_fig_slot_0", "playground_fig_slot_2"):
        spec = spec_by_key(at, key)
        assert not spec["layout"].get("sliders") and spec["shown"] == "1", key
        assert {f["group"] for f in spec["frames"]} == {"tau"}, key
    at = open_page("playground", focus="scores")
    at.slider(key="playground_temperature_v0").set_value(0.5).run()
    expected = run_scenario(SEED_000.__class__(**{**SEED_000.__dict__, "temperature": 0.5}))
    np.testing.assert_allclose(z_of(at, "playground_fig_slot_1"),
                               expected.attention.scaled, rtol=0, atol=1e-15)


def test_heads_focus_shows_every_head_and_the_weights_focus_picks_one():
    at = open_page("playground", focus="all")
    at.number_input(key="playground_d_k_v0").set_value(4).run()
    at.number_input(key="playground_d_v_v1").set_value(4).run()
    at.selectbox(key="playground_variant_v2").set_value("multi_head").run()
    at.select_slider(key="playground_n_heads_v2").set_value(2).run()
    at.session_state["playground_focus"] = "heads"
    at.run()
    att = run_scenario(at.session_state["scenario"]).attention
    assert chart_keys(at) == ["playground_fig_lecture_head_0", "playground_fig_lecture_head_1"]
    np.testing.assert_allclose(z_of(at, "playground_fig_lecture_head_1"), att.weights[1],
                               rtol=0, atol=1e-15)
    at.session_state["playground_focus"] = "weights"
    at.session_state["playground_lecture_head"] = 1
    at.run()
    np.testing.assert_allclose(z_of(at, "playground_fig_slot_1"), att.weights[1],
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(z_of(at, "playground_fig_slot_2"), att.output,
                               rtol=0, atol=1e-15)


def _panel_titles(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**") and "&nbsp;" in m.value]


def test_the_weights_formula_names_the_mask_only_when_one_masks():
    """The weights focus shows no masked scores: unmasked, A = softmax(S'); with a causal
    mask, A = softmax(mask_M(S')) — never an S'' that nothing on the screen defines."""
    from attnviz.teach.text import playground as text

    at = open_page("playground", focus="weights")
    titles = _panel_titles(at)
    assert any(text.LECTURE_WEIGHTS[False] in t for t in titles), titles
    assert not any("S''" in t for t in titles), titles
    at.selectbox(key="playground_variant_v0").set_value("causal").run()
    titles = _panel_titles(at)
    assert any(text.LECTURE_WEIGHTS[True] in t for t in titles), titles
    assert not any("S''" in t for t in titles), titles


@pytest.mark.parametrize("focus", ["weights", "scores"])
def test_the_rows_charts_share_one_top_margin_and_cell_height(focus):
    """Row labels are drawn by the first chart only: the three charts get the same top margin
    (the one the turned key labels need) and the same cells' height, the τ slider under the
    weights taking its own room (checked in the browser: tests/browser/test_lecture.py)."""
    at = open_page("playground", focus=focus)
    layouts = [spec_by_key(at, k)["layout"] for k in SLOTS]
    assert len({lay["margin"]["t"] for lay in layouts}) == 1
    cells = {lay["height"] - lay["margin"]["t"] - lay["margin"].get("b", 0) for lay in layouts}
    assert len(cells) == 1, cells
    turned = [lay["xaxis"].get("tickangle") for lay in layouts]
    assert turned[:2] == [-45, -45], turned  # the key labels
