"""Every ValueError path of the core, each with its message (STYLE.md convention 7).

Messages are matched with ``re.escape`` of a literal fragment, so a reworded message fails
here loudly rather than silently passing.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

import numpy as np
import pytest

from attnviz import (
    PRESETS,
    additive_attention,
    attention_pooling,
    causal_mask,
    cross_attention,
    init_weights,
    mix_heads,
    multi_head_attention,
    padding_mask,
    run_scenario,
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positional_encoding,
    softmax,
    window_mask,
)
from attnviz.core.checks import (
    MAX_ENTRIES,
    as_array,
    as_mask,
    as_scores,
    check_count,
    check_entries,
    check_flag,
    check_head,
    check_inner,
    check_positive,
)
from attnviz.core.diagnostics import entropy, row_diagnostics
from attnviz.core.downsample import block_factor, block_labels, downsample
from attnviz.scenarios.scenario import permutation_check

I3 = np.eye(3)
X = np.ones((4, 3))
Q, K, V = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))


def raises(fragment: str):
    """pytest.raises(ValueError) whose message contains ``fragment`` literally."""
    return pytest.raises(ValueError, match=re.escape(fragment))


# ---------------------------------------------------------------------------------------------
# _checks: turning input into arrays
# ---------------------------------------------------------------------------------------------

BAD_ARRAYS = [
    ("ragged", [[1, 2], [3]], "q must be a numeric array; could not read it"),
    ("strings", [["a", "b"]], "q must hold real numbers, got values of type <U1"),
    ("objects", [[1, None]], "q must hold real numbers, got values of type object"),
    ("complex", [[1j, 2]], "q must hold real numbers, got values of type complex128"),
    ("datetimes", np.array([["2020-01-01"]], dtype="datetime64[D]"),
     "q must hold real numbers, got values of type datetime64[D]"),
    ("rank 1", [1.0, 2.0], "q must be 2-D, got a 1-D array of shape (2,)"),
    ("rank 0", 3.0, "q must be 2-D, got a 0-D array of shape ()"),
    ("rank 3", np.ones((1, 2, 3)), "q must be 2-D, got a 3-D array of shape (1, 2, 3)"),
    ("empty rows", np.zeros((0, 3)), "q must not be empty, got shape (0, 3)"),
    ("empty columns", np.zeros((2, 0)), "q must not be empty, got shape (2, 0)"),
    ("nan", [[1.0, np.nan]], "q must hold finite numbers, got nan at index (0, 1)"),
    ("inf", [[1.0], [np.inf]], "q must hold finite numbers, got inf at index (1, 0)"),
    ("-inf float32", np.array([[-np.inf]], dtype=np.float32),
     "q must hold finite numbers, got -inf at index (0, 0)"),
]


@pytest.mark.parametrize(("value", "message"), [case[1:] for case in BAD_ARRAYS],
                         ids=[case[0] for case in BAD_ARRAYS])
def test_as_array_rejects(value, message):
    with raises(message):
        as_array("q", value, 2)


def test_as_array_lists_several_allowed_ranks():
    with raises("b must be 0-D or 1-D or 2-D, got a 3-D array of shape (1, 1, 1)"):
        as_array("b", [[[1.0]]], (0, 1, 2))


@pytest.mark.parametrize(("value", "message"), [case[1:] for case in BAD_ARRAYS],
                         ids=[case[0] for case in BAD_ARRAYS])
def test_public_functions_name_the_bad_argument(value, message):
    """The same checks at the boundary of each entry point, naming its own argument."""
    for name, call in (
        ("q", lambda a: scaled_dot_product_attention(a, K, V)),
        ("k", lambda a: scaled_dot_product_attention(Q, a, V)),
        ("v", lambda a: scaled_dot_product_attention(Q, K, a)),
        ("x", lambda a: self_attention(a, I3, I3, I3)),
        ("x_q", lambda a: cross_attention(a, X, I3, I3, I3)),
        ("w_q", lambda a: self_attention(X, a, I3, I3)),
        ("w_k", lambda a: cross_attention(X, X, I3, a, I3)),
        ("w_v", lambda a: multi_head_attention(X, None, I3, I3, a, n_heads=1)),
        ("x_kv", lambda a: cross_attention(X, a, I3, I3, I3)),
        ("w_o", lambda a: multi_head_attention(X, None, I3, I3, I3, a, n_heads=1)),
        ("keys", lambda a: additive_attention(X, a, X, I3, I3, np.ones(3))),
        ("values", lambda a: additive_attention(X, X, a, I3, I3, np.ones(3))),
        ("x", lambda a: attention_pooling(a, np.ones(3))),
    ):
        with raises(message.replace("q ", f"{name} ", 1)):
            call(value)


def test_check_inner():
    check_inner("a", 2, "b", 2)
    with raises("w_q rows (3) must equal d_model (4)"):
        check_inner("w_q rows", 3, "d_model", 4)


@pytest.mark.parametrize(("value", "allow_zero", "message"), [
    ("hot", False, "temperature must be a number, got 'hot'"),
    (None, False, "temperature must be a number, got None"),
    (0, False, "temperature must be a finite number > 0, got 0"),
    (-1.5, False, "temperature must be a finite number > 0, got -1.5"),
    (float("nan"), False, "temperature must be a finite number > 0, got nan"),
    (float("inf"), False, "temperature must be a finite number > 0, got inf"),
    (-0.1, True, "temperature must be a finite number >= 0, got -0.1"),
    ("1", False, "temperature must be a number, got '1'"),
    ("2", True, "temperature must be a number, got '2'"),
    (True, False, "temperature must be a number, got True"),
    (False, True, "temperature must be a number, got False"),
    (np.bool_(True), False, "temperature must be a number, got np.True_"),
    ([1.0], False, "temperature must be a number, got [1.0]"),
    (1 + 0j, False, "temperature must be a number, got (1+0j)"),
])
def test_check_positive(value, allow_zero, message):
    with raises(message):
        check_positive("temperature", value, allow_zero=allow_zero)


@pytest.mark.parametrize(("value", "message"), [
    (0, "n must be a whole number >= 1, got 0"),
    (-2, "n must be a whole number >= 1, got -2"),
    (2.0, "n must be a whole number >= 1, got 2.0"),
    ("3", "n must be a whole number >= 1, got '3'"),
    (True, "n must be a whole number >= 1, got True"),
    (None, "n must be a whole number >= 1, got None"),
])
def test_check_count(value, message):
    with raises(message):
        check_count("n", value)


@pytest.mark.parametrize("value", [1, 0.5, np.float32(2.0), np.int64(3), np.float64(0.0)])
def test_check_positive_takes_real_numbers(value):
    assert check_positive("scale", value, allow_zero=True) == float(value)


@pytest.mark.parametrize(("value", "message"), [
    ("no", "causal must be True or False, got 'no'"),
    ("False", "causal must be True or False, got 'False'"),
    (0, "causal must be True or False, got 0"),
    (1.0, "causal must be True or False, got 1.0"),
    (None, "causal must be True or False, got None"),
    (np.ones(2, dtype=bool), "causal must be True or False, got array([ True,  True])"),
])
def test_check_flag(value, message):
    with raises(message):
        check_flag("causal", value)
    assert check_flag("causal", np.bool_(True)) is True and check_flag("c", False) is False


def test_check_head():
    assert check_head(0, 1) == 0 and check_head(np.int32(3), 4) == 3
    with raises("there is no head 4: this result has heads 0 to 3"):
        check_head(4, 4)
    with raises("the head index must be a whole number, got None"):
        check_head(None, 4)


@pytest.mark.parametrize(("value", "message"), [
    ([[0.0, np.nan]], "x must hold finite numbers or -inf, got nan at index (0, 1)"),
    ([1.0, np.inf], "x must hold finite numbers or -inf, got inf at index (1,)"),
    (np.float32(np.nan), "x must hold finite numbers or -inf, got nan at index ()"),
    ([["a"]], "x must hold real numbers, got values of type <U1"),
    ([[1, 2], [3]], "x must be a numeric array; could not read it"),
    ([1j], "x must hold real numbers, got values of type complex128"),
])
def test_softmax_takes_finite_values_or_minus_inf(value, message):
    """NaN or +inf are refused by name, never returned as unnormalised NaN rows."""
    with raises(message):
        softmax(value)
    with raises(message):
        as_scores("x", value)


def test_as_mask():
    with raises("mask must be boolean (True = may attend), got values of type int64"):
        as_mask("mask", np.array([[1, 0]]), (1, 2))
    with raises("mask must be boolean (True = may attend), got values of type float64"):
        as_mask("mask", [[1.0, 0.0]], (1, 2))
    with raises("mask of shape (3,) cannot be broadcast to (t_q, t_k) = (2, 2)"):
        as_mask("mask", [True, False, True], (2, 2))


# ---------------------------------------------------------------------------------------------
# attention.py
# ---------------------------------------------------------------------------------------------


def test_sdpa_q_and_k_widths():
    with raises("q and k must have the same width d_k; q is (2, 3) and k is (4, 2)"):
        scaled_dot_product_attention(Q, np.ones((4, 2)), V)


def test_sdpa_k_and_v_rows():
    with raises("k and v must have the same number of rows t_k; k is (4, 3) and v is (3, 2)"):
        scaled_dot_product_attention(Q, K, np.ones((3, 2)))


def _entry_points(**kwargs):
    """Every dot-product entry point, called with the same settings (t_k = 4 everywhere)."""
    return {
        "scaled_dot_product_attention": lambda: scaled_dot_product_attention(Q, K, V, **kwargs),
        "self_attention": lambda: self_attention(X, I3, I3, I3, **kwargs),
        "cross_attention": lambda: cross_attention(Q, X, I3, I3, I3, **kwargs),
        "multi_head_attention": lambda: multi_head_attention(X, None, I3, I3, I3, n_heads=3,
                                                             **kwargs),
    }


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"temperature": 0}, "temperature must be a finite number > 0, got 0"),
    ({"temperature": -1}, "temperature must be a finite number > 0, got -1"),
    ({"temperature": float("inf")}, "temperature must be a finite number > 0, got inf"),
    ({"temperature": "warm"}, "temperature must be a number, got 'warm'"),
    ({"scale": -1.0}, "scale must be a finite number >= 0, got -1.0"),
    ({"scale": float("inf")}, "scale must be a finite number >= 0, got inf"),
    ({"scale": "big"}, "scale must be a number, got 'big'"),
    ({"scale": "2"}, "scale must be a number, got '2'"),
    ({"scale": True}, "scale must be a number, got True"),
    ({"temperature": "1"}, "temperature must be a number, got '1'"),
    ({"temperature": True}, "temperature must be a number, got True"),
    ({"mask": np.ones((2, 4), dtype=int)},
     "mask must be boolean (True = may attend), got values of type int64"),
    ({"mask": np.ones((3, 4), dtype=bool)}, "mask of shape (3, 4) cannot be broadcast to "),
    ({"mask": np.ones(3, dtype=bool)}, "mask of shape (3,) cannot be broadcast to "),
])
@pytest.mark.parametrize("entry", list(_entry_points()))
def test_settings_and_masks_of_every_dot_product_entry_point(entry, kwargs, message):
    with raises(message):
        _entry_points(**kwargs)[entry]()


@pytest.mark.parametrize("causal", ["no", "yes", 1, 0, None, 1.0])
def test_causal_must_be_a_bool(causal):
    """``causal="no"`` is refused, not read as true (which would apply the causal mask)."""
    with raises(f"causal must be True or False, got {causal!r}"):
        self_attention(X, I3, I3, I3, causal=causal)
    with raises(f"causal must be True or False, got {causal!r}"):
        multi_head_attention(X, None, I3, I3, I3, n_heads=1, causal=causal)


def test_cross_attention_mask_shape():
    with raises("mask of shape (3, 3) cannot be broadcast to (t_q, t_k) = (4, 2)"):
        cross_attention(X, np.ones((2, 3)), I3, I3, I3, mask=np.ones((3, 3), dtype=bool))


def test_causal_combined_with_a_bad_mask():
    with raises("mask of shape (2,) cannot be broadcast to (t_q, t_k) = (4, 4)"):
        self_attention(X, I3, I3, I3, mask=[True, False], causal=True)
    with raises("mask must be boolean (True = may attend), got values of type int64"):
        multi_head_attention(X, None, I3, I3, I3, n_heads=1, mask=[1, 0, 1, 1], causal=True)


@pytest.mark.parametrize(("args", "message"), [
    ((X, np.ones((2, 3)), I3, I3),
     "w_q must have one row per embedding dimension: {x_q} has d_model = 3 columns but w_q has "
     "2 rows (shape (2, 3))"),
    ((X, I3, np.ones((4, 3)), I3),
     "w_k must have one row per embedding dimension: {x_kv} has d_model = 3 columns but w_k has "
     "4 rows (shape (4, 3))"),
    ((X, I3, I3, np.ones((5, 2))),
     "w_v must have one row per embedding dimension: {x_kv} has d_model = 3 columns but w_v has "
     "5 rows (shape (5, 2))"),
    ((X, I3, np.ones((3, 2)), I3),
     "w_q and w_k must have the same number of columns (d_k), got 3 and 2"),
])
def test_projection_sizes(args, message):
    """Messages name the caller's own argument: ``x`` for self-attention, ``x_q`` when
    multi-head attention gets x_kv=None (keys and values from x_q)."""
    with raises(message.format(x_q="x", x_kv="x")):
        self_attention(*args)
    with raises(message.format(x_q="x_q", x_kv="x_q")):
        multi_head_attention(args[0], None, *args[1:], n_heads=1)


def test_cross_attention_projection_sizes():
    with raises("w_k must have one row per embedding dimension: x_kv has d_model = 2 columns "
                "but w_k has 3 rows (shape (3, 3))"):
        cross_attention(X, np.ones((5, 2)), I3, I3, np.ones((2, 3)))
    with raises("w_q must have one row per embedding dimension: x_q has d_model = 3 columns "
                "but w_q has 2 rows (shape (2, 3))"):
        cross_attention(X, np.ones((5, 2)), np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)))


@pytest.mark.parametrize(("w_q", "w_v", "n_heads", "message"), [
    (np.ones((3, 6)), np.ones((3, 6)), 4,
     "n_heads (4) must divide the number of columns of w_q (6); valid choices: 1, 2, 3, 6"),
    (np.ones((3, 6)), np.ones((3, 4)), 3,
     "n_heads (3) must divide the number of columns of w_v (4); valid choices: 1, 2, 4"),
    (np.ones((3, 7)), np.ones((3, 7)), 2,
     "n_heads (2) must divide the number of columns of w_q (7); valid choices: 1, 7"),
    (np.ones((3, 20)), np.ones((3, 20)), 3,
     "n_heads (3) must divide the number of columns of w_q (20); valid choices: 1, 2, 4, 5, 10"),
])
def test_n_heads_must_divide_the_widths(w_q, w_v, n_heads, message):
    with raises(message):
        multi_head_attention(X, None, w_q, w_q, w_v, n_heads=n_heads)


@pytest.mark.parametrize(("n_heads", "message"), [
    (0, "n_heads must be a whole number >= 1, got 0"),
    (-1, "n_heads must be a whole number >= 1, got -1"),
    (1.5, "n_heads must be a whole number >= 1, got 1.5"),
    (None, "n_heads must be a whole number >= 1, got None"),
])
def test_n_heads_must_be_a_positive_whole_number(n_heads, message):
    with raises(message):
        multi_head_attention(X, None, I3, I3, I3, n_heads=n_heads)


def test_w_o_rows():
    with raises("w_o must have n_heads·d_v = 3 rows, got shape (2, 3)"):
        multi_head_attention(X, None, I3, I3, I3, np.ones((2, 3)), n_heads=3)


def test_mix_heads():
    with raises("head_weights must have one weight per head (2), got 3"):
        mix_heads(np.ones((2, 3, 4)), [1.0, 2.0, 3.0])
    with raises("head_outputs must be 3-D, got a 2-D array of shape (3, 4)"):
        mix_heads(np.ones((3, 4)), [1.0])
    with raises("head_weights must be 1-D, got a 2-D array of shape (1, 2)"):
        mix_heads(np.ones((2, 3, 4)), [[1.0, 2.0]])
    with raises("head_weights must hold finite numbers, got nan at index (1,)"):
        mix_heads(np.ones((2, 3, 4)), [1.0, np.nan])


@pytest.mark.parametrize("call", [
    lambda: scaled_dot_product_attention([[1e200]], [[1e200]], [[1.0]]),
    lambda: scaled_dot_product_attention([[1.0]], [[1.0]], [[1.0]], scale=1e300,
                                         temperature=1e-300),
    lambda: scaled_dot_product_attention(np.array([[1e20]], np.float32),
                                         np.array([[1e20]], np.float32),
                                         np.array([[1.0]], np.float32)),
    lambda: scaled_dot_product_attention(np.array([[0.0]], np.float32),
                                         np.array([[1.0]], np.float32),
                                         np.array([[1.0]], np.float32), temperature=1e-50),
    lambda: self_attention([[1e150]], [[1e150]], [[1e150]], [[1.0]]),
], ids=["q and k", "scale over temperature", "float32", "float32 factor", "projections"])
def test_scores_that_overflow(call):
    with raises("the attention scores overflow the floating-point range; use smaller values in "
                "q and k (or the embeddings and weights), a smaller scale or a larger "
                "temperature"):
        call()


@pytest.mark.parametrize(("w_q", "w_k", "w_v", "what"), [
    ([[1e300]], [[1.0]], [[1.0]], "q = x @ w_q"),
    ([[1.0]], [[1e300]], [[1.0]], "k = x @ w_k"),
    ([[1.0]], [[1.0]], [[-1e300]], "v = x @ w_v"),
])
def test_projections_that_overflow(w_q, w_k, w_v, what):
    with raises(f"{what} overflows the floating-point range; use smaller values"):
        self_attention([[1e10]], w_q, w_k, w_v)


def test_outputs_that_overflow():
    """Eleven equal weights of 1/11 (rounded up) times values at the float limit exceed it."""
    big = np.full((11, 1), np.finfo(np.float64).max)
    with raises("the attention output overflows the floating-point range; use smaller values "
                "in v"):
        scaled_dot_product_attention(np.zeros((1, 1)), np.zeros((11, 1)), big)
    with raises("the attention output overflows the floating-point range; use smaller values "
                "in values"):
        additive_attention(np.zeros(1), np.zeros((11, 1)), big, [[1.0]], [[1.0]], [1.0])
    with raises("the attention output overflows the floating-point range; use smaller values "
                "in x"):
        attention_pooling(big, [0.0])


def test_w_o_projection_and_mixing_that_overflow():
    with raises("output = concat @ w_o overflows the floating-point range; use smaller values"):
        multi_head_attention([[1.0]], None, [[1.0]], [[1.0]], [[1e200]], [[1e200]], n_heads=1)
    with raises("the mixed head outputs overflow the floating-point range; use smaller head "
                "outputs or head weights"):
        mix_heads(np.full((2, 1, 1), 1e200), [1e200, 1e200])


# ---------------------------------------------------------------------------------------------
# additive.py
# ---------------------------------------------------------------------------------------------

D_A = 4
ADDITIVE = dict(query=np.ones(3), keys=np.ones((5, 2)), values=np.ones((5, 6)),
                w_q=np.ones((3, D_A)), w_k=np.ones((2, D_A)), v_a=np.ones(D_A))


@pytest.mark.parametrize(("change", "message"), [
    ({"w_q": np.ones((2, D_A))}, "w_q rows (2) must equal query width d_q (3)"),
    ({"w_k": np.ones((3, D_A))}, "w_k rows (3) must equal key width (2)"),
    ({"w_k": np.ones((2, 5))}, "w_k columns (5) must equal w_q columns d_a (4)"),
    ({"v_a": np.ones(3)}, "v_a length (3) must equal the alignment size d_a (4)"),
    ({"bias": np.ones(2)}, "bias length (2) must equal the alignment size d_a (4)"),
    ({"values": np.ones((4, 6))}, "number of values (4) must equal number of keys t_k (5)"),
    ({"query": np.ones((1, 2, 3))},
     "query must be 1-D or 2-D, got a 3-D array of shape (1, 2, 3)"),
    ({"v_a": np.ones((D_A, 1))}, "v_a must be 1-D, got a 2-D array of shape (4, 1)"),
    ({"bias": [np.inf, 0, 0, 0]}, "bias must hold finite numbers, got inf at index (0,)"),
    ({"mask": np.ones(5)}, "mask must be boolean (True = may attend), got values of type "
                           "float64"),
    ({"mask": np.ones(4, dtype=bool)},
     "mask of shape (4,) cannot be broadcast to (t_q, t_k) = (1, 5)"),
    ({"w_q": np.full((3, D_A), 1e300), "query": np.full(3, 1e300),  # inf + (−inf)
      "w_k": np.full((2, D_A), 1e300), "keys": np.full((5, 2), -1e300)},
     "the additive-attention scores overflow the floating-point range; use smaller values in "
     "the query, keys, w_q, w_k, bias or v_a"),
    ({"v_a": np.full(D_A, 1e308)}, "the additive-attention scores overflow"),
])
def test_additive_attention(change, message):
    with raises(message):
        additive_attention(**{**ADDITIVE, **change})


def test_additive_attention_several_queries():
    with raises("w_q rows (3) must equal query width d_q (2)"):
        additive_attention(**{**ADDITIVE, "query": np.ones((4, 2))})
    with raises("mask of shape (3, 5) cannot be broadcast to (t_q, t_k) = (4, 5)"):
        additive_attention(**{**ADDITIVE, "query": np.ones((4, 3)),
                              "mask": np.ones((3, 5), dtype=bool)})


@pytest.mark.parametrize(("args", "message"), [
    ((np.ones((4, 3)), np.ones((3, 2))), "w must have shape (d,) or (d, 1), got (3, 2)"),
    ((np.ones((4, 3)), np.ones(2)), "w length (2) must equal x's width d (3)"),
    ((np.ones((4, 3)), np.ones((2, 1))), "w length (2) must equal x's width d (3)"),
    ((np.ones((4, 3)), np.ones(3), np.ones(3)),
     "b must be one number or one per time step (4), got 3 values"),
    ((np.ones((4, 3)), np.ones(3), np.ones((4, 2))),
     "b must be one number or one per time step (4), got 8 values"),
    ((np.ones((4, 3)), np.ones(3), np.ones((1, 1, 4))),
     "b must be 0-D or 1-D or 2-D, got a 3-D array of shape (1, 1, 4)"),
    ((np.ones((4, 3)), np.ones(3), float("nan")), "b must hold finite numbers, got nan"),
    ((np.ones(3), np.ones(3)), "x must be 2-D, got a 1-D array of shape (3,)"),
    ((np.ones((2, 3)), np.ones((3, 1, 1))), "w must be 1-D or 2-D, got a 3-D array"),
    ((np.full((1, 2), 1e200), [1e200, -1e200]),
     "the pooling scores x · w overflow the floating-point range; use smaller values in x or w"),
])
def test_attention_pooling(args, message):
    with raises(message):
        attention_pooling(*args)


# ---------------------------------------------------------------------------------------------
# masks.py, positional.py, initializers.py
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda: causal_mask(0), "t_q must be a whole number >= 1, got 0"),
    (lambda: causal_mask(3, 0), "t_k must be a whole number >= 1, got 0"),
    (lambda: causal_mask(2.5), "t_q must be a whole number >= 1, got 2.5"),
    (lambda: padding_mask(4, 3), "valid_len (4) must be at most t_k (3)"),
    (lambda: padding_mask(-1, 3), "valid_len must be a whole number >= 0, got -1"),
    (lambda: padding_mask(1, 0), "t_k must be a whole number >= 1, got 0"),
    (lambda: padding_mask(1, 3, t_q=0), "t_q must be a whole number >= 1, got 0"),
    (lambda: window_mask(3, width=-1), "width must be a whole number >= 0, got -1"),
    (lambda: window_mask(3, width=1.0), "width must be a whole number >= 0, got 1.0"),
    (lambda: window_mask(0, width=1), "t_q must be a whole number >= 1, got 0"),
    (lambda: window_mask(2, -3, width=1), "t_k must be a whole number >= 1, got -3"),
])
def test_masks(call, message):
    with raises(message):
        call()


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((0, 4), {}, "n_positions must be a whole number >= 1, got 0"),
    ((3, 0), {}, "d_model must be a whole number >= 1, got 0"),
    ((3, 2.0), {}, "d_model must be a whole number >= 1, got 2.0"),
    ((3, 4), {"base": 0}, "base must be a finite number > 0, got 0"),
    ((3, 4), {"base": -10000.0}, "base must be a finite number > 0, got -10000.0"),
    ((3, 4), {"base": float("nan")}, "base must be a finite number > 0, got nan"),
    ((3, 4), {"base": "ten"}, "base must be a number, got 'ten'"),
])
def test_positional_encoding(args, kwargs, message):
    with raises(message):
        sinusoidal_positional_encoding(*args, **kwargs)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("uniform", [(2, 2)]), {},
     "kind must be one of randint, normal, glorot_uniform, identity, zeros; got 'uniform'"),
    (("normal", [(2, 2, 2)]), {}, "shapes[0] must be (rows, cols), got (2, 2, 2)"),
    (("normal", [(2, 2), (3,)]), {}, "shapes[1] must be (rows, cols), got (3,)"),
    (("normal", [3]), {}, "shapes[0] must be (rows, cols), got 3"),
    (("normal", ["ab"]), {}, "shapes[0] must be (rows, cols), got 'ab'"),
    (("normal", [(2, 0)]), {}, "shapes[0] size must be a whole number >= 1, got 0"),
    (("normal", [(2, 2.5)]), {}, "shapes[0] size must be a whole number >= 1, got 2.5"),
    (("normal", [(2, 2)]), {"seed": -1}, "seed must be a whole number >= 0, got -1"),
    (("normal", [(2, 2)]), {"seed": 1.5}, "seed must be a whole number >= 0, got 1.5"),
])
def test_init_weights(args, kwargs, message):
    with raises(message):
        init_weights(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# scenario.py
# ---------------------------------------------------------------------------------------------


def seed_000(**changes):
    return replace(PRESETS["seed_000"].build(), **changes)


def test_scenario_without_tokens():
    with raises("there are no tokens; add at least one token"):
        run_scenario(seed_000(tokens=()))


@pytest.mark.parametrize("variant", ["cross", "additive"])
def test_scenario_needs_a_source_sequence(variant):
    with raises("this variant needs a source sequence; add at least one source token"):
        run_scenario(seed_000(variant=variant, source_tokens=()))


def test_scenario_custom_mask_shape():
    with raises("the custom mask must have shape (t_q, t_k) = (4, 4), got none; reset it on the "
                "Masks page"):
        run_scenario(seed_000(mask_kind="custom"))
    with raises("the custom mask must have shape (t_q, t_k) = (4, 4), got (3, 4)"):
        run_scenario(seed_000(mask_kind="custom", custom_mask=np.ones((3, 4), dtype=bool)))


@pytest.mark.parametrize(("variant", "name"), [("multi_head", "Multi-head"),
                                               ("cross", "Cross-attention")])
def test_direct_mode_needs_a_single_head_variant(variant, name):
    scenario = replace(PRESETS["seed_001_causal"].build(), variant=variant)
    with raises(f"{name} needs embeddings and weights; switch off 'Q, K, V given directly' or "
                "pick a single-head variant"):
        run_scenario(scenario)


def test_direct_mode_rows_must_match_the_tokens():
    scenario = PRESETS["seed_001_causal"].build()
    message = "Q must have one row per query token and K one row per key token"
    with raises(message):
        run_scenario(replace(scenario, q_in=np.ones((3, 3))))
    with raises(message):
        run_scenario(replace(scenario, source_tokens=("k0",)))


def test_scenario_errors_from_the_core_reach_the_caller():
    with raises("n_heads (2) must divide the number of columns of w_q (3); valid choices: 1, 3"):
        run_scenario(seed_000(variant="multi_head", n_heads=2))
    with raises("x must hold finite numbers, got nan at index (0, 0)"):
        run_scenario(seed_000(x=np.full((4, 3), np.nan)))
    with raises("temperature must be a finite number > 0, got 0.0"):
        run_scenario(seed_000(temperature=0.0))


def test_run_scenario_with_heads():
    with raises("multi-head attention needs token embeddings and weight matrices, but this "
                "scenario gives Q, K and V directly"):
        run_scenario(PRESETS["seed_001_causal"].build(), heads=1)
    with raises("there are no tokens; add at least one token"):
        run_scenario(seed_000(tokens=()), heads=1)
    with raises("n_heads (2) must divide the number of columns of w_q (3); valid choices: 1, 3"):
        run_scenario(seed_000(), heads=2)


def test_permutation_check():
    with raises("the permutation demo needs token embeddings and weight matrices"):
        permutation_check(PRESETS["seed_004_sleepy"].build(), [0], with_pe=False)
    for perm in ([0, 1, 2], [0, 1, 2, 2], [0, 1, 2, 4], [[0, 1, 2, 3]]):
        with raises("perm must be a permutation of 0..3"):
            permutation_check(seed_000(), perm, with_pe=True)


# ---------------------------------------------------------------------------------------------
# Size bounds: a ValueError before allocating, never MemoryError or minutes of work
# ---------------------------------------------------------------------------------------------

def test_max_entries_is_two_to_the_24():
    assert MAX_ENTRIES == 2**24
    check_entries("a mask", (2**12, 2**12))  # exactly at the bound
    with raises("a mask would hold 4,097 × 4,096 = 16,781,312 entries; at most 16,777,216 "
                "(2**24) are allowed"):
        check_entries("a mask", (4097, 4096))


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: causal_mask(10**9), "the causal mask would hold 1,000,000,000 × 1,000,000,000"),
    (lambda: causal_mask(3, 10**9), "the causal mask would hold 3 × 1,000,000,000"),
    (lambda: padding_mask(1, 10**9), "the padding mask would hold 1,000,000,000 × "),
    (lambda: padding_mask(1, 2, 10**12), "the padding mask would hold 1,000,000,000,000 × 2"),
    (lambda: window_mask(10**9, width=1), "the window mask would hold 1,000,000,000 × "),
    (lambda: window_mask(2, 10**18, width=1), "the window mask would hold 2 × "),
    (lambda: init_weights("zeros", [(10**6, 10**6)]),
     "shapes[0] would hold 1,000,000 × 1,000,000 = 1,000,000,000,000 entries"),
    (lambda: init_weights("randint", [(2, 2), (2**24, 2)]), "shapes[1] would hold"),
    (lambda: init_weights("normal", [(2**12, 2**12), (1, 1)]),
     "the shapes would hold 16,777,217 entries in all; at most 16,777,216"),
    (lambda: sinusoidal_positional_encoding(10**6, 512),
     "the positional encoding would hold 1,000,000 × 512 = 512,000,000 entries"),
])
def test_huge_sizes_are_refused_quickly(call, fragment):
    start = time.perf_counter()
    with raises(fragment):
        call()
    assert time.perf_counter() - start < 0.5


def test_sizes_at_the_bound_still_work():
    assert causal_mask(4096).shape == (4096, 4096)
    assert sinusoidal_positional_encoding(2**15, 512).shape == (2**15, 512)
    assert init_weights("zeros", [(2**12, 2**12)])[0].shape == (2**12, 2**12)


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: window_mask(3, width=1, causal="no"), "causal must be True or False, got 'no'"),
    (lambda: window_mask(3, width=1, causal=1), "causal must be True or False, got 1"),
    (lambda: window_mask(3, width=1.5), "width must be a whole number >= 0, got 1.5"),
    (lambda: window_mask(3, width=True), "width must be a whole number >= 0, got True"),
    (lambda: padding_mask(True, 3), "valid_len must be a whole number >= 0, got True"),
    (lambda: init_weights(["zeros"], [(2, 2)]), "kind must be one of randint, normal"),
    (lambda: init_weights("zeros", [(2, 2)], seed=1.0), "seed must be a whole number >= 0"),
    (lambda: init_weights("zeros", [(2, 2)], seed=2**32),
     "seed must be at most 4,294,967,295, got 4294967296"),
    (lambda: init_weights("zeros", "ab"), "shapes must be a list of (rows, cols) pairs"),
    (lambda: init_weights("zeros", [(2, 2.0)]), "shapes[0] size must be a whole number >= 1"),
    (lambda: sinusoidal_positional_encoding(3, 4, base="10000"),
     "base must be a number, got '10000'"),
    (lambda: sinusoidal_positional_encoding(3, 4, base=True), "base must be a number, got True"),
    (lambda: sinusoidal_positional_encoding(3.0, 4), "n_positions must be a whole number >= 1"),
    (lambda: downsample(np.eye(3), 2.5), "max_size must be a whole number >= 1, got 2.5"),
    (lambda: downsample(np.eye(3), "2"), "max_size must be a whole number >= 1, got '2'"),
    (lambda: downsample(np.eye(3), True), "max_size must be a whole number >= 1, got True"),
    (lambda: block_factor(3.5, 2), "n must be a whole number >= 0, got 3.5"),
    (lambda: block_labels(["a"], "1"), "max_size must be a whole number >= 1, got '1'"),
    (lambda: row_diagnostics(np.eye(2), tol="0.1"), "tol must be a number, got '0.1'"),
    (lambda: row_diagnostics(np.eye(2), tol=-1.0), "tol must be a finite number >= 0"),
    (lambda: entropy(np.eye(2), axis=1.0), "axis must be a whole number, got 1.0"),
    (lambda: entropy(np.eye(2), axis=2), "axis 2 is out of range for weights of 2 dimensions"),
])
def test_core_functions_take_only_the_documented_types(call, fragment):
    with raises(fragment):
        call()
