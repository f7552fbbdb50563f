"""A variant's formula names only the steps that happen: √d_k only at scale
1/√d_k, the custom factor as its number, τ only when it is not 1, the mask only when something
is masked — for every variant and every combination of settings."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import numpy as np
import pytest

from attnviz.scenarios.formulas import GENERAL, Written, number, scaled
from attnviz.scenarios.presets import default_scenario
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import run_scenario, with_variant, written

SETTINGS = [Written(scale=s, custom=0.25 if s == "custom" else None, tempered=t, masked=m)
            for s, t, m in itertools.product(("sqrt_dk", "none", "custom"), (True, False),
                                             (True, False))]
# variants whose formula is a plain definition, the same whatever the settings
FIXED = {"additive", "online_softmax", "sinks"}
NO_MASK_TERM = {"kv_cache"}  # the cache holds the keys so far: causal by construction
NEVER_SCALED = {"dot_product"}


@pytest.mark.parametrize("key", sorted(VARIANTS))
@pytest.mark.parametrize("w", SETTINGS, ids=str)
def test_the_formula_writes_exactly_the_steps_that_happen(key, w):
    formula = VARIANTS[key].written(w)
    assert formula.count("{") == formula.count("}")
    assert (len(re.findall(r"\\left(?!arrow)", formula))
            == len(re.findall(r"\\right(?!arrow)", formula)))
    if key in FIXED:
        assert formula == VARIANTS[key].written()
        return
    sqrt = w.scale == "sqrt_dk" and key not in NEVER_SCALED
    assert (r"\sqrt{d_k}" in formula) == sqrt, formula
    assert ("0.25" in formula) == (w.scale == "custom" and key not in NEVER_SCALED), formula
    assert (r"\tau" in formula) == w.tempered, formula
    assert (r"\mathrm{mask}_M" in formula) == (w.masked and key not in NO_MASK_TERM), formula
    assert "+ M" not in formula  # M is the boolean mask: never added to the scores


def test_the_general_formula_has_every_step():
    assert GENERAL == Written(scale="sqrt_dk", tempered=True, masked=True)
    assert VARIANTS["scaled_dot_product"].written().startswith(
        r"\mathrm{softmax}\!\left(\mathrm{mask}_M\!\left(\frac{QK^\top}{\sqrt{d_k}\,\tau}\right)")


def test_scaled_scores_by_setting():
    assert scaled("S", Written()) == r"\frac{S}{\sqrt{d_k}\,\tau}"
    assert scaled("S", Written(tempered=False)) == r"\frac{S}{\sqrt{d_k}}"
    assert scaled("S", Written(scale="none")) == r"\frac{S}{\tau}"
    assert scaled("S", Written(scale="none", tempered=False)) == "S"
    assert scaled("S", Written(scale="custom", custom=0.5, tempered=False)) == r"0.5\,S"
    assert number(1e-5) == r"1\times 10^{-5}"
    with pytest.raises(ValueError, match="scale must be one of"):
        Written(scale="sqrt")


def test_written_reads_the_scenario_and_its_result():
    sc = default_scenario()  # seed 000: 1/√d_k, τ = 1, no mask
    assert written(sc, run_scenario(sc).mask) == Written(tempered=False, masked=False)
    assert written(replace(sc, scale_mode="none", temperature=0.5)) == Written(
        scale="none", tempered=True, masked=False)
    assert written(replace(sc, scale_mode="custom", custom_scale=0.3)).custom == 0.3
    causal = with_variant(sc, "causal")
    assert written(causal, run_scenario(causal).mask).masked
    assert written(with_variant(sc, "dot_product")).scale == "none"  # fixed by the variant
    # a padding mask that keeps every key masks nothing: the result says so
    padded = replace(sc, mask_kind="padding", valid_len=len(sc.tokens))
    assert np.all(run_scenario(padded).mask)
    assert not written(padded, run_scenario(padded).mask).masked
