"""The scenario: labels, settings, masks, positional encoding, direct mode, resize.

``run_scenario`` must give exactly what the core function the variant names gives on the same
inputs, so every page shows numbers from one place.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from attnviz import (
    PRESETS,
    VARIANTS,
    AdditiveResult,
    AttentionResult,
    MultiHeadResult,
    Scenario,
    attention_pooling,
    causal_mask,
    mix_heads,
    multi_head_attention,
    padding_mask,
    position_labels,
    resize,
    run_scenario,
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positional_encoding,
    window_mask,
)
from attnviz.scenarios.scenario import (
    MASK_KINDS,
    SCALE_MODES,
    permutation_check,
    projected,
    scale_of,
    scenario_inputs,
    user_mask,
    with_parts,
    with_variant,
)
from attnviz.scenarios.variant import PARTS

TOL = {"rtol": 1e-12, "atol": 1e-12}


def base(**changes) -> Scenario:
    """A 4-token, 3-d scenario (seed 000) with a 3-token source sequence of its own and every
    other optional part filled (additive weights, pooling)."""
    rng = np.random.default_rng(0)
    scenario = with_parts(PRESETS["seed_000"].build(), ("additive", "pooling"))
    source = dict(source_tokens=("s0", "s1", "s2"), source_x=rng.normal(size=(3, 3)))
    return replace(scenario, **{**source, **changes})


def assert_same(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **TOL)


def test_position_labels_are_unique_by_position():
    assert position_labels(["the", "cat", "the"]) == ["0:the", "1:cat", "2:the"]
    assert position_labels(()) == []


def test_scenario_properties():
    scenario = base()
    assert scenario.t == 4 and scenario.d_model == 3
    assert scenario.spec is VARIANTS["scaled_dot_product"]
    assert scenario.key_tokens == scenario.tokens
    assert replace(scenario, variant="cross").key_tokens == ("s0", "s1", "s2")
    assert replace(scenario, direct=True).key_tokens == ("s0", "s1", "s2")


def test_constants():
    assert SCALE_MODES == ("sqrt_dk", "none", "custom")
    assert MASK_KINDS == ("none", "causal", "padding", "window", "custom")


@pytest.mark.parametrize(("variant", "mode", "expected"), [
    ("scaled_dot_product", "sqrt_dk", None), ("scaled_dot_product", "none", 1.0),
    ("scaled_dot_product", "custom", 0.25), ("multi_head", "custom", 0.25),
    ("dot_product", "sqrt_dk", 1.0), ("dot_product", "custom", 1.0),  # the variant fixes it
])
def test_scale_of(variant, mode, expected):
    assert scale_of(base(variant=variant, scale_mode=mode, custom_scale=0.25)) == expected


# ---------------------------------------------------------------------------------------------
# Every variant gives what its core function gives
# ---------------------------------------------------------------------------------------------


def expected_result(scenario: Scenario):
    """What the variant's own explicit-loop reference gives (``Variant.reference``): every
    variant carries one, so this test needs no list of variants."""
    weights, output = VARIANTS[scenario.variant].reference(scenario_inputs(scenario))
    return SimpleNamespace(weights=weights, output=output)


def result_type(spec):
    """The result a variant's compute returns, from what it declares."""
    if not spec.projections:
        return AdditiveResult
    return MultiHeadResult if spec.always_heads else AttentionResult


def test_every_variant_carries_an_explicit_loop_reference():
    assert all(callable(spec.reference) for spec in VARIANTS.values())


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("settings", [
    {}, {"scale_mode": "none"}, {"scale_mode": "custom", "custom_scale": 0.3, "temperature": 2.0},
])
def test_run_scenario_calls_the_variants_core_function(variant, settings):
    scenario = base(variant=variant, n_heads=3, **settings)
    result = run_scenario(scenario)
    expected = expected_result(scenario)
    assert isinstance(result.attention, result_type(VARIANTS[variant]))
    weights = np.asarray(result.attention.weights)
    assert_same(weights, np.reshape(expected.weights, weights.shape))
    assert_same(result.attention.output, expected.output)
    assert result.q_labels == position_labels(scenario.tokens)
    assert result.k_labels == position_labels(scenario.key_tokens)
    t_k = 3 if VARIANTS[variant].uses_source else 4
    assert result.mask.shape == (4, t_k)
    assert result.pe is None
    assert (result.source_x is not None) == VARIANTS[variant].uses_source


def test_multi_head_mixing_and_pooling():
    scenario = PRESETS["seed_004_two_heads"].build()
    result = run_scenario(scenario)
    assert_same(result.mixed, mix_heads(result.attention.head_outputs, scenario.head_mix))
    pooled = attention_pooling(result.x, scenario.pool_w, scenario.pool_b)
    assert_same(result.pooling.output, pooled.output)
    assert run_scenario(replace(scenario, head_mix=None)).mixed is None
    no_pool = replace(scenario, pool_w=np.zeros(0), pool_b=np.zeros(0))
    assert run_scenario(no_pool).pooling is None


# ---------------------------------------------------------------------------------------------
# Mask kinds
# ---------------------------------------------------------------------------------------------


def expected_mask(kind, t_q, t_k, scenario):
    return {
        "none": None,
        "causal": causal_mask(t_q, t_k),
        "padding": padding_mask(min(scenario.valid_len, t_k), t_k, t_q),
        "window": window_mask(t_q, t_k, width=scenario.window),
        "custom": scenario.custom_mask,
    }[kind]


@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_mask_kinds(kind, variant):
    t_k = 3 if VARIANTS[variant].uses_source else 4
    custom = np.random.default_rng(1).random((4, t_k)) < 0.6
    custom[2] = False  # a fully masked query
    scenario = base(variant=variant, n_heads=3, mask_kind=kind, valid_len=2, window=1,
                    custom_mask=custom)
    mask = expected_mask(kind, 4, t_k, scenario)
    assert (user_mask(scenario, 4, t_k) is None) == (mask is None)
    result = run_scenario(scenario)
    full = np.ones((4, t_k), dtype=bool) if mask is None else mask
    if VARIANTS[variant].causal:
        full = full & causal_mask(4)
    np.testing.assert_array_equal(result.mask, full)
    weights = np.asarray(result.attention.weights)
    assert np.all(weights[..., ~full] == 0)
    sums = weights.sum(axis=-1)
    np.testing.assert_allclose(sums, np.broadcast_to(full.any(axis=1), sums.shape), rtol=1e-12)
    assert_same(result.attention.output, expected_result(scenario).output)


def test_padding_and_window_settings_are_clamped_to_the_sizes():
    scenario = base(mask_kind="padding", valid_len=10)
    np.testing.assert_array_equal(user_mask(scenario, 4, 4), np.ones((4, 4), dtype=bool))
    assert not user_mask(base(mask_kind="padding", valid_len=-1), 4, 4).any()
    np.testing.assert_array_equal(user_mask(base(mask_kind="window", window=-3), 4, 4),
                                  np.eye(4, dtype=bool))


# ---------------------------------------------------------------------------------------------
# Positional encoding
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pe_base", [10000.0, 1000.0])
def test_positional_encoding_changes_x_by_exactly_the_pe_matrix(pe_base):
    scenario = base(use_pe=True, pe_base=pe_base)
    result = run_scenario(scenario)
    pe = sinusoidal_positional_encoding(4, 3, base=pe_base)
    np.testing.assert_array_equal(result.pe, pe)
    np.testing.assert_array_equal(result.x, scenario.x + pe)
    np.testing.assert_array_equal(result.attention.q, (scenario.x + pe) @ scenario.w_q)
    off = run_scenario(replace(scenario, use_pe=False))
    assert off.pe is None
    np.testing.assert_array_equal(off.x, scenario.x)


def test_positional_encoding_is_added_to_the_source_too():
    scenario = base(use_pe=True, variant="cross")
    result = run_scenario(scenario)
    pe_source = sinusoidal_positional_encoding(3, 3)
    np.testing.assert_array_equal(result.source_x, scenario.source_x + pe_source)
    np.testing.assert_array_equal(result.attention.k,
                                  (scenario.source_x + pe_source) @ scenario.w_k)


def test_positional_encoding_separates_repeated_tokens():
    scenario = PRESETS["cat_sat"].build()  # "the" at positions 0 and 4
    np.testing.assert_array_equal(scenario.x[0], scenario.x[4])
    result = run_scenario(scenario)
    assert not np.allclose(result.attention.q[0], result.attention.q[4])
    assert result.q_labels[0] == "0:the" and result.q_labels[4] == "4:the"


# ---------------------------------------------------------------------------------------------
# Direct mode
# ---------------------------------------------------------------------------------------------


def test_direct_mode_uses_q_k_v_as_given():
    scenario = PRESETS["seed_001_causal"].build()
    result = run_scenario(scenario)
    expected = scaled_dot_product_attention(scenario.q_in, scenario.k_in, scenario.v_in,
                                            mask=causal_mask(2))
    assert_same(result.attention.output, expected.output)
    np.testing.assert_array_equal(result.attention.q, scenario.q_in)
    assert result.k_labels == ["0:k0", "1:k1"]
    assert result.pooling is None


@pytest.mark.parametrize(("variant", "scale"), [("dot_product", 1.0),
                                                ("scaled_dot_product", 3 ** -0.5),
                                                ("bidirectional", 3 ** -0.5)])
def test_direct_mode_with_other_single_head_variants(variant, scale):
    scenario = replace(PRESETS["seed_001_causal"].build(), variant=variant, mask_kind="padding",
                       valid_len=1)
    result = run_scenario(scenario)
    assert result.attention.scale == pytest.approx(scale)
    np.testing.assert_array_equal(result.mask, padding_mask(1, 2))
    assert_same(result.attention.weights, [[1, 0], [1, 0]])


def test_direct_mode_does_not_freeze_the_scenarios_arrays():
    scenario = PRESETS["seed_004_sleepy"].build()
    run_scenario(scenario)
    assert scenario.q_in.flags.writeable and scenario.v_in.flags.writeable


# ---------------------------------------------------------------------------------------------
# resize
# ---------------------------------------------------------------------------------------------


def test_resize_grows_keeping_every_value_and_filling_zeros():
    scenario = base(custom_mask=np.tri(4, dtype=bool), mask_kind="custom")
    grown = resize(scenario, t=6, d_model=5, d_k=4, d_v=2, t_source=5)
    assert grown.tokens == scenario.tokens + ("tok4", "tok5")
    assert grown.source_tokens == ("s0", "s1", "s2", "src3", "src4")
    np.testing.assert_array_equal(grown.x[:4, :3], scenario.x)
    assert np.all(grown.x[4:] == 0) and np.all(grown.x[:, 3:] == 0)
    np.testing.assert_array_equal(grown.w_q[:3, :3], scenario.w_q)
    assert grown.w_q.shape == grown.w_k.shape == (5, 4)
    np.testing.assert_array_equal(grown.w_v, np.pad(scenario.w_v[:, :2], ((0, 2), (0, 0))))
    assert grown.w_o.shape == (2, 5)  # W_O maps d_v back to d_model and follows it
    np.testing.assert_array_equal(grown.source_x[:3, :3], scenario.source_x)
    assert grown.w_a_q.shape == (5, scenario.w_a_q.shape[1])
    np.testing.assert_array_equal(grown.pool_w[:3], scenario.pool_w)
    assert grown.pool_b.shape == (6,)
    np.testing.assert_array_equal(grown.custom_mask[:4, :4], scenario.custom_mask)
    assert np.all(grown.custom_mask[4:]) and np.all(grown.custom_mask[:, 4:])  # new = may attend
    run_scenario(grown)


def test_resize_shrinks_keeping_the_values_that_fit():
    scenario = base()
    small = resize(scenario, t=2, d_model=2, d_k=1)
    assert small.tokens == scenario.tokens[:2]
    np.testing.assert_array_equal(small.x, scenario.x[:2, :2])
    np.testing.assert_array_equal(small.w_q, scenario.w_q[:2, :1])
    np.testing.assert_array_equal(small.w_v, scenario.w_v[:2])
    run_scenario(small)


def test_resize_back_and_forth_and_leaves_the_original_alone():
    scenario = base()
    x_before = scenario.x.copy()
    same = resize(resize(scenario, t=7, d_model=6), t=4, d_model=3)
    np.testing.assert_array_equal(same.x, scenario.x)
    np.testing.assert_array_equal(same.w_q, scenario.w_q)
    np.testing.assert_array_equal(scenario.x, x_before)
    assert scenario.t == 4
    unchanged = resize(scenario)
    for name in ("x", "w_q", "w_k", "w_v", "w_o", "source_x"):
        np.testing.assert_array_equal(getattr(unchanged, name), getattr(scenario, name))


def test_resize_in_direct_mode_resizes_q_k_v():
    scenario = PRESETS["seed_001_causal"].build()
    grown = resize(scenario, t=3, t_source=4)
    assert grown.q_in.shape == (3, 3) and grown.k_in.shape == (4, 3) and grown.v_in.shape == (4, 3)
    np.testing.assert_array_equal(grown.q_in[:2], scenario.q_in)
    np.testing.assert_array_equal(grown.v_in[:2], scenario.v_in)
    run_scenario(grown)


def test_resize_the_queries_keeps_the_padding_of_the_source_keys():
    """Regression: valid_len counts keys; shrinking the target must not shrink it.

    In cross-attention the keys are the source tokens, so removing a target token used to
    clamp valid_len to the number of *queries* and unmask fewer source keys.
    """
    scenario = replace(PRESETS["translation"].build(), mask_kind="padding", valid_len=3)
    before = run_scenario(scenario)
    small = resize(scenario, t=2)
    assert small.valid_len == 3
    after = run_scenario(small)
    assert_same(after.attention.weights, before.attention.weights[:2])
    assert resize(scenario, t_source=2).valid_len == 2


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_survives_resizing(key):
    scenario = PRESETS[key].build()
    for changed in (resize(scenario, t=scenario.t + 1),
                    resize(scenario, t=max(scenario.t - 1, 1)),
                    resize(scenario, d_model=scenario.d_model + 1),
                    resize(scenario, t_source=len(scenario.source_tokens) + 1)):
        result = run_scenario(changed)
        assert np.all(np.isfinite(result.attention.weights))


# ---------------------------------------------------------------------------------------------
# run_scenario(heads=...) and permutation_check (Multi-head and Positional-encoding pages)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["scaled_dot_product", "causal", "dot_product"])
def test_heads_run_multi_head_attention_on_the_scenario(variant):
    scenario = base(variant=variant, use_pe=True, mask_kind="padding", valid_len=3,
                    temperature=1.5)
    result = run_scenario(scenario, heads=3).attention
    x = scenario.x + sinusoidal_positional_encoding(4, 3)
    expected = multi_head_attention(x, None, scenario.w_q, scenario.w_k, scenario.w_v,
                                    scenario.w_o, n_heads=3, mask=padding_mask(3, 4),
                                    scale=scale_of(scenario), temperature=1.5,
                                    causal=variant == "causal")
    for name in ("weights", "concat", "output"):
        assert_same(getattr(result, name), getattr(expected, name))
    assert run_scenario(scenario, heads=1).attention.n_heads == 1


def test_permutation_check_is_zero_without_positional_encoding():
    scenario = PRESETS["cat_sat"].build()
    perm = [5, 3, 0, 1, 4, 2]
    plain = permutation_check(scenario, perm, with_pe=False)
    assert plain.max_diff < 1e-12
    np.testing.assert_array_equal(plain.perm, perm)
    assert_same(plain.output, self_attention(scenario.x, scenario.w_q, scenario.w_k,
                                             scenario.w_v).output)
    assert_same(plain.shuffled_output, plain.output[perm])
    with_pe = permutation_check(scenario, perm, with_pe=True)
    assert with_pe.max_diff > 1e-6  # positions matter once PE is added
    assert_same(permutation_check(scenario, range(6), with_pe=True).max_diff, 0.0)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("variant", "nope", "variant must be one of dot_product, scaled_dot_product"),
    ("mask_kind", "diagonal", "mask_kind must be one of none, causal, padding, window, custom"),
    ("scale_mode", "half", "scale_mode must be one of sqrt_dk, none, custom"),
])
def test_unknown_settings_are_refused_in_words(field, value, message):
    with pytest.raises(ValueError, match=message):
        run_scenario(replace(PRESETS["seed_000"].build(), **{field: value}))


def test_rows_of_x_must_match_the_tokens():
    with pytest.raises(ValueError, match="x must have one row per token: 3 tokens but 4 rows"):
        run_scenario(replace(PRESETS["seed_000"].build(), tokens=("a", "b", "c")))


def test_pooling_with_weights_but_no_bias_uses_zero_bias():
    sc = replace(with_parts(PRESETS["seed_000"].build(), ["pooling"]), pool_b=np.zeros(0))
    expected = attention_pooling(sc.x, sc.pool_w, 0.0)
    np.testing.assert_array_equal(run_scenario(sc).pooling.weights, expected.weights)


# ---------------------------------------------------------------------------------------------
# Optional parts, variant settings, switching variants
# ---------------------------------------------------------------------------------------------

PART_USERS = {"seed_000": set(), "seed_001_causal": {"source", "direct"},
              "seed_004_sleepy": {"source", "direct"}, "seed_004_two_heads": {"pooling"},
              "translation": {"source"}, "bahdanau": {"source", "additive"}}


@pytest.mark.parametrize("key", list(PART_USERS))
def test_presets_fill_only_the_parts_they_use(key):
    scenario = PRESETS[key].build()
    filled = {p for p in PARTS if scenario.has_part(p)}
    assert filled == PART_USERS[key]
    assert set(scenario.spec.parts) <= filled


def test_with_parts_fills_what_is_missing_from_the_scenario_itself():
    scenario = PRESETS["seed_000"].build()
    full = with_parts(scenario, ("source", "additive", "pooling"))
    assert full.source_tokens == scenario.tokens
    np.testing.assert_array_equal(full.source_x, scenario.x)
    assert full.w_a_q.shape == full.w_a_k.shape == (3, 3) and full.v_a.shape == (3,)
    np.testing.assert_array_equal(full.pool_w, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(full.pool_b, np.zeros(4))
    assert with_parts(full, ("source", "additive")) is full  # filled parts are kept as they are
    kept = with_parts(replace(full, source_tokens=("a",), source_x=np.ones((1, 3))), ["source"])
    assert kept.source_tokens == ("a",)
    with pytest.raises(ValueError, match="the direct part has no default"):
        with_parts(scenario, ["direct"])


@pytest.mark.parametrize("key", list(VARIANTS))
def test_switching_to_any_variant_from_any_preset_computes(key):
    for preset in ("seed_000", "seed_003_glorot", "cat_sat", "translation"):
        scenario = with_variant(PRESETS[preset].build(), key)
        assert scenario.variant == key
        assert all(scenario.has_part(p) for p in VARIANTS[key].parts)
        result = run_scenario(scenario)
        np.testing.assert_allclose(np.asarray(result.attention.weights).sum(axis=-1), 1.0,
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="variant must be one of"):
        with_variant(PRESETS["seed_000"].build(), "no_such_variant")


def test_switching_to_cross_attention_keeps_the_numbers_it_had_before_parts():
    """The filled source is the main sequence: cross-attention on it equals self-attention."""
    scenario = PRESETS["seed_002"].build()
    cross = run_scenario(with_variant(scenario, "cross")).attention
    same = run_scenario(scenario).attention
    np.testing.assert_array_equal(cross.weights, same.weights)


def test_params_are_read_only_and_checked_against_the_variant():
    scenario = replace(PRESETS["seed_000"].build(), params={"base": 10.0})
    with pytest.raises(TypeError):
        scenario.params["base"] = 1.0  # type: ignore[index]
    with pytest.raises(ValueError, match="Scaled dot-product has no setting 'base'"):
        run_scenario(scenario)


def test_projected_copies_and_defaults_w_o():
    x, w = np.eye(2), np.ones((2, 2))
    scenario = projected(["a", "b"], x, w, w, w, pool_w=[1.0, 2.0])
    x[0, 0] = 5.0
    assert scenario.x[0, 0] == 1.0 and scenario.w_q is not scenario.w_k
    np.testing.assert_array_equal(scenario.w_o, np.eye(2))
    np.testing.assert_array_equal(scenario.pool_b, [0.0, 0.0])
    assert not scenario.has_part("source") and scenario.has_part("pooling")


def test_heads_override_runs_the_variants_multi_head_form():
    scenario = PRESETS["cat_sat"].build()  # causal variant
    result = run_scenario(scenario, heads=2)
    assert result.attention.n_heads == 2
    assert np.all(np.triu(result.attention.weights[0], 1) == 0)  # still causal
    assert result.mixed is None
    cross = run_scenario(PRESETS["translation"].build(), heads=1)  # no multi-head form: self
    assert cross.k_labels == cross.q_labels


def test_switching_variant_keeps_only_the_new_variants_settings():
    tiles = PRESETS["online_tiles"].build()
    assert "tile" in tiles.params
    plain = with_variant(tiles, "scaled_dot_product")
    assert plain.params == {} and run_scenario(plain).attention.weights.shape
    back = with_variant(plain, "online_softmax")
    assert back.params == {} and back.param("tile") == VARIANTS["online_softmax"].param(
        "tile").default
    capped = with_variant(replace(tiles, params={"tile": 2}), "online_softmax")
    assert capped.params == {"tile": 2}  # its own settings stay


@pytest.mark.parametrize("sizes", [dict(t=9), dict(d_model=5), dict(d_k=2), dict(d_v=4),
                                   dict(t_source=3)])
def test_resize_keeps_a_missing_part_missing(sizes):
    """A typed sentence (t=9) made the default scenario's empty source a "filled" source of no
    tokens, (0, 3): the Encoder–decoder page no longer filled it and refused to compute ("needs
    a source sequence"). Found by opening every page after typing a sentence."""
    scenario = PRESETS["seed_000"].build()
    assert not any(scenario.has_part(part) for part in PARTS)
    resized = resize(scenario, **sizes)
    assert [p for p in PARTS if resized.has_part(p)] == []
    filled = with_parts(resized, ("source", "additive"))
    run_scenario(with_variant(filled, "cross"))  # computes (raised before)
    run_scenario(with_variant(filled, "additive"))


def test_resize_still_sizes_the_parts_a_scenario_has():
    scenario = with_parts(PRESETS["seed_000"].build(), ("source", "additive"))
    resized = resize(scenario, t_source=2, d_model=5)
    assert resized.source_x.shape == (2, 5) and len(resized.source_tokens) == 2
    assert resized.w_a_q.shape == (5, scenario.w_a_q.shape[1])
    np.testing.assert_array_equal(resized.source_x[:, :3], scenario.source_x[:2])
