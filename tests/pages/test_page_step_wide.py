"""AppTest: Step by step and Trace a cell on a GPT-2-small-sized head (x 769
wide with the bias column, 12 heads of 64: one head's Q, K, V 64 wide). Step by step's two wide
tables — the values v_j and the α_ij · v_j sums, 128 keys × 64 dimensions — and Trace a cell's
Q, K and V heatmaps are sent only when their expander is opened (drawing them took half and a
third of the pages' time to open in the browser: benchmarks/bench_step_wide.py); opened, they
hold the core's numbers. A toy scenario's are drawn at once, as before."""

from __future__ import annotations

import numpy as np
from apptest_helpers import (
    chart_keys,
    chart_z_by_key,
    open_lazy_expanders,
    open_page,
    switch_to,
)

from attnviz.scenarios.scenario import projected, run_scenario
from attnviz.teach.text import step_by_step as text
from attnviz.ui import state, step_by_step_view

T, D, D_K = 128, 769, 64
TERM0 = text.VALUE_TERM.format(m=0)
V0 = text.DIMENSION.format(name="v", m=0)


def wide_head(t: int = T):
    rng = np.random.default_rng(1)
    x = np.hstack([rng.normal(size=(t, D - 1)), np.ones((t, 1))])
    w_q, w_k, w_v = (rng.normal(0, 0.05, size=(D, D_K)) for _ in range(3))
    return projected([f"t{i}" for i in range(t)], x, w_q, w_k, w_v, variant="causal",
                     title="a GPT-2-small-sized head")


def _table(at, column: str):
    return next((df.value for df in at.dataframe if column in df.value.columns), None)


def _table_expanders(at) -> list[str]:
    return [e.key for e in at.expander if str(e.key).startswith("step_by_step_table_")]


def _opened_on(page: str, sc):
    """``pages/<page>.py`` opened on scenario ``sc``, its lazy expanders left closed."""
    at = open_page(None, timeout=120)
    at.session_state[state.SCENARIO] = sc
    switch_to(at, page, lazy_open=False)
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_wide_heads_value_tables_are_sent_only_when_opened():
    sc = wide_head()
    at = _opened_on("step_by_step", sc)
    assert sorted(_table_expanders(at)) == ["step_by_step_table_sum", "step_by_step_table_v"]
    labels = {e.label for e in at.expander}
    assert text.WIDE_TABLE.format(what=text.WIDE_TABLE_WHAT["v"], rows=T, cols=D_K) in labels
    assert _table(at, V0) is None and _table(at, TERM0) is None  # not sent
    assert _table(at, text.COLUMNS["weight"]) is not None  # the softmax table is drawn
    assert len(at.dataframe) == 2  # the query vector and the softmax steps
    open_lazy_expanders(at)  # a click on each, as a user opens them
    assert not at.exception
    i = at.selectbox(key="step_by_step_query").value
    att = run_scenario(sc).attention
    np.testing.assert_array_equal(_table(at, V0).to_numpy(), att.v)
    total = _table(at, TERM0)
    np.testing.assert_allclose(total.iloc[-1, 1:].to_numpy(float), att.output[i], rtol=1e-12,
                               atol=1e-15)
    assert len(at.dataframe) == 4


def test_a_toy_scenarios_tables_are_drawn_at_once():
    at = open_page("step_by_step", lazy_open=False)
    assert not _table_expanders(at)
    assert _table(at, V0) is not None and _table(at, TERM0) is not None
    narrow = wide_head(t=8)  # 8 keys × 64: 512 numbers, under the limit
    assert narrow.x.shape[0] * D_K <= step_by_step_view.LAZY_CELLS
    at.session_state[state.SCENARIO] = narrow
    switch_to(at, "step_by_step", lazy_open=False)
    assert not at.exception
    assert not _table_expanders(at) and _table(at, V0) is not None


QKV = ["trace_fig_Q", "trace_fig_K", "trace_fig_V"]


def test_a_wide_heads_q_k_v_on_trace_are_sent_only_when_opened():
    sc = wide_head()
    at = _opened_on("trace", sc)
    assert "trace_qkv" in [e.key for e in at.expander]
    assert not set(QKV) & set(chart_keys(at))  # not sent
    assert "trace_fig_weights" in chart_keys(at)
    at.session_state["trace_qkv"] = True  # the expander opened
    at.run()
    assert not at.exception
    att = run_scenario(sc).attention
    for key, matrix in zip(QKV, (att.q, att.k, att.v), strict=True):
        np.testing.assert_array_equal(chart_z_by_key(at, key), matrix)


def test_a_toy_scenarios_q_k_v_on_trace_are_drawn_at_once():
    at = open_page("trace", lazy_open=False)
    assert "trace_qkv" not in [e.key for e in at.expander]
    assert set(QKV) <= set(chart_keys(at))
