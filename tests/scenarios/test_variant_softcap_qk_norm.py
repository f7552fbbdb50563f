"""The soft-capping and QK-norm variants: presets, settings, agreement with plain attention at
the limits (a huge cap; gain chosen to restore the raw norms)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, run_scenario

TOL = {"rtol": 1e-12, "atol": 1e-12}


def plain(sc):
    return run_scenario(replace(sc, variant="scaled_dot_product", params={})).attention


def test_softcap_preset_caps_the_logits_and_spreads_the_weights():
    sc = PRESETS["capped_at_2"].build()
    capped, raw = run_scenario(sc).attention, plain(sc)
    assert raw.scaled.max() > 10 and capped.scaled.max() < 2
    np.testing.assert_allclose(capped.scaled, 2 * np.tanh(raw.scaled / 2), **TOL)
    assert capped.weights.max() < 0.8 < raw.weights.max()


def test_softcap_with_a_huge_cap_is_plain_attention():
    sc = PRESETS["capped_at_2"].build()
    huge = run_scenario(replace(sc, params={"softcap": 1000.0})).attention
    np.testing.assert_allclose(huge.weights, plain(sc).weights, atol=2e-3)


def test_qk_norm_preset_bounds_the_scores():
    sc = PRESETS["qk_norm_tamed"].build()
    normed, raw = run_scenario(sc).attention, plain(sc)
    assert np.abs(normed.scores).max() <= 4 + 1e-9 < np.abs(raw.scores).max()
    assert raw.weights[0, 1] > 0.99 and normed.weights[0].max() < 0.5
    rms = np.sqrt(np.mean(normed.q ** 2, axis=1))  # 1 but for eps = 1e-6 under the root
    raw_ms = np.mean(raw.q ** 2, axis=1)
    np.testing.assert_allclose(rms, np.sqrt(raw_ms / (raw_ms + 1e-6)), **TOL)


def test_qk_norm_gain_sharpens():
    sc = PRESETS["qk_norm_tamed"].build()
    sharp = run_scenario(replace(sc, params={"qk_gain": 4.0})).attention
    soft = run_scenario(sc).attention
    assert sharp.weights.max(axis=1).mean() > soft.weights.max(axis=1).mean()
    np.testing.assert_allclose(sharp.scores, 16 * soft.scores, **TOL)


@pytest.mark.parametrize(("preset", "params", "message"), [
    ("capped_at_2", {"softcap": 0.0}, r"softcap must be between 0.01 and 1000, got 0.0"),
    ("qk_norm_tamed", {"qk_gain": -1.0}, r"qk_gain must be between 0 and 100, got -1.0"),
])
def test_bad_settings_are_refused_by_name(preset, params, message):
    with pytest.raises(ValueError, match=message):
        run_scenario(replace(PRESETS[preset].build(), params=params))
