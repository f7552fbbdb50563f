"""The induction task (attnviz.scenarios.induction): the data (a segment that repeats at a
varying place, gap and length, every gap equally likely; the loss mask on the repeat), the
scores on hand-built attention patterns, the head identification, the phase-change detector,
the chunked training loop, and that training from the defaults forms a previous-token head and
an induction head for three seeds (measured on this machine: the numbers below).

Measured (the defaults: 2 layers × 2 heads, width 32, vocab 16, 24 tokens, Adam 1e-2, batch
32, 300 steps; numpy on one BLAS thread): for seeds 0–7 both heads pass 0.5 by step 126–222
(the first recorded frame where both do), the phase change sits at steps 71–92, and at step
300 the previous-token score is 0.56–0.61 and the prefix-matching score 0.81–0.89 (uniform
causal attention on the held-out sequence: 0.12 and 0.05; before training all heads are below
0.3). The 0.5 thresholds leave a margin of 0.2 below them and, above them, 0.06–0.11 for the
previous-token head (600 steps raise it to ~0.70 and take the task loss from ~1.0 to ~0.8).
With the fixed-place shortcut the loss on the repeat reaches ~0 by step 50 with every
previous-token score below 0.2: no induction circuit forms, and the model fails on a repeat at
another place.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnviz.core.transformer import forward
from attnviz.scenarios.induction import (
    FRAME_CELLS,
    INDUCTION_THRESHOLD,
    MAX_FRAMES,
    PREVIOUS_TOKEN_THRESHOLD,
    InductionBatch,
    InductionSettings,
    detect_phase_change,
    eval_batch,
    finish_training,
    frame_interval,
    heldout_forward,
    heldout_sequence,
    identify_heads,
    induction_loss,
    loss_by_gap,
    make_batch,
    prefix_matching_score,
    prefix_targets,
    previous_token_score,
    start_training,
    train_induction,
    train_steps,
)

DEFAULTS = InductionSettings()


# ------------------------------------------------------------------------------ the task


def test_the_segment_varies_in_place_and_length_and_is_copied():
    batch = make_batch(DEFAULTS, np.random.default_rng(0), 512)
    t = DEFAULTS.n_tokens
    assert batch.tokens.shape == (512, t) and batch.loss_mask.shape == (512, t - 1)
    assert set(batch.length.tolist()) == set(range(4, 9))  # every length 4..8 occurs
    assert len(set(batch.first.tolist())) > 8 and len(set(batch.second.tolist())) > 8
    assert np.all(batch.first + batch.length <= batch.second)  # the copies do not overlap
    assert np.all(batch.second + batch.length <= t)
    for row in range(512):
        f, s, n = batch.first[row], batch.second[row], batch.length[row]
        np.testing.assert_array_equal(batch.tokens[row, s:s + n], batch.tokens[row, f:f + n])
        # the loss counts exactly the predictions of the segment's tokens after its first
        np.testing.assert_array_equal(np.flatnonzero(batch.loss_mask[row]),
                                      np.arange(s, s + n - 1))
    assert batch.tokens.min() >= 0 and batch.tokens.max() < DEFAULTS.vocab_size


def test_every_gap_and_every_place_given_the_gap_is_equally_likely():
    """40,000 sequences at the defaults (t = 24, L = 4 .. 8). For each length L, every gap
    0 .. t − 2L occurs in a share within 20 % of the uniform 1 / (t − 2L + 1) (500-900
    sequences each: the 20 % is over 4 standard deviations). Given L and the gap, every
    first start 0 .. t − 2L − gap occurs, evenly: the chi-square statistic summed over all
    (L, gap) cells stays within 5 standard deviations of its degrees of freedom. (Drawing the
    first start before the gap gave a fourth of the sequences gap 0 and 1.5 % a gap of 12
    or more, and skewed the place given the gap.)"""
    batch = make_batch(DEFAULTS, np.random.default_rng(41), 40_000)
    t = DEFAULTS.n_tokens
    assert np.all(batch.gap >= 0) and np.all(batch.second + batch.length <= t)
    chi2, dof = 0.0, 0
    for length in range(DEFAULTS.min_segment, DEFAULTS.max_segment + 1):
        of_length = batch.length == length
        gaps = batch.gap[of_length]
        n_gaps = t - 2 * length + 1
        share = np.bincount(gaps, minlength=n_gaps) / len(gaps)
        assert len(share) == n_gaps  # no gap beyond t − 2L
        np.testing.assert_allclose(share, 1 / n_gaps, rtol=0.2, err_msg=f"L = {length}")
        for gap in range(n_gaps):
            firsts = batch.first[of_length & (batch.gap == gap)]
            n_places = n_gaps - gap
            counts = np.bincount(firsts, minlength=n_places)
            assert len(counts) == n_places and counts.min() > 0, (length, gap)
            expected = len(firsts) / n_places
            chi2 += float(((counts - expected) ** 2 / expected).sum())
            dof += n_places - 1
    assert abs(chi2 - dof) < 5 * np.sqrt(2 * dof), (chi2, dof)


def test_the_loss_by_gap_splits_the_task_loss():
    """Per gap: the mean over that gap's counted predictions; weighted by their counts, the
    task loss of the whole batch."""
    settings = dataclasses.replace(DEFAULTS, steps=1)
    params = start_training(settings).params
    batch = make_batch(settings, np.random.default_rng(5), 256)
    by_gap = loss_by_gap(params, batch)
    assert set(by_gap) == set(batch.gap.tolist())
    assert sum(n for _, n in by_gap.values()) == batch.loss_mask.sum()
    whole = forward(params, batch.tokens, loss_mask=batch.loss_mask).loss
    weighted = sum(loss * n for loss, n in by_gap.values()) / batch.loss_mask.sum()
    assert weighted == pytest.approx(whole, rel=1e-12)
    one = batch.gap == 3
    only = InductionBatch(batch.tokens[one], batch.loss_mask[one], batch.first[one],
                          batch.second[one], batch.length[one])
    assert loss_by_gap(params, only) == {3: by_gap[3]}


def test_the_masked_predictions_are_determined_by_the_context():
    # every masked target equals the token after the earlier occurrence of the current token
    batch = make_batch(DEFAULTS, np.random.default_rng(1), 64)
    for row in range(64):
        for i in np.flatnonzero(batch.loss_mask[row]):
            j = batch.first[row] + (i - batch.second[row])
            assert batch.tokens[row, i] == batch.tokens[row, j]
            assert batch.tokens[row, i + 1] == batch.tokens[row, j + 1]


def test_the_fixed_place_shortcut_always_repeats_the_first_half():
    settings = dataclasses.replace(DEFAULTS, fixed_place=True)
    batch = make_batch(settings, np.random.default_rng(0), 16)
    np.testing.assert_array_equal(batch.tokens[:, 12:], batch.tokens[:, :12])
    assert np.all(batch.loss_mask[:, 12:]) and not batch.loss_mask[:, :12].any()


def test_batches_are_reproducible_from_the_seed():
    a = make_batch(DEFAULTS, np.random.default_rng([3, 1]))
    b = make_batch(DEFAULTS, np.random.default_rng([3, 1]))
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(eval_batch(DEFAULTS).tokens, eval_batch(DEFAULTS).tokens)


def test_the_heldout_sequence_repeats_only_its_segment():
    seq = heldout_sequence(DEFAULTS)
    tokens = seq.tokens[0]
    f, s, n = int(seq.first[0]), int(seq.second[0]), int(seq.length[0])
    assert n == DEFAULTS.max_segment and f + n <= s and s + n <= DEFAULTS.n_tokens
    np.testing.assert_array_equal(tokens[s:s + n], tokens[f:f + n])
    assert len(set(tokens[f:f + n].tolist())) == n
    values, counts = np.unique(tokens, return_counts=True)
    assert set(values[counts > 1].tolist()) == set(tokens[f:f + n].tolist())
    assert len(values) == DEFAULTS.vocab_size  # at the defaults every token appears


@pytest.mark.parametrize(("n_tokens", "vocab_size", "max_segment", "fixed_place"), [
    (8, 4, 4, False), (9, 8, 4, False), (24, 16, 8, False), (64, 64, 32, False),
    (64, 16, 8, True), (8, 4, 2, True), (17, 5, 5, False),
])
def test_the_heldout_sequence_fits_every_allowed_size(n_tokens, vocab_size, max_segment,
                                                      fixed_place):
    settings = InductionSettings(n_tokens=n_tokens, vocab_size=vocab_size, min_segment=2,
                                 max_segment=max_segment, fixed_place=fixed_place)
    seq = heldout_sequence(settings)
    f, s, n = int(seq.first[0]), int(seq.second[0]), int(seq.length[0])
    tokens = seq.tokens[0]
    assert tokens.shape == (n_tokens,) and 0 <= f and f + n <= s and s + n <= n_tokens
    np.testing.assert_array_equal(tokens[s:s + n], tokens[f:f + n])
    assert tokens.min() >= 0 and tokens.max() < vocab_size
    assert seq.loss_mask.sum() == n - 1


# ------------------------------------------------------------------------------ scores


def causal_uniform(t: int) -> np.ndarray:
    w = np.tril(np.ones((t, t)))
    return w / w.sum(axis=1, keepdims=True)


def test_previous_token_score_of_hand_built_patterns():
    t = 6
    shift = np.eye(t, k=-1)
    shift[0, 0] = 1.0
    assert previous_token_score(shift) == pytest.approx(1.0)
    assert previous_token_score(np.eye(t)) == pytest.approx(0.0)
    expected = np.mean([1 / (i + 1) for i in range(1, t)])
    assert previous_token_score(causal_uniform(t)) == pytest.approx(expected)
    both = previous_token_score(np.stack([shift, np.eye(t)]))
    np.testing.assert_allclose(both, [1.0, 0.0])


def test_prefix_matching_score_of_hand_built_patterns():
    tokens = np.array([5, 1, 2, 3, 9, 1, 2, 3])  # "1 2 3" repeats at 5
    targets = prefix_targets(tokens)
    # query 5 (token 1) -> key 2 (after the earlier 1), 6 -> 3, 7 -> 4
    assert {tuple(ij) for ij in np.argwhere(targets)} == {(5, 2), (6, 3), (7, 4)}
    induction = np.zeros((8, 8))
    induction[np.arange(8), np.arange(8)] = 1.0  # elsewhere: attend to itself
    induction[[5, 6, 7]] = 0.0
    induction[[5, 6, 7], [2, 3, 4]] = 1.0
    assert prefix_matching_score(induction, tokens) == pytest.approx(1.0)
    shift = np.eye(8, k=-1)
    shift[0, 0] = 1.0
    assert prefix_matching_score(shift, tokens) == pytest.approx(0.0)
    assert previous_token_score(induction) == pytest.approx(0.0)
    half = 0.5 * induction + 0.5 * shift
    assert prefix_matching_score(half, tokens) == pytest.approx(0.5)
    uniform = prefix_matching_score(causal_uniform(8), tokens)
    assert uniform == pytest.approx(np.mean([1 / 6, 1 / 7, 1 / 8]))


def test_prefix_matching_counts_every_earlier_occurrence():
    tokens = np.array([4, 0, 4, 1, 4])
    targets = prefix_targets(tokens)
    assert targets[4].tolist() == [False, True, False, True, False]
    assert targets[2].tolist() == [False, True, False, False, False]


def test_prefix_matching_needs_a_repeated_token():
    with pytest.raises(ValueError, match="no token repeats"):
        prefix_matching_score(np.eye(3), [0, 1, 2])


def test_heads_are_identified_by_score_not_index():
    previous = np.array([[0.1, 0.2], [0.05, 0.0], [0.9, 0.1]])
    prefix = np.array([[0.0, 0.1], [0.2, 0.1], [0.1, 0.3]])
    roles = identify_heads(previous, prefix)
    assert roles.previous_token == (2, 0) and roles.induction == (2, 1)
    assert not roles.formed  # an induction head must read a previous-token head's output
    roles = identify_heads(np.array([[0.1, 0.8], [0.1, 0.2]]),
                           np.array([[0.0, 0.1], [0.7, 0.1]]))
    assert roles.previous_token == (0, 1) and roles.induction == (1, 0) and roles.formed
    weak = identify_heads(np.array([[0.1, 0.4], [0.1, 0.2]]), np.array([[0.0, 0.1], [0.7, 0.1]]))
    assert not weak.formed and weak.previous_token_score == pytest.approx(0.4)


# ------------------------------------------------------------------------------ phase change


def test_a_sudden_drop_is_found_where_it_happens():
    steps = np.arange(600)
    rng = np.random.default_rng(0)
    losses = 2.7 - 2.0 / (1 + np.exp(-(steps - 300) / 8.0)) + 0.1 * rng.standard_normal(600)
    phase = detect_phase_change(losses)
    assert phase is not None
    assert 290 <= phase.step <= 312
    assert phase.start < phase.step < phase.end and phase.end - phase.start < 150
    assert phase.before > 2.3 and phase.after < 1.2


def test_a_flat_or_steadily_falling_curve_has_no_phase_change():
    rng = np.random.default_rng(1)
    assert detect_phase_change(2.7 + 0.1 * rng.standard_normal(500)) is None
    assert detect_phase_change(np.linspace(2.7, 1.5, 500)) is None
    assert detect_phase_change(np.ones(50)) is None  # too short to tell
    # a diverging run (learning rate too high) that falls back from its peak is no phase change
    diverging = np.concatenate([np.full(100, 2.7), np.full(100, 3e4), np.full(100, 6e3)])
    assert detect_phase_change(diverging) is None


# ------------------------------------------------------------------------------ training


def test_training_from_the_defaults_forms_both_heads_for_three_seeds():
    for seed in (0, 1, 2):
        run = train_induction(dataclasses.replace(DEFAULTS, seed=seed))
        roles = run.roles
        assert roles.formed, (seed, roles)
        assert roles.previous_token_score >= PREVIOUS_TOKEN_THRESHOLD
        assert roles.induction_score >= INDUCTION_THRESHOLD
        assert roles.previous_token[0] == 0 and roles.induction[0] == 1
        # the loss on the repeat falls from chance (ln 16 = 2.77) and the fall is abrupt
        assert run.eval_loss[0] > 2.5 and run.eval_loss[-1] < 1.5
        assert len(run.frames) == MAX_FRAMES and run.nbytes() < 1_100_000  # ~1.04 MB a run
        assert run.phase_change is not None
        assert 60 < run.phase_change.step < 250
        # before training no head has either role
        first = run.roles_at(0)
        assert first.previous_token_score < 0.3 and first.induction_score < 0.3
        # the induction head copies: its OV circuit has mostly positive eigenvalues
        assert run.copying[-1][roles.induction] > 0.5
        # ablating the induction head brings the loss on the repeat back up (part of the way:
        # the other layer-1 head also matches prefixes); the whole layer, back to chance
        trained = induction_loss(run.params, run.settings)
        keep = np.ones((2, 2), bool)
        keep[roles.induction] = False
        assert induction_loss(run.params, run.settings, keep) > trained + 0.15
        keep[1] = False
        assert induction_loss(run.params, run.settings, keep) > 2.5


def test_the_fixed_place_shortcut_needs_no_previous_token_head():
    settings = dataclasses.replace(DEFAULTS, fixed_place=True, steps=150)
    run = train_induction(settings)
    assert run.eval_loss[-1] < 0.1
    assert run.previous_token[-1].max() < 0.3
    assert not run.roles.formed
    # on its own held-out sequence a layer-2 head looks like an induction head (it attends
    # by position to the token after the earlier occurrence) ...
    assert run.prefix_matching[-1][1].max() > 0.5
    # ... but on a repeat at another place it finds nothing, and the task loss stays high
    varying = heldout_forward(run.params, DEFAULTS)
    tokens = varying.tokens[0]
    assert prefix_matching_score(varying.weights[:, 0], tokens).max() < 0.3
    assert induction_loss(run.params, DEFAULTS) > 2.0


def test_one_layer_cannot_form_the_circuit():
    run = train_induction(dataclasses.replace(DEFAULTS, n_layers=1, steps=150))
    assert not run.roles.formed
    assert run.eval_loss[-1] > 1.5


def test_chunks_do_not_change_the_run():
    settings = dataclasses.replace(DEFAULTS, steps=24, batch=4)
    whole = train_induction(settings, chunk=24)
    pieces = train_induction(settings, chunk=5)
    for name in whole.params:
        np.testing.assert_array_equal(whole.params[name], pieces.params[name])
    np.testing.assert_array_equal(whole.losses, pieces.losses)
    np.testing.assert_array_equal(whole.frames, pieces.frames)
    np.testing.assert_array_equal(whole.weights, pieces.weights)


def test_should_stop_ends_the_run_between_chunks_and_progress_is_reported():
    settings = dataclasses.replace(DEFAULTS, steps=100, batch=4)
    calls, seen = [], []
    run = train_induction(settings, chunk=10, should_stop=lambda: len(calls) >= 3,
                          progress=lambda step, loss: calls.append(step) or seen.append(loss))
    assert calls == [10, 20, 30]
    assert len(run.losses) == 30 and run.frames[-1] == 30
    assert run.stopped == "stopped after 30 of 100 steps"
    assert np.isfinite(seen).all()
    # the chunk API: a state continues where it stopped
    state = train_steps(start_training(settings), 30)
    assert state.step == 30 and not state.done
    np.testing.assert_array_equal(finish_training(state).params["embed"], run.params["embed"])


def test_scores_that_overflow_end_the_run_with_the_kernels_sentence():
    """The model attends through the core's kernel, which refuses scores beyond the float range:
    the run stops at that step with its sentence and keeps the last parameters, as for a
    loss that is no longer finite."""
    settings = dataclasses.replace(DEFAULTS, steps=20, batch=4)
    state = start_training(settings)
    huge = state.params.replace(dict(state.params) | {"0.w_q": state.params["0.w_q"] * 1e200,
                                                      "0.w_k": state.params["0.w_k"] * 1e200})
    state = dataclasses.replace(state, params=huge)
    stopped = train_steps(state, 5)
    assert stopped.step == 0 and stopped.stopped.startswith("step 1: the attention scores overflow")
    assert stopped.params is huge


def test_recorded_frames_and_memory_are_bounded():
    run = train_induction(dataclasses.replace(DEFAULTS, steps=60, batch=4))
    t = DEFAULTS.n_tokens
    assert run.frames[0] == 0 and run.frames[-1] == 60 and len(run.frames) <= MAX_FRAMES
    assert run.weights.shape == (len(run.frames), 2, 2, t, t)
    assert run.position_loss.shape == (len(run.frames), t - 1)
    np.testing.assert_allclose(run.weights.sum(-1), 1.0, atol=1e-12)
    # the largest model allowed still records at most FRAME_CELLS weights
    big = InductionSettings(n_layers=3, n_heads=4, n_tokens=64, max_segment=32, vocab_size=64,
                            steps=3000)
    every = frame_interval(big)
    n_frames = -(-big.steps // every) + 1
    assert n_frames * 3 * 4 * 64 * 64 <= FRAME_CELLS + 3 * 4 * 64 * 64
    # the defaults: 51 frames, under 1 MB
    assert frame_interval(DEFAULTS) == 6


# ------------------------------------------------------------------------------ settings


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_layers": 4}, "n_layers must be between 1 and 3, got 4"),
    ({"steps": 0}, "steps must be between 1 and 3,000, got 0"),
    ({"batch": 2.5}, "batch must be a whole number"),
    ({"lr": 0.0}, "the learning rate must be a number above 0 and at most 1"),
    ({"lr": float("nan")}, "the learning rate must be"),
    ({"min_segment": 9}, r"min_segment \(9\) must be at most max_segment \(8\)"),
    ({"n_tokens": 12}, r"two copies of the longest segment \(2 × 8\) must fit in n_tokens"),
    ({"positional": "xpos"}, "positional must be one of learned, sinusoidal, rope, alibi, none"),
    ({"positional": "rope", "d_head": 5}, "d_head must be even"),
    ({"fixed_place": "yes"}, "fixed_place must be True or False"),
])
def test_settings_out_of_range_are_refused_in_words(kwargs, message):
    with pytest.raises(ValueError, match=message):
        InductionSettings(**kwargs)
