"""Plotly charts that update in place: a Streamlit component instead of ``st.plotly_chart``.

``st.plotly_chart`` gives a chart a new identity whenever its figure changes, so the browser
throws the chart away and draws it from scratch (twice) on every edit: ~65 ms per changed
heatmap here (benchmarks/bench_floor.py). This component (``st.components.v2``) is identified by
its key alone; an edit sends the new figure to the same chart, which Plotly redraws in place
with ``Plotly.react`` (~30 ms). The JavaScript is beside this file, one module in six files
(:data:`JS_PARTS`): plotly_fit.js decides sizes and plotly_present.js presenter mode's type
(pure functions, unit-tested in the browser), plotly_size.js measures the page for them,
plotly_sliders.js, plotly_lazy.js, and plotly_draw.js, which draws and exports the component's
function.

The browser loads ``plotly.min.js`` from this server, nothing downloaded and nothing written:
the installed plotly package's own file, served read-only where it lies
(:func:`plotly_js_url`). Where the installed plotly has no such file, :func:`plotly_js_ready`
says so and the caller keeps ``st.plotly_chart``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
import streamlit.components.v1 as components

from attnviz.teach.text import common as text
from attnviz.ui import state

NAME = "attnviz_plotly"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
# the component's script: these files joined, in this order (plain functions and constants;
# plotly_draw.js, last, has the module's one export)
JS_PARTS = ("plotly_fit.js", "plotly_present.js", "plotly_size.js", "plotly_sliders.js",
            "plotly_lazy.js", "plotly_draw.js")
_JS = "\n".join((Path(__file__).parent / name).read_text(encoding="utf-8") for name in JS_PARTS)
PLOTLY_JS_ROUTE = "plotly_js"  # the name its folder is served under (see plotly_js_url)
_SERVED = "_plotly_js_served"  # session state: the name plotly.min.js was declared under


def plotly_js_url() -> str:
    """The address, relative to the page, at which this server sends the installed plotly
    package's ``plotly.min.js`` to the chart component's script.

    Streamlit's public ``st.components.v1.declare_component(name, path=folder)`` serves the
    files of ``folder`` read-only at ``component/<module>.<name>/``; declared with plotly's
    ``package_data`` folder (plotly.min.js and plotly's public templates and sample data), it
    serves the file where pip put it: nothing is copied into the source tree or the installed
    package at run time, and a read-only install works. Declared once per session (Streamlit
    keeps one registry per server, and AppTest starts new ones; a declaration costs ~0.3 ms).
    """
    name = f"{__name__}.{PLOTLY_JS_ROUTE}"  # declare_component's name: <module>.<name>
    if st.runtime.exists() and st.session_state.get(_SERVED) != name:
        name = components.declare_component(PLOTLY_JS_ROUTE, path=str(PLOTLY_JS.parent)).name
        st.session_state[_SERVED] = name
    return f"component/{name}/{PLOTLY_JS.name}"


def plotly_js_ready() -> bool:
    """True when the browser can load ``plotly.min.js`` from this server (the installed plotly
    package has the file); else the caller shows its charts with ``st.plotly_chart``. Looked
    up once per path (a page asked for every chart: ~0.3 ms a look on this machine)."""
    return _is_file(PLOTLY_JS)


@functools.cache
def _is_file(path: Path) -> bool:
    return path.is_file()


@functools.cache
def _component():
    """The registered component (registered once per process; Streamlit re-registers it on a
    new runtime, as AppTest makes, by itself)."""
    return st.components.v2.component(NAME, js=_JS, isolate_styles=False)


def _typed_array(value):
    """``json.dumps``'s hook for what JSON lacks: a float numpy array becomes a Plotly typed
    array (``{"dtype", "bdata", "shape"}``, base64 of the exact bits, as ``fig.to_dict()``
    sends it), other arrays and numpy scalars plain numbers or lists."""
    if isinstance(value, np.ndarray):
        if value.dtype in (np.float64, np.float32) and value.size:
            arr = np.ascontiguousarray(value)
            spec = {"dtype": "f8" if arr.dtype == np.float64 else "f4",
                    "bdata": base64.b64encode(arr).decode("ascii")}
            if arr.ndim > 1:
                spec["shape"] = ", ".join(map(str, arr.shape))
            return spec
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def figure_json(fig: go.Figure, config: dict, *, clickable: bool = False,
                frames: list[dict] | None = None, slider_events: bool = False,
                view: Mapping | None = None) -> str:
    """The figure, its Plotly config, its frames (a slider stepping through them), which
    events are sent back and where plotly.js is (:func:`plotly_js_url`), as the JSON the
    component's script parses.

    The figure comes from plotly.py's public ``to_plotly_json()``; numpy float arrays are sent
    as Plotly's base64 typed arrays (every bit kept). Anything plain JSON cannot hold exactly
    (NaN or ∞ outside a numpy array, another object) takes plotly's own, slower way.
    """
    spec = fig.to_plotly_json()
    shown = _shown(frames or [])
    frames = [{k: v for k, v in f.items() if k != "active"} for f in frames or []]
    spec.update({"config": config, "clickable": clickable, "frames": frames,
                 "sliderEvents": slider_events, "plotlyUrl": plotly_js_url()})
    if view:
        spec["view"] = dict(view)
    try:
        still = _still(spec)
        if still is not None:  # what a chart showing one of its frames may skip redrawing
            spec.update(still=still, shown=shown)
        return json.dumps(spec, default=_typed_array, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return pio.to_json(spec, validate=False)


def _still(spec: dict) -> str | None:
    """A digest of everything in a figure with frames but what its frames change (the
    traces' values the frames set, the sliders' positions), or None without frames.

    A chart whose slider (or whose group's slider) was moved in the browser already shows
    the frame the next run's figure starts at: when this digest and that frame are the ones
    drawn, ``plotly_sliders.js`` leaves the chart as it is (no redraw after the rerun that
    records the value)."""
    frames = spec["frames"]
    if not frames or len(spec.get("layout", {}).get("sliders", [])) > 1:
        return None  # several sliders: which frame is shown is not one name
    varying: dict[int, set] = {}
    for frame in frames:
        for i, trace in zip(frame.get("traces", range(len(frame.get("data", [])))),
                            frame.get("data", []), strict=False):
            varying.setdefault(i, set()).update(trace)
    data = [{k: v for k, v in trace.items() if k not in varying.get(i, ())}
            for i, trace in enumerate(spec.get("data", []))]
    lay = dict(spec.get("layout", {}))  # (not "layout": the name of attnviz.ui.layout)
    lay["sliders"] = [{k: v for k, v in dict(s).items() if k != "active"}
                      for s in lay.get("sliders", [])]
    parts = {k: v for k, v in spec.items() if k not in ("data", "layout", "plotlyUrl")}
    text = json.dumps({"data": data, "layout": lay, **parts}, default=_typed_array,
                      allow_nan=False, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def _shown(frames: list[dict]) -> str | None:
    """The name of the frame a figure shows (marked ``"active"`` by ``with_slider``)."""
    return next((str(f.get("name")) for f in frames if f.get("active")), None)


def plotly_view(fig: go.Figure, *, key: str, config: dict,
                on_select: Callable[[], None] | None = None,
                frames: list[dict] | None = None,
                on_slider: Callable[[], None] | None = None,
                view: Mapping | None = None) -> None:
    """Show ``fig`` full-width, updated in place on later reruns with the same ``key``.

    ``on_select``: called (before the rerun) when a point of the chart is clicked; then
    ``st.session_state[key]["selection"]`` is ``{"points": [{"curve_number": c,
    "point_index": i}]}``, the shape of ``st.plotly_chart``'s selection events, so
    :mod:`attnviz.figures.clickable` reads both.
    ``frames``: what the figure's slider steps through in the browser (no server round trip
    while dragging, see :func:`attnviz.figures.heatmap.with_slider`); ``on_slider``: called
    when a slider is released, with ``st.session_state[key]["slider"]`` the name of the frame
    it stopped on (the step's label, unless ``with_slider`` was given other ``names``).
    ``view``: what the page knows of where the chart is shown, merged into the figure's
    sizing intent in the browser (plotly_present.js ``withView``): ``presenter`` (projector type),
    ``grow`` (false: presenter mode keeps the figure's height), ``fit`` (the height follows
    the screen), ``lazy`` (redrawn when seen). The figure itself is sent as it was built.
    """
    events = {}
    if on_select:
        events["on_selection_change"] = partial(_if_valid, key, fig, frames, on_select)
    if on_slider:
        events["on_slider_change"] = partial(_if_valid, key, fig, frames, on_slider)
    refused = st.session_state.get(_REFUSED, {}).pop(key, None)
    if refused:
        state.mark_one_time_message()
        st.warning(text.CHART_STATE_REFUSED.format(reason=refused))
    # sent as UTF-8 bytes: a str would be JSON-encoded a second time (every quote escaped) and
    # canonicalised again for the element's identity; bytes go as they are, identity = a hash
    payload = figure_json(fig, config, clickable=bool(on_select), frames=frames,
                          slider_events=bool(on_slider), view=view).encode("utf-8")
    _component()(key=key, data=payload, **events)


_REFUSED = "_chart_state_refused"  # {chart key: why its last event was ignored}
MAX_POINTS = 1000  # points of one selection event (a click sends one)


def state_problem(value, fig: go.Figure, frames: list[dict] | None) -> str:
    """Why a chart's state sent by the browser cannot be used, or "" (the browser is untrusted:
    a hand-made client can send any JSON). ``"selection"`` must be ``{"points": [...]}`` of at
    most :data:`MAX_POINTS` objects whose ``curve_number`` names a trace of ``fig`` and whose
    ``point_index`` is a whole number inside that trace; ``"slider"`` must be the name of one
    of ``frames``."""
    if value is None:
        return ""
    if not isinstance(value, Mapping):
        return text.CHART_STATE_NOT_OBJECT
    selection = value.get("selection")
    if selection is not None:
        points = selection.get("points") if isinstance(selection, Mapping) else None
        if not isinstance(points, list) or len(points) > MAX_POINTS:
            return text.CHART_STATE_BAD_POINTS.format(limit=MAX_POINTS)
        for point in points:
            if not isinstance(point, Mapping) or not _inside(point, fig):
                return text.CHART_STATE_BAD_POINT
    slider = value.get("slider")
    if slider is not None and (not isinstance(slider, str) or
                               slider not in {str(f.get("name")) for f in frames or ()}):
        return text.CHART_STATE_BAD_SLIDER
    return ""


def _inside(point: Mapping, fig: go.Figure) -> bool:
    """True when a selected point names a trace of ``fig`` and a point inside it."""
    curve, index = point.get("curve_number"), point.get("point_index")
    whole = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                for n in (curve, index))
    if not whole or curve >= len(fig.data):
        return False
    trace = fig.data[curve]
    size = max((len(v) for v in (getattr(trace, "x", None), getattr(trace, "y", None))
                if v is not None), default=None)
    return size is None or index < size


def _if_valid(key: str, fig: go.Figure, frames: list[dict] | None,
              callback: Callable[[], None]) -> None:
    """Run a chart's event ``callback`` only when the chart's state is valid; else note why
    (shown above the chart when it is drawn)."""
    problem = state_problem(st.session_state.get(key), fig, frames)
    if problem:
        st.session_state.setdefault(_REFUSED, {})[key] = problem
        return
    callback()
