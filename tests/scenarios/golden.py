"""Every matrix of every preset, under every variant that can run it: the golden numbers.

``python tests/scenarios/golden.py`` writes ``golden_presets.npz`` beside this file (run it
only when a change of numbers is intended and explained); ``test_golden_presets.py`` checks
that the current code computes the same numbers, to the tolerance of :func:`difference`.
Covers the forward pass (every head's scores, scaled, masked, weights, output; the
concatenation and W_O; pooling; head mix; PE), the multi-head form (``heads=2``) and the
backward pass (½‖O‖² and the previous-token pattern): 368 scenarios, ~11,000 entries.

An entry is a matrix (float64), ``None`` (the scenario has no such matrix) or the text of the
``ValueError`` the scenario is refused with (its first 80 characters). The file holds one flat
float64 array ``values`` (every distinct matrix once) and ``index_json``, a JSON object
``{scenario: {name: [offset, shape] | null | "error text"}}`` in UTF-8 bytes.

Numbers and not hashes of their bits: BLAS kernels (OpenBLAS picks one per CPU) and numpy's
SIMD loops (AVX-512 or AVX2) round differently in the last bits, and no code here can keep the
same bits on every CPU; the same numbers to :data:`RTOL` of their matrix's scale it can keep.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden_presets.npz"
FORWARD = ("scores", "scaled", "masked", "weights", "output")

RTOL = 1e-12
"""Every number may move by RTOL of the largest finite number of its matrix (its scale: an
entry near zero in a sum of large terms holds only the terms' rounding)."""
ATOL = 1e-13
"""And by ATOL whatever the scale: a matrix that is zero in exact arithmetic (a gradient with
nothing to follow) is rounding noise through and through.

Measured over every entry here with OpenBLAS forced to its Haswell, Sandybridge, Nehalem and
Prescott kernels and numpy's AVX-512 loops off (``OPENBLAS_CORETYPE``,
``NPY_DISABLE_CPU_FEATURES``): matrices moved by at most 2.0e-14 of their scale, noise
matrices (scale below 1e-15) by at most 4.6e-16."""


def matrices(scenario) -> dict[str, np.ndarray | str | None]:
    """Every matrix of one scenario (forward, heads=2 form, backward), or the error text."""
    from attnviz.scenarios.gradients import Loss, gradients, previous_token_pattern
    from attnviz.scenarios.scenario import run_scenario

    def array(a):
        return None if a is None else np.array(a, dtype=np.float64)

    out: dict[str, np.ndarray | str | None] = {}
    try:
        res = run_scenario(scenario)
    except ValueError as exc:
        return {"error": str(exc)[:80]}
    att = res.attention
    out["x"], out["pe"] = array(res.x), array(res.pe)
    out["pooling"] = array(None if res.pooling is None else res.pooling.output)
    out["mixed"] = array(res.mixed)
    for h in range(att.n_heads):
        for name in FORWARD:
            out[f"h{h}.{name}"] = array(getattr(att.head(h), name))
    out["output"] = array(att.output)
    out["concat"] = array(getattr(att, "concat", None))
    if scenario.spec.heads and scenario.n_heads in (1, 2, 4) and not scenario.direct:
        try:
            mh = run_scenario(scenario, heads=2).attention
            out["heads2.output"] = array(mh.output)
            out["heads2.weights"] = array(mh.weights)
        except ValueError as exc:
            out["heads2"] = str(exc)[:80]
    if scenario.spec.backward is not None:
        for kind, target in (("output_mse", np.zeros(np.shape(att.output))),
                             ("pattern_ce", previous_token_pattern(
                                 *np.shape(att.head(0).weights)))):
            try:
                g = gradients(scenario, Loss(kind, target))
            except ValueError as exc:
                out[f"{kind}.error"] = str(exc)[:80]
                continue
            out[f"{kind}.loss"] = array(g.loss)
            for name in ("d_scaled", "d_scores", "d_q", "d_k", "d_v"):
                out[f"{kind}.{name}"] = array(getattr(g.attention, name, None))
            for name, arr in sorted(g.params.items()):
                out[f"{kind}.param.{name}"] = array(arr)
    return out


def compute_all() -> dict[str, dict[str, np.ndarray | str | None]]:
    """Every preset under its own variant, and under every other variant it can switch to."""
    from attnviz.scenarios.presets import PRESETS
    from attnviz.scenarios.registry import VARIANTS
    from attnviz.scenarios.scenario import with_variant

    table: dict[str, dict[str, np.ndarray | str | None]] = {}
    for key, preset in PRESETS.items():
        scenario = preset.build()
        table[key] = matrices(scenario)
        for vkey in VARIANTS:
            if vkey == scenario.variant:
                continue
            try:  # the other variant's own settings at their defaults
                switched = replace(with_variant(scenario, vkey), params={})
            except ValueError:
                continue
            table[f"{key}@{vkey}"] = matrices(switched)
    return table


def pack(table: dict[str, dict[str, np.ndarray | str | None]]) -> dict[str, np.ndarray]:
    """The file's two arrays: every distinct matrix once in ``values``, and the index."""
    chunks: list[np.ndarray] = []
    offsets: dict[tuple, int] = {}  # (shape, bytes) -> offset: a matrix many scenarios share
    size = 0
    index: dict[str, dict[str, object]] = {}
    for key in sorted(table):
        index[key] = {}
        for name in sorted(table[key]):
            value = table[key][name]
            if value is None or isinstance(value, str):
                index[key][name] = value
                continue
            flat = np.ascontiguousarray(value, dtype=np.float64).ravel()
            seen = (value.shape, flat.tobytes())
            if seen not in offsets:
                offsets[seen] = size
                chunks.append(flat)
                size += flat.size
            index[key][name] = [offsets[seen], list(value.shape)]
    text = json.dumps(index, sort_keys=True, separators=(",", ":"))
    return {"values": np.concatenate(chunks),
            "index_json": np.frombuffer(text.encode(), dtype=np.uint8)}


def load(path: Path = GOLDEN) -> dict[str, dict[str, np.ndarray | str | None]]:
    """The table :func:`pack` wrote to ``path``."""
    with np.load(path, allow_pickle=False) as z:
        values, index = z["values"], json.loads(z["index_json"].tobytes().decode())

    def entry(item):
        if item is None or isinstance(item, str):
            return item
        offset, shape = item
        return values[offset:offset + int(np.prod(shape, dtype=np.int64))].reshape(shape)

    return {key: {name: entry(item) for name, item in names.items()}
            for key, names in index.items()}


def difference(want, got) -> str | None:
    """None when ``got`` is ``want`` to the tolerance (see :data:`RTOL`), else a sentence
    naming the largest difference and where it is.

    Both None, or the same error text, are equal; non-finite numbers (−∞ of a mask, NaN) must
    sit in the same places with the same values; finite ones must satisfy
    ``|got − want| ≤ RTOL·max|want| + ATOL`` (the max over the matrix's finite entries)."""
    if want is None or isinstance(want, str) or got is None or isinstance(got, str):
        return None if (type(want) is type(got) and want == got) else \
            f"expected {_short(want)}, got {_short(got)}"
    if want.shape != got.shape:
        return f"shape {got.shape} instead of {want.shape}"
    finite = np.isfinite(want)
    if not np.array_equal(finite, np.isfinite(got)) or \
            not np.array_equal(want[~finite], got[~finite], equal_nan=True):
        return "has its non-finite entries (−∞, NaN) elsewhere or changed"
    if not finite.any():
        return None
    gap = np.abs(np.where(finite, got, 0.0) - np.where(finite, want, 0.0))
    scale = float(np.abs(want[finite]).max())
    if gap.max() <= RTOL * scale + ATOL:
        return None
    worst = np.unravel_index(np.argmax(gap), gap.shape)
    at = tuple(int(i) for i in worst)
    return (f"differs by up to {gap.max():.3g} (its largest entry is {scale:.3g}; at {at}: "
            f"{float(got[worst])!r} instead of {float(want[worst])!r})")


def _short(entry) -> str:
    if entry is None:
        return "no matrix"
    if isinstance(entry, str):
        return f"the error {entry!r}"
    return f"a matrix of shape {entry.shape}"


def write(path: Path = GOLDEN) -> int:
    """Compute every scenario and write the golden file (the same numbers, the same bytes);
    returns its size in bytes."""
    from attnviz.io.examples.make_induction_model import npz_bytes

    data = npz_bytes(pack(compute_all()))
    path.write_bytes(data)
    return len(data)


if __name__ == "__main__":
    size = write()
    print(f"wrote {GOLDEN} ({size:,} bytes)", file=sys.stderr)
