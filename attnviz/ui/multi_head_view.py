"""The Multi-head page's view: the head-count control, grids, the head mix.

The head count is bound to ``scenario.n_heads``: a valid count typed is written to the scenario,
an invalid one (0, or one that does not divide the widths) shows a message and the page keeps
drawing the last valid count. A scenario of one head opens with several (:func:`opening_heads`)
without storing them: opening a page never changes the scenario.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.core.attention import mix_heads, valid_head_counts
from attnviz.figures import Values, heatmap
from attnviz.figures.grid import compact
from attnviz.scenarios import limits
from attnviz.scenarios.scenario import Scenario
from attnviz.teach.text import common
from attnviz.teach.text import multi_head as text
from attnviz.ui import controls, layout, one_map, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.fitting import fit_vector
from attnviz.ui.head_grid import grid, label_room, scale_words
from attnviz.ui.panels import matrix_panel, show_figure


def head_choices(scenario: Scenario) -> list[int]:
    """Head counts (up to MAX_HEADS) that divide both the Q/K width and the V width."""
    return [h for h in valid_head_counts(int(scenario.w_q.shape[1]), limits.MAX_HEADS)
            if scenario.w_v.shape[1] % h == 0]


def nearest(n: int, choices: list[int]) -> list[int]:
    """The valid choices closest to n from below and above (one if they coincide)."""
    below = [c for c in choices if c <= n]
    above = [c for c in choices if c >= n]
    return sorted({c for c in (below[-1:] + above[:1])})


def fit_mix(mix: np.ndarray | None, n: int) -> np.ndarray:
    """One weight per head: the stored weights that still fit, 1/n for new heads."""
    return fit_vector(mix, n, 1.0 / n)


OPENING_HEADS = 4  # the most heads a one-head scenario opens with on the Multi-head page


def opening_heads(scenario: Scenario) -> int:
    """The head count the Multi-head page opens with: the scenario's own when it has several,
    else the most valid heads up to :data:`OPENING_HEADS` (the page is about heads that
    differ; one head shows none)."""
    if scenario.n_heads > 1:
        return int(scenario.n_heads)
    return max([h for h in head_choices(scenario) if h <= OPENING_HEADS] or [1])


def _choose_heads(key: str) -> None:
    """The head-count widget's callback: the user picked a count; a valid one is stored in the
    scenario (with the head mix fitted to it) before the run, so the whole page draws it."""
    scenario = state.get_scenario()
    n = int(st.session_state[key])
    if n in head_choices(scenario) and n != scenario.n_heads:
        mix = None if scenario.head_mix is None else fit_mix(scenario.head_mix, n)
        state.update(n_heads=n, head_mix=mix)
        st.session_state[f"_{key}_synced"] = (state.editor_version(), n)


def head_count_control(prefix: str, scenario: Scenario) -> tuple[Scenario, int, str | None]:
    """A number input for the number of heads.

    Returns the scenario, the count to draw and, for an invalid count, the message to show
    (the caller places it, e.g. full width below the control).

    The widget restarts from :func:`opening_heads` whenever the scenario is replaced or its
    n_heads changed elsewhere (the Playground). The count is stored in the scenario only once
    the user changes the widget (its change callback, :func:`_choose_heads`): a one-head
    scenario opens with several heads, unchanged.
    """
    key = f"{prefix}_n_heads"
    synced_key = f"_{key}_synced"
    token = (state.editor_version(), scenario.n_heads)
    if key not in st.session_state or st.session_state.get(synced_key) != token:
        st.session_state[key] = min(max(opening_heads(scenario), 0), limits.MAX_HEADS)
        st.session_state[synced_key] = token
    choices = head_choices(scenario)
    n = int(st.number_input(text.HEADS_LABEL, min_value=0, max_value=limits.MAX_HEADS,
                            step=1, key=key, help=text.HEADS_HELP,
                            on_change=_choose_heads, args=(key,)))
    dk, dv = int(scenario.w_q.shape[1]), int(scenario.w_v.shape[1])
    last_key = f"_{key}_shown"  # the last valid count drawn
    if n in choices:
        st.session_state[last_key] = n
        return scenario, n, None
    shown = next((c for c in (st.session_state.get(last_key), scenario.n_heads) if c in choices),
                 nearest(n, choices)[0])
    template = text.ZERO_HEADS if n == 0 else text.BAD_HEADS
    message = template.format(n=n, dk=dk, dv=dv, choices=", ".join(map(str, choices)),
                              nearest=text.NEAREST_OR.join(map(str, nearest(n, choices))),
                              shown=common.count(shown, "head"))
    return scenario, shown, message


def head_mix_editor(prefix: str, scenario: Scenario, n: int) -> np.ndarray:
    """Edit seed 004's one-weight-per-head mix; edits are written to ``scenario.head_mix``."""
    mix = fit_mix(scenario.head_mix, n)
    new = matrix_editor(text.MIX_EDITOR_LABEL, mix[None, :], key=f"{prefix}_head_mix_{n}",
                        row_labels=["w_h"],
                        col_labels=[common.HEAD_NAME.format(h=h) for h in range(n)],
                        field="head_mix")[0]
    if not np.array_equal(new, mix) or (scenario.head_mix is not None
                                        and scenario.head_mix.shape != (n,)):
        state.update(head_mix=new)
    return new


def head_grids(att, labels: list[str], n: int) -> None:
    """The Multi-head page's grids: every head's weights, then every head's output (two heads
    a row keep their colour bars; wider grids share one scale, said in the caption). Numbers
    are written in the cells as on every heatmap: the browser sizes them to the drawn cells and
    leaves out those too small to read (a count of tokens cannot decide it: nine words at
    1920×1080 in presenter mode draw 50-pixel cells, room for a number). In presenter mode, when
    the heads side by side would leave their cells too narrow for a number, one head at a
    time, picked above it, across the page (:mod:`attnviz.ui.one_map`)."""
    per_row = 2 if n <= 2 else (3 if n == 3 else layout.HEADS_PER_ROW)
    one = state.presenter() and not one_map.side_by_side(min(n, per_row), len(labels))
    per_row = 1 if one else per_row
    bars = per_row <= 2  # wider grids: one shared scale, explained in the caption

    st.subheader(text.WEIGHTS_HEADER)
    above = None if one else st.container()  # one head large: its caption under it
    picked = one_map.pick("multi_head_map", {h: common.HEAD_NAME.format(h=h)
                                             for h in range(n)}, default=0) if one else None
    shown = range(n) if picked is None else [picked]
    extra = 0.0 if bars else label_room(labels, per_row)
    for h, col in zip(shown, grid(len(shown), per_row, first_extra=extra), strict=True):
        with col:
            if picked is None:
                st.markdown(text.HEAD_TITLE.format(h=h))
            fig = heatmap(att.weights[h], labels, labels, kind="weights",
                          y_title=common.AXIS_QUERY, x_title=common.AXIS_KEY)
            if not bars:
                compact(fig, y_labels=h % per_row == 0, colour_bar=False)
            show_figure(fig, key=f"multi_head_fig_head_{h}",
                        fit=None if picked is None else one_map.fit(fig))
    (above or st.container()).caption(text.WEIGHTS + ("" if bars else " " + scale_words()))

    st.subheader(text.OUTPUTS_HEADER)
    bound = float(np.max(np.abs(att.head_outputs))) or 1.0
    st.caption(text.HEAD_OUTPUTS + ("" if bars else " " + text.OUTPUTS_SCALE.format(bound=bound)))
    for h, col in zip(shown, grid(len(shown), per_row, first_extra=extra), strict=True):
        with col:
            st.markdown(text.HEAD_OUTPUT_TITLE.format(h=h))
            out = att.head_outputs[h]
            fig = heatmap(out, [f"h{h}.v{j}" for j in range(out.shape[1])], labels, kind="signed",
                          values=Values(zmin=-bound, zmax=bound))
            if not bars:
                compact(fig, y_labels=h % per_row == 0, colour_bar=False)
            show_figure(fig, key=f"multi_head_fig_out_{h}")


def concat_panel(att, labels: list[str]) -> list[str]:
    """The heads' outputs side by side (narrow while they fit); returns its column labels."""
    d_v = att.head_outputs.shape[2]
    concat_labels = [f"h{j // d_v}.v{j % d_v}" for j in range(att.concat.shape[1])]
    title, formula, why = common.MATRICES["concat"]
    box = st.columns(layout.WIDE_LEFT)[0] if att.concat.shape[1] <= 8 else st.container()
    with box:
        matrix_panel(title, heatmap(att.concat, concat_labels, labels, kind="signed"),
                     key="multi_head_fig_concat", formula=formula, explanation=why)
    return concat_labels


def mixed_panel(att, mix: np.ndarray, labels: list[str]) -> None:
    """Seed 004's mix of the heads' outputs with one weight per head."""
    try:
        mixed = mix_heads(att.head_outputs, mix)
        matrix_panel(text.MIXED_TITLE,
                     heatmap(mixed, controls.dims("v", att.head_outputs.shape[2]), labels),
                     key="multi_head_fig_mixed")
    except ValueError as exc:
        st.error(text.CANNOT_MIX.format(reason=exc))
