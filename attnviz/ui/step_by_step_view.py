"""The Step by step page's views of one query: the picker beside the weights, and every step of
the query's row (:class:`attnviz.core.explain.RowSteps`) as formulas, tables and written lines.
The row explained here is the one Trace a cell shows a cell of (:func:`explained_row`)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.core.explain import AdditiveInputs, RowSteps, explain_row
from attnviz.figures import heatmap
from attnviz.scenarios.scenario import written as written_for
from attnviz.teach.explain import formulas_for, number, output_symbol, settings_of
from attnviz.teach.text import common
from attnviz.teach.text import step_by_step as text
from attnviz.ui import controls, layout, state, steps
from attnviz.ui.panels import show_figure

WIDE_COLUMNS = 16  # a step table wider than this, and of more than LAZY_CELLS numbers, is
LAZY_CELLS = 1024  # drawn when its expander is opened (a GPT-2 head: 128 keys × 64 values)


def is_wide(shape: tuple[int, ...]) -> bool:
    """True for a matrix drawn only on request (in a lazy expander): more than
    :data:`WIDE_COLUMNS` columns and :data:`LAZY_CELLS` numbers — a real head's, not a toy's."""
    return len(shape) == 2 and shape[1] > WIDE_COLUMNS and shape[0] * shape[1] > LAZY_CELLS


def table(frame, where=st, *, kind: str = "") -> None:
    """A step table: floats with 6 significant digits, labels as index.

    Number columns keep the exact values (formatted by the grid, not by a pandas Styler, which
    Streamlit applies cell by cell: ~50 ms of a rerun); a column holding −∞ (masked scores) is
    written out as text, "−∞" included.

    ``kind`` (a key of ``text.WIDE_TABLE_WHAT``): a wide table (more than
    :data:`WIDE_COLUMNS` columns and :data:`LAZY_CELLS` numbers) goes in a closed expander
    whose content runs only while it is open: not built, not sent, not drawn until asked for.
    Drawing a real head's two 128 × 64 tables doubled the page's time to open in the browser.
    In presenter mode a static table of the numbers as text ("−" for minus), sized with the
    projected page (:data:`attnviz.ui.presenter.PRESENTER_CSS`).
    """
    if kind and is_wide(frame.shape):
        box = where.expander(text.WIDE_TABLE.format(what=text.WIDE_TABLE_WHAT[kind],
                                                    rows=frame.shape[0], cols=frame.shape[1]),
                             key=f"step_by_step_table_{kind}", on_change="rerun")
        if not box.open:
            return
        where = box
    shown, config = frame.copy(), {}
    if state.presenter():  # an HTML table, whose type presenter mode's CSS sizes for the room
        # (the grid draws on a canvas at ~14 px on any screen): the numbers written as text
        for c in frame.columns:
            if frame[c].dtype.kind == "f":
                shown[c] = [number(x, 6, "text") for x in frame[c]]
        where.table(shown)
        return
    for c in frame.columns:
        if frame[c].dtype.kind != "f":
            continue
        if np.isinf(frame[c]).any():
            shown[c] = [number(x, 6, "table") for x in frame[c]]
            config[c] = st.column_config.TextColumn(c, alignment="right")
        else:
            config[c] = st.column_config.NumberColumn(c, format="%.6g")
    where.dataframe(shown, column_config=config)


def query_and_weights(result, scenario) -> tuple[int, int | None]:
    """The query picker (and head picker) beside the chosen head's weights, the query's row
    outlined; returns the query and the head (None: the result's only head)."""
    att = result.attention
    q_lab, k_lab = result.q_labels, result.k_labels
    multi = scenario.always_heads  # the path goes on through W_O

    pick, fig_col = st.columns(layout.PICK_BESIDE_FIGURE, gap="large")
    with pick:
        t_q = len(q_lab)
        if st.session_state.get("step_by_step_query") not in range(t_q):
            # fewer tokens than before: back to query 0
            st.session_state.pop("step_by_step_query", None)
        i = st.selectbox(text.QUERY_LABEL, range(t_q), key="step_by_step_query",
                         format_func=lambda r: q_lab[r] if 0 <= r < t_q else str(r))
        if multi:
            st.caption(text.MULTI_HEAD)
        head = controls.head_picker(att, "step_by_step_head")
        head = 0 if head is None and multi else head  # one head of a multi-head result
        st.caption(text.PICK)
    with fig_col:
        st.markdown(text.WEIGHTS_TITLE)
        weights = att.head(head or 0).weights
        fig = heatmap(weights, k_lab, q_lab, kind="weights", y_title=common.AXIS_QUERY,
                      x_title=common.AXIS_KEY, highlight=[i])
        show_figure(fig, key="step_by_step_fig_weights", filename="step_weights")
    return i, head


def explained_row(scenario, result, i: int, *, head: int | None = None,
                  w_o=None) -> RowSteps:
    """Query ``i``'s row of ``result`` step by step: through the additive score network for
    a variant without projections, else through head ``head`` (and ``w_o``, the output
    projection, for a multi-head variant)."""
    att = result.attention
    if not scenario.spec.projections:  # additive: its own score network
        source = result.source_x if result.source_x is not None else result.x
        return explain_row(att, i, additive=AdditiveInputs(
            result.x, source, source, scenario.w_a_q, scenario.w_a_k, scenario.v_a))
    return explain_row(att, i, head=head, w_o=w_o)


def row_steps(row: RowSteps, result, scenario, i: int) -> None:
    """Every step of query ``i``'s row, numbered, each with its formula and its numbers."""
    k_lab = result.k_labels
    multi = scenario.always_heads
    titles = text.TITLES if scenario.spec.projections else text.ADDITIVE_TITLES
    formulas = formulas_for(row)
    query = scenario.spec.written_query(written_for(scenario))
    if query and not scenario.direct:  # the projection, then changed
        formulas.update(query=query, query_head=query)
    titles = {**{ms.mod.key: ms.mod.title for ms in row.mod_steps}, **titles}
    shown = []

    def step(name: str) -> None:
        """A step's numbered title and its formula (a step that did not happen is skipped)."""
        if name in formulas:
            shown.append(name)
            st.subheader(f"{len(shown)}. {titles[name]}")
            st.latex(formulas[name])

    def written(lines: list[str]) -> None:
        """The written-out arithmetic, one line per key (scrolls beyond 16 keys)."""
        fits = len(lines) <= layout.WRITTEN_LINES_FIT
        st.code("\n".join(lines), language=None,
                height="content" if fits else layout.WRITTEN_LINES_PX)

    if row.kind == "additive":
        step("projections")
        c1, c2 = st.columns(2)
        table(steps.vector_frame(row.a, text.ADDITIVE_QUERY_VECTOR.format(i=i), "a"), c1)
        table(steps.value_frame(row.b, k_lab, "b"), c2, kind="b")
        step("features")
        table(steps.value_frame(row.core.features, k_lab, "f"), kind="f")
        step("score")
        written(steps.score_lines(row))
    else:
        step("query_direct" if scenario.direct else "query_head" if multi else "query")
        if result.pe is not None:
            st.caption(text.WITH_PE)
        table(steps.vector_frame(row.q, text.QUERY_VECTOR.format(i=i), "q"))
        step("score")
        written(steps.score_lines(row))
        step("scaled")
        settings = settings_of(row)
        root = rf" = 1/\sqrt{{{row.d_k}}}" if settings.scale == "sqrt_dk" else ""
        values = [text.SCALE_LINE.format(root=root, scale=number(row.scale, 6, "latex"))
                  ] if settings.scale != "none" else []
        if settings.tempered:
            values.append(text.TAU_LINE.format(tau=number(row.temperature, 6, "latex")))
        if values:
            st.latex(r",\quad ".join(values))
        for ms in row.mod_steps:  # a bias, a cap, a variant's own change of the scores
            step(ms.mod.key)

    step("mask")
    step("softmax")
    if row.fully_masked:
        st.warning(text.FULLY_MASKED + common.FULLY_MASKED_ROW)
    else:
        st.latex(rf"m_{{{i}}} = {number(row.row_max, 6, 'latex')},\quad "
                 rf"Z_{{{i}}} = {number(row.row_sum, 6, 'latex')}")
    st.caption(text.SOFTMAX_NOTE)
    table(steps.steps_frame(row, k_lab))

    step("output")
    c1, c2 = st.columns(layout.NARROW_LEFT)
    table(steps.value_frame(row.v, k_lab), c1, kind="v")
    table(steps.sum_frame(row, k_lab), c2, kind="sum")
    c2.caption(text.SUM_NOTE)
    if row.v.shape[1] <= 8:
        st.latex(output_symbol(settings_of(row), i, row.head) + " = ["
                 + ",\\ ".join(number(x, 6, "latex") for x in row.core.output) + "]")
    if row.final_output is not None:
        step("concat")
        d_v = row.output.shape[0]
        st.caption(text.CONCAT_SLICE.format(h=row.head, start=row.head * d_v,
                                            stop=(row.head + 1) * d_v - 1))
        table(steps.vector_frame(row.core.concat, text.CONCAT_ROW.format(i=i), "concat"))
        table(steps.vector_frame(row.core.final_output, text.OUTPUT_ROW.format(i=i), "o"))


