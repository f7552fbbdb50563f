"""A bounded store of values by key (the least recently used dropped first), shared by the
threads of one process (a Streamlit server runs each session's script in a thread of its own).

Used for what a rerun that changes only a dragged value would otherwise make again: the drag
sweeps (:mod:`attnviz.scenarios.sweep`) and the frames built from them
(:func:`attnviz.figures.heatmap.with_slider`). Keys are content fingerprints, so equal content
finds the same value whichever session made it; values must not be changed by their users.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class SharedLru:
    """The newest ``entries`` values by key (least recently used dropped first)."""

    def __init__(self, entries: int) -> None:
        self.entries, self.values, self.lock = entries, OrderedDict(), threading.Lock()

    def __len__(self) -> int:
        return len(self.values)

    def get(self, key: str):
        """The value kept under ``key`` (now the newest), or None."""
        with self.lock:
            if key in self.values:
                self.values.move_to_end(key)
            return self.values.get(key)

    def put(self, key: str, value):
        """Keep ``value`` under ``key``, dropping the oldest beyond ``entries``; returns it."""
        with self.lock:
            self.values[key] = value
            while len(self.values) > self.entries:
                self.values.popitem(last=False)
        return value

    def get_or_make(self, key: str, make: Callable[[], object]):
        """The value kept under ``key``, else ``make()`` kept there. ``make`` runs outside the
        lock: another session's value need not wait for this one."""
        value = self.get(key)
        return self.put(key, make()) if value is None else value
