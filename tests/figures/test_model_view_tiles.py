"""The model view's thumbnail grid of cross-attention: (t_target, t_source) matrices tiled as
they are (each thumbnail as tall as the target, as wide as the source, cells square), the
click targets at their centres, the hover naming target queries and source keys."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.figures.model_view import model_grid
from attnviz.teach.text import model_view as text

T_TARGET, T_SOURCE, LAYERS, HEADS = 5, 7, 2, 3
TARGET = [f"{i}:t{i}" for i in range(T_TARGET)]
SOURCE = [f"{j}:s{j}" for j in range(T_SOURCE)]


@pytest.fixture
def cross() -> np.ndarray:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(LAYERS, HEADS, T_TARGET, T_SOURCE)) * 3
    w = np.exp(logits)
    return w / w.sum(axis=-1, keepdims=True)


def test_each_thumbnail_holds_its_heads_target_by_source_weights(cross):
    fig, picker = model_grid(cross, TARGET, causal=False, selected=(1, 2), key_labels=SOURCE)
    z = np.asarray(fig.data[0].z, dtype=float)
    gap = 1
    assert z.shape == (LAYERS * (T_TARGET + gap) - gap, HEADS * (T_SOURCE + gap) - gap)
    for layer in range(LAYERS):
        for h in range(HEADS):
            r, c = layer * (T_TARGET + gap), h * (T_SOURCE + gap)
            np.testing.assert_allclose(z[r:r + T_TARGET, c:c + T_SOURCE], cross[layer, h],
                                       atol=1e-7)  # float32 cells
    # the click target of tile (layer, head) is point layer · heads + head, at its centre
    points = fig.data[picker]
    assert len(points.x) == LAYERS * HEADS
    assert (points.x[5], points.y[5]) == (2 * (T_SOURCE + gap) + 3, 1 * (T_TARGET + gap) + 2)
    # the selected tile's outline spans 7 columns and 5 rows (plus half a gap each side)
    outline = fig.data[picker - 1]
    xs = [v for v in outline.x if v is not None]
    ys = [v for v in outline.y if v is not None]
    assert max(xs) - min(xs) == T_SOURCE + gap and max(ys) - min(ys) == T_TARGET + gap
    assert fig.layout.yaxis.scaleanchor == "x"  # square cells: a tile 7 wide is 5 tall


def test_a_thumbnails_hover_names_a_target_query_and_a_source_key(cross):
    w = cross[0, 1].copy()
    w[4] = 0.0
    w[4, 6] = 1.0  # target 4 looks at source 6 only: the strongest link
    cross[0, 1] = w
    fig, picker = model_grid(cross, TARGET, causal=False, key_labels=SOURCE)
    hover = fig.data[picker].hovertext[1]
    received = w.sum(axis=0) / T_TARGET
    top = int(received.argmax())
    assert hover == text.TILE_HOVER.format(layer=0, h=1, query="4:t4", key="6:s6",
                                           weight="1.000", top=SOURCE[top],
                                           mean=f"{received[top]:.3f}")
