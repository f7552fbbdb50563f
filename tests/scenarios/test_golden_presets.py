"""The numbers do not move: every preset's every matrix, forward and backward, under its own
variant and every other one it can switch to, is the one golden_presets.npz holds (368
scenarios, ~11,000 matrices, losses and refusals; tests/scenarios/golden.py computes them).

Compared as numbers, not bits: every number within 1e-12 of its matrix's largest (``RTOL``)
plus 1e-13 (``ATOL``, for matrices that are rounding noise), every −∞ in its place, every
refusal's text the same. Other CPUs run other BLAS kernels and SIMD loops, which round the last
bits differently (measured: at most 2e-14 of a matrix's scale); a change of the maths moves far
more. A failure names the scenario, each matrix that moved and its largest difference.

To rewrite the file after an intended, explained change of numbers:
``python tests/scenarios/golden.py``.
"""

import pytest
from golden import GOLDEN, compute_all, difference, load

EXPECTED = load(GOLDEN)


@pytest.fixture(scope="module")
def current():
    return compute_all()


def test_the_same_scenarios_are_covered(current):
    # a new preset or variant adds scenarios (regenerate the file); none may disappear
    assert set(EXPECTED) <= set(current)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_every_matrix_is_unchanged(current, key):
    expected, got = EXPECTED[key], current.get(key, {})
    changed = {name: ("is gone" if name not in got else difference(want, got[name]))
               for name, want in expected.items()}
    changed = {name: why for name, why in changed.items() if why is not None}
    assert not changed, f"{key}: {len(changed)} of {len(expected)} entries changed: " + \
        "; ".join(f"{name} {why}" for name, why in sorted(changed.items()))
