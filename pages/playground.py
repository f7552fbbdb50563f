"""Playground: edit tokens, embeddings and weights, pick a variant, see every matrix."""

import streamlit as st

from attnviz.core.downsample import block_factor, block_labels, downsample
from attnviz.figures import heatmap, mask_figure
from attnviz.io import export
from attnviz.scenarios import limits
from attnviz.teach.text import common as text
from attnviz.ui import controls, share, state
from attnviz.ui.diagnostics import diagnostics_panel
from attnviz.ui.panels import matrix_panel, scenario_caption

st.header("Playground")
scenario = state.get_scenario()
scenario_caption(scenario)

scenario = controls.variant_picker("pg", scenario)
inputs, views = st.columns([4, 8], gap="medium")
with inputs:
    with st.expander("Tokens and embeddings", expanded=not state.presenter()):
        if scenario.direct:
            st.info("This scenario gives Q, K and V directly (as the seed notebook does); "
                    "edit them on the Step by step page or load another preset.")
        else:
            scenario = controls.token_controls("pg", scenario)
            controls.size_controls("pg", scenario)
            scenario = controls.embedding_editor("pg", scenario)
            if scenario.spec.uses_source:
                scenario = controls.token_controls("pg", scenario, source=True)
                scenario = controls.embedding_editor("pg", scenario, source=True)
    if not scenario.direct and scenario.spec.projections:
        with st.expander("Weight matrices", expanded=not state.presenter()):
            scenario = controls.weight_editors("pg", scenario,
                                               with_w_o=scenario.spec.always_heads)
    with st.expander("Settings", expanded=True):
        scenario = controls.settings_controls("pg", scenario)

with views:
    result = controls.compute(scenario)  # a message shows at the top of the figures' column
    if result is not None:
        controls.masked_rows_warning(result.mask)
        att = result.attention
        q_lab, k_lab = result.q_labels, result.k_labels
        M = text.MATRICES
        figures = []  # (title, figure) for the HTML report

        def panel(name, z, x_labels, y_labels, **kw):
            """One matrix with its title, formula and explanation from attnviz.teach.text."""
            title, formula, why = M[name]
            fig = heatmap(z, x_labels, y_labels, **kw)
            figures.append((title, fig))
            matrix_panel(title, fig, key=f"pg_fig_{name}", formula=formula, explanation=why)

        if not scenario.direct:
            x_name = "x_pe" if result.pe is not None else "x"
            panel(x_name, result.x, [f"d{j}" for j in range(result.x.shape[1])], q_lab,
                  y_title="token", x_title="dimension")
        if scenario.spec.projections:
            c1, c2, c3 = st.columns(3)
            for col, name in zip((c1, c2, c3), ("q", "k", "v"), strict=True):
                with col:
                    z = getattr(att, name)
                    panel(name, z, [f"{name}{j}" for j in range(z.shape[1])],
                          q_lab if name == "q" else k_lab)
        if scenario.spec.always_heads:
            st.markdown("**Attention weights per head** (shared 0–1 scale)")
            # narrow columns: long sequences are pooled, as on Your own attention
            thumb = limits.THUMBNAIL_T
            pooled = max(block_factor(len(q_lab), thumb), block_factor(len(k_lab), thumb))
            kx, qy = block_labels(k_lab, thumb), block_labels(q_lab, thumb)
            if pooled > 1:
                st.caption(text.HEADS_POOLED.format(t=len(q_lab), shown=len(qy), f=pooled)
                           + text.HEADS_EXACT_PLAYGROUND)
            for col, h in zip(st.columns(att.n_heads), range(att.n_heads), strict=True):
                with col:
                    fig = heatmap(downsample(att.weights[h], thumb), kx, qy, kind="weights",
                                  title=f"head {h}", show_text=att.n_heads <= 2)
                    if att.n_heads > 2 and h < att.n_heads - 1:  # one bar for the shared scale
                        fig.update_traces(showscale=False)
                    matrix_panel(f"head {h}", fig, key=f"pg_fig_head_{h}")
                    figures.append((f"Attention weights, head {h}"
                                    + (" (pooled)" if pooled > 1 else ""), fig))
            diagnostics_panel(att.weights, q_lab, k_lab, key="pg_diag_heads")
            panel("concat", att.concat, [f"c{j}" for j in range(att.concat.shape[1])], q_lab)
            panel("mha_output", att.output, [f"o{j}" for j in range(att.output.shape[1])],
                  q_lab)
        else:
            score_name = "scores" if scenario.spec.projections else "additive_scores"
            c1, c2 = st.columns(2)
            with c1:
                panel(score_name, att.scores, k_lab, q_lab, y_title="query", x_title="key")
            with c2:
                if scenario.spec.projections:  # additive scores are not scaled
                    panel("scaled", att.scaled, k_lab, q_lab, y_title="query", x_title="key")
            c1, c2 = st.columns(2)
            with c1:
                title, formula, why = M["mask"]
                figures.append((title, mask_figure(result.mask, k_lab, q_lab)))
                matrix_panel(title, figures[-1][1], key="pg_fig_mask",
                             formula=formula, explanation=why)
            with c2:
                panel("masked", att.masked, k_lab, q_lab, y_title="query", x_title="key")
            panel("weights", att.weights, k_lab, q_lab, kind="weights", y_title="query",
                  x_title="key")
            diagnostics_panel(att.weights, q_lab, k_lab, key="pg_diag")
            out = att.output
            panel("output", out, [f"o{j}" for j in range(out.shape[-1])], q_lab)
        # lazy: the downloads are prepared only while it is open
        downloads = st.expander("Download these matrices and figures", key="pg_downloads",
                                on_change="rerun")
        if downloads.open:
            with downloads:
                share.matrix_downloads(export.matrices(result), key="pg_dl",
                                       stem=share.file_stem(scenario),
                                       labels=export.axis_labels(result), q_labels=q_lab,
                                       k_labels=k_lab)
                share.report_button(figures, key="pg_report", title="attnviz — Playground",
                                    notes=[scenario.title],
                                    file_name=f"{share.file_stem(scenario)}_playground.html")
