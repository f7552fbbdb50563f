"""attnviz.show (attnviz.figures.notebook): what it returns for each kind of input, the HTML a
notebook shows (the figure's data, the packed plotly.js of the installed plotly, no script from
the network), its size, and every refusal. The drawing itself, offline in Chromium after a
headless notebook run: tests/browser/test_notebook_offline.py."""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest
from plotly.offline import get_plotlyjs, get_plotlyjs_version

import attnviz
from attnviz.figures.heatmap import heatmap
from attnviz.figures.model_view import SEGMENT_COLOUR, links, model_grid
from attnviz.figures.notebook import NotebookView, plotly_js
from attnviz.io import attention_io
from attnviz.io.capture import Capture
from attnviz.teach.text import common
from attnviz.teach.text import model_view as view_text
from attnviz.teach.text import notebook as text

ROOT = Path(__file__).resolve().parents[2]
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
MAX_OUTPUT_BYTES = 2_000_000  # a small output: the packed plotly.js (~1.96 MB) and its figure


def random_weights(shape, seed=0, causal=False) -> np.ndarray:
    """Rows of positive weights summing to 1 (a softmax of random scores)."""
    s = np.random.default_rng(seed).normal(size=shape)
    if causal:
        t = shape[-1]
        s = np.where(np.tri(t, dtype=bool), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def tiles(z: np.ndarray, rows: int, cols: int, n: int) -> np.ndarray:
    """The grid's thumbnails back out of its one tiled z: (rows, cols, n, n)."""
    step = n + max(1, n // 8)
    return np.array([[z[r * step:r * step + n, c * step:c * step + n] for c in range(cols)]
                     for r in range(rows)])


def decoded(value) -> np.ndarray:
    """A trace array as plotly.io writes it: a list, or {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return arr.reshape([int(s) for s in str(value["shape"]).split(",")])
    return np.array(value, dtype=float)


def figures_in(html: str) -> list[dict]:
    """The figures an output's script draws (the JSON literal it holds)."""
    script = html.rsplit("<script>", 1)[1]
    start = script.index("figures = ") + len("figures = ")
    found, _ = json.JSONDecoder().raw_decode(script[start:])
    return [f["figure"] for f in found]


def capture(weights, tokens, causal, segments=None) -> Capture:
    """A Capture as attnviz.io.capture.capture returns one (no torch needed to build it)."""
    t = len(tokens)
    return Capture(attentions=(np.asarray(weights),), tokens=(tuple(tokens),),
                   input_ids=(np.arange(t),),
                   token_type_ids=None if segments is None else (np.asarray(segments),),
                   positions=(np.arange(t),), config={}, model_type="gpt2" if causal else "bert",
                   is_causal=causal)


# --- the model view ---------------------------------------------------------------------------

def test_an_array_with_tokens_is_the_model_views_grid():
    w = random_weights((2, 4, 6, 6))
    view = attnviz.show(w, TOKENS)
    assert isinstance(view, NotebookView) and len(view.figures) == 1
    fig = view.figures[0]
    labels = attnviz.position_labels(TOKENS)
    page, _ = model_grid(w, labels, causal=False)  # the Model view page's grid
    assert len(fig.data) == len(page.data)
    for ours, theirs in zip(fig.data[:-1], page.data[:-1], strict=True):  # thumbnails, frames
        assert pio.to_json(ours) == pio.to_json(theirs)  # same colours, scale, geometry
    np.testing.assert_allclose(tiles(fig.data[0].z, 2, 4, 6), w, rtol=0, atol=1e-7)
    assert fig.data[0].colorscale == heatmap(np.eye(2), kind="weights").data[0].colorscale
    # the same hover, less the page's "click to open": a notebook opens no head
    hovers = fig.data[-1].hovertext
    assert hovers[1] == text.TILE_HOVER.format(layer=0, h=1, **links(w[0, 1], labels, False))
    assert all(h.split("<br>")[:3] == p.split("<br>")[:3]
               for h, p in zip(hovers, page.data[-1].hovertext, strict=True))
    assert "click" not in "".join(hovers) and fig.layout.clickmode == "none"
    assert view.caption == view_text.SHOWING.format(
        source=text.ARRAY_SOURCE, layers=2, heads=4, t=6, kind=view_text.BIDIRECTIONAL)


def test_a_capture_draws_causal_blank_and_the_pairs_boundary():
    w = random_weights((3, 2, 6, 6), causal=True)
    view = attnviz.show(capture(w, TOKENS, causal=True))
    z = tiles(view.figures[0].data[0].z, 3, 2, 6)
    upper = ~np.tri(6, dtype=bool)
    assert np.isnan(z[..., upper]).all()  # blank, not the colour of 0
    np.testing.assert_allclose(z[..., ~upper], w[..., ~upper], atol=1e-7)
    assert view_text.CAUSAL in view.caption and "gpt2" in view.caption

    pair = attnviz.show(capture(random_weights((1, 2, 6, 6)), TOKENS, causal=False,
                                segments=[0, 0, 0, 1, 1, 1]))
    seams = [t for t in pair.figures[0].data
             if t.type == "scatter" and t.line.color == SEGMENT_COLOUR]
    assert len(seams) == 1 and 2.5 in seams[0].x  # the second sentence starts at token 3


def test_plain_weights_are_causal_when_nothing_lies_above_the_diagonal():
    causal = attnviz.show(random_weights((1, 2, 5, 5), causal=True))
    assert view_text.CAUSAL in causal.caption
    assert np.isnan(tiles(causal.figures[0].data[0].z, 1, 2, 5)[..., 0, 1]).all()
    told = attnviz.show(random_weights((1, 2, 5, 5), causal=True), causal=False)
    assert view_text.BIDIRECTIONAL in told.caption


def test_hugging_faces_outputs_attentions_and_smaller_ranks():
    w = random_weights((3, 2, 5, 5))
    per_layer = tuple(w[i][None] for i in range(3))  # (1, n_heads, t, t) each, as HF returns
    z = attnviz.show(per_layer).figures[0].data[0].z
    np.testing.assert_allclose(tiles(z, 3, 2, 5), w, atol=1e-7)
    one_head = attnviz.show(w[0, 0]).figures[0].data[0].z  # (t, t): one layer, one head
    np.testing.assert_allclose(tiles(one_head, 1, 1, 5)[0, 0], w[0, 0], atol=1e-7)


def test_a_torch_tensor_is_read_in_any_dtype():
    torch = pytest.importorskip("torch")
    w = random_weights((1, 2, 4, 4))
    z = attnviz.show(torch.tensor(w, dtype=torch.bfloat16)).figures[0].data[0].z
    np.testing.assert_allclose(tiles(z, 1, 2, 4), w, atol=1e-2)  # bfloat16's 3 digits


def test_an_uploaded_file_brings_its_tokens():
    w = random_weights((1, 2, 6, 6)).astype(np.float32)
    import io
    buffer = io.BytesIO()
    np.savez(buffer, attention=w, tokens=np.array(TOKENS))
    up = attention_io.load_attention(buffer.getvalue(), "a.npz")
    hover = attnviz.show(up).figures[0].data[-1].hovertext
    assert hover == attnviz.show(w, TOKENS).figures[0].data[-1].hovertext
    assert hover != attnviz.show(w).figures[0].data[-1].hovertext  # not t0, t1, ...


def test_rows_that_do_not_sum_to_one_are_drawn_with_a_note():
    w = random_weights((1, 1, 4, 4)) * 0.5
    view = attnviz.show(w)
    assert len(view.notes) == 1 and "sum" in view.notes[0]
    assert view.notes[0] in view._repr_html_()


# --- a scenario's weights ---------------------------------------------------------------------

def test_a_preset_scenario_draws_each_heads_weights_heatmap():
    preset = attnviz.PRESETS["seed_004_two_heads"]
    result = attnviz.run_scenario(preset.build())
    for given in (preset, preset.build(), result):
        view = attnviz.show(given)
        assert len(view.figures) == 2 and view.side_by_side
        for h, fig in enumerate(view.figures):
            expected = heatmap(result.attention.weights[h], result.k_labels, result.q_labels,
                               kind="weights", x_title=common.AXIS_KEY,
                               y_title=common.AXIS_QUERY, title=common.HEAD_NAME.format(h=h))
            assert pio.to_json(fig) == pio.to_json(expected)
            np.testing.assert_array_equal(fig.data[0].z, result.attention.weights[h])
    assert attnviz.show(preset).caption.startswith(preset.build().title)


def test_a_single_head_scenario_and_a_core_result():
    result = attnviz.run_scenario(attnviz.default_scenario())
    view = attnviz.show(result)
    assert len(view.figures) == 1 and not view.side_by_side
    np.testing.assert_array_equal(view.figures[0].data[0].z, result.attention.weights)
    x = np.random.default_rng(1).normal(size=(5, 4))
    core = attnviz.self_attention(x, *np.random.default_rng(2).normal(size=(3, 4, 4)),
                                  causal=True)
    shown = attnviz.show(core)
    np.testing.assert_array_equal(shown.figures[0].data[0].z, core.weights)
    assert shown.caption.startswith("AttentionResult")


# --- the HTML a notebook shows ----------------------------------------------------------------

def test_the_output_holds_the_figure_and_no_script_from_the_network():
    w = random_weights((2, 3, 6, 6))
    view = attnviz.show(w, TOKENS)
    out = view._repr_html_()
    assert not re.search(r"<script[^>]*\bsrc\s*=", out, re.I)  # no script is fetched at all
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", out, re.I)
    [fig] = figures_in(out)
    z = decoded(fig["data"][0]["z"])
    np.testing.assert_allclose(tiles(z, 2, 3, 6), w, atol=1e-7)
    assert fig["data"][-1]["hovertext"] == list(view.figures[0].data[-1].hovertext)
    assert html_escaped(view.caption) in out


def html_escaped(s: str) -> str:
    import html
    return html.escape(s)


def test_the_output_carries_the_installed_plotly_js_packed():
    out = attnviz.show(random_weights((1, 1, 3, 3)))._repr_html_()
    packed = re.search(r'<script type="application/octet-stream" id="([\w-]+)-plotlyjs" '
                       r'data-plotly-version="([\d.]+)">([A-Za-z0-9+/=]+)</script>', out)
    assert packed and packed.group(2) == get_plotlyjs_version()
    assert gzip.decompress(base64.b64decode(packed.group(3))).decode() == get_plotlyjs()
    assert out.count(packed.group(3)) == 1 and out.count("<script") == 2


def test_the_output_size():
    """An output is the packed bundle (gzip: 4.8 MB of plotly.js -> ~1.5 MB, ~2.0 MB in
    base64; raw it would be 4.8 MB in every output) and the figure, which is what the
    dashboard sends for it (a 12 × 12 grid of 48 tokens: one 642 × 642 float32 z, ~2.4 MB)."""
    _, packed = plotly_js()
    assert len(packed) < 0.45 * len(get_plotlyjs())
    for x in (random_weights((2, 4, 6, 6)), attnviz.PRESETS["seed_004_two_heads"]):
        assert len(attnviz.show(x)._repr_html_().encode()) < MAX_OUTPUT_BYTES
    large = attnviz.show(random_weights((12, 12, 48, 48)))
    figure_bytes = len(pio.to_json(large.figures[0], validate=False))
    assert len(large._repr_html_()) - len(packed) < figure_bytes + 10_000


def test_two_outputs_never_share_an_id():
    a = attnviz.show(random_weights((1, 1, 3, 3)))._repr_html_()
    b = attnviz.show(random_weights((1, 1, 3, 3)))._repr_html_()
    ids = lambda s: set(re.findall(r'id="([\w-]+)"', s))  # noqa: E731
    assert ids(a) and not ids(a) & ids(b)


def test_a_label_cannot_break_out_of_the_output():
    tokens = ["</script><script>alert(1)</script>", "<b>x</b>", "a", "b"]
    out = attnviz.show(random_weights((1, 1, 4, 4)), tokens)._repr_html_()
    assert out.count("<script") == 2 and "alert(1)</script>" not in out


# --- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("given, kwargs, error, words", [
    ("the cat", {}, TypeError, "attnviz.show draws a Capture"),
    ({"a": 1}, {}, TypeError, "got dict"),
    (np.full((2, 3), 0.5), {}, ValueError, "the last two sizes must be equal"),
    (-random_weights((1, 1, 3, 3)), {}, ValueError, "negative"),
    (random_weights((1, 1, 3, 3)), {"tokens": ["a", "b"]}, ValueError, "holds 2 tokens"),
    (random_weights((1, 1, 3, 3)), {"tokens": "abc"}, TypeError, "list of strings"),
    (random_weights((1, 1, 3, 3)), {"tokens": ["a", 1, "c"]}, TypeError, "holds a int"),
    (random_weights((1, 1, 3, 3)), {"causal": "yes"}, TypeError, "True, False or None"),
    (random_weights((1, 1, 3, 3)), {"sequence": 0}, ValueError, "picks a sequence"),
    (attnviz.PRESETS["cat_sat"], {"tokens": ["a"]}, ValueError, "carries its own tokens"),
    ([[0.5, 0.5], [1.0]], {}, ValueError, "cannot be read as an array"),
    ((random_weights((2, 1, 3, 3)), random_weights((2, 1, 3, 3))), {}, ValueError,
     "give one sequence"),
    ((random_weights((1, 3, 3)), random_weights((1, 4, 4))), {}, ValueError,
     "different shapes"),
])
def test_wrong_input_is_refused_in_a_sentence(given, kwargs, error, words):
    with pytest.raises(error, match=re.escape(words)):
        attnviz.show(given, **kwargs)


def test_a_sequence_the_capture_does_not_hold():
    cap = capture(random_weights((1, 1, 6, 6)), TOKENS, causal=False)
    with pytest.raises(ValueError, match=re.escape("sequence 1 does not exist; the capture "
                                                   "holds 1 (0 to 0)")):
        attnviz.show(cap, sequence=1)


# --- the package stays light ------------------------------------------------------------------

def test_import_attnviz_and_naming_show_load_no_plotly():
    code = ("import sys, attnviz; f = attnviz.show; "
            "print('plotly' in sys.modules, 'attnviz.figures' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]


# --- a real capture ---------------------------------------------------------------------------

def test_a_capture_of_a_tiny_bloom_is_drawn_causal(tmp_path, monkeypatch):
    """From a saved model to the notebook's grid: BLOOM (no is_causal flag on its attention)
    is drawn causal, its upper triangle blank."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # before transformers: nothing is downloaded
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from hf_models import VOCAB, save_model

    from attnviz.io.capture import capture as run_capture
    from attnviz.io.capture import load_model

    config = transformers.BloomConfig(hidden_size=16, n_layer=2, n_head=4,
                                      vocab_size=len(VOCAB))
    model, tokenizer = load_model(save_model(config, bert=False, pad=True, folder=tmp_path))
    cap = run_capture(model, tokenizer, text="the cat sat on a mat")
    view = attnviz.show(cap)
    assert view.caption == view_text.SHOWING.format(
        source=text.CAPTURE_SOURCE.format(model_type="bloom", sequence=0), layers=2, heads=4,
        t=6, kind=view_text.CAUSAL)
    z = tiles(view.figures[0].data[0].z, 2, 4, 6)
    upper = ~np.tri(6, dtype=bool)
    assert np.isnan(z[..., upper]).all()
    np.testing.assert_allclose(z[..., ~upper], cap.attentions[0][..., ~upper], atol=1e-7)
