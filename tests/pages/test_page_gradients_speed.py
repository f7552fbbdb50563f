"""AppTest: Gradients where a lecturer clicks (issue 28 item 7) — the √d_k sweep is kept for the
last few scenarios and losses (switching the loss back does not compute it again, and shows the
same numbers), the charts are marked to be redrawn lazily off screen, and the loss select (with
everything that depends on it) is a fragment: a loss change reruns that part alone on a server,
and draws what a whole run draws."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from apptest_helpers import (
    chart_keys,
    chart_specs,
    decode,
    fragment_of,
    open_page,
    run_like_a_server,
    spec_by_key,
)

from attnviz.scenarios import gradients as gradients_module
from attnviz.scenarios.gradients import Loss, norm_sweep, self_output
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
        assert spec_by_key(at, key)["layout"]["meta"]["attnviz"]["lazy"] is True, key


def test_a_loss_change_reruns_only_the_backward_pass_and_draws_what_a_whole_run_draws():
    at = open_page("gradients")
    part = fragment_of(at, "gradients_loss")
    assert part is not None, "the loss select is drawn outside a fragment: a loss reruns all"
    trace_i = next(b.key for b in at.selectbox if str(b.key).startswith("gradients_trace_i_"))
    # the traced cell's and the √d_k pickers: the same part
    assert fragment_of(at, trace_i) == fragment_of(at, "gradients_sweep_pick") == part
    whole_keys = chart_keys(at)
    at.selectbox(key="gradients_loss").set_value("given")
    run_like_a_server(at, "gradients_loss")
    assert not at.exception, [e.message for e in at.exception]
    assert text.HEADER not in [h.value for h in at.header], "the page's header ran again"
    assert chart_keys(at) == whole_keys  # every chart of the page is in the part that reruns
    in_part = chart_specs(at)
    sc = at.session_state[state.SCENARIO]
    d_output = decode(spec_by_key(at, "gradients_output_grad")["data"][0]["z"])
    np.testing.assert_array_equal(d_output, np.ones_like(d_output))  # "given": dO = ones
    at.run()  # the whole page with the same loss: the same figures, number for number
    assert not at.exception
    assert text.HEADER in [h.value for h in at.header]
    assert chart_specs(at) == in_part
    assert at.session_state[state.SCENARIO] is sc  # the part only read the scenario
