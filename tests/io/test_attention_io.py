"""Uploaded attention: safe parsing of .npy/.npz, shapes, limits, values, tokens, the example."""

from __future__ import annotations

import io
import json
import pickle
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.io import attention_io as aio
from attnviz.io.examples import EXAMPLE_NPZ, EXAMPLE_TOKENS
from attnviz.io.examples.make_example import build_example
from attnviz.scenarios import limits

ROOT = Path(__file__).resolve().parents[2]


def npy(arr, **kw) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)
    return buf.getvalue()


def npz(compressed=True, **arrays) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def softmax_rows(shape, seed=0):
    x = np.random.default_rng(seed).normal(size=shape)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, expected", [
    ((5, 5), (1, 1, 5, 5)),
    ((3, 5, 5), (1, 3, 5, 5)),
    ((2, 3, 5, 5), (2, 3, 5, 5)),
])
def test_accepted_shapes_become_layers_heads_t_t(shape, expected):
    w = softmax_rows(shape)
    for data, name in ((npy(w), "a.npy"), (npz(attention=w), "a.npz"), (npz(False, x=w),
                                                                        "b.NPZ")):
        got = aio.load_attention(data, name)
        assert got.weights.shape == expected
        assert got.source_shape == shape
        assert got.warnings == ()
        np.testing.assert_array_equal(got.weights.reshape(shape), w)  # exact values


def test_float32_and_fortran_order_and_big_endian_read_exactly():
    w = softmax_rows((2, 4, 4)).astype(np.float32)
    for arr in (w, np.asfortranarray(w), w.astype(">f4")):
        got = aio.load_attention(npy(arr), "w.npy")
        np.testing.assert_array_equal(got.weights[0], w.astype(np.float64))


@pytest.mark.parametrize("shape, message", [
    ((5,), r"has shape \(5,\); expected \(t, t\), \(heads, t, t\) or \(layers, heads, t, t\)"),
    ((1, 2, 3, 4, 4), r"If its first axis is the batch, save one example"),
    ((3, 4), r"the last two sizes must be equal \(t, t\)"),
    ((2, 0, 0), r"is empty"),
])
def test_wrong_shapes(shape, message):
    with pytest.raises(ValueError, match=message):
        aio.load_attention(npy(np.zeros(shape)), "w.npy")


def test_npz_member_choice():
    w = softmax_rows((4, 4))
    got = aio.load_attention(npz(logits=np.ones(3), attention=w, tokens=np.array(list("abcd"))),
                             "w.npz")
    assert got.array_name == "attention"
    assert got.tokens == ("a", "b", "c", "d")
    with pytest.raises(ValueError, match=r"holds several arrays \('a', 'b'\); name the attention "
                                         r"weights 'attention'"):
        aio.load_attention(npz(a=w, b=w), "w.npz")
    with pytest.raises(ValueError, match=r"holds no array of numbers"):
        aio.load_attention(npz(tokens=np.array(["a"])), "w.npz")


def test_npz_tokens_of_the_wrong_length_are_ignored_with_a_warning():
    got = aio.load_attention(npz(attention=softmax_rows((3, 3)), tokens=np.array(["a", "b"])),
                             "w.npz")
    assert got.tokens is None
    assert "the .npz holds 2 token labels but t = 3; they are not used" in got.warnings


# ---------------------------------------------------------------------------------------------
# Refused files: pickled, oversize, empty, corrupt, wrong type
# ---------------------------------------------------------------------------------------------

def test_pickled_object_npz_is_refused_with_a_clear_message(tmp_path):
    marker = tmp_path / "unpickled"

    class Boom:  # unpickling this would create the marker file
        def __reduce__(self):
            return (Path.write_text, (marker, "x"))

    objects = np.empty(2, dtype=object)
    objects[0], objects[1] = Boom(), "b"
    data = npz(attention=softmax_rows((2, 2)), extra=objects)
    with pytest.raises(ValueError, match=r"holds Python objects \(pickled data\); attnviz never "
                                         r"unpickles uploads"):
        aio.load_attention(data, "w.npz")
    with pytest.raises(ValueError, match=r"pickled data"):
        aio.load_attention(npz(attention=objects), "w.npz")
    with pytest.raises(ValueError, match=r"the .npy file holds Python objects"):
        aio.load_attention(npy(objects, allow_pickle=True), "w.npy")
    assert not marker.exists()


def test_a_raw_pickle_is_not_an_array():
    data = pickle.dumps(softmax_rows((2, 2)))
    with pytest.raises(ValueError, match=r"not a valid .npy array"):
        aio.load_attention(data, "w.npy")
    with pytest.raises(ValueError, match=r"damaged or not a .npz \(zip\) archive"):
        aio.load_attention(data, "w.npz")


def test_oversize_upload_is_refused():
    data = b"\x93NUMPY" + b"\0" * limits.MAX_UPLOAD_BYTES
    with pytest.raises(ValueError, match=r"is 5,242,886 bytes; uploads may be at most "
                                         r"5,242,880 bytes \(5 MB\)"):
        aio.load_attention(data, "w.npy")


@pytest.mark.parametrize("shape, message", [
    ((limits.MAX_UPLOAD_T + 1,) * 2, r"has t = 1025 tokens; at most 1024 are allowed"),
    ((65, 2, 2), r"has 65 heads; at most 64"),
    ((65, 1, 2, 2), r"has 65 layers; at most 64"),
    ((8, 8, 256, 256), r"holds 4,194,304 values|holds 4194304"),
    ((9, 8, 256, 256), r"holds 4,718,592 values; at most 4,194,304"),
])
def test_sizes_beyond_the_limits_are_refused_before_reading_data(shape, message):
    # a header announcing a huge array followed by no data: refused on the header alone
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": shape})
    data = header.getvalue()  # magic string and header, no data
    if shape == (8, 8, 256, 256):  # exactly at the limit: accepted header, then cut short
        with pytest.raises(ValueError, match=r"is cut short: the header announces"):
            aio.load_attention(data, "w.npy")
        return
    with pytest.raises(ValueError, match=message):
        aio.load_attention(data, "w.npy")


def test_npz_bomb_is_refused_on_its_header():
    big = np.zeros((2, 1, 2048, 2048), dtype=np.float32)  # 32 MB of zeros, ~30 kB zipped
    data = npz(attention=big)
    assert len(data) < limits.MAX_UPLOAD_BYTES
    # the zip's declared sizes refuse it before any member is opened
    with pytest.raises(ValueError, match=r"'attention.npy' of the .npz is compressed 1,026 "
                                         r"times .*at most 64 times"):
        aio.load_attention(data, "w.npz")


def zip_of(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return buffer.getvalue()


def npy_bytes(arr: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, arr)
    return buffer.getvalue()


def test_small_bzip2_npz_does_not_unpack_into_the_largest_upload():
    """A 1.6 KB bzip2 .npz can unpack to the largest allowed weights (~55 MiB of server
    memory per session): refused."""
    weights = np.zeros((8, 8, 256, 256), dtype=np.float32)  # exactly MAX_UPLOAD_VALUES
    data = zip_of({"attention.npy": npy_bytes(weights)}, zipfile.ZIP_BZIP2)
    assert len(data) < 2000
    with pytest.raises(ValueError, match=r"is compressed [\d,]+ times"):
        aio.load_attention(data, "w.npz")


def test_npz_members_declared_sizes_are_bounded_together():
    # 12 members of 4 MiB incompressible bytes each: 48 MiB declared, refused unread
    rng = np.random.default_rng(0)
    chunk = rng.bytes(4 * 2**20)
    infos = {f"m{i}.npy": chunk for i in range(12)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, raw in infos.items():
            zf.writestr(name, raw)
    with pytest.raises(ValueError, match=r"the .npz unpacks to 50,331,648 bytes; at most "
                                         r"41,943,040 are read"):
        aio._load_npz(buffer.getvalue())  # the upload limit (5 MB) would refuse it first


def test_npz_member_whose_header_declares_more_than_the_upload_can_pay_for():
    # a member of just a header (small declared size, nothing compressed) announcing the
    # largest allowed weights: refused on the memory they would cost, before reading
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (8, 8, 256, 256)})
    data = zip_of({"attention.npy": header.getvalue()})
    with pytest.raises(ValueError, match=r"would take 48.0 MiB of server memory from a "
                                         r"[\d,]+-byte upload; attnviz accepts at most 64 "
                                         r"times"):
        aio.load_attention(data, "w.npz")


def test_real_compressed_weights_are_accepted():
    # softmax weights of 12 layers x 12 heads x 64 tokens, np.savez_compressed: ~1.1x smaller
    weights = softmax_rows((12, 12, 64, 64)).astype(np.float32)
    causal = np.tril(np.ones((64, 64), dtype=np.float32))
    masked = weights * causal
    masked /= masked.sum(axis=-1, keepdims=True)  # half zeros: compresses further
    for arr in (weights, masked):
        loaded = aio.load_attention(npz(attention=arr), "w.npz")
        assert loaded.weights.shape == (12, 12, 64, 64)


@pytest.mark.parametrize("data, name, message", [
    (b"", "w.npy", r"the file is empty"),
    (b"hello", "w.npy", r"not a valid .npy array"),
    (b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'", "w.npy", r"not a valid .npy array"),
    (b"PK\x03\x04garbage", "w.npz", r"damaged or not a .npz"),
    (b"data", "w.csv", r"'w.csv' is not a .npy or .npz file"),
    (b"data", "noextension", r"is not a .npy or .npz file"),
])
def test_corrupt_empty_and_wrong_type(data, name, message):
    with pytest.raises(ValueError, match=message):
        aio.load_attention(data, name)


def test_truncated_npy_and_npz():
    data = npy(softmax_rows((3, 8, 8)))
    with pytest.raises(ValueError, match=r"cut short: the header announces 1,536 bytes"):
        aio.load_attention(data[:-10], "w.npy")
    z = npz(attention=softmax_rows((3, 8, 8)))
    with pytest.raises(ValueError, match=r"damaged|cannot be read|not a .npz"):
        aio.load_attention(z[: len(z) // 2], "w.npz")


def test_zip_with_a_non_npy_member():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(ValueError, match=r"holds 'readme.txt', which is not a .npy array"):
        aio.load_attention(buf.getvalue(), "w.npz")


@pytest.mark.parametrize("arr, message", [
    (np.array([["a", "b"], ["c", "d"]]), r"holds values of type <U1; attention weights must be "
                                         r"real numbers"),
    (np.ones((2, 2), dtype=complex), r"holds values of type complex128"),
    (np.ones((2, 2), dtype=bool), r"holds values of type bool"),
])
def test_wrong_value_types(arr, message):
    with pytest.raises(ValueError, match=message):
        aio.load_attention(npy(arr), "w.npy")


# ---------------------------------------------------------------------------------------------
# Values: non-negative (refused), finite (refused), rows summing to 1 (warning)
# ---------------------------------------------------------------------------------------------

def test_negative_values_are_refused():
    w = softmax_rows((2, 3, 3))
    w[1, 2, 0] = -0.25
    with pytest.raises(ValueError, match=r"negative values \(-0.25 at layer 0, head 1, row 2, "
                                         r"column 0\); attention weights are >= 0. Did you save "
                                         r"the scores before the softmax\?"):
        aio.load_attention(npy(w), "w.npy")


def test_nan_and_inf_are_refused():
    w = softmax_rows((3, 3))
    w[1, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values \(first at layer 0, head 0, "
                                         r"row 1, column 1\)"):
        aio.load_attention(npy(w), "w.npy")


def test_rows_not_summing_to_one_warn_but_load():
    w = softmax_rows((2, 4, 4))
    w[0, 1, 2] *= 2
    w[1, 3] = 0.0  # a padding row
    got = aio.load_attention(npy(w), "w.npy")
    assert len(got.warnings) == 1
    assert got.warnings[0].startswith("2 of 8 rows do not sum to 1 (e.g. layer 0, head 0, "
                                      "row 1 sums to ")
    np.testing.assert_array_equal(got.weights[0], w)  # shown as they are


def test_float16_rows_within_tolerance_do_not_warn():
    w = softmax_rows((4, 16, 16)).astype(np.float16)
    assert np.abs(w.astype(np.float64).sum(-1) - 1).max() < aio.ROW_SUM_TOL
    assert aio.load_attention(npy(w), "w.npy").warnings == ()


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, name, expected", [
    (b"The cat sat\n", "t.txt", ("The", "cat", "sat")),
    (b"The\ncat\nsat\n\n", "t.txt", ("The", "cat", "sat")),
    (b"New York\nis\n big\r\n", "t.txt", ("New York", "is", " big")),
    (b"\xef\xbb\xbfa b", "t.txt", ("a", "b")),
    ('["[CLS]", "é", "<script>", ""]'.encode(), "t.json", ("[CLS]", "é", "<script>", "")),
    (b' ["a","b"]', "tokens.txt", ("a", "b")),
])
def test_token_parsing(data, name, expected):
    tokens, warnings = aio.parse_tokens(data, name)
    assert tokens == expected
    assert warnings == []


@pytest.mark.parametrize("data, name, message", [
    (b"", "t.txt", r"the token file is empty"),
    (b" \n\n", "t.txt", r"the token file is empty"),
    (b"\xff\xfe\xfd", "t.txt", r"not UTF-8 text"),
    (b"[1, 2]", "t.json", r"token 0 of the JSON list is not a string"),
    (b"[]", "t.json", r"must be a non-empty list of strings"),
    (b'{"a": 1}', "t.json", r"must be a non-empty list of strings"),
    (b"[\"a\"", "t.json", r"not valid JSON"),
    (b"[" * 50_000, "t.json", r"nested too deeply|not valid JSON"),
    (b"a " * 1025, "t.txt", r"holds 1,025 tokens; at most 1024"),
    (b"a" * (limits.MAX_TOKEN_FILE_BYTES + 1), "t.txt", r"at most 1,048,576 are allowed"),
])
def test_token_file_messages(data, name, message):
    with pytest.raises(ValueError, match=message):
        aio.parse_tokens(data, name)


def test_long_labels_are_cut_with_a_warning():
    tokens, warnings = aio.parse_tokens(("x" * 50 + " b").encode(), "t.txt")
    assert tokens == ("x" * limits.MAX_LABEL_CHARS, "b")
    assert warnings == ["token labels are cut to 40 characters"]


def test_token_count_must_match_t():
    aio.check_tokens(("a", "b"), 2)
    with pytest.raises(ValueError, match=r"holds 3 tokens but the attention matrices are 2×2"):
        aio.check_tokens(("a", "b", "c"), 2)


# ---------------------------------------------------------------------------------------------
# The example file, the config cap
# ---------------------------------------------------------------------------------------------

def test_example_file_loads_and_matches_its_generator():
    got = aio.load_attention(EXAMPLE_NPZ.read_bytes(), EXAMPLE_NPZ.name)
    weights, tokens = build_example()
    assert got.weights.shape == (2, 4, 6, 6)
    np.testing.assert_array_equal(got.weights, weights.astype(np.float64))
    assert got.tokens == tokens == ("The", "sleepy", "child", "reads", "a", "book")
    assert got.warnings == ()
    assert tuple(json.loads(EXAMPLE_TOKENS.read_text())) == tokens
    parsed, _ = aio.parse_tokens(EXAMPLE_TOKENS.read_bytes(), EXAMPLE_TOKENS.name)
    assert parsed == tokens
    with np.load(EXAMPLE_NPZ, allow_pickle=False) as z:  # plain numpy reads it too
        assert set(z.files) == {"attention", "tokens"}


def test_example_is_in_the_package_data():
    text = (ROOT / "pyproject.toml").read_text()
    data = tomllib.loads(text)["tool"]["setuptools"]["package-data"]["attnviz.io.examples"]
    assert "*.npz" in data and "*.json" in data


def test_code_cap_matches_the_server_config():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == limits.MAX_UPLOAD_MB == 5


# ---------------------------------------------------------------------------------------------
# Fuzz: weights or a ValueError, never another exception
# ---------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.sampled_from(["w.npy", "w.npz"]))
def test_fuzz_uploads(raw, name):
    try:
        got = aio.load_attention(raw, name)
    except ValueError as exc:
        assert str(exc)
    else:
        assert got.weights.ndim == 4


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_npz(data):
    good = npz(attention=softmax_rows((2, 3, 3)), tokens=np.array(["a", "b", "c"]))
    i = data.draw(st.integers(0, len(good) - 1))
    patch = data.draw(st.binary(min_size=1, max_size=8))
    raw = good[:i] + patch + good[i + len(patch):]
    try:
        aio.load_attention(raw, "w.npz")
    except ValueError as exc:
        assert str(exc)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=500), st.sampled_from(["t.txt", "t.json"]))
def test_fuzz_tokens(raw, name):
    try:
        tokens, _ = aio.parse_tokens(raw, name)
    except ValueError as exc:
        assert str(exc)
    else:
        assert all(isinstance(t, str) for t in tokens)


# a damaged header makes numpy's header parser raise whatever its tokenizer raises
# (tokenize.TokenError, SyntaxError, IndexError, ...): each must become the same message
DAMAGED_HEADERS = [b"(", b"{'descr': '<f8', 'fortran_order': False, 'shape': (", b"{'descr'",
                   b"{" * 50, b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} \x00",
                   b"\xff\xfe", b"[1, 2"]


@pytest.mark.parametrize("header", DAMAGED_HEADERS)
def test_a_damaged_npy_header_is_a_message(header):
    raw = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
    with pytest.raises(ValueError, match=r"is not a valid \.npy array \(its header cannot be "
                                         r"read\)"):
        aio.load_attention(raw, "w.npy")
    with pytest.raises(ValueError, match=r"is not a valid \.npy array"):
        aio.load_attention(npz_with_member("attention.npy", raw), "w.npz")


def npz_with_member(name: str, raw: bytes) -> bytes:
    """A zip holding one member ``name`` (an empty name too: hand zipfile a ZipInfo)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        info = zipfile.ZipInfo("x")
        info.filename = name
        zf.writestr(info, raw)
    return buffer.getvalue()


def test_an_npz_member_with_an_empty_name_is_a_message():
    """Found by the fuzzer: zipfile's own is_dir() raises IndexError on such a member."""
    raw = npz_with_member("", npy(softmax_rows((2, 3, 3))))
    with pytest.raises(ValueError, match=r"the \.npz holds '', which is not a \.npy array"):
        aio.load_attention(raw, "w.npz")


# ---------------------------------------------------------------------------------------------
# Lone surrogates, huge values, BERT-style token files, odd headers, size wording
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, name, message", [
    (b'["a", "\\ud800", "b"]', "t.json", r"token 1 of the token file holds a character that is "
                                         r"not valid Unicode \(a lone surrogate"),
    (b'["\\udfff"]', "t.txt", r"token 0 of the token file holds a character that is not valid"),
    ("a \ud800 b".encode("utf-8", "surrogatepass"), "t.txt", r"the token file is not UTF-8"),
    ("a\n\ud800\nb".encode("utf-8", "surrogatepass"), "t.txt", r"the token file is not UTF-8"),
])
def test_token_files_with_a_lone_surrogate_are_refused(data, name, message):
    with pytest.raises(ValueError, match=message):
        aio.parse_tokens(data, name)


def test_npz_tokens_with_a_lone_surrogate_are_refused():
    w = softmax_rows((2, 3, 3))
    data = npz(attention=w, tokens=np.array(["a", "\ud800", "c"]))
    with pytest.raises(ValueError, match=r"token 1 of array tokens of the \.npz holds a "
                                         r"character that is not valid Unicode"):
        aio.load_attention(data, "w.npz")
    # every token that does reach a page encodes as UTF-8
    good = aio.load_attention(npz(attention=w, tokens=np.array(["a", "é", "😀"])), "w.npz")
    assert good.tokens == ("a", "é", "😀")


@pytest.mark.parametrize("value", [1e306, 1e308, np.finfo(np.float64).max, 1.1e101])
def test_weights_too_large_for_the_views_are_refused(value):
    w = softmax_rows((2, 4, 4))
    w[1, 2, 3] = value
    with pytest.raises(ValueError, match=r"the weights hold \S+ at layer 0, head 1, row 2, "
                                         r"column 3; attention weights lie between 0 and 1, "
                                         r"and values above 1e\+100 cannot be drawn"):
        aio.load_attention(npy(w), "w.npy")


@pytest.mark.parametrize("value", [1e100, -0.0, 5e-324, 2.2250738585072014e-308, 0.0])
def test_extreme_but_computable_weights_load(value):
    w = np.full((2, 3, 3), value)
    got = aio.load_attention(npy(w), "w.npy")
    np.testing.assert_array_equal(got.weights[0], w)
    assert np.isfinite(got.weights.sum(axis=(1, 3))).all()  # head mean and row sums finite


@pytest.mark.parametrize("data, expected", [
    (b"[CLS]\nthe\ncat\n[SEP]\n", ("[CLS]", "the", "cat", "[SEP]")),
    (b"[CLS] the cat [SEP]", ("[CLS]", "the", "cat", "[SEP]")),
    (b"  [CLS]\r\n[MASK]\r\n", ("  [CLS]", "[MASK]")),
    (b"[", ("[",)),
    (b"[1]\n[2]\n", ("[1]", "[2]")),
])
def test_bert_style_token_text_is_read_as_tokens(data, expected):
    for name in ("tokens.txt", "tokens"):
        tokens, warnings = aio.parse_tokens(data, name)
        assert tokens == expected
        assert warnings == []


def test_json_lists_in_a_txt_are_still_json_and_a_json_file_must_be_json():
    assert aio.parse_tokens(b'[ "a", "b" ]', "t.txt")[0] == ("a", "b")
    assert aio.parse_tokens(b'\n["a"]', "t.txt")[0] == ("a",)
    with pytest.raises(ValueError, match=r"not valid JSON"):
        aio.parse_tokens(b"[CLS] a", "t.json")
    with pytest.raises(ValueError, match=r"not valid JSON"):
        aio.parse_tokens(b'["a", ', "t.txt")


def header_only(shape, descr="<f8") -> bytes:
    """A .npy header announcing ``shape`` (numpy writes negative sizes without complaint)."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": descr, "fortran_order": False,
                                                  "shape": shape})
    return header.getvalue()


@pytest.mark.parametrize("shape", [(-1, -1), (-1, 2, 2), (-3, 3, 3), (2, -1, -1), (1, 1, -2, -2),
                                   (-2, -2)])
def test_negative_sizes_in_a_header_are_a_message_in_our_words(shape):
    raw = header_only(shape) + b"\0" * 64
    for data, name in ((raw, "w.npy"), (npz_with_member("attention.npy", raw), "w.npz")):
        with pytest.raises(ValueError, match=r"declares a negative size") as err:
            aio.load_attention(data, name)
        assert "unknown dimension" not in str(err.value)
        assert "-" not in str(err.value).split("declares")[0]


def test_negative_sizes_of_an_npz_tokens_array_are_a_message():
    w = npy(softmax_rows((3, 3)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("attention.npy", w)
        zf.writestr("tokens.npy", header_only((-3,), "<U1") + b"\0" * 64)
    with pytest.raises(ValueError, match=r"array 'tokens' of the \.npz declares a negative size"):
        aio.load_attention(buffer.getvalue(), "w.npz")


@pytest.mark.parametrize("size", [limits.MAX_UPLOAD_BYTES + 1, limits.MAX_UPLOAD_BYTES + 40_000])
def test_oversize_message_gives_two_different_sizes(size):
    with pytest.raises(ValueError) as err:
        aio.load_attention(b"\x93NUMPY" + b"\0" * (size - 6), "w.npy")
    message = str(err.value)
    assert message == (f"the file is {size:,} bytes; uploads may be at most "
                       f"{limits.MAX_UPLOAD_BYTES:,} bytes ({limits.MAX_UPLOAD_MB} MB)")
