"""Weight initialisers for the projection matrices, drawn in a fixed order from a seed.

``"randint"`` reproduces the seed notebooks exactly: the legacy global stream
``np.random.seed(seed)`` followed by ``np.random.randint(3, size=shape)`` per shape.
The others use ``np.random.default_rng(seed)``. ``"glorot_uniform"`` is Glorot & Bengio
(2010): U(−limit, limit) with limit = sqrt(6 / (fan_in + fan_out)) (seed 003).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import MAX_ENTRIES, check_count, check_entries

INIT_KINDS = ("randint", "normal", "glorot_uniform", "identity", "zeros")


def _draw_randint(shapes: list[tuple[int, int]], seed: int) -> list[NDArray[np.float64]]:
    """The notebooks' legacy stream: ``np.random.seed(seed)`` then ``randint(3)`` per shape.

    A private ``RandomState(seed)`` draws the identical numbers without touching the caller's
    global random state.
    """
    legacy = np.random.RandomState(seed)  # noqa: NPY002 - the notebooks' legacy stream
    return [legacy.randint(3, size=s).astype(np.float64) for s in shapes]


def init_weights(kind: str, shapes: Sequence[tuple[int, int]], *,
                 seed: int = 0) -> list[NDArray[np.float64]]:
    """Draw one float64 matrix per shape, in order.

    Parameters
    ----------
    kind : {"randint", "normal", "glorot_uniform", "identity", "zeros"}
        ``"identity"`` gives ones on the main diagonal (np.eye) for any shape.
    shapes : sequence of (rows, cols)
    seed : int
        Same seed, same matrices; 0 <= seed < 2**32 (the legacy stream's range).

    Returns
    -------
    list of ndarray

    Raises
    ------
    ValueError
        An unknown kind, a shape that is not two whole numbers >= 1, more than
        :data:`~attnviz.core.checks.MAX_ENTRIES` (2**24) entries in one matrix or in all, or a
        seed outside 0 .. 2**32 − 1.
    """
    if not isinstance(kind, str) or kind not in INIT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(INIT_KINDS)}; got {kind!r}")
    if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Sequence):
        raise ValueError(f"shapes must be a list of (rows, cols) pairs, got {shapes!r:.80}")
    checked, total = [], 0
    for i, shape in enumerate(shapes):
        dims = tuple(shape) if isinstance(shape, (tuple, list, np.ndarray)) else ()
        if len(dims) != 2:
            raise ValueError(f"shapes[{i}] must be (rows, cols), got {shape!r}")
        checked.append(tuple(check_count(f"shapes[{i}] size", n) for n in dims))
        check_entries(f"shapes[{i}]", checked[-1])
        total += checked[-1][0] * checked[-1][1]
        if total > MAX_ENTRIES:
            raise ValueError(f"the shapes would hold {total:,} entries in all; at most "
                             f"{MAX_ENTRIES:,} (2**24) are allowed — use smaller sizes")
    seed = check_count("seed", seed, minimum=0)
    if seed > 2**32 - 1:
        raise ValueError(f"seed must be at most {2**32 - 1:,}, got {seed}")
    if kind == "randint":
        return _draw_randint(checked, seed)
    if kind == "identity":
        return [np.eye(*s) for s in checked]
    if kind == "zeros":
        return [np.zeros(s) for s in checked]
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return [rng.standard_normal(s) for s in checked]
    return [rng.uniform(-np.sqrt(6.0 / sum(s)), np.sqrt(6.0 / sum(s)), size=s) for s in checked]
