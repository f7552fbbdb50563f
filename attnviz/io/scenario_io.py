"""Scenario files and shareable links: a :class:`~attnviz.scenarios.scenario.Scenario` as
JSON and back.

The JSON form is a flat object holding every field of the scenario, a ``format`` marker and a
``schema_version``. Arrays are written as ``{"shape": [rows, cols], "values": [[...], ...]}``:
the nested lists keep a file readable and editable, the shape keeps empty arrays exact. Floats
are written with Python's shortest round-tripping repr, so scenario -> JSON -> scenario gives
bit-identical matrices.

A link carries the same JSON, compressed: ``urlsafe_base64(zlib(json))`` without padding.

Everything read from a file or a link is untrusted: :func:`from_dict` checks every field (type,
shape, finiteness, size limits, the shapes that must agree) and raises ``ValueError`` with a
sentence naming the field; the link decoder checks the length before decoding and never
decompresses more than :data:`attnviz.scenarios.limits.MAX_SCENARIO_BYTES`. Nothing is evaluated or
unpickled.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import zlib
from typing import Any

import numpy as np

from attnviz.scenarios import limits
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import MASK_KINDS, SCALE_MODES, Scenario

FORMAT = "attnviz-scenario"
SCHEMA_VERSION = 1
LINK_PARAM = "scenario"  # the st.query_params key of a shared link
MAX_TEXT_CHARS = {"title": 200, "description": 2000}
# Markup that st.markdown / st.caption would turn into links, images, HTML, icons or math.
_MARKUP = ("<", ">", "`", "$", "](", "://", ":material/")
_LINK_CHARS = re.compile(r"[A-Za-z0-9_-]*={0,2}")
MAX_DIM = max(limits.MAX_TOKENS, limits.MAX_WIDTH, limits.MAX_D_MODEL)

# field -> kind. "matrix": 2-D float; "vector": 1-D float; "mask": 2-D bool or null;
# "vector?": 1-D float or null; "tokens": list of str. Every Scenario field must be listed
# (tests/io/test_scenario_io.py checks it), so a new field cannot be dropped from files silently.
FIELDS: dict[str, str] = {
    "tokens": "tokens", "x": "matrix", "w_q": "matrix", "w_k": "matrix", "w_v": "matrix",
    "w_o": "matrix", "variant": "variant", "n_heads": "int", "head_mix": "vector?",
    "scale_mode": "scale_mode", "custom_scale": "float", "temperature": "float",
    "use_pe": "bool", "pe_base": "float", "mask_kind": "mask_kind", "valid_len": "int",
    "window": "int", "custom_mask": "mask", "source_tokens": "tokens", "source_x": "matrix",
    "w_a_q": "matrix", "w_a_k": "matrix", "v_a": "vector", "pool_w": "vector",
    "pool_b": "vector", "direct": "bool", "q_in": "matrix", "k_in": "matrix", "v_in": "matrix",
    "title": "text", "description": "text",
}
_CHOICES = {"variant": tuple(VARIANTS), "scale_mode": SCALE_MODES, "mask_kind": MASK_KINDS}
_NDIM = {"matrix": 2, "mask": 2, "vector": 1, "vector?": 1}


# ---------------------------------------------------------------------------------------------
# Scenario -> dict -> JSON
# ---------------------------------------------------------------------------------------------

def _array_out(name: str, value: np.ndarray, kind: str) -> dict:
    """``{"shape", "values"}`` of an array; refuse NaN/inf (JSON has no such numbers)."""
    arr = np.asarray(value)
    if kind != "mask":
        arr = arr.astype(np.float64)
        if not np.all(np.isfinite(arr)):
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
            raise ValueError(f"{name} holds {arr[bad]} at {bad}; a scenario file can only hold "
                             "finite numbers")
    else:
        arr = arr.astype(bool)
    return {"shape": [int(n) for n in arr.shape], "values": arr.tolist()}


def to_dict(scenario: Scenario) -> dict[str, Any]:
    """The scenario as a JSON-ready dict (``format``, ``schema_version`` and every field).

    Raises
    ------
    ValueError
        If an array holds NaN or ±inf (they cannot be written exactly as JSON).
    """
    out: dict[str, Any] = {"format": FORMAT, "schema_version": SCHEMA_VERSION}
    for name, kind in FIELDS.items():
        value = getattr(scenario, name)
        if kind in _NDIM:
            out[name] = None if value is None else _array_out(name, value, kind)
        elif kind == "tokens":
            out[name] = [str(tok) for tok in value]
        elif kind == "int":
            out[name] = int(value)
        elif kind == "float":
            number = float(value)
            if not math.isfinite(number):
                raise ValueError(f"{name} is {number}; a scenario file can only hold finite "
                                 "numbers")
            out[name] = number
        elif kind == "bool":
            out[name] = bool(value)
        else:
            out[name] = str(value)
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def to_json(scenario: Scenario) -> str:
    """The scenario as JSON text, one field per line and one matrix row per line.

    Strict JSON (no NaN or Infinity), readable and editable in a text editor.
    """
    lines = []
    for name, value in to_dict(scenario).items():
        if isinstance(value, dict) and len(value["shape"]) == 2 and value["values"]:
            rows = ",\n".join(f"    {_dumps(row)}" for row in value["values"])
            text = f'{{"shape": {_dumps(value["shape"])}, "values": [\n{rows}\n  ]}}'
        else:
            text = _dumps(value)
        lines.append(f"  {_dumps(name)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


# ---------------------------------------------------------------------------------------------
# dict -> Scenario (strict validation)
# ---------------------------------------------------------------------------------------------

def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def quote(text: str, limit: int = 20) -> str:
    """User text made safe to put in a message that may be rendered as Markdown.

    Keeps letters, digits, spaces and ``_ . -``; every other character becomes ``?``, so a
    message can never carry a link, an image, HTML or an icon from a file or a link.
    """
    text = str(text)
    short = re.sub(r"[^A-Za-z0-9 _.-]", "?", text[:limit])
    return f"'{short}'" + ("..." if len(text) > limit else "")


def _describe(v: Any) -> str:
    """A short description of an unexpected JSON value for a message (user text quoted)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f"the text {quote(v)}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, (int, float)):
        return repr(v)[:30]  # digits, '.', 'e', '+', '-', 'inf', 'nan': no markup
    return quote(repr(v), 30)


def _shape(name: str, raw: Any, ndim: int) -> tuple[int, ...]:
    """Check a declared ``shape``: a list of ndim whole numbers between 0 and MAX_DIM."""
    if not isinstance(raw, list) or len(raw) != ndim or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in raw):
        got = quote(repr(raw), 40) if isinstance(raw, list) else _describe(raw)
        raise ValueError(f"{name}: 'shape' must be a list of {ndim} whole number(s), got {got}")
    if any(n < 0 or n > MAX_DIM for n in raw):
        raise ValueError(f"{name}: every size in 'shape' must be between 0 and {MAX_DIM}, "
                         f"got {raw}")
    return tuple(raw)


def _cell(name: str, v: Any, index: tuple[int, ...], boolean: bool) -> float | bool:
    """One array entry: a finite number (or true/false for a mask)."""
    where = "".join(f"[{i}]" for i in index)
    if boolean:
        if not isinstance(v, bool):
            raise ValueError(f"{name}{where} must be true or false, got {_describe(v)}")
        return v
    if not _is_number(v):
        raise ValueError(f"{name}{where} must be a number, got {_describe(v)}")
    try:
        number = float(v)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{name}{where} must be a finite number, got {quote(repr(v), 30)}")
    return number


def _array_in(name: str, raw: Any, kind: str) -> np.ndarray | None:
    """Rebuild an array from ``{"shape", "values"}``, checking every entry."""
    if raw is None and kind in ("mask", "vector?"):
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"{name} must be an object with 'shape' and 'values', got "
                         f"{_describe(raw)}")
    extra = sorted(set(raw) - {"shape", "values"})
    missing = [k for k in ("shape", "values") if k not in raw]
    if missing or extra:
        what = (f"missing {', '.join(missing)}" if missing else "") + \
            ("; " if missing and extra else "") + \
            (f"unknown {', '.join(quote(k) for k in extra[:3])}" if extra else "")
        raise ValueError(f"{name} must hold exactly 'shape' and 'values' ({what})")
    ndim = _NDIM[kind]
    shape = _shape(name, raw["shape"], ndim)
    values = raw["values"]
    boolean = kind == "mask"
    if ndim == 1:
        if not isinstance(values, list) or len(values) != shape[0]:
            got = f"{len(values)} entries" if isinstance(values, list) else _describe(values)
            raise ValueError(f"{name} must hold a list of {shape[0]} numbers (its shape says "
                             f"{list(shape)}), got {got}")
        cells = [_cell(name, v, (i,), boolean) for i, v in enumerate(values)]
        return np.array(cells, dtype=bool if boolean else np.float64)
    rows, cols = shape
    if not isinstance(values, list) or len(values) != rows:
        got = f"{len(values)} rows" if isinstance(values, list) else _describe(values)
        raise ValueError(f"{name} must hold {rows} rows of {cols} (its shape says "
                         f"{list(shape)}), got {got}")
    out = np.zeros(shape, dtype=bool if boolean else np.float64)
    for i, row in enumerate(values):
        if not isinstance(row, list) or len(row) != cols:
            got = f"{len(row)} entries" if isinstance(row, list) else _describe(row)
            raise ValueError(f"{name}[{i}] must be a row of {cols} entries (its shape says "
                             f"{list(shape)}), got {got}")
        out[i] = [_cell(name, v, (i, j), boolean) for j, v in enumerate(row)]
    return out


def _tokens_in(name: str, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"{name} must be a list of token labels, got {_describe(raw)}")
    if len(raw) > limits.MAX_TOKENS:
        raise ValueError(f"{name} holds {len(raw)} tokens; at most {limits.MAX_TOKENS} are "
                         "allowed")
    for i, tok in enumerate(raw):
        if not isinstance(tok, str):
            raise ValueError(f"{name}[{i}] must be text, got {_describe(tok)}")
        if len(tok) > limits.MAX_LABEL_CHARS:
            raise ValueError(f"{name}[{i}] is {len(tok)} characters long; token labels have at "
                             f"most {limits.MAX_LABEL_CHARS}")
    return tuple(raw)


def _text_in(name: str, raw: Any) -> str:
    if not isinstance(raw, str):
        raise ValueError(f"{name} must be text, got {_describe(raw)}")
    if len(raw) > MAX_TEXT_CHARS[name]:
        raise ValueError(f"{name} is {len(raw)} characters long; at most "
                         f"{MAX_TEXT_CHARS[name]} are allowed")
    found = [m for m in _MARKUP if m in raw]
    if found or any(ord(c) < 32 for c in raw):
        what = ", ".join(repr(m) for m in found) or "control characters"
        raise ValueError(f"{name} must be plain text; it contains {what}, which the dashboard "
                         "would render as markup")
    return raw


def _scalar_in(name: str, kind: str, raw: Any) -> Any:
    if kind == "int":
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise ValueError(f"{name} must be a whole number, got {_describe(raw)}")
        low, high = (1, limits.MAX_HEADS) if name == "n_heads" else (0, MAX_DIM)
        if not low <= raw <= high:
            raise ValueError(f"{name} must be between {low} and {high}, got {raw}")
        return raw
    if kind == "float":
        if not _is_number(raw):
            raise ValueError(f"{name} must be a number, got {_describe(raw)}")
        number = _cell(name, raw, (), False)
        positive = name != "custom_scale"
        if number < 0 or (positive and number == 0):
            raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {raw}")
        return number
    if kind == "bool":
        if not isinstance(raw, bool):
            raise ValueError(f"{name} must be true or false, got {_describe(raw)}")
        return raw
    if kind == "text":
        return _text_in(name, raw)
    choices = _CHOICES[kind]
    if not isinstance(raw, str) or raw not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {_describe(raw)}")
    return raw


def _check_header(data: Any) -> None:
    """The top level: an object of the right format and schema version."""
    if not isinstance(data, dict):
        raise ValueError(f"a scenario must be a JSON object, got {_describe(data)}")
    if data.get("format") != FORMAT and "schema_version" not in data:
        raise ValueError("this is not an attnviz scenario (no 'format': "
                         f"{FORMAT!r} and no 'schema_version')")
    version = data.get("schema_version")
    if "schema_version" not in data:
        raise ValueError(f"schema_version is missing; this attnviz reads version "
                         f"{SCHEMA_VERSION}")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise ValueError(f"schema_version {_describe(version)} is not supported; this attnviz "
                         f"reads version {SCHEMA_VERSION}")
    if data.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}, got {_describe(data.get('format'))}")
    known = set(FIELDS) | {"format", "schema_version"}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        names = ", ".join(quote(k, 30) for k in unknown[:5])
        raise ValueError(f"unknown field(s) {names}; a version {SCHEMA_VERSION} scenario file "
                         "does not have them (a typo, or a file from a newer attnviz?)")
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")


def _check_shapes(v: dict[str, Any]) -> None:
    """The shapes that must agree with each other (the ones every page relies on)."""
    t, t_s = len(v["tokens"]), len(v["source_tokens"])
    x = v["x"]
    if t == 0:
        raise ValueError("tokens must hold at least one token")
    if x.shape[0] != t:
        raise ValueError(f"x must have one row per token ({t}), got shape {x.shape}")
    d_model = x.shape[1]
    if not 1 <= d_model <= limits.MAX_D_MODEL:
        raise ValueError(f"x must have between 1 and {limits.MAX_D_MODEL} columns (d_model), "
                         f"got {d_model}")
    for name in ("w_q", "w_k", "w_v"):
        w = v[name]
        if w.shape[0] != d_model or not 1 <= w.shape[1] <= limits.MAX_WIDTH:
            raise ValueError(f"{name} must have d_model = {d_model} rows and 1 to "
                             f"{limits.MAX_WIDTH} columns, got shape {w.shape}")
    if v["w_k"].shape != v["w_q"].shape:
        raise ValueError(f"w_k must have the shape of w_q {v['w_q'].shape}, got "
                         f"{v['w_k'].shape}")
    if v["w_o"].shape[0] != v["w_v"].shape[1]:
        raise ValueError(f"w_o must have one row per column of w_v ({v['w_v'].shape[1]}), got "
                         f"shape {v['w_o'].shape}")
    if v["source_x"].size and v["source_x"].shape[0] != t_s:
        raise ValueError(f"source_x must have one row per source token ({t_s}), got shape "
                         f"{v['source_x'].shape}")
    if v["direct"]:
        q, k, val = v["q_in"], v["k_in"], v["v_in"]
        if q.shape[0] != t or k.shape[0] != t_s or val.shape[0] != t_s:
            raise ValueError(f"with direct = true, q_in needs one row per token ({t}) and k_in, "
                             f"v_in one row per source token ({t_s}); got {q.shape}, "
                             f"{k.shape}, {val.shape}")
        if q.shape[1] != k.shape[1]:
            raise ValueError(f"q_in and k_in must have the same width, got {q.shape[1]} and "
                             f"{k.shape[1]}")


def from_dict(data: Any) -> Scenario:
    """Rebuild a scenario from :func:`to_dict`'s output, checking every field.

    Raises
    ------
    ValueError
        With a sentence naming the first problem: not a scenario, wrong schema version, missing
        or unknown fields, wrong types, non-numeric or non-finite values, wrong or inconsistent
        shapes, sizes beyond :mod:`attnviz.scenarios.limits`, or markup in the title or description.
    """
    _check_header(data)
    values: dict[str, Any] = {}
    for name, kind in FIELDS.items():
        raw = data[name]
        if kind in _NDIM:
            values[name] = _array_in(name, raw, kind)
        elif kind == "tokens":
            values[name] = _tokens_in(name, raw)
        else:
            values[name] = _scalar_in(name, kind, raw)
    _check_shapes(values)
    return Scenario(**values)


def from_json(text: str | bytes) -> Scenario:
    """Parse a scenario file (JSON text or UTF-8 bytes).

    Raises
    ------
    ValueError
        If it is too large, not UTF-8, not JSON, or not a valid scenario (see :func:`from_dict`).
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limits.MAX_SCENARIO_BYTES:
            raise ValueError(f"the file is {len(text):,} bytes; a scenario file may be at most "
                             f"{limits.MAX_SCENARIO_BYTES:,} bytes")
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError("the file is not UTF-8 text; a scenario file is JSON saved by "
                             "attnviz") from None
    if not isinstance(text, str):
        raise ValueError(f"a scenario must be JSON text, got {type(text).__name__}")
    if len(text) > limits.MAX_SCENARIO_BYTES:
        raise ValueError(f"the text is {len(text):,} characters; a scenario file may be at most "
                         f"{limits.MAX_SCENARIO_BYTES:,}")
    if not text.strip():
        raise ValueError("the file is empty; a scenario file is JSON saved by attnviz")
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to be a scenario") from None
    except ValueError as exc:  # json.JSONDecodeError, and _refuse_constant
        raise ValueError(f"not valid JSON ({str(exc)[:120]})") from None
    return from_dict(data)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a scenario can hold")


# ---------------------------------------------------------------------------------------------
# Links: JSON -> zlib -> urlsafe base64
# ---------------------------------------------------------------------------------------------

def to_link_param(scenario: Scenario) -> str:
    """The scenario as a compact URL-safe string (the value of ``?scenario=``).

    Raises
    ------
    ValueError
        If the scenario needs more than :data:`~attnviz.scenarios.limits.MAX_LINK_CHARS`
        characters (then share it as a file) or holds non-finite values.
    """
    text = json.dumps(to_dict(scenario), separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    packed = zlib.compress(text.encode("utf-8"), 9)
    param = base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    if len(param) > limits.MAX_LINK_CHARS:
        raise ValueError(f"this scenario needs {len(param):,} characters in a link, more than "
                         f"the {limits.MAX_LINK_CHARS:,} a link may hold; download it as a "
                         "scenario file and share the file instead")
    return param


def from_link_param(param: Any) -> Scenario:
    """Decode :func:`to_link_param`'s string back into a scenario.

    The length is checked before decoding and decompression stops at
    :data:`~attnviz.scenarios.limits.MAX_SCENARIO_BYTES`, so a tampered link cannot make the server
    decode or unzip a huge payload.

    Raises
    ------
    ValueError
        For a link that is too long, damaged, truncated, or not a valid scenario.
    """
    if not isinstance(param, str):
        raise ValueError("the link's scenario must be text")
    param = param.strip()
    if not param:
        raise ValueError("the link's scenario parameter is empty")
    if len(param) > limits.MAX_LINK_CHARS:
        raise ValueError(f"the link's scenario is {len(param):,} characters long; at most "
                         f"{limits.MAX_LINK_CHARS:,} are accepted")
    if not _LINK_CHARS.fullmatch(param):
        raise ValueError("the link is damaged: it holds characters that attnviz links never "
                         "contain (was it cut or edited?)")
    try:
        packed = base64.urlsafe_b64decode(param.rstrip("=") + "=" * (-len(param.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("the link is damaged: its scenario is not valid base64 (was it cut "
                         "or edited?)") from None
    raw = _inflate(packed)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the link is damaged: its scenario is not UTF-8 text") from None
    try:
        return from_json(text)
    except ValueError as exc:
        raise ValueError(f"the link does not hold a valid scenario: {exc}") from None


def _inflate(packed: bytes) -> bytes:
    """zlib-decompress at most MAX_SCENARIO_BYTES; refuse truncated or oversized data."""
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(packed, limits.MAX_SCENARIO_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"the link's scenario unpacks to more than "
                             f"{limits.MAX_SCENARIO_BYTES:,} bytes; it is refused")
        if not inflater.eof:
            raise ValueError("the link is truncated: its scenario data stop early (was it cut "
                             "when copied?)")
    except zlib.error:
        raise ValueError("the link is damaged: its scenario data cannot be unpacked (was it "
                         "cut or edited?)") from None
    if inflater.unused_data:
        raise ValueError("the link is damaged: extra data after the scenario")
    return raw
