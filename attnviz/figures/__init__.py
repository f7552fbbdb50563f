"""Every Plotly figure of attnviz. Builders take arrays and labels and return ``go.Figure``.

``heatmap`` is the one matrix builder all pages use; the other modules add line charts and the
line (head) view. Nothing here imports Streamlit.
"""

from attnviz.figures.heatmap import (
    CELL_TEXT_LIMIT,
    Sizing,
    Values,
    heatmap,
    mask_figure,
    matrix_kind,
)

__all__ = ["CELL_TEXT_LIMIT", "Sizing", "Values", "heatmap", "mask_figure", "matrix_kind"]
