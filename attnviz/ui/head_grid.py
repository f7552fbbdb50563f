"""A grid of heads, shared by the pages that draw one thumbnail per head (Multi-head, the
Playground's lecture view, Your attention, Modern): the grid's containers, the room row labels
take, the pooling of long sequences to thumbnail size, and the words for a grid's shared colour
scale."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attnviz.core.downsample import block_factor, block_labels, downsample
from attnviz.scenarios import limits
from attnviz.teach.text import common
from attnviz.teach.text import multi_head as text
from attnviz.ui import state


def grid(n: int, per_row: int = 4, *, first_extra: float = 0.0) -> Iterator:
    """n containers laid out in rows of ``per_row`` columns (the last row left-aligned).

    ``first_extra`` widens the first column of each row by that fraction of a column (room for
    row labels that only the first figure of a row shows), so that every plot area has the same
    width.
    """
    for start in range(0, n, per_row):
        cols = st.columns([1.0 + first_extra] + [1.0] * (per_row - 1))
        yield from cols[: min(per_row, n - start)]


def label_room(labels: list[str], per_row: int, page_px: int = 1060) -> float:
    """The fraction of a grid column that row labels of this length take (a rough estimate)."""
    label_px = 7.5 * max((len(s) for s in labels), default=0) + 14
    return label_px / (page_px / per_row)


@dataclass(frozen=True)
class PooledHeads:
    """How every head's weights are drawn as thumbnails: pooled to ``size`` blocks a side
    (:func:`attnviz.core.downsample.downsample`) when a sequence is longer than that."""

    q_labels: list[str]  # the rows' labels (blocks' positions when pooled)
    k_labels: list[str]  # the columns' labels
    factor: int  # tokens per block (1 = not pooled)
    size: int  # the most cells a side

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        """One head's weights as drawn: pooled, rows still summing to 1."""
        return downsample(weights, self.size)


def pooled_heads(q_labels: list[str], k_labels: list[str], exact: str,
                 size: int = limits.THUMBNAIL_T) -> PooledHeads:
    """The pooling of every head's thumbnail, with the caption that says so (followed by
    ``exact``: where the exact weights are) when the sequence is pooled."""
    factor = max(block_factor(len(q_labels), size), block_factor(len(k_labels), size))
    pooled = PooledHeads(block_labels(q_labels, size), block_labels(k_labels, size), factor,
                         size)
    if factor > 1:
        st.caption(common.HEADS_POOLED.format(t=len(q_labels), shown=len(pooled.q_labels),
                                              f=factor) + exact)
    return pooled


def scale_words() -> str:
    """What the weights' colours mean, for a grid of heads drawn without colour bars."""
    return text.WEIGHTS_SCALE_PROJECTOR if state.projector() else text.WEIGHTS_SCALE


