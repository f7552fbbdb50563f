"""The one way every builder in :mod:`attnviz.figures` makes its ``go.Figure``.

Builders describe a figure as plain dicts (traces and layout) and hand them to :func:`figure`,
which writes Plotly's default template out as explicit properties and skips plotly.py's
property validation: validation costs ~3 ms per trace and ~10–30 ms per figure, most of a
page's rerun. tests/pages/test_speed.py checks every builder's figure against the validated one.
The private argument that skips validation is used in one place (:func:`_unvalidated`), which
falls back to validated construction if a plotly.py release stops taking it.
"""

from __future__ import annotations

import functools
import json
import logging

import plotly
import plotly.graph_objects as go

_VALIDATE = False  # True: let plotly.py validate every figure (tests compare the two)
# template sections no figure here uses: 3-D, polar, maps, and the default colour scales
# (every heatmap trace sets its own colorscale)
_TEMPLATE_SKIP = ("polar", "ternary", "scene", "geo", "mapbox", "map", "colorscale", "coloraxis")


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A go.Figure from plain dicts, with the default template written out, unvalidated.

    Parameters
    ----------
    data : list of dict
        Traces, each with its ``type`` ("heatmap", "scatter", "bar", ...).
    layout : dict
        Layout properties; nested dicts are merged over the template's.

    Returns
    -------
    go.Figure
        Later changes by callers (``update_layout``, ``add_trace``) are validated as usual.
    """
    layout_defaults, trace_defaults = _template_defaults()
    data = [_merge(trace_defaults.get(d.get("type", "scatter"), {}), d) for d in data]
    layout = dict(_merge(layout_defaults, layout), template={})
    spec = dict(data=data, layout=layout)
    fig = None if _VALIDATE or not _FAST else _unvalidated(spec)
    return fig if fig is not None else go.Figure(spec)


_FAST = [True]  # False once this plotly.py refused the unvalidated construction (see below)


def _unvalidated(spec: dict) -> go.Figure | None:
    """``go.Figure(spec)`` without plotly.py's property validation, through its private
    ``_validate=False`` argument (the one private Plotly API here); None — and validated
    construction from then on, with one log line — when this plotly.py refuses the argument or
    builds something else with it (a release that drops or renames it)."""
    try:
        fig = go.Figure(spec, _validate=False)
        if getattr(fig, "_validate", None) is not False or [t.type for t in fig.data] != [
                d.get("type", "scatter") for d in spec["data"]]:
            raise TypeError("go.Figure(_validate=False) built another figure")
    except (TypeError, AttributeError) as err:
        _FAST[0] = False
        logging.getLogger(__name__).warning(
            "attnviz: plotly.py %s refused go.Figure(..., _validate=False) (%s); figures are "
            "validated from now on (slower, same figures)", plotly.__version__, err)
        return None
    fig._validate = True  # noqa: SLF001 — only the construction above skips validation
    return fig


def axis(title: str, **props) -> dict:
    """An axis with an optional title (plotly.js 3 wants ``title`` as ``{"text": ...}``)."""
    return dict(title=dict(text=title), **props) if title else props


def _merge(base: dict, over: dict) -> dict:
    """``over`` on top of ``base``, merging nested dicts (as a template's defaults apply)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


@functools.cache
def _template_json(name: str) -> tuple[str, str]:
    import plotly.io as pio

    full = pio.templates[name].to_plotly_json() if name else {}
    layout = {k: v for k, v in full.get("layout", {}).items() if k not in _TEMPLATE_SKIP}
    traces = {}
    for kind, defaults in full.get("data", {}).items():
        first = dict(defaults[0]) if defaults else {}
        first.pop("type", None)
        first.pop("colorscale", None)  # always set by the builders
        traces[kind] = first
    return json.dumps(layout), json.dumps(traces)


def _template_defaults() -> tuple[dict, dict[str, dict]]:
    """Plotly's default template as explicit properties: (layout, {trace type: defaults}).

    The default is the template plotly.py would give a new figure now (Streamlit installs its
    own "streamlit" template when it is imported): its layout part without the sections no
    figure here uses, and its trace defaults by trace type. Written out they look as the
    template does (checked pixel by pixel against the validated, templated figure), without
    building a template object (~0.5 ms a figure) or sending one (~5 KB a chart).
    """
    import plotly.io as pio

    name = pio.templates.default  # "streamlit" once Streamlit is imported, else "plotly"
    layout, traces = _template_json(name if isinstance(name, str) else "")
    return json.loads(layout), json.loads(traces)
