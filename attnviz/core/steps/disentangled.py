"""DeBERTa's disentangled attention as a step: the scores get a content-to-position term
(the query against the projected embedding of its distance to the key) and a
position-to-content term (the key against the projected embedding of the query's distance to
it), both from q and k themselves (He et al., 2021, "DeBERTa: Decoding-enhanced BERT with
Disentangled Attention", §3.1)::

    s̃_ij = s'_ij + c (q_i · K^r[δ_c(i, j)] + k_j · Q^r[δ_p(i, j)])

K^r and Q^r are the layer's relative position embeddings projected by its own key and query
projections (one table per head: a row per relative position); δ_c and δ_p index them for
every query i and key j (Hugging Face: the bucket of i − j, shifted by the attention span and
clamped, δ_p read from the key's side); c is the model's 1/√(d_k · (1 + number of terms)), the
scale of q·kᵀ too.

The terms are linear in q and k, so what they send back is
∂L/∂q_i += c Σ_j g_ij K^r[δ_c(i, j)] and ∂L/∂k_j += c Σ_i g_ij Q^r[δ_p(i, j)], g the
gradient at this step's output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core.score_mods import At, QKScoreMod, ScoreMod
from attnviz.core.steps.base import Array, HeadShape, ScoreStep, number, set_fields


@dataclass(frozen=True, eq=False)
class RelativeTerms(QKScoreMod):
    """s + c2p[h, i, j] + p2c[h, i, j], the two terms computed from q and k (scaled by c).

    Attributes
    ----------
    c2p, p2c : ndarray of shape (n_heads, t_q, t_k)
        c·q_i·K^r[δ_c(i, j)] and c·k_j·Q^r[δ_p(i, j)] (0 for a term the model has not).
    pos_key, pos_query : ndarray of shape (n_heads, r, d_k) or None
    c2p_index, p2c_index : ndarray of int, shape (t_q, t_k)
    scale : float
    """

    c2p: Array
    p2c: Array
    pos_key: Array | None
    pos_query: Array | None
    c2p_index: np.ndarray
    p2c_index: np.ndarray
    scale: float
    key: ClassVar[str] = "relative"
    title: ClassVar[str] = "Relative positions (c2p + p2c)"

    def forward(self, s: Array, at: At) -> Array:
        return s + (self.c2p[at.h, at.i, at.j] + self.p2c[at.h, at.i, at.j])

    def qk_backward(self, d_out: Array, at: At) -> tuple[Array, Array]:
        h = np.asarray(at.h)
        h = h.reshape(h.shape[:-2]) if h.ndim >= 2 else h  # (n,), (1,) or one head
        d_q = d_k = None
        if self.pos_key is not None:
            hits = self.c2p_index[..., None] == np.arange(self.pos_key.shape[1])  # (t_q, t_k, r)
            per_row = np.einsum("...ij,ijr->...ir", d_out, hits)  # (..., t_q, r)
            d_q = self.scale * per_row @ self.pos_key[h]  # (..., t_q, d_k)
        if self.pos_query is not None:
            hits = self.p2c_index[..., None] == np.arange(self.pos_query.shape[1])
            per_key = np.einsum("...ij,ijr->...jr", d_out, hits)  # (..., t_k, r)
            d_k = self.scale * per_key @ self.pos_query[h]  # (..., t_k, d_k)
        d = (self.pos_key if self.pos_key is not None else self.pos_query).shape[-1]
        lead = np.shape(d_out)[:-2]
        if d_q is None:
            d_q = np.zeros((*lead, np.shape(d_out)[-2], d))
        if d_k is None:
            d_k = np.zeros((*lead, np.shape(d_out)[-1], d))
        return d_q, d_k

    def written(self, current: str) -> tuple[str, str]:
        terms = []
        if self.pos_key is not None:
            terms.append(r"q_i \cdot K^r_{\delta_c(i,j)}")
        if self.pos_query is not None:
            terms.append(r"k_j \cdot Q^r_{\delta_p(i,j)}")
        added = " + ".join(terms) or "0"
        return (rf"s^{{r}}_{{ij}} = {current} + c\left({added}\right),\ c = {self.scale:.4g}",
                "s^{r}_{ij}")

    def written_matrix(self, current: str) -> str:
        return rf"{current} + c\,(C^{{c2p}} + C^{{p2c}})"

    def written_qk_backward(self) -> tuple[str, str]:
        d_q = (r",\quad dq_i \mathrel{+}= c \sum_j dS^{r}_{ij}\,K^r_{\delta_c(i,j)}"
               if self.pos_key is not None else "")
        d_k = (r",\quad dk_j \mathrel{+}= c \sum_i dS^{r}_{ij}\,Q^r_{\delta_p(i,j)}"
               if self.pos_query is not None else "")
        return d_q, d_k

    def traced(self, before: float, after: float, at: At, num: Callable[[float], str]) -> str:
        c2p = float(self.c2p[at.h, at.i, at.j])
        p2c = float(self.p2c[at.h, at.i, at.j])
        return (rf"{num(before)} + \underbrace{{{num(c2p)}}}_{{\text{{c2p}}}} + "
                rf"\underbrace{{{num(p2c)}}}_{{\text{{p2c}}}} = {num(after)}")


def _table3(name: str, value) -> tuple:
    """A table per head (rows, r, d) of finite numbers, or () for none."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return ()
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a table of numbers per head") from None
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a table of finite numbers per head: one row per "
                         f"relative position, one number per dimension of a head")
    return tuple(tuple(tuple(r) for r in m) for m in a.tolist())


def _index(name: str, value) -> tuple:
    """A (t_q, t_k) table of whole numbers >= 0, or () for none."""
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return ()
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a table of whole numbers") from None
    if a.ndim != 2 or not np.isfinite(a).all() or (a != np.round(a)).any() or (a < 0).any():
        raise ValueError(f"{name} must be a table of whole numbers >= 0, one per query and key")
    return tuple(tuple(int(v) for v in r) for r in a.tolist())


@dataclass(frozen=True, eq=False)
class Disentangled(ScoreStep):
    """DeBERTa's content-to-position and position-to-content terms added to the scaled scores.

    ``pos_key`` (K^r) and ``pos_query`` (Q^r): per head, the layer's relative position
    embeddings projected by its key and query projections, (rows, r, d_k), one table for every
    head or one per head, () for a term the model has not; ``c2p`` and ``p2c``: for every query
    i and key j, the row of K^r (of Q^r) the term reads; ``scale``: c.
    """

    pos_key: tuple = ()
    pos_query: tuple = ()
    c2p: tuple = ()
    p2c: tuple = ()
    scale: float = 1.0
    name: ClassVar[str] = "disentangled"
    title: ClassVar[str] = "Relative positions (c2p + p2c)"

    def __post_init__(self):
        set_fields(self, pos_key=_table3("the projected position keys K^r", self.pos_key),
                   pos_query=_table3("the projected position queries Q^r", self.pos_query),
                   c2p=_index("the content-to-position index", self.c2p),
                   p2c=_index("the position-to-content index", self.p2c),
                   scale=number("the scale c of the relative terms", self.scale, low=0.0,
                                high=1e6))
        for table, index, what in ((self.pos_key, self.c2p, "content-to-position"),
                                   (self.pos_query, self.p2c, "position-to-content")):
            if bool(table) != bool(index):
                raise ValueError(f"the {what} term needs both its projected positions and its "
                                 f"index, or neither")
        if not self.pos_key and not self.pos_query:
            raise ValueError("the relative position terms need the projected positions and "
                             "their index of the content-to-position term, of the "
                             "position-to-content term or of both (a real DeBERTa head holds "
                             "them)")

    def _side(self, table: tuple, index: tuple, shape: HeadShape, x: Array, what: str):
        """(K^r per head (n, r, d), the index (t_q, t_k), the term (n, t_q, t_k)) or Nones."""
        if not table:
            return None, np.zeros((1, 1), dtype=int), np.zeros((shape.n_heads, shape.t_q,
                                                                shape.t_k))
        a = np.asarray(table, dtype=float)
        idx = np.asarray(index, dtype=int)
        if a.shape[0] not in (1, shape.n_heads):
            raise ValueError(f"the {what} term holds {a.shape[0]} tables of projected "
                             f"positions, one per head; they do not fit {shape.n_heads} heads")
        if a.shape[2] != shape.d_k:
            raise ValueError(f"the {what} term's projected positions are {a.shape[2]} wide; "
                             f"they do not fit heads of width {shape.d_k}")
        if idx.shape != (shape.t_q, shape.t_k):
            raise ValueError(f"the {what} term holds relative positions for "
                             f"{idx.shape[0]} × {idx.shape[1]} queries and keys; this sequence "
                             f"has {shape.t_q} × {shape.t_k}")
        if idx.max() >= a.shape[1]:
            raise ValueError(f"the {what} index reads row {idx.max()} of {a.shape[1]} "
                             f"projected positions")
        a = np.broadcast_to(a, (shape.n_heads, *a.shape[1:]))
        with np.errstate(over="ignore", invalid="ignore"):
            full = x @ np.swapaxes(a, 1, 2)  # (n, t, r)
        return a, idx, full

    def mod(self, shape: HeadShape) -> ScoreMod:
        if shape.q is None or shape.k is None:
            raise ValueError("the relative position terms are computed from q and k, which a "
                             "run of several sequences at once does not give; run one head of "
                             "one sequence at a time")
        n = shape.n_heads
        pos_key, c2p_index, c2p_full = self._side(self.pos_key, self.c2p, shape, shape.q,
                                                  "content-to-position")
        pos_query, p2c_index, p2c_full = self._side(self.pos_query, self.p2c, shape, shape.k,
                                                    "position-to-content")
        c2p = p2c = np.zeros((n, shape.t_q, shape.t_k))
        with np.errstate(over="ignore", invalid="ignore"):
            if pos_key is not None:  # c2p[h, i, j] = c · (q_i · K^r[δ_c(i, j)])
                c2p = self.scale * np.take_along_axis(
                    c2p_full, np.broadcast_to(c2p_index, (n, shape.t_q, shape.t_k)), axis=2)
            if pos_query is not None:  # p2c[h, i, j] = c · (k_j · Q^r[δ_p(i, j)])
                p2c = self.scale * p2c_full[:, np.arange(shape.t_k)[None, :], p2c_index]
        return RelativeTerms(c2p, p2c, pos_key, pos_query, c2p_index, p2c_index, self.scale)

    def mod_for_writing(self) -> ScoreMod:
        zero = np.zeros((1, 1, 1))
        one = np.zeros((1, 1, 1))
        return RelativeTerms(zero, zero, one if self.pos_key else None,
                             one if self.pos_query else None, np.zeros((1, 1), dtype=int),
                             np.zeros((1, 1), dtype=int), self.scale)
