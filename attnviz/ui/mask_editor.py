"""An editable boolean grid for a custom attention mask (``st.data_editor`` with checkboxes).

Same base-snapshot pattern as :mod:`attnviz.ui.editors`: the editor is never fed its own output
(streamlit #7749); it keeps the mask it started from in session state and Streamlit applies the
user's ticks on top. A new editor generation or a dropped widget (after a page switch) starts
again from the scenario's mask, which holds every edit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from attnviz.teach.text import common as text
from attnviz.ui import state


def mask_frame(mask: NDArray[np.bool_], row_labels: Sequence[str],
               col_labels: Sequence[str]) -> pd.DataFrame:
    """A bool DataFrame: rows = queries, columns = keys."""
    return pd.DataFrame(np.asarray(mask, dtype=bool), index=list(row_labels),
                        columns=list(col_labels))


def mask_editor(mask: NDArray[np.bool_], *, key: str, row_labels: Sequence[str],
                col_labels: Sequence[str]) -> NDArray[np.bool_]:
    """Show the mask as a grid of checkboxes (ticked = may attend) and return the edited mask.

    Parameters
    ----------
    mask : ndarray of bool, shape (t_q, t_k)
        The current custom mask (from the scenario).
    key : str
        Page-prefixed widget key; the editor generation is appended.
    row_labels, col_labels : sequence of str
        Unique query and key labels (position labels).

    Returns
    -------
    ndarray of bool, shape (t_q, t_k)
        Equal to ``mask`` when nothing was edited. A cell Streamlit reports empty keeps its
        previous value.
    """
    mask = np.asarray(mask, dtype=bool)
    widget_key = f"{key}_v{state.editor_version()}"
    base_key = state.base_key(widget_key)
    stored = st.session_state.get(base_key)
    if widget_key not in st.session_state or stored is None or stored.shape != mask.shape:
        st.session_state[base_key] = mask.copy()  # new or dropped widget: start from scenario
    base = st.session_state[base_key]
    edited = st.data_editor(
        mask_frame(base, row_labels, col_labels), key=widget_key, num_rows="fixed",
        width="stretch",
        column_config={c: st.column_config.CheckboxColumn(c, default=True) for c in col_labels},
    )
    values = pd.DataFrame(edited).to_numpy(dtype=object)
    if values.shape != mask.shape:
        st.error(text.MASK_EDITOR_BAD_SHAPE.format(rows=mask.shape[0], cols=mask.shape[1]))
        return mask
    empty = pd.isna(values)
    return np.where(empty, mask, values).astype(bool)
