"""Capture every layer's and head's attention from a Hugging Face transformers model.

One call, any model that returns ``attentions``::

    model, tokenizer = load_model("path/to/saved_model")   # a save_pretrained folder, offline
    cap = capture(model, tokenizer, text="The cat sat on the mat")
    save_capture(cap, "attention.npz")                      # the file "Your own attention" reads

:func:`capture` forces the eager attention implementation for the forward pass (transformers 5
defaults to SDPA, whose ``outputs.attentions`` is empty) and runs it under ``torch.no_grad()``,
then puts the previous implementation back. A batch is padded on the right with the attention
mask; each sequence's padded positions are cut from its weights, so every row sums to 1.

The saved ``.npz`` is the format :func:`attnviz.io.attention_io.load_attention` reads without
torch: ``attention`` (layers, heads, t, t) and ``tokens``, plus the metadata arrays named in
:data:`METADATA_KEYS` (the loader reads only the first two and checks the headers of the rest).

torch and transformers are the optional extra ``pip install attnviz[models]``; they are imported
inside the functions that need them, so importing this module loads numpy only.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.io import attention_io
from attnviz.scenarios import limits

Array = NDArray[np.float64]

MAX_CAPTURE_TOKENS = limits.MAX_UPLOAD_T  # tokens of one sequence: what the dashboard shows
MAX_BATCH = 64  # sequences in one capture call
MAX_CAPTURE_VALUES = 2**25  # batch·layers·heads·t·t kept as float64 (256 MB)
MAX_MODEL_BYTES = 2 * 1024**3  # parameters of a model load_model accepts (2 GiB)
MAX_CONFIG_BYTES = 1024 * 1024  # a model folder's config.json
CAPTURE_FORMAT = 1  # version of the saved file's layout (the ``attnviz_capture`` array)
METADATA_KEYS = ("attnviz_capture", "config", "model_type", "is_causal", "sequence", "layers",
                 "input_ids", "token_type_ids")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json",
                   "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")


@dataclass(frozen=True, eq=False)
class Capture:
    """Attention of every layer and head for each sequence of a batch.

    Attributes
    ----------
    attentions : tuple of ndarray of shape (layers, heads, t_i, t_i), float64
        One array per sequence, padded positions removed (t_i differs between sequences).
    tokens : tuple of tuple of str
        The tokens of each sequence (``tokenizer.convert_ids_to_tokens``; the ids as text when
        no tokenizer was given).
    input_ids : tuple of ndarray of shape (t_i,), int64
    token_type_ids : tuple of ndarray of shape (t_i,) or None
        Segment of each token (0 = first text, 1 = second) for sentence pairs, else None.
    positions : tuple of ndarray of shape (t_i,), int64
        Where each kept token sat in the padded batch the model saw.
    config : dict
        The model's configuration (``config.to_json_string()``, so JSON-safe).
    model_type : str
        ``config.model_type``, e.g. "bert", "gpt2", "llama".
    is_causal : bool
        True when the model's self-attention is causal (queries see only earlier keys).
    """

    attentions: tuple[Array, ...]
    tokens: tuple[tuple[str, ...], ...]
    input_ids: tuple[NDArray[np.int64], ...]
    token_type_ids: tuple[NDArray[np.int64], ...] | None
    positions: tuple[NDArray[np.int64], ...]
    config: dict[str, Any]
    model_type: str
    is_causal: bool

    def __len__(self) -> int:
        return len(self.attentions)

    @property
    def layers(self) -> int:
        return int(self.attentions[0].shape[0])

    @property
    def heads(self) -> int:
        return int(self.attentions[0].shape[1])


def _require() -> None:
    """Import torch and transformers, or say which extra to install."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"capturing attention needs torch and transformers ({exc}); install "
                          "them with: pip install 'attnviz[models]'") from None


# ---------------------------------------------------------------------------------------------
# Loading a saved model, offline
# ---------------------------------------------------------------------------------------------

def load_model(path: str | os.PathLike, max_bytes: int = MAX_MODEL_BYTES):
    """Load a ``save_pretrained`` folder (model and tokenizer) offline, with eager attention.

    Nothing is fetched from the Hub (``local_files_only=True``) and no code from the folder is
    run (``trust_remote_code`` stays off). The model's size is estimated from its config, on
    torch's meta device, before any weight is read.

    Parameters
    ----------
    path : str or PathLike
        The folder written by ``model.save_pretrained(path)`` and
        ``tokenizer.save_pretrained(path)``.
    max_bytes : int
        The most bytes of parameters accepted; the machine's available memory, halved, bounds
        it too.

    Returns
    -------
    model : transformers.PreTrainedModel
        ``AutoModel`` (the base model, no task head), float32, eager attention, eval mode.
    tokenizer : transformers tokenizer
        ``AutoTokenizer`` of the same folder.

    Raises
    ------
    ValueError
        The folder does not exist, is not a model (no config.json, no weights), has no
        tokenizer, holds an architecture transformers does not know (or a config it cannot
        build), or a model larger than the limit.
    """
    _require()
    import torch
    from transformers import CONFIG_MAPPING, AutoConfig, AutoModel, AutoTokenizer

    folder = _model_folder(path)
    model_type = _declared_model_type(folder)
    if model_type not in CONFIG_MAPPING:
        raise ValueError(f"the config.json of {folder} names model_type {model_type[:60]!r}, an "
                         "architecture this version of transformers does not know (attnviz "
                         "never runs code from a model folder)")
    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True,
                                            trust_remote_code=False)
        n_bytes = model_bytes(config)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"the config.json of {folder} does not describe a model transformers "
                         f"can build ({_first_line(exc)})") from None
    limit = min(int(max_bytes), _available_memory() // 2)
    if n_bytes > limit:
        raise ValueError(f"the model in {folder} needs about {n_bytes / 1024**3:.2f} GiB for "
                         f"its parameters in float32; at most {limit / 1024**3:.2f} GiB are "
                         "allowed (max_bytes, and half the memory this machine has free)")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True,
                                                  trust_remote_code=False)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"the tokenizer in {folder} cannot be loaded ({_first_line(exc)})") \
            from None
    try:
        model = AutoModel.from_pretrained(folder, config=config, local_files_only=True,
                                          trust_remote_code=False, attn_implementation="eager",
                                          dtype=torch.float32)
    except Exception as exc:
        # a damaged weights file raises whatever its reader raises (safetensors' own
        # SafetensorError, torch's UnpicklingError, OSError, ...): each is damaged weights
        raise ValueError(f"the weights in {folder} cannot be loaded ({_first_line(exc)})") \
            from None
    model.train(False)  # evaluation mode: no dropout (nn.Module.eval)
    return model, tokenizer


def _model_folder(path) -> str:
    """The folder as a string, refused unless it holds a config, weights and a tokenizer."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is not a folder; give the folder written by "
                         "model.save_pretrained(path)")
    names = {p.name for p in folder.iterdir()}
    if "config.json" not in names:
        raise ValueError(f"{str(folder)!r} is not a model folder: it has no config.json "
                         "(write one with model.save_pretrained(path))")
    if not names.intersection(WEIGHT_FILES):
        raise ValueError(f"{str(folder)!r} has a config.json but no weights (expected one of "
                         f"{', '.join(WEIGHT_FILES)})")
    if not names.intersection(TOKENIZER_FILES):
        raise ValueError(f"{str(folder)!r} has no tokenizer (expected one of "
                         f"{', '.join(TOKENIZER_FILES)}); save it there with "
                         "tokenizer.save_pretrained(path)")
    return str(folder)


def _declared_model_type(folder: str) -> str:
    """The ``model_type`` written in a folder's config.json, read as plain JSON."""
    path = os.path.join(folder, "config.json")
    if os.path.getsize(path) > MAX_CONFIG_BYTES:
        raise ValueError(f"the config.json of {folder} is {os.path.getsize(path):,} bytes; at "
                         f"most {MAX_CONFIG_BYTES:,} are read")
    try:
        with open(path, encoding="utf-8") as fp:
            config = json.load(fp)
    except (OSError, ValueError, RecursionError):
        raise ValueError(f"the config.json of {folder} is not valid JSON") from None
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise ValueError(f"the config.json of {folder} names no model_type (write it with "
                         "model.save_pretrained(path))")
    return config["model_type"]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def model_bytes(config) -> int:
    """Bytes of a model's parameters in float32 (as :func:`load_model` loads it), counted on
    torch's meta device: no memory taken, no weight read.

    Parameters
    ----------
    config : transformers.PretrainedConfig

    Returns
    -------
    int
        4 bytes per parameter of ``AutoModel.from_config(config)``.
    """
    import torch
    from transformers import AutoModel

    with torch.device("meta"):
        empty = AutoModel.from_config(config)
    return 4 * int(sum(p.numel() for p in empty.parameters()))


def _available_memory() -> int:
    """Bytes of memory available to new allocations (MemAvailable on Linux)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fp:
            for line in fp:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return MAX_MODEL_BYTES * 2


# ---------------------------------------------------------------------------------------------
# Capturing attention
# ---------------------------------------------------------------------------------------------

def capture(model, tokenizer=None, text=None, input_ids=None, attention_mask=None,
            token_type_ids=None, max_tokens: int = MAX_CAPTURE_TOKENS) -> Capture:
    """Run the model once and return every layer's and head's attention, per sequence.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        Any model whose forward accepts ``output_attentions`` (encoder or decoder).
    tokenizer : transformers tokenizer, optional
        Needed with ``text``; also gives the token labels.
    text : str, (str, str), list of str or list of (str, str), optional
        One text, one sentence pair, or a batch of either.
    input_ids : array-like of int of shape (t,) or (batch, t), optional
        Instead of ``text``.
    attention_mask : array-like of 0/1 of shape (batch, t), optional
        With ``input_ids``: 1 for a real token, 0 for padding (left or right).
    token_type_ids : array-like of int of shape (batch, t), optional
        With ``input_ids``: segments of sentence pairs.
    max_tokens : int
        The most tokens of one sequence (the dashboard shows up to MAX_CAPTURE_TOKENS).

    Returns
    -------
    Capture
        Float64 weights of shape (layers, heads, t_i, t_i) for each sequence, without padding.

    Raises
    ------
    ValueError
        Neither or both of text and input_ids, text without a tokenizer, a sequence longer
        than max_tokens or the model's positions, a batch beyond MAX_BATCH or
        MAX_CAPTURE_VALUES, or a model that returns no attention.
    """
    _require()
    import torch

    encoder = model.get_encoder() if hasattr(model, "get_encoder") else model
    if getattr(model.config, "is_encoder_decoder", False) and encoder is not model:
        raise ValueError(f"{type(model).__name__} is an encoder-decoder model; capture one "
                         "stack at a time: capture(model.get_encoder(), tokenizer, text=...)")
    inputs, types = _encode(model, tokenizer, text, input_ids, attention_mask, token_type_ids,
                            max_tokens)
    mask = inputs["attention_mask"]
    _check_size(model, mask)
    with _eager(model), torch.no_grad():
        out = model(**inputs, output_attentions=True, return_dict=True)
    layers = getattr(out, "attentions", None)
    if not layers:
        raise ValueError(f"the {type(model).__name__} returned no attention weights "
                         "(outputs.attentions is empty); capture reads self-attention of "
                         "encoder or decoder models")
    if len({tuple(a.shape) for a in layers}) != 1:
        raise ValueError(f"the layers of this {type(model).__name__} return attention of "
                         f"different shapes ({', '.join(str(tuple(a.shape)) for a in layers[:4])}"
                         ", ...); capture needs (batch, heads, t, t) in every layer")
    stacked = torch.stack([a.detach() for a in layers], dim=1)  # (batch, layers, heads, t, t)
    stacked = stacked.to(device="cpu", dtype=torch.float64).numpy()
    ids = inputs["input_ids"].cpu().numpy()
    types = None if types is None else types.cpu().numpy()
    keep = [np.flatnonzero(row) for row in mask.cpu().numpy()]
    return Capture(
        attentions=tuple(stacked[b][:, :, k][:, :, :, k] for b, k in enumerate(keep)),
        tokens=tuple(_tokens(tokenizer, ids[b, k]) for b, k in enumerate(keep)),
        input_ids=tuple(ids[b, k].astype(np.int64) for b, k in enumerate(keep)),
        token_type_ids=None if types is None else tuple(
            types[b, k].astype(np.int64) for b, k in enumerate(keep)),
        positions=tuple(k.astype(np.int64) for k in keep),
        config=json.loads(model.config.to_json_string(use_diff=False)),
        model_type=str(getattr(model.config, "model_type", "")),
        is_causal=is_causal(model),
    )


def is_causal(model) -> bool:
    """Whether the model's self-attention is causal (queries see only earlier keys).

    Decided, in this order, by:

    1. its attention modules' ``is_causal`` flags (cross-attention left out), which
       transformers' attention classes carry and set from the config (a BERT built as a
       decoder says True);
    2. a config built as a decoder (``is_decoder``);
    3. what transformers knows of the architecture: a model type with a causal-LM class and no
       masked-LM class is decoder-only, hence causal. BLOOM needs this: BloomAttention carries
       no flag and its config no ``is_decoder``. Encoders (BERT, RoBERTa, MPNet, DeBERTa, ...)
       have a masked-LM class; XLNet, which has none, attends both ways unless its config says
       ``attn_type="uni"``.
    """
    flags = [bool(m.is_causal) for m in model.modules()
             if isinstance(getattr(m, "is_causal", None), bool)
             and not getattr(m, "is_cross_attention", False)]
    if flags:
        return any(flags)
    config = model.config
    if getattr(config, "is_decoder", False):
        return True
    if getattr(config, "is_encoder_decoder", False) or getattr(config, "attn_type", None) == "bi":
        return False
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, MODEL_FOR_MASKED_LM_MAPPING

    kind = type(config)
    return kind in MODEL_FOR_CAUSAL_LM_MAPPING and kind not in MODEL_FOR_MASKED_LM_MAPPING


class _eager:
    """Context manager: the model runs with eager attention in eval mode (no attention
    dropout), and its attention implementation and training mode come back afterwards."""

    def __init__(self, model):
        self.model = model
        self.before = getattr(model.config, "_attn_implementation", None)
        self.training = bool(model.training)

    def __enter__(self):
        self._set("eager")
        self.model.train(False)  # evaluation mode: no dropout

    def __exit__(self, *exc):
        self.model.train(self.training)
        if self.before is not None and self.before != "eager":
            self._set(self.before)

    def _set(self, name: str) -> None:
        if hasattr(self.model, "set_attn_implementation"):
            self.model.set_attn_implementation(name)
        else:
            self.model.config._attn_implementation = name


def _encode(model, tokenizer, text, input_ids, attention_mask, token_type_ids,
            max_tokens: int) -> tuple[dict, Any]:
    """The forward's tensors (input_ids, attention_mask, ... of shape (batch, t), right-padded)
    and the segment ids (a tensor, or None without sentence pairs)."""
    import torch

    if (text is None) == (input_ids is None):
        raise ValueError("give either text (with its tokenizer) or input_ids, not both and not "
                         "neither")
    device = next(model.parameters()).device
    if text is not None:
        if tokenizer is None:
            raise ValueError("text needs the model's tokenizer: capture(model, tokenizer, "
                             "text=...)")
        ids, types = _tokenize(tokenizer, text)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        t = max(len(row) for row in ids)
        mask = [[1] * len(row) + [0] * (t - len(row)) for row in ids]
        ids = [row + [pad] * (t - len(row)) for row in ids]
        if types is not None:
            types = [row + [0] * (t - len(row)) for row in types]
    else:
        ids = _array(input_ids, "input_ids")
        if ids.ndim == 1:
            ids = ids[None]
        if ids.ndim != 2 or ids.dtype.kind not in "iu" or 0 in ids.shape:
            raise ValueError(f"input_ids must be integers of shape (t,) or (batch, t), got "
                             f"{ids.dtype} of shape {ids.shape}")
        mask = (np.ones_like(ids) if attention_mask is None
                else _array(attention_mask, "attention_mask"))
        mask = mask.reshape(ids.shape) if mask.size == ids.size else mask
        if mask.shape != ids.shape:
            raise ValueError(f"attention_mask has shape {mask.shape}; it must match input_ids "
                             f"{ids.shape}")
        types = None if token_type_ids is None else _array(token_type_ids, "token_type_ids")
        if types is not None and types.size != ids.size:
            raise ValueError(f"token_type_ids has shape {types.shape}; it must match input_ids "
                             f"{ids.shape}")
        types = None if types is None else types.reshape(ids.shape)
    inputs = {"input_ids": torch.as_tensor(np.asarray(ids), dtype=torch.long, device=device),
              "attention_mask": torch.as_tensor(np.asarray(mask), dtype=torch.long,
                                                device=device)}
    _check_lengths(model, inputs["attention_mask"], max_tokens)
    if types is None:
        return inputs, None
    types = torch.as_tensor(np.asarray(types), dtype=torch.long, device=device)
    # the model gets them as model(**tokenizer(a, b)) would give them; kept either way
    if token_type_ids is not None or "token_type_ids" in getattr(tokenizer, "model_input_names",
                                                                  ()):
        inputs["token_type_ids"] = types
    return inputs, types


def _array(values, name: str) -> np.ndarray:
    """A list, numpy array or torch tensor (on any device) as a numpy array."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    try:
        return np.asarray(values)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array (pad the sequences to one "
                         "length and give the attention_mask)") from None


def _tokenize(tokenizer, text) -> tuple[list[list[int]], list[list[int]] | None]:
    """Token ids of each text or pair (unpadded), and segment ids for pairs."""
    pair = isinstance(text, tuple)
    batch = [text] if isinstance(text, (str, tuple)) else list(text)
    if not batch:
        raise ValueError("text is an empty list; give at least one text")
    if len(batch) > MAX_BATCH:
        raise ValueError(f"text holds {len(batch)} sequences; at most {MAX_BATCH} are captured "
                         "in one call")
    pairs = [isinstance(x, tuple) for x in batch]
    pair = pair or any(pairs)
    for i, x in enumerate(batch):
        ok = (isinstance(x, tuple) and len(x) == 2 and all(isinstance(s, str) for s in x)) \
            if pair else isinstance(x, str)
        if not ok:
            raise ValueError(f"text item {i} is a {type(x).__name__}; give strings, or "
                             "(text_a, text_b) pairs of strings for every item")
        chars = sum(map(len, x)) if pair else len(x)
        if chars > 64 * MAX_CAPTURE_TOKENS:
            raise ValueError(f"text item {i} holds {chars:,} characters; at most "
                             f"{64 * MAX_CAPTURE_TOKENS:,} are tokenized")
    if pair:
        enc = tokenizer([a for a, _ in batch], [b for _, b in batch],
                        return_token_type_ids=True)
        return [list(r) for r in enc["input_ids"]], [list(r) for r in enc["token_type_ids"]]
    enc = tokenizer(batch)
    return [list(r) for r in enc["input_ids"]], None


def _check_lengths(model, mask, max_tokens: int) -> None:
    """Refuse sequences longer than max_tokens or the model's position table."""
    lengths = mask.sum(dim=1).tolist()
    longest = int(max(lengths))
    if min(lengths) == 0:
        raise ValueError("a sequence of the batch has no tokens (its attention_mask is all 0)")
    if mask.shape[0] > MAX_BATCH:
        raise ValueError(f"the batch holds {mask.shape[0]} sequences; at most {MAX_BATCH} are "
                         "captured in one call")
    if longest > max_tokens:
        raise ValueError(f"a sequence holds {longest} tokens; at most {max_tokens} are "
                         "captured (max_tokens) — cut the text")
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and mask.shape[1] > positions:
        raise ValueError(f"a sequence holds {mask.shape[1]} tokens; this model has "
                         f"{positions} positions (max_position_embeddings) — cut the text")


def _check_size(model, mask) -> None:
    """Refuse a capture whose weights would exceed MAX_CAPTURE_VALUES."""
    config = model.config
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", 1)
    heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", 1)
    batch, t = mask.shape
    values = int(batch) * int(layers) * int(heads) * int(t) ** 2
    if values > MAX_CAPTURE_VALUES:
        raise ValueError(f"this capture would hold {values:,} weights (batch {batch} · "
                         f"{layers} layers · {heads} heads · {t}²); at most "
                         f"{MAX_CAPTURE_VALUES:,} are kept — capture fewer or shorter texts")


def _tokens(tokenizer, ids: NDArray) -> tuple[str, ...]:
    if tokenizer is None:
        return tuple(str(int(i)) for i in ids)
    return tuple(str(t) for t in tokenizer.convert_ids_to_tokens([int(i) for i in ids]))


# ---------------------------------------------------------------------------------------------
# Saving for the dashboard
# ---------------------------------------------------------------------------------------------

def capture_arrays(cap: Capture, sequence: int = 0, dtype=np.float32,
                   layers=None) -> dict[str, np.ndarray]:
    """The arrays of one sequence's file: ``attention``, ``tokens`` and METADATA_KEYS.

    Parameters
    ----------
    cap : Capture
    sequence : int
        Which sequence of the batch.
    dtype : numpy float dtype
        Of the saved weights: float32 (half the size; a float32 model's own precision) or
        float64.
    layers : sequence of int, optional
        The layers to keep (all by default); their indices are saved as ``layers``.
    """
    if not 0 <= sequence < len(cap):
        raise ValueError(f"sequence {sequence} does not exist; the capture holds {len(cap)} "
                         f"(0 to {len(cap) - 1})")
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {np.dtype(dtype)}")
    kept = np.arange(cap.layers) if layers is None else np.asarray(layers)
    if kept.ndim != 1 or kept.size == 0 or kept.dtype.kind not in "iu" \
            or not np.all((kept >= 0) & (kept < cap.layers)):
        raise ValueError(f"layers must list layer indices from 0 to {cap.layers - 1}, got "
                         f"{str(np.ravel(kept).tolist())[:60]}")
    weights = cap.attentions[sequence][kept].astype(dtype)  # (len(kept), heads, t, t)
    attention_io.as_attention(weights)  # the loader's own checks: shape, limits, values
    arrays = {
        "attention": weights,
        "tokens": np.array(cap.tokens[sequence], dtype=str),
        "attnviz_capture": np.array(CAPTURE_FORMAT, dtype=np.int64),
        "config": np.array(json.dumps(cap.config, sort_keys=True)),
        "model_type": np.array(cap.model_type),
        "is_causal": np.array(cap.is_causal),
        "sequence": np.array(sequence, dtype=np.int64),
        "layers": kept.astype(np.int64),
        "input_ids": cap.input_ids[sequence],
    }
    if cap.token_type_ids is not None:
        arrays["token_type_ids"] = cap.token_type_ids[sequence]
    return arrays


def save_capture(cap: Capture, path: str | os.PathLike, sequence: int = 0,
                 dtype=np.float32, layers=None) -> int:
    """Write one sequence of a capture as an ``.npz`` that "Your own attention" uploads.

    Parameters
    ----------
    cap : Capture
    path : str or PathLike
        The file to write (``.npz``, compressed).
    sequence : int
        Which sequence of the batch (one file per sequence).
    dtype : numpy float dtype
        float32 (default) or float64 weights.
    layers : sequence of int, optional
        Save only these layers (a 12-layer encoder at 128 tokens is ~8 MB in float32, beyond
        the 5 MB an upload may be).

    Returns
    -------
    int
        The file's size in bytes.

    Raises
    ------
    ValueError
        An unknown sequence or layer, weights beyond the upload limits, or a file larger than
        an upload may be (MAX_UPLOAD_BYTES) — nothing is written then.
    """
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **capture_arrays(cap, sequence, dtype, layers))
    data = buffer.getvalue()
    if len(data) > limits.MAX_UPLOAD_BYTES:
        smaller = "float32 weights, " if np.dtype(dtype) == np.float64 else ""
        raise ValueError(f"the file would be {len(data):,} bytes; an upload may be at most "
                         f"{limits.MAX_UPLOAD_BYTES:,} bytes — save {smaller}fewer layers "
                         "(layers=...) or capture a shorter text")
    Path(path).write_bytes(data)
    return len(data)
