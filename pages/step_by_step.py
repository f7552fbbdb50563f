"""Step by step: one query through the whole computation, with the scenario's numbers."""

import numpy as np
import streamlit as st

from attnviz import position_labels
from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import MultiHeadResult
from attnviz.figures import heatmap
from attnviz.teach.text import common as text
from attnviz.ui import controls, state, steps
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import scenario_caption, show_figure


def table(frame, where=st) -> None:
    """A step table: floats with 6 significant digits, labels as index.

    Number columns keep the exact values (formatted by the grid, not by a pandas Styler, which
    Streamlit applies cell by cell: ~50 ms of a rerun); a column holding −∞ (masked scores) is
    written out as text, "−∞" included.
    """
    shown, config = frame.copy(), {}
    for c in frame.columns:
        if frame[c].dtype.kind != "f":
            continue
        if np.isinf(frame[c]).any():
            shown[c] = [steps.table_number(x) for x in frame[c]]
            config[c] = st.column_config.TextColumn(c, alignment="right")
        else:
            config[c] = st.column_config.NumberColumn(c, format="%.6g")
    where.dataframe(shown, column_config=config)


st.header("Step by step")
scenario = state.get_scenario()
scenario_caption(scenario)
st.write(text.STEP_INTRO)

if scenario.direct:
    with st.expander("Q, K and V (given directly)", expanded=not state.presenter()):
        st.caption(text.STEP_DIRECT)
        q_lab, k_lab = position_labels(scenario.tokens), position_labels(scenario.source_tokens)
        edits = {}
        for col, name, rows in zip(st.columns(3), ("q_in", "k_in", "v_in"),
                                   (q_lab, k_lab, k_lab), strict=True):
            old, letter = getattr(scenario, name), name[0]
            col.markdown(f"**{letter.upper()}**")
            with col:
                new = matrix_editor(letter.upper(), old, key=f"sbs_{name}", row_labels=rows,
                                    col_labels=controls.dims(letter, old.shape[1]))
            if not np.array_equal(new, old):
                edits[name] = new
        if edits:
            scenario = state.update(**edits)

result = controls.compute(scenario)
if result is None:
    st.stop()


@st.fragment
def one_query(result, scenario) -> None:
    """The chosen query (and head) through every step. A fragment: picking another query or
    head reruns this part alone, not the page's header and its Q, K, V editors."""
    att = result.attention
    q_lab, k_lab = result.q_labels, result.k_labels
    additive = isinstance(att, AdditiveResult)
    head = None

    pick, fig_col = st.columns([1, 2], gap="large")
    with pick:
        t_q = len(q_lab)
        if st.session_state.get("sbs_query") not in range(t_q):
            st.session_state.pop("sbs_query", None)  # fewer tokens than before: back to query 0
        i = st.selectbox("Query token", range(t_q), key="sbs_query",
                         format_func=lambda r: q_lab[r] if 0 <= r < t_q else str(r))
        if isinstance(att, MultiHeadResult):
            st.caption(text.STEP_MULTI_HEAD)
            head = st.selectbox("Head", range(att.n_heads), key="sbs_head",
                                format_func=lambda r: f"head {r}")
            att = att.heads[min(head, att.n_heads - 1)]
        st.caption(text.STEP_PICK)
    with fig_col:
        st.markdown("**Attention weights** (the chosen query's row is outlined)")
        fig = heatmap(att.weights, k_lab, q_lab, kind="weights", highlight_rows=[i],
                      y_title="query", x_title="key")
        show_figure(fig, key="sbs_fig_weights", filename="step_weights")

    F = text.ADDITIVE_STEP_FORMULAS if additive else text.STEP_FORMULAS


    def step(name: str) -> None:
        """A step's title and formula."""
        title, formula = F[name]
        st.subheader(title)
        st.latex(formula)


    def written(lines: list[str]) -> None:
        """The written-out arithmetic, one line per key (scrolls beyond 16 keys)."""
        st.code("\n".join(lines), language=None, height="content" if len(lines) <= 16 else 420)


    if additive:
        s = steps.additive_steps(att, i, result.x, result.source_x, scenario.w_a_q,
                                 scenario.w_a_k, scenario.v_a)
        step("proj")
        c1, c2 = st.columns(2)
        table(steps.vector_frame(s.a, f"a_{i}", "a"), c1)
        table(steps.value_frame(s.b, k_lab, "b"), c2)
        step("features")
        table(steps.value_frame(s.features, k_lab, "f"))
        step("scores")
        written(steps.additive_lines(s))
        chain = steps.additive_frame(s, k_lab)
    else:
        s = steps.query_steps(att, i)
        step("q_direct" if scenario.direct else "q_head" if head is not None else "q")
        if result.pe is not None:
            st.caption(text.STEP_WITH_PE)
        table(steps.vector_frame(s.q, f"q_{i}", "q"))
        step("scores")
        written(steps.dot_lines(s))
        step("scaled")
        d_k = s.q.shape[0]
        root = rf" = 1/\sqrt{{{d_k}}}" if s.scale == 1.0 / np.sqrt(d_k) and d_k > 1 else ""
        st.latex(rf"\text{{scale}}{root} = {steps.fmt(s.scale, 6)},\quad \tau = "
                 rf"{steps.fmt(s.temperature, 6)}")
        chain = steps.steps_frame(s, k_lab)

    step("masked")
    step("softmax")
    sm = s.softmax
    if s.fully_masked:
        st.warning(text.STEP_FULLY_MASKED + text.FULLY_MASKED_ROW)
    else:
        e = "e" if additive else "s"
        st.latex(rf"m_{{{i}}} = {steps.fmt(sm.row_max, 6)},\quad \sum_{{j'}} "
                 rf"e^{{{e}''_{{{i}j'}} - m_{{{i}}}}} = {steps.fmt(sm.total, 6)}")
    st.caption(text.STEP_SOFTMAX_NOTE)
    table(chain)

    step("output")
    values = s.values if additive else s.v
    c1, c2 = st.columns([2, 3])
    table(steps.value_frame(values, k_lab), c1)
    table(steps.sum_frame(s.terms, s.output, sm.weights, k_lab), c2)
    if values.shape[1] <= 8:
        out = "c" if additive else "o"
        st.latex(rf"{out}_{{{i}}} = [" + ",\\ ".join(steps.fmt(x, 6) for x in s.output) + "]")


one_query(result, scenario)
