"""Pattern presets built by construction: the weights are the intended pattern."""

from dataclasses import replace

import numpy as np
import pytest

from attnviz.scenarios.patterns import (
    GAIN,
    PATTERN_TOKENS,
    PATTERNS,
    first_pattern,
    previous_pattern,
    same_word_pattern,
    self_pattern,
)
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario

T = len(PATTERN_TOKENS)
NEAR = T * np.exp(-GAIN)  # the largest weight a non-chosen key can get


def weights(key):
    return np.asarray(run_scenario(PRESETS[key].build()).attention.weights)


def test_patterns_are_presets():
    keys = [k for k, _, _ in PATTERNS]
    assert keys == ["pattern_self", "pattern_previous", "pattern_first", "pattern_uniform",
                    "pattern_same_word"]
    for key in keys:
        assert key in PRESETS
        assert PRESETS[key].source == "by construction"
        assert PRESETS[key].build().title == PRESETS[key].title


@pytest.mark.parametrize("key, target", [
    ("pattern_self", self_pattern(T)),
    ("pattern_previous", previous_pattern(T)),
    ("pattern_first", first_pattern(T)),
    ("pattern_same_word", same_word_pattern(PATTERN_TOKENS)),
])
def test_near_exact_patterns(key, target):
    w = weights(key)
    np.testing.assert_allclose(w, target, atol=NEAR)
    np.testing.assert_array_equal(np.argmax(w, axis=1), np.argmax(target, axis=1))


def test_uniform_is_exact():
    np.testing.assert_array_equal(weights("pattern_uniform"), np.full((T, T), 1.0 / T))


def test_scores_are_the_pattern_times_the_gain():
    """Work backwards: unscaled scores = x W_Q (x W_K)ᵀ = 20·P."""
    res = run_scenario(PRESETS["pattern_previous"].build())
    np.testing.assert_array_equal(res.attention.scores, GAIN * previous_pattern(T))
    assert res.attention.scale == 1.0
    # W_V = I: output row i is the one-hot embedding of token i − 1 (token 0: itself)
    np.testing.assert_allclose(res.attention.output, previous_pattern(T), atol=NEAR)


def test_same_word_scores():
    res = run_scenario(PRESETS["pattern_same_word"].build())
    s = res.attention.scores
    # tokens: the cat sat on the mat — the second 'the' (4) scores 2G against the first
    assert s[4, 0] == 2 * GAIN and s[4, 4] == GAIN and s[4, 1] == 0
    assert s[1, 1] == GAIN and s[1, 0] == 0 and s[0, 4] == -2 * GAIN
    assert np.argmax(res.attention.weights[4]) == 0


def test_same_word_pattern_shares_between_copies():
    p = same_word_pattern(["a", "b", "a", "a"])
    np.testing.assert_array_equal(p[3], [0.5, 0, 0.5, 0])
    np.testing.assert_array_equal(p[1], [0, 1, 0, 0])


def test_patterns_survive_other_variants():
    """Switching the variant keeps a computable scenario (needed by every page)."""
    for _, _, build in PATTERNS:
        for variant in ("scaled_dot_product", "causal", "multi_head", "cross", "additive"):
            run_scenario(replace(build(), variant=variant))
