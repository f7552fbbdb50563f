"""The matrices a drag slider steps through: each one the one run path's, for its value."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.scenarios import sweep
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.scenarios.scenario import run_scenario


def test_a_sweep_over_a_scenario_field_is_run_scenario_at_each_value():
    sc = default_scenario()
    grid = [0.05, 0.5, 1.0, 5.0]
    zs = sweep.sweep(sc, "temperature", grid, "weights")
    for value, z in zip(grid, zs, strict=True):
        expected = run_scenario(replace(sc, temperature=value)).attention.weights
        np.testing.assert_array_equal(z, expected)
    assert not np.allclose(zs[0], zs[-1])  # the setting really changed the weights


def test_a_sweep_over_a_variant_setting_keeps_the_others():
    sc = PRESETS["sinks_streaming"].build()
    sc = replace(sc, params={**sc.params, "learned_sink": True, "window": 2})
    zs = sweep.sweep(sc, "params.sink_logit", [-3.0, 0.0, 3.0], "weights")
    for value, z in zip([-3.0, 0.0, 3.0], zs, strict=True):
        edited = replace(sc, params={**sc.params, "sink_logit": value})
        assert edited.param("window") == 2 and edited.param("learned_sink")
        np.testing.assert_array_equal(z, run_scenario(edited).attention.weights)
    assert zs[0].sum() > zs[1].sum() > zs[2].sum()  # a larger sink logit takes more weight


def test_a_sweep_too_large_to_send_is_refused():
    sc = default_scenario()
    values = range(sweep.MAX_CELLS // (sc.t * sc.t) + 1)
    with pytest.raises(ValueError, match="more than 20,000"):
        sweep.sweep(sc, "window", values)


def test_the_temperature_grid_is_the_sliders_values():
    grid = sweep.temperature_grid()
    assert grid[0] == 0.05 and grid[-1] == 5.0 and len(grid) == 100
    assert 1.0 in grid and all(round(v, 2) == v for v in grid)


@pytest.mark.parametrize("key", ["seed_000", "cat_sat", "alibi_local", "capped_at_2", "rope_shift",
                                 "gqa_8_2", "qk_norm_tamed", "ssmax_long", "sinks_streaming",
                                 "kv_decoding", "bahdanau"])
def test_the_score_frames_from_one_run_have_the_bits_of_a_run_per_value(key):
    scenario = PRESETS[key].build()
    grid = sweep.temperature_grid()[::7]
    head = scenario.n_heads - 1 if scenario.spec.always_heads else 0
    custom = replace(scenario, scale_mode="custom")
    for sc, setting, values in ((scenario, "temperature", grid),
                                (custom, "custom_scale", [0.1, 0.35, 1.0, 2.5])):
        for matrix in ("weights", "scaled"):
            fast = sweep.score_sweep(sc, setting, values, matrix, head=head)
            slow = sweep.sweep(sc, setting, values, matrix, head=head)
            for a, b in zip(fast, slow, strict=True):
                np.testing.assert_array_equal(a, b)


def test_the_temperature_range_is_written_once():
    from attnviz.scenarios import limits
    grid = sweep.temperature_grid()
    assert (grid[0], grid[-1]) == (limits.TEMPERATURE_MIN, limits.TEMPERATURE_MAX)
    assert round(grid[1] - grid[0], 10) == limits.TEMPERATURE_STEP
