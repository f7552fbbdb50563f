"""AppTest: Gradients where a lecturer clicks — the √d_k sweep is kept for the
last few scenarios and losses (switching the loss back does not compute it again, and shows the
same numbers), the charts are marked to be redrawn lazily off screen, and the loss select (with
everything that depends on it) is a fragment of its own, writing into places the rest of the page
left for it: a loss change redraws only what the loss changes on a server (not the forward
matrices, their titles or the formulas), and draws what a whole run draws."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import (
    chart_keys,
    decode,
    fragment_of,
    grid_state,
    open_page,
    run_like_a_server,
    spec_by_key,
    switch_to,
)

from attnviz.scenarios import gradients as gradients_module
from attnviz.scenarios.gradients import Loss, norm_sweep, self_output
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import position_labels, run_scenario
from attnviz.teach import backward
from attnviz.teach.text import gradients as text
from attnviz.ui import gradients_view, state


def _sweep(at) -> np.ndarray:
    return decode(spec_by_key(at, "gradients_fig_sweep")["data"][0]["y"]).astype(float)


def test_switching_the_loss_back_reuses_its_sweep_with_the_same_numbers(monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[1].kind)
        return gradients_module.norm_sweep(*args, **kwargs)

    monkeypatch.setattr(gradients_view, "norm_sweep", counted)
    at = open_page("gradients")
    sc = at.session_state[state.SCENARIO]
    first = _sweep(at)
    base = 1 / np.sqrt(3)
    scales = [m * base for m in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32)]
    np.testing.assert_allclose(first, norm_sweep(sc, Loss("output_mse", self_output(sc)),
                                                 "scale", scales), rtol=1e-12)
    at.selectbox(key="gradients_loss").set_value("given").run()
    assert not at.exception
    other = _sweep(at)
    assert not np.allclose(other, first), "another loss, another sweep"
    at.selectbox(key="gradients_loss").set_value("output_mse").run()
    assert not at.exception
    np.testing.assert_array_equal(_sweep(at), first)
    assert calls == ["output_mse", "given"], calls  # the MSE's sweep was not computed again
    at.selectbox(key="gradients_loss").set_value("given").run()
    np.testing.assert_array_equal(_sweep(at), other)
    assert calls == ["output_mse", "given"], calls


def test_the_sessions_sweeps_stay_few():
    at = open_page("gradients")
    for _ in range(2):
        for kind in ("given", "pattern_ce", "output_mse"):
            at.selectbox(key="gradients_loss").set_value(kind).run()
    for seed in range(gradients_view.SWEEPS_KEPT + 2):  # new scenarios: new sweeps
        sc = at.session_state[state.SCENARIO]
        at.session_state[state.SCENARIO] = replace(sc, x=np.asarray(sc.x) + seed + 1)
        at.run()
        assert not at.exception
    assert len(at.session_state[gradients_view.SWEEP_MEMO]) == gradients_view.SWEEPS_KEPT


def test_every_gradients_chart_is_redrawn_lazily():
    at = open_page("gradients")
    keys = [k for k in chart_keys(at) if k.startswith("gradients_")]
    assert len(keys) >= 20
    for key in keys:
        assert spec_by_key(at, key)["view"]["lazy"] is True, key


def test_a_loss_change_redraws_only_what_the_loss_changes():
    at = open_page("gradients")
    by_loss = fragment_of(at, "gradients_loss")
    assert by_loss is not None, "the loss select is drawn outside a fragment: a loss reruns all"
    trace_i = next(b.key for b in at.selectbox if str(b.key).startswith("gradients_trace_i_"))
    # the traced cell's and the √d_k pickers: the loss part's too (they change only what it
    # draws), written into places the outer part (the head's and matrices') left for them
    assert fragment_of(at, trace_i) == fragment_of(at, "gradients_sweep_pick") == by_loss
    whole_keys = chart_keys(at)
    at.selectbox(key="gradients_loss").set_value("given")
    run_like_a_server(at, "gradients_loss")
    assert not at.exception, [e.message for e in at.exception]
    assert text.HEADER not in [h.value for h in at.header], "the page's header ran again"
    # only the gradients (and the sweep's two charts) are sent again, in the page's order: the
    # forward matrices, their titles and the formulas the loss does not change are not
    assert chart_keys(at) == [k for k in whole_keys if not k.endswith("_fwd")]
    assert f"**{text.OUTPUT}**" not in [m.value for m in at.markdown]
    assert len(at.latex) == 3  # the loss's formula, dP's and the traced dS̃_ij
    in_part = {k: spec_by_key(at, k) for k in chart_keys(at)}
    sc = at.session_state[state.SCENARIO]
    d_output = decode(spec_by_key(at, "gradients_output_grad")["data"][0]["z"])
    np.testing.assert_array_equal(d_output, np.ones_like(d_output))  # "given": dO = ones
    at.run()  # the whole page with the same loss: the same figures, number for number
    assert not at.exception
    assert text.HEADER in [h.value for h in at.header]
    assert chart_keys(at) == whole_keys
    assert {k: spec_by_key(at, k) for k in in_part} == in_part
    assert at.session_state[state.SCENARIO] is sc  # the parts only read the scenario


def test_the_loss_part_alone_switches_to_the_pattern_loss_and_back():
    at = open_page("gradients")
    for kind in ("pattern_ce", "output_mse", "pattern_ce"):  # its select comes and goes
        at.selectbox(key="gradients_loss").set_value(kind)
        run_like_a_server(at, "gradients_loss")
        assert not at.exception, [e.message for e in at.exception]
        assert ("gradients_pattern" in [b.key for b in at.selectbox]) == (kind == "pattern_ce")
    at.run()  # a whole run with the pattern loss: then its editor, by the loss part alone
    at.selectbox(key="gradients_pattern").set_value("custom")
    run_like_a_server(at, "gradients_pattern")
    assert not at.exception, [e.message for e in at.exception]
    assert "gradients_weights_grad" in chart_keys(at)
    at.selectbox(key="gradients_pattern").set_value("uniform")
    run_like_a_server(at, "gradients_pattern")
    assert not at.exception, [e.message for e in at.exception]
    sc = at.session_state[state.SCENARIO]
    g = gradients_module.gradients(sc, Loss("pattern_ce", np.ones((4, 4))))
    np.testing.assert_allclose(decode(spec_by_key(at, "gradients_weights_grad")["data"][0]["z"]),
                               g.attention.d_weights[0], rtol=1e-6)


def test_after_a_loss_that_failed_the_loss_part_alone_draws_every_gradient_again():
    at = open_page("gradients")
    at.session_state[state.SCENARIO] = replace(at.session_state[state.SCENARIO],
                                               mask_kind="causal")
    at.selectbox(key="gradients_loss").set_value("pattern_ce").run()
    at.selectbox(key="gradients_pattern").set_value("custom").run()
    widget = f"gradients_edit_pattern_ce_v{at.session_state[state.EDITOR_VERSION]}"
    keys = at.session_state[state.SCENARIO].key_tokens
    second = position_labels(keys)[1]
    at.session_state[widget] = grid_state({0: {second: "1"}})  # query 0 → key 1: masked
    at.run()  # a whole run in which the loss cannot be computed
    assert any("wants weight on key 1 of query 0" in e.value for e in at.error), at.error
    assert "gradients_output_grad" not in chart_keys(at)
    at.session_state[widget] = grid_state({0: {second: "0"}})  # the loss part alone: fixed
    run_like_a_server(at, widget)
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error
    assert [k for k in chart_keys(at) if k.endswith("_grad")] == [
        f"gradients_{name}_grad" for name in ("output", "weights", "scaled", "q", "k", "v",
                                              "param_w_q", "param_w_k", "param_w_v", "param_x")]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_only_the_loss_and_dp_formulas_depend_on_the_loss(preset):
    """The formulas drawn outside the loss's part (once, whatever the loss) are the same for
    every loss; the loss's part draws the other two."""
    sc = PRESETS[preset].build()
    att = run_scenario(sc).attention
    for shared in (False, True):
        rest = [{k: v for k, v in backward.formulas(backward.settings_of(
                    sc.spec, att, shared_kv=shared, loss=kind)).items()
                 if k not in ("loss", "d_weights")} for kind in gradients_module.LOSSES]
        assert all(r == rest[0] for r in rest), (preset, shared)


def test_the_sweep_marks_the_picked_value_across_the_plot():
    at = open_page("gradients")
    at.select_slider(key="gradients_sweep_pick").set_value(4.0).run()
    assert not at.exception
    (line,) = spec_by_key(at, "gradients_fig_sweep")["layout"]["shapes"]
    x = 4.0 / np.sqrt(3)  # the scale picked: 4 × 1/√d_k, d_k = 3
    assert line["x0"] == line["x1"] == x and line["xref"] == "x"
    assert (line["y0"], line["y1"], line["yref"]) == (0, 1, "y domain")  # the plot's height
    assert line["line"] == {"dash": "dot", "color": "#d62728"}


def test_the_loss_part_alone_draws_the_head_picked_before():
    at = open_page("home")
    at.selectbox(key="sidebar_preset").set_value("gqa_8_2")
    at.button(key="sidebar_load_preset").click().run()
    switch_to(at, "gradients")
    at.selectbox(key="gradients_head").set_value(5)
    run_like_a_server(at, "gradients_head")  # the outer part: the head's matrices, places
    at.selectbox(key="gradients_loss").set_value("given")
    run_like_a_server(at, "gradients_loss")  # the loss part alone, in those places
    assert not at.exception, [e.message for e in at.exception]
    sc = at.session_state[state.SCENARIO]
    g = gradients_module.gradients(sc, Loss("given", np.ones(np.shape(
        run_scenario(sc).attention.output))))
    att = run_scenario(sc).attention
    sweep = gradients_module.saturation_sweep(sc, np.shape(att.head(5).q)[1])
    at_pick = gradients_module.gradients(sweep.swept(sc, 1.0), Loss("given", np.ones(np.shape(
        att.output))))  # the √d_k story's dS̃ at the slider's value (1 × 1/√d_k)
    for key, want in (("gradients_q_grad", g.attention.d_q[5]),
                      ("gradients_k_grad", g.attention.d_k[1]),  # head 5 reads K/V head 1
                      ("gradients_scaled_grad", g.attention.d_scaled[5]),
                      ("gradients_fig_sweep_heatmap", at_pick.attention.d_scaled[5])):
        np.testing.assert_allclose(decode(spec_by_key(at, key)["data"][0]["z"]), want,
                                   rtol=1e-6, err_msg=key)


def test_a_traced_cell_or_sqrt_dk_pick_reruns_the_loss_part_alone():
    at = open_page("gradients")
    at.selectbox(key="gradients_trace_i_4").set_value(2)
    run_like_a_server(at, "gradients_trace_i_4")
    at.selectbox(key="gradients_trace_j_4").set_value(1)
    run_like_a_server(at, "gradients_trace_j_4")
    assert not at.exception, [e.message for e in at.exception]
    assert not any(k.endswith("_fwd") for k in chart_keys(at)), "the matrices were sent again"
    sc = at.session_state[state.SCENARIO]
    g = gradients_module.gradients(sc, Loss("output_mse", self_output(sc)))
    want = f"{g.attention.d_scaled[0, 2, 1]:.5g}".replace("e", r"\mathrm{e}")
    assert any(r"d\tilde S_{ij}" in m.value and f"= {want} \\end" in m.value
               for m in at.latex), [m.value for m in at.latex]
    at.select_slider(key="gradients_sweep_pick").set_value(8.0)
    run_like_a_server(at, "gradients_sweep_pick")
    assert not at.exception, [e.message for e in at.exception]
    assert not any(k.endswith("_fwd") for k in chart_keys(at))
    base = 1 / np.sqrt(3)
    sharp = gradients_module.gradients(replace(sc, scale_mode="custom", custom_scale=8 * base),
                                       Loss("output_mse", self_output(sc)))
    np.testing.assert_allclose(decode(spec_by_key(at, "gradients_fig_sweep_heatmap")["data"][0][
        "z"]).astype(float), sharp.attention.d_scaled[0], rtol=1e-6, atol=1e-12)
    (line,) = spec_by_key(at, "gradients_fig_sweep")["layout"]["shapes"]
    assert line["x0"] == 8 * base
