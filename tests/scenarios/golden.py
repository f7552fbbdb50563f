"""Every matrix of every preset, under every variant that can run it, as SHA-256 digests.

``python tests/scenarios/golden.py`` writes ``golden_presets.json`` beside this file (run it
only when a change of numbers is intended and explained); ``test_golden_presets.py`` checks
that the current code computes the same bits. Covers the forward pass (every head's scores,
scaled, masked, weights, output; the concatenation and W_O; pooling; head mix; PE), the
multi-head form (``heads=2``) and the backward pass (½‖O‖² and the previous-token pattern).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden_presets.json"
FORWARD = ("scores", "scaled", "masked", "weights", "output")


def digest(a) -> str:
    """SHA-256 of the array's float64 bytes and shape (a None is "none")."""
    if a is None:
        return "none"
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    return hashlib.sha256(repr(a.shape).encode() + a.tobytes()).hexdigest()[:16]


def matrices(scenario) -> dict[str, str]:
    """Digests of every matrix of one scenario (forward, heads=2 form, backward)."""
    from attnviz.scenarios.gradients import Loss, gradients, previous_token_pattern
    from attnviz.scenarios.scenario import run_scenario

    out: dict[str, str] = {}
    try:
        res = run_scenario(scenario)
    except ValueError as exc:
        return {"error": str(exc)[:80]}
    att = res.attention
    out["x"], out["pe"] = digest(res.x), digest(res.pe)
    out["pooling"] = digest(None if res.pooling is None else res.pooling.output)
    out["mixed"] = digest(res.mixed)
    for h in range(att.n_heads):
        for name in FORWARD:
            out[f"h{h}.{name}"] = digest(getattr(att.head(h), name))
    out["output"] = digest(att.output)
    out["concat"] = digest(getattr(att, "concat", None))
    if scenario.spec.heads and scenario.n_heads in (1, 2, 4) and not scenario.direct:
        try:
            mh = run_scenario(scenario, heads=2).attention
            out["heads2.output"] = digest(mh.output)
            out["heads2.weights"] = digest(mh.weights)
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
            out[f"{kind}.loss"] = repr(g.loss)
            for name in ("d_scaled", "d_scores", "d_q", "d_k", "d_v"):
                out[f"{kind}.{name}"] = digest(getattr(g.attention, name, None))
            for name, arr in sorted(g.params.items()):
                out[f"{kind}.param.{name}"] = digest(arr)
    return out


def compute_all() -> dict[str, dict[str, str]]:
    """Every preset under its own variant, and under every other variant it can switch to."""
    from attnviz.scenarios.presets import PRESETS
    from attnviz.scenarios.registry import VARIANTS
    from attnviz.scenarios.scenario import with_variant

    table: dict[str, dict[str, str]] = {}
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


if __name__ == "__main__":
    table = compute_all()
    GOLDEN.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN} ({len(table)} scenarios)", file=sys.stderr)
