"""The backward formulas follow the settings, and one dS̃_ij is written with its numbers."""

from __future__ import annotations

import numpy as np

from attnviz.core.backward import softmax_backward
from attnviz.core.numerics import stable_softmax
from attnviz.core.score_mods import Scale, SoftCap
from attnviz.teach.backward import LOSS_FORMULAS, Settings, cell_gradient, cell_latex, formulas


def test_the_formulas_name_what_the_settings_turn_on():
    plain = formulas(Settings())
    assert r"\tau" not in plain["d_scores"] and "tanh" not in plain["d_scores"]
    assert plain["d_w_o"] == "" and r"\sum_{h" not in plain["d_k"]
    tempered = formulas(Settings(mods=(Scale(0.5, 0.5),)))["d_scores"]
    assert tempered == r"dS = d\tilde S \cdot \frac{\text{scale}}{\tau}"
    # the scale is the recorded modifiers' first; the cap after it writes its own factor
    capped = formulas(Settings(mods=(Scale(0.5, 0.5), SoftCap(2.0))))["d_scores"]
    assert capped == (r"dS = \left(1 - (\tilde S / 2)^2\right) \circ d\tilde S \cdot "
                      r"\frac{\text{scale}}{\tau}")
    assert "/ 2" in formulas(Settings(mods=(SoftCap(2.0),)))["d_scores"]
    heads = formulas(Settings(w_o=True, shared_kv=True))
    assert "W_O" in heads["d_w_o"] and r"\sum_{h \in g}" in heads["d_k"]
    assert "dO_h" in heads["d_weights"]
    assert r"\partial L" in formulas(Settings(loss="pattern_ce"))["d_weights"]
    assert "v_a" in formulas(Settings(additive=True))["d_scores"]
    for kind, latex in LOSS_FORMULAS.items():
        assert formulas(Settings(loss=kind))["loss"] == latex


def test_a_traced_cell_adds_up_to_the_backward_pass():
    rng = np.random.default_rng(0)
    p = stable_softmax(rng.normal(size=(3, 4)), axis=-1)
    dp = rng.normal(size=(3, 4))
    ds = softmax_backward(p, dp)
    c = cell_gradient(p, dp, ds, 1, 2)
    assert c.value == ds[1, 2] and not c.masked
    assert np.isclose(c.p * (c.dp - c.row_sum), c.value, rtol=1e-12)
    assert cell_latex(c).endswith(f"= {c.value:.5g} \\end{{aligned}}")
    p[1, 2] = 0
    assert cell_gradient(p, dp, softmax_backward(p, dp), 1, 2).masked


def test_the_backward_formulas_name_what_the_terms_send_to_q_and_k():
    """DeBERTa's relative terms add to dQ and dK what they send back (only the terms the
    step has)."""
    from attnviz.core import steps as S

    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(3, 4, 2))
    index = np.arange(4)[:, None] - np.arange(4)[None, :] + 3  # rows 0..6 of 7
    table = rng.normal(size=(7, 2))
    for p2c, d_q, d_k in ((True, True, True), (False, True, False)):
        step = S.Disentangled(table, table if p2c else (), index, index if p2c else (), 0.4)
        res = S.attend_steps([S.Scale(0.4), step], q[None], k[None], v[None])
        written = formulas(Settings(mods=res.score_mods))
        assert (r"K^r_{\delta_c(i,j)}" in written["d_q"]) == d_q, written["d_q"]
        assert (r"Q^r_{\delta_p(i,j)}" in written["d_k"]) == d_k, written["d_k"]
