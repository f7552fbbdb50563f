"""Show a matrix the same way on every page: title, formula, one-line explanation, heatmap."""

from __future__ import annotations

import re
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from attnviz.figures import colours
from attnviz.scenarios.presets import PRESETS, preset_of
from attnviz.ui import state
from attnviz.ui.plotly_view import plotly_js_ready, plotly_view
from attnviz.ui.safe import md_escape


def chart_config(filename: str, image_format: str | None = None) -> dict:
    """Plotly toolbar: the camera saves PNG (at 2×) or SVG with a meaningful file name, offline.

    ``image_format`` ("png" or "svg") defaults to the session's choice on the Save & share
    page (``state.IMAGE_FORMAT``); both are drawn in the browser, with no server or internet.
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", filename).strip("_") or "attnviz"
    fmt = image_format or st.session_state.get(state.IMAGE_FORMAT, "png")
    fmt = fmt if fmt in ("png", "svg") else "png"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": fmt, "filename": f"attnviz_{safe}",
                                 "scale": 2 if fmt == "png" else 1},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def show_figure(fig: go.Figure, *, key: str, filename: str | None = None,
                on_select: Callable[[], None] | None = None, frames: list[dict] | None = None,
                on_slider: Callable[[], None] | None = None, grow: bool = True,
                fit: dict | None = None, lazy: bool = False) -> None:
    """Show a figure full-width with the shared toolbar config; bigger in presenter mode.

    Drawn by :func:`attnviz.ui.plotly_view.plotly_view` (updated in place on later reruns), or
    by ``st.plotly_chart`` when the browser cannot load plotly.js from this server.
    ``on_select`` is called when a point is clicked; ``st.session_state[key]`` then holds
    ``{"selection": {"points": [{"curve_number": ..., "point_index": ...}]}}`` either way.
    ``frames`` and ``on_slider``: a figure whose slider steps through frames in the browser
    (:func:`attnviz.ui.plotly_view.plotly_view`); ``st.plotly_chart`` shows its first state.
    The figure is sent as it was built; where it is shown goes with it as the chart's view,
    and the chart component sizes it (attnviz/ui/plotly_fit.js): presenter mode's type,
    ``grow=False`` (the caller sized the figure for presenter mode itself: only the type
    grows), ``fit`` (its height follows the screen: plotly_fit.js's ``fit``), ``lazy`` (redrawn
    only when scrolled into view: the charts of a long page that one control changes).
    With the projector colours on, the figure is drawn in :data:`colours.PROJECTOR`.
    """
    if state.projector():
        colours.themed(fig)
    view = {"presenter": True, "grow": grow} if state.presenter() else {}
    if fit:
        view["fit"] = fit
    if lazy:
        view["lazy"] = True
    config = chart_config(filename or key)
    if plotly_js_ready():
        return plotly_view(fig, key=key, config=config, on_select=on_select, frames=frames,
                           on_slider=on_slider, view=view)
    clicks = dict(on_select=on_select, selection_mode="points") if on_select else {}
    return st.plotly_chart(fig, key=key, width="stretch", theme=None, config=config, **clicks)


def slider_value(figure: str, cast: Callable = str):
    """The value a drag slider of chart ``figure`` was released on (its frame's name, passed
    through ``cast``), or None when there is none or ``cast`` refuses it. Read it in the
    chart's ``on_slider`` callback."""
    name = (st.session_state.get(figure) or {}).get("slider")
    try:
        return None if name is None else cast(name)
    except (TypeError, ValueError):
        return None


def set_widget_from_slider(figure: str, control: str, allowed, cast: Callable = int) -> None:
    """``on_slider`` for a chart whose drag slider shadows the widget ``control``: the released
    value becomes the widget's value (ignored unless it is one of ``allowed``). The widget must
    take its value from the session state (no ``value=`` argument) for the rerun to show it."""
    value = slider_value(figure, cast)
    if value is not None and value in allowed:
        st.session_state[control] = value


def set_widget_from_named_slider(figure: str,
                                 controls: dict[str, tuple[str, object, Callable]]) -> None:
    """``on_slider`` for a chart with several drag sliders, whose frames are named
    "<setting>:<value>" (a frame without a colon belongs to setting ""): the released value
    becomes the value of that setting's widget. ``controls`` maps each setting to (widget key,
    allowed values, cast); a value not allowed, or not castable, is ignored."""
    setting, _, value = (slider_value(figure) or "").rpartition(":")
    if setting not in controls:
        return
    control, allowed, cast = controls[setting]
    try:
        value = cast(value)
    except (TypeError, ValueError):
        return
    if value in allowed:
        st.session_state[control] = value


def matrix_panel(title: str, fig: go.Figure, *, key: str, formula: str = "",
                 explanation: str = "", fit: dict | None = None):
    """A subheader, the formula (LaTeX), a one-line explanation and the heatmap (``fit``: its
    height follows the screen, :func:`show_figure`)."""
    st.markdown(f"**{title}**")
    if formula:
        st.latex(formula)
    if explanation:
        st.caption(explanation)
    return show_figure(fig, key=key, filename=title, fit=fit)


def scenario_caption(scenario) -> None:
    """The scenario's title and description under a page header — a preset's only while the
    scenario still is that preset ("Edited from ..." after an edit; ``presets.with_true_title``),
    with a seed preset's note on its notebook — escaped: they may come from a file or a link.
    Drawn once: the page's controls wrote the scenario in their change callbacks, before the
    run, so no setting further down the page changes it afterwards."""
    key = preset_of(scenario)
    scenario = state.with_true_title(scenario)
    lines = [" — ".join(t for t in (scenario.title, scenario.description) if t)]
    if key and PRESETS[key].fidelity:  # still that preset: say how it stands to its notebook
        lines.append(PRESETS[key].fidelity)
    shown = [md_escape(line) for line in lines if line]
    if shown:
        st.caption("  \n".join(shown))
