"""Training (attnviz.scenarios.learn): it learns the previous-token pattern for every seed tried,
stops with a message and finite weights when the learning rate diverges, is deterministic,
and cannot change where a head looks by training W_V alone."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.scenarios.budget import Budget
from attnviz.scenarios.gradients import Loss, gradients, previous_token_pattern
from attnviz.scenarios.learn import (
    MAX_FRAMES,
    MAX_STEPS,
    Training,
    copy_previous_target,
    train,
)
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario

# The stated threshold (the Learn page says it): the default scenario with positional
# encoding on learns "attend to the previous token" to a loss below 0.3 in 200 Adam steps.
THRESHOLD, STEPS = 0.3, 200


def default_with_positions():
    return replace(PRESETS["seed_000"].build(), use_pe=True)


def previous(sc) -> Loss:
    return Loss("pattern_ce", previous_token_pattern(sc.t, sc.t))


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3, 4, 5, 6, 7])
def test_the_previous_token_pattern_is_learned_for_every_seed(seed):
    sc = default_with_positions()
    run = train(sc, previous(sc), steps=STEPS, seed=seed, lr=0.05)
    assert run.stopped == ""
    assert run.losses[-1] < THRESHOLD < run.losses[0]
    w = run.weights[-1]
    assert (w.argmax(axis=1) == [0, 0, 1, 2]).all()  # every query looks at its predecessor


def test_the_record_is_consistent_with_the_final_scenario():
    sc = default_with_positions()
    run = train(sc, previous(sc), steps=120, optimizer="sgd", lr=0.3)
    assert run.losses.shape == (121,)
    assert run.frames[0] == 0 and run.frames[-1] == 120 and len(run.frames) <= MAX_FRAMES
    np.testing.assert_array_equal(run.params["w_q"][-1], run.final.w_q)
    np.testing.assert_allclose(run.weights[-1], run_scenario(run.final).attention.weights)
    assert gradients(run.final, previous(sc)).loss == run.losses[-1]
    np.testing.assert_array_equal(run.final.w_v, sc.w_v)  # untrained fields stay


def test_training_is_deterministic_for_a_seed():
    sc = default_with_positions()
    a = train(sc, previous(sc), steps=50, seed=3)
    b = train(sc, previous(sc), steps=50, seed=3)
    np.testing.assert_array_equal(a.losses, b.losses)
    np.testing.assert_array_equal(a.final.w_k, b.final.w_k)
    assert not np.array_equal(a.losses, train(sc, previous(sc), steps=50, seed=4).losses)


def test_a_diverging_learning_rate_stops_with_a_message_and_finite_weights():
    sc = default_with_positions()
    run = train(sc, Loss("output_mse", np.full((4, 3), 5.0)), optimizer="sgd", lr=1e6,
                steps=100, trainable=("w_q", "w_k", "w_v"))
    assert run.stopped.startswith("step ")
    assert len(run.losses) < 101
    assert all(np.isfinite(a).all() for a in (run.losses, run.weights, run.final.w_v))


def test_training_w_v_alone_cannot_change_where_the_head_looks():
    sc = PRESETS["seed_000"].build()
    run = train(sc, previous(sc), trainable=("w_v",), steps=30)
    assert (run.losses == run.losses[0]).all()
    assert (run.weights == run.weights[0]).all()
    out = train(sc, Loss("output_mse", copy_previous_target(sc)), trainable=("w_v",), steps=30)
    assert out.losses[-1] < out.losses[0]  # W_V does learn the values
    assert (out.weights == out.weights[0]).all()  # ... but not where to look


def test_the_copy_previous_task_is_learned():
    sc = default_with_positions()
    target = copy_previous_target(sc)
    np.testing.assert_array_equal(target[2], run_scenario(sc).attention.v[1])
    run = train(sc, Loss("output_mse", target), steps=200, lr=0.05)
    assert run.losses[-1] < 0.1 * run.losses[0]


def test_settings_out_of_range_are_refused_in_words():
    sc = PRESETS["seed_000"].build()
    loss = previous(sc)
    for kw, message in [(dict(steps=MAX_STEPS + 1), "steps must be"),
                        (dict(steps=0), "steps must be"), (dict(lr=0.0), "learning rate"),
                        (dict(lr=float("nan")), "learning rate"),
                        (dict(optimizer="lbfgs"), "optimizer"),
                        (dict(trainable=("bias",)), "train one or more"),
                        (dict(trainable=("w_o",)), "does not read w_o")]:
        with pytest.raises(ValueError, match=message):
            train(sc, loss, **kw)


def test_the_same_word_earlier_pattern_is_learned_on_the_pattern_preset():
    from attnviz.scenarios.gradients import target_pattern
    sc = PRESETS["pattern_same_word"].build()
    target = target_pattern("same_word", np.ones((sc.t, sc.t), bool), sc.tokens)
    first_the = sc.tokens.index("the")
    second_the = sc.tokens.index("the", first_the + 1)
    assert target[second_the, first_the] == 1 and target[first_the, first_the] == 1
    run = train(sc, Loss("pattern_ce", target), steps=200, lr=0.05, trainable=("w_q", "w_k"))
    assert run.losses[-1] < 0.5 * run.losses[0]


def test_long_inputs_record_fewer_frames():
    from attnviz.scenarios import learn
    sc = default_with_positions()
    run = train(sc, previous(sc), steps=100)
    assert len(run.frames) == 51
    small = replace(sc, tokens=tuple(f"t{i}" for i in range(90)),
                    x=np.random.default_rng(0).normal(size=(90, 3)))
    run = train(small, Loss("pattern_ce", previous_token_pattern(90, 90)), steps=100)
    assert len(run.frames) <= max(2, learn.FRAME_CELLS // (90 * 90)) + 1
    assert run.weights.size <= learn.FRAME_CELLS + 2 * 90 * 90


def test_a_run_kept_in_a_session_holds_its_frames_once():
    """A paused Training lives in the session beside its result: the result is read again on
    every rerun without a copy, and the record shares the result's arrays."""
    sc = default_with_positions()
    training = Training(sc, previous(sc), steps=100)
    budget = Budget(60.0)
    training.run(budget, lambda step, value: step == 30 and budget.stop())
    run = training.result()
    assert run.paused == "stop" and len(run.losses) == 31
    assert training.result() is run  # nothing changed: the same object
    assert all(np.shares_memory(w, run.weights) for w in training._weights)
    assert all(np.shares_memory(p["w_q"], run.params["w_q"]) for p in training._params)
    training.run()
    whole = training.result()
    assert whole is not run and whole.paused == ""
    np.testing.assert_array_equal(whole.losses, train(sc, previous(sc), steps=100).losses)
