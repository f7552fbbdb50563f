"""The variant registry: one entry per variant, each naming a core function it can call."""

from __future__ import annotations

import inspect

import pytest

import attnviz
from attnviz import VARIANTS, Variant

EXPECTED = {
    "dot_product": ("self", {"scale": 1.0}),
    "scaled_dot_product": ("self", {}),
    "causal": ("self", {"causal": True}),
    "bidirectional": ("self", {}),
    "multi_head": ("multi_head", {}),
    "cross": ("cross", {}),
    "additive": ("additive", {}),
}
FUNCTIONS = {"self": attnviz.self_attention, "cross": attnviz.cross_attention,
             "multi_head": attnviz.multi_head_attention, "additive": attnviz.additive_attention}


def test_the_variants_offered():
    assert list(VARIANTS) == list(EXPECTED)


@pytest.mark.parametrize("key", list(VARIANTS))
def test_each_variant_is_complete(key):
    variant = VARIANTS[key]
    kind, fixed = EXPECTED[key]
    assert isinstance(variant, Variant)
    assert variant.key == key
    assert variant.kind == kind
    assert dict(variant.fixed) == fixed
    assert variant.function is FUNCTIONS[kind]
    assert variant.name and variant.description and variant.formula
    assert variant.formula.count("{") == variant.formula.count("}")  # balanced LaTeX groups


@pytest.mark.parametrize("key", list(VARIANTS))
def test_fixed_settings_are_keywords_of_the_function(key):
    variant = VARIANTS[key]
    parameters = inspect.signature(variant.function).parameters
    for name in variant.fixed:
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY


def test_uses_source_for_cross_and_additive_only():
    assert {k for k, v in VARIANTS.items() if v.uses_source} == {"cross", "additive"}


def test_names_are_unique():
    names = [v.name for v in VARIANTS.values()]
    assert len(set(names)) == len(names)


def test_registry_and_entries_are_read_only():
    with pytest.raises(TypeError):
        VARIANTS["new"] = VARIANTS["causal"]  # type: ignore[index]
    with pytest.raises(TypeError):
        VARIANTS["causal"].fixed["causal"] = False  # type: ignore[index]
    with pytest.raises(AttributeError):
        VARIANTS["causal"].kind = "cross"  # type: ignore[misc]
