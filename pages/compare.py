"""Compare: the same inputs under two settings, side by side, and their difference A − B."""

import numpy as np
import streamlit as st

from attnviz.figures import Sizing, Values, heatmap
from attnviz.scenarios import limits
from attnviz.scenarios.compare import KINDS, compare, head_choices
from attnviz.scenarios.registry import VARIANTS
from attnviz.teach.text import compare as text
from attnviz.ui import controls, one_map, presenter, state
from attnviz.ui.diagnostics import diagnostics_panel
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import show_figure

scenario = state.get_scenario()
st.header(text.HEADER)
presenter.page_intro(text.INTRO)

kind = st.selectbox(text.KIND_LABEL, KINDS, format_func=text.KINDS.get,
                    key="compare_kind")
options = {}
choices = head_choices(scenario)
if kind == "heads" and choices:
    default = max([h for h in choices if h <= 4] or choices[:1])
    options["n_heads"] = st.select_slider(text.HEADS_B, choices, value=default,
                                          key="compare_n_heads")
elif kind == "temperature":
    options["temperature"] = st.slider(text.TEMPERATURE_B, limits.TEMPERATURE_MIN,
                                       limits.TEMPERATURE_MAX, 0.5,
                                       step=limits.TEMPERATURE_STEP, key="compare_temperature")
elif kind == "variants":
    keys = list(VARIANTS)
    c1, c2 = st.columns(2)
    options["variant_a"] = c1.selectbox(text.VARIANT_A, keys, index=keys.index(scenario.variant),
                                        format_func=lambda k: VARIANTS[k].name,
                                        key="compare_variant_a")
    options["variant_b"] = c2.selectbox(text.VARIANT_B, keys,
                                        index=keys.index("dot_product"),
                                        format_func=lambda k: VARIANTS[k].name,
                                        key="compare_variant_b")
try:
    comparison = compare(scenario, kind, run=controls.run, **options)
except ValueError as exc:
    st.info(text.NOT_APPLICABLE.format(reason=exc))
    end_page()
a, b = comparison.a, comparison.b


def row(what, za, zb, diff, shown=None, **kw):
    """A, B and A − B of one matrix in three columns (A and B on one colour scale; outputs
    are signed: diverging, centred at 0); in presenter mode the side ``shown`` alone, across
    the page (the weights fitted to the screen: ui/one_map.py)."""
    if kw.get("kind") != "weights" and za is not None and zb is not None:
        bound = float(max(np.abs(za).max(), np.abs(zb).max())) or 1.0
        kw.update(kind="signed", values=Values(zmin=-bound, zmax=bound))
    fitted = shown is not None and what == "weights"
    tags = ("a", "b", "diff") if shown is None else (shown,)
    cols = dict(zip(tags, st.columns(3) if shown is None else [st.container()], strict=True))
    for side, z, tag in ((a, za, "a"), (b, zb, "b")):
        if tag not in cols:
            continue
        with cols[tag]:
            name = text.SIDES[side is b]
            if shown is None:
                st.markdown(text.SIDE_TITLE.format(side=name, label=side.label))
            if side.error:
                st.error(text.CANNOT_COMPUTE.format(side=name, reason=side.error))
            else:
                x = side.k_labels if what == "weights" else [f"o{m}" for m in range(z.shape[1])]
                fig = heatmap(z, x, side.q_labels, **kw)
                show_figure(fig, key=f"compare_fig_{what}_{tag}",
                            fit=one_map.fit(fig) if fitted else None)
    if "diff" not in cols:
        return
    with cols["diff"]:
        if shown is None:
            st.markdown(text.DIFF_TITLE)
        if diff is None:
            st.caption(text.SHAPES)
        else:
            x = a.k_labels if what == "weights" else [f"o{m}" for m in range(diff.shape[1])]
            fig = heatmap(diff, x, a.q_labels, kind="signed", values=Values(fixed=True),
                          sizing=Sizing(bar_below=True))
            show_figure(fig, key=f"compare_fig_{what}_diff",
                        fit=one_map.fit(fig) if fitted else None)


# presenter mode: one side at a time, picked above the weights (ui/one_map.py)
side = one_map.pick("compare_side", {
    "a": text.SIDE_NAME.format(side=text.SIDES[0], label=a.label),
    "b": text.SIDE_NAME.format(side=text.SIDES[1], label=b.label),
    "diff": text.DIFF_BUTTON}, default="a")
st.subheader(text.WEIGHTS_HEADER)
# the difference's colour scale is named where the difference is drawn
st.caption(text.WEIGHTS + (" " + text.DIFF if side in (None, "diff") else ""))
if kind == "heads" or a.head_weights is not None or b.head_weights is not None:
    st.caption(text.HEADS_MEAN)
row("weights", a.weights, b.weights, comparison.weights_diff, side, kind="weights")
st.subheader(text.OUTPUTS_HEADER)
st.caption(text.OUTPUT)
row("output", a.output, b.output, comparison.output_diff, side)

c1, c2 = st.columns(2)
for col, side, tag in ((c1, a, "a"), (c2, b, "b")):
    with col:
        if side.weights is not None:
            st.text(text.SIDE_NAME.format(side=text.SIDES[side is b], label=side.label))
            weights = side.head_weights if side.head_weights is not None else side.weights
            diagnostics_panel(weights, side.q_labels, side.k_labels, key=f"compare_diag_{tag}")
