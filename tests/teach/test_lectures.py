"""The guided lectures (attnviz.teach.lectures): every step is a valid page, preset, focus and
settings, and every talking point (attnviz.teach.text.lectures.TALK) is true for the numbers
its step shows — one check per step, on the scenario the lecture bar loads
(``lecture_bar.with_settings`` over the step's preset)."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attnviz.core.attention import valid_head_counts
from attnviz.scenarios import limits
from attnviz.scenarios.gradients import LOSSES, Loss, gradients, self_output
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import MASK_KINDS, SCALE_MODES, run_scenario, with_variant
from attnviz.teach.lectures import (
    LECTURES,
    PLAYGROUND,
    SCENARIO_SETTINGS,
    step_problem,
    with_settings,
)
from attnviz.teach.modern import shift_check
from attnviz.teach.sqrt_dk import sqrt_dk_experiment
from attnviz.teach.text import lectures as text
from attnviz.teach.text import playground as playground_text

ROOT = Path(__file__).resolve().parents[2]
STEPS = [(lec.key, i, step) for lec in LECTURES.values() for i, step in enumerate(lec.steps)]
STEP_IDS = [f"{key}-{i + 1}-{step.talk}" for key, i, step in STEPS]


def app_pages() -> set[str]:
    """The page paths app.py gives st.navigation (``st.Page("pages/x.py", ...)``)."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page"
            and node.args and isinstance(node.args[0], ast.Constant)}


def shown(talk: str):
    """The scenario and result of the (only) step whose talking point is ``talk``."""
    (step,) = [s for _, _, s in STEPS if s.talk == talk]
    scenario = with_settings(PRESETS[step.preset].build(), step.settings)
    return scenario, run_scenario(scenario)


def rounds_to(value: float, written: str) -> bool:
    """True when ``value`` shown with as many decimals as ``written`` reads ``written``."""
    decimals = len(written.split(".")[1]) if "." in written else 0
    return f"{value:.{decimals}f}" == written


def said(talk: str, *parts: str) -> None:
    """The talking point says each of ``parts`` (so a check below follows its wording)."""
    for part in parts:
        assert part in text.TALK[talk], (talk, part)


# ---------------------------------------------------------------------------------------------
# Every step is valid
# ---------------------------------------------------------------------------------------------

def test_three_lectures_of_eight_to_twelve_steps_with_their_titles():
    assert list(LECTURES) == ["scratch", "modern", "backprop"]
    assert [lec.title for lec in LECTURES.values()] == [
        "Attention from scratch", "Modern attention", "Backprop and learning"]
    for key, lecture in LECTURES.items():
        assert lecture.key == key and lecture.title == text.LECTURE_TITLES[key]
        assert 8 <= len(lecture.steps) <= 12, key
        assert key in text.BAD_LECTURE and lecture.title in text.BAD_LECTURE


@pytest.mark.parametrize(("key", "i", "step"), STEPS, ids=STEP_IDS)
def test_each_step_names_a_page_a_preset_a_focus_and_a_talking_point(key, i, step):
    assert step.page in app_pages(), f"{step.page} is not a page of app.py"
    assert step.preset in PRESETS
    assert step.talk in text.TALK
    if step.page == PLAYGROUND:
        assert step.focus in playground_text.FOCUS, step.focus
        if step.focus == "heads":  # the Playground offers Heads for a variant with heads only
            variant = step.settings.get("variant", PRESETS[step.preset].build().variant)
            assert VARIANTS[variant].always_heads
    else:
        assert step.focus is None, "only the Playground has a focus"


@pytest.mark.parametrize(("key", "i", "step"), STEPS, ids=STEP_IDS)
def test_each_setting_is_a_scenario_field_or_variant_setting_within_range(key, i, step):
    base = PRESETS[step.preset].build()
    variant = step.settings.get("variant", base.variant)
    spec = VARIANTS[variant]
    for name, value in step.settings.items():
        if name == "variant":
            assert value in VARIANTS
        elif name == "temperature":
            assert limits.TEMPERATURE_MIN <= value <= limits.TEMPERATURE_MAX
        elif name == "scale_mode":
            assert value in SCALE_MODES
        elif name == "mask_kind":
            assert value in MASK_KINDS
        elif name == "use_pe":
            assert isinstance(value, bool)
        elif name == "n_heads":
            assert value in valid_head_counts(base.w_q.shape[1], limits.MAX_HEADS)
        elif name == "window":
            assert isinstance(value, int) and 0 <= value <= limits.MAX_TOKENS
        else:
            assert name not in SCENARIO_SETTINGS
            spec.param(name).check(value)  # a setting of the variant, within its range
    scenario = with_settings(base, step.settings)
    for name, value in step.settings.items():  # applied as written
        got = scenario.param(name) if name not in SCENARIO_SETTINGS else getattr(scenario, name)
        assert got == value, name
    run_scenario(scenario)  # the step computes


def test_every_talking_point_belongs_to_one_step_and_is_short():
    used = [step.talk for _, _, step in STEPS]
    assert sorted(used) == sorted(text.TALK), "a talking point without a step, or twice"
    for key, words in text.TALK.items():
        sentences = re.findall(r"[.!?](?:\s|$)", words)
        assert 1 <= len(sentences) <= 3, key
        assert len(words) <= 320, key


def test_with_settings_drops_settings_the_new_variant_lacks():
    scenario = with_settings(PRESETS["online_tiles"].build(), {"variant": "scaled_dot_product",
                                                               "temperature": 0.5})
    assert scenario.variant == "scaled_dot_product" and dict(scenario.params) == {}
    assert scenario.temperature == 0.5
    run_scenario(scenario)


@pytest.mark.parametrize(("lecture", "step", "problem"), [
    ("scratch", None, None), ("scratch", "1", None), ("modern", "11", None),
    ("scratch", "0", "step"), ("scratch", "12", "step"), ("scratch", str(10**9), "step"),
    ("scratch", "-1", "step"), ("scratch", "1.5", "step"), ("scratch", "٣", "step"),
    ("scratch", "", "step"), ("scratch", " 2", "step"), ("scratch", "9" * 5000, "step"),
    ("../../x", "1", "lecture"), ("", None, "lecture"), ("SCRATCH", "1", "lecture"),
    ("<script>", "1", "lecture"), (None, "1", "lecture"), (["scratch"], "1", "lecture"),
])
def test_a_link_names_a_step_or_says_what_is_wrong(lecture, step, problem):
    assert step_problem(lecture, step) == problem


# ---------------------------------------------------------------------------------------------
# Every talking point is true for its step's numbers
# ---------------------------------------------------------------------------------------------

def fact_scratch_projections():
    s, r = shown("scratch_projections")
    said("scratch_projections", "[1, 0, 0]", "[2, 0, 2]")
    np.testing.assert_array_equal(s.x[0], [1, 0, 0])
    np.testing.assert_array_equal(r.attention.q[0], [2, 0, 2])
    np.testing.assert_array_equal(r.attention.q[0], s.w_q[0])


def fact_scratch_scores():
    s, r = shown("scratch_scores")
    said("scratch_scores", "= 10", "√d_k = √3", "5.77")
    assert s.w_q.shape[1] == 3 and r.attention.scores[0, 2] == 10
    assert rounds_to(r.attention.scaled[0, 2], "5.77")
    np.testing.assert_allclose(r.attention.scaled, r.attention.scores / np.sqrt(3))


def fact_scratch_weights():
    _, r = shown("scratch_weights")
    w = r.attention.weights
    said("scratch_weights", "0.91", "0.45")
    np.testing.assert_allclose(w.sum(axis=1), 1)
    assert w[3].argmax() == 2 and rounds_to(w[3, 2], "0.91")
    assert w[1, 0] == pytest.approx(w[1, 2], abs=1e-15) and rounds_to(w[1, 0], "0.45")
    assert w[1, 0] > w[1, 1] and w[1, 0] > w[1, 3]


def fact_scratch_one_query():
    _, r = shown("scratch_one_query")
    said("scratch_one_query", "[23, 11, 18, 29]", "0.97")
    np.testing.assert_array_equal(r.attention.scores[0], [23, 11, 18, 29])
    assert r.attention.weights[0].argmax() == 3 and rounds_to(r.attention.weights[0, 3], "0.97")


def fact_scratch_decoder():
    s, r = shown("scratch_decoder")
    w = r.attention.weights
    said("scratch_decoder", "0.64", "0.36")
    assert s.tokens[:2] == ("the", "cat") and s.use_pe and s.spec.causal
    assert rounds_to(w[1, 1], "0.64") and rounds_to(w[1, 0], "0.36")
    assert np.all(np.triu(w, 1) == 0)


def fact_scratch_cold():
    s, r = shown("scratch_cold")
    base = run_scenario(replace(s, temperature=1.0)).attention.weights
    said("scratch_cold", "τ = 0.3", "0.87")
    assert s.temperature == 0.3
    assert rounds_to(r.attention.weights[1, 1], "0.87") and base[1, 1] < 0.87
    assert r.attention.weights[1].max() > base[1].max()  # sharper


def fact_scratch_hot():
    s, r = shown("scratch_hot")
    w = r.attention.weights
    said("scratch_hot", "τ = 3", "0.55", "0.45")
    assert s.temperature == 3.0 and rounds_to(w[1, 1], "0.55") and rounds_to(w[1, 0], "0.45")
    base = run_scenario(replace(s, temperature=1.0)).attention.weights
    for row in range(1, s.t):  # every row with a choice is flatter (closer to uniform)
        seen = w[row, : row + 1]
        assert np.abs(seen - 1 / (row + 1)).max() < np.abs(base[row, : row + 1]
                                                          - 1 / (row + 1)).max()


def fact_scratch_mask():
    s, r = shown("scratch_mask")
    w = r.attention.weights
    said("scratch_mask", "word_1", "weight 1")
    assert s.mask_kind == "causal" and s.tokens[0] == "word_1"
    assert np.all(np.triu(w, 1) == 0) and w[0, 0] == 1
    assert np.all(np.isneginf(r.attention.masked[np.triu_indices(s.t, 1)]))


def fact_scratch_no_pe():
    s, r = shown("scratch_no_pe")
    w = r.attention.weights
    said("scratch_no_pe", "row 4", "0.18")
    assert not s.use_pe and s.tokens[0] == s.tokens[4] == "the"
    assert w[4, 0] == pytest.approx(w[4, 4], abs=1e-15) and rounds_to(w[4, 0], "0.18")
    with_pe = run_scenario(replace(s, use_pe=True)).attention.weights
    assert abs(with_pe[4, 0] - with_pe[4, 4]) > 1e-4  # with positions they differ


def fact_scratch_heads():
    s, r = shown("scratch_heads")
    w = r.attention.weights
    said("scratch_heads", "(0.99)", "(1.00)")
    assert s.tokens[2:4] == ("child", "reads") and s.n_heads == 2
    assert w[0, 2].argmax() == 2 and w[0, 2, 2] > 0.99 and f"{w[0, 2, 2]:.3f}"[:4] == "0.99"
    assert w[1, 2].argmax() == 3 and rounds_to(w[1, 2, 3], "1.00")


def fact_scratch_trace():
    _, r = shown("scratch_trace")
    a = r.attention
    e = np.exp(a.scaled - a.scaled.max(axis=1, keepdims=True))
    np.testing.assert_allclose(a.weights, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def fact_modern_baseline():
    s, r = shown("modern_baseline")
    w = r.attention.weights
    said("modern_baseline", "six tokens")
    assert s.t == 6
    np.testing.assert_allclose(w.sum(axis=1), 1)
    assert np.all(np.triu(w, 1) == 0)


def fact_modern_kv_cache():
    s, r = shown("modern_kv_cache")
    full = run_scenario(replace(with_variant(s, "causal"), params={})).attention.weights
    np.testing.assert_allclose(r.attention.weights, full, atol=1e-12)
    assert s.variant == "kv_cache"


def fact_modern_online():
    s, r = shown("modern_online")
    plain = run_scenario(with_settings(s, {"variant": "scaled_dot_product"})).attention.weights
    said("modern_online", "tiles of two", "1e-15")
    assert s.param("tile") == 2
    assert np.abs(r.attention.weights - plain).max() < 1e-15


def fact_modern_rope():
    s, r = shown("modern_rope")
    said("modern_rope", "distance 1", "the same score")
    assert s.tokens == ("the", "cat") * 3
    pairs = [r.attention.scores[i, i + 1] for i in (0, 2, 4)]
    np.testing.assert_allclose(pairs, pairs[0], atol=1e-12)
    # the chart the step brings up: the Modern page's RoPE scores at its own (default) base
    shown_there = shift_check(s, 0).rope
    np.testing.assert_allclose([shown_there[i, i + 1] for i in (0, 2, 4)], shown_there[0, 1],
                               atol=1e-12)
    assert abs(shown_there[0, 1] - shown_there[0, 3]) > 1e-3  # distance 3 scores otherwise


def fact_modern_rope_shift():
    s, r = shown("modern_rope_shift")
    said("modern_rope_shift", "by 5")
    base = run_scenario(with_settings(s, {"rope_offset": 0})).attention
    assert s.param("rope_offset") == 5
    np.testing.assert_allclose(r.attention.scores, base.scores, atol=1e-12)
    np.testing.assert_allclose(r.attention.weights, base.weights, atol=1e-12)


def fact_modern_alibi():
    s, r = shown("modern_alibi")
    last = r.attention.weights[:, -1]  # (heads, keys): the last token's row in every head
    said("modern_alibi", "0.26", "0.12–0.13")
    assert last[0].argmax() == s.t - 1 and rounds_to(last[0, -1], "0.26")
    assert np.all((last[3] >= 0.12) & (last[3] <= 0.13))
    assert last[0].max() > last[3].max()


def fact_modern_gqa():
    s, r = shown("modern_gqa")
    a = r.attention
    said("modern_gqa", "8 query heads share 2", "4 times")
    assert s.n_heads == 8 and s.param("n_kv_heads") == 2
    d_k = a.q.shape[1] // 8
    assert a.k.shape[1] == 2 * d_k  # the cache holds 2 heads' keys, not 8
    for h in range(4):  # heads 0-3 read key/value head 0
        k = a.k[:, :d_k]
        np.testing.assert_allclose(a.scores[h], a.q[:, h * d_k:(h + 1) * d_k] @ k.T, atol=1e-12)


def fact_modern_qk_norm():
    s, r = shown("modern_qk_norm")
    plain = run_scenario(with_settings(s, {"variant": "scaled_dot_product"})).attention.weights
    said("modern_qk_norm", "= 4", "0.45")
    assert s.w_q.shape[1] * s.param("qk_gain") ** 2 == 4
    assert r.attention.scores.max() <= 4 + 1e-9 and rounds_to(r.attention.weights.max(), "0.45")
    assert s.tokens[:2] == ("big", "bigger")
    assert plain[0, 1] > 0.995 and plain[1, 1] > 0.995


def fact_modern_capping():
    s, r = shown("modern_capping")
    a = r.attention
    said("modern_capping", "'three' scores 18 with itself and 9 with 'one'", "2 and 1.98",
         "c = 2")
    assert s.tokens[:3] == ("one", "two", "three") and s.param("softcap") == 2
    assert a.scores[2, 2] == 18 and a.scores[2, 0] == 9
    # as the cells write them (3 significant digits): 2 and 1.98
    assert f"{a.scaled[2, 2]:.3g}" == "2" and f"{a.scaled[2, 0]:.3g}" == "1.98"
    assert a.scaled.max() < 2


def fact_modern_ssmax():
    s, r = shown("modern_ssmax")
    plain = run_scenario(with_settings(s, {"variant": "causal"})).attention.weights
    said("modern_ssmax", "71 %", "97 %", "log 10")
    assert s.tokens[2] == s.tokens[9] == "idea" and s.t == 10
    assert f"{plain[9, [2, 9]].sum():.0%}" == "71%"
    assert f"{r.attention.weights[9, [2, 9]].sum():.0%}" == "97%"


def fact_modern_sinks():
    s, r = shown("modern_sinks")
    said("modern_sinks", "window of 3", "0.99")
    assert s.tokens[0] == "<s>" and s.tokens[-1] == "dry"
    for i in range(s.t):
        assert set(np.flatnonzero(r.mask[i])) == {0} | set(range(max(i - 2, 0), i + 1))
    assert rounds_to(r.attention.weights[-1, 0], "0.99")


def fact_backprop_variance():
    # the Why √d_k page's defaults: widths up to 512, 16 keys, 400 queries, seed 0
    res = sqrt_dk_experiment((1, 2, 4, 8, 16, 32, 64, 128, 256, 512), t_k=16, n_queries=400,
                             seed=0)
    said("backprop_variance", "512.04 at d_k = 512", "saturates", "near 1")
    assert rounds_to(res.var_unscaled[-1], "512.04")
    assert np.all(np.diff(res.var_unscaled) > 0)  # grows with d_k
    assert res.max_weight_unscaled[-1] > 0.95  # saturated: one key takes almost everything
    assert np.all(np.abs(res.var_scaled - 1) < 0.1)


def jacobian_peak(weights_row) -> float:
    """The largest entry of the softmax's Jacobian diag(α) − ααᵀ for one row, in size."""
    return float(np.abs(np.diag(weights_row) - np.outer(weights_row, weights_row)).max())


def fact_backprop_scaled():
    _, r = shown("backprop_scaled")
    said("backprop_scaled", "0.03, 0.00, 0.00 and 0.97")
    assert [f"{v:.2f}" for v in r.attention.weights[0]] == ["0.03", "0.00", "0.00", "0.97"]


def fact_backprop_unscaled():
    s, r = shown("backprop_unscaled")
    said("backprop_unscaled", "0.998", "√3 times")
    scaled = run_scenario(replace(s, scale_mode="sqrt_dk")).attention
    np.testing.assert_allclose(r.attention.scaled, scaled.scaled * np.sqrt(3))
    assert rounds_to(r.attention.weights[0, 3], "0.998")


def fact_backprop_gradients():
    _, r = shown("backprop_gradients")
    s, _ = shown("backprop_gradients")
    said("backprop_gradients", "reaches 0.06")
    row = gradients(s, Loss(LOSSES[0], self_output(s))).attention.d_scaled[0, 0]
    assert rounds_to(np.abs(row).max(), "0.06")
    assert np.abs(row).argmax() == r.attention.weights[0].argmax()  # where the weight is


def fact_backprop_saturated():
    s, r = shown("backprop_saturated")
    scaled = run_scenario(replace(s, scale_mode="sqrt_dk"))
    said("backprop_saturated", "reaches only 0.00495", "more than 10 times less")
    row = gradients(s, Loss(LOSSES[0], self_output(s))).attention.d_scaled[0, 0]
    assert f"{np.abs(row).max():.3g}" == "0.00495"
    peak, peak_scaled = (jacobian_peak(x.attention.weights[0]) for x in (r, scaled))
    assert peak_scaled / peak > 10  # the softmax's own slope, whatever the loss
    # with an output loss (the Gradients page's first choice), word_1's row of dS̃ shrinks
    assert LOSSES[0] == "output_mse"
    for kind, target in (("output_mse", self_output(s)),
                         ("output_mse", np.zeros_like(r.attention.output)),
                         ("given", np.ones_like(r.attention.output))):
        now = np.linalg.norm(gradients(s, Loss(kind, target)).attention.d_scaled[0, 0])
        before = np.linalg.norm(gradients(replace(s, scale_mode="sqrt_dk"),
                                          Loss(kind, target)).attention.d_scaled[0, 0])
        assert before / now > 10, kind


def fact_backprop_compare():
    s, _ = shown("backprop_compare")
    scaled = run_scenario(replace(s, scale_mode="sqrt_dk")).attention.weights
    unscaled = run_scenario(replace(s, scale_mode="none")).attention.weights
    assert np.all(unscaled.max(axis=1) > scaled.max(axis=1))


def fact_none():
    """A talking point that states no number about the step's scenario (it says what the page
    does)."""


FACTS = {name.removeprefix("fact_"): fn for name, fn in globals().items()
         if name.startswith("fact_") and name != "fact_none"}
WORDS_ONLY = ("backprop_learn", "backprop_induction", "backprop_quiz")


def test_every_talking_point_with_a_number_or_a_comparison_has_its_check():
    assert set(FACTS) | set(WORDS_ONLY) == set(text.TALK)
    for key in WORDS_ONLY:
        assert not re.search(r"\d", text.TALK[key]), key


@pytest.mark.parametrize("talk", sorted(FACTS))
def test_the_talking_point_holds(talk):
    FACTS[talk]()
