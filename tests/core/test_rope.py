"""RoPE (attnviz.core.rope): golden numbers, the RoFormer formula written out, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz.core.rope import apply_rope, layout_permutation, rope_angles, rotary_dims

TOL = {"rtol": 1e-12, "atol": 1e-12}
QUICK = settings(max_examples=40, deadline=None, database=None)
VALUES = st.floats(-5, 5, allow_nan=False, allow_infinity=False)


@st.composite
def heads(draw, even=True):
    """x of shape (n_heads, t, d) with d even, and a base."""
    n, t, half = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 4))
    x = draw(hnp.arrays(np.float64, (n, t, 2 * half), elements=VALUES))
    return x, draw(st.sampled_from([10000.0, 100.0, 10.0, 2.0, 0.5]))


def test_golden_two_dimensions_rotate_by_the_position():
    """d = 2: θ_0 = 1, so position m rotates (1, 0) by m radians."""
    x = np.tile([1.0, 0.0], (3, 1))
    out = apply_rope(x)
    np.testing.assert_allclose(out, [[1, 0], [np.cos(1), np.sin(1)], [np.cos(2), np.sin(2)]],
                               **TOL)


def test_golden_angles():
    """θ_i = base^(−2i/d): d = 4, base 100 gives θ = (1, 1/10)."""
    np.testing.assert_allclose(rope_angles([0, 1, 3], 4, base=100.0),
                               [[0, 0], [1, 0.1], [3, 0.3]], **TOL)


def roformer_loop(x, base, layout, d_rot, offset):
    """RoFormer eq. (34), one row and one pair at a time (the pairs given by the layout)."""
    out = x.copy()
    t, d = x.shape
    for m in range(t):
        for i in range(d_rot // 2):
            a, b = (i, i + d_rot // 2) if layout == "split_half" else (2 * i, 2 * i + 1)
            angle = (m + offset) * base ** (-2 * i / d_rot)
            out[m, a] = x[m, a] * np.cos(angle) - x[m, b] * np.sin(angle)
            out[m, b] = x[m, a] * np.sin(angle) + x[m, b] * np.cos(angle)
    return out


@pytest.mark.parametrize("layout", ["split_half", "interleaved"])
@pytest.mark.parametrize("case", range(10))
def test_matches_the_formula_row_by_row(layout, case):
    rng = np.random.default_rng(case)
    t, d = int(rng.integers(1, 8)), 2 * int(rng.integers(1, 5))
    d_rot = 2 * int(rng.integers(1, d // 2 + 1))
    x, base, offset = rng.normal(size=(t, d)), float(rng.uniform(1, 1000)), int(rng.integers(9))
    np.testing.assert_allclose(apply_rope(x, base=base, layout=layout, d_rot=d_rot,
                                          offset=offset),
                               roformer_loop(x, base, layout, d_rot, offset), **TOL)


@QUICK
@given(heads(), st.sampled_from(["split_half", "interleaved"]))
def test_rotation_preserves_norms(xb, layout):
    x, base = xb
    out = apply_rope(x, base=base, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1),
                               rtol=1e-12, atol=1e-12)


@QUICK
@given(heads(), heads(), st.integers(-50, 50), st.sampled_from(["split_half", "interleaved"]))
def test_scores_are_invariant_to_a_common_shift_of_positions(xq, xk, shift, layout):
    """q_m·k_n depends on m − n only: an offset added to every position changes no score."""
    q, base = xq
    k = np.resize(xk[0], q.shape)  # same heads, rows and width as q
    scores = apply_rope(q, base=base, layout=layout) @ \
        np.swapaxes(apply_rope(k, base=base, layout=layout), -1, -2)
    shifted = apply_rope(q, base=base, layout=layout, offset=shift) @ \
        np.swapaxes(apply_rope(k, base=base, layout=layout, offset=shift), -1, -2)
    np.testing.assert_allclose(shifted, scores, rtol=1e-9, atol=1e-9)


def test_a_shift_changes_the_rotated_vectors_themselves():
    """The invariance is of the scores, not of q and k (which would make the test above empty)."""
    x = np.random.default_rng(0).normal(size=(4, 4))
    assert not np.allclose(apply_rope(x, offset=3), apply_rope(x))


@QUICK
@given(heads(), st.data())
def test_the_layouts_agree_after_the_fixed_permutation(xb, data):
    x, base = xb
    d = x.shape[-1]
    d_rot = data.draw(st.sampled_from(range(2, d + 1, 2)))
    p = layout_permutation(d, d_rot)
    np.testing.assert_allclose(apply_rope(x[..., p], base=base, layout="split_half", d_rot=d_rot),
                               apply_rope(x, base=base, layout="interleaved", d_rot=d_rot)[..., p],
                               **TOL)


def test_mixing_the_layouts_gives_other_numbers():
    """The pitfall: weights laid out for one layout, rotated with the other."""
    x = np.random.default_rng(1).normal(size=(5, 4))
    assert not np.allclose(apply_rope(x, layout="split_half"), apply_rope(x, layout="interleaved"))


def test_partial_rotary_passes_the_rest_through():
    x = np.random.default_rng(2).normal(size=(2, 5, 8))
    out = apply_rope(x, rotary_fraction=0.5)
    np.testing.assert_array_equal(out[..., 4:], x[..., 4:])
    np.testing.assert_allclose(out[..., :4], apply_rope(x[..., :4]), **TOL)
    assert rotary_dims(8, 0.5) == 4 and rotary_dims(64, 0.25) == 16


def test_position_zero_is_the_identity_and_x_is_not_changed():
    x = np.random.default_rng(3).normal(size=(1, 6))
    before = x.copy()
    np.testing.assert_array_equal(apply_rope(x), x)
    apply_rope(x, offset=4)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(x=np.ones((3, 3))), r"rotated dimensions must be an even number >= 2: "
                              r"rotary_fraction 1 of d_k = 3 gives 3"),
    (dict(x=np.ones((3, 4)), rotary_fraction=0.25), r"rotary_fraction 0.25 of d_k = 4 gives 1"),
    (dict(x=np.ones((3, 4)), rotary_fraction=1.5), r"rotary_fraction must be between 0 and 1"),
    (dict(x=np.ones((3, 4)), rotary_fraction=0), r"rotary_fraction must be a finite number > 0"),
    (dict(x=np.ones((3, 4)), base=0.0), r"base must be a finite number > 0, got 0.0"),
    (dict(x=np.ones((3, 4)), base=-2.0), r"base must be a finite number > 0"),
    (dict(x=np.ones((3, 4)), layout="rows"), r"layout must be one of split_half, interleaved"),
    (dict(x=np.ones((3, 4)), d_rot=3), r"d_rot must be an even number between 2 and d = 4"),
    (dict(x=np.ones((3, 4)), positions=[0, 1]), r"positions must have one entry per row of x"),
    (dict(x=np.ones((3, 4)), offset=np.inf), r"offset must hold finite numbers"),
    (dict(x=np.ones(4)), r"x must be 2-D or 3-D"),
])
def test_validation_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        apply_rope(**kwargs)
