"""Circuits in any model: which heads are previous-token, induction, duplicate-token and
first-token (sink) heads, read from their attention on a stack of (n_layers, n_heads, t, t).

Olsson et al. (2022), "In-context Learning and Induction Heads"
(https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html);
Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits"; Xiao et al. (2023),
"Efficient Streaming Language Models with Attention Sinks".

The probe is Olsson et al.'s: random tokens repeated (:func:`repeated_tokens`), where only
in-context copying can predict the second copy and every score below names its keys exactly.
Each score is a head's mean attention on the keys its mechanism names, over the queries that
have such keys (1 = all of the head's attention there):

* previous-token: from position i >= 1 to i − 1;
* induction (prefix-matching): from a token that occurred before to the position right *after*
  each earlier occurrence (:func:`prefix_targets`);
* duplicate-token: from a token that occurred before to its earlier occurrences
  (:func:`duplicate_targets`);
* first-token (an attention sink): from every position i >= 1 to position 0 (the first token
  is a sink in most trained models, whatever it is);
* copying (where the model has an unembedding): Σλ / Σ|λ| over the eigenvalues λ of the head's
  OV circuit W_E W_V W_O W_U (:func:`ov_copying_score`): 1 when attending to a token raises
  that token's own logit.

A head is *named* for a score at or above :data:`THRESHOLD` (0.5: the majority of its
attention on the keys the mechanism names); every such head is named, ranked by score
(:func:`named_heads`), not only the top one. The copying score is shown beside the others and
names no head by itself.

numpy only: the model's forward pass lives in :mod:`attnviz.io.circuit_probe`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

THRESHOLD = 0.5
#: the scores read from attention, in the order a table shows them
KINDS = ("previous_token", "induction", "duplicate_token", "first_token")
COPYING = "copying"


# ------------------------------------------------------------------------------ the probe


def repeated_tokens(rng: np.random.Generator, vocab: ArrayLike, length: int, *,
                    batch: int = 1, repeats: int = 2, prefix: ArrayLike = ()
                    ) -> NDArray[np.int64]:
    """Olsson et al.'s probe: ``length`` random tokens, repeated ``repeats`` times.

    Parameters
    ----------
    rng : numpy.random.Generator
    vocab : array_like of int
        The token ids to draw from (uniformly, with replacement; leave out special tokens).
    length : int
        Tokens of one copy (>= 2).
    batch : int
        Sequences (each draws its own tokens).
    repeats : int
        Copies (>= 2).
    prefix : array_like of int
        Tokens put before every sequence (a beginning-of-sequence token; none by default).

    Returns
    -------
    ndarray of int64, shape (batch, len(prefix) + repeats · length)
    """
    vocab = np.asarray(vocab).ravel()
    prefix = np.asarray(prefix, dtype=np.int64).ravel()
    if vocab.size < 2 or vocab.dtype.kind not in "iu":
        raise ValueError(f"vocab must hold at least 2 token ids, got {vocab.size}")
    for name, value, low in (("length", length, 2), ("batch", batch, 1), ("repeats", repeats, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
    segment = rng.choice(vocab, size=(batch, length)).astype(np.int64)  # (batch, length)
    body = np.tile(segment, (1, repeats))  # (batch, repeats · length)
    return np.concatenate([np.broadcast_to(prefix, (batch, prefix.size)), body], axis=1)


def token_ids(tokens) -> NDArray[np.int64]:
    """Token strings as ids (equal strings, equal ids): the scores of a captured text whose
    ids were not kept."""
    return np.unique(np.asarray(tokens, dtype=str), return_inverse=True)[1].astype(np.int64)


# ------------------------------------------------------------------------------ the keys


def prefix_targets(tokens: ArrayLike) -> NDArray[np.bool_]:
    """targets[i, j + 1] = True where tokens[j] == tokens[i] for j < i: the keys an induction
    head attends to from query i. Shape (t, t); zero above the diagonal."""
    tokens = np.asarray(tokens)
    t = len(tokens)
    targets = np.zeros((t, t), dtype=bool)
    targets[:, 1:] = duplicate_targets(tokens)[:, :-1]  # key j + 1 <= i
    return targets


def duplicate_targets(tokens: ArrayLike) -> NDArray[np.bool_]:
    """targets[i, j] = True where tokens[j] == tokens[i] for j < i: the earlier occurrences of
    query i's token. Shape (t, t); zero on and above the diagonal."""
    tokens = np.asarray(tokens)
    t = len(tokens)
    return (tokens[:, None] == tokens[None, :]) & np.tri(t, k=-1, dtype=bool)


# ------------------------------------------------------------------------------ scores


def previous_token_score(weights: ArrayLike) -> Array:
    """Mean attention from every position i >= 1 to i − 1.

    Parameters
    ----------
    weights : array_like of shape (..., t, t)

    Returns
    -------
    ndarray of shape (...)
    """
    w = _check_weights(weights)
    t = w.shape[-1]
    if t < 2:
        raise ValueError("the previous-token score needs at least 2 tokens")
    return w[..., np.arange(1, t), np.arange(t - 1)].mean(axis=-1)


def first_token_score(weights: ArrayLike) -> Array:
    """Mean attention from every position i >= 1 to position 0 (an attention sink's score;
    query 0 is left out: under a causal mask it can attend nowhere else).

    Parameters
    ----------
    weights : array_like of shape (..., t, t)

    Returns
    -------
    ndarray of shape (...)
    """
    w = _check_weights(weights)
    if w.shape[-1] < 2:
        raise ValueError("the first-token score needs at least 2 tokens")
    return w[..., 1:, 0].mean(axis=-1)


def prefix_matching_score(weights: ArrayLike, tokens: ArrayLike) -> Array:
    """Mean attention from a repeated token to the positions right after its earlier
    occurrences (Olsson et al. 2022).

    For every query i whose token occurred at some j < i, the attention on the keys {j + 1}
    is summed (over all such j); the score is the mean over those queries.

    Parameters
    ----------
    weights : array_like of shape (..., t, t)
    tokens : array_like of int, shape (t,)

    Returns
    -------
    ndarray of shape (...)

    Raises
    ------
    ValueError
        If no token repeats (the score has no query).
    """
    return _target_score(weights, tokens, prefix_targets, "prefix-matching")


def duplicate_token_score(weights: ArrayLike, tokens: ArrayLike) -> Array:
    """Mean attention from a repeated token to its earlier occurrences.

    Parameters
    ----------
    weights : array_like of shape (..., t, t)
    tokens : array_like of int, shape (t,)

    Returns
    -------
    ndarray of shape (...)

    Raises
    ------
    ValueError
        If no token repeats (the score has no query).
    """
    return _target_score(weights, tokens, duplicate_targets, "duplicate-token")


def _target_score(weights, tokens, targets_of, name: str) -> Array:
    w = _check_weights(weights)
    tokens = np.asarray(tokens)
    t = w.shape[-1]
    if tokens.shape != (t,):
        raise ValueError(f"tokens must have one entry per position ({t}), got shape "
                         f"{tokens.shape}")
    targets = targets_of(tokens)  # (t, t)
    queries = targets.any(axis=1)
    if not queries.any():
        raise ValueError(f"no token repeats: the {name} score needs a repeated token")
    per_query = (w * targets).sum(axis=-1)  # (..., t)
    return per_query[..., queries].mean(axis=-1)


def ov_copying_score(w_ev: ArrayLike, w_ou: ArrayLike) -> float:
    """Σλ / Σ|λ| over the eigenvalues λ of a head's OV circuit W_E W_V W_O W_U (Elhage et al.
    2021): 1 when every eigenvalue is positive (attending to a token raises that token's own
    logit), −1 when every one is negative, 0 with no eigenvalue.

    The vocab × vocab circuit is never formed: its nonzero eigenvalues are those of the
    (d_head × d_head) product (W_O W_U)(W_E W_V).

    Parameters
    ----------
    w_ev : array_like of shape (vocab, d_head)
        W_E W_V: each token's value vector.
    w_ou : array_like of shape (d_head, vocab)
        W_O W_U: each value dimension's effect on every logit.
    """
    w_ev, w_ou = np.asarray(w_ev, dtype=float), np.asarray(w_ou, dtype=float)
    if w_ev.ndim != 2 or w_ou.shape != w_ev.shape[::-1]:
        raise ValueError(f"w_ev (vocab, d_head) and w_ou (d_head, vocab) must be transposed "
                         f"shapes, got {w_ev.shape} and {w_ou.shape}")
    eig = np.linalg.eigvals(w_ou @ w_ev)  # (d_head,)
    total = np.abs(eig).sum()
    return float(eig.real.sum() / total) if total > 0 else 0.0


# ------------------------------------------------------------------------------ every head


@dataclass(frozen=True, eq=False)
class HeadScores:
    """Every head's scores on one probe.

    Attributes
    ----------
    previous_token, induction, duplicate_token, first_token : ndarray of shape
        (n_layers, n_heads)
        The mean over the probe's sequences (:func:`score_heads`).
    copying : ndarray of shape (n_layers, n_heads) or None
        None where the model has no unembedding (or its heads' OV circuits are not read).
    threshold : float
        A head is named for a score at or above it.
    """

    previous_token: Array
    induction: Array
    duplicate_token: Array
    first_token: Array
    copying: Array | None = None
    threshold: float = THRESHOLD

    @property
    def shape(self) -> tuple[int, int]:
        """(n_layers, n_heads)."""
        return tuple(self.previous_token.shape)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The scores these hold: :data:`KINDS`, and "copying" when it was read."""
        return KINDS + ((COPYING,) if self.copying is not None else ())

    def score(self, kind: str) -> Array:
        """One score of every head, shape (n_layers, n_heads)."""
        if kind not in self.kinds:
            raise ValueError(f"kind must be one of {', '.join(self.kinds)}, got {kind!r:.40}")
        return getattr(self, kind)

    def named(self, kind: str) -> tuple[tuple[int, int], ...]:
        """The heads named for ``kind`` (at or above the threshold), highest score first; none
        for the copying score, which names no head by itself."""
        if kind == COPYING:
            self.score(kind)
            return ()
        return named_heads(self.score(kind), self.threshold)

    def ranked(self, kind: str) -> list[tuple[int, int]]:
        """Every head, highest ``kind`` score first (ties: lower layer, then lower head)."""
        s = self.score(kind)
        order = np.lexsort((np.arange(s.size), -s.ravel()))
        return [tuple(int(i) for i in np.unravel_index(k, s.shape)) for k in order]

    def roles(self, layer: int, head: int) -> tuple[str, ...]:
        """The kinds a head is named for, in :data:`KINDS` order."""
        return tuple(k for k in KINDS if (layer, head) in self.named(k))


def named_heads(scores: ArrayLike, threshold: float = THRESHOLD) -> tuple[tuple[int, int], ...]:
    """Every (layer, head) whose score is at or above ``threshold``, highest first (ties:
    lower layer, then lower head).

    Parameters
    ----------
    scores : array_like of shape (n_layers, n_heads)
    threshold : float
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2:
        raise ValueError(f"scores must be an (n_layers, n_heads) array, got shape {s.shape}")
    order = np.lexsort((np.arange(s.size), -s.ravel()))
    return tuple(tuple(int(i) for i in np.unravel_index(k, s.shape)) for k in order
                 if s.ravel()[k] >= threshold)


def score_heads(weights: ArrayLike, tokens: ArrayLike, *, copying: ArrayLike | None = None,
                threshold: float = THRESHOLD) -> HeadScores:
    """Every head's scores on a probe.

    Parameters
    ----------
    weights : array_like of shape (n_layers, n_heads, t, t) or (batch, n_layers, n_heads, t, t)
        The attention on the probe's sequences.
    tokens : array_like of int, shape (t,) or (batch, t)
        Their token ids. The induction and duplicate-token scores count the sequences in
        which a token repeats, and are NaN (no head named) when none does.
    copying : array_like of shape (n_layers, n_heads), optional
        The heads' copying scores, read from the model's weights.
    threshold : float
        In (0, 1]: a head is named at or above it.

    Returns
    -------
    HeadScores
        Each score the mean over the sequences.
    """
    w = _check_weights(weights)
    ids = np.asarray(tokens)
    if w.ndim == 4:
        w, ids = w[None], ids[None] if ids.ndim == 1 else ids
    if w.ndim != 5 or ids.ndim != 2 or ids.shape != (w.shape[0], w.shape[-1]) \
            or ids.dtype.kind not in "iu":
        raise ValueError(f"weights of shape (batch, n_layers, n_heads, t, t) need token ids of "
                         f"shape (batch, t); got {w.shape} and {ids.shape} {ids.dtype}")
    if isinstance(threshold, bool) or not 0 < float(threshold) <= 1:
        raise ValueError(f"the threshold must be a number in (0, 1], got {threshold!r}")
    layers_heads = w.shape[1:3]
    if copying is not None:
        copying = np.asarray(copying, dtype=float)
        if copying.shape != layers_heads:
            raise ValueError(f"copying must hold one score per head {layers_heads}, got shape "
                             f"{copying.shape}")

    def mean(per_sequence) -> Array:
        """The mean over the sequences in which a token repeats; NaN when none does."""
        found = [per_sequence(w[b], ids[b]) for b in range(len(w))
                 if len(np.unique(ids[b])) < ids.shape[1]]
        return np.mean(found, axis=0) if found else np.full(layers_heads, np.nan)

    return HeadScores(
        previous_token=previous_token_score(w).mean(axis=0),
        induction=mean(prefix_matching_score),
        duplicate_token=mean(duplicate_token_score),
        first_token=first_token_score(w).mean(axis=0),
        copying=copying, threshold=float(threshold))


def _check_weights(weights) -> Array:
    w = np.asarray(weights, dtype=float)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must end in a square (t, t) pattern, got shape {w.shape}")
    return w
