"""Find circuits in a Hugging Face model: run it on Olsson et al.'s repeated random tokens and
score every layer × head (:mod:`attnviz.scenarios.circuits`).

One call, any model :func:`attnviz.io.capture.capture` reads::

    model, tokenizer = load_model("path/to/saved_model")
    probe = probe_model(model, tokenizer)
    probe.scores.named("induction")        # ((layer, head), ...), highest score first

The probe: ``batch`` sequences of ``length`` random tokens (the tokenizer's special tokens left
out), each repeated once, after the model's beginning-of-sequence token when it has one
(``bos_token_id``, else ``cls_token_id``), run in one forward pass with eager attention. The
scores are the means over the sequences.

The copying score needs the heads' W_V and W_O (read by :func:`attnviz.io.hf_layers.layer_inputs`,
for the architectures it reads) and an unembedding: the model's output embedding, or its token
embedding when the two are tied (``tie_word_embeddings``); the base model :func:`load_model`
loads keeps no untied output layer, so its copying score is left out. It is the direct path
W_E W_V W_O W_U, without the layer norms and biases.

torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.io.capture import MAX_CAPTURE_TOKENS, MAX_CAPTURE_VALUES, capture
from attnviz.scenarios.circuits import (
    THRESHOLD,
    HeadScores,
    ov_copying_score,
    repeated_tokens,
    score_heads,
)

DEFAULT_LENGTH = 25  # tokens of one copy: 51 with the first token, ~2,600 weights a head
DEFAULT_BATCH = 8  # sequences (the scores are their means)
MAX_PROBE_BATCH = 64


@dataclass(frozen=True, eq=False)
class CircuitProbe:
    """Every head's scores on the repeated random tokens, and the probe that gave them.

    Attributes
    ----------
    scores : HeadScores
    input_ids : ndarray of int64, shape (batch, t)
        The probe's sequences (t = len(prefix) + 2 · length).
    length : int
        Tokens of one copy.
    prefix : tuple of int
        The token put first in every sequence (empty when the model has none).
    seed : int
    model_type : str
    is_causal : bool
    """

    scores: HeadScores
    input_ids: NDArray[np.int64]
    length: int
    prefix: tuple[int, ...]
    seed: int
    model_type: str
    is_causal: bool

    @property
    def batch(self) -> int:
        return int(self.input_ids.shape[0])


def probe_model(model, tokenizer=None, *, length: int = DEFAULT_LENGTH,
                batch: int = DEFAULT_BATCH, seed: int = 0, copying: bool = True,
                threshold: float = THRESHOLD) -> CircuitProbe:
    """Run the model on repeated random tokens and score every head.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        Any model :func:`~attnviz.io.capture.capture` reads.
    tokenizer : transformers tokenizer, optional
        Its special tokens are left out of the random ones, and its ``bos_token`` (or
        ``cls_token``) starts every sequence; without one, the config's ``bos_token_id``.
    length : int
        Tokens of one copy (2 or more); shortened to fit the model's positions and the
        capture's limits.
    batch : int
        Sequences, 1 to :data:`MAX_PROBE_BATCH`; fewer when the weights would exceed the
        capture's limit.
    seed : int
        Draws the random tokens (``np.random.default_rng(seed)``).
    copying : bool
        Also read each head's copying score where the model allows it (else None).
    threshold : float
        A head is named at or above it.

    Raises
    ------
    ValueError
        Settings out of range, a vocabulary with fewer than 2 ordinary tokens, too few
        positions for two copies, or what :func:`~attnviz.io.capture.capture` refuses.
    """
    for name, value, low, high in (("length", length, 2, MAX_CAPTURE_TOKENS),
                                   ("batch", batch, 1, MAX_PROBE_BATCH),
                                   ("seed", seed, 0, 2**32 - 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not low <= value <= high:
            raise ValueError(f"{name} must be a whole number from {low} to {high:,}, got "
                             f"{value!r:.40}")
    config = model.config
    vocab = ordinary_tokens(config, tokenizer)
    prefix = first_token(config, tokenizer)
    # 1) as long and as many as the model's positions and the capture's limits allow
    positions = getattr(config, "max_position_embeddings", None) or getattr(
        config, "n_positions", None) or MAX_CAPTURE_TOKENS
    room = min(int(positions), MAX_CAPTURE_TOKENS) - len(prefix)
    length = min(int(length), room // 2)
    if length < 2:
        raise ValueError(f"the model has {positions} positions: too few for two copies of 2 "
                         "tokens")
    t = len(prefix) + 2 * length
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", 1)
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", 1)
    batch = max(1, min(int(batch), MAX_CAPTURE_VALUES // (int(layers) * int(heads) * t * t)))
    # 2) the probe, one forward pass
    ids = repeated_tokens(np.random.default_rng(int(seed)), vocab, length, batch=batch,
                          prefix=prefix)
    cap = capture(model, input_ids=ids)
    weights = np.stack(cap.attentions)  # (batch, layers, heads, t, t)
    # 3) the scores
    ov = copying_scores(model, ids[0]) if copying else None
    scores = score_heads(weights, ids, copying=ov, threshold=threshold)
    return CircuitProbe(scores, ids, length, tuple(int(i) for i in prefix), int(seed),
                        cap.model_type, cap.is_causal)


def ordinary_tokens(config, tokenizer=None) -> NDArray[np.int64]:
    """The token ids the probe draws from: the model's vocabulary (and the tokenizer's, when
    smaller) without the tokenizer's special tokens."""
    size = int(getattr(config, "vocab_size", 0) or 0)
    if tokenizer is not None:
        size = min(size, len(tokenizer)) if size else len(tokenizer)
    special = set() if tokenizer is None else set(getattr(tokenizer, "all_special_ids", ()))
    for name in ("bos_token_id", "eos_token_id", "pad_token_id", "cls_token_id",
                 "sep_token_id"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            special.add(value)
    ids = np.array([i for i in range(size) if i not in special], dtype=np.int64)
    if ids.size < 2:
        raise ValueError(f"the vocabulary has {ids.size} ordinary tokens; the probe draws "
                         "random tokens from at least 2")
    return ids


def first_token(config, tokenizer=None) -> tuple[int, ...]:
    """The token every probe sequence starts with, as the model's text would: the tokenizer's
    ``bos_token_id`` (else ``cls_token_id``), else the config's ``bos_token_id``; () for none."""
    for source in (tokenizer, config):
        if source is None:
            continue
        for name in ("bos_token_id", "cls_token_id"):
            value = getattr(source, name, None)
            if isinstance(value, int) and value >= 0:
                return (value,)
    return ()


def unembedding(model) -> NDArray[np.float64] | None:
    """W_U of shape (d_model, vocab): the output embedding, or the token embedding when they
    are tied; None when the model has neither."""
    out = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if out is not None and getattr(out, "weight", None) is not None:
        return out.weight.detach().cpu().double().numpy().T
    if getattr(model.config, "tie_word_embeddings", False):
        return embedding(model).T
    return None


def embedding(model) -> NDArray[np.float64]:
    """W_E of shape (vocab, d_model)."""
    return model.get_input_embeddings().weight.detach().cpu().double().numpy()


def copying_scores(model, input_ids) -> NDArray[np.float64] | None:
    """Every head's copying score (:func:`~attnviz.scenarios.circuits.ov_copying_score`), shape
    (n_layers, n_heads); None when the model has no unembedding or attnviz does not read its
    layers' projections."""
    from attnviz.io.hf_layers import layer_inputs

    w_u = unembedding(model)
    if w_u is None:
        return None
    w_e = embedding(model)
    n_layers = int(model.config.num_hidden_layers)
    rows = []
    for layer in range(n_layers):
        try:
            li = layer_inputs(model, input_ids=np.asarray(input_ids)[None], layer=layer)
        except ValueError:  # an architecture whose projections attnviz does not read
            return None
        d, group = li.head_dim, li.n_heads // li.n_kv_heads
        row = []
        for head in range(li.n_heads):
            kv = head // group
            w_v = li.w_v[:, kv * d:(kv + 1) * d]  # (d_model, d_head)
            w_o = li.w_o[head * d:(head + 1) * d]  # (d_head, d_model)
            row.append(ov_copying_score(w_e @ w_v, w_o @ w_u))
        rows.append(row)
    return np.array(rows)
