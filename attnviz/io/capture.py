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
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.io import attention_io, model_size
from attnviz.scenarios import limits

Array = NDArray[np.float64]

MAX_CAPTURE_TOKENS = limits.MAX_UPLOAD_T  # tokens of one sequence: what the dashboard shows
MAX_BATCH = 64  # sequences in one capture call
MAX_CAPTURE_VALUES = 2**25  # batch·layers·heads·t·t kept as float64 (256 MB)
MAX_MODEL_BYTES = 2 * 1024**3  # parameters and buffers of a model load_model accepts (2 GiB)
MAX_CONFIG_BYTES = 1024 * 1024  # a model folder's config.json
CAPTURE_FORMAT = 1  # version of the saved file's layout (the ``attnviz_capture`` array)
METADATA_KEYS = ("attnviz_capture", "config", "model_type", "is_causal", "sequence", "layers",
                 "input_ids", "token_type_ids")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json",
                   "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")
HEADS = ("base", "causal_lm")  # what a load builds: AutoModel, or AutoModelForCausalLM


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
                          "them, in the attnviz folder, with: .venv/bin/python -m pip "
                          "install '.[models]'") from None


# ---------------------------------------------------------------------------------------------
# Loading a saved model, offline
# ---------------------------------------------------------------------------------------------

def load_model(path: str | os.PathLike, max_bytes: int = MAX_MODEL_BYTES, *,
               root: str | os.PathLike | None = None, head: str = "base"):
    """Load a ``save_pretrained`` folder (model and tokenizer) offline, with eager attention.

    Nothing is fetched from the Hub (``local_files_only=True``) and no code from the folder is
    run (``trust_remote_code`` stays off). Before anything is built (:func:`check_model`):
    every file transformers may read from the folder is a regular file (no pipe, device or
    socket; inside ``root`` when given), tokenizer files are at most MAX_TOKENIZER_BYTES, every
    size the config states is checked by arithmetic (:mod:`attnviz.io.model_size`), then the
    parameters and buffers are counted on torch's meta device. The load holds its bytes in the
    process-wide budget (:func:`loading_budget`) while it runs; a server that keeps the model
    for a while uses :func:`loaded_model`, which holds them until its block ends.

    Parameters
    ----------
    path : str or PathLike
        The folder written by ``model.save_pretrained(path)`` and
        ``tokenizer.save_pretrained(path)`` (relative to ``root`` when root is given).
    max_bytes : int
        The most bytes of parameters and buffers accepted; the machine's available memory,
        halved, bounds it too.
    root : str or PathLike, optional
        A folder nothing may be read outside of: the folder and every file it holds must
        resolve inside it (a Hugging Face cache's snapshot files link into the cache's
        ``blobs``, inside the cache). A folder outside it is refused with the same sentence
        whether it exists or not.
    head : {"base", "causal_lm"}
        "base": ``AutoModel`` (no task head). "causal_lm": ``AutoModelForCausalLM``, the model
        with the language-model head it predicts the next token with (for generation); its
        bytes are counted with the head, and a folder whose weights lack a part of it (a base
        model saved alone: transformers would draw the part at random) is refused.

    Returns
    -------
    model : transformers.PreTrainedModel
        ``AutoModel`` (the base model, no task head) or ``AutoModelForCausalLM`` (``head``),
        float32, eager attention, eval mode.
    tokenizer : transformers tokenizer
        ``AutoTokenizer`` of the same folder.

    Raises
    ------
    ValueError
        Each in a sentence: the folder does not exist, lies outside root, is not a model (no
        config.json, no weights), has no tokenizer, holds a file that is not a regular file, a
        tokenizer file over its cap, an architecture transformers does not know, a size field
        that is not a whole number in its range, a config transformers cannot build, damaged
        weights, or a model larger than the limit; with head="causal_lm", an architecture
        without a causal language-model class or weights without its head.
        :class:`LoadsBusy` (a ValueError) when the loads already in flight hold the budget.
    """
    plan = _plan(path, max_bytes, root, head)
    with loading_budget(plan.n_bytes):
        return _build(plan)


@contextmanager
def loaded_model(path: str | os.PathLike, max_bytes: int = MAX_MODEL_BYTES, *,
                 root: str | os.PathLike | None = None,
                 head: str = "base") -> Iterator[tuple[Any, Any]]:
    """:func:`load_model` as a context manager: ``with loaded_model(path) as (model,
    tokenizer): ...``. The model's bytes stay reserved in the process-wide budget until the
    block ends, so concurrent loads count it while it is in use; keep no reference to the model
    after the block. Parameters and refusals as :func:`load_model`."""
    plan = _plan(path, max_bytes, root, head)
    with loading_budget(plan.n_bytes):
        yield _build(plan)


def check_model(path: str | os.PathLike, max_bytes: int = MAX_MODEL_BYTES, *,
                root: str | os.PathLike | None = None, head: str = "base") -> int:
    """Everything :func:`load_model` checks before it reads a weight or a tokenizer file, in
    milliseconds; returns the bytes the model's parameters and buffers take in float32.
    Parameters and refusals as :func:`load_model` (the budget aside)."""
    return _plan(path, max_bytes, root, head).n_bytes


# ---------------------------------------------------------------------------------------------
# One budget for the loads in flight
# ---------------------------------------------------------------------------------------------

LOADS_BUDGET_BYTES = MAX_MODEL_BYTES  # the loads in flight in one process, together
_budget_lock = threading.Lock()
_in_flight = 0  # bytes reserved by the loads in flight


class LoadsBusy(ValueError):
    """The loads in flight hold the process-wide budget: try again in a moment."""


def bytes_in_flight() -> int:
    """Bytes reserved now by the loads in flight in this process."""
    with _budget_lock:
        return _in_flight


@contextmanager
def loading_budget(n_bytes: int) -> Iterator[None]:
    """Reserve ``n_bytes`` of the process-wide budget while the block runs.

    Every user of a server shares one process: each load judged alone (max_bytes, half the free
    memory) lets a few at once take the memory of all. A load alone is always admitted (its own
    limit judged it); loads at the same time must fit in :data:`LOADS_BUDGET_BYTES` together.
    The reservation is made before the load starts and given back when the block ends, however
    it ends. A refusal, not a queue: the page answers at once.

    Raises
    ------
    LoadsBusy
        Saying how much the loads in flight hold and to try again in a moment.
    """
    global _in_flight
    n_bytes = max(0, int(n_bytes))
    with _budget_lock:
        held = _in_flight
        if held > 0 and held + n_bytes > LOADS_BUDGET_BYTES:
            raise LoadsBusy(f"other model loads on this server hold {_gib(held)} GiB of the "
                            f"{_gib(LOADS_BUDGET_BYTES)} GiB that loads may take at once, and "
                            f"this model needs {_gib(n_bytes)} GiB; try again in a moment")
        _in_flight += n_bytes
    try:
        yield
    finally:
        with _budget_lock:
            _in_flight -= n_bytes


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / 1024**3:.2f}"


# ---------------------------------------------------------------------------------------------
# What a load reads, checked before it reads it
# ---------------------------------------------------------------------------------------------

MAX_TOKENIZER_BYTES = 32 * 1024**2  # one tokenizer file (Llama 3's tokenizer.json: ~9 MB)
MAX_INDEX_BYTES = 8 * 1024**2  # a sharded checkpoint's index
MAX_FOLDER_ENTRIES = 1000  # a model folder holds a few dozen files
MAX_PATH_CHARS = 4096  # a path longer than Linux's PATH_MAX names nothing
MAX_SHOWN_CHARS = 80  # of a path quoted in a message
CHAT_TEMPLATE_DIR = "additional_chat_templates"  # the subfolder AutoTokenizer reads *.jinja from
TOKENIZER_READS = TOKENIZER_FILES + ("merges.txt", "special_tokens_map.json",
                                     "added_tokens.json", "chat_template.jinja",
                                     "chat_template.json", "tekken.json")
READ_NAMES = ("config.json",) + WEIGHT_FILES + TOKENIZER_READS


@dataclass(frozen=True)
class _Plan:
    """A folder that passed every check, ready to load."""

    folder: str  # as transformers gets it
    shown: str  # as messages name it
    config: Any  # transformers.PretrainedConfig
    n_bytes: int  # float32 parameters and buffers
    head: str = "base"  # one of HEADS


def _plan(path, max_bytes: int, root, head: str = "base") -> _Plan:
    """Every check before a weight or tokenizer file is read: the folder and its files, the
    config as plain JSON, its sizes by arithmetic, then counted on the meta device."""
    _require()
    from transformers import CONFIG_MAPPING, MODEL_FOR_CAUSAL_LM_MAPPING

    if head not in HEADS:
        raise ValueError(f"head must be one of {', '.join(HEADS)}, got {str(head)[:40]!r}")

    folder, shown, base = _model_folder(path, root)
    _model_files(folder, shown, base)
    raw = _read_config(folder, shown)
    model_type = _declared_model_type(raw, shown)
    if model_type not in CONFIG_MAPPING:
        raise ValueError(f"the config.json of {shown} names model_type {model_type[:60]!r}, an "
                         "architecture this version of transformers does not know (attnviz "
                         "never runs code from a model folder)")
    limit = min(int(max_bytes), _available_memory() // 2)
    _check_sizes(raw, shown, limit)
    try:
        config = CONFIG_MAPPING[_config_type(raw)].from_dict(raw, name_or_path=folder)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"the config.json of {shown} does not describe a model transformers "
                         f"can build ({_first_line(exc)})") from None
    _check_sizes(config.to_dict(), shown, limit)  # again, with transformers' defaults filled in
    if head == "causal_lm" and (type(config) not in MODEL_FOR_CAUSAL_LM_MAPPING
                                or getattr(config, "is_encoder_decoder", False)):
        raise ValueError(f"the model in {shown} ({config.model_type}) has no causal "
                         "language-model class in transformers: it does not predict the next "
                         "token")
    try:
        n_bytes = model_bytes(config, head=head)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RuntimeError) as exc:
        raise ValueError(f"the config.json of {shown} does not describe a model transformers "
                         f"can build ({_first_line(exc)})") from None
    if n_bytes > limit:
        raise ValueError(f"the model in {shown} needs about {_gib(n_bytes)} GiB for its "
                         f"parameters in float32 and its buffers; at most {_gib(limit)} GiB are "
                         "allowed (max_bytes, and half the memory this machine has free)")
    return _Plan(folder=folder, shown=shown, config=config, n_bytes=n_bytes, head=head)


def _build(plan: _Plan):
    """The tokenizer and the model of a checked folder, float32, eager, evaluation mode."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(plan.folder, config=plan.config,
                                                  local_files_only=True,
                                                  trust_remote_code=False)
    except Exception as exc:
        # a planted tokenizer file raises whatever its parser raises: each is a bad tokenizer
        raise ValueError(f"the tokenizer in {plan.shown} cannot be loaded "
                         f"({_first_line(exc)})") from None
    auto = AutoModelForCausalLM if plan.head == "causal_lm" else AutoModel
    try:
        model, info = auto.from_pretrained(plan.folder, config=plan.config,
                                           local_files_only=True, trust_remote_code=False,
                                           attn_implementation="eager", dtype=torch.float32,
                                           output_loading_info=True)
    except Exception as exc:
        # a damaged weights file raises whatever its reader raises (safetensors' own
        # SafetensorError, torch's UnpicklingError, OSError, ...): each is damaged weights
        raise ValueError(f"the weights in {plan.shown} cannot be loaded "
                         f"({_first_line(exc)})") from None
    missing = sorted(info.get("missing_keys", ())) if plan.head == "causal_lm" else []
    if missing:  # transformers would draw them at random: the predictions would not be its own
        raise ValueError(f"the weights in {plan.shown} lack parts of the language-model head "
                         f"({', '.join(missing[:3])[:120]}; saved as a base model?): its "
                         "next-token predictions would be random — save it with "
                         "AutoModelForCausalLM")
    model.train(False)  # evaluation mode: no dropout (nn.Module.eval)
    return model, tokenizer


def _shown(text: str) -> str:
    """A path quoted for a message: at most MAX_SHOWN_CHARS, its middle cut."""
    if len(text) > MAX_SHOWN_CHARS:
        half = (MAX_SHOWN_CHARS - 1) // 2
        text = f"{text[:half]}…{text[-half:]}"
    return repr(text)


def _path_text(path, what: str) -> str:
    """A path given as str, bytes or PathLike as text, refused in a sentence when it cannot
    name a file (not a path, a NUL character, longer than any path)."""
    try:
        text = os.fsdecode(os.fspath(path))
    except (TypeError, ValueError, UnicodeError):
        raise ValueError(f"{what} must be a path, got {type(path).__name__}") from None
    if "\x00" in text:
        raise ValueError(f"{what} {_shown(text)} holds a NUL character; no path does")
    if len(text) > MAX_PATH_CHARS:
        raise ValueError(f"{what} is {len(text):,} characters long; a path has at most "
                         f"{MAX_PATH_CHARS:,}")
    return text


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return ""  # inside nothing


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _model_folder(path, root=None) -> tuple[str, str, str | None]:
    """The folder (``~`` expanded; joined to root when given), how messages name it, and the
    root resolved; refused unless it is a folder, inside root when root is given."""
    text = _path_text(path, "the model folder")
    shown = _shown(text)
    folder = os.path.expanduser(text)  # unlike Path.expanduser, never raises (~nosuchuser)
    base = None
    if root is not None:
        base = _realpath(os.path.expanduser(_path_text(root, "the models folder")))
        folder = os.path.join(base, folder)
        if not base or not _inside(_realpath(folder), base):
            # the same sentence whether the path exists or not: nothing is told about it
            raise ValueError(f"{shown} is not a folder of the models folder; only model "
                             "folders inside it are opened")
    try:
        is_folder = stat.S_ISDIR(os.stat(folder).st_mode)
    except (OSError, ValueError):
        is_folder = False
    if not is_folder:
        raise ValueError(f"{shown} is not a folder; give the folder written by "
                         "model.save_pretrained(path)")
    return folder, shown, base


def _model_files(folder: str, shown: str, root: str | None) -> dict[str, int]:
    """Name -> size of the files of the folder (and of its chat-template subfolder), refused
    unless every one is a regular file inside root, the config, weights and a tokenizer are
    there, the tokenizer files are within their cap and a sharded checkpoint's index names
    only files of the folder."""
    sizes = _regular_files(folder, shown, root)
    templates = os.path.join(folder, CHAT_TEMPLATE_DIR)
    if os.path.isdir(templates):
        sizes |= {f"{CHAT_TEMPLATE_DIR}/{name}": size
                  for name, size in _regular_files(templates, shown, root).items()}
    if "config.json" not in sizes:
        raise ValueError(f"{shown} is not a model folder: it has no config.json "
                         "(write one with model.save_pretrained(path))")
    if not sizes.keys() & set(WEIGHT_FILES):
        raise ValueError(f"{shown} has a config.json but no weights (expected one of "
                         f"{', '.join(WEIGHT_FILES)})")
    if not sizes.keys() & set(TOKENIZER_FILES):
        raise ValueError(f"{shown} has no tokenizer (expected one of "
                         f"{', '.join(TOKENIZER_FILES)}); save it there with "
                         "tokenizer.save_pretrained(path)")
    for name, size in sizes.items():
        if _is_tokenizer_file(name) and size > MAX_TOKENIZER_BYTES:
            raise ValueError(f"the tokenizer file {_shown(name)} in {shown} is {size:,} bytes; "
                             f"at most {MAX_TOKENIZER_BYTES:,} are read (Llama 3's "
                             "tokenizer.json is about 9 MB)")
    for index in (n for n in WEIGHT_FILES if n.endswith(".index.json") and n in sizes):
        _check_index(folder, shown, index, sizes)
    return sizes


def _regular_files(folder: str, shown: str, root: str | None) -> dict[str, int]:
    """Name -> size of each file of one folder, links followed; subfolders skipped and links
    to nothing skipped (transformers sees no file there either)."""
    found = {}
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_FOLDER_ENTRIES:
                    raise ValueError(f"{shown} holds more than {MAX_FOLDER_ENTRIES:,} entries; "
                                     "a model folder holds a few dozen files")
                try:
                    info = os.stat(entry.path)  # stat opens nothing: a FIFO cannot block it
                except (OSError, ValueError):
                    continue
                if stat.S_ISDIR(info.st_mode) and entry.name not in READ_NAMES:
                    continue
                if not stat.S_ISREG(info.st_mode):
                    raise ValueError(f"{_shown(entry.name)} in {shown} is not a regular file "
                                     "(a folder, pipe, device or socket); attnviz opens only "
                                     "regular files")
                if root is not None and not _inside(_realpath(entry.path), root):
                    raise ValueError(f"{_shown(entry.name)} in {shown} leads outside the "
                                     "models folder; every file of a model must lie inside it")
                found[entry.name] = info.st_size
    except OSError as exc:
        raise ValueError(f"{shown} cannot be read ({exc.strerror or 'no access'})") from None
    return found


def _is_tokenizer_file(name: str) -> bool:
    return (name in TOKENIZER_READS or name.startswith(("tokenizer", CHAT_TEMPLATE_DIR))
            or name.endswith((".tiktoken", ".jinja")))


def _check_index(folder: str, shown: str, index: str, sizes: dict[str, int]) -> None:
    """A sharded checkpoint's index names only files of the folder itself."""
    data = _read_json(os.path.join(folder, index), f"the {index} of {shown}", MAX_INDEX_BYTES)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict):
        raise ValueError(f"the {index} of {shown} has no weight_map; write the weights with "
                         "model.save_pretrained(path)")
    for shard in set(map(str, weight_map.values())):
        if "/" in shard or os.sep in shard or shard not in sizes:
            raise ValueError(f"the {index} of {shown} names the weights file {_shown(shard)}, "
                             "which is not a file of that folder")


def _read_regular(path: str, cap: int) -> tuple[bytes | None, int]:
    """(bytes, size) of a regular file, bytes None when it holds more than ``cap``. Opened
    without blocking and checked on the open descriptor, so a pipe or device put in its place
    after the listing is refused, never waited on."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > cap:
            return None, info.st_size
        chunks, left = [], cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return (None if len(data) > cap else data), len(data)
    finally:
        os.close(fd)


def _read_json(path: str, what: str, cap: int):
    """A JSON file read whole, at most ``cap`` bytes, refused in sentences."""
    try:
        data, size = _read_regular(path, cap)
    except OSError:
        raise ValueError(f"{what} cannot be read as a regular file") from None
    if data is None:
        raise ValueError(f"{what} is {size:,} bytes; at most {cap:,} are read")
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ValueError(f"{what} is not valid JSON") from None


def _read_config(folder: str, shown: str) -> dict:
    """A folder's config.json as plain JSON (MAX_CONFIG_BYTES at most)."""
    return _read_json(os.path.join(folder, "config.json"), f"the config.json of {shown}",
                      MAX_CONFIG_BYTES)


def _declared_model_type(config, shown: str) -> str:
    """The ``model_type`` a config.json (read as plain JSON) names."""
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise ValueError(f"the config.json of {shown} names no model_type (write it with "
                         "model.save_pretrained(path))")
    return config["model_type"]


def _config_type(raw: dict) -> str:
    """The config class's model_type, as AutoConfig picks it (a "mistral" config with
    layer_types is a Ministral one)."""
    if raw["model_type"] == "mistral" and "layer_types" in raw:
        return "ministral"
    return raw["model_type"]


def _check_sizes(config: dict, shown: str, limit: int) -> None:
    """Every size field sane, and the arithmetic lower bound within the limit."""
    model_size.check_fields(config)
    estimate = model_size.estimate_bytes(config)
    if estimate.n_bytes > limit:
        raise ValueError(f"the model in {shown} needs at least {_gib(estimate.n_bytes)} GiB for "
                         f"its parameters in float32 and its buffers ({estimate.largest}: "
                         f"{_gib(estimate.largest_bytes)} GiB), counted from the sizes its "
                         f"config.json states; at most {_gib(limit)} GiB are allowed "
                         "(max_bytes, and half the memory this machine has free)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def model_bytes(config, head: str = "base") -> int:
    """Bytes of a model's parameters in float32 (as :func:`load_model` loads it) and of its
    buffers (causal masks, rotary frequencies, ...), counted on torch's meta device: no memory
    taken, no weight read.

    Parameters
    ----------
    config : transformers.PretrainedConfig
    head : {"base", "causal_lm"}
        Count ``AutoModel`` or ``AutoModelForCausalLM`` (with its language-model head).

    Returns
    -------
    int
        4 bytes per parameter of ``AutoModel.from_config(config)`` (or the causal LM's), plus
        each buffer's bytes.

    Raises
    ------
    ValueError
        A size field of the config that is not a whole number in its range
        (:func:`attnviz.io.model_size.check_fields`), checked first: building a model of a
        million layers would take most of an hour even on the meta device.
    """
    import torch
    from transformers import AutoModel, AutoModelForCausalLM

    model_size.check_fields(config.to_dict())
    with torch.device("meta"):
        empty = (AutoModelForCausalLM if head == "causal_lm" else AutoModel).from_config(config)
    return (4 * int(sum(p.numel() for p in empty.parameters()))
            + int(sum(b.numel() * b.element_size() for b in empty.buffers())))


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
        raise ValueError(f"{type(model).__name__} is an encoder-decoder model; capture its "
                         "three kinds of attention with capture_seq2seq(model, tokenizer, "
                         "source=..., target=...), or one stack: capture(model.get_encoder(), "
                         "tokenizer, text=...)")
    inputs, types = _encode(model, tokenizer, text, input_ids, attention_mask, token_type_ids,
                            max_tokens)
    mask = inputs["attention_mask"]
    _check_size(model, mask)
    with EagerAttention(model), torch.no_grad():
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


# ---------------------------------------------------------------------------------------------
# Encoder–decoder models: three kinds of attention
# ---------------------------------------------------------------------------------------------

#: The attention kinds of an encoder–decoder model, as :class:`Seq2SeqCapture` names them.
SEQ2SEQ_KINDS = ("encoder", "decoder", "cross")


@dataclass(frozen=True, eq=False)
class Seq2SeqCapture:
    """Every layer's and head's attention of an encoder–decoder model (T5, BART, ...) for one
    source text and one target text read by the decoder (teacher forcing).

    Attributes
    ----------
    encoder : ndarray of shape (encoder layers, heads, t_s, t_s), float64
        The encoder's self-attention over the source.
    decoder : ndarray of shape (decoder layers, heads, t, t), float64
        The decoder's causal self-attention over its input.
    cross : ndarray of shape (decoder layers, heads, t, t_s), float64
        The decoder's cross-attention: target queries (rows) over source keys (columns).
    source_tokens, target_tokens : tuple of str
        The encoder's tokens, and the decoder's input: the decoder start token, then the
        target's tokens.
    source_ids, target_ids : ndarray of shape (t_s,) and (t,), int64
    config : dict
        The model's configuration (JSON-safe).
    model_type : str
        ``config.model_type``, e.g. "t5", "bart".
    """

    encoder: Array
    decoder: Array
    cross: Array
    source_tokens: tuple[str, ...]
    target_tokens: tuple[str, ...]
    source_ids: NDArray[np.int64]
    target_ids: NDArray[np.int64]
    config: dict[str, Any]
    model_type: str

    def kind(self, kind: str) -> Array:
        """The weights of one kind of :data:`SEQ2SEQ_KINDS`."""
        if kind not in SEQ2SEQ_KINDS:
            raise ValueError(f"kind must be one of {', '.join(SEQ2SEQ_KINDS)}, got "
                             f"{str(kind)[:40]!r}")
        return getattr(self, kind)


def is_encoder_decoder(model) -> bool:
    """True for a model with an encoder and a decoder that attends to it (T5, BART, ...)."""
    return bool(getattr(model.config, "is_encoder_decoder", False)) \
        and hasattr(model, "get_encoder") and hasattr(model, "get_decoder")


def decoder_input_ids(model, target_ids) -> list[int]:
    """What the decoder reads for a target under teacher forcing: the model's decoder start
    token (``config.decoder_start_token_id``, T5's pad, BART's ``</s>``), then the target's
    tokens; decoder row i is the step that predicts target token i."""
    start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(model.config, "pad_token_id", None)
    if start is None:
        raise ValueError(f"the {model.config.model_type} config names no decoder_start_token_id "
                         "(nor a pad_token_id): the decoder's first input is unknown")
    return [int(start)] + [int(i) for i in target_ids]


def seq2seq_inputs(model, tokenizer, source, target, source_ids, target_ids,
                   max_tokens: int) -> dict:
    """The forward's tensors of one source and one target (batch of 1, no padding)."""
    import torch

    if (source is None) == (source_ids is None):
        raise ValueError("give either source (with its tokenizer) or source_ids, not both and "
                         "not neither")
    if (target is None) != (source is None) or (target_ids is None) != (source_ids is None):
        raise ValueError("give source and target as texts, or source_ids and target_ids")
    if source is not None:
        if tokenizer is None:
            raise ValueError("texts need the model's tokenizer: capture_seq2seq(model, "
                             "tokenizer, source=..., target=...)")
        for name, value in (("source", source), ("target", target)):
            if not isinstance(value, str):
                raise ValueError(f"{name} must be one text (a str), got {type(value).__name__}")
            if len(value) > 64 * MAX_CAPTURE_TOKENS:
                raise ValueError(f"the {name} holds {len(value):,} characters; at most "
                                 f"{64 * MAX_CAPTURE_TOKENS:,} are tokenized")
        if not source.strip():
            raise ValueError("the source text is empty; give the text the encoder reads")
        source_ids = tokenizer(source)["input_ids"]
        target_ids = tokenizer(text_target=target)["input_ids"] if target.strip() else []
    ids = {}
    for name, values in (("source_ids", source_ids), ("target_ids", target_ids)):
        arr = _array(values, name)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise ValueError(f"{name} must be one sequence of token ids (integers of shape "
                             f"(t,)), got {arr.dtype} of shape {arr.shape}")
        ids[name] = [int(i) for i in arr]
    enc, dec = ids["source_ids"], decoder_input_ids(model, ids["target_ids"])
    if not enc:
        raise ValueError("the source has no tokens; give the text the encoder reads")
    positions = getattr(model.config, "max_position_embeddings", None)
    for name, row in (("source", enc), ("decoder input", dec)):
        if len(row) > max_tokens:
            raise ValueError(f"the {name} holds {len(row)} tokens; at most {max_tokens} are "
                             "captured (max_tokens) — cut the text")
        if isinstance(positions, int) and len(row) > positions:
            raise ValueError(f"the {name} holds {len(row)} tokens; this model has {positions} "
                             "positions (max_position_embeddings) — cut the text")
    vocab = getattr(model.config, "vocab_size", None)
    if isinstance(vocab, int) and any(not 0 <= i < vocab for i in enc + dec):
        raise ValueError(f"a token id lies outside the model's vocabulary (0 to {vocab - 1})")
    device = next(model.parameters()).device
    return {"input_ids": torch.tensor([enc], dtype=torch.long, device=device),
            "attention_mask": torch.ones((1, len(enc)), dtype=torch.long, device=device),
            "decoder_input_ids": torch.tensor([dec], dtype=torch.long, device=device),
            "use_cache": False}


def capture_seq2seq(model, tokenizer=None, source: str | None = None,
                    target: str | None = None, *, source_ids=None, target_ids=None,
                    max_tokens: int = MAX_CAPTURE_TOKENS) -> Seq2SeqCapture:
    """Run an encoder–decoder model once and return its three kinds of attention.

    The decoder reads the target by teacher forcing (:func:`decoder_input_ids`: the start
    token, then the target's tokens); the forward pass is eager, in evaluation mode, without
    gradients or a cache, as :func:`capture`'s. The weights are Hugging Face's own
    ``encoder_attentions``, ``decoder_attentions`` and ``cross_attentions``, as float64.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        An encoder–decoder model (``config.is_encoder_decoder``): T5, BART, MarianMT, mBART,
        ... (the base model or one with its language-model head).
    tokenizer : transformers tokenizer, optional
        Needed with texts; gives the token labels (the target is tokenized as a target,
        ``tokenizer(text_target=...)``).
    source, target : str, optional
        The text the encoder reads and the text the decoder is fed (may be empty: the
        decoder then reads its start token alone).
    source_ids, target_ids : array-like of int of shape (t,), optional
        Instead of the texts.
    max_tokens : int
        The most tokens of the source and of the decoder's input.

    Returns
    -------
    Seq2SeqCapture

    Raises
    ------
    ValueError
        A model that is not an encoder–decoder one, texts and ids mixed, texts without a
        tokenizer, an empty source, more tokens than max_tokens or the model's positions,
        more weights than MAX_CAPTURE_VALUES, or a model that returns no attention.
    """
    _require()
    import torch

    if not is_encoder_decoder(model):
        raise ValueError(f"{type(model).__name__} is not an encoder-decoder model; capture it "
                         "with capture(model, tokenizer, text=...)")
    inputs = seq2seq_inputs(model, tokenizer, source, target, source_ids, target_ids,
                            max_tokens)
    config = model.config
    heads = max(int(getattr(config, "num_attention_heads", None) or 1),
                int(getattr(config, "decoder_attention_heads", None) or 1))
    t_s, t = inputs["input_ids"].shape[1], inputs["decoder_input_ids"].shape[1]
    n_enc = int(getattr(config, "encoder_layers", None) or config.num_hidden_layers)
    n_dec = int(getattr(config, "decoder_layers", None) or getattr(config, "num_decoder_layers",
                                                                   None) or n_enc)
    values = heads * (n_enc * t_s * t_s + n_dec * (t * t + t * t_s))
    if values > MAX_CAPTURE_VALUES:
        raise ValueError(f"this capture would hold {values:,} weights; at most "
                         f"{MAX_CAPTURE_VALUES:,} are kept — capture shorter texts")
    with EagerAttention(model), torch.no_grad():
        out = model(**inputs, output_attentions=True, return_dict=True)
    kinds = {}
    for kind, name in (("encoder", "encoder_attentions"), ("decoder", "decoder_attentions"),
                       ("cross", "cross_attentions")):
        layers = getattr(out, name, None)
        if not layers:
            raise ValueError(f"the {type(model).__name__} returned no {name}; capture_seq2seq "
                             "reads encoder-decoder models that return their attention")
        stacked = torch.stack([a.detach()[0] for a in layers])  # (layers, heads, t_q, t_k)
        kinds[kind] = stacked.to(device="cpu", dtype=torch.float64).numpy()
    enc = inputs["input_ids"][0].cpu().numpy().astype(np.int64)
    dec = inputs["decoder_input_ids"][0].cpu().numpy().astype(np.int64)
    return Seq2SeqCapture(
        encoder=kinds["encoder"], decoder=kinds["decoder"], cross=kinds["cross"],
        source_tokens=_tokens(tokenizer, enc), target_tokens=_tokens(tokenizer, dec),
        source_ids=enc, target_ids=dec,
        config=json.loads(config.to_json_string(use_diff=False)),
        model_type=str(getattr(config, "model_type", "")))


class EagerAttention:
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
        The layers to keep (all by default), each once in increasing order; their indices are
        saved as ``layers``.
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
    if (np.diff(kept.astype(np.int64)) <= 0).any():  # Model view reads layers in this order
        raise ValueError(f"layers must list each layer once, in increasing order, got "
                         f"{str(kept.tolist())[:60]}")
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


SEQ2SEQ_FORMAT = 2  # ``attnviz_capture`` of an encoder–decoder model's file


def seq2seq_arrays(cap: Seq2SeqCapture, dtype=np.float32) -> dict[str, np.ndarray]:
    """The arrays of an encoder–decoder capture's file: ``attention`` and ``tokens`` are the
    encoder's (what any reader of attention files shows), ``decoder_attention``,
    ``cross_attention`` and ``target_tokens`` the decoder's side, ``attnviz_capture`` =
    :data:`SEQ2SEQ_FORMAT` (a reader of one-stack captures refuses it in a sentence)."""
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {np.dtype(dtype)}")
    encoder = cap.encoder.astype(dtype)
    attention_io.as_attention(encoder)  # the loader's own checks: shape, limits, values
    attention_io.as_attention(cap.decoder)
    return {
        "attention": encoder,
        "tokens": np.array(cap.source_tokens, dtype=str),
        "decoder_attention": cap.decoder.astype(dtype),
        "cross_attention": cap.cross.astype(dtype),
        "target_tokens": np.array(cap.target_tokens, dtype=str),
        "attnviz_capture": np.array(SEQ2SEQ_FORMAT, dtype=np.int64),
        "config": np.array(json.dumps(cap.config, sort_keys=True)),
        "model_type": np.array(cap.model_type),
        "is_causal": np.array(False),
        "layers": np.arange(cap.encoder.shape[0], dtype=np.int64),
        "input_ids": cap.source_ids,
        "target_ids": cap.target_ids,
    }


def save_seq2seq(cap: Seq2SeqCapture, path: str | os.PathLike, dtype=np.float32) -> int:
    """Write an encoder–decoder capture as an ``.npz`` that Model view uploads (its three
    kinds of attention; the Encoder–decoder page shows its cross-attention). Returns the
    file's size in bytes; refuses, writing nothing, a file larger than an upload may be."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **seq2seq_arrays(cap, dtype))
    data = buffer.getvalue()
    if len(data) > limits.MAX_UPLOAD_BYTES:
        raise ValueError(f"the file would be {len(data):,} bytes; an upload may be at most "
                         f"{limits.MAX_UPLOAD_BYTES:,} bytes — capture shorter texts")
    Path(path).write_bytes(data)
    return len(data)
