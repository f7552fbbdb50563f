"""Refusals of uploads, files and links show a number as it was given and name the real cause,
not what a float64 copy of it became: a longdouble 1e4000 is too large (not "NaN or infinite"),
a 401-digit whole number in a scenario file is beyond float64 (not "not finite"), a numpy
scalar is shown as nan (not np.float64(nan))."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

from attnviz import VARIANTS
from attnviz.io import attention_io as aio
from attnviz.io import scenario_io


def npy(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="this platform's longdouble is float64")
@pytest.mark.parametrize("value, message", [
    ("1e4000", "the weights hold 1e+4000 at layer 0, head 0, row 0, column 0; attention "
               "weights lie between 0 and 1"),
    ("-1e4000", "the weights hold negative values (-1e+4000 at layer 0, head 0, row 0, "
                "column 0)"),
])
def test_a_longdouble_beyond_float64_is_named_as_it_is_stored(value, message):
    weights = np.full((3, 3), np.longdouble(value))
    assert np.isfinite(weights).all()
    with pytest.raises(ValueError) as err:
        aio.load_attention(npy(weights), "w.npy")
    assert str(err.value).startswith(message), str(err.value)
    assert "NaN or infinite" not in str(err.value)


def test_float32_and_float16_weights_are_checked_without_overflow_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (np.float16, np.float32, np.int8, np.uint64):
            got = aio.load_attention(npy(np.eye(3, dtype=dtype)), "w.npy")
            assert got.weights.dtype == np.float64 and not got.warnings


def test_a_whole_number_beyond_float64_in_a_file_is_named_too_large():
    from attnviz import PRESETS

    data = scenario_io.to_dict(PRESETS["seed_000"].build())
    data["x"]["values"][0][1] = 10**400
    with pytest.raises(ValueError) as err:
        scenario_io.from_dict(data)
    assert str(err.value) == ("x[0][1] must be below 1.8e308 in size (the largest float64), got "
                              "a whole number of about 401 digits")


@pytest.mark.parametrize("value, shown", [
    (np.float64("nan"), "got nan"),
    (np.float64(1e308), "got 1e+308"),
])
def test_a_numpy_number_is_shown_as_a_number(value, shown):
    param = VARIANTS["rope"].param("rope_attention_scaling")
    with pytest.raises(ValueError) as err:
        param.check(value)
    assert str(err.value).endswith(shown) and "np." not in str(err.value), str(err.value)
    vector = VARIANTS["rope"].param("rope_inv_freq")
    with pytest.raises(ValueError) as err:
        vector.check([0.5, value])
    assert str(err.value).endswith(shown) and "np." not in str(err.value), str(err.value)
