"""The compute budget of one click (attnviz.scenarios.budget) with an injected clock: it stops
the work when the time is up or when asked, yields the CPU once per slice, projects how many
units fit, and refuses bad settings; a Training run in pieces under budgets gives the numbers
of one uninterrupted run."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.scenarios import limits
from attnviz.scenarios.budget import BUDGET, STOP, Budget, click_budget
from attnviz.scenarios.gradients import Loss, previous_token_pattern
from attnviz.scenarios.learn import Training, train
from attnviz.scenarios.presets import PRESETS


class FakeClock:
    """A clock that moves only when told (or by ``tick`` on every read)."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now, self.tick, self.slept = 100.0, tick, []

    def __call__(self) -> float:
        self.now += self.tick
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def budget(seconds=1.0, tick=0.0, **kw):
    clock = FakeClock(tick)
    return Budget(seconds, clock=clock, sleep=clock.sleep, **kw), clock


def test_the_work_stops_when_the_next_unit_would_not_end_in_time():
    b, clock = budget(1.0)
    b.start()
    units = 0
    while b.check():
        units += 1
        clock.now += 0.3  # each unit takes 0.3 s
    assert units == 3  # started at 0, 0.3, 0.6; one more from 0.9 would end at 1.2
    assert b.reason == BUDGET and not b.exhausted and b.units == 3
    assert b.elapsed == pytest.approx(0.9) and b.remaining == pytest.approx(0.1)


def test_a_unit_that_just_fits_may_start():
    b, clock = budget(1.0)
    b.start()
    for _ in range(4):  # 0.25 s units: the fourth ends exactly at the budget
        assert b.check()
        clock.now += 0.25
    assert not b.check() and b.reason == BUDGET
    assert b.exhausted and b.remaining == 0.0


def test_the_pace_is_the_mean_of_the_units_so_far():
    b, clock = budget(10.0)
    b.start()
    for cost in (1.0, 5.0):  # mean 3 s a unit after these two
        assert b.check()
        clock.now += cost
    assert b.check()  # at 6 s: 6 + 3 <= 10
    clock.now += 2.5
    assert not b.check()  # at 8.5 s, 8.5 / 3 s a unit: it would end at 11.3 s
    assert b.units == 3


def test_the_first_unit_always_runs_so_every_click_makes_progress():
    b, clock = budget(1.0)
    b.start()
    clock.now += 5.0  # the set-up alone took longer than the budget
    assert b.check() and b.units == 1
    clock.now += 0.1
    assert not b.check() and b.reason == BUDGET
def test_stop_ends_the_work_at_the_next_check_with_its_reason():
    b, _ = budget(60.0)
    assert b.check()  # check() starts a budget that was not started
    b.stop()
    assert not b.check() and b.reason == STOP
    b.start()  # a restart forgets the stop
    assert b.check() and b.reason == ""


def test_before_start_nothing_has_elapsed():
    b, clock = budget(2.0)
    clock.now += 50
    assert not b.started and b.elapsed == 0.0 and b.remaining == 2.0 and not b.exhausted


def test_the_cpu_is_handed_over_once_per_slice_of_work():
    b, clock = budget(10.0, slice_seconds=0.05, pause=0.002)
    b.start()
    for _ in range(100):  # 100 units of 0.01 s: 1 s of work, 20 slices
        assert b.check()
        clock.now += 0.01
    assert b.yields == len(clock.slept) == 19  # the first check is at 0 s: no slice run yet
    assert set(clock.slept) == {0.002}


def test_slice_zero_yields_before_every_unit():
    b, clock = budget(10.0, slice_seconds=0.0)
    b.start()
    for _ in range(5):
        b.check()
        clock.now += 0.01
    assert clock.slept == [0.0] * 5  # time.sleep(0): other threads run, no time lost


def test_projected_units_at_the_pace_so_far():
    b, clock = budget(10.0)
    b.start()
    assert b.projected(0, 1000) == 1000  # nothing run yet: nothing known
    clock.now += 2.0
    assert b.projected(50, 1000) == 250  # 25 units a second for 10 s
    assert b.projected(50, 120) == 120  # they all fit


@pytest.mark.parametrize("field, value", [("seconds", 0), ("seconds", -1.0),
                                          ("seconds", float("nan")), ("seconds", float("inf")),
                                          ("seconds", "10"), ("seconds", True),
                                          ("slice_seconds", -0.1), ("pause", float("nan"))])
def test_bad_settings_are_refused_in_a_sentence_naming_the_field(field, value):
    kw = {"seconds": 1.0, field: value}
    with pytest.raises(ValueError, match=f"budget's {field} must be a number"):
        Budget(**kw)


def test_the_click_budget_is_the_named_limit_and_started(monkeypatch):
    b = click_budget()
    assert b.started and b.seconds == limits.TRAIN_SECONDS
    assert b.slice_seconds == limits.YIELD_EVERY_SECONDS and b.pause == limits.YIELD_PAUSE_SECONDS
    monkeypatch.setattr(limits, "TRAIN_SECONDS", 2.5)
    assert click_budget().seconds == 2.5 and click_budget(0.5).seconds == 0.5


def test_the_stated_budget_answers_within_a_few_seconds():
    assert 0 < limits.TRAIN_SECONDS <= 10  # the README and the page state it


# ------------------------------------------------------------ training under a budget

def small():
    sc = replace(PRESETS["seed_000"].build(), use_pe=True)
    return sc, Loss("pattern_ce", previous_token_pattern(sc.t, sc.t))


def test_training_in_pieces_gives_the_numbers_of_one_run():
    sc, loss = small()
    whole = train(sc, loss, steps=120, lr=0.05)
    training = Training(sc, loss, steps=120, lr=0.05)
    pieces = 0
    while not training.done:
        b, clock = budget(1.0)
        b.start()
        training.run(b, lambda step, value, clock=clock: setattr(clock, "now", clock.now + 0.125))
        pieces += 1
        part = training.result()
        assert part.paused == ("" if training.done else BUDGET) and part.stopped == ""
        assert part.frames[-1] == training.step == len(part.losses) - 1  # last step recorded
    assert pieces == 15  # 8 steps of 0.125 s fit in each 1 s budget
    run = training.result()
    np.testing.assert_array_equal(run.losses, whole.losses)
    np.testing.assert_array_equal(run.frames, whole.frames)
    np.testing.assert_array_equal(run.weights, whole.weights)
    np.testing.assert_array_equal(run.final.w_q, whole.final.w_q)
    assert run.paused == "" and run.steps == 120


def test_a_stopped_budget_pauses_the_run_and_keeps_the_steps_taken():
    sc, loss = small()
    b, _ = budget(60.0)
    b.start()

    def progress(step, value):
        if step == 7:
            b.stop()

    run = train(sc, loss, steps=200, budget=b, progress=progress)
    assert run.paused == STOP and len(run.losses) == 8 and run.frames[-1] == 7
    np.testing.assert_array_equal(run.losses, train(sc, loss, steps=200).losses[:8])


def test_an_exception_in_progress_leaves_a_run_that_reads_and_goes_on():
    """A page left mid-run: Streamlit raises inside the progress callback."""
    sc, loss = small()
    training = Training(sc, loss, steps=50)

    def leave(step, value):
        if step == 5:
            raise KeyboardInterrupt  # stands for Streamlit's rerun exception (BaseException)

    with pytest.raises(KeyboardInterrupt):
        training.run(progress=leave)
    part = training.result()
    assert part.paused == STOP and len(part.losses) == 6 and part.frames[-1] == 5
    training.run()
    np.testing.assert_array_equal(training.result().losses, train(sc, loss, steps=50).losses)


def test_a_diverging_run_is_done_not_paused():
    sc, loss = small()
    b, _ = budget(60.0)
    run = train(sc, loss, optimizer="sgd", lr=1e30, steps=100, budget=b.start())
    assert run.stopped and run.paused == ""
