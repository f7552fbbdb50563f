"""One query's arithmetic, step by step, for the Step by step page (no Streamlit here).

Every number comes from the core's result (scores, scaled, masked, weights, output); only the
softmax's inner steps (the row maximum, exp(s − max) and the row sum) are recomputed, exactly
as :func:`attnviz.core.attention.softmax` does, so that the page can show them. The tests check that
exp / sum equals the core's weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import AttentionResult

Array = NDArray[np.float64]

WRITTEN_TERMS = 8  # write every term of a dot product up to this width, else the first few
SUM_LABEL = "Σ = output"


def fmt(x: float, digits: int = 4) -> str:
    """A number for written-out arithmetic: 4 significant digits, "−∞" for −inf."""
    if np.isneginf(x):
        return "−∞"
    text = f"{float(x):.{digits}g}"
    return "0" if text in ("-0", "0") else text.replace("-", "−")


def table_number(x: float) -> str:
    """A number as a step table's number columns show it (``%.6g``), "−∞" for −inf."""
    return "−∞" if np.isneginf(x) else "∞" if np.isposinf(x) else f"{float(x):.6g}"


def _factor(x: float) -> str:
    """A factor in a product: negative numbers in parentheses, ``1×(−2)``."""
    text = fmt(x)
    return f"({text})" if text.startswith("−") else text


def written_dot(a: Array, b: Array, name: str, value: float) -> str:
    """``"q_0·k_2 = 1×2 + 0×1 + 0×2 = 2"``: a dot product with its terms written out.

    ``value`` is the core's result (shown after the last "="); long vectors show the first
    terms and "…".
    """
    n = a.shape[0]
    shown = n if n <= WRITTEN_TERMS else WRITTEN_TERMS // 2
    terms = " + ".join(f"{_factor(x)}×{_factor(y)}" for x, y in zip(a[:shown], b[:shown],
                                                                   strict=True))
    if shown < n:
        terms += f" + … ({n} terms)"
    return f"{name} = {terms} = {fmt(value)}"


@dataclass(frozen=True)
class SoftmaxSteps:
    """The softmax of one row, written out.

    Attributes
    ----------
    masked : ndarray of shape (t_k,)
        The core's masked scores (−inf where forbidden).
    row_max : float or None
        m = max of the row; None when every entry is −inf (a fully masked row).
    shifted : ndarray of shape (t_k,)
        masked − m (−inf stays −inf).
    exp : ndarray of shape (t_k,)
        exp(masked − m); 0 where masked.
    total : float
        The row sum Σ exp(masked − m); 0 for a fully masked row.
    weights : ndarray of shape (t_k,)
        The core's weights (exp / total, or zeros for a fully masked row).
    """

    masked: Array
    row_max: float | None
    shifted: Array
    exp: Array
    total: float
    weights: Array


def softmax_steps(masked: Array, weights: Array) -> SoftmaxSteps:
    """The inner steps of :func:`attnviz.core.attention.softmax` for one row."""
    masked = np.asarray(masked, dtype=float)
    top = float(np.max(masked))
    row_max = top if np.isfinite(top) else None
    with np.errstate(over="ignore"):
        shifted = masked - (row_max or 0.0)
    e = np.exp(shifted)
    return SoftmaxSteps(masked, row_max, shifted, e, float(e.sum()), np.asarray(weights))


@dataclass(frozen=True)
class QuerySteps:
    """Everything the page shows for query ``i`` of a dot-product attention result.

    Attributes
    ----------
    i : int
    q : ndarray of shape (d_k,)
    k : ndarray of shape (t_k, d_k)
    v : ndarray of shape (t_k, d_v)
    scores : ndarray of shape (t_k,)
        q_i · k_j (the core's).
    times_scale : ndarray of shape (t_k,)
        scores × scale (shown between the two factors; the core multiplies once by
        scale / temperature).
    scaled : ndarray of shape (t_k,)
        The core's scaled scores (× scale ÷ temperature).
    mask : ndarray of bool, shape (t_k,)
    softmax : SoftmaxSteps
    terms : ndarray of shape (t_k, d_v)
        α_ij · v_j, one row per key.
    output : ndarray of shape (d_v,)
        The core's output row (the sum of ``terms``).
    scale, temperature : float
    """

    i: int
    q: Array
    k: Array
    v: Array
    scores: Array
    times_scale: Array
    scaled: Array
    mask: NDArray[np.bool_]
    softmax: SoftmaxSteps
    terms: Array
    output: Array
    scale: float
    temperature: float

    @property
    def fully_masked(self) -> bool:
        """True when query i may attend to no key."""
        return not bool(self.mask.any())


def query_steps(att: AttentionResult, i: int) -> QuerySteps:
    """Row ``i`` of a (single-head) dot-product attention result, with the softmax written out."""
    weights = att.weights[i]
    return QuerySteps(
        i=i, q=att.q[i], k=att.k, v=att.v, scores=att.scores[i],
        times_scale=att.scores[i] * att.scale, scaled=att.scaled[i], mask=att.mask[i],
        softmax=softmax_steps(att.masked[i], weights),
        terms=weights[:, None] * att.v,  # (t_k, d_v)
        output=att.output[i], scale=att.scale, temperature=att.temperature,
    )


def dot_lines(steps: QuerySteps) -> list[str]:
    """One written-out dot product per key: ``q_i·k_j = ... = s_ij``."""
    i = steps.i
    return [written_dot(steps.q, steps.k[j], f"q_{i}·k_{j}", steps.scores[j])
            for j in range(steps.k.shape[0])]


def steps_frame(steps: QuerySteps, k_labels: list[str]) -> pd.DataFrame:
    """One row per key, one column per step, from the raw score to the weight."""
    sm = steps.softmax
    return pd.DataFrame({
        "q·k": steps.scores,
        "× scale": steps.times_scale,
        "÷ τ": steps.scaled,
        "may attend": steps.mask,
        "masked": sm.masked,
        "− max": sm.shifted,
        "exp": sm.exp,
        "α = exp / sum": sm.weights,
    }, index=pd.Index(k_labels, name="key"))


def sum_frame(terms: Array, output: Array, weights: Array,
              k_labels: list[str]) -> pd.DataFrame:
    """α_ij and α_ij · v_j per key, with a last row holding Σ_j (the output)."""
    cols = [f"α·v[{m}]" for m in range(terms.shape[1])]
    body = pd.DataFrame(terms, index=k_labels, columns=cols)
    body.insert(0, "α", weights)
    total = pd.DataFrame([output], index=[SUM_LABEL], columns=cols)
    total.insert(0, "α", float(np.sum(weights)))
    frame = pd.concat([body, total])
    frame.index.name = "key"
    return frame


def value_frame(v: Array, k_labels: list[str], name: str = "v") -> pd.DataFrame:
    """Vectors per key (the values v_j by default), one row per key."""
    return pd.DataFrame(v, index=pd.Index(k_labels, name="key"),
                        columns=[f"{name}[{m}]" for m in range(v.shape[1])])


def vector_frame(vec: Array, label: str, prefix: str) -> pd.DataFrame:
    """A single vector as a one-row table (columns ``prefix0, prefix1, ...``)."""
    return pd.DataFrame([vec], index=[label], columns=[f"{prefix}[{m}]" for m in
                                                       range(vec.shape[0])])


@dataclass(frozen=True)
class AdditiveSteps:
    """Everything the page shows for query ``i`` of additive (Bahdanau) attention.

    Attributes
    ----------
    x_q : ndarray of shape (d_model,)
        The query token's embedding (with PE when on).
    a : ndarray of shape (d_a,)
        x_q · W_q.
    b : ndarray of shape (t_k, d_a)
        k_j · W_k for every key.
    features : ndarray of shape (t_k, d_a)
        The core's tanh(a + b_j).
    v_a : ndarray of shape (d_a,)
    scores : ndarray of shape (t_k,)
        The core's e_ij = v_a · features_j.
    mask : ndarray of bool, shape (t_k,)
    softmax : SoftmaxSteps
    values : ndarray of shape (t_k, d_v)
    terms : ndarray of shape (t_k, d_v)
    output : ndarray of shape (d_v,)
        The core's context vector.
    """

    i: int
    x_q: Array
    a: Array
    b: Array
    features: Array
    v_a: Array
    scores: Array
    mask: NDArray[np.bool_]
    softmax: SoftmaxSteps
    values: Array
    terms: Array
    output: Array

    @property
    def fully_masked(self) -> bool:
        """True when query i may attend to no key."""
        return not bool(self.mask.any())


def additive_steps(att: AdditiveResult, i: int, x: Array, keys: Array, w_q: Array,
                   w_k: Array, v_a: Array) -> AdditiveSteps:
    """Row ``i`` of an additive-attention result (keys double as values, as in the scenario)."""
    weights = att.weights[i]
    return AdditiveSteps(
        i=i, x_q=x[i], a=x[i] @ w_q, b=keys @ w_k, features=att.features[i],
        v_a=np.asarray(v_a, dtype=float), scores=att.scores[i], mask=att.mask[i],
        softmax=softmax_steps(att.masked[i], weights), values=keys,
        terms=weights[:, None] * keys, output=att.output[i],
    )


def additive_lines(steps: AdditiveSteps) -> list[str]:
    """One written-out score per key: ``e_i,j = v_a·f_ij = ... = e_ij``."""
    i = steps.i
    return [written_dot(steps.v_a, steps.features[j], f"e_{i},{j} = v_a·f_{i},{j}",
                        steps.scores[j]) for j in range(steps.features.shape[0])]


def additive_frame(steps: AdditiveSteps, k_labels: list[str]) -> pd.DataFrame:
    """One row per key: the score, the mask and the softmax steps."""
    sm = steps.softmax
    return pd.DataFrame({
        "e = v_a·f": steps.scores,
        "may attend": steps.mask,
        "masked": sm.masked,
        "− max": sm.shifted,
        "exp": sm.exp,
        "α = exp / sum": sm.weights,
    }, index=pd.Index(k_labels, name="key"))
