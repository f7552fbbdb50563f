"""Step by step writes how the query vector in the scores was made: ``q_i = x_i W_Q`` unless the
variant changes the projection first (RoPE rotates it, QK-norm normalises it), when the
variant's own ``query_formula`` is written instead (an opened RoPE head once showed its rotated
q beside "q_i = x_i W_Q"). Registry-driven: every variant's presets are checked."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import run_scenario, with_positions, with_variant

# every preset whose queries are projections (not Q given directly, not additive), and seed 000
# under every variant that projects
CASES = sorted({(s.variant, key) for key, s in ((k, p.build()) for k, p in PRESETS.items())
                if s.spec.projections and not s.direct}
               | {(variant, "seed_000") for variant, spec in VARIANTS.items()
                  if spec.projections and not spec.uses_source})


def projected_is_shown(scenario) -> bool:
    """True when the result's q is the plain projection x W_Q (per head when split)."""
    result = run_scenario(scenario)
    q = np.asarray(result.attention.q, dtype=float)
    x, _ = with_positions(np.asarray(scenario.x, dtype=float), scenario)
    plain = x @ scenario.w_q
    if q.ndim == 3:  # (heads, t, d_k): the projection split into heads
        plain = plain.reshape(plain.shape[0], q.shape[0], -1).transpose(1, 0, 2)
    return q.shape == plain.shape and np.allclose(q, plain, rtol=0, atol=1e-12)


def test_the_cases_cover_the_transforming_variants():
    keys = {key for key, _ in CASES}
    assert {"rope", "qk_norm", "scaled_dot_product"} <= keys


@pytest.mark.parametrize(("variant", "preset"), CASES)
def test_the_query_formula_is_written_exactly_when_q_is_not_the_projection(variant, preset):
    spec = VARIANTS[variant]
    scenario = with_variant(PRESETS[preset].build(), variant)
    assert bool(spec.written_query()) == (not projected_is_shown(scenario)), (
        f"{variant}: q {'is' if spec.query_formula else 'is not'} the projection x W_Q, "
        f"but query_formula is {spec.query_formula!r}")
