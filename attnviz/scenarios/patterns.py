"""Attention patterns built by construction: weights a student can work backwards from.

Each builder returns a :class:`~attnviz.scenarios.scenario.Scenario` whose weights are
exactly (or to within e^-20 ≈ 2e-9) a chosen pattern. The recipe is the same for all of them:

* the embeddings are one-hot, so q = x W_Q just picks rows of W_Q (and the same for K, V);
* W_K = I and W_Q = G·P, so the scores are S = x W_Q (x W_K)ᵀ = G·P with P the 0/1 pattern;
* the variant is plain (unscaled) dot-product attention, so the softmax sees G·P itself: the
  chosen key of each row wins by a margin of G = 20, i.e. every other key gets e^-20 of its
  weight;
* W_V = I, so the output row of query i *is* the one-hot embedding of the key it attends to.

"Uniform" uses W_Q = 0: every score is 0 and every weight exactly 1/t. "Same word earlier"
adds word identity to the embedding (one-hot word ⊕ one-hot position) and a positional bias in
W_Q, see :func:`same_word_earlier`.

:data:`PATTERNS` lists ``(key, title, build)``; :mod:`attnviz.scenarios.presets` adds them
to its list.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from attnviz.core.initializers import init_weights
from attnviz.scenarios.scenario import Scenario

Array = NDArray[np.float64]

PATTERN_TOKENS = ("the", "cat", "sat", "on", "the", "mat")
GAIN = 20.0  # score margin of the chosen key: the others get e^-20 of its weight


# key -> (title, description) of each pattern preset (shown in the preset picker)
PATTERN_PRESETS = {
    "pattern_self": (
        "Pattern: attend to self (by construction)",
        "One-hot position embeddings (X = I), W_K = W_V = I and W_Q = 20·I, unscaled: the "
        "scores are 20 on the diagonal and 0 elsewhere, so every token puts weight "
        "1/(1 + 5e^-20) ≈ 1 on itself and the output equals X.",
    ),
    "pattern_previous": (
        "Pattern: attend to the previous token (by construction)",
        "X = I, W_K = W_V = I and W_Q = 20·P with P the shift matrix (P[i, i−1] = 1; the first "
        "token has no predecessor and attends to itself): scores = 20·P, so output row i is "
        "the embedding of token i − 1.",
    ),
    "pattern_first": (
        "Pattern: attend to the first token (by construction)",
        "X = I, W_K = W_V = I and W_Q = 20 in column 0 and 0 elsewhere: every query scores 20 "
        "against the first key and 0 against the rest, so all the weight goes to token 0.",
    ),
    "pattern_uniform": (
        "Pattern: uniform (by construction)",
        "W_Q = 0, so every score is 0 and every weight exactly 1/6: each output row is the "
        "mean of the value rows.",
    ),
    "pattern_same_word": (
        "Pattern: attend to the same word earlier (by construction)",
        "X = one-hot word ⊕ one-hot position. W_K = W_V = I and W_Q = diag(40·I, B): the score "
        "is 40·[same word] + B_ij with B = 0 for earlier tokens, −20 for itself and −80 for "
        "later ones. The second 'the' scores 40 against the first and 20 against itself; a "
        "word seen for the first time attends to itself.",
    ),
}


def self_pattern(t: int) -> Array:
    """P_ij = 1 when j = i: each token attends to itself."""
    return np.eye(t)


def previous_pattern(t: int) -> Array:
    """P_ij = 1 when j = i − 1; the first token, which has no previous token, attends to itself."""
    p = np.eye(t, k=-1)
    p[0, 0] = 1.0
    return p


def first_pattern(t: int) -> Array:
    """P_ij = 1 when j = 0: every token attends to the first token."""
    p = np.zeros((t, t))
    p[:, 0] = 1.0
    return p


def _scenario(tokens, x: Array, w_q: Array, key: str) -> Scenario:
    """A self-attention scenario with W_K = W_V = W_O = I, unscaled dot product, no mask."""
    tokens = tuple(tokens)
    d = x.shape[1]
    w_a_q, w_a_k, v_a = init_weights("normal", [(d, 3), (d, 3), (1, 3)], seed=7)
    title, description = PATTERN_PRESETS[key]
    return Scenario(tokens=tokens, x=x.copy(), w_q=w_q, w_k=np.eye(d), w_v=np.eye(d),
                    w_o=np.eye(d), variant="dot_product", source_tokens=tokens,
                    source_x=x.copy(), w_a_q=w_a_q, w_a_k=w_a_k, v_a=v_a[0],
                    pool_w=np.full(d, 0.5), pool_b=np.zeros(len(tokens)),
                    title=title, description=description)


def _positional(key: str, pattern: Callable[[int], Array], gain: float = GAIN) -> Scenario:
    """One-hot position embeddings (x = I) and W_Q = gain·P: the scores are gain·P."""
    t = len(PATTERN_TOKENS)
    return _scenario(PATTERN_TOKENS, np.eye(t), gain * pattern(t), key)


def attend_self() -> Scenario:
    """Every token attends to itself: scores 20·I."""
    return _positional("pattern_self", self_pattern)


def attend_previous() -> Scenario:
    """Every token attends to the token before it (the first one to itself)."""
    return _positional("pattern_previous", previous_pattern)


def attend_first() -> Scenario:
    """Every token attends to the first token (a "sink" head)."""
    return _positional("pattern_first", first_pattern)


def attend_uniform() -> Scenario:
    """W_Q = 0: all scores are 0, every weight is exactly 1/t, the output is the mean of V."""
    return _positional("pattern_uniform", self_pattern, gain=0.0)


def same_word_earlier() -> Scenario:
    """Each token attends to earlier copies of the same word, or to itself if there is none.

    Embedding of token i: one-hot of its word (vocabulary of the distinct words, in order of
    first appearance) followed by one-hot of its position, so d_model = n_words + t. With
    W_K = I and W_Q = diag(2G·I_words, B) the score of query i and key j is

        S_ij = 2G·[word_i = word_j] + B_ij,   B_ij = 0 (j < i), −G (j = i), −4G (j > i)

    i.e. 2G for an earlier copy of the same word, G for itself, 0 for other earlier words and
    at most −2G for later tokens. The chosen key(s) win by G; several earlier copies share the
    weight equally.
    """
    tokens = PATTERN_TOKENS
    t = len(tokens)
    words = list(dict.fromkeys(tokens))  # distinct words, first appearance order
    n_words = len(words)
    word_onehot = np.eye(n_words)[[words.index(w) for w in tokens]]  # (t, n_words)
    x = np.hstack([word_onehot, np.eye(t)])  # (t, n_words + t)
    offset = np.arange(t)[None, :] - np.arange(t)[:, None]  # j − i
    bias = np.where(offset < 0, 0.0, np.where(offset == 0, -GAIN, -4 * GAIN))  # (t, t)
    w_q = np.zeros((n_words + t, n_words + t))
    w_q[:n_words, :n_words] = 2 * GAIN * np.eye(n_words)
    w_q[n_words:, n_words:] = bias
    return _scenario(tokens, x, w_q, "pattern_same_word")


def same_word_pattern(tokens) -> Array:
    """The target of :func:`same_word_earlier`: earlier copies of the same word share the row;
    a token without one attends to itself."""
    tokens = list(tokens)
    t = len(tokens)
    p = np.zeros((t, t))
    for i, w in enumerate(tokens):
        earlier = [j for j in range(i) if tokens[j] == w]
        for j in earlier or [i]:
            p[i, j] = 1.0 / len(earlier or [i])
    return p


PATTERNS: tuple[tuple[str, str, Callable[[], Scenario]], ...] = tuple(
    (key, PATTERN_PRESETS[key][0], build) for key, build in (
        ("pattern_self", attend_self),
        ("pattern_previous", attend_previous),
        ("pattern_first", attend_first),
        ("pattern_uniform", attend_uniform),
        ("pattern_same_word", same_word_earlier),
    )
)
