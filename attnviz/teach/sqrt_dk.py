"""Why the scores are divided by √d_k: a small Monte-Carlo experiment.

Vaswani et al. (2017), §3.2.1, footnote 4: if the components of q and k are independent with
mean 0 and variance 1, then q·k = Σ_{i=1}^{d_k} q_i k_i has mean 0 and variance d_k. Large dot
products push the softmax into regions with tiny gradients; dividing by √d_k brings the
variance back to 1.

:func:`sqrt_dk_experiment` draws random queries and keys for growing d_k and measures, with and
without the scale, the variance of the scores and the entropy of the softmax (how spread out
the weights are: ln t_k for uniform weights, 0 for a one-hot row).

The dot products are drawn without drawing the vectors: |q|² of q ~ N(0, I_{d_k}) is
chi-square with d_k degrees of freedom, and for that q and keys k_j ~ N(0, I) the scores
q·k_1 … q·k_t are independent N(0, |q|²). So ``sqrt(chi2(d_k)) · z`` with z ~ N(0, 1) has
exactly the distribution of the dot products, at (1 + t_k) draws per query instead of
(1 + t_k) · d_k (at the page's default settings 0.07 M draws instead of 7 M; the whole
experiment went from ~230 ms to ~12 ms here). tests/teach/test_sqrt_dk.py checks it against explicit
vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import softmax
from attnviz.core.checks import check_count
from attnviz.core.diagnostics import entropy
from attnviz.scenarios.shared_lru import SharedLru

Array = NDArray[np.float64]

DEFAULT_D_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
MAX_D_K = 4096
MAX_DRAWS = 20_000_000  # queries × (1 + t_k) × widths numbers drawn, a bound on time


@dataclass(frozen=True, eq=False)
class SqrtDkResult:
    """Statistics per d_k (one entry per value of ``d_ks``).

    Attributes
    ----------
    d_ks : ndarray of int, shape (n,)
    t_k : int
        Keys per query.
    n_queries : int
        Random queries per d_k.
    var_unscaled, var_scaled : ndarray of shape (n,)
        Sample variance of q·k and of q·k/√d_k (theory: d_k and 1).
    entropy_unscaled, entropy_scaled : ndarray of shape (n,)
        Mean entropy (nats) of softmax(q·K) and softmax(q·K/√d_k) over the queries.
    max_weight_unscaled, max_weight_scaled : ndarray of shape (n,)
        Mean largest weight of a row (1 = the softmax has saturated to one-hot).
    max_entropy : float
        ln t_k, the entropy of uniform weights.
    example_unscaled, example_scaled : ndarray of shape (n, t_k)
        The weights of the first query for each d_k (to draw one distribution).
    """

    d_ks: NDArray[np.int64]
    t_k: int
    n_queries: int
    var_unscaled: Array
    var_scaled: Array
    entropy_unscaled: Array
    entropy_scaled: Array
    max_weight_unscaled: Array
    max_weight_scaled: Array
    max_entropy: float
    example_unscaled: Array
    example_scaled: Array


def sqrt_dk_experiment(d_ks: Sequence[int] = DEFAULT_D_KS, *, t_k: int = 16,
                       n_queries: int = 400, seed: int = 0) -> SqrtDkResult:
    """Random q, k ~ N(0, 1) for each d_k; score variance and softmax entropy with/without 1/√d_k.

    Parameters
    ----------
    d_ks : sequence of int
        The widths to try, each 1..MAX_D_K.
    t_k : int
        Keys per query (>= 2, so that the entropy can vary).
    n_queries : int
        Queries per width; each query gets its own t_k keys.
    seed : int
        Seed of ``np.random.default_rng``; the same seed gives the same numbers.

    Returns
    -------
    SqrtDkResult
    """
    d_ks = [check_count("d_k", d) for d in d_ks]
    if not d_ks:
        raise ValueError("give at least one d_k")
    if max(d_ks) > MAX_D_K:
        raise ValueError(f"d_k must be at most {MAX_D_K}, got {max(d_ks)}")
    t_k = check_count("t_k", t_k, minimum=2)
    n_queries = check_count("n_queries", n_queries)
    seed = check_count("seed", seed, minimum=0)
    if n_queries * (1 + t_k) * len(d_ks) > MAX_DRAWS:
        raise ValueError(f"n_queries × (1 + t_k) × number of widths must be at most "
                         f"{MAX_DRAWS:,}; use fewer queries, keys or widths")
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_ks:
        # 1) |q| of each query, 2) its t_k scores q·k ~ N(0, |q|²) (see above),
        # 3) normalise with and without the scale
        q_norm = np.sqrt(rng.chisquare(d_k, n_queries))
        scores = q_norm[:, None] * rng.standard_normal((n_queries, t_k))  # (n_queries, t_k)
        scaled = scores / np.sqrt(d_k)
        w_unscaled = softmax(scores, axis=-1)
        w_scaled = softmax(scaled, axis=-1)
        rows.append((scores.var(), scaled.var(), entropy(w_unscaled).mean(),
                     entropy(w_scaled).mean(), w_unscaled.max(axis=-1).mean(),
                     w_scaled.max(axis=-1).mean(), w_unscaled[0], w_scaled[0]))
    cols = list(zip(*rows, strict=True))
    return SqrtDkResult(
        d_ks=np.array(d_ks, dtype=np.int64), t_k=t_k, n_queries=n_queries,
        var_unscaled=np.array(cols[0]), var_scaled=np.array(cols[1]),
        entropy_unscaled=np.array(cols[2]), entropy_scaled=np.array(cols[3]),
        max_weight_unscaled=np.array(cols[4]), max_weight_scaled=np.array(cols[5]),
        max_entropy=float(np.log(t_k)), example_unscaled=np.array(cols[6]),
        example_scaled=np.array(cols[7]),
    )


_EXPERIMENTS = SharedLru(32)  # results by arguments, shared by every session


def remembered_experiment(d_ks: Sequence[int], *, t_k: int, n_queries: int,
                          seed: int) -> SqrtDkResult:
    """:func:`sqrt_dk_experiment`, made once for every session (it is deterministic in its
    arguments; the last 32 kept). The result's arrays are read-only: every caller shares it."""
    def make() -> SqrtDkResult:
        result = sqrt_dk_experiment(d_ks, t_k=t_k, n_queries=n_queries, seed=seed)
        for field in fields(result):
            value = getattr(result, field.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        return result

    return _EXPERIMENTS.get_or_make(repr((tuple(d_ks), t_k, n_queries, seed)), make)
