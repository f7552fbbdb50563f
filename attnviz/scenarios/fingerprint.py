"""A content hash of a scenario (or any dataclass of arrays and settings), for caching results.

``Scenario`` is a frozen dataclass with ``eq=False`` holding numpy arrays, so it has no useful
``==`` or ``hash``; two scenarios with the same content must map to the same cached result and
any edit — a cell, a setting, a label, even an array changed in place — to a new one. The
fingerprint therefore hashes every field's *content*: for arrays their dtype, shape and bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np


def fingerprint(obj: Any) -> str:
    """A hex digest of a dataclass's fields (recursively), arrays by dtype, shape and bytes.

    Equal content gives equal digests; any difference in a field gives a different digest
    (up to BLAKE2b collisions).
    """
    h = hashlib.blake2b(digest_size=20)
    _feed(h, obj)
    return h.hexdigest()


def _feed(h, value: Any) -> None:
    """Add one value to the hash, tagged with its kind so that different kinds never collide."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"<dc {type(value).__qualname__}>".encode())
        for f in dataclasses.fields(value):
            h.update(f"{f.name}=".encode())
            _feed(h, getattr(value, f.name))
        h.update(b"</dc>")
    elif isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        h.update(f"<nd {a.dtype.str} {a.shape}>".encode())
        h.update(a.tobytes())  # a copy only for non-contiguous views
    elif isinstance(value, (tuple, list)):
        h.update(f"<{type(value).__name__} {len(value)}>".encode())
        for item in value:
            _feed(h, item)
    elif isinstance(value, Mapping):  # dicts and the scenario's read-only params
        h.update(f"<dict {len(value)}>".encode())
        for k in sorted(value, key=repr):
            _feed(h, k)
            _feed(h, value[k])
    else:  # str, int, float, bool, None, numpy scalars: repr is exact (floats round-trip)
        h.update(f"<{type(value).__name__} {value!r}>".encode())
