"""AppTest: the Playground's lecture view — each focus shows the matrices it
names, computed by the core, beside the controls that change them; the cells a change moved
are outlined; "All" is the full view."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_specs, edit_cells, open_page, set_focus, spec_by_key

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import common
from attnviz.ui.lecture import slot_key

SEED_000 = PRESETS["seed_000"].build()
FOCUS_MATRICES = {  # what each focus shows in its three charts, left to right
    "weights": ["scaled", "weights", "output"],
    "scores": ["scores", "scaled", "masked"],
    "projections": ["q", "k", "v"],
}


def slots(focus: str) -> list[str]:
    """The chart keys of ``focus``'s tab, left to right."""
    return [slot_key(i, focus) for i in range(3)]


LECTURE_KEYS = [k for focus in FOCUS_MATRICES for k in slots(focus)]


def z_of(at, key: str) -> np.ndarray:
    from apptest_helpers import decode

    return decode(spec_by_key(at, key)["data"][0]["z"]).astype(float)


def outlined(at, key: str) -> set[tuple[int, int]]:
    """The (row, col) cells outlined in a chart."""
    shapes = spec_by_key(at, key)["layout"].get("shapes", [])
    return {(round(s["y0"] + 0.5), round(s["x0"] + 0.5)) for s in shapes}


@pytest.mark.parametrize("open_focus", list(FOCUS_MATRICES))
def test_each_focus_shows_its_three_matrices_from_the_core(open_focus):
    """Whichever tab is open, the run after a change fills it alone (its charts come as soon as
    before); a run that changes nothing fills every lecture focus's tab with its three matrices
    (a switch then shows them without a run)."""
    at = open_page("playground", focus=open_focus, lazy_open=False)
    assert chart_keys(at) == slots(open_focus)
    at.run()
    assert chart_keys(at) == LECTURE_KEYS
    att = run_scenario(SEED_000).attention
    for focus, names in FOCUS_MATRICES.items():
        for key, name in zip(slots(focus), names, strict=True):
            np.testing.assert_allclose(z_of(at, key), getattr(att, name), rtol=0, atol=1e-15)


def test_a_focus_switch_sends_the_same_figures():
    """One session switching Weights -> Scores -> Q K V -> Weights: each run (a tab switch
    starts one) sends every lecture chart with the figure it had, outlines included, so the
    browser draws nothing again (plotly_view.js draws a figure it already has no second time)."""
    at = open_page("playground", focus="weights", lazy_open=False).run()
    before = chart_specs(at)
    for focus in ("scores", "projections", "weights"):
        set_focus(at, focus).run()
        assert chart_keys(at) == LECTURE_KEYS, focus
        assert chart_specs(at) == before, focus


def test_the_default_is_the_weights_focus_and_all_is_the_full_view():
    at = open_page("playground", focus=None)
    assert at.session_state["playground_focus"] == "Weights"
    at.run()
    assert chart_keys(at) == LECTURE_KEYS  # "All" is drawn only while open
    set_focus(at, "all").run()
    keys = chart_keys(at)
    assert "playground_fig_mask" in keys and "playground_fig_x" in keys
    assert set(LECTURE_KEYS) <= set(keys)  # the other tabs keep theirs


def test_a_cell_edit_outlines_exactly_the_cells_it_moved():
    at = open_page("playground", focus="weights").run()  # every tab filled
    assert not outlined(at, slot_key(1))  # nothing changed yet
    version = at.session_state["editor_version"]
    before = run_scenario(SEED_000).attention
    at = edit_cells(at, f"playground_x_v{version}", {3: {"d2": "3"}})
    after = run_scenario(at.session_state["scenario"]).attention
    for slot, name in enumerate(("scaled", "weights", "output")):
        moved = {(int(r), int(c)) for r, c in np.argwhere(
            ~np.isclose(getattr(after, name), getattr(before, name), rtol=1e-9, atol=1e-12))}
        assert moved and outlined(at, slot_key(slot)) == moved, name
    at.run()  # a run that changes nothing (a tab switched) keeps them: the last change's
    assert outlined(at, slot_key(1)) == {(int(r), int(c)) for r, c in np.argwhere(
        ~np.isclose(after.weights, before.weights, rtol=1e-9, atol=1e-12))}
    scaled = {(int(r), int(c)) for r, c in np.argwhere(
        ~np.isclose(after.scaled, before.scaled, rtol=1e-9, atol=1e-12))}
    assert outlined(at, slot_key(1, "scores")) == scaled  # the hidden tabs, filled then
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "0.5"}})
    newest = run_scenario(at.session_state["scenario"]).attention
    assert outlined(at, slot_key(1)) == {(int(r), int(c)) for r, c in np.argwhere(
        ~np.isclose(newest.weights, after.weights, rtol=1e-9, atol=1e-12))}


def test_temperature_beside_the_weights_changes_them():
    """In the weights focus τ has one control, the weights chart's own slider
    (no τ slider above it); the scaled scores and the output follow it in the browser (their
    frames share its group). Its release is checked in the browser (tests/browser/
    test_lecture.py). No focus has a τ slider above its charts; "All" has one in its settings,
    and the other tabs follow it."""
    for focus in FOCUS_MATRICES:
        at = open_page("playground", focus=focus)
        assert not [s for s in at.slider if "temperature" in str(s.key)], focus
    at.run()  # every tab
    weights = spec_by_key(at, slot_key(1))
    (slider,) = weights["layout"]["sliders"]
    assert slider["steps"][slider["active"]]["label"] == "1"
    for key in (slot_key(0), slot_key(2)):
        spec = spec_by_key(at, key)
        assert not spec["layout"].get("sliders") and spec["shown"] == "1", key
        assert {f["group"] for f in spec["frames"]} == {"tau"}, key
    at = open_page("playground", focus="all")
    at.slider(key="playground_temperature_v0").set_value(0.5).run()
    at.run()  # every tab
    expected = run_scenario(SEED_000.__class__(**{**SEED_000.__dict__, "temperature": 0.5}))
    np.testing.assert_allclose(z_of(at, slot_key(1, "scores")),
                               expected.attention.scaled, rtol=0, atol=1e-15)


def test_heads_focus_shows_every_head_and_the_weights_focus_picks_one():
    at = open_page("playground", focus="all")
    at.number_input(key="playground_d_k_v0").set_value(4).run()
    at.number_input(key="playground_d_v_v1").set_value(4).run()
    at.selectbox(key="playground_variant_v2").set_value("multi_head").run()
    at.select_slider(key="playground_n_heads_v2").set_value(2).run()
    set_focus(at, "heads").run().run()
    att = run_scenario(at.session_state["scenario"]).attention
    heads = [k for k in chart_keys(at) if k.startswith("playground_fig_lecture_head_")]
    assert heads == ["playground_fig_lecture_head_0", "playground_fig_lecture_head_1"]
    np.testing.assert_allclose(z_of(at, "playground_fig_lecture_head_1"), att.weights[1],
                               rtol=0, atol=1e-15)
    set_focus(at, "weights")
    at.session_state["playground_lecture_head"] = 1
    at.run().run()  # another head: the open tab, then every tab
    np.testing.assert_allclose(z_of(at, slot_key(1)), att.weights[1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(z_of(at, slot_key(2)), att.output, rtol=0, atol=1e-15)
    np.testing.assert_allclose(z_of(at, slot_key(0, "scores")), att.scores[1],
                               rtol=0, atol=1e-15)  # every tab shows the head picked


def _panel_titles(at, label: str = "Weights") -> list[str]:
    """The lecture panels' titles in the focus tab ``label``."""
    (tabs,) = [b for b in at.get("tab_container") if b.key == "playground_focus"]
    (tab,) = [t for t in tabs.children.values() if t.label == label]

    def walk(node):
        yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    return [m.value for m in walk(tab) if getattr(m, "type", "") == "markdown"
            and m.value.startswith("**") and "&nbsp;" in m.value]


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


def test_the_scaled_scores_title_names_the_cap_when_they_are_capped():
    """Soft-capping's scaled scores are c·tanh(S / (√d_k c)) (the matrix holds the capped
    values, ≤ c): the title says so, and an uncapped variant's does not."""
    from attnviz.scenarios.presets import PRESETS as ALL

    at = open_page("playground", focus="weights")
    assert not any("tanh" in t for t in _panel_titles(at))
    at.session_state["scenario"] = ALL["capped_at_2"].build()
    at.run()
    titles = [t for t in _panel_titles(at) if "S' =" in t]
    assert titles and all(r"c\,\tanh" in t for t in titles), titles
    scaled = run_scenario(ALL["capped_at_2"].build()).attention.scaled
    assert np.abs(scaled).max() <= 2.0  # what the title says: never beyond c = 2


@pytest.mark.parametrize("focus", ["weights", "scores"])
def test_the_rows_charts_share_one_top_margin_and_cell_height(focus):
    """Row labels are drawn by the first chart only: the three charts get the same top margin
    (the one the turned key labels need) and the same cells' height, the τ slider under the
    weights taking its own room (checked in the browser: tests/browser/test_lecture.py)."""
    at = open_page("playground", focus=focus)
    layouts = [spec_by_key(at, k)["layout"] for k in slots(focus)]
    assert len({lay["margin"]["t"] for lay in layouts}) == 1
    cells = {lay["height"] - lay["margin"]["t"] - lay["margin"].get("b", 0) for lay in layouts}
    assert len(cells) == 1, cells
    turned = [lay["xaxis"].get("tickangle") for lay in layouts]
    assert turned[:2] == [-45, -45], turned  # the key labels


def fill_asks(at) -> list:
    """The component in this run that asks the browser for the run filling every tab."""
    return [node for node in at.get("bidi_component") if node.proto.component_name.endswith(
        "attnviz_fill_tabs")]


def test_the_run_after_an_edit_asks_for_the_run_that_fills_every_tab():
    at = open_page("playground", focus="weights").run()
    assert not fill_asks(at)  # every tab filled: nothing to ask for
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {3: {"d2": "3"}})
    assert len(fill_asks(at)) == 1  # the open tab alone, and the ask
    assert not [k for k in chart_keys(at) if k in slots("scores")]
    at.run()  # the run it asks for changes nothing: every tab
    assert not fill_asks(at)
    assert [k for k in chart_keys(at) if k in slots("scores")] == slots("scores")


def test_a_note_said_once_is_not_taken_off_the_screen_by_a_fill_run():
    """Typing a sentence says once which words got new vectors: that run asks for no fill run
    (it would take the note away); the hidden tabs fill on a click."""
    at = open_page("playground", focus="weights").run()
    at.text_input(key="playground_tokens").input("a brand new sentence here").run()
    said = common.TOKENS_NEW_VECTORS.split("{")[0]
    assert any(said in i.value for i in at.info), [i.value for i in at.info]
    assert not fill_asks(at)
