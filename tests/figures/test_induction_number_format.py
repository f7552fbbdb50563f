"""The Induction page's residual-stream heatmap (attnviz.figures.induction.residual_figure)
writes its numbers in the house's one format for its kind of matrix (a sequential one:
attnviz.figures.heatmap's default, three significant digits), as every other sequential
heatmap does: it had passed its own ``digits=2`` ("1.2" where the other pages write "1.23").
"""

from __future__ import annotations

import numpy as np

from attnviz.figures import heatmap
from attnviz.figures.heatmap import Values, cell_text
from attnviz.figures.induction import residual_figure

NORMS = np.array([[1.234, 0.5678, 12.34], [0.0, 2.071, 9.876]])  # 2 and 3 digits differ
ROWS = ["embedding", "L0 H0"]
COLS = ["0:a", "1:b", "2:c"]


def test_residual_numbers_are_written_as_every_sequential_matrix_is():
    fig = residual_figure(NORMS, ROWS, COLS, x_title="position")
    house = heatmap(NORMS, COLS, ROWS, kind="sequential", x_title="position",
                    values=Values(zmin=0.0))
    np.testing.assert_array_equal(np.asarray(fig.data[0].text), np.asarray(house.data[0].text))
    assert fig.data[0].text[0][0] == "1.23"  # three significant digits, not "1.2"
    np.testing.assert_array_equal(np.asarray(fig.data[0].text), cell_text(NORMS, 3))


def test_residual_figure_is_the_sequential_kind_from_zero():
    trace = residual_figure(NORMS, ROWS, COLS, x_title="position").data[0]
    assert trace.zmin == 0.0 and trace.zmax == float(NORMS.max())
    assert list(trace.x) == COLS and list(trace.y) == ROWS
