"""How many threads numpy's BLAS (OpenBLAS) may use, set at run time.

The dashboard's matrices are small (at most 256 tokens × 128 columns), so a second BLAS thread
buys nothing, while a Streamlit server runs every session's script in its own thread: with
several students, or any other busy process, two-threaded BLAS calls wait on each other and on
the CPU. Measured here on 2 cores with other work running, computing the 256-token, 8-head
scenario took several times longer with OpenBLAS's default threads than with one (see
benchmarks/RESULTS.md). ``OPENBLAS_NUM_THREADS=1`` does the same, but only if it is set before
numpy is first imported; this works at any time.

Only OpenBLAS (numpy's own wheels, and scipy-openblas builds) is handled; with any other BLAS
the functions do nothing and say so.
"""

from __future__ import annotations

import ctypes
import re
from functools import lru_cache
from pathlib import Path

# Exported names of OpenBLAS's thread setter/getter in the builds numpy ships or links.
_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")


@lru_cache(maxsize=1)
def _openblas_libraries() -> tuple[ctypes.CDLL, ...]:
    """The OpenBLAS shared libraries loaded in this process (Linux: from /proc/self/maps)."""
    import numpy  # noqa: F401 — make sure numpy's BLAS is loaded

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return ()
    paths = sorted(set(re.findall(r"(/\S*openblas\S*\.so[\w.]*)", maps)))
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return tuple(libs)


def _first(lib: ctypes.CDLL, names) -> object | None:
    for name in names:
        fn = getattr(lib, name, None)
        if fn is not None:
            return fn
    return None


def set_blas_threads(n: int) -> bool:
    """Let OpenBLAS use at most ``n`` threads from now on; True if an OpenBLAS was found."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    done = False
    for lib in _openblas_libraries():
        setter = _first(lib, _SETTERS)
        if setter is not None:
            setter(ctypes.c_int(n))
            done = True
    return done


def blas_threads() -> int | None:
    """The number of threads OpenBLAS uses now (None when no OpenBLAS is loaded)."""
    for lib in _openblas_libraries():
        getter = _first(lib, _GETTERS)
        if getter is not None:
            getter.restype = ctypes.c_int
            return int(getter())
    return None
