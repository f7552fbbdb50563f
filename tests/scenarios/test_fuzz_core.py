"""Fuzzing the core: extreme values, extreme settings, odd shapes, fuzzed scenarios.

Every input must end in a valid result or a ``ValueError`` with a message: never another
exception, never a RuntimeWarning, never NaN or ±inf in weights or outputs. A valid result has
weights in [0, 1] whose rows sum to 1, or to 0 exactly when the row's mask blocks every key.

Values are drawn from the edges of float64 (±1e308, the largest float, 1e-308, subnormals, 0)
mixed with ordinary numbers, NaN and ±inf; settings (scale, temperature, PE base) from
1e-308 to 1e308, 0, negatives and NaN; shapes from 0 to 5, including sizes that disagree.
``run_scenario`` gets whole scenarios built from the same ingredients, every variant, mask kind
and input mode. The decoders for files and links are fuzzed in test_scenario_io.py and
test_attention_io.py. The file runs in well under 30 s.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz import (
    additive_attention,
    attention_pooling,
    causal_mask,
    cross_attention,
    mix_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positional_encoding,
    softmax,
    window_mask,
)
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import MASK_KINDS, SCALE_MODES, Scenario, run_scenario

FUZZ = settings(deadline=None, database=None, max_examples=80,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MAX = float(np.finfo(np.float64).max)
# Each array draws its values from one regime, so that a whole matrix can be tiny (a valid
# result) or huge (an overflow, refused) rather than almost always a mix that overflows.
REGIMES = {
    "moderate": st.floats(-10, 10, allow_nan=False, allow_infinity=False),
    "tiny": st.sampled_from([0.0, -0.0, 1e-308, -1e-308, 5e-324, 1e-154, -1e-200]),
    "large": st.sampled_from([1e150, -1e150, 1e100, 3.0, -2.0, 0.0]),
    "edges": st.sampled_from([1e308, -1e308, MAX, -MAX, 1e154, -1e154, 1.0, 0.0]),
    "any": st.floats(allow_nan=False, allow_infinity=False),
    "non-finite": st.sampled_from([1.0, np.nan, np.inf, -np.inf]),  # must be refused
}
FLOAT32 = st.sampled_from([0.0, 1.0, -1.0, 3e38, -3e38, 1e-38, 2.0])
FINITE = st.sampled_from(["moderate", "tiny", "large", "edges", "any"]).flatmap(REGIMES.get)
# scale, temperature: anything from the smallest subnormal to the largest float, and bad ones
GOOD_SETTINGS = [1e-308, 5e-324, 1e308, MAX, 1.0, 0.05, 5.0, 1e-3, 1e3, 0.5, 2.0]
SETTING = st.sampled_from(GOOD_SETTINGS * 3 + [0.0, -1.0, np.nan, np.inf])
SIZE = st.sampled_from([0] + [1, 2, 3, 4, 5] * 3)  # now and then an empty matrix


def arrays(shape, elements=FINITE):
    """Float64 arrays (a few float32 ones: the core keeps float32 as float32)."""
    return st.one_of(hnp.arrays(np.float64, shape, elements=elements),
                     hnp.arrays(np.float32, shape, elements=FLOAT32))


def values(draw, shape):
    """An array of one regime: moderate most often, then tiny, large, edge or any values, and
    now and then NaN/inf cells."""
    regime = draw(st.sampled_from(["moderate"] * 4 + ["tiny", "large", "edges", "any",
                                                      "non-finite"]))
    return draw(arrays(shape, REGIMES[regime]))


def masks(t_q, t_k):
    return st.none() | hnp.arrays(np.bool_, (t_q, t_k))


def checked(call):
    """Run ``call``: a result, or None after a ValueError with a message. Warnings are errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return call()
        except ValueError as exc:
            assert str(exc).strip(), "a ValueError without a message"
            return None


def assert_valid(weights, output=None, mask=None) -> None:
    """Finite weights in [0, 1]; each row sums to 1, or to 0 iff its mask blocks every key."""
    w = np.asarray(weights, dtype=np.float64)
    assert np.all(np.isfinite(w)), "NaN or inf in the weights"
    assert np.all((w >= 0) & (w <= 1)), "a weight outside [0, 1]"
    sums = w.sum(axis=-1)
    if mask is None:
        np.testing.assert_allclose(sums, 1.0, atol=1e-5 if w.dtype == np.float32 else 1e-9)
    else:
        blocked = ~np.broadcast_to(mask, w.shape).any(axis=-1)
        np.testing.assert_array_equal(sums[blocked], 0.0)
        np.testing.assert_allclose(sums[~blocked], 1.0, atol=1e-5)
    if output is not None:
        assert np.all(np.isfinite(output)), "NaN or inf in the output"


# ---------------------------------------------------------------------------------------------
# The attention functions
# ---------------------------------------------------------------------------------------------

@FUZZ
@given(st.data())
def test_softmax_of_extremes_and_minus_inf(data):
    t_q, t_k = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    x = data.draw(hnp.arrays(np.float64, (t_q, t_k), elements=FINITE | st.just(-np.inf)))
    w = checked(lambda: softmax(x))
    assert w is not None  # finite values and −inf are always accepted
    assert_valid(w, mask=np.isfinite(x))


@FUZZ
@given(st.data())
def test_scaled_dot_product_attention(data):
    t_q, t_k, d_k, d_v = (data.draw(SIZE) for _ in range(4))
    if data.draw(st.integers(0, 3)) == 0:  # sizes that disagree
        q, k, v = (values(data.draw, (data.draw(SIZE), data.draw(SIZE))) for _ in range(3))
    else:
        q, k, v = (values(data.draw, s) for s in ((t_q, d_k), (t_k, d_k), (t_k, d_v)))
    mask = data.draw(masks(q.shape[0], k.shape[0]))
    scale = data.draw(st.none() | SETTING)
    temperature = data.draw(SETTING)
    res = checked(lambda: scaled_dot_product_attention(q, k, v, mask=mask, scale=scale,
                                                       temperature=temperature))
    if res is not None:
        assert_valid(res.weights, res.output, res.mask)
        assert res.weights.shape == (q.shape[0], k.shape[0])


@FUZZ
@given(st.data())
def test_self_and_cross_attention(data):
    t, t_s, d_model, d_k, d_v = (data.draw(SIZE) for _ in range(5))
    x = values(data.draw, (t, d_model))
    src = values(data.draw, (t_s, data.draw(st.sampled_from([d_model] * 3 + [data.draw(SIZE)]))))
    w_q = values(data.draw, (d_model, d_k))
    w_k = values(data.draw, (d_model, data.draw(st.sampled_from([d_k] * 3 + [data.draw(SIZE)]))))
    w_v = values(data.draw, (d_model, d_v))
    kw = dict(scale=data.draw(st.none() | SETTING), temperature=data.draw(SETTING))
    res = checked(lambda: self_attention(x, w_q, w_k, w_v, causal=data.draw(st.booleans()),
                                         mask=data.draw(masks(t, t)), **kw))
    if res is not None:
        assert_valid(res.weights, res.output, res.mask)
    res = checked(lambda: cross_attention(x, src, w_q, w_k, w_v, mask=data.draw(masks(t, t_s)),
                                          **kw))
    if res is not None:
        assert_valid(res.weights, res.output, res.mask)


@FUZZ
@given(st.data())
def test_multi_head_attention_and_mixing(data):
    t, d_model = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    n_heads = data.draw(st.integers(-1, 5))
    # widths: mostly a multiple of n_heads, sometimes one more (n_heads does not divide it)
    d_k, d_v = (data.draw(st.integers(1, 3)) * max(n_heads, 1)
                + data.draw(st.sampled_from([0, 0, 1])) for _ in range(2))
    x = values(data.draw, (t, d_model))
    w_q, w_k = (values(data.draw, (d_model, d_k)) for _ in range(2))
    w_v = values(data.draw, (d_model, d_v))
    w_o = data.draw(st.none() | arrays((d_v, data.draw(st.integers(1, 3)))))
    res = checked(lambda: multi_head_attention(
        x, None, w_q, w_k, w_v, w_o, n_heads=n_heads, mask=data.draw(masks(t, t)),
        scale=data.draw(st.none() | SETTING), temperature=data.draw(SETTING),
        causal=data.draw(st.booleans())))
    if res is not None:
        assert_valid(res.weights, res.output, res.mask)
        mix = data.draw(arrays((data.draw(st.sampled_from([res.n_heads, res.n_heads + 1])),)))
        mixed = checked(lambda: mix_heads(res.head_outputs, mix))
        if mixed is not None:
            assert np.all(np.isfinite(mixed))


@FUZZ
@given(st.data())
def test_additive_attention_and_pooling(data):
    t_q, t_k, d, d_a = (data.draw(st.integers(1, 4)) for _ in range(4))
    query = values(data.draw, data.draw(st.sampled_from([(d,), (t_q, d)])))
    keys = values(data.draw, (t_k, d))
    vals = values(data.draw, (data.draw(st.sampled_from([t_k, t_k + 1])), d))
    w_q, w_k = values(data.draw, (d, d_a)), values(data.draw, (d, d_a))
    v_a = values(data.draw, (data.draw(st.sampled_from([d_a, d_a + 1])),))
    mask = data.draw(st.none() | hnp.arrays(np.bool_, (t_k,)))
    res = checked(lambda: additive_attention(query, keys, vals, w_q, w_k, v_a, mask=mask))
    if res is not None:
        assert_valid(res.weights, res.output, res.mask)
    b = data.draw(st.sampled_from([0.0, 1e308]) | arrays((data.draw(st.integers(1, 4)),)))
    pool = checked(lambda: attention_pooling(keys, values(data.draw, (d,)), b))
    if pool is not None:
        assert_valid(pool.weights, pool.output)


@FUZZ
@given(st.integers(-2, 6), st.integers(-2, 6), st.integers(-3, 8),
       st.sampled_from([10000.0, 1.0, 1e-308, 1e308, MAX, 0.0, -1.0, np.nan, np.inf, 2.5]))
def test_masks_and_positional_encoding(t_q, t_k, n, base):
    for call in (lambda: causal_mask(t_q, t_k), lambda: padding_mask(n, t_k, t_q),
                 lambda: window_mask(t_q, t_k, width=n)):
        mask = checked(call)
        if mask is not None:
            assert mask.dtype == bool and mask.shape == (t_q, t_k)
    pe = checked(lambda: sinusoidal_positional_encoding(t_q, t_k, base=base))
    if pe is not None:
        assert pe.shape == (t_q, t_k) and np.all(np.isfinite(pe)) and np.all(np.abs(pe) <= 1)


# ---------------------------------------------------------------------------------------------
# Whole scenarios: what a file, a link or the editors can hand to run_scenario
# ---------------------------------------------------------------------------------------------

TAME = REGIMES["moderate"]  # most matrices of a scenario are ordinary, so that it can compute


@st.composite
def scenarios(draw):
    t, t_s = draw(st.integers(0, 4) | st.just(3)), draw(st.integers(0, 4) | st.just(2))
    d_model = draw(st.integers(1, 4))
    n_heads = draw(st.integers(1, 4))
    dk = draw(st.sampled_from([n_heads, 2 * n_heads, draw(st.integers(1, 5))]))
    dv = draw(st.sampled_from([n_heads, dk, draw(st.integers(1, 5))]))
    d_a = draw(st.integers(1, 3))

    def fits(rows, cols):  # mostly the right size, now and then one that disagrees
        shape = (rows, cols) if draw(st.integers(0, 24)) else (draw(SIZE), draw(SIZE))
        return draw(arrays(shape, TAME)) if draw(st.integers(0, 3)) else values(draw, shape)

    def vector(n):
        return values(draw, (n if draw(st.integers(0, 24)) else draw(SIZE),))

    variant = draw(st.sampled_from(list(VARIANTS)))
    direct = draw(st.integers(0, 4)) == 0
    t_k = t_s if (direct or VARIANTS[variant].uses_source) else t
    custom = draw(st.none() | hnp.arrays(np.bool_, draw(st.sampled_from(
        [(t, t_k), (t, t_k), (draw(SIZE), draw(SIZE))]))))
    return Scenario(
        tokens=tuple(f"w{i}" for i in range(t)), x=fits(t, d_model), w_q=fits(d_model, dk),
        w_k=fits(d_model, dk), w_v=fits(d_model, dv), w_o=fits(dv, d_model), variant=variant,
        n_heads=n_heads, head_mix=draw(st.none()) if draw(st.booleans()) else vector(n_heads),
        scale_mode=draw(st.sampled_from(SCALE_MODES)),
        custom_scale=draw(SETTING), temperature=draw(SETTING | st.just(1.0)),
        use_pe=draw(st.booleans()),
        pe_base=draw(st.sampled_from([10000.0, 1e-308, 1e308, 1.0, 0.5])),
        mask_kind=draw(st.sampled_from(MASK_KINDS)), valid_len=draw(st.integers(-2, 6)),
        window=draw(st.integers(-2, 6)), custom_mask=custom,
        source_tokens=tuple(f"s{i}" for i in range(t_s)), source_x=fits(t_s, d_model),
        w_a_q=fits(d_model, d_a), w_a_k=fits(d_model, d_a), v_a=vector(d_a),
        pool_w=vector(d_model) if draw(st.booleans()) else np.zeros(0),
        pool_b=vector(t) if draw(st.booleans()) else np.zeros(0), direct=direct,
        q_in=fits(t, dk), k_in=fits(t_s, dk), v_in=fits(t_s, dv),
    )


@settings(FUZZ, max_examples=150)
@given(scenarios())
def test_run_scenario_gives_a_valid_result_or_a_value_error(sc):
    res = checked(lambda: run_scenario(sc))
    if res is None:
        return
    att = res.attention
    assert_valid(att.weights, att.output, res.mask)
    assert len(res.q_labels) == att.weights.shape[-2] and \
        len(res.k_labels) == att.weights.shape[-1]
    if res.mixed is not None:
        assert np.all(np.isfinite(res.mixed))
    if res.pooling is not None:
        assert_valid(res.pooling.weights, res.pooling.output)
