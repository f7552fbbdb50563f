"""The checks a captured file goes through when it comes back: warnings that say what they are
about (the weights or the labels), header sizes checked without overflow, a capture's small
arrays read with the uploads' own checks, and save_capture writing only files it reads back."""

from __future__ import annotations

import copy
import io
import pickle
import zipfile

import numpy as np
import pytest

from attnviz.io import attention_io as aio
from attnviz.io.capture import Capture, capture_arrays, save_capture
from attnviz.scenarios import limits


def npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def causal(layers=2, heads=2, t=3) -> np.ndarray:
    w = np.tril(np.ones((layers, heads, t, t)))
    return w / w.sum(axis=-1, keepdims=True)


def capture(tokens, layers=2) -> Capture:
    """A capture built from numpy arrays, as :func:`attnviz.io.capture.capture` returns one."""
    t = len(tokens)
    return Capture(attentions=(causal(layers, 2, t),), tokens=(tuple(tokens),),
                   input_ids=(np.arange(t, dtype=np.int64),), token_type_ids=None,
                   positions=(np.arange(t, dtype=np.int64),), config={"model_type": "gpt2"},
                   model_type="gpt2", is_causal=True)


def header(shape, descr="<i8") -> bytes:
    """A .npy header announcing ``shape``, without data."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    return out.getvalue()


def with_member(arrays: dict, name: str, raw: bytes) -> bytes:
    """The .npz of ``arrays`` with member ``name`` replaced by the bytes ``raw``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for key, value in arrays.items():
            member = io.BytesIO()
            np.save(member, value)
            zf.writestr(key + ".npy", raw if key == name else member.getvalue())
    return buf.getvalue()


# --- warnings say what they are about ---------------------------------------------------------

@pytest.mark.parametrize("tokens, kind", [
    (["a" * (limits.MAX_LABEL_CHARS + 1), "b", "c"], aio.LABELS),
    (["a\u202eb", "c", "d"], aio.LABELS),
    (["a", "b"], aio.TOKENS),
])
def test_a_warning_about_the_labels_is_not_one_about_the_weights(tokens, kind):
    got = aio.load_attention(npz(attention=causal(), tokens=np.array(tokens)), "w.npz")
    assert [w.kind for w in got.warnings] == [kind]
    assert not got.rows_off


def test_rows_not_summing_to_1_are_a_warning_about_the_weights():
    got = aio.load_attention(npz(attention=causal() * 0.5, tokens=np.array(list("abc"))),
                             "w.npz")
    assert [w.kind for w in got.warnings] == [aio.ROWS] and got.rows_off
    assert got.warnings[0].startswith("12 of 12 rows do not sum to 1")  # still its sentence


def test_a_token_file_s_warnings_are_about_the_labels():
    _, warnings = aio.parse_tokens("a\u202eb c".encode())
    assert [w.kind for w in warnings] == [aio.LABELS]


def test_a_warning_keeps_its_kind_when_copied_or_pickled():
    warning = aio.UploadWarning("token labels are cut to 40 characters", aio.LABELS)
    for twin in (copy.copy(warning), copy.deepcopy(warning), pickle.loads(pickle.dumps(warning))):
        assert twin == warning and twin.kind == aio.LABELS
    with pytest.raises(ValueError, match="unknown warning kind"):
        aio.UploadWarning("x", "other")


# --- header sizes without overflow ------------------------------------------------------------

@pytest.mark.parametrize("member", ["attention", "tokens", "layers", "input_ids"])
@pytest.mark.parametrize("shape", [(2**62, 4), (2**32, 2**32), (2**70,)])
def test_a_header_of_an_impossible_size_is_refused_as_such(member, shape):
    data = with_member(capture_arrays(capture(list("abc"))), member, header(shape))
    with pytest.raises(ValueError, match="declares an impossible size in its header") as err:
        aio.load_attention(data, "c.npz")
    assert "reshape" not in str(err.value) and f"array '{member}' of the .npz" in str(err.value)


def test_an_impossible_size_is_found_for_one_byte_values_too():
    # 2**63 one-byte values: numpy's own int64 product wraps around to a negative number
    with pytest.raises(ValueError, match="impossible size"):
        aio.load_attention(header((2**62, 2), "|i1"), "w.npy")


def test_the_largest_possible_size_is_refused_by_the_limits_not_as_impossible():
    # 2**58 float64 values: 2**61 bytes, beyond every limit but not beyond numpy
    with pytest.raises(ValueError, match=r"has t = 536870912 tokens; at most"):
        aio.load_attention(header((2**29, 2**29), "<f8"), "w.npy")


# --- a capture's small arrays -----------------------------------------------------------------

def archive(data: bytes) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(data))


def test_a_small_array_is_read_with_its_values():
    data = npz(layers=np.array([0, 2], dtype=np.int64))
    got = aio.read_small_array(archive(data), "layers", "iu", 4, "the layers array")
    assert got.tolist() == [0, 2]


@pytest.mark.parametrize("raw, message", [
    (header((2**40,)), "the layers array holds 1,099,511,627,776 values; at most 16 are allowed"),
    (header((2**62, 4)), "the layers array declares an impossible size in its header"),
    (header((3,), "<f8") + b"\0" * 24,
     "the layers array holds values of type float64; it must hold whole numbers"),
    (header((3,)) + b"\0" * 8, "the layers array is cut short: the header announces 24 bytes"),
])
def test_a_small_array_is_refused_in_a_sentence(raw, message):
    data = with_member({"layers": np.arange(2)}, "layers", raw)
    with pytest.raises(ValueError) as err:
        aio.read_small_array(archive(data), "layers", "iu", 16, "the layers array")
    assert str(err.value).startswith(message), str(err.value)


# --- save_capture writes only what Model view reads back --------------------------------------

@pytest.mark.parametrize("layers", [[1, 0], [0, 0]])
def test_save_capture_keeps_layers_in_increasing_order_only(tmp_path, layers):
    with pytest.raises(ValueError, match=r"each layer once, in increasing order, got \[1, 0\]|"
                                         r"each layer once, in increasing order, got \[0, 0\]"):
        save_capture(capture(list("abc")), tmp_path / "c.npz", layers=layers)
    assert not (tmp_path / "c.npz").exists()
    save_capture(capture(list("abc")), tmp_path / "c.npz", layers=[0, 1])
