"""Bring your own attention: read uploaded weights (.npy/.npz) and token lists, safely.

Accepted weights: an array of shape ``(t, t)``, ``(heads, t, t)`` or ``(layers, heads, t, t)``
— for example ``torch.stack(outputs.attentions)[:, 0].numpy()`` from a transformers model run
with ``output_attentions=True`` (one example of the batch). It is returned as
``(layers, heads, t, t)`` float64.

Safety: files are parsed here, never by ``np.load`` on untrusted input. The ``.npy`` header is
read first (``allow_pickle`` is never used; an array of Python objects is refused), the shape
is checked against :mod:`~attnviz.scenarios.limits` *before* any data are read, and exactly
the declared number of bytes is then read. A ``.npz`` is a zip of ``.npy`` files: every
member's header is checked the same way, and nothing more than the chosen arrays' declared
size is decompressed. Before anything is unpacked, the zip's declared sizes are checked (at
most :data:`~attnviz.scenarios.limits.MAX_UPLOAD_UNPACKED_BYTES` together, no member compressed
more than :data:`~attnviz.scenarios.limits.MAX_UPLOAD_AMPLIFICATION` times), and before any
weights are read, the memory they will cost (stored data plus the float64 copy) must be at most
that many times the bytes uploaded, so a 1.6 KB bzip2 .npz cannot unpack into 55 MiB.

Checks on the values: finite, non-negative and at most :data:`MAX_WEIGHT` (else refused); rows
summing to 1 within :data:`ROW_SUM_TOL` (else a warning — the weights are still shown as they
are). Token labels (from a token file or an ``.npz``) must be valid Unicode: a lone UTF-16
surrogate, which JSON and numpy text arrays can carry but no page can send, is refused.

Every warning is an :class:`UploadWarning`: its text, and its ``kind`` — :data:`ROWS` (the
weights themselves: rows not summing to 1), :data:`TOKENS` (labels that do not fit the weights,
not used) or :data:`LABELS` (labels shown changed: cut, bidirectional controls removed) — so a
caller tells a warning about the weights from one about the labels without reading its words.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.io.scenario_io import quote, unicode_text
from attnviz.scenarios import limits
from attnviz.scenarios.tokens import bidi_controls_in, without_bidi

Array = NDArray[np.float64]

ROW_SUM_TOL = 1e-3
# Largest accepted weight. Attention weights lie in [0, 1]; the page still shows rows that do not
# sum to 1, but its views add up to MAX_UPLOAD_VALUES (2**22) weights (head mean, row sums,
# block pooling) and take w·ln(w) (entropy): with every value <= 1e100 each of these stays below
# 1e100 · 2**22 · 231 ≈ 1e109, far from float64's overflow at 1.8e308. Larger values (1e306 and
# up made every view overflow) are refused at upload time rather than drawn as inf.
MAX_WEIGHT = 1e100
ATTENTION_NAMES = ("attention", "attentions", "attention_weights", "attn", "weights")
TOKEN_NAMES = ("tokens", "labels")
_MAX_MEMBERS = 32
# The most bytes an array can hold: numpy cannot make a larger one (its sizes are C integers),
# so a header declaring more is damaged, whatever the limits
_MAX_ARRAY_BYTES = np.iinfo(np.intp).max
# What a warning is about (UploadWarning.kind)
ROWS = "rows"  # the weights: rows that do not sum to 1
TOKENS = "tokens"  # token labels that do not fit the weights (not used)
LABELS = "labels"  # token labels shown changed: cut, or bidirectional controls removed


class UploadWarning(str):
    """A problem that does not stop the display: its text (it is a ``str``) and ``kind``,
    one of :data:`ROWS`, :data:`TOKENS`, :data:`LABELS`."""

    kind: str

    def __new__(cls, text: str, kind: str) -> UploadWarning:
        if kind not in (ROWS, TOKENS, LABELS):
            raise ValueError(f"unknown warning kind {kind!r}")
        warning = super().__new__(cls, text)
        warning.kind = kind
        return warning

    def __reduce__(self):
        return UploadWarning, (str(self), self.kind)


@dataclass(frozen=True, eq=False)
class UploadedAttention:
    """Attention weights read from an upload.

    Attributes
    ----------
    weights : ndarray of shape (layers, heads, t, t)
    source_shape : tuple of int
        The shape as stored in the file.
    array_name : str
        The .npz member the weights came from ("" for a .npy file).
    tokens : tuple of str or None
        Token labels stored in the .npz (a ``tokens`` array of text), if any.
    warnings : tuple of UploadWarning
        Problems that do not stop the display (rows not summing to 1, labels cut, ...), each
        with its ``kind``.
    """

    weights: Array
    source_shape: tuple[int, ...]
    array_name: str
    tokens: tuple[str, ...] | None
    warnings: tuple[UploadWarning, ...]

    @property
    def rows_off(self) -> bool:
        """True when some rows of the weights do not sum to 1 (a :data:`ROWS` warning)."""
        return any(w.kind == ROWS for w in self.warnings)

    @property
    def layers(self) -> int:
        return int(self.weights.shape[0])

    @property
    def heads(self) -> int:
        return int(self.weights.shape[1])

    @property
    def t(self) -> int:
        return int(self.weights.shape[2])


# ---------------------------------------------------------------------------------------------
# .npy / .npz parsing without np.load
# ---------------------------------------------------------------------------------------------

def _read_header(fp, what: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Read a .npy header: (shape, fortran_order, dtype). Refuse object (pickled) arrays."""
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise ValueError(f"{what} uses .npy format version {version}, which attnviz does "
                             "not read; save it with numpy's np.save")
    except ValueError as exc:
        if "attnviz" in str(exc):
            raise
        raise ValueError(f"{what} is not a valid .npy array (its header cannot be read)") \
            from None
    except (EOFError, OSError, zipfile.BadZipFile, zlib.error):
        raise ValueError(f"{what} is not a valid .npy array (it is empty or cut short)") \
            from None
    except Exception:
        # numpy parses the header text of an untrusted file with its own tokenizer, which
        # raises whatever a damaged header makes it raise (tokenize.TokenError, SyntaxError,
        # IndexError, TypeError, RecursionError, ...): each is a damaged header
        raise ValueError(f"{what} is not a valid .npy array (its header cannot be read)") \
            from None
    if any(not isinstance(n, int) or n < 0 for n in shape):
        # numpy writes and reads such headers; reshape or the byte count would then fail in
        # numpy's words ("can only specify one unknown dimension", "-216 bytes")
        raise ValueError(f"{what} declares a negative size in its shape; it is damaged — save "
                         "the array again with np.save")
    # Python integers: the product of a header's sizes never wraps around (numpy's int64
    # product of (2**62, 4) is 0)
    if math.prod(shape) * max(dtype.itemsize, 1) > _MAX_ARRAY_BYTES:
        shown = (str(tuple(shape)) if len(shape) <= 6 and all(n < 2**64 for n in shape)
                 else f"of {len(shape)} sizes")
        raise ValueError(f"{what} declares an impossible size in its header: its shape {shown} "
                         f"needs more than {_MAX_ARRAY_BYTES:,} bytes, more than any array can "
                         "hold; it is damaged — save the array again with np.save")
    if dtype.hasobject:
        raise ValueError(f"{what} holds Python objects (pickled data); attnviz never unpickles "
                         "uploads. Save plain numbers instead, e.g. "
                         "np.save('attention.npy', weights.astype(np.float32))")
    return tuple(int(n) for n in shape), bool(fortran), dtype


def _read_data(fp, shape: tuple[int, ...], fortran: bool, dtype: np.dtype,
               what: str) -> np.ndarray:
    """Read exactly the bytes the header declares (the caller has checked the size)."""
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    try:
        data = fp.read(nbytes)
    except (EOFError, OSError, zipfile.BadZipFile, zlib.error, ValueError,
            NotImplementedError, RuntimeError):
        raise ValueError(f"{what} is damaged: its data cannot be read") from None
    if len(data) != nbytes:
        raise ValueError(f"{what} is cut short: the header announces {nbytes:,} bytes of data, "
                         f"the file holds {len(data):,}")
    arr = np.frombuffer(data, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C")


def _check_weights_header(shape: tuple[int, ...], dtype: np.dtype, what: str) -> None:
    """Dtype, rank and size limits, checked before reading any data."""
    if dtype.kind not in "fiu":
        raise ValueError(f"{what} holds values of type {_dtype_name(dtype)}; attention weights "
                         "must be real numbers (float or integer)")
    if len(shape) not in (2, 3, 4):
        hint = (" If its first axis is the batch, save one example (e.g. attn[:, 0])."
                if len(shape) == 5 else "")
        raise ValueError(f"{what} has shape {shape}; expected (t, t), (heads, t, t) or "
                         f"(layers, heads, t, t).{hint}")
    t_q, t_k = shape[-2], shape[-1]
    if t_q != t_k:
        raise ValueError(f"{what} has shape {shape}; the last two sizes must be equal (t, t): "
                         "one row and one column per token")
    if t_q == 0 or 0 in shape:
        raise ValueError(f"{what} is empty (shape {shape})")
    if t_q > limits.MAX_UPLOAD_T:
        raise ValueError(f"{what} has t = {t_q} tokens; at most {limits.MAX_UPLOAD_T} are "
                         "allowed (cut the sequence)")
    layers, heads = ((1,) * (4 - len(shape)) + shape)[:2]
    if heads > limits.MAX_UPLOAD_HEADS:
        raise ValueError(f"{what} has {heads} heads; at most {limits.MAX_UPLOAD_HEADS} are "
                         "allowed")
    if layers > limits.MAX_UPLOAD_LAYERS:
        raise ValueError(f"{what} has {layers} layers; at most {limits.MAX_UPLOAD_LAYERS} are "
                         "allowed")
    if math.prod(shape) > limits.MAX_UPLOAD_VALUES:
        raise ValueError(f"{what} holds {math.prod(shape):,} values; at most "
                         f"{limits.MAX_UPLOAD_VALUES:,} (layers·heads·t·t) are allowed — "
                         "upload fewer layers or a shorter sequence")


def _check_tokens_header(shape: tuple[int, ...], dtype: np.dtype, what: str) -> None:
    if dtype.kind not in "US" or len(shape) != 1:
        raise ValueError(f"{what} must be a 1-D array of text labels, got {_dtype_name(dtype)} of "
                         f"shape {shape}")
    if shape[0] > limits.MAX_UPLOAD_T or shape[0] * dtype.itemsize > 4 * \
            limits.MAX_TOKEN_FILE_BYTES:
        raise ValueError(f"{what} is too large: at most {limits.MAX_UPLOAD_T} labels")


def memory_cost(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """Bytes an array of weights costs once read: its data as stored plus the float64 copy
    the pages draw from."""
    return math.prod(shape) * (dtype.itemsize + 8)


def _check_memory(shape: tuple[int, ...], dtype: np.dtype, uploaded: int, what: str) -> None:
    """Refuse weights that would cost more memory than :data:`MAX_UPLOAD_AMPLIFICATION` times
    the bytes uploaded (a small, highly compressed file that unpacks into tens of MiB per
    session), checked from the header before any data are read."""
    cost = memory_cost(shape, dtype)
    allowed = max(limits.MAX_UPLOAD_AMPLIFICATION * uploaded, limits.UPLOAD_MEMORY_FLOOR_BYTES)
    if cost > allowed:
        raise ValueError(f"{what} would take {cost / 2**20:.1f} MiB of server memory from a "
                         f"{uploaded:,}-byte upload; attnviz accepts at most "
                         f"{limits.MAX_UPLOAD_AMPLIFICATION} times the upload's size (here "
                         f"{allowed / 2**20:.1f} MiB). Save it with np.savez or np.save "
                         "(uncompressed)")


def _check_members(members: list[zipfile.ZipInfo]) -> None:
    """The zip's own declared sizes, before anything is unpacked: the members together at
    most :data:`~attnviz.scenarios.limits.MAX_UPLOAD_UNPACKED_BYTES`, and none compressed more
    than :data:`~attnviz.scenarios.limits.MAX_UPLOAD_AMPLIFICATION` times (a member never
    unpacks beyond its declared size: zipfile stops there)."""
    total = sum(info.file_size for info in members)
    if total > limits.MAX_UPLOAD_UNPACKED_BYTES:
        raise ValueError(f"the .npz unpacks to {total:,} bytes; at most "
                         f"{limits.MAX_UPLOAD_UNPACKED_BYTES:,} are read — upload fewer layers "
                         "or a shorter sequence")
    for info in members:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > limits.UPLOAD_MEMORY_FLOOR_BYTES and \
                ratio > limits.MAX_UPLOAD_AMPLIFICATION:
            raise ValueError(f"array {_safe_name(info.filename)} of the .npz is compressed "
                             f"{ratio:,.0f} times ({info.compress_size:,} bytes unpack to "
                             f"{info.file_size:,}); attnviz accepts at most "
                             f"{limits.MAX_UPLOAD_AMPLIFICATION} times. Save it with np.savez "
                             "(uncompressed)")


def _check_size(data: bytes, what: str) -> None:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"{what} must be bytes")
    if len(data) == 0:
        raise ValueError(f"{what} is empty")
    if len(data) > limits.MAX_UPLOAD_BYTES:
        # in bytes: "5.0 MB; at most 5 MB" reads as if the two sizes were the same
        raise ValueError(f"{what} is {len(data):,} bytes; uploads may be at most "
                         f"{limits.MAX_UPLOAD_BYTES:,} bytes ({limits.MAX_UPLOAD_MB} MB)")


def _dtype_name(dtype: np.dtype) -> str:
    """A dtype for a message: a structured dtype names its fields, which come from the file, so
    it is cut to 40 characters and quoted like a name."""
    return str(dtype) if not dtype.fields else quote(str(dtype), 40)


def _safe_name(name: str) -> str:
    return quote(name, 40)


def _load_npy(data: bytes) -> tuple[np.ndarray, str, tuple[str, ...] | None]:
    fp = io.BytesIO(data)
    shape, fortran, dtype = _read_header(fp, "the .npy file")
    _check_weights_header(shape, dtype, "the array")
    # no memory check: an uncompressed .npy holds its data (at most 9 times as much as float64)
    return _read_data(fp, shape, fortran, dtype, "the .npy file"), "", None


def _load_npz(data: bytes) -> tuple[np.ndarray, str, tuple[str, ...] | None]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        # not ZipInfo.is_dir(): it raises IndexError on a member with an empty name
        members = [i for i in archive.infolist() if not i.filename.endswith("/")]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, RuntimeError):
        raise ValueError("the .npz file is damaged or not a .npz (zip) archive; save it with "
                         "np.savez or np.savez_compressed") from None
    if not members:
        raise ValueError("the .npz file holds no arrays")
    if len(members) > _MAX_MEMBERS:
        raise ValueError(f"the .npz file holds {len(members)} files; at most {_MAX_MEMBERS} "
                         "are read")
    _check_members(members)
    headers = {}
    for info in members:
        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        what = f"array {_safe_name(name)} of the .npz"
        if not info.filename.endswith(".npy"):
            raise ValueError(f"the .npz holds {_safe_name(info.filename)}, which is not a .npy "
                             "array; save the file with np.savez")
        try:
            with archive.open(info) as fp:
                headers[name] = (info, *_read_header(fp, what))
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError,
                RuntimeError):
            raise ValueError(f"{what} cannot be read (damaged, encrypted or compressed in a "
                             "way numpy does not write)") from None
    weight_name = _pick_attention(headers)
    info, shape, fortran, dtype = headers[weight_name]
    what = f"array {_safe_name(weight_name)} of the .npz"
    _check_weights_header(shape, dtype, what)
    _check_memory(shape, dtype, len(data), what)
    weights = _read_member(archive, info, shape, fortran, dtype, what)
    tokens = None
    token_name = next((n for n in TOKEN_NAMES if n in headers and n != weight_name), None)
    if token_name is not None:
        t_info, t_shape, t_fortran, t_dtype = headers[token_name]
        t_what = f"array {token_name} of the .npz"
        _check_tokens_header(t_shape, t_dtype, t_what)
        raw = _read_member(archive, t_info, t_shape, t_fortran, t_dtype, t_what)
        tokens = tuple(unicode_text(f"token {i} of {t_what}", _label(v))
                       for i, v in enumerate(raw.tolist()))
    return weights, weight_name, tokens


def _label(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _read_member(archive: zipfile.ZipFile, info, shape, fortran, dtype, what) -> np.ndarray:
    try:
        with archive.open(info) as fp:
            _read_header(fp, what)
            return _read_data(fp, shape, fortran, dtype, what)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError,
            RuntimeError):
        raise ValueError(f"{what} is damaged: its data cannot be read") from None


_KIND_WORDS = {"b": "true/false values", "iu": "whole numbers"}


def read_small_array(archive: zipfile.ZipFile, name: str, kinds: str, max_count: int,
                     what: str) -> np.ndarray:
    """Array ``name`` of a .npz (a capture's metadata), read with the weights' own header checks.

    Parameters
    ----------
    archive : zipfile.ZipFile
        The .npz; ``name + ".npy"`` must be in it.
    name : str
        The array's name in the archive.
    kinds : str
        The numpy dtype kinds allowed ("b", "iu").
    max_count : int
        The most values it may hold, checked from its header before anything is read.
    what : str
        How a message names the array ("it", "the layers array").

    Raises
    ------
    ValueError
        A sentence starting with ``what``: a damaged header, a size no array can have, Python
        objects, another type of values, more than ``max_count`` values, data cut short.
    """
    try:
        with archive.open(name + ".npy") as fp:
            shape, fortran, dtype = _read_header(fp, what)
            if dtype.kind not in kinds:
                expected = _KIND_WORDS.get(kinds, f"values of kind {kinds}")
                raise ValueError(f"{what} holds values of type {_dtype_name(dtype)}; it must "
                                 f"hold {expected}")
            count = math.prod(shape)
            if count > max_count:
                raise ValueError(f"{what} holds {count:,} values; at most {max_count:,} are "
                                 "allowed")
            return _read_data(fp, shape, fortran, dtype, what)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError,
            RuntimeError, KeyError):
        raise ValueError(f"{what} is damaged: its data cannot be read") from None


def _pick_attention(headers: dict) -> str:
    """The member holding the weights: a known name, else the only numeric array."""
    for name in ATTENTION_NAMES:
        if name in headers:
            return name
    numeric = [n for n, (_, _, _, dtype) in headers.items()
               if dtype.kind in "fiu" and n not in TOKEN_NAMES]
    if len(numeric) == 1:
        return numeric[0]
    names = ", ".join(_safe_name(n) for n in list(headers)[:8])
    if not numeric:
        raise ValueError(f"the .npz holds no array of numbers (arrays: {names})")
    raise ValueError(f"the .npz holds several arrays ({names}); name the attention weights "
                     "'attention', e.g. np.savez(f, attention=weights, tokens=labels)")


def load_attention(data: bytes, filename: str) -> UploadedAttention:
    """Read uploaded attention weights from the bytes of a ``.npy`` or ``.npz`` file.

    Parameters
    ----------
    data : bytes
        The file's content (at most :data:`~attnviz.scenarios.limits.MAX_UPLOAD_BYTES`).
    filename : str
        Its name; the extension decides how it is read (.npy or .npz).

    Returns
    -------
    UploadedAttention
        Weights as (layers, heads, t, t) float64, with warnings for rows not summing to 1.

    Raises
    ------
    ValueError
        For an empty, oversized, damaged, pickled, wrongly typed or wrongly shaped file, or
        weights that are negative, NaN or infinite.
    """
    _check_size(data, "the file")
    ext = str(filename).lower().rsplit(".", 1)[-1] if "." in str(filename) else ""
    data = bytes(data)
    if ext == "npy":
        raw, name, tokens = _load_npy(data)
    elif ext == "npz":
        raw, name, tokens = _load_npz(data)
    else:
        raise ValueError(f"{_safe_name(filename)} is not a .npy or .npz file; save the weights "
                         "with np.save or np.savez")
    weights, warnings = as_attention(raw)
    if tokens is not None and len(tokens) != weights.shape[-1]:
        warnings.append(UploadWarning(f"the .npz holds {len(tokens)} token labels but t = "
                                      f"{weights.shape[-1]}; they are not used", TOKENS))
        tokens = None
    if tokens is not None:
        tokens, cut = _cut_labels(tokens)
        warnings.extend(cut)
    return UploadedAttention(weights=weights, source_shape=tuple(raw.shape), array_name=name,
                             tokens=tokens, warnings=tuple(warnings))


def as_attention(raw) -> tuple[Array, list[UploadWarning]]:
    """Validate weights of shape (t, t), (heads, t, t) or (layers, heads, t, t).

    Returns
    -------
    weights : ndarray of shape (layers, heads, t, t), float64
    warnings : list of UploadWarning
        Rows that do not sum to 1 (within ROW_SUM_TOL): kind :data:`ROWS`.

    Raises
    ------
    ValueError
        Wrong type, rank or shape, sizes beyond the limits, NaN/inf or negative values.
    """
    arr = np.asarray(raw)
    _check_weights_header(tuple(arr.shape), arr.dtype, "the array")
    # the values are checked as stored, before the float64 copy: a longdouble 1e4000 is a
    # number too large to draw, not the inf its copy would be
    stored = arr.reshape((1,) * (4 - arr.ndim) + arr.shape)  # (L, H, t, t)
    finite = np.isfinite(stored)
    if not finite.all():
        where = _where(np.argwhere(~finite)[0])
        raise ValueError(f"the weights hold NaN or infinite values (first at {where}); "
                         "attention weights must be finite numbers")
    if (stored < 0).any():
        pos = np.argwhere(stored < 0)[0]
        raise ValueError(f"the weights hold negative values ({_number(stored[tuple(pos)])} at "
                         f"{_where(pos)}); attention weights are >= 0. Did you save the scores "
                         "before the softmax?")
    # only float64 and wider reach MAX_WEIGHT (comparing float32 with 1e100 would overflow it)
    too_big = (stored > MAX_WEIGHT if stored.dtype.kind == "f" and
               float(np.finfo(stored.dtype).max) > MAX_WEIGHT else np.zeros(stored.shape, bool))
    if too_big.any():
        pos = np.argwhere(too_big)[0]
        raise ValueError(f"the weights hold {_number(stored[tuple(pos)])} at {_where(pos)}; "
                         "attention weights lie between 0 and 1, and values above "
                         f"{MAX_WEIGHT:.0e} cannot be drawn (their sums overflow). Save the "
                         "weights after the softmax")
    w = stored.astype(np.float64)  # every value within ±MAX_WEIGHT: exact or rounded, finite
    warnings = []
    sums = w.sum(axis=-1)  # (L, H, t)
    off = np.abs(sums - 1.0) > ROW_SUM_TOL
    if off.any():
        first = np.argwhere(off)[0]
        n, total = int(off.sum()), off.size
        warnings.append(UploadWarning(
            f"{n} of {total} rows do not sum to 1 (e.g. {_where(first)} sums to "
            f"{sums[tuple(first)]:.4g}); they are shown as they are — rows of padding tokens, "
            "or weights saved before normalisation?", ROWS))
    return w, warnings


def _number(value) -> str:
    """A stored value for a message, as stored: 4 significant digits, also beyond float64's
    range (a longdouble 1e4000 is 1e+4000, not inf)."""
    with np.errstate(over="ignore"):
        as_float = float(value)
    if math.isfinite(as_float):
        return f"{as_float:.4g}"
    return np.format_float_scientific(value, precision=3, trim="-")


def _where(pos) -> str:
    """(layer, head, row[, col]) as words."""
    names = ("layer", "head", "row", "column")
    return ", ".join(f"{n} {int(i)}" for n, i in zip(names, pos, strict=False))


# ---------------------------------------------------------------------------------------------
# Token lists
# ---------------------------------------------------------------------------------------------

def _cut_labels(tokens) -> tuple[tuple[str, ...], list[UploadWarning]]:
    """Labels without bidirectional control characters and at most MAX_LABEL_CHARS long, with
    a warning for each change made."""
    warnings = []
    if any(bidi_controls_in(t) for t in tokens):
        tokens = [without_bidi(t) for t in tokens]
        warnings.append(UploadWarning(
            "bidirectional control characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, "
            "U+061C) were removed from the token labels: they would show a label reversed",
            LABELS))
    if any(len(t) > limits.MAX_LABEL_CHARS for t in tokens):
        tokens = [t[: limits.MAX_LABEL_CHARS] for t in tokens]
        warnings.append(UploadWarning(
            f"token labels are cut to {limits.MAX_LABEL_CHARS} characters", LABELS))
    return tuple(tokens), warnings


def parse_tokens(data: bytes, filename: str = "") -> tuple[tuple[str, ...], list[UploadWarning]]:
    """Token labels from a text file or a JSON list.

    * ``.json``, or text starting with ``["`` or ``[]`` (spaces allowed): a JSON list of
      strings; a BERT-style ``[CLS] ...`` text is tokens, not JSON;
    * other text with several lines: one token per line (trailing empty lines are dropped);
    * a single line: tokens separated by whitespace.

    Returns
    -------
    tokens : tuple of str
    warnings : list of UploadWarning
        E.g. labels cut to MAX_LABEL_CHARS (kind :data:`LABELS`).

    Raises
    ------
    ValueError
        Empty, too large, not UTF-8, invalid JSON, not a list of strings, too many tokens, a
        token that is not valid Unicode (a lone surrogate from a JSON escape).
    """
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError("the token file must be bytes")
    if len(data) > limits.MAX_TOKEN_FILE_BYTES:
        raise ValueError(f"the token file is {len(data):,} bytes; at most "
                         f"{limits.MAX_TOKEN_FILE_BYTES:,} are allowed")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("the token file is not UTF-8 text") from None
    if not text.strip():
        raise ValueError("the token file is empty; give one token per line, tokens separated "
                         "by spaces, or a JSON list of strings")
    if str(filename).lower().endswith(".json") or _JSON_LIST.match(text):
        tokens = _json_tokens(text)
    else:
        lines = text.splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        tokens = lines if len(lines) > 1 else text.split()
    if len(tokens) > limits.MAX_UPLOAD_T:
        raise ValueError(f"the token file holds {len(tokens):,} tokens; at most "
                         f"{limits.MAX_UPLOAD_T} are allowed")
    return _cut_labels(tokens)


_JSON_LIST = re.compile(r"\s*\[\s*[\"\]]")  # '["a", ...]' or '[]', not '[CLS]'


def _json_tokens(text: str) -> list[str]:
    try:
        tokens = json.loads(text)
    except RecursionError:
        raise ValueError("the token JSON is nested too deeply; give a flat list of strings") \
            from None
    except ValueError as exc:
        raise ValueError(f"the token file is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(tokens, list) or not tokens:
        raise ValueError("the token JSON must be a non-empty list of strings, e.g. "
                         '["The", "cat", "sat"]')
    for i, tok in enumerate(tokens):
        if not isinstance(tok, str):
            raise ValueError(f"token {i} of the JSON list is not a string; give a list of "
                             "strings")
        unicode_text(f"token {i} of the token file", tok)
    return tokens


def check_tokens(tokens, t: int) -> None:
    """Raise unless there is one token per row of a (t, t) attention matrix."""
    if len(tokens) != t:
        raise ValueError(f"the token list holds {len(tokens)} tokens but the attention "
                         f"matrices are {t}×{t}; one token per row is needed")


def default_tokens(t: int) -> tuple[str, ...]:
    """Labels when no tokens were uploaded: ``t0, t1, ...``."""
    return tuple(f"t{i}" for i in range(t))



def read_side_weights(archive: zipfile.ZipFile, name: str, shape: tuple, uploaded: int) -> Array:
    """Array ``name`` of an encoder–decoder capture's .npz (its decoder's or cross-attention's
    weights), read with the weights' own checks: a number type, exactly ``shape`` (layers,
    heads, t_q, t_k; the cross-attention's t_q and t_k differ), the memory it will cost, then
    finite values between 0 and :data:`MAX_WEIGHT`. An entry None of ``shape`` takes any size
    within the uploads' limits (layers, heads).

    Raises
    ------
    ValueError
        A sentence naming the array: missing, damaged, another type or shape, or values that
        are not weights.
    """
    what = f"array {_safe_name(name)} of the .npz"
    try:
        with archive.open(name + ".npy") as fp:
            found, fortran, dtype = _read_header(fp, what)
            if dtype.kind not in "fiu":
                raise ValueError(f"{what} holds values of type {_dtype_name(dtype)}; attention "
                                 "weights must be real numbers (float or integer)")
            wanted = tuple("any" if n is None else n for n in shape)
            if len(found) != 4 or any(n is not None and n != m
                                      for n, m in zip(shape, found, strict=True)):
                raise ValueError(f"{what} has shape {tuple(found)}; the file's other parts "
                                 f"need {wanted}")
            if found[0] > limits.MAX_UPLOAD_LAYERS or found[1] > limits.MAX_UPLOAD_HEADS:
                raise ValueError(f"{what} has {found[0]} layers of {found[1]} heads; at most "
                                 f"{limits.MAX_UPLOAD_LAYERS} layers of "
                                 f"{limits.MAX_UPLOAD_HEADS} heads are allowed")
            if math.prod(found) > limits.MAX_UPLOAD_VALUES:
                raise ValueError(f"{what} holds {math.prod(found):,} values; at most "
                                 f"{limits.MAX_UPLOAD_VALUES:,} are allowed")
            _check_memory(found, dtype, uploaded, what)
            raw = _read_data(fp, found, fortran, dtype, what)
    except KeyError:
        raise ValueError(f"the .npz has no array {_safe_name(name)}") from None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError,
            RuntimeError):
        raise ValueError(f"{what} is damaged: its data cannot be read") from None
    if not np.isfinite(raw).all() or (raw < 0).any() or (
            raw.dtype.kind == "f" and float(np.finfo(raw.dtype).max) > MAX_WEIGHT
            and (raw > MAX_WEIGHT).any()):
        raise ValueError(f"{what} holds values that are not attention weights (NaN, infinite, "
                         f"negative or above {MAX_WEIGHT:.0e})")
    return raw.astype(np.float64)
