"""Scenario files and links: exact round trips on every preset, every validation message, fuzz.

A file or a link is untrusted input: whatever it holds, decoding ends in a Scenario or a
ValueError with a sentence — never another exception.
"""

from __future__ import annotations

import base64
import copy
import inspect
import json
import re
import zlib
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz import PRESETS, Scenario, run_scenario
from attnviz.io import scenario_io
from attnviz.io.export import matrices
from attnviz.io.scenario_io import (
    FIELDS,
    FIELDS_V1,
    PART_FIELDS,
    SCHEMA_VERSION,
    from_dict,
    from_json,
    from_link_param,
    to_dict,
    to_json,
    to_link_param,
)
from attnviz.scenarios import limits
from attnviz.scenarios.scenario import with_parts

FIXTURES_V1 = Path(__file__).parent / "fixtures" / "v1"

ARRAY_FIELDS = [f for f, kind in FIELDS.items() if kind in ("matrix", "vector", "vector?",
                                                              "mask")]
PART_MEMBERS = [f"parts.{part}.{short}" for part, names in PART_FIELDS.items()
                for short in names if part != "direct"]


def assert_same_scenario(a: Scenario, b: Scenario) -> None:
    """Every field equal; arrays bit-identical in shape, dtype kind and values."""
    for f in fields(Scenario):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert x is not None and y is not None, f.name
            assert x.shape == y.shape, (f.name, x.shape, y.shape)
            assert np.array_equal(x, y), f.name
            assert x.dtype.kind == y.dtype.kind, f.name
            # bit-identical, including the sign of zeros
            assert np.array_equal(np.signbit(x), np.signbit(y)), f.name
        else:
            assert x == y, (f.name, x, y)


def assert_same_matrices(a: Scenario, b: Scenario) -> None:
    ma, mb = matrices(run_scenario(a)), matrices(run_scenario(b))
    assert list(ma) == list(mb)
    for name in ma:
        np.testing.assert_array_equal(ma[name], mb[name], err_msg=name)


# ---------------------------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------------------------

def test_every_scenario_field_is_serialised():
    """Version 2: each field at the top level or in exactly one part ('direct' is the part's
    presence); version 1: every field at the top level."""
    in_parts = [f for names in PART_FIELDS.values() for f in names.values()]
    assert len(in_parts) == len(set(in_parts))
    assert set(FIELDS) | set(in_parts) | {"direct"} == {f.name for f in fields(Scenario)}
    assert not set(FIELDS) & set(in_parts)
    assert set(FIELDS_V1) == {f.name for f in fields(Scenario)} - {"params"}


def test_files_hold_only_the_parts_the_scenario_fills():
    data = to_dict(PRESETS["seed_000"].build())
    assert "parts" not in data and "params" not in data and "source_x" not in data
    assert set(to_dict(PRESETS["bahdanau"].build())["parts"]) == {"source", "additive"}
    assert set(to_dict(PRESETS["seed_001_causal"].build())["parts"]) == {"source", "direct"}
    full = with_parts(PRESETS["seed_000"].build(), ("source", "additive", "pooling"))
    assert set(to_dict(full)["parts"]) == {"source", "additive", "pooling"}
    back = from_json(to_json(full))
    assert_same_scenario(full, back)


# ---------------------------------------------------------------------------------------------
# Version-1 files and links written by the attnviz before schema 2 (tests/io/fixtures/v1: every
# preset of that version as a file and a link, and an edited scenario with every field set;
# results_by_main.npz holds the weights and outputs that version computed from them)
# ---------------------------------------------------------------------------------------------

V1_FILES = sorted(p.stem for p in FIXTURES_V1.glob("*.json") if p.stem != "links")


def test_the_version_1_fixtures_are_all_there():
    assert len(V1_FILES) == 15
    assert json.loads((FIXTURES_V1 / "seed_000.json").read_text())["schema_version"] == 1


@pytest.mark.parametrize("key", V1_FILES)
def test_version_1_files_and_links_load_with_the_same_numbers(key):
    expected = np.load(FIXTURES_V1 / "results_by_main.npz")
    links = json.loads((FIXTURES_V1 / "links.json").read_text())
    from_file = from_json((FIXTURES_V1 / f"{key}.json").read_bytes())
    from_link = from_link_param(links[key])
    assert_same_scenario(from_file, from_link)
    # the same numbers to the last bit or two: a BLAS on another CPU (or another numpy) may sum
    # the products of a matrix product in another order (seen: 1 ulp on seed 004's output)
    same = dict(rtol=1e-14, atol=1e-15)
    for scenario in (from_file, from_link):
        result = run_scenario(scenario)
        np.testing.assert_allclose(result.attention.weights, expected[f"{key}__weights"], **same)
        np.testing.assert_allclose(result.attention.output, expected[f"{key}__output"], **same)
        if f"{key}__pooling" in expected:
            np.testing.assert_allclose(result.pooling.output, expected[f"{key}__pooling"],
                                       **same)
    # written again, it is a version-2 file that reads back to the same scenario
    assert_same_matrices(from_file, from_json(to_json(from_file)))


def test_version_1_files_are_still_checked():
    data = json.loads((FIXTURES_V1 / "seed_000.json").read_text())
    with pytest.raises(ValueError, match=r"unknown field\(s\) 'parts'; a version 1 scenario"):
        from_dict({**data, "parts": {}})
    with pytest.raises(ValueError, match=r"missing field\(s\) source_x"):
        from_dict({k: v for k, v in data.items() if k != "source_x"})
    with pytest.raises(ValueError, match=r"source_x must have one row per source token "
                                         r"\(source_tokens holds 1\)"):
        from_dict({**data, "source_tokens": ["a"]})


@pytest.mark.parametrize("key", list(PRESETS))
def test_file_round_trip_is_exact_on_every_preset(key, tmp_path):
    scenario = PRESETS[key].build()
    path = tmp_path / "scenario.json"
    path.write_text(to_json(scenario), encoding="utf-8")
    back = from_json(path.read_bytes())
    assert_same_scenario(scenario, back)
    assert_same_matrices(scenario, back)


@pytest.mark.parametrize("key", list(PRESETS))
def test_link_round_trip_is_exact_on_every_preset(key):
    scenario = PRESETS[key].build()
    param = to_link_param(scenario)
    assert len(param) <= limits.MAX_LINK_CHARS
    assert all(c.isalnum() or c in "-_" for c in param)  # URL-safe, no padding
    back = from_link_param(param)
    assert_same_scenario(scenario, back)
    assert_same_matrices(scenario, back)


def test_round_trip_keeps_awkward_values_exact():
    base = with_parts(PRESETS["seed_004_two_heads"].build(), ["source"])
    x = base.x.copy()
    x[0] = [0.1 + 0.2, -0.0, 1e-300]
    x[1] = [np.nextafter(1.0, 2.0), 1e300, -5e-324]
    mask = np.ones((6, 6), dtype=bool)
    mask[2, 3] = False
    odd = replace(base, x=x, custom_mask=mask, mask_kind="custom", tokens=(
        "<script>", "the", "the", "", "é ü 中", "a b"), temperature=0.3, custom_scale=0.0,
        scale_mode="custom", valid_len=0, window=3, use_pe=True, pe_base=123.5,
        source_x=np.zeros((6, 3)), head_mix=None)
    for back in (from_json(to_json(odd)), from_link_param(to_link_param(odd))):
        assert_same_scenario(odd, back)


def test_empty_arrays_keep_their_shape():
    base = with_parts(PRESETS["seed_000"].build(), ("additive", "pooling"))
    odd = replace(base, w_a_q=np.zeros((3, 0)), w_a_k=np.zeros((3, 0)), v_a=np.zeros(0),
                  pool_b=np.zeros(0))
    back = from_json(to_json(odd))
    assert back.w_a_q.shape == (3, 0) and back.v_a.shape == (0,)  # in a written part
    assert back.pool_b.shape == (0,) and back.pool_w.shape == (3,)
    assert back.q_in.shape == (0, 0) and back.source_x.shape == (0, 0)  # absent parts


def test_file_is_readable_json_with_a_version():
    text = to_json(PRESETS["seed_000"].build())
    data = json.loads(text)
    assert data["schema_version"] == SCHEMA_VERSION == 2
    assert data["format"] == "attnviz-scenario"
    assert data["x"] == {"shape": [4, 3], "values": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0],
                                                    [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}
    assert '    [1.0, 0.0, 0.0],\n' in text  # one matrix row per line


def test_non_finite_scenarios_cannot_be_saved():
    base = PRESETS["seed_000"].build()
    x = base.x.copy()
    x[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"x holds nan at \(1, 2\); a scenario file can only"):
        to_json(replace(base, x=x))
    with pytest.raises(ValueError, match="temperature is inf"):
        to_link_param(replace(base, temperature=float("inf")))


def test_a_scenario_too_large_for_a_link_says_use_the_file():
    rng = np.random.default_rng(0)
    t, d = 64, 32
    big = replace(PRESETS["seed_000"].build(), tokens=tuple(f"w{i}" for i in range(t)),
                  x=rng.normal(size=(t, d)), w_q=rng.normal(size=(d, d)),
                  w_k=rng.normal(size=(d, d)), w_v=rng.normal(size=(d, d)),
                  w_o=np.eye(d), source_tokens=(), source_x=np.zeros((0, 0)),
                  w_a_q=np.zeros((0, 0)), w_a_k=np.zeros((0, 0)), v_a=np.zeros(0),
                  pool_w=np.zeros(0), pool_b=np.zeros(0))
    with pytest.raises(ValueError, match=r"needs [\d,]+ characters in a link, more than the "
                       r"8,000 a link may hold; download it as a scenario file"):
        to_link_param(big)
    assert_same_scenario(big, from_json(to_json(big)))  # the file route works


# ---------------------------------------------------------------------------------------------
# Validation messages (file)
# ---------------------------------------------------------------------------------------------

def good() -> dict:
    """Seed 004's two heads with every optional part but direct Q/K/V (6 tokens, d_model 3)."""
    scenario = with_parts(PRESETS["seed_004_two_heads"].build(), ("source", "additive"))
    return to_dict(scenario)


def edited(**changes) -> dict:
    """``good()`` with fields changed (``...`` deletes one); a dotted name reaches into an
    object, e.g. ``edited(**{"parts.additive.v": None})``."""
    data = copy.deepcopy(good())
    for key, value in changes.items():
        *path, last = key.split(".")
        target = data
        for step in path:
            target = target[step]
        if value is ...:
            del target[last]
        else:
            target[last] = value
    return data


def arr(values, shape=None):
    """``{"shape", "values"}``; the shape is read from the nesting unless given."""
    if shape is None:
        shape = [len(values)] + ([len(values[0])] if values and isinstance(values[0], list)
                                 else [])
    return {"shape": list(shape), "values": values}


BAD = [
    # header
    ([1, 2], r"a scenario must be a JSON object, got a list"),
    ({"hello": 1}, r"this is not an attnviz scenario"),
    (edited(schema_version=3), r"schema_version 3 is not supported; this attnviz reads "
                               r"versions 1 and 2"),
    (edited(schema_version=2.0), r"schema_version 2.0 is not supported"),
    (edited(schema_version=1.0), r"schema_version 1.0 is not supported"),
    (edited(schema_version="1"), r"schema_version the text '1' is not supported"),
    (edited(schema_version=True), r"schema_version true is not supported"),
    (edited(schema_version=...), r"schema_version is missing; this attnviz reads versions 1 "
                                 r"and 2"),
    (edited(format="other"), r"format must be 'attnviz-scenario', got the text 'other'"),
    (edited(colour=1), r"unknown field\(s\) 'colour'"),
    (edited(x=..., w_q=...), r"missing field\(s\) x, w_q"),
    # types
    (edited(tokens="the cat"), r"tokens must be a list of token labels, got the text"),
    (edited(tokens=["a", 2, "c", "d", "e", "f"]), r"tokens\[1\] must be text, got 2"),
    (edited(tokens=["a" * 41] + ["b"] * 5), r"tokens\[0\] is 41 characters long"),
    (edited(variant="softmax"), r"variant must be one of .*scaled_dot_product.*, got the text"),
    (edited(scale_mode=1), r"scale_mode must be one of sqrt_dk, none, custom, got 1"),
    (edited(mask_kind=None), r"mask_kind must be one of none, causal, .* got null"),
    (edited(n_heads=2.0), r"n_heads must be a whole number, got 2.0"),
    (edited(n_heads=0), r"n_heads must be between 1 and 16, got 0"),
    (edited(n_heads=True), r"n_heads must be a whole number, got true"),
    (edited(valid_len=-1), r"valid_len must be between 0 and 256, got -1"),
    (edited(temperature="hot"), r"temperature must be a number, got the text 'hot'"),
    (edited(temperature=0), r"temperature must be > 0, got 0"),
    (edited(custom_scale=-1), r"custom_scale must be >= 0, got -1"),
    (edited(use_pe=1), r"use_pe must be true or false, got 1"),
    (edited(title=["x"]), r"title must be text, got a list"),
    (edited(title="![x](http://example.com/a.png)"),
     r"title must be plain text; it contains '\]\(', '://'"),
    (edited(description="<img src=x onerror=alert(1)>"), r"description must be plain text"),
    (edited(description="a\nb"), r"description must be plain text; it contains control"),
    (edited(title="t" * 201), r"title is 201 characters long; at most 200"),
    # arrays
    (edited(x=[[1, 2, 3]]), r"x must be an object with 'shape' and 'values', got a list"),
    (edited(x={"values": [[1.0]]}), r"x must hold exactly 'shape' and 'values' \(missing shape"),
    (edited(x={"shape": [1, 1], "values": [[1.0]], "dtype": "f8"}),
     r"x must hold exactly 'shape' and 'values' \(unknown 'dtype'"),
    (edited(x=arr([[1.0, 2.0]], shape=[6])), r"x: 'shape' must be a list of 2 whole number"),
    (edited(x=arr([[1.0]], shape=[1.5, 1])), r"x: 'shape' must be a list of 2 whole number"),
    (edited(x=arr([], shape=[0, 999])), r"x: every size in 'shape' must be between 0 and 256"),
    (edited(x=arr([[1.0, 2.0, 3.0]] * 6, shape=[5, 3])),
     r"x must hold 5 rows of 3 \(its shape says \[5, 3\]\), got 6 rows"),
    (edited(x=arr([[1.0, 2.0, 3.0]] * 5 + [[1.0, 2.0]], shape=[6, 3])),
     r"x\[5\] must be a row of 3 entries \(its shape says \[6, 3\]\), got 2 entries"),
    (edited(x=arr([[1.0, "2", 3.0]] * 6)), r"x\[0\]\[1\] must be a number, got the text '2'"),
    (edited(x=arr([[1.0, None, 3.0]] * 6)), r"x\[0\]\[1\] must be a number, got null"),
    (edited(x=arr([[1.0, True, 3.0]] * 6)), r"x\[0\]\[1\] must be a number, got true"),
    (edited(x=arr([[1.0, [2.0], 3.0]] * 6)), r"x\[0\]\[1\] must be a number, got a list"),
    (edited(x=arr([[1.0, 10**400, 3.0]] * 6)),
     r"x\[0\]\[1\] must be below 1.8e308 in size \(the largest float64\), got a whole number "
     r"of about 401 digits"),
    (edited(**{"parts.additive.v": arr([1.0, 2.0], shape=[3])}),
     r"parts.additive.v must hold a list of 3 numbers \(its shape says \[3\]\), got 2 entries"),
    (edited(**{"parts.additive.v": None}),
     r"parts.additive.v must be an object with 'shape' and 'values', got null"),
    (edited(custom_mask=arr([[1, 0], [0, 1]])), r"custom_mask\[0\]\[0\] must be true or false"),
    # shapes that must agree
    (edited(tokens=[], x=arr([], shape=[0, 3]), **{"parts.pooling.b": arr([], shape=[0])}),
     r"tokens must hold at least one token"),
    (edited(tokens=["a", "b"]),
     r"x must have one row per token \(tokens holds 2\), got shape \(6, 3\)"),
    (edited(w_q=arr([[1.0] * 6] * 2)), r"w_q must have d_model = 3 rows and 1 to 128 columns"),
    (edited(w_k=arr([[1.0] * 4] * 3)), r"w_k must have the shape of w_q \(3, 6\), got \(3, 4\)"),
    (edited(w_o=arr([[1.0] * 4] * 3)), r"w_o must have one row per column of w_v \(4\)"),
    (edited(**{"parts.source.tokens": ["a"]}),
     r"parts.source.x must have one row per source token \(parts.source.tokens holds 1\)"),
    # parts and params (version 2)
    (edited(parts=[]), r"parts must be an object, got a list"),
    (edited(**{"parts.speakers": {}}), r"parts: unknown part 'speakers'; the parts are source"),
    (edited(**{"parts.source": 1}), r"parts.source must be an object, got 1"),
    (edited(**{"parts.source.x": ...}), r"parts.source must hold exactly tokens, x \(missing x"),
    (edited(**{"parts.source.y": 1}), r"parts.source must hold exactly tokens, x \(unknown 'y'"),
    (edited(**{"parts.source": ..., "parts.direct": {"q": arr([[1.0]]), "k": arr([[1.0]]),
                                                     "v": arr([[1.0]])}}),
     r"parts.direct needs parts.source: its tokens label the keys"),
    (edited(params=[]), r"params must be an object, got a list"),
    (edited(params={"base": 10.0}), r"params: Multi-head has no setting 'base' \(its settings: "
                                    r"none\)"),
    # text that is not valid Unicode (a lone surrogate: JSON can carry one, UTF-8 cannot)
    (edited(title="a\ud800b"), r"title holds a character that is not valid Unicode \(a lone "
                                r"surrogate at position 1\)"),
    (edited(tokens=["a", "b", "\udfff", "d", "e", "f"]),
     r"tokens\[2\] holds a character that is not valid Unicode"),
    (edited(**{"parts.source.tokens": ["a", "b", "c", "\ud83d", "e", "f"]}),
     r"parts.source.tokens\[3\] holds a character that is not valid Unicode"),
    (edited(x=arr([[1.0] * 65] * 6), w_q=arr([[1.0] * 6] * 65), w_k=arr([[1.0] * 6] * 65),
            w_v=arr([[1.0] * 4] * 65)), r"x must have between 1 and 64 columns"),
]


@pytest.mark.parametrize("data, message", BAD, ids=[m[:40] for _, m in BAD])
def test_every_validation_message(data, message):
    with pytest.raises(ValueError, match=message):
        from_dict(data)
    text = json.dumps(data)
    with pytest.raises(ValueError, match=message):
        from_json(text)


def test_direct_mode_shapes_are_checked():
    data = to_dict(PRESETS["seed_001_causal"].build())
    data["parts"]["direct"]["k"] = arr([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match=r"with Q, K, V given directly, parts.direct.q needs one "
                                         r"row per token"):
        from_dict(data)
    data = to_dict(PRESETS["seed_001_causal"].build())
    data["parts"]["direct"]["k"] = arr([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match=r"parts.direct.q and parts.direct.k must have the same "
                                         r"width, got 3 and 2"):
        from_dict(data)


def test_a_key_given_twice_is_refused():
    text = to_json(PRESETS["seed_000"].build())
    doubled = text.replace('"temperature": 1.0,', '"temperature": 1.0, "temperature": 0.1,')
    assert doubled != text
    with pytest.raises(ValueError, match=r"the key 'temperature' appears twice in one object"):
        from_json(doubled)


@pytest.mark.parametrize("raw, message", [
    (b"", r"the file is empty"),
    (b"   \n", r"the file is empty"),
    (b"\xff\xfe{}", r"the file is not UTF-8 text"),
    (b"{not json", r"not valid JSON \(Expecting property name"),
    (b'{"x": NaN}', r"not valid JSON \(NaN is not a number a scenario can hold\)"),
    (b'{"x": -Infinity}', r"not valid JSON \(-Infinity is not a number"),
    (b"[" * 100_000, r"nested too deeply"),
    (b"1" * 5000, r"not valid JSON"),
    (b" " * (limits.MAX_SCENARIO_BYTES + 1), r"a scenario file may be at most 5,242,880 bytes"),
])
def test_file_decoding_messages(raw, message):
    with pytest.raises(ValueError, match=message):
        from_json(raw)


def test_messages_never_carry_markup_from_the_file():
    data = edited(variant="![a](http://evil.example/x.png)<b>")
    with pytest.raises(ValueError) as err:
        from_dict(data)
    assert "(" not in str(err.value).split("got", 1)[1]
    assert "<" not in str(err.value) and "](" not in str(err.value)
    data = edited(**{"<img src=x>": 1})
    with pytest.raises(ValueError) as err:
        from_dict(data)
    assert "<" not in str(err.value)


# ---------------------------------------------------------------------------------------------
# Links: malformed, truncated, tampered, oversized
# ---------------------------------------------------------------------------------------------

def pack(payload: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(payload)).decode().rstrip("=")


@pytest.mark.parametrize("param, message", [
    ("", r"the link's scenario parameter is empty"),
    ("abc$%", r"holds characters that attnviz links never contain"),
    ("a" * (limits.MAX_LINK_CHARS + 1), r"is 8,001 characters long; at most 8,000"),
    ("A", r"not valid base64"),
    ("AAAA", r"cannot be unpacked"),
    (pack(b"not json"), r"the link does not hold a valid scenario: not valid JSON"),
    (pack(b"[1]"), r"the link does not hold a valid scenario: a scenario must be a JSON object"),
    (pack(b"\xff\xfe"), r"not UTF-8 text"),
    (pack(json.dumps(edited(schema_version=7)).encode()), r"schema_version 7 is not supported"),
])
def test_bad_links(param, message):
    with pytest.raises(ValueError, match=message):
        from_link_param(param)


def test_truncated_link():
    param = to_link_param(PRESETS["seed_000"].build())
    for cut in (len(param) // 2, len(param) - 4):
        with pytest.raises(ValueError, match=r"truncated|damaged"):
            from_link_param(param[:cut])


def test_tampered_link():
    param = to_link_param(PRESETS["seed_000"].build())
    raw = bytearray(base64.urlsafe_b64decode(param + "=" * (-len(param) % 4)))
    raw[len(raw) // 2] ^= 0xFF
    tampered = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(ValueError, match=r"link"):
        from_link_param(tampered)


def test_zip_bomb_link_is_refused_without_unpacking_it_all():
    bomb = zlib.compress(b" " * (limits.MAX_SCENARIO_BYTES + 100_000), 9)
    param = base64.urlsafe_b64encode(bomb).decode().rstrip("=")
    assert len(param) < limits.MAX_LINK_CHARS  # small enough to pass the length check
    with pytest.raises(ValueError, match=r"unpacks to more than 5,242,880 bytes"):
        from_link_param(param)


def test_extra_data_after_the_stream_is_refused():
    good_param = to_link_param(PRESETS["seed_000"].build())
    raw = base64.urlsafe_b64decode(good_param + "=" * (-len(good_param) % 4)) + b"junk"
    with pytest.raises(ValueError, match=r"extra data"):
        from_link_param(base64.urlsafe_b64encode(raw).decode())


def test_link_decoder_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')".encode()
    with pytest.raises(ValueError):
        from_link_param(pack(payload))
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------
# Fuzz: a Scenario or a ValueError, never another exception
# ---------------------------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
FUZZ_STRUCTURED = settings(FUZZ, max_examples=100)  # nested JSON values are slow to generate


def _decodes_or_value_error(fn, value) -> None:
    try:
        result = fn(value)
    except ValueError as exc:
        assert str(exc)  # a sentence, not an empty error
    else:
        assert isinstance(result, Scenario)
        assert np.all(np.isfinite(result.x))


@FUZZ
@given(st.binary(max_size=2000))
def test_fuzz_file_bytes(raw):
    _decodes_or_value_error(from_json, raw)


@FUZZ
@given(st.text(max_size=2000))
def test_fuzz_link_text(param):
    _decodes_or_value_error(from_link_param, param)


@FUZZ
@given(st.binary(max_size=3000))
def test_fuzz_link_of_compressed_bytes(raw):
    _decodes_or_value_error(from_link_param, pack(raw))


@FUZZ
@given(st.binary(max_size=3000))
def test_fuzz_link_of_arbitrary_base64(raw):
    _decodes_or_value_error(from_link_param, base64.urlsafe_b64encode(raw).decode())


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(st.text(max_size=8), children, max_size=6),
    max_leaves=30,
)


@FUZZ_STRUCTURED
@given(st.sampled_from(list(FIELDS)), JSON_VALUES)
def test_fuzz_one_field_replaced(name, value):
    data = good()
    data[name] = value
    _decodes_or_value_error(from_dict, data)
    _decodes_or_value_error(from_link_param, pack(json.dumps(data).encode()))


@FUZZ_STRUCTURED
@given(st.sampled_from(ARRAY_FIELDS + PART_MEMBERS),
       st.lists(st.integers(-2, 300), min_size=0, max_size=3), JSON_VALUES)
def test_fuzz_array_shapes_and_values(name, shape, values):
    data = edited(**{name: {"shape": shape, "values": values}})
    _decodes_or_value_error(from_dict, data)


@FUZZ_STRUCTURED
@given(st.sampled_from(["parts", "params"] + PART_MEMBERS), JSON_VALUES)
def test_fuzz_parts_and_params_replaced(name, value):
    _decodes_or_value_error(from_dict, edited(**{name: value}))


@FUZZ_STRUCTURED
@given(st.data())
def test_fuzz_mutated_valid_file(data):
    text = to_json(PRESETS[data.draw(st.sampled_from(list(PRESETS)))].build())
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i, min(len(text), i + 20)))
    new = data.draw(st.text(max_size=10))
    _decodes_or_value_error(from_json, text[:i] + new + text[j:])


def test_module_uses_no_eval_or_pickle():
    source = inspect.getsource(scenario_io)
    assert not re.search(r"import pickle|pickle\.|\beval\(|\bexec\(|literal_eval|allow_pickle",
                         source)
