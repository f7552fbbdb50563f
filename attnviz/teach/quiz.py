"""Predict, then reveal: score a student's guess of where each query looks.

The student predicts, for every query row, the key that gets the most weight. A prediction is
right when its weight equals the row's maximum to within ``tol`` (so any of several tied keys
counts). A fully masked query (all weights 0) has no answer and is not scored. Besides the
count of right answers the score reports the weight captured: Σ_i α_{i, guess_i} / Σ_i max_j
α_ij, which gives partial credit for a near miss.

:func:`practice_question` makes small random questions (integer q and k) with a unique answer
per row, from ``np.random.default_rng``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.core.attention import AttentionResult, scaled_dot_product_attention
from attnviz.core.checks import as_array, check_count

TIE_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class QuizScore:
    """The result of scoring one set of predictions.

    Attributes
    ----------
    correct : ndarray of bool, shape (t_q,)
        False for unanswered and unscored rows.
    scored : ndarray of bool, shape (t_q,)
        False for fully masked rows (nothing to predict).
    answers : tuple of tuple of int
        For every row the keys with the maximum weight (empty for a fully masked row).
    predicted_weight : ndarray of shape (t_q,)
        The weight of the predicted key (0 when unanswered).
    n_correct, n_scored : int
    captured : float
        Σ predicted weight / Σ max weight over the scored rows, in [0, 1].
    """

    correct: NDArray[np.bool_]
    scored: NDArray[np.bool_]
    answers: tuple[tuple[int, ...], ...]
    predicted_weight: NDArray[np.float64]
    n_correct: int
    n_scored: int
    captured: float

    @property
    def fraction(self) -> float:
        """Share of scored rows predicted right (1.0 when nothing is scored)."""
        return self.n_correct / self.n_scored if self.n_scored else 1.0


def answers(weights: ArrayLike, *, tol: float = TIE_TOL) -> tuple[tuple[int, ...], ...]:
    """For each row, the keys whose weight is the row maximum (within ``tol``)."""
    w = as_array("weights", weights, 2)
    out = []
    for row in w:
        top = float(row.max())
        out.append(() if top <= 0 else tuple(int(j) for j in np.flatnonzero(row >= top - tol)))
    return tuple(out)


def score_predictions(weights: ArrayLike, predictions: Sequence[int | None], *,
                      tol: float = TIE_TOL) -> QuizScore:
    """Score one predicted key per query row.

    Parameters
    ----------
    weights : array_like of shape (t_q, t_k)
    predictions : sequence of int or None, length t_q
        The predicted key index for each query; None = not answered (counts as wrong).
    tol : float
        Weights within ``tol`` of the row maximum count as the maximum (ties).

    Returns
    -------
    QuizScore
    """
    w = as_array("weights", weights, 2)
    t_q, t_k = w.shape
    if len(predictions) != t_q:
        raise ValueError(f"give one prediction per query: {t_q} queries, got "
                         f"{len(predictions)} predictions")
    for p in predictions:
        if p is not None and not 0 <= int(p) < t_k:
            raise ValueError(f"a predicted key must be between 0 and {t_k - 1}, got {p}")
    best = answers(w, tol=tol)
    scored = np.array([bool(a) for a in best])
    picked = np.array([0.0 if p is None else float(w[i, int(p)])
                       for i, p in enumerate(predictions)])
    correct = np.array([s and p is not None and int(p) in a
                        for s, p, a in zip(scored, predictions, best, strict=True)], dtype=bool)
    top = w.max(axis=1)
    total = float(top[scored].sum())
    captured = float(picked[scored].sum()) / total if total > 0 else 1.0
    return QuizScore(correct=correct, scored=scored, answers=best, predicted_weight=picked,
                     n_correct=int(correct.sum()), n_scored=int(scored.sum()),
                     captured=captured)


@dataclass(frozen=True, eq=False)
class PracticeQuestion:
    """A random quiz question: small integer queries and keys, scaled dot-product attention.

    Attributes
    ----------
    q : ndarray of shape (t, d_k)
    k : ndarray of shape (t, d_k)
    result : AttentionResult
        Computed with v = I (so the output row is the weights row).
    """

    q: NDArray[np.float64]
    k: NDArray[np.float64]
    result: AttentionResult


def practice_question(seed: int, *, t: int = 4, d_k: int = 2, low: int = -2,
                      high: int = 2) -> PracticeQuestion:
    """Integer q and k in [low, high] whose every query row has a unique most-attended key.

    Draws again (same generator) until every row's maximum score is unique, so there is exactly
    one right answer per row.
    """
    t = check_count("t", t, minimum=2)
    d_k = check_count("d_k", d_k)
    rng = np.random.default_rng(check_count("seed", seed, minimum=0))
    for _ in range(1000):
        q = rng.integers(low, high + 1, size=(t, d_k)).astype(np.float64)
        k = rng.integers(low, high + 1, size=(t, d_k)).astype(np.float64)
        scores = q @ k.T
        if all(np.sum(row == row.max()) == 1 for row in scores):
            break
    result = scaled_dot_product_attention(q, k, np.eye(t))
    return PracticeQuestion(q, k, result)
