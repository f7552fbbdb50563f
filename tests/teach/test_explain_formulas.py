"""The explanation pages' number formatter and formula table (attnviz.teach.explain): formulas
follow the computation (no √d_k without that scale, no τ at temperature 1, no M without a mask)."""

import math
from dataclasses import replace

import numpy as np
import pytest

from attnviz.core.attention import scaled_dot_product_attention
from attnviz.core.explain import explain_row
from attnviz.core.score_mods import Bias, SoftCap
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.explain import Settings, formulas, formulas_for, number, settings_of
from attnviz.teach.text import step_by_step, trace


def row_of(key="seed_000", i=0, **changes):
    return explain_row(run_scenario(replace(PRESETS[key].build(), **changes)).attention, i)


def test_number_styles():
    assert number(-2.5) == "−2.5" and number(-0.0) == "0" and number(-np.inf) == "−∞"
    assert number(0.123456789, 6, "table") == "0.123457" and number(-1.5, 6, "table") == "-1.5"
    assert number(np.inf, 6, "table") == "∞"
    assert number(-np.inf, style="latex") == r"-\infty"
    assert number(1.5e-7, 5, "latex") == r"1.5\times 10^{-7}"
    assert number(math.nan, style="latex") == r"\text{NaN}"
    assert number(2 / 3, 8, "latex") == "0.66666667"


def test_default_scenario_shows_root_dk_and_no_tau_or_mask():
    f = formulas_for(row_of())
    assert settings_of(row_of()) == Settings(scale="sqrt_dk")
    assert f["scaled"] == r"s'_{ij} = \frac{s_{ij}}{\sqrt{d_k}}"
    assert "temperature" not in f and "mask" not in f
    assert not any(r"\tau" in x or "M_" in x or "s''" in x for x in f.values())
    assert r"\exp(s'_{ij} - m_i)" in f["exp"]


def test_scale_none_drops_root_dk_and_the_scaled_symbol():
    row = row_of(scale_mode="none")
    f = formulas_for(row)
    assert settings_of(row).scale == "none"
    assert "scale" not in f and "scaled" not in f
    assert not any(r"\sqrt" in x or "s'" in x for x in f.values())
    assert f["exp"] == r"e_{ij} = \exp(s_{ij} - m_i)"
    f = formulas_for(row_of(scale_mode="none", temperature=2.0))
    assert f["scaled"] == r"s'_{ij} = s_{ij} \div \tau" and r"\sqrt" not in f["scaled"]


def test_custom_scale_temperature_and_mask_all_shown():
    row = row_of("seed_001_causal", scale_mode="custom", custom_scale=0.25, temperature=0.5)
    f = formulas_for(row)
    assert settings_of(row) == Settings(scale="custom", tempered=True, masked=True)
    assert f["scaled"] == r"s'_{ij} = s_{ij} \times \text{scale} \div \tau"
    assert "M_{ij}" in f["mask"] and r"s''_{ij}" in f["exp"]
    # every formula the pages title exists, and every title has a formula in some setting
    full = formulas(Settings(scale="custom", tempered=True, masked=True, multi_head=True,
                             mods=(Bias(np.zeros((1, 1, 1))), SoftCap(2.0))))
    additive = formulas(Settings(kind="additive", masked=True))
    for titles in (step_by_step.TITLES, trace.TITLES):
        assert set(titles) <= set(full) | set(additive)


def test_masked_means_anywhere_in_the_result():
    """The last query of a causal mask sees every key, yet the mask step is still shown."""
    row = row_of("seed_001_causal", i=1)
    assert row.mask.all() and "mask" in formulas_for(row)


def test_additive_and_multi_head_symbols():
    f = formulas(Settings(kind="additive", scale="none"))
    assert f["score"].startswith("e_{ij} = v_a") and r"\epsilon_{ij}" in f["exp"]
    assert f["output"].startswith("c_i") and "scaled" not in f
    res = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2))
    assert settings_of(explain_row(res, 0)).scale == "sqrt_dk"
    mh = run_scenario(PRESETS["seed_004_two_heads"].build()).attention
    f = formulas_for(explain_row(mh, 0, head=1))
    assert f["output"].startswith("o_i^{(h)}") and "W_O" in f["concat"]


def test_unknown_scale_kind_is_refused():
    with pytest.raises(ValueError, match="scale must be one of"):
        formulas(Settings(scale="half"))


def test_alibi_and_softcap_rows_explain_their_bias_and_cap():
    """Trace a cell and Step by step recompute exactly the core's scores with the bias (ALiBi)
    and the cap (soft-capping), and their formulas name both steps."""
    import numpy as np

    from attnviz.core.explain import explain_row
    from attnviz.scenarios.presets import PRESETS
    from attnviz.scenarios.scenario import run_scenario

    for key, head in (("alibi_local", 2), ("capped_at_2", None)):
        sc = PRESETS[key].build()
        att = run_scenario(sc).attention
        for i in range(sc.t):
            row = explain_row(att, i, head=head, w_o=sc.w_o if head is not None else None)
            part = att.head(head or 0)
            np.testing.assert_allclose(row.scaled, part.scaled[i], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(row.weights, part.weights[i], rtol=1e-12, atol=1e-15)
        f = formulas_for(row)
        assert ("bias" in f) == (key == "alibi_local") and ("cap" in f) == (key == "capped_at_2")
        assert (r"\hat s_{ij}" in f["exp"]) == (key == "capped_at_2")


def test_each_score_modifier_writes_its_own_step_in_the_recorded_order():
    alibi = explain_row(run_scenario(PRESETS["alibi_local"].build()).attention, 3, head=1)
    f = formulas_for(alibi)
    assert [s.mod.key for s in alibi.mod_steps] == ["bias"]
    assert r"b_{ij} = -m_h\,(i - j)" in f["bias"] and "s^{b}_{ij}" in f["mask"]
    capped = explain_row(run_scenario(PRESETS["capped_at_2"].build()).attention, 2)
    f = formulas_for(capped)
    assert [s.mod.key for s in capped.mod_steps] == ["cap"]
    assert r"\tanh" in f["cap"] and r"\hat s_{ij}" in f["exp"]
    # the recorded steps reproduce the core's scaled scores exactly
    assert np.array_equal(capped.mod_steps[-1].after, capped.core.scaled)
