"""The Playground's full view ("every matrix"): the inputs, the weights and the settings beside
every intermediate with its formula and explanation, the diagnostics and the downloads."""

from __future__ import annotations

import streamlit as st

from attnviz.figures import Sizing, heatmap, mask_figure
from attnviz.io import export
from attnviz.teach.text import common
from attnviz.teach.text import playground as text
from attnviz.ui import controls, layout, share, state
from attnviz.ui.diagnostics import diagnostics_panel
from attnviz.ui.head_grid import pooled_heads
from attnviz.ui.lecture import scaled_formula, tau_on_chart, weights_box
from attnviz.ui.panels import matrix_panel, scenario_caption

M = common.MATRICES


def every_matrix(scenario) -> None:
    """The full view, the Playground's "All" tab: every intermediate with its formula and
    explanation, the diagnostics and the downloads, beside the inputs the controls above the
    tabs do not hold (the sizes, a source sequence, the weights, τ where the weights focus's
    chart holds it: :func:`attnviz.ui.lecture.tau_on_chart`)."""
    st.header(text.HEADER)
    scenario_caption(scenario)
    inputs, views = st.columns(layout.FULL_INPUTS, gap="medium")
    with inputs:
        if not scenario.direct:
            label = text.SIZES_SOURCE_EXPANDER if scenario.spec.uses_source else text.SIZES_EXPANDER
            with st.expander(label, expanded=not state.presenter()):
                controls.size_controls("playground", scenario)
                if scenario.spec.uses_source:
                    scenario = controls.token_controls("playground", scenario, source=True)
                    scenario = controls.embedding_editor("playground", scenario, source=True)
        if not scenario.direct and scenario.spec.projections:
            scenario = weights_box(scenario, expanded=not state.presenter())
        if tau_on_chart(scenario):
            with st.expander(text.SETTINGS_EXPANDER, expanded=True):
                scenario = controls.settings_controls("playground", scenario,
                                                      only=("temperature",))
    with views:
        result = controls.compute(scenario)  # a message shows at the top of the figures' column
        if result is not None:
            all_panels(scenario, result)


def all_panels(scenario, result) -> None:
    """Every matrix of the result, then the downloads."""
    controls.masked_rows_warning(result.mask)
    att = result.attention
    q_lab, k_lab = result.q_labels, result.k_labels
    axes = dict(y_title=common.AXIS_QUERY, x_title=common.AXIS_KEY)  # scores and weights
    figures = []  # (title, figure) for the HTML report

    def panel(name, z, x_labels, y_labels, **kw):
        """One matrix with its title, formula and explanation from attnviz.teach.text (the
        scaled scores' formula written for the settings)."""
        title, formula, why = M[name]
        if name == "scaled":
            formula = scaled_formula(scenario, result)
        fig = heatmap(z, x_labels, y_labels, **kw)
        figures.append((title, fig))
        matrix_panel(title, fig, key=f"playground_fig_{name}", formula=formula, explanation=why)

    if not scenario.direct:
        x_name = "x_pe" if result.pe is not None else "x"
        panel(x_name, result.x, [f"d{j}" for j in range(result.x.shape[1])], q_lab,
              y_title=text.AXIS_TOKEN, x_title=text.AXIS_DIMENSION)
    if scenario.spec.projections:
        c1, c2, c3 = st.columns(3)
        for col, name in zip((c1, c2, c3), ("q", "k", "v"), strict=True):
            with col:
                z = getattr(att, name)
                panel(name, z, [f"{name}{j}" for j in range(z.shape[1])],
                      q_lab if name == "q" else k_lab)
    if scenario.always_heads:
        st.markdown(text.HEADS_TITLE)
        # narrow columns: long sequences are pooled, as on Your own attention
        pooled = pooled_heads(q_lab, k_lab, text.HEADS_EXACT)
        for col, h in zip(st.columns(att.n_heads), range(att.n_heads), strict=True):
            with col:
                # more than two heads: one bar for the shared scale, on the last
                bar = att.n_heads <= 2 or h == att.n_heads - 1
                fig = heatmap(pooled(att.weights[h]), pooled.k_labels, pooled.q_labels,
                              kind="weights", title=common.HEAD_NAME.format(h=h),
                              sizing=Sizing(colour_bar=bar))
                matrix_panel(common.HEAD_NAME.format(h=h), fig,
                             key=f"playground_fig_head_{h}")
                report = text.REPORT_HEAD_POOLED if pooled.factor > 1 else text.REPORT_HEAD
                figures.append((report.format(h=h), fig))
        diagnostics_panel(att.weights, q_lab, k_lab, key="playground_diag_heads")
        panel("concat", att.concat, [f"c{j}" for j in range(att.concat.shape[1])], q_lab)
        panel("multi_head_output", att.output, [f"o{j}" for j in range(att.output.shape[1])],
              q_lab)
    else:
        score_name = "scores" if scenario.spec.projections else "additive_scores"
        c1, c2 = st.columns(2)
        with c1:
            panel(score_name, att.scores, k_lab, q_lab, **axes)
        with c2:
            if scenario.spec.projections:  # additive scores are not scaled
                panel("scaled", att.scaled, k_lab, q_lab, **axes)
        c1, c2 = st.columns(2)
        with c1:
            title, formula, why = M["mask"]
            figures.append((title, mask_figure(result.mask, k_lab, q_lab)))
            matrix_panel(title, figures[-1][1], key="playground_fig_mask",
                         formula=formula, explanation=why)
        with c2:
            panel("masked", att.masked, k_lab, q_lab, **axes)
        panel("weights", att.weights, k_lab, q_lab, kind="weights", **axes)
        diagnostics_panel(att.weights, q_lab, k_lab, key="playground_diag")
        out = att.output
        panel("output", out, [f"o{j}" for j in range(out.shape[-1])], q_lab)
    # lazy: the downloads are prepared only while it is open
    downloads = st.expander(text.DOWNLOADS_EXPANDER, key="playground_downloads",
                            on_change="rerun")
    if downloads.open:
        with downloads:
            share.matrix_downloads(export.matrices(result), key="playground_dl",
                                   stem=share.file_stem(scenario),
                                   labels=export.axis_labels(result), q_labels=q_lab,
                                   k_labels=k_lab)
            share.report_button(figures, key="playground_report", title=text.REPORT_TITLE,
                                notes=[scenario.title],
                                file_name=f"{share.file_stem(scenario)}_playground.html")
