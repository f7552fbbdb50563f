"""Attention while a causal language model generates: token by token with its KV cache.

One call, any decoder-only model transformers has a causal-LM class for::

    model, tokenizer = load_causal_lm("path/to/saved_model")  # load_model's checks and budget
    gen = generate(model, tokenizer, "The cat sat", 10)        # greedy; temperature=0.8, seed=1
    gen.steps[3].rows        # (n_layers, n_heads, t) the 3rd new token's attention over t tokens
    gen.steps[3].top_probs   # the 5 likeliest next tokens' probabilities (softmax, float64)

The decoding is the one a model runs when it generates (Hugging Face's ``generate`` with
``use_cache=True``): the prompt is run once (the *prefill*), which fills the KV cache; then each
new token is run alone, its query attending over the keys and values the cache keeps of every
earlier token plus its own. Eager attention returns that token's row of every layer and head.

Steps: step 0 is the prompt — its last token's row, the cache after the prefill and the
candidates for the first new token; step k (1 … n) is the k-th new token — its row over the
t = prompt + k tokens so far, the cache once it is added, and the candidates for the token after
it. So step k's candidates hold the token step k + 1 appends (greedy: their first).

Numbers: the probabilities are the softmax of the model's own logits, computed in float64
(``top_probs``, temperature 1). With a temperature T > 0 the next token is drawn from
softmax(logits / T) (``top_sampled``) by ``numpy.random.default_rng(seed)``, over the whole
vocabulary; greedy (T = 0) takes the most probable token, as ``generate(do_sample=False)``
does. Nothing of the model's ``generation_config`` (top-p, repetition penalty, ...) is applied:
what is shown is the model's distribution itself. The rows equal the causal attention of one
forward pass over the final sequence to float rounding (``tests/io/test_generate.py``).

Bounds (every one refused in a sentence): at most :data:`MAX_NEW_TOKENS` new tokens, at most
:data:`MAX_SEQUENCE_TOKENS` tokens in all (prompt and new; the Model view's limit) and never
more than the model's positions. A call may stop early (``should_stop``: the page's time budget
or its Stop); :func:`generate` with ``resume=`` goes on from where it stopped (the prompt and
the tokens so far are run again as one prefill; the random generator's state is kept).

torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.io.capture import (
    MAX_MODEL_BYTES,
    EagerAttention,
    is_causal,
    load_model,
    loaded_model,
)
from attnviz.scenarios import limits

Array = NDArray[np.float64]

MAX_NEW_TOKENS = 64  # tokens one generation adds
MAX_SEQUENCE_TOKENS = 128  # prompt and new tokens together (the Model view's MAX_TEXT_TOKENS)
MAX_PROMPT_CHARS = 2000  # characters of a prompt (as the Model view's text box)
MAX_TOP_K = 20  # candidates recorded per step
MIN_TEMPERATURE, MAX_TEMPERATURE = 0.05, 5.0  # a temperature > 0 samples; 0 is greedy
FINISHED_LENGTH = "length"  # Generation.finished: n_tokens were added
FINISHED_EOS = "eos"  # ... the model ended its text (its end-of-sequence token)


@dataclass(frozen=True)
class GenerationSettings:
    """What one generation was asked for, checked when made.

    Attributes
    ----------
    n_tokens : int
        New tokens to add (1 … MAX_NEW_TOKENS).
    temperature : float
        0 for greedy; else MIN_TEMPERATURE … MAX_TEMPERATURE, sampled.
    seed : int
        The random generator's seed (0 … limits.SEED_MAX); unused when greedy.
    top_k : int
        Candidates recorded per step (1 … MAX_TOP_K). Sampling draws from the whole
        vocabulary: this is only how many are shown.
    stop_at_eos : bool
        End when the model emits its end-of-sequence token (as ``generate`` does).
    """

    n_tokens: int
    temperature: float = 0.0
    seed: int = 0
    top_k: int = 5
    stop_at_eos: bool = True

    def __post_init__(self) -> None:
        _whole("n_tokens", self.n_tokens, 1, MAX_NEW_TOKENS)
        _whole("seed", self.seed, 0, limits.SEED_MAX)
        _whole("top_k", self.top_k, 1, MAX_TOP_K)
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) \
                or not math.isfinite(t) or not (t == 0 or MIN_TEMPERATURE <= t <= MAX_TEMPERATURE):
            raise ValueError(f"temperature must be 0 (greedy) or a number from "
                             f"{MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g}, got {t!r:.40}")
        object.__setattr__(self, "temperature", float(t))
        for name in ("n_tokens", "seed", "top_k"):
            object.__setattr__(self, name, int(getattr(self, name)))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def _whole(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high:,}, got "
                         f"{value!r:.40}")


@dataclass(frozen=True, eq=False)
class Step:
    """One step of a generation (see the module docstring: step 0 is the prompt).

    Attributes
    ----------
    token_id : int
        The token this step added (step 0: the prompt's last token).
    position : int
        Its position in the sequence (0-based); the sequence then holds position + 1 tokens.
    prob : float
        The probability the model gave this token at the step before (temperature 1); NaN
        for step 0.
    rows : ndarray of shape (n_layers, n_heads, position + 1), float64
        This token's attention over the sequence so far (itself included), every layer and
        head, from the decoding with the cache. A layer whose cache keeps a sliding window
        attends over its last keys only: the earlier ones are 0.
    top_ids : ndarray of shape (top_k,), int64
        The most probable next tokens, best first.
    top_probs : ndarray of shape (top_k,), float64
        Their probabilities: softmax of the model's logits in float64.
    top_sampled : ndarray of shape (top_k,), float64, or None
        Their probabilities at the temperature the next token was drawn with (None: greedy).
    cache_tokens : int
        Tokens the KV cache keeps after this step (its longest layer).
    cache_bytes : int
        Bytes of the cache's keys and values, every layer.
    seconds : float
        Wall time of this step's forward pass.
    """

    token_id: int
    position: int
    prob: float
    rows: Array
    top_ids: NDArray[np.int64]
    top_probs: Array
    top_sampled: Array | None
    cache_tokens: int
    cache_bytes: int
    seconds: float


@dataclass(frozen=True, eq=False)
class Generation:
    """A prompt, the tokens generated after it and every step's record.

    Attributes
    ----------
    settings : GenerationSettings
    prompt_length : int
        Tokens of the prompt.
    ids : ndarray of shape (t,), int64
        The prompt's tokens and the new ones.
    tokens : tuple of str
        Each token's label (``convert_ids_to_tokens``, as a capture's).
    texts : tuple of str
        The decoded text of the first i + 1 tokens, for each i (special tokens kept).
    top_tokens : tuple of tuple of str
        Each step's candidates' labels.
    steps : tuple of Step
        Step 0 (the prompt) and one per new token.
    finished : str
        FINISHED_LENGTH, FINISHED_EOS, or "" while more tokens are wanted (stopped early).
    rng_state : dict or None
        The random generator's state after the last draw (to go on sampling); None greedy.
    model_type : str
    n_layers, n_heads : int
    """

    settings: GenerationSettings
    prompt_length: int
    ids: NDArray[np.int64]
    tokens: tuple[str, ...]
    texts: tuple[str, ...]
    top_tokens: tuple[tuple[str, ...], ...]
    steps: tuple[Step, ...]
    finished: str
    rng_state: dict | None
    model_type: str
    n_layers: int
    n_heads: int

    @property
    def generated(self) -> int:
        """New tokens so far."""
        return len(self.steps) - 1

    @property
    def done(self) -> bool:
        return bool(self.finished)

    @property
    def nbytes(self) -> int:
        """Bytes the record keeps (the rows, mostly)."""
        return int(sum(s.rows.nbytes + s.top_ids.nbytes + s.top_probs.nbytes
                       + (0 if s.top_sampled is None else s.top_sampled.nbytes)
                       for s in self.steps) + self.ids.nbytes
                   + sum(len(t.encode()) for t in self.tokens + self.texts))

    def text(self, step: int) -> tuple[str, str]:
        """The text before step ``step``'s token, and that token's text (its label when the
        decoded text does not grow by it alone, as a byte-level token cut inside a
        character)."""
        position = self.steps[step].position
        before = self.texts[position - 1] if position else ""
        now = self.texts[position]
        if now.startswith(before) and len(now) > len(before):
            return before, now[len(before):]
        return before, self.tokens[position]


# ---------------------------------------------------------------------------------------------
# Loading a causal language model
# ---------------------------------------------------------------------------------------------

def load_causal_lm(path: str | os.PathLike, max_bytes: int = MAX_MODEL_BYTES, *,
                   root: str | os.PathLike | None = None):
    """:func:`attnviz.io.capture.load_model` with the language-model head
    (``AutoModelForCausalLM``): every check of the folder, the same size limit and the
    process-wide load budget, counted with the head. Refused, in a sentence, besides what
    load_model refuses: an architecture without a causal-LM class, weights without the head,
    a model whose attention is not causal."""
    model, tokenizer = load_model(path, max_bytes, root=root, head="causal_lm")
    _check_causal(model)
    return model, tokenizer


@contextmanager
def loaded_causal_lm(path: str | os.PathLike, max_bytes: int = MAX_MODEL_BYTES, *,
                     root: str | os.PathLike | None = None) -> Iterator[tuple[Any, Any]]:
    """:func:`load_causal_lm` as a context manager: the model's bytes stay reserved in the
    process-wide budget until the block ends (:func:`attnviz.io.capture.loaded_model`)."""
    with loaded_model(path, max_bytes, root=root, head="causal_lm") as (model, tokenizer):
        _check_causal(model)
        yield model, tokenizer


def _check_causal(model) -> None:
    if not is_causal(model):
        raise ValueError(f"{model.config.model_type} attends both ways (bidirectional): it "
                         "does not predict the next token from the ones before, so it cannot "
                         "generate")


# ---------------------------------------------------------------------------------------------
# Generating
# ---------------------------------------------------------------------------------------------

def prompt_ids(tokenizer, text: str) -> list[int]:
    """The prompt's tokens as the model's tokenizer gives them (its beginning-of-sequence
    token included when the tokenizer adds one); refused when empty or too long."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the prompt is empty; type a few words for the model to go on from")
    if len(text) > MAX_PROMPT_CHARS:
        raise ValueError(f"the prompt holds {len(text):,} characters; at most "
                         f"{MAX_PROMPT_CHARS:,} are read")
    ids = [int(i) for i in tokenizer(text)["input_ids"]]
    if not ids:
        raise ValueError("the tokenizer gives no token for this prompt")
    return ids


def check_length(model, prompt_length: int, n_tokens: int) -> None:
    """Refuse a prompt and a number of new tokens beyond MAX_SEQUENCE_TOKENS or the model's
    positions."""
    total = prompt_length + n_tokens
    if total > MAX_SEQUENCE_TOKENS:
        raise ValueError(f"the prompt's {prompt_length} tokens and {n_tokens} new ones make "
                         f"{total}; at most {MAX_SEQUENCE_TOKENS} are shown — shorten the prompt "
                         "or ask for fewer tokens")
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and total > positions:
        raise ValueError(f"the prompt's {prompt_length} tokens and {n_tokens} new ones make "
                         f"{total}; this model has {positions} positions "
                         "(max_position_embeddings)")


def generate(model, tokenizer, text: str | None = None, n_tokens: int | None = None, *,
             temperature: float = 0.0, seed: int = 0, top_k: int = 5,
             stop_at_eos: bool = True, input_ids=None,
             should_stop: Callable[[], bool] | None = None,
             progress: Callable[[Generation], None] | None = None,
             resume: Generation | None = None) -> Generation:
    """Generate up to ``n_tokens`` tokens after a prompt, one at a time with the KV cache,
    recording every step (see the module docstring).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A causal language model (:func:`load_causal_lm`); run with eager attention in eval
        mode, its settings given back afterwards.
    tokenizer : transformers tokenizer
    text : str, optional
        The prompt (or ``input_ids``).
    n_tokens : int
        New tokens wanted (1 … MAX_NEW_TOKENS).
    temperature : float
        0: greedy (the most probable token). > 0: drawn from softmax(logits / temperature).
    seed : int
        The random generator's seed when sampling.
    top_k : int
        Candidates recorded per step (the draw is over the whole vocabulary).
    stop_at_eos : bool
        End at the model's end-of-sequence token (``generation_config.eos_token_id``).
    input_ids : sequence of int, optional
        The prompt's tokens instead of ``text``.
    should_stop : callable() -> bool, optional
        Asked before each new token; True stops the generation there (it can be resumed).
    progress : callable(Generation), optional
        Called with the generation so far after each new token.
    resume : Generation, optional
        A generation stopped early: go on with its settings (the other arguments but the
        callbacks are ignored).

    Returns
    -------
    Generation

    Raises
    ------
    ValueError
        Settings out of range, an empty or too long prompt, a total beyond
        MAX_SEQUENCE_TOKENS or the model's positions, a model whose attention is not causal or
        that returns no attention.
    """
    import torch

    _check_causal(model)
    if resume is not None:
        settings, ids = resume.settings, [int(i) for i in resume.ids]
    else:
        settings = GenerationSettings(n_tokens=n_tokens, temperature=temperature, seed=seed,
                                      top_k=top_k, stop_at_eos=stop_at_eos)
        if (text is None) == (input_ids is None):
            raise ValueError("give either the prompt's text or its input_ids, not both and "
                             "not neither")
        ids = prompt_ids(tokenizer, text) if text is not None else _ids(input_ids, model)
    prompt_length = resume.prompt_length if resume is not None else len(ids)
    check_length(model, prompt_length, settings.n_tokens)
    rng = None
    if not settings.greedy:
        rng = np.random.default_rng(settings.seed)
        if resume is not None and resume.rng_state is not None:
            rng.bit_generator.state = resume.rng_state
    eos = _eos_ids(model) if settings.stop_at_eos else set()
    steps = list(resume.steps) if resume is not None else []
    device = next(model.parameters()).device

    def record(out, token_id: int, prob: float, seconds: float) -> tuple[Step, Array, Array]:
        position = len(ids) - 1
        logits = out.logits[0, -1].detach().to(device="cpu", dtype=torch.float64).numpy()
        probs = softmax64(logits)
        top = np.argsort(-probs, kind="stable")[: settings.top_k].astype(np.int64)
        sampled = None if settings.greedy else softmax64(logits / settings.temperature)
        tokens, size = _cache_size(_cache_of(out))
        step = Step(token_id=token_id, position=position, prob=prob,
                    rows=_rows(out.attentions, position + 1), top_ids=top,
                    top_probs=probs[top], top_sampled=None if sampled is None else sampled[top],
                    cache_tokens=tokens, cache_bytes=size, seconds=seconds)
        return step, probs, (probs if sampled is None else sampled)

    words = _Words(tokenizer, resume)

    def snapshot(finished: str) -> Generation:
        return Generation(settings=settings, prompt_length=prompt_length,
                          ids=np.asarray(ids, dtype=np.int64), tokens=words.tokens(ids),
                          texts=words.texts(ids), top_tokens=words.tops(steps),
                          steps=tuple(steps), finished=finished,
                          rng_state=None if rng is None else rng.bit_generator.state,
                          model_type=str(getattr(model.config, "model_type", "")),
                          n_layers=int(steps[0].rows.shape[0]),
                          n_heads=int(steps[0].rows.shape[1]))

    with EagerAttention(model), torch.no_grad():
        # 1) prefill: the prompt (or everything so far, when resuming) fills the cache
        clock = _clock()
        out = model(input_ids=torch.tensor([ids], device=device), use_cache=True,
                    output_attentions=True, return_dict=True)
        if not out.attentions:
            raise ValueError(f"the {type(model).__name__} returned no attention weights")
        step, probs, dist = record(out, ids[-1],
                                   math.nan if resume is None else steps[-1].prob, clock())
        if resume is None:
            steps.append(step)
        finished = ""
        # 2) decode: one token at a time against the cache
        while len(steps) - 1 < settings.n_tokens:
            if ids[-1] in eos and len(steps) > 1:
                finished = FINISHED_EOS
                break
            if should_stop is not None and should_stop():
                break
            chosen = int(np.argmax(dist)) if rng is None else _draw(dist, rng)
            ids.append(chosen)
            clock = _clock()
            out = model(input_ids=torch.tensor([[chosen]], device=device), use_cache=True,
                        output_attentions=True, return_dict=True,
                        **_cache_inputs(model, _cache_of(out), len(ids) - 1, device))
            step, probs, dist = record(out, chosen, float(probs[chosen]), clock())
            steps.append(step)
            if progress is not None:
                progress(snapshot(""))
        else:
            finished = FINISHED_LENGTH
        if not finished and ids[-1] in eos and len(steps) > 1:
            finished = FINISHED_EOS
    return snapshot(finished)


def softmax64(logits: NDArray) -> Array:
    """Softmax in float64 (the max subtracted first)."""
    z = np.asarray(logits, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def _draw(p: Array, rng: np.random.Generator) -> int:
    """One index drawn with probabilities ``p`` (inverse of the cumulative sum)."""
    cumulative = np.cumsum(p)
    return int(min(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"),
                   p.size - 1))


def _clock() -> Callable[[], float]:
    import time

    began = time.perf_counter()
    return lambda: time.perf_counter() - began


def _ids(input_ids, model) -> list[int]:
    ids = np.asarray(input_ids).ravel()
    if ids.size == 0 or ids.dtype.kind not in "iu":
        raise ValueError("input_ids must be a non-empty sequence of token ids")
    vocab = int(getattr(model.config, "vocab_size", 0) or 0)
    if (ids < 0).any() or (vocab and (ids >= vocab).any()):
        raise ValueError(f"input_ids must be token ids from 0 to {vocab - 1}")
    return [int(i) for i in ids]


def _eos_ids(model) -> set[int]:
    """The model's end-of-sequence token ids (its generation config's, else its config's)."""
    config = getattr(model, "generation_config", None)
    eos = getattr(config, "eos_token_id", None)
    if eos is None:
        eos = getattr(model.config, "eos_token_id", None)
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def _rows(attentions, t: int) -> Array:
    """The last query's row of every layer's attention, as (n_layers, n_heads, t) float64; a
    layer that attends over its last keys only (a sliding window's cache) is right-aligned, the
    keys it no longer sees 0."""
    import torch

    n_heads = attentions[0].shape[1]
    rows = np.zeros((len(attentions), n_heads, t), dtype=np.float64)
    for layer, a in enumerate(attentions):
        row = a[0, :, -1, :].detach().to(device="cpu", dtype=torch.float64).numpy()
        width = min(row.shape[-1], t)
        rows[layer, :, t - width:] = row[:, row.shape[-1] - width:]
    return rows


def _cache_of(out):
    """The KV cache a forward pass returned (``cache`` in transformers 5.25 and later, before it
    ``past_key_values``)."""
    cache = out.get("cache") if hasattr(out, "get") else None
    return cache if cache is not None else getattr(out, "past_key_values", None)


def _cache_inputs(model, cache, position: int, device) -> dict[str, Any]:
    """The keyword arguments that hand the model its cache and the new token's position, under
    the names its forward takes."""
    import inspect

    import torch

    names = inspect.signature(model.forward).parameters
    inputs = {"cache" if "cache" in names else "past_key_values": cache}
    if "position_ids" in names:
        inputs["position_ids"] = torch.tensor([[position]], device=device)
    return inputs


def _cache_size(cache) -> tuple[int, int]:
    """(tokens the cache keeps in its longest layer, bytes of every layer's keys and values)."""
    tokens, size = 0, 0
    for layer in getattr(cache, "layers", ()):
        for tensor in (getattr(layer, "keys", None), getattr(layer, "values", None)):
            if tensor is None or not hasattr(tensor, "numel") or tensor.dim() < 2:
                continue
            size += int(tensor.numel() * tensor.element_size())
            tokens = max(tokens, int(tensor.shape[-2]))
    return tokens, size


class _Words:
    """Labels and decoded texts of a growing sequence, each computed once."""

    def __init__(self, tokenizer, resume: Generation | None) -> None:
        self.tokenizer = tokenizer
        self._tokens = list(resume.tokens) if resume is not None else []
        self._texts = list(resume.texts) if resume is not None else []
        self._tops = list(resume.top_tokens) if resume is not None else []

    def tokens(self, ids: list[int]) -> tuple[str, ...]:
        new = ids[len(self._tokens):]
        if new:
            self._tokens += [str(t) for t in self.tokenizer.convert_ids_to_tokens(new)]
        return tuple(self._tokens)

    def texts(self, ids: list[int]) -> tuple[str, ...]:
        while len(self._texts) < len(ids):
            self._texts.append(self.tokenizer.decode(ids[: len(self._texts) + 1]))
        return tuple(self._texts)

    def tops(self, steps: list[Step]) -> tuple[tuple[str, ...], ...]:
        for step in steps[len(self._tops):]:
            self._tops.append(tuple(str(t) for t in self.tokenizer.convert_ids_to_tokens(
                [int(i) for i in step.top_ids])))
        return tuple(self._tops)
