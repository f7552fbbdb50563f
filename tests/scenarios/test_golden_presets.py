"""The numbers do not move: every preset's every matrix, forward and backward, under its own
variant and every other one it can switch to, has the same bits as when golden_presets.json
was written (tests/scenarios/golden.py; 312 scenarios, ~10,000 matrices)."""

import json

import pytest
from golden import GOLDEN, compute_all

EXPECTED = json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def current():
    return compute_all()


def test_the_same_scenarios_are_covered(current):
    # a new preset or variant adds scenarios (regenerate the file); none may disappear
    assert set(EXPECTED) <= set(current)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_every_matrix_is_bit_for_bit_unchanged(current, key):
    expected, got = EXPECTED[key], current[key]
    changed = {name: (digest, got.get(name)) for name, digest in expected.items()
               if got.get(name) != digest}
    assert not changed, f"{key}: {len(changed)} matrices changed, e.g. {list(changed)[:5]}"
