"""attnviz in a Jupyter notebook: :func:`show` draws the model view of captured attention, or a
scenario's weights, as the last expression of a cell.

What is drawn is what the dashboard draws, from the same builders:

* a :class:`~attnviz.io.capture.Capture`, an
  :class:`~attnviz.io.attention_io.UploadedAttention`, or weights of shape (t, t),
  (heads, t, t) or (layers, heads, t, t) (a numpy array, a torch tensor, or Hugging Face's
  ``outputs.attentions``: one (1, heads, t, t) tensor per layer) -> the Model view's grid of
  every layer × head (:func:`attnviz.figures.model_view.model_grid`: same colours, causal
  models blank above the diagonal, hover with the strongest link and the most attended key);
* a :class:`~attnviz.scenarios.scenario.Scenario` (or a :class:`~attnviz.scenarios.variant.Preset`,
  built first), a :class:`~attnviz.scenarios.scenario.ScenarioResult` or a core result
  (anything with ``n_heads`` and ``head(h).weights``) -> the weights heatmap of each head
  (:func:`attnviz.figures.heatmap.heatmap`, kind "weights"), as the Playground draws it.

Offline, without a CDN: every output carries the plotly.js bundle of the installed plotly
package, gzip-compressed and base64-encoded (about 2.0 MB instead of 4.8 MB), in a data block
that the output's own script unpacks with the browser's ``DecompressionStream`` and runs; no
script is fetched from anywhere. Within one page the bundle is unpacked once (the promise is
kept on ``window``, per plotly.js version), and a plotly.js that another library put on
``window.Plotly`` is left in place. The bundle is in every output rather than in the first one
only: a notebook's outputs are drawn in any order, a cell run again or cleared loses what it
held, and some front ends (Colab) draw each output in its own frame — an output relying on
another output's bundle would then be blank.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from numpy.typing import NDArray

from attnviz.figures.heatmap import heatmap
from attnviz.figures.model_view import links, pooled, tiles
from attnviz.io import attention_io as aio
from attnviz.io.capture import Capture
from attnviz.scenarios import limits
from attnviz.scenarios.scenario import Scenario, ScenarioResult, position_labels, run_scenario
from attnviz.scenarios.tokens import without_bidi
from attnviz.scenarios.variant import Preset
from attnviz.teach.text import common
from attnviz.teach.text import model_view as view_text
from attnviz.teach.text import notebook as text

Array = NDArray[np.float64]

# the toolbar of the dashboard's charts (attnviz.ui.panels.chart_config) without its file names
CONFIG = {"displaylogo": False, "responsive": True,
          "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
HEAD_MIN_PX = 320  # a head's heatmap is at least this wide; heads wrap onto further rows
DEFAULT_HEIGHT_PX = 450  # plotly's own, for a figure that sets none


@dataclass(frozen=True, eq=False)
class NotebookView:
    """What :func:`show` returns: figures and a caption that Jupyter draws as HTML.

    Attributes
    ----------
    figures : tuple of go.Figure
        One for the model view; one per head for a scenario's weights.
    caption : str
        One sentence above the figures (what is shown, its size, causal or not).
    notes : tuple of str
        Warnings about the weights (rows that do not sum to 1), written below the caption.
    side_by_side : bool
        The figures share a row (heads), wrapping when the output is narrow.
    """

    figures: tuple[go.Figure, ...]
    caption: str
    notes: tuple[str, ...] = ()
    side_by_side: bool = False

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"<attnviz view: {self.caption}>"

    def to_html(self) -> str:
        """The output: the caption, one div per figure, the packed plotly.js and the script
        that unpacks it (once per page) and draws the figures. Needs no network."""
        uid = f"attnviz-{uuid.uuid4().hex}"
        ids = [f"{uid}-{i}" for i in range(len(self.figures))]
        row = ("display:flex;flex-wrap:wrap;gap:8px;" if self.side_by_side else "")
        width = f"flex:1 1 {HEAD_MIN_PX}px;min-width:{HEAD_MIN_PX}px;" if self.side_by_side \
            else "width:100%;"
        divs = "".join(
            f'<div id="{i}" class="plotly-graph-div" style="{width}height:'
            f'{int(fig.layout.height or DEFAULT_HEIGHT_PX)}px"></div>'
            for i, fig in zip(ids, self.figures, strict=True))
        notes = "".join(f'<p style="{_TEXT_STYLE}color:#8a5300">{html.escape(n)}</p>'
                        for n in self.notes)
        figures = "[" + ",".join(f'{{"id":{json.dumps(i)},"figure":{_figure_json(fig)}}}'
                                 for i, fig in zip(ids, self.figures, strict=True)) + "]"
        version, packed = plotly_js()
        script = (_LOADER.replace("__UID__", json.dumps(uid))
                  .replace("__VERSION__", json.dumps(version))
                  .replace("__CONFIG__", json.dumps(CONFIG))
                  .replace("__NO_UNPACK__", _js_string(text.NO_UNPACK))
                  .replace("__FIGURES__", figures))
        return (f'<div class="attnviz-view" id="{uid}">'
                f'<p style="{_TEXT_STYLE}">{html.escape(self.caption)}</p>{notes}'
                f'<p id="{uid}-message" style="{_TEXT_STYLE}color:#b00020;display:none"></p>'
                f'<div style="{row}">{divs}</div>'
                f'<script type="application/octet-stream" id="{uid}-plotlyjs" '
                f'data-plotly-version="{html.escape(version)}">{packed}</script>'
                f"<script>{script}</script></div>")


_TEXT_STYLE = "font-family:sans-serif;font-size:13px;margin:4px 0;"

# Unpacks the bundle once per page and plotly.js version, then draws this output's figures.
# The bundle assigns window.Plotly when run; a plotly.js of another version that was there
# before is put back, and ours is kept in the promise.
_LOADER = """
(function () {
  var uid = __UID__, version = __VERSION__, config = __CONFIG__, figures = __FIGURES__;
  var here = document.currentScript, root = here ? here.getRootNode() : document;
  function byId(id) { return root.getElementById ? root.getElementById(id)
                                                 : document.getElementById(id); }
  function fail() {
    var p = byId(uid + "-message");
    if (p) { p.textContent = __NO_UNPACK__; p.style.display = "block"; }
  }
  function draw(Plotly) {
    figures.forEach(function (f) {
      var el = byId(f.id);
      if (el) { Plotly.newPlot(el, f.figure.data, f.figure.layout, config); }
    });
  }
  var key = "attnvizPlotly@" + version, ready = window[key];
  if (!ready && window.Plotly && window.Plotly.version === version) {
    ready = window[key] = Promise.resolve(window.Plotly);
  }
  if (!ready) {
    if (typeof DecompressionStream === "undefined") { fail(); return; }
    var raw = atob(byId(uid + "-plotlyjs").textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    ready = window[key] = new Response(stream).text().then(function (code) {
      var before = window.Plotly, script = document.createElement("script");
      window.PlotlyConfig = window.PlotlyConfig || {MathJaxConfig: "local"};
      script.textContent = code;
      document.head.appendChild(script);
      var ours = window.Plotly;
      if (before && before !== ours) { window.Plotly = before; }
      if (!ours || ours.version !== version) { throw new Error("plotly.js did not load"); }
      return ours;
    });
    ready.catch(function () { delete window[key]; });
  }
  ready.then(draw, fail);
})();
"""


@functools.cache
def plotly_js() -> tuple[str, str]:
    """The installed plotly package's plotly.js: its version and the bundle gzip-compressed
    (deterministic: no time stamp) and base64-encoded. Made once per process (~0.4 s)."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    packed = gzip.compress(get_plotlyjs().encode("utf-8"), compresslevel=9, mtime=0)
    return get_plotlyjs_version(), base64.b64encode(packed).decode("ascii")


def _figure_json(fig: go.Figure) -> str:
    """The figure as JSON safe inside a <script> (plotly.io escapes ``<``, ``>`` and ``/``)."""
    return pio.to_json(fig, validate=False)


def _js_string(s: str) -> str:
    return json.dumps(s).replace("<", "\\u003c").replace(">", "\\u003e")


# ---------------------------------------------------------------------------------------------
# What show accepts
# ---------------------------------------------------------------------------------------------

def show(x: Any, tokens: Sequence[str] | None = None, *, causal: bool | None = None,
         sequence: int | None = None) -> NotebookView:
    """Draw attention inline in a Jupyter notebook, offline.

    Parameters
    ----------
    x : Capture, UploadedAttention, array_like, Scenario, Preset, ScenarioResult or a result
        Captured weights (a Capture from :func:`attnviz.io.capture.capture`, or weights of
        shape (t, t), (heads, t, t) or (layers, heads, t, t), also a torch tensor or
        ``outputs.attentions``) give the model view of every layer × head; a scenario, preset,
        scenario result or core result gives its weights heatmap per head.
    tokens : sequence of str, optional
        One label per token of the weights (default: a Capture's or an upload's own tokens,
        else ``t0, t1, ...``). Not for scenarios, which carry their own.
    causal : bool, optional
        Draw the upper triangle blank (a causal model). Default: a Capture's ``is_causal``;
        for plain weights, True when nothing lies above the diagonal.
    sequence : int, optional
        Which sequence of a Capture's batch (default 0).

    Returns
    -------
    NotebookView
        Its ``_repr_html_`` draws the figures; ``figures`` holds the go.Figure objects.

    Raises
    ------
    ValueError, TypeError
        Something else than the above, weights that are not attention (negative, NaN, not
        square, beyond the upload limits), tokens that do not match the weights.
    """
    if causal is not None and not isinstance(causal, (bool, np.bool_)):
        raise TypeError(text.BAD_CAUSAL.format(what=repr(causal)[:60]))
    if sequence is not None and not isinstance(x, Capture):
        raise ValueError(text.SEQUENCE_WITHOUT_CAPTURE.format(what=type(x).__name__))
    if isinstance(x, Preset):
        x = x.build()
    if isinstance(x, (Scenario, ScenarioResult)) or _is_result(x):
        if tokens is not None or causal is not None:
            raise ValueError(text.SCENARIO_TOKENS)
        return scenario_view(x)
    return model_view(x, tokens, causal=causal, sequence=sequence)


def _is_result(x: Any) -> bool:
    """A core result: it has heads, each with its weights (the results' shared protocol)."""
    return (not isinstance(x, (np.ndarray, list, tuple)) and hasattr(x, "n_heads")
            and callable(getattr(x, "head", None)) and hasattr(x, "weights"))


def model_view(x: Any, tokens: Sequence[str] | None = None, *, causal: bool | None = None,
               sequence: int | None = None) -> NotebookView:
    """The Model view's grid of every layer × head of captured weights (see :func:`show`)."""
    boundary, source, own_tokens = None, text.ARRAY_SOURCE, None
    if isinstance(x, Capture):
        k = 0 if sequence is None else sequence
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(x):
            raise ValueError(text.NO_SEQUENCE.format(sequence=k, n=len(x), last=len(x) - 1))
        raw, own_tokens = x.attentions[k], x.tokens[k]
        causal = bool(x.is_causal) if causal is None else causal
        segments = None if x.token_type_ids is None else x.token_type_ids[k]
        if segments is not None and (segments == 1).any():
            boundary = int(np.argmax(segments == 1))
        source = text.CAPTURE_SOURCE.format(model_type=x.model_type or text.UNKNOWN_MODEL,
                                            sequence=k)
    elif isinstance(x, aio.UploadedAttention):
        raw, own_tokens = x.weights, x.tokens
    else:
        raw = _weights_array(x)
    weights, warnings = aio.as_attention(raw)  # (layers, heads, t, t), the uploads' checks
    t = weights.shape[-1]
    shown = _labels(tokens if tokens is not None else own_tokens, t)
    if causal is None:
        causal = _nothing_above_diagonal(weights)
    fig = grid(weights, position_labels(shown), causal=bool(causal), boundary=boundary)
    caption = view_text.SHOWING.format(
        source=source, layers=weights.shape[0], heads=weights.shape[1], t=t,
        kind=view_text.CAUSAL if causal else view_text.BIDIRECTIONAL)
    notes = tuple(view_text.WARNING.format(warning=str(w).rstrip(".")) for w in warnings)
    return NotebookView(figures=(fig,), caption=caption, notes=notes)


def grid(w: Array, labels: Sequence[str], *, causal: bool,
         boundary: int | None = None) -> go.Figure:
    """The Model view page's grid (:func:`attnviz.figures.model_view.model_grid`: the same
    thumbnails, colours, causal blanks, pair line and hover) without its click: nothing opens
    a head in a notebook, so the hover does not offer it.

    Parameters
    ----------
    w : ndarray of shape (n_layers, n_heads, t, t)
    labels : sequence of str
        One label per token, unique by position.
    """
    small, factor = pooled(w)
    hovers = [[text.TILE_HOVER.format(layer=layer, h=h, **links(w[layer, h], labels, causal))
               for h in range(w.shape[1])] for layer in range(w.shape[0])]
    fig, _ = tiles(small, row_ticks=[view_text.LAYER_TICK.format(i=i) for i in range(w.shape[0])],
                   col_ticks=[view_text.HEAD_TICK.format(h=h) for h in range(w.shape[1])],
                   hovers=hovers, causal=causal,
                   boundary=None if boundary is None else -(-boundary // factor))
    fig.update_layout(clickmode="none")
    return fig


def scenario_view(x: Scenario | ScenarioResult | Any) -> NotebookView:
    """Each head's weights heatmap of a scenario, its result or a core result."""
    if isinstance(x, Scenario):
        title, result = x.title, run_scenario(x)
    else:
        title, result = None, x
    att = result.attention if isinstance(result, ScenarioResult) else result
    weights = np.stack([np.asarray(att.head(h).weights, dtype=np.float64)
                        for h in range(att.n_heads)])  # (n_heads, t_q, t_k)
    n_heads, t_q, t_k = weights.shape
    if isinstance(result, ScenarioResult):
        q_labels, k_labels = result.q_labels, result.k_labels
    else:
        q_labels, k_labels = [str(i) for i in range(t_q)], [str(j) for j in range(t_k)]
    figures = tuple(
        heatmap(weights[h], k_labels, q_labels, kind="weights", x_title=common.AXIS_KEY,
                y_title=common.AXIS_QUERY,
                title=common.HEAD_NAME.format(h=h) if n_heads > 1 else "")
        for h in range(n_heads))
    caption = (text.SCENARIO_CAPTION.format(title=title, t_q=t_q, t_k=t_k, heads=n_heads)
               if title is not None else
               text.RESULT_CAPTION.format(kind=type(att).__name__, t_q=t_q, t_k=t_k,
                                          heads=n_heads))
    return NotebookView(figures=figures, caption=caption, side_by_side=n_heads > 1)


def _weights_array(x: Any) -> np.ndarray:
    """An array, a tensor, or one tensor per layer (Hugging Face's ``outputs.attentions``:
    (1, heads, t, t) each) as one numpy array of shape (..., t, t)."""
    if isinstance(x, (list, tuple)) and x and all(_is_array_like(v) for v in x):
        layers = [_numpy(v, type(x).__name__) for v in x]
        shapes = {v.shape for v in layers}
        if len(shapes) != 1:
            raise ValueError(text.LAYER_SHAPES.format(
                shapes=", ".join(str(s) for s in sorted(shapes))[:200]))
        for i, v in enumerate(layers):
            if v.ndim == 4 and v.shape[0] != 1 or v.ndim not in (3, 4):
                raise ValueError(text.LAYER_BATCH.format(layer=i, shape=v.shape))
        return np.stack([v.reshape(v.shape[-3:]) for v in layers])  # (layers, heads, t, t)
    if not _is_array_like(x) and not isinstance(x, (list, tuple)):
        raise TypeError(text.NOT_SHOWN.format(what=type(x).__name__))
    return _numpy(x, type(x).__name__)


def _is_array_like(v: Any) -> bool:
    return isinstance(v, np.ndarray) or hasattr(v, "__array__") or hasattr(v, "detach")


def _numpy(v: Any, what: str) -> np.ndarray:
    """A numpy array of a list, an array or a torch tensor (any device or dtype, bfloat16
    too: numpy has none, so tensors are read as float64)."""
    try:
        if hasattr(v, "detach"):
            v = v.detach().to("cpu").double().numpy()
        arr = np.asarray(v)
    except (TypeError, ValueError, RuntimeError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise ValueError(text.NOT_ARRAY.format(what=what, reason=reason.rstrip("."))) from None
    if arr.dtype == object:
        raise ValueError(text.NOT_ARRAY.format(
            what=what, reason="its rows have different lengths or hold other objects"))
    return arr


def _labels(tokens: Sequence[str] | None, t: int) -> tuple[str, ...]:
    """Token labels as the Model view page writes them (no bidi controls, cut to
    MAX_LABEL_CHARS), ``t0, t1, ...`` when none are given."""
    if tokens is None:
        return aio.default_tokens(t)
    if isinstance(tokens, str) or not isinstance(tokens, (Sequence, np.ndarray)):
        raise TypeError(text.BAD_TOKENS.format(what=f"got {type(tokens).__name__}"))
    tokens = list(tokens)
    bad = next((tok for tok in tokens if not isinstance(tok, (str, np.str_))), None)
    if bad is not None:
        raise TypeError(text.BAD_TOKENS.format(what=f"it holds a {type(bad).__name__}"))
    aio.check_tokens(tokens, t)
    return tuple(without_bidi(str(tok))[: limits.MAX_LABEL_CHARS] for tok in tokens)


def _nothing_above_diagonal(w: Array) -> bool:
    """True when every matrix has nothing above the diagonal (and t > 1): causal weights,
    as the Model view page decides for a file without metadata."""
    t = w.shape[-1]
    rows, cols = np.triu_indices(t, 1)
    return t > 1 and not w[..., rows, cols].any()
