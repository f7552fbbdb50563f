"""QK-norm (rms_norm) and logit soft-capping (attend_heads(..., softcap=c))."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz.core.attention import attend_heads
from attnviz.core.qk_norm import rms_norm

TOL = {"rtol": 1e-12, "atol": 1e-12}
QUICK = settings(max_examples=40, deadline=None, database=None)


def test_rms_norm_golden():
    """(3, 4): mean of squares 12.5, root ≈ 3.5355; with eps it is a hair larger."""
    np.testing.assert_allclose(rms_norm([[3.0, 4.0]], eps=1e-300), [[3 / 12.5 ** 0.5,
                                                                      4 / 12.5 ** 0.5]], **TOL)
    np.testing.assert_allclose(rms_norm([[3.0, 4.0]], [2.0, 0.5], eps=1e-300),
                               [[6 / 12.5 ** 0.5, 2 / 12.5 ** 0.5]], **TOL)
    np.testing.assert_array_equal(rms_norm(np.zeros((2, 3))), 0.0)  # eps: no division by 0


def test_rms_norm_row_by_row():
    rng = np.random.default_rng(1)
    x, g = rng.normal(size=(2, 5, 4)) * 10, rng.normal(size=4)
    out = rms_norm(x, g, eps=1e-5)
    for idx in np.ndindex(2, 5):
        row = x[idx]
        np.testing.assert_allclose(out[idx], row / np.sqrt(np.mean(row ** 2) + 1e-5) * g, **TOL)


@QUICK
@given(hnp.arrays(np.float64, (3, 4), elements=st.floats(-1e3, 1e3)), st.floats(0.1, 10))
def test_normalised_scores_are_bounded_by_d_times_gain_squared(q, g):
    k = q[::-1]
    scores = rms_norm(q, g) @ rms_norm(k, g).T
    assert np.all(np.abs(scores) <= 4 * g * g * (1 + 1e-12))


@QUICK
@given(st.floats(50, 1e4), st.integers(0, 2 ** 32 - 1))
def test_softcap_is_the_identity_for_scores_far_below_the_cap(cap, seed):
    rng = np.random.default_rng(seed)
    q_h, k_h, v_h = (rng.normal(size=(2, 4, 3)) for _ in range(3))
    plain, capped = attend_heads(q_h, k_h, v_h), attend_heads(q_h, k_h, v_h, softcap=cap)
    # |s| < ~10 ≪ c: c·tanh(s/c) − s = −s³/(3c²) + ...
    np.testing.assert_allclose(capped.scaled, plain.scaled, rtol=0,
                               atol=np.abs(plain.scaled).max() ** 3 / cap ** 2)
    np.testing.assert_allclose(capped.weights, plain.weights, atol=1e-2 * 50 / cap)


@QUICK
@given(st.floats(0.01, 5), st.integers(0, 2 ** 32 - 1))
def test_softcap_bounds_every_logit_and_keeps_the_order(cap, seed):
    rng = np.random.default_rng(seed)
    q_h, k_h, v_h = (rng.normal(size=(1, 5, 3)) * 5 for _ in range(3))
    plain, capped = attend_heads(q_h, k_h, v_h), attend_heads(q_h, k_h, v_h, softcap=cap)
    assert np.all(np.abs(capped.scaled) <= cap)
    order = np.argsort(plain.scaled, axis=-1)  # tanh keeps the order (ties where it saturates)
    assert np.all(np.diff(np.take_along_axis(capped.scaled, order, axis=-1), axis=-1) >= 0)
    np.testing.assert_allclose(capped.scaled, cap * np.tanh(plain.scaled / cap), **TOL)


def test_softcap_comes_before_the_mask():
    q_h = np.ones((1, 2, 1)) * 10
    result = attend_heads(q_h, q_h, q_h, mask=np.tri(2, dtype=bool), softcap=1.0)
    assert result.masked[0, 0, 1] == -np.inf
    np.testing.assert_allclose(result.masked[0, 1], [np.tanh(100.0)] * 2, **TOL)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: rms_norm(np.ones((2, 3)), [1.0, 2.0]), r"gain must be one number or one per "
                                                    r"dimension \(3\), got 2"),
    (lambda: rms_norm(np.ones((2, 3)), eps=0), r"eps must be a finite number > 0"),
    (lambda: rms_norm(np.ones((2, 3)), np.nan), r"gain must hold finite numbers"),
    (lambda: attend_heads(np.ones((1, 2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2)),
                          softcap=0.0), r"softcap must be a finite number > 0, got 0.0"),
])
def test_validation_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# rms_norm must not square float32 values near 3e38 (overflow: RuntimeWarning, an error under
# pyproject's filterwarnings; a property test that finds it then shrinks for minutes).
EXTREMES = {np.float32: np.finfo(np.float32).max, np.float64: np.finfo(np.float64).max}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1.0, 0.5, 1e-3])
def test_rms_norm_at_the_dtype_extremes(dtype, scale):
    top = EXTREMES[dtype] * scale
    x = np.array([[top, -top, top / 2, 0.0], [top, 0.0, 0.0, 0.0]], dtype=dtype)
    out = rms_norm(x)
    assert np.all(np.isfinite(out))
    # the scale drops out: the same rows at unit size give the same normalised rows
    unit = (x / dtype(top)).astype(np.float64)
    np.testing.assert_allclose(out, rms_norm(unit, eps=1e-300), rtol=1e-5 if dtype == np.float32
                               else 1e-12)
    np.testing.assert_allclose(np.sqrt(np.mean(out.astype(np.float64) ** 2, axis=-1)), 1.0,
                               rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rms_norm_backward_at_the_dtype_extremes(dtype):
    from attnviz.core.qk_norm import rms_norm_backward

    top = EXTREMES[dtype]
    x = np.array([[top, -top / 3, 0.0]], dtype=dtype)
    d_y = np.array([[1.0, -2.0, 0.5]], dtype=dtype)
    grad = rms_norm_backward(x, d_y)
    assert np.all(np.isfinite(grad))
    # the gradient scales as 1/|x|: the same row at unit size, divided by the scale
    unit = rms_norm_backward((x / dtype(top)).astype(np.float64), d_y.astype(np.float64),
                             eps=1e-300)
    np.testing.assert_allclose(grad.astype(np.float64) * float(top), unit, rtol=1e-4)


def test_rms_norm_of_tiny_values_keeps_eps():
    x = np.full((1, 4), 1e-300)
    np.testing.assert_allclose(rms_norm(x, eps=1e-6), x / np.sqrt(1e-6), rtol=1e-12)
    np.testing.assert_array_equal(rms_norm(np.zeros((1, 3), dtype=np.float32)), 0.0)


@QUICK
@given(hnp.arrays(np.float32, (2, 4),
                  elements=st.floats(width=32, allow_nan=False, allow_infinity=False)))
def test_rms_norm_is_finite_for_every_float32(x):
    out = rms_norm(x)
    assert np.all(np.isfinite(out)) and np.all(np.abs(out) <= 2.0 + 1e-6)  # |x_i|/rms <= √d


def test_property_tests_run_derandomised_with_bounded_shrinking():
    """tests/conftest.py's ``ci`` profile: every run tests the same examples, and a
    failure is reported without an unbounded shrink. A module's own settings inherit it."""
    import os

    from hypothesis import Phase

    if os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci":
        pytest.skip("another Hypothesis profile was chosen for this run")
    for active in (settings.default, QUICK):
        assert active.derandomize and active.database is None and active.print_blob
        assert Phase.shrink not in active.phases and Phase.generate in active.phases
    assert settings.default.deadline is not None and settings.default.max_examples <= 100
    # no test module loads a profile of its own (it changed every module collected after it)
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    call = "settings." + "load_profile("  # (not written whole: this file would match)
    loaders = [str(f.relative_to(tests)) for f in tests.rglob("test_*.py")
               if call in f.read_text(encoding="utf-8")]
    assert loaders == []
