"""The variant registry: one module per variant in attnviz/scenarios/variants, collected here."""

from __future__ import annotations

import pkgutil

import pytest

from attnviz import VARIANTS, Variant
from attnviz.scenarios import registry, variants
from attnviz.scenarios.variant import PARTS, Param

# key -> what it declares: (scale fixed, causal, keys from the source, heads, always heads,
# direct Q/K/V, parts)
EXPECTED = {
    "dot_product": (1.0, False, False, True, False, True, ()),
    "scaled_dot_product": (None, False, False, True, False, True, ()),
    "causal": (None, True, False, True, False, True, ()),
    "bidirectional": (None, False, False, True, False, True, ()),
    "multi_head": (None, False, False, True, True, False, ()),
    "cross": (None, False, True, False, False, False, ("source",)),
    "additive": (None, False, True, False, False, False, ("source", "additive")),
    "rope": (None, False, False, False, False, False, ()),
    "gqa": (None, False, False, False, True, False, ()),
    "alibi": (None, True, False, False, True, False, ()),
    "softcap": (None, False, False, False, False, False, ()),
    "qk_norm": (None, False, False, False, False, False, ()),
    "online_softmax": (None, False, False, False, False, True, ()),
    "kv_cache": (None, True, False, False, False, False, ()),
    "sinks": (None, True, False, False, False, False, ()),
}


def test_the_variants_offered():
    assert list(VARIANTS) == list(EXPECTED)


@pytest.mark.parametrize("key", list(VARIANTS))
def test_each_variant_is_complete(key):
    variant = VARIANTS[key]
    assert isinstance(variant, Variant)
    assert variant.key == key
    assert (variant.scale_fixed, variant.causal, variant.keys_from_source, variant.heads,
            variant.always_heads, variant.direct, variant.parts) == EXPECTED[key]
    assert callable(variant.compute)
    assert callable(variant.backward)  # its backward pass (tests/scenarios/test_gradients.py)
    assert variant.name and variant.description and variant.written()
    assert variant.written().count("{") == variant.written().count("}")  # balanced LaTeX groups
    assert set(variant.parts) <= set(PARTS)


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
    assert keys == ["cat_sat", "translation", "bahdanau", "rope_shift", "gqa_8_2", "alibi_local",
                    "softcap_2", "qk_norm_tamed", "online_tiles", "kv_decoding",
                    "sinks_streaming"]
    assert VARIANTS["cross"].presets[0].build().variant == "cross"


def test_uses_source_for_cross_and_additive_only():
    assert {k for k, v in VARIANTS.items() if v.uses_source} == {"cross", "additive"}


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
