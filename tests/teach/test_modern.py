"""The Modern attention page's demonstrations: RoPE's shift invariance (and the sinusoidal
encoding's lack of it), RoPE's angles, GQA's sharing and the KV cache's size."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.scenarios.presets import PRESETS
from attnviz.teach.modern import angles, cache_entries_per_token, kv_sharing, shift_check


@pytest.mark.parametrize("preset", ["seed_000", "rope_shift", "gqa_8_2"])
def test_rope_scores_ignore_a_common_shift_and_sinusoidal_ones_do_not(preset):
    sc = PRESETS[preset].build()
    check = shift_check(sc, 7)
    assert check.rope_change < 1e-12 * max(1.0, np.abs(check.rope).max())
    np.testing.assert_allclose(check.rope_shifted, check.rope, atol=1e-12)
    assert check.pe_change > 1e-3


def test_without_a_shift_nothing_changes_and_a_width_of_one_is_refused():
    sc = PRESETS["seed_000"].build()
    assert shift_check(sc, 0).pe_change == 0 and shift_check(sc, 0).rope_change == 0
    from dataclasses import replace
    with pytest.raises(ValueError, match="head width of at least 2"):
        shift_check(replace(sc, w_q=sc.w_q[:, :1], w_k=sc.w_k[:, :1]), 3)


def test_the_angles_are_position_times_base_power():
    a = angles(5, 4, base=100.0)
    np.testing.assert_allclose(a[:, 0], np.arange(5))
    np.testing.assert_allclose(a[:, 1], np.arange(5) * 100.0 ** -0.5)


def test_gqa_sharing_and_cache_size():
    share = kv_sharing(8, 2)
    assert share.argmax(axis=1).tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert (kv_sharing(4, 4) == np.eye(4)).all() and (kv_sharing(4, 1) == 1).all()
    with pytest.raises(ValueError, match="must divide"):
        kv_sharing(8, 3)
    assert cache_entries_per_token(8, 128) == 2048 and cache_entries_per_token(1, 128) == 256


def test_qk_norm_bounds_the_logits_and_raises_the_entropy_on_its_preset():
    from attnviz.teach.modern import qk_norm_effect
    effect = qk_norm_effect(PRESETS["qk_norm_tamed"].build(), 1.0)
    assert effect.normed_largest <= effect.bound + 1e-12 < effect.plain_largest
    assert effect.normed_entropy > effect.plain_entropy
    assert effect.bound == pytest.approx(4 * 1.0 / 2.0)  # d_k g² / √d_k with d_k = 4
