"""The Induction page's replay figure (attnviz.figures.induction.formation_figure): every head's
pattern in one heatmap with square cells, sized so that the whole figure fits a 1024 × 768
screen under the page's title (2 layers × 2 heads, and still 3 × 4), labels thinned to what
fits with the hover naming every cell, and the replay pieces shared with Learn's figure
(attnviz.figures.training).
"""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from attnviz.figures import base as base_module
from attnviz.figures import training
from attnviz.figures.induction import formation_figure, grid_layout

WORDS = dict(loss_title="training loss", step_title="step", step_prefix="step ", play="Play",
             pause="Pause", query_title="query", key_title="key")
FIT_PX = 620  # 768 minus the page above the figure at 1024 × 768 (title and intro: ~150 px)


def build(n_layers=2, n_heads=2, t=24, n_frames=3, **kwargs):
    rng = np.random.default_rng(n_layers * 10 + n_heads)
    weights = rng.dirichlet(np.ones(t), size=(n_frames, n_layers, n_heads, t))
    losses = np.linspace(3.0, 1.0, 60)
    titles = [[f"L{layer} H{head}" for head in range(n_heads)] for layer in range(n_layers)]
    labels = [f"{i}:t{i % 16}" for i in range(t)]
    fig, frames = formation_figure(losses, np.linspace(0, 60, n_frames).astype(int), weights,
                                   labels, titles, phase=(30, 20, 40), **WORDS, **kwargs)
    return fig, frames, weights


def cut(z, layout, n_layers, n_heads, t):
    """The patterns where the axes' position labels say they are."""
    cols = np.reshape(layout.xaxis2.tickvals, (n_heads, t))
    rows = np.reshape(layout.yaxis2.tickvals, (n_layers, t))
    z = np.asarray(z, dtype=float)
    return np.array([[z[np.ix_(r, c)] for c in cols] for r in rows])


@pytest.mark.parametrize("n_layers, n_heads", [(2, 2), (3, 4), (1, 1), (3, 1), (1, 4)])
def test_every_pattern_is_where_its_labels_say_and_the_figure_fits_one_screen(n_layers,
                                                                               n_heads):
    fig, frames, weights = build(n_layers, n_heads)
    z = fig.data[1].z
    np.testing.assert_allclose(cut(z, fig.layout, n_layers, n_heads, 24), weights[-1],
                               atol=1e-7)
    np.testing.assert_allclose(cut(frames[0]["data"][0]["z"], fig.layout, n_layers, n_heads,
                                   24), weights[0], atol=1e-7)
    assert np.isnan(np.asarray(z, dtype=float)).sum() == np.size(z) - weights[0].size
    assert fig.layout.height <= FIT_PX, fig.layout.height
    assert fig.layout.xaxis2.scaleanchor == "y2"  # square cells
    grid = grid_layout(n_layers, n_heads, 24)
    assert grid.cell_px * grid.rows <= 365 + 1e-9 and grid.cell_px * grid.cols <= 470 + 1e-9
    # it takes all the room one way (4 heads fill the width, 3 layers the height)
    assert max(grid.cell_px * grid.rows / 365, grid.cell_px * grid.cols / 470) == \
        pytest.approx(1)
    assert grid.cell_px >= (6 if (n_layers, n_heads) == (2, 2) else 3.5)  # 3 × 4: 3.8 px


def test_labels_are_thinned_to_what_fits_and_the_hover_names_every_cell():
    fig, _, _ = build()
    grid = grid_layout(2, 2, 24)
    shown = fig.layout.xaxis2.ticktext[:24]
    every = next(i for i, s in enumerate(shown[1:], 1) if s)
    assert every * grid.cell_px >= 9 * 1.3 > (every - 1) * grid.cell_px  # 9 px type
    assert [s for s in shown if s] == [f"{i}:t{i % 16}" for i in range(0, 24, every)]
    hover = np.asarray(fig.data[1].text, dtype=object)
    rows = np.reshape(fig.layout.yaxis2.tickvals, (2, 24))
    cols = np.reshape(fig.layout.xaxis2.tickvals, (2, 24))
    assert hover[rows[1, 5], cols[0, 3]] == "L1 H0<br>query 5:t5 → key 3:t3"
    assert fig.data[1].hoverongaps is False
    bigger, _, _ = build(label_px=16)  # presenter mode's type: fewer labels
    assert sum(map(bool, bigger.layout.xaxis2.ticktext[:24])) < sum(map(bool, shown))


def test_a_title_too_wide_for_its_pattern_goes_on_two_lines():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(24), size=(2, 3, 4, 24))
    titles = [[f"L{layer} H{head}" for head in range(4)] for layer in range(3)]
    titles[0][1] = "L0 H1 · previous-token"
    fig, _ = formation_figure(np.ones(10), [0, 10], weights, [str(i) for i in range(24)],
                              titles, phase=None, **WORDS)
    texts = [a.text for a in fig.layout.annotations]
    assert "<b>L0 H1<br>previous-token</b>" in texts and "<b>L2 H3</b>" in texts
    assert grid_layout(3, 4, 24, title_lines=2).title_rows > grid_layout(3, 4, 24).title_rows
    fig2, _, _ = build()  # two heads: "L0 H1" fits one line
    assert all("<br>" not in a.text for a in fig2.layout.annotations)


def test_beside_puts_the_loss_left_of_a_taller_grid():
    stacked, _, _ = build()
    beside, _, _ = build(beside=True, grid_px=440, label_px=16)
    assert beside.layout.xaxis.domain[1] < beside.layout.xaxis2.domain[0]
    assert stacked.layout.xaxis.domain == (0, 1)
    assert beside.layout.yaxis2.domain[1] == 1  # the grid starts at the top
    assert stacked.layout.yaxis2.domain[1] < stacked.layout.yaxis.domain[0]
    assert beside.layout.sliders[0].len == beside.layout.xaxis.domain[1]
    assert grid_layout(2, 2, 24, height_px=440).cell_px > grid_layout(2, 2, 24).cell_px
    assert beside.layout.height <= FIT_PX


def test_the_slider_steps_the_grid_and_the_marker_on_the_loss():
    fig, frames, _ = build(n_frames=4)
    assert [f["name"] for f in frames] == ["0", "20", "40", "60"]
    assert all(f["traces"] == [1, 2] for f in frames)  # the grid, the marker
    assert frames[0]["data"][1]["x"] == [0] and frames[-1]["data"][1]["x"] == [60]
    slider = fig.layout.sliders[0]
    assert slider.active == 3 and slider.currentvalue.prefix == "step "
    assert slider.currentvalue.font.color == "#444444"  # shown, while the step labels are not
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["Play", "Pause"]
    assert fig.layout.xaxis.range == (0, 60)  # the loss's steps line up with the slider
    assert fig.data[0].y[0] == 3.0 and fig.layout.yaxis.type == "log"


def test_the_figure_is_valid_plotly():
    """Built without plotly.py's validation (the fast path), it equals the validated one."""
    fast, _, _ = build(3, 4, beside=True)
    validated = None
    try:
        base_module._VALIDATE = True
        validated, _, _ = build(3, 4, beside=True)
    finally:
        base_module._VALIDATE = False
    a = json.loads(pio.to_json(fast, validate=False))
    b = json.loads(pio.to_json(validated))
    for d in (a, b):
        d["layout"].pop("template", None)
    assert a["layout"] == b["layout"]
    assert len(a["data"]) == len(b["data"]) == 3


def test_learn_and_induction_share_the_replay_pieces():
    """One marker, one frame list, one slider and Play: Learn's figure is built by the same
    function (attnviz.figures.training.replay_figure)."""
    losses = np.linspace(2.0, 1.0, 11)
    stack = np.random.default_rng(1).random((3, 2, 2))
    fig, frames = training.training_figure(losses, [0, 5, 10], {"w": (stack, ["a", "b"],
                                                                        ["c", "d"], True)},
                                           **{k: WORDS[k] for k in ("loss_title", "step_title",
                                                                    "step_prefix", "play",
                                                                    "pause")})
    assert [f["traces"] for f in frames] == [[1, 2]] * 3
    assert fig.data[2].marker.color == training.MARKER_COLOUR
    assert fig.layout.sliders[0].currentvalue.prefix == "step "
    assert frames[1]["data"][1] == dict(x=[5], y=[losses[5]])
