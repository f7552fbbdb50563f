"""A diagnostics panel to put beside (or under) any weights heatmap.

``diagnostics_panel(weights, q_labels, k_labels, key=...)`` shows, per query row (and per head
for a stack of heads), the entropy, the effective number of attended tokens, the largest weight
and its key, and the row-sum check, computed by :func:`attnviz.core.diagnostics.row_diagnostics`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import ArrayLike

from attnviz.core.diagnostics import RowDiagnostics, row_diagnostics
from attnviz.teach.text import common as text

C = text.DIAGNOSTICS_COLUMNS


def diagnostics_frame(diag: RowDiagnostics, q_labels: Sequence[str],
                      k_labels: Sequence[str]) -> pd.DataFrame:
    """One row per query (per head and query for a stack of heads)."""
    stacked = diag.entropy.ndim == 2  # (n_heads, t_q)
    fields = ("entropy", "effective", "max_weight", "argmax", "row_sum", "row_sum_ok")
    rows = {name: np.atleast_2d(getattr(diag, name)) for name in fields}  # (n_heads, t_q) each
    frames = []
    for h in range(rows["entropy"].shape[0]):
        frame = pd.DataFrame({
            C["entropy"]: rows["entropy"][h],
            C["effective"]: rows["effective"][h],
            C["max_weight"]: rows["max_weight"][h],
            C["argmax"]: [text.NO_VALUE if j < 0 else k_labels[j] for j in rows["argmax"][h]],
            C["row_sum"]: rows["row_sum"][h],
            C["ok"]: rows["row_sum_ok"][h],
        }, index=pd.Index(list(q_labels), name=text.AXIS_QUERY))
        if stacked:
            frame.insert(0, text.DIAGNOSTICS_HEAD, h)
        frames.append(frame)
    return pd.concat(frames) if len(frames) > 1 else frames[0]


def panel_key(key: str) -> str:
    """The key of the expander around the diagnostics table ``key``."""
    return f"{key}_panel"


def diagnostics_panel(weights: ArrayLike, q_labels: Sequence[str], k_labels: Sequence[str], *,
                      key: str, expanded: bool = False) -> RowDiagnostics | None:
    """Entropy, effective tokens, max weight, argmax and row sums of every query row.

    Parameters
    ----------
    weights : array_like of shape (t_q, t_k) or (n_heads, t_q, t_k)
    q_labels, k_labels : sequence of str
        Row and column labels (user text: shown only inside the dataframe).
    key : str
        Page-prefixed key of the dataframe; the expander's key is ``panel_key(key)``.
    expanded : bool
        Open the expander at first.

    Returns
    -------
    RowDiagnostics or None
        None while the expander is closed (lazy: nothing is computed or sent then), or (with a
        message) when the weights are not valid attention weights.
    """
    panel = st.expander(text.DIAGNOSTICS_TITLE, expanded=expanded, key=panel_key(key),
                        on_change="rerun")
    if not panel.open:
        return None
    with panel:
        try:
            diag = row_diagnostics(weights)
        except ValueError as exc:
            st.warning(text.DIAGNOSTICS_INVALID.format(reason=exc))
            return None
        st.latex(text.DIAGNOSTICS_FORMULA)
        st.caption(text.DIAGNOSTICS_INTRO)
        frame = diagnostics_frame(diag, q_labels, k_labels)
        number = st.column_config.NumberColumn
        st.dataframe(frame, key=key, width="stretch", column_config={
            C["entropy"]: number(format="%.4f",
                                 help=text.DIAGNOSTICS_ENTROPY_HELP.format(
                                     max_entropy=diag.max_entropy)),
            C["effective"]: number(format="%.3f"),
            C["max_weight"]: number(format="%.4f"),
            C["row_sum"]: number(format="%.12f"),
        })
        if diag.all_rows_ok:
            st.caption(text.DIAGNOSTICS_ALL_OK)
        else:
            st.warning(text.DIAGNOSTICS_NOT_OK)
        return diag
