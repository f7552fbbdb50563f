"""A compute budget for one click: wall time a long computation may take, checked between its
units of work (training steps), which also hands the CPU to other sessions now and then.

One server process runs every student's session in a thread of its own; a click that computes
for minutes holds a core (and the GIL) that the others wait for. A :class:`Budget` bounds one
click's share: the work loop asks :meth:`Budget.check` before each unit, and stops when it
answers False — the next unit would not end in time (at the pace of the units run so far; the
first unit always runs, so every click makes progress), or :meth:`Budget.stop` was called. A
click therefore ends *within* its budget, give or take how much one unit's time varies (under
a class's load one step at the editing limits takes seconds). Every ``slice_seconds`` of
work, ``check`` sleeps ``pause`` seconds (0 by default: ``time.sleep(0)`` releases the GIL, so
the other sessions' threads run between two units instead of waiting for the whole run).

No Streamlit here: the clock and the sleep are injectable, so the tests are deterministic::

    budget = Budget(10.0).start()
    while budget.check() and work_left():
        one_unit()
    budget.reason   # "budget" (no time for another unit), "stop" (stop()) or "" (not stopped)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

BUDGET = "budget"  # Budget.reason: the time ran out
STOP = "stop"  # Budget.reason: stop() was called


class Budget:
    """Wall time for one click's work, checked between units of work.

    Parameters
    ----------
    seconds : float
        The time the work may take from :meth:`start` (> 0).
    clock : callable() -> float, optional
        Seconds on a monotonic clock (default :func:`time.monotonic`).
    sleep : callable(float), optional
        Sleeps that many seconds (default :func:`time.sleep`).
    slice_seconds : float
        Work time between two yields of the CPU (>= 0; 0 yields before every unit).
    pause : float
        The yield: seconds slept after each slice (>= 0; 0 lets waiting threads run without
        slowing the work).
    """

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, slice_seconds: float = 0.05,
                 pause: float = 0.0) -> None:
        for name, value, low in (("seconds", seconds, "greater than 0"),
                                 ("slice_seconds", slice_seconds, "0 or more"),
                                 ("pause", pause, "0 or more")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and (value > 0 if name == "seconds" else value >= 0)):
                raise ValueError(f"the budget's {name} must be a number {low}, got {value!r}")
        self.seconds = float(seconds)
        self.slice_seconds = float(slice_seconds)
        self.pause = float(pause)
        self._clock, self._sleep = clock, sleep
        self._began: float | None = None
        self._last_yield = 0.0
        self._first_check: float | None = None  # when the first unit started
        self.units = 0  # units started since start()
        self._stop = False
        self.reason = ""
        self.yields = 0  # how many times check() handed the CPU over

    def start(self) -> Budget:
        """Start (or restart) the clock; returns the budget itself."""
        self._began = self._last_yield = self._clock()
        self._stop, self.reason = False, ""
        self._first_check, self.units = None, 0
        return self

    @property
    def started(self) -> bool:
        return self._began is not None

    @property
    def elapsed(self) -> float:
        """Seconds since :meth:`start` (0 before it)."""
        return 0.0 if self._began is None else self._clock() - self._began

    @property
    def remaining(self) -> float:
        """Seconds left (never below 0)."""
        return max(0.0, self.seconds - self.elapsed)

    @property
    def exhausted(self) -> bool:
        """The time is up."""
        return self.started and self.elapsed >= self.seconds

    def stop(self) -> None:
        """Ask the work to stop at its next :meth:`check` (e.g. a Stop button)."""
        self._stop = True

    def check(self) -> bool:
        """May the next unit of work start? False once it would not end in time — at the mean
        pace of the units started so far (the first unit may always start) — or once
        :meth:`stop` was called; then :attr:`reason` says which. Starts the budget if it was
        not started, and yields the CPU when a slice of work has run since the last yield."""
        if self._began is None:
            self.start()
        if self._stop:
            self.reason = STOP
            return False
        now = self._clock()
        if self._first_check is None:
            self._first_check = now
        elif now + (now - self._first_check) / self.units - self._began > self.seconds:
            self.reason = BUDGET
            return False
        if now - self._last_yield >= self.slice_seconds:
            self._sleep(self.pause)
            self.yields += 1
            self._last_yield = self._clock()
        self.units += 1
        return True

    def projected(self, done: int, wanted: int) -> int:
        """How many of ``wanted`` units will have run when the time is up, at the pace of the
        ``done`` units run since :meth:`start` (``wanted`` when they all fit; ``wanted`` too
        before any unit has run: nothing is known yet)."""
        elapsed = self.elapsed
        if done <= 0 or elapsed <= 0:
            return wanted
        return min(wanted, done + int(self.remaining * done / elapsed))


def click_budget(seconds: float | None = None) -> Budget:
    """A started budget for one click with the dashboard's settings
    (:data:`~attnviz.scenarios.limits.TRAIN_SECONDS` unless ``seconds`` is given, yielding
    every :data:`~attnviz.scenarios.limits.YIELD_EVERY_SECONDS`)."""
    from attnviz.scenarios import limits  # read at call time: one place to change them

    return Budget(limits.TRAIN_SECONDS if seconds is None else seconds,
                  slice_seconds=limits.YIELD_EVERY_SECONDS,
                  pause=limits.YIELD_PAUSE_SECONDS).start()
