"""The variant registry: one module per variant in attnviz/scenarios/variants, collected here."""

from __future__ import annotations

import pkgutil
from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, VARIANTS, Variant
from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import MultiHeadResult
from attnviz.core.masks import causal_mask
from attnviz.scenarios import registry, variants
from attnviz.scenarios.presets import default_scenario
from attnviz.scenarios.scenario import run_scenario, with_variant
from attnviz.scenarios.variant import PARTS, Param


def behaviour(key: str):
    """The default scenario switched to the variant (its own settings at their defaults), run."""
    scenario = replace(with_variant(default_scenario(), key), params={}, n_heads=3)
    return scenario, run_scenario(scenario).attention


def test_the_variants_offered_are_in_picker_order_with_unique_orders():
    specs = list(VARIANTS.values())
    assert specs == sorted(specs, key=lambda v: (v.order, v.key))
    assert len({v.order for v in specs}) == len(specs)


@pytest.mark.parametrize("key", list(VARIANTS))
def test_each_variant_is_complete(key):
    variant = VARIANTS[key]
    assert isinstance(variant, Variant)
    assert variant.key == key
    assert callable(variant.compute)
    assert callable(variant.backward)  # its backward pass (tests/scenarios/test_gradients.py)
    assert callable(variant.reference)  # its explicit loops (tests/scenarios/test_scenario.py)
    assert variant.name and variant.description and variant.written()
    assert variant.written().count("{") == variant.written().count("}")  # balanced LaTeX groups
    assert set(variant.parts) <= set(PARTS)


@pytest.mark.parametrize("key", list(VARIANTS))
def test_each_variant_does_what_it_declares(key):
    """The flags the pages read agree with what the computation does."""
    variant = VARIANTS[key]
    scenario, att = behaviour(key)
    assert variant.keys_from_source == ("source" in variant.parts)
    assert isinstance(att, MultiHeadResult) == variant.always_heads
    assert isinstance(att, AdditiveResult) == (not variant.projections)
    if variant.scale_fixed is not None:
        assert att.scale == variant.scale_fixed
    weights = np.asarray(att.weights)
    future = ~causal_mask(*weights.shape[-2:])
    if variant.causal:  # no user mask here: only the variant's own can hide the future
        assert (weights[..., future] == 0).all()
    elif not variant.keys_from_source:
        assert (weights[..., future] > 0).any()
    if variant.heads:
        assert run_scenario(scenario, heads=3).attention.n_heads == 3
    direct = replace(PRESETS["seed_001_causal"].build(), variant=key)  # Q, K, V given
    if variant.direct:
        assert np.asarray(run_scenario(direct).attention.weights).shape[-2:] == (2, 2)
    else:
        with pytest.raises(ValueError, match="needs embeddings and weights|must not be empty"):
            run_scenario(direct)


def test_every_module_of_the_package_is_collected():
    """Adding a variant = adding a module: each module with VARIANT(S) is in the registry."""
    declared = set()
    for info in pkgutil.iter_modules(variants.__path__):
        module = __import__(f"attnviz.scenarios.variants.{info.name}", fromlist=["_"])
        declared |= {v.key for v in getattr(module, "VARIANTS", ())}
        if hasattr(module, "VARIANT"):
            declared.add(module.VARIANT.key)
    assert declared == set(VARIANTS)


def test_a_key_declared_twice_is_refused(monkeypatch):
    import attnviz.scenarios.variants.causal as causal

    monkeypatch.setattr(causal, "VARIANTS", (VARIANTS["causal"],), raising=False)
    with pytest.raises(ValueError, match="variant key\\(s\\) declared twice: causal"):
        registry.collect()


def test_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="unknown part\\(s\\) speakers"):
        Variant(key="x", name="X", description="d", formula="f", compute=print, order=1,
                parts=("speakers",))


def test_presets_declared_by_variants_are_collected():
    keys = [p.key for p in registry.variant_presets()]
    assert keys == [p.key for v in VARIANTS.values() for p in v.presets]
    assert len(set(keys)) == len(keys) and set(keys) <= set(PRESETS)
    for variant in VARIANTS.values():
        for preset in variant.presets:  # a variant's preset shows that variant
            assert PRESETS[preset.key].build().variant == variant.key
            assert preset.build().fields["variant"] == variant.key  # a Draft until made


def test_uses_source_for_cross_and_additive_only():
    assert {k for k, v in VARIANTS.items() if v.uses_source} == {"cross", "additive",
                                                                 "steps_source"}


def test_bidirectional_says_it_is_scaled_dot_product():
    assert VARIANTS["bidirectional"].same_as == "scaled_dot_product"


def test_names_are_unique():
    names = [v.name for v in VARIANTS.values()]
    assert len(set(names)) == len(names)


def test_registry_and_entries_are_read_only():
    with pytest.raises(TypeError):
        VARIANTS["new"] = VARIANTS["causal"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        VARIANTS["causal"].causal = False  # type: ignore[misc]


@pytest.mark.parametrize(("param", "value", "message"), [
    (Param("base", "RoPE base", 10000.0, low=1.0, high=1e6), "10", "base must be a number"),
    (Param("base", "RoPE base", 10000.0, low=1.0, high=1e6), True, "base must be a number"),
    (Param("base", "RoPE base", 10000.0, low=1.0, high=1e6), 0.5, "between 1 and 1e\\+06"),
    (Param("base", "RoPE base", 10000.0, low=1.0, high=1e6), float("nan"), "finite"),
    (Param("tile", "tile", 2, low=1, high=256), 2.0, "tile must be a whole number"),
    (Param("layout", "layout", "split", choices=("split", "interleaved")), "other",
     "layout must be one of split, interleaved"),
    (Param("on", "on", False), 1, "on must be true or false"),
])
def test_param_values_are_checked(param, value, message):
    with pytest.raises(ValueError, match=message):
        param.check(value)


def test_param_values_that_fit_are_kept():
    assert Param("base", "b", 1.0, low=0.0, high=2.0).check(2) == 2.0
    assert Param("tile", "t", 2, low=1, high=9).check(9) == 9
    assert Param("layout", "l", "a", choices=("a", "b")).check("b") == "b"
