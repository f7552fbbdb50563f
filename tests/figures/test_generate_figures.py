"""The Generate page's figures (attnviz.figures.generate): the strips are the rows they are given
(pooled by summing keys beyond GRID_T, so each still sums to 1), in layer and head order, with
one click target per strip; the candidates are the probabilities given, best first, the next
step's token orange; every figure is what plotly.py's validated construction builds."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from attnviz.figures import base
from attnviz.figures import generate as fg
from attnviz.figures.model_view import GRID_T, SELECTED_COLOUR


def rows(n_layers: int, n_heads: int, t: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((n_layers, n_heads, t)) ** 4
    return w / w.sum(axis=-1, keepdims=True)


def drawn_strips(fig: go.Figure, n_layers: int, n_heads: int, n: int) -> np.ndarray:
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    step = n + max(1, n // 8)
    every = [[z[layer * (fg.STRIP_ROWS + 1) + r, h * step:h * step + n]
              for r in range(fg.STRIP_ROWS)]
             for layer in range(n_layers) for h in range(n_heads)]
    for strip in every:  # a strip's rows are one row repeated
        assert all(np.array_equal(strip[0], r, equal_nan=True) for r in strip)
    return np.array([s[0] for s in every]).reshape(n_layers, n_heads, n)


def test_the_strips_are_the_rows_in_layer_and_head_order():
    w = rows(3, 4, 9)
    labels = [f"{i}:t{i}" for i in range(9)]
    fig, picker = fg.row_grid(w, labels, selected=(2, 1))
    np.testing.assert_allclose(drawn_strips(fig, 3, 4, 9), w, atol=1e-7)  # float32 cells
    z = np.asarray(fig.data[0].z)
    assert np.isnan(z[fg.STRIP_ROWS]).all()  # a blank row between two layers
    targets = fig.data[picker]
    assert picker == len(fig.data) - 1 and len(targets.x) == 12
    top = int(w[2, 1].argmax())
    assert targets.hovertext[2 * 4 + 1] == (f"L2 H1<br>most at {labels[top]}: "
                                            f"{w[2, 1].max():.3f}<br>on itself: "
                                            f"{w[2, 1, -1]:.3f}")
    outlined = [t for t in fig.data if getattr(t, "line", None) is not None
                and t.line.color == SELECTED_COLOUR]
    assert len(outlined) == 1
    xs = [x for x in outlined[0].x if x is not None]
    step = 9 + 1
    assert min(xs) < 1 * step <= 1 * step + 8 < max(xs)  # around head 1's columns
    assert list(fig.layout.yaxis.ticktext) == ["L0", "L1", "L2"]
    assert list(fig.layout.xaxis.ticktext) == ["H0", "H1", "H2", "H3"]


def test_long_rows_are_pooled_by_summing_keys():
    t = 3 * GRID_T - 5
    w = rows(2, 2, t, seed=1)
    fig, _ = fg.row_grid(w, [str(i) for i in range(t)])
    n = -(-t // 3)
    drawn = drawn_strips(fig, 2, 2, n)
    assert n <= GRID_T
    np.testing.assert_allclose(drawn.sum(axis=-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(drawn[1, 0, 0], w[1, 0, :3].sum(), atol=1e-7)
    np.testing.assert_allclose(drawn[1, 0, -1], w[1, 0, 3 * (n - 1):].sum(), atol=1e-7)


def test_candidates_are_the_probabilities_best_first():
    fig = fg.candidates(["the", "on", "a\n"], [0.5, 0.3, 0.1], chosen=1)
    bars = fig.data[0]
    assert list(bars.x) == [0.5, 0.3, 0.1] and list(bars.y) == ["the", "on", "a\\n"]
    assert list(bars.marker.color) == ["#7f7f7f", SELECTED_COLOUR, "#7f7f7f"]
    assert list(bars.text) == ["0.500", "0.300", "0.100"]
    assert fig.layout.yaxis.autorange == "reversed" and len(fig.data) == 1
    sampled = fg.candidates(["x", "y"], [0.6, 0.4], sampled=[0.7, 0.3], temperature=0.5)
    assert list(sampled.data[1].x) == [0.7, 0.3] and "0.5" in sampled.data[1].name
    same = fg.candidates(["ab", "ab"], [0.6, 0.4])  # two tokens with one label stay two bars
    assert list(same.data[0].y) == ["1. ab", "2. ab"]


@pytest.mark.parametrize("build", [
    lambda: fg.row_grid(rows(2, 4, 7), [str(i) for i in range(7)], selected=(1, 3))[0],
    lambda: fg.head_row(rows(1, 1, 7)[0, 0], [f"{i}:w" for i in range(7)], "6:w"),
    lambda: fg.candidates(["a", "b"], [0.7, 0.2], chosen=0, sampled=[0.8, 0.1],
                          temperature=0.5),
])
def test_every_figure_is_what_validated_plotly_builds(build, monkeypatch):
    fast = json.loads(pio.to_json(build(), validate=False))
    monkeypatch.setattr(base, "_VALIDATE", True)
    checked = json.loads(pio.to_json(build()))  # plotly.py refuses an invalid property
    assert _prune(fast) == _prune(checked)


def _prune(obj):
    """Without what plotly treats as unset: empty dicts and lists, bare trace defaults."""
    if isinstance(obj, dict):
        out = {k: _prune(v) for k, v in obj.items()}
        return {k: v for k, v in out.items() if v != {} and v != []}
    if isinstance(obj, list):
        items = [_prune(v) for v in obj]
        return [v for v in items if not (isinstance(v, dict) and set(v) == {"type"})]
    return obj
