"""Scenario files and shareable links: a :class:`~attnviz.scenarios.scenario.Scenario` as
JSON and back.

The JSON form (schema version 2) is an object with a ``format`` marker, a ``schema_version``,
the common inputs (tokens, x, the weight matrices, the variant and the settings), the variant's
own ``params`` when it has any, and ``parts``: the optional parts the scenario fills (source
sequence, additive weights, pooling weights, Q/K/V given directly), each an object of its own
arrays. Version-1 files and links (every field at the top level, written by attnviz before the
variants became plug-ins) are still read.

Arrays are written as ``{"shape": [rows, cols], "values": [[...], ...]}``: the nested lists
keep a file readable and editable, the shape keeps empty arrays exact. Floats are written with
Python's shortest round-tripping repr, so scenario -> JSON -> scenario gives bit-identical
matrices.

A link carries the same JSON, compressed: ``urlsafe_base64(zlib(json))`` without padding.

Everything read from a file or a link is untrusted: :func:`from_dict` checks every field (type,
shape, finiteness, size limits, the shapes that must agree; text that is valid Unicode and
holds no bidirectional control character) and raises ``ValueError`` with a sentence naming the
field; JSON with a key given twice is refused;
the link decoder checks the length before decoding and never decompresses more than
:data:`attnviz.scenarios.limits.MAX_SCENARIO_BYTES`. Nothing is evaluated or unpickled.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import re
import zlib
from typing import Any

import numpy as np

from attnviz.scenarios import limits
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import MASK_KINDS, SCALE_MODES, Scenario
from attnviz.scenarios.tokens import bidi_controls_in

FORMAT = "attnviz-scenario"
SCHEMA_VERSION = 2
READS_VERSIONS = (1, 2)
LINK_PARAM = "scenario"  # the st.query_params key of a shared link
MAX_TEXT_CHARS = {"title": 200, "description": 2000}
# Markup that st.markdown / st.caption would turn into links, images, HTML, icons or math.
_MARKUP = ("<", ">", "`", "$", "](", "://", ":material/")
_LINK_CHARS = re.compile(r"[A-Za-z0-9_-]*={0,2}")
MAX_DIM = max(limits.MAX_TOKENS, limits.MAX_WIDTH, limits.MAX_D_MODEL)

# Version 1: field -> kind, every Scenario field at the top level. "matrix": 2-D float;
# "vector": 1-D float; "mask": 2-D bool or null; "vector?": 1-D float or null; "tokens": list of
# str; "params": the variant's settings (version 2 only).
FIELDS_V1: dict[str, str] = {
    "tokens": "tokens", "x": "matrix", "w_q": "matrix", "w_k": "matrix", "w_v": "matrix",
    "w_o": "matrix", "variant": "variant", "n_heads": "int", "head_mix": "vector?",
    "scale_mode": "scale_mode", "custom_scale": "float", "temperature": "float",
    "use_pe": "bool", "pe_base": "float", "mask_kind": "mask_kind", "valid_len": "int",
    "window": "int", "custom_mask": "mask", "source_tokens": "tokens", "source_x": "matrix",
    "w_a_q": "matrix", "w_a_k": "matrix", "v_a": "vector", "pool_w": "vector",
    "pool_b": "vector", "direct": "bool", "q_in": "matrix", "k_in": "matrix", "v_in": "matrix",
    "title": "text", "description": "text",
}
# Version 2: the common fields at the top level, the optional parts under "parts" (each part's
# arrays by short name: file name -> Scenario field), the variant's settings under "params".
# Every Scenario field is in exactly one place (tests/io/test_scenario_io.py checks it), so a new
# field cannot be dropped from files silently.
PART_FIELDS: dict[str, dict[str, str]] = {
    "source": {"tokens": "source_tokens", "x": "source_x"},
    "additive": {"w_q": "w_a_q", "w_k": "w_a_k", "v": "v_a"},
    "pooling": {"w": "pool_w", "b": "pool_b"},
    "direct": {"q": "q_in", "k": "k_in", "v": "v_in"},
}
_IN_PARTS = {f for fields in PART_FIELDS.values() for f in fields.values()} | {"direct"}
FIELDS: dict[str, str] = {name: kind for name, kind in FIELDS_V1.items()
                          if name not in _IN_PARTS} | {"params": "params"}
_CHOICES = {"variant": tuple(VARIANTS), "scale_mode": SCALE_MODES, "mask_kind": MASK_KINDS}
_NDIM = {"matrix": 2, "mask": 2, "vector": 1, "vector?": 1}
_OPTIONAL = ("params", "parts")  # version 2: may be left out (no settings, no optional part)


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
    """The scenario as a JSON-ready dict (version 2: common fields, ``params``, ``parts``).

    Only the parts the scenario fills are written (a part is filled when one of its arrays is
    not empty; the Q/K/V part only in direct mode), and ``params`` only when the variant has
    settings of its own.

    Raises
    ------
    ValueError
        If an array holds NaN or ±inf (they cannot be written exactly as JSON).
    """
    out: dict[str, Any] = {"format": FORMAT, "schema_version": SCHEMA_VERSION}
    for name, kind in FIELDS.items():
        if kind == "params":
            if scenario.params:
                out["params"] = {k: _param_out(scenario, k, v) for k, v in
                                 sorted(scenario.params.items())}
            continue
        out[name] = _value_out(name, kind, getattr(scenario, name))
    parts = {}
    for part, names in PART_FIELDS.items():
        filled = scenario.direct if part == "direct" else scenario.has_part(part)
        if filled:
            parts[part] = {short: _value_out(f"{part}.{short}", FIELDS_V1[field],
                                             getattr(scenario, field))
                           for short, field in names.items()}
    if parts:
        out["parts"] = parts
    return out


def _param_out(scenario: Scenario, name: str, value: Any) -> Any:
    """One of the variant's settings as JSON: a structured one (a list of attention steps) as
    its setting writes it, every other as :func:`_value_out` writes a value."""
    p = scenario.spec.param(name)
    if p.structured:
        return _finite(name, p.dump(value))
    return _value_out(name, "param", value)


def _finite(name: str, value: Any) -> Any:
    """``value`` (JSON of lists, objects, numbers, text) if every number in it is finite."""
    numbers = [value] if isinstance(value, float) else \
        [v for v in (value.values() if isinstance(value, dict) else value)] \
        if isinstance(value, (dict, list)) else []
    for v in numbers:
        if isinstance(v, (dict, list)):
            _finite(name, v)
        elif isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{name} holds {v}; a scenario file can only hold finite numbers")
    return value


def _value_out(name: str, kind: str, value: Any) -> Any:
    """One field as JSON: arrays as {"shape", "values"}, numbers finite, text as text, a
    vector setting as a list of numbers."""
    if kind in _NDIM:
        return None if value is None else _array_out(name, value, kind)
    if kind == "tokens":
        return [str(tok) for tok in value]
    if kind == "int":
        return int(value)
    if isinstance(value, tuple):  # a vector setting (RoPE's frequencies): a list of numbers
        return [_value_out(f"{name}[{i}]", "float", v) for i, v in enumerate(value)]
    if kind == "bool" or isinstance(value, bool):
        return bool(value)
    if kind == "float" or isinstance(value, (int, float, np.floating, np.integer)):
        number = float(value) if kind == "float" else value
        if not math.isfinite(number):
            raise ValueError(f"{name} is {number}; a scenario file can only hold finite "
                             "numbers")
        return number
    return str(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def to_json(scenario: Scenario) -> str:
    """The scenario as JSON text, one field per line and one matrix row per line.

    Strict JSON (no NaN or Infinity), readable and editable in a text editor.
    """
    return _pretty(to_dict(scenario), "") + "\n"


def _pretty(value: Any, indent: str) -> str:
    """JSON text of ``value``: objects one member per line, 2-D arrays one row per line."""
    inner = indent + "  "
    if isinstance(value, dict) and set(value) == {"shape", "values"} and \
            len(value["shape"]) == 2 and value["values"]:
        rows = ",\n".join(f"{inner}{_dumps(row)}" for row in value["values"])
        return f'{{"shape": {_dumps(value["shape"])}, "values": [\n{rows}\n{indent}]}}'
    if isinstance(value, dict) and value and any(isinstance(v, dict) for v in value.values()):
        members = ",\n".join(f"{inner}{_dumps(k)}: {_pretty(v, inner)}"
                              for k, v in value.items())
        return "{\n" + members + "\n" + indent + "}"
    return _dumps(value)


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
    if isinstance(v, int) and v.bit_length() > 64:  # repr of a 5,000-digit int raises
        return f"a whole number of about {int(v.bit_length() * math.log10(2)) + 1:,} digits"
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
                         f"got {', '.join(_describe(n) for n in raw)}")
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
    except OverflowError:  # a whole number beyond float64: finite, but no number a scenario holds
        raise ValueError(f"{name}{where} must be below 1.8e308 in size (the largest float64), "
                         f"got {_describe(v)}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}{where} must be a finite number, got {_describe(v)}")
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
        unicode_text(f"{name}[{i}]", tok)
        no_bidi(f"{name}[{i}]", tok)
    return tuple(raw)


def no_bidi(name: str, text: str) -> str:
    """``text`` if it holds no bidirectional control character, else a ValueError naming the
    field and the characters (they would show the text, and the text after it, reversed)."""
    found = bidi_controls_in(text)
    if found:
        raise ValueError(f"{name} holds the bidirectional control character(s) "
                         f"{', '.join(found)}, which would show it reversed or reordered; "
                         "remove them")
    return text


def unicode_text(name: str, text: str) -> str:
    """``text`` if it is valid Unicode, else a ValueError naming the field.

    JSON can carry a lone UTF-16 surrogate (``"\\ud800"``) that no page can send to the
    browser (UTF-8 cannot encode it); it is refused where the text comes in.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{name} holds a character that is not valid Unicode (a lone surrogate "
                         f"at position {exc.start}); retype that text") from None
    return text


def _text_in(name: str, raw: Any) -> str:
    if not isinstance(raw, str):
        raise ValueError(f"{name} must be text, got {_describe(raw)}")
    unicode_text(name, raw)
    no_bidi(name, raw)
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
            raise ValueError(f"{name} must be between {low} and {high}, got {_describe(raw)}")
        return raw
    if kind == "float":
        if not _is_number(raw):
            raise ValueError(f"{name} must be a number, got {_describe(raw)}")
        number = _cell(name, raw, (), False)
        positive = name != "custom_scale"
        if number < 0 or (positive and number == 0):
            raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got "
                             f"{_describe(raw)}")
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


def _check_header(data: Any) -> int:
    """The top level: an object of the right format and a schema version this attnviz reads.

    Returns the schema version; checks that the fields of that version are there and no other.
    """
    if not isinstance(data, dict):
        raise ValueError(f"a scenario must be a JSON object, got {_describe(data)}")
    if data.get("format") != FORMAT and "schema_version" not in data:
        raise ValueError("this is not an attnviz scenario (no 'format': "
                         f"{FORMAT!r} and no 'schema_version')")
    version = data.get("schema_version")
    reads = " and ".join(map(str, READS_VERSIONS))
    if "schema_version" not in data:
        raise ValueError(f"schema_version is missing; this attnviz reads versions {reads}")
    # a whole number: 1.0 or true is not a version (true == 1 and 1.0 == 1 in Python)
    if type(version) is not int or version not in READS_VERSIONS:
        raise ValueError(f"schema_version {_describe(version)} is not supported; this attnviz "
                         f"reads versions {reads}")
    if data.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}, got {_describe(data.get('format'))}")
    fields = FIELDS_V1 if version == 1 else FIELDS
    known = set(fields) | {"format", "schema_version"} | ({"parts"} if version == 2 else set())
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        names = ", ".join(quote(k, 30) for k in unknown[:5])
        raise ValueError(f"unknown field(s) {names}; a version {version} scenario file "
                         "does not have them (a typo, or a file from a newer attnviz?)")
    missing = [k for k in fields if k not in data and not (version == 2 and k in _OPTIONAL)]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    return version


def _value_in(name: str, kind: str, raw: Any) -> Any:
    """One field read and checked (``name`` is how messages call it)."""
    if kind in _NDIM:
        return _array_in(name, raw, kind)
    if kind == "tokens":
        return _tokens_in(name, raw)
    return _scalar_in(name, kind, raw)


def _parts_in(raw: Any) -> dict[str, Any]:
    """Version 2's ``parts``: each a known part holding exactly its arrays."""
    if not isinstance(raw, dict):
        raise ValueError(f"parts must be an object, got {_describe(raw)}")
    values: dict[str, Any] = {}
    for part, members in raw.items():
        if part not in PART_FIELDS:
            raise ValueError(f"parts: unknown part {quote(part, 30)}; the parts are "
                             f"{', '.join(PART_FIELDS)}")
        names = PART_FIELDS[part]
        if not isinstance(members, dict):
            raise ValueError(f"parts.{part} must be an object, got {_describe(members)}")
        unknown = sorted(str(k) for k in members if k not in names)
        missing = [k for k in names if k not in members]
        if unknown or missing:
            what = (f"missing {', '.join(missing)}" if missing else "") + \
                ("; " if missing and unknown else "") + \
                (f"unknown {', '.join(quote(k) for k in unknown[:3])}" if unknown else "")
            raise ValueError(f"parts.{part} must hold exactly {', '.join(names)} ({what})")
        for short, field in names.items():
            values[field] = _value_in(f"parts.{part}.{short}", FIELDS_V1[field],
                                      members[short])
    values["direct"] = "direct" in raw
    if values["direct"] and "source" not in raw:
        raise ValueError("parts.direct needs parts.source: its tokens label the keys")
    return values


def _absent_parts() -> dict[str, Any]:
    """The Scenario's own defaults of every optional part's fields (empty arrays, no tokens)."""
    by_name = {f.name: f for f in dataclasses.fields(Scenario)}
    return {name: by_name[name].default_factory() if name != "source_tokens" else ()
            for name in _IN_PARTS - {"direct"}} | {"direct": False}


def _params_in(raw: Any, variant: str) -> dict[str, Any]:
    """Version 2's ``params``: settings the chosen variant declares, each in its range."""
    if not isinstance(raw, dict):
        raise ValueError(f"params must be an object, got {_describe(raw)}")
    spec = VARIANTS[variant]
    out = {}
    for name, value in raw.items():
        if not any(p.name == name for p in spec.params):
            declared = ", ".join(p.name for p in spec.params) or "none"
            raise ValueError(f"params: {spec.name} has no setting {quote(name, 30)} (its "
                             f"settings: {declared})")
        out[name] = spec.param(name).check(value)
    return out


# how version 2 files name the fields that live in parts (messages use the file's names)
_V2_NAMES = {field: f"parts.{part}.{short}" for part, names in PART_FIELDS.items()
             for short, field in names.items()}


def _check_shapes(v: dict[str, Any], version: int = SCHEMA_VERSION) -> None:
    """The shapes that must agree with each other (the ones every page relies on)."""
    shown = (lambda f: f) if version == 1 else (lambda f: _V2_NAMES.get(f, f))
    t, t_s = len(v["tokens"]), len(v["source_tokens"])
    x = v["x"]
    if t == 0:
        raise ValueError("tokens must hold at least one token")
    if x.shape[0] != t:
        raise ValueError(f"x must have one row per token (tokens holds {t}), got shape "
                         f"{x.shape}")
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
        raise ValueError(f"{shown('source_x')} must have one row per source token "
                         f"({shown('source_tokens')} holds {t_s}), got shape "
                         f"{v['source_x'].shape}")
    if v["direct"]:
        q, k, val = v["q_in"], v["k_in"], v["v_in"]
        if q.shape[0] != t or k.shape[0] != t_s or val.shape[0] != t_s:
            raise ValueError(f"with Q, K, V given directly, {shown('q_in')} needs one row per "
                             f"token ({t}) and {shown('k_in')}, {shown('v_in')} one row per source "
                             f"token ({t_s}); got {q.shape}, {k.shape}, {val.shape}")
        if q.shape[1] != k.shape[1]:
            raise ValueError(f"{shown('q_in')} and {shown('k_in')} must have the same width, got "
                             f"{q.shape[1]} and {k.shape[1]}")


def from_dict(data: Any) -> Scenario:
    """Rebuild a scenario from :func:`to_dict`'s output, checking every field.

    Raises
    ------
    ValueError
        With a sentence naming the first problem: not a scenario, wrong schema version, missing
        or unknown fields, wrong types, non-numeric or non-finite values, wrong or inconsistent
        shapes, sizes beyond :mod:`attnviz.scenarios.limits`, or markup in the title or description.
    """
    version = _check_header(data)
    if version == 1:
        values = {name: _value_in(name, kind, data[name]) for name, kind in FIELDS_V1.items()}
    else:
        values = _absent_parts()
        values.update({name: _value_in(name, kind, data[name]) for name, kind in FIELDS.items()
                       if kind != "params"})
        values.update(_parts_in(data.get("parts", {})))
        values["params"] = _params_in(data.get("params", {}), values["variant"])
    _check_shapes(values, version)
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
        data = json.loads(text, parse_constant=_refuse_constant,
                          object_pairs_hook=_refuse_duplicate_keys)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to be a scenario") from None
    except ValueError as exc:  # json.JSONDecodeError, and _refuse_constant
        raise ValueError(f"not valid JSON ({str(exc)[:120]})") from None
    return from_dict(data)


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; a key given twice is refused (which one would count?)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {quote(key, 30)} appears twice in one object")
        out[key] = value
    return out


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
        characters (then share it as a file) or holds non-finite values; at once, before
        anything is written, if it is wider than a link is read back with (d_model above
        MAX_D_MODEL: a real model's head; writing and compressing its 0.25 M numbers takes
        2.8 s of every edit's run, to be refused for its length).
    """
    if scenario.d_model > limits.MAX_D_MODEL:
        raise ValueError(f"this scenario's d_model ({scenario.d_model}) is above the "
                         f"{limits.MAX_D_MODEL} a link holds; it cannot be shared by a link")
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
