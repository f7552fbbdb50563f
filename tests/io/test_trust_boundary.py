"""Every field of a scenario file or link, and every variant setting, fed a malformed value of
every JSON type.

A file or a link is untrusted: whatever one field holds, decoding ends in a Scenario or a
ValueError whose sentence names that field — never a TypeError, an OverflowError or a message
that names nothing. The table is deterministic (no sampling): each field meets each value.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import zlib

import pytest

from attnviz.io import scenario_io
from attnviz.io.scenario_io import FIELDS, PART_FIELDS, from_dict, from_json, from_link_param
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import Scenario, with_parts, with_variant

HUGE = 10**400  # beyond float range: float(HUGE) raises OverflowError
# One malformed value of every JSON type (and the edge cases of each).
MALFORMED = {
    "null": None, "true": True, "false": False, "zero": 0, "negative": -1,
    "huge": HUGE, "huge negative": -HUGE, "int64 overflow": 2**63, "fraction": 1.5,
    "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "tiny": 5e-324,
    "empty text": "", "text": "abc", "number as text": "12", "Arabic-Indic digits": "١٢",
    "bidi override": "\u202eabc", "markup": "[x](http://e.example)", "long text": "x" * 100_000,
    "empty list": [], "list": [1, 2], "nested list": [[1.5]], "list of text": ["a"],
    "empty object": {}, "object": {"a": 1}, "array object": {"shape": [1, 1], "values": [[1]]},
    "huge shape": {"shape": [HUGE, 1], "values": []},
}
# What a field's name looks like in a message: top-level name, or parts.<part>.<short>.
TOP_FIELDS = [name for name in FIELDS if name != "params"]
PART_MEMBERS = [(part, short) for part, names in PART_FIELDS.items() for short in names]
PARAMS = [(key, p.name) for key, spec in VARIANTS.items() for p in spec.params]


def good(variant: str = "scaled_dot_product") -> dict:
    """A valid version-2 scenario (6 tokens, two heads) with the source, additive and pooling
    parts and the given variant."""
    scenario = with_parts(PRESETS["seed_004_two_heads"].build(), ("source", "additive",
                                                                 "pooling"))
    return scenario_io.to_dict(with_variant(scenario, variant))


def pack(data) -> str:
    """The link parameter of any JSON-able value (NaN and ±inf written as JSON's extensions)."""
    raw = json.dumps(data).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw)).decode("ascii").rstrip("=")


def refused_naming(data: dict, name: str) -> None:
    """Decoding ``data`` from a dict, JSON text and a link: a Scenario, or a ValueError whose
    message names ``name`` (another exception fails the test)."""
    for how, decode, arg in (("dict", from_dict, data),
                             ("file", from_json, json.dumps(data)),
                             ("link", from_link_param, pack(data))):
        try:
            result = decode(arg)
        except ValueError as exc:
            message = str(exc)
            constant = how != "dict" and "not a number a scenario can hold" in message
            assert name in message or constant, (how, message[:300])
            assert len(message) < 1000, (how, len(message))  # a sentence, not a dump
        else:
            assert isinstance(result, Scenario), how


@pytest.mark.parametrize("field", TOP_FIELDS)
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_every_top_field_takes_every_json_type(field, kind):
    data = copy.deepcopy(good())
    data[field] = MALFORMED[kind]
    refused_naming(data, field)


@pytest.mark.parametrize("part, short", PART_MEMBERS)
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_every_part_member_takes_every_json_type(part, short, kind):
    data = copy.deepcopy(good())
    data.setdefault("parts", {})
    if part == "direct":  # the direct part: Q, K, V of matching sizes, then one replaced
        data["parts"]["direct"] = {n: {"shape": [6 if n == "q" else 6, 2],
                                       "values": [[0.5, 0.5]] * 6} for n in ("q", "k", "v")}
    data["parts"][part][short] = MALFORMED[kind]
    refused_naming(data, f"parts.{part}.{short}")


@pytest.mark.parametrize("variant, param", PARAMS)
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_every_variant_setting_takes_every_json_type(variant, param, kind):
    data = good(variant)
    data["params"] = {param: MALFORMED[kind]}
    refused_naming(data, param)


@pytest.mark.parametrize("variant, param", [(v, p) for v, p in PARAMS
                                            if isinstance(VARIANTS[v].param(p).default,
                                                          (int, float))
                                            and not isinstance(VARIANTS[v].param(p).default,
                                                               bool)])
@pytest.mark.parametrize("value", [HUGE, -HUGE, 10**5000], ids=["huge", "-huge", "5001 digits"])
def test_a_number_beyond_float_range_names_the_setting_and_its_limits(variant, param, value):
    """The issue's case: prefill, tile, rope_base, ... = 10**400 gave a TypeError."""
    spec = VARIANTS[variant].param(param)
    data = good(variant)
    data["params"] = {param: value}
    with pytest.raises(ValueError, match=rf"{param} must be (between|at least|at most) "
                                         r".*got a whole number of about [\d,]+ digits"):
        from_dict(data)
    if value != 10**5000:  # json.loads itself refuses ints of more than 4,300 digits
        with pytest.raises(ValueError, match=rf"the link does not hold a valid scenario: "
                                             rf"params: |{param} must be"):
            from_link_param(pack(data))
    with pytest.raises(ValueError, match=param):
        spec.check(value)


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_whole_file_of_every_json_type(kind):
    refused_naming(MALFORMED[kind], "scenario")  # not an object: "a scenario must be ..."


BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
        "\u2069", "\u200e", "\u200f", "\u061c"]


@pytest.mark.parametrize("char", BIDI, ids=[f"U+{ord(c):04X}" for c in BIDI])
@pytest.mark.parametrize("field", ["title", "description", "tokens"])
def test_bidi_controls_in_text_are_refused_by_name(field, char):
    """A title holding U+202E would display reversed: refused by name."""
    data = copy.deepcopy(good())
    if field == "tokens":
        data["tokens"][2] = f"ab{char}cd"
        name = r"tokens\[2\]"
    else:
        data[field] = f"A title {char}desrever"
        name = field
    with pytest.raises(ValueError, match=rf"{name} holds the bidirectional control "
                                         rf"character\(s\) U\+{ord(char):04X}"):
        from_dict(data)
    with pytest.raises(ValueError, match=rf"the link does not hold a valid scenario: {name}"):
        from_link_param(pack(data))


def test_bidi_controls_are_taken_out_of_uploaded_token_labels():
    from attnviz.io import attention_io as aio

    tokens, warnings = aio.parse_tokens("a\u202eb c\u2066d\u2069 e".encode())
    assert tokens == ("ab", "cd", "e")
    assert any("bidirectional control characters" in w for w in warnings)
    clean, none = aio.parse_tokens(b"a b c")
    assert clean == ("a", "b", "c") and none == []


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_the_link_parameter_itself_of_every_json_type(kind):
    value = MALFORMED[kind]
    try:
        from_link_param(value)
    except ValueError as exc:
        assert str(exc)
    else:  # pragma: no cover - no malformed value is a scenario
        raise AssertionError(f"{kind} was read as a scenario")


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_token_file_of_every_json_type(kind):
    """An uploaded token list (JSON): the whole file, and one token, of every JSON type."""
    from attnviz.io import attention_io as aio

    value = MALFORMED[kind]
    for data in ([value], value, ["a", value, "b"]):
        raw = json.dumps(data).encode("utf-8")
        try:
            tokens, _ = aio.parse_tokens(raw, "tokens.json")
        except ValueError as exc:
            assert "token" in str(exc) and len(str(exc)) < 300
        else:
            assert all(isinstance(t, str) for t in tokens)


def test_a_structured_dtype_from_a_file_is_quoted_in_the_message():
    """Field names of a structured .npy dtype come from the file: no markup reaches the page."""
    import io

    import numpy as np

    from attnviz.io import attention_io as aio

    buffer = io.BytesIO()
    np.save(buffer, np.zeros((2, 2), [("[x](http://e.example) " * 4, "f8")]))
    with pytest.raises(ValueError, match=r"holds values of type '\?\?\?\?x\?\?http\?\?\?e\."
                                         r"example\? \?x\?\?http\?\?\?e\.ex'\.\.\.; "
                                         r"attention weights") as exc:
        aio.load_attention(buffer.getvalue(), "w.npy")
    assert "](" not in str(exc.value)
