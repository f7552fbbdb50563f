"""The backward pass in formulas: the LaTeX of each step for the current settings, and one
gradient dS̃_ij written out with its numbers (the Gradients page).

The symbols are those of the forward formulas: S the raw scores QKᵀ, S̃ the softmax's input
(scaled, biased, capped, masked), P the weights, O the output; dX is ∂L/∂X.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.core.score_mods import QKScoreMod, ScoreMod, split_scale
from attnviz.scenarios.variant import Variant

LOSS_FORMULAS = {
    "output_mse": r"L = \tfrac12\,\lVert O - T\rVert^2,\qquad dO = O - T",
    "pattern_ce": r"L = -\tfrac{1}{n_h}\sum_h\sum_{ij} T_{ij}\log P^{h}_{ij},\qquad "
                  r"\partial L/\partial P^{h}_{ij} = -\frac{T_{ij}}{n_h\,P^{h}_{ij}}",
    "given": r"L = \textstyle\sum O \circ dO,\qquad dO \text{ as given}",
}


@dataclass(frozen=True)
class Settings:
    """What changes the backward formulas.

    Attributes
    ----------
    mods : tuple of ScoreMod
        The changes of the scores as the forward result recorded them, in order: the scale
        (scale / τ) first, then a bias, a cap, a variant's own; each writes its factor of dS.
    w_o : bool
        The output goes through W_O (multi-head results).
    shared_kv : bool
        Query heads share key/value heads (GQA/MQA): dK and dV sum over each group.
    additive : bool
        Additive (Bahdanau) scores instead of QKᵀ.
    loss : str
        A key of :data:`LOSS_FORMULAS`.
    """

    mods: tuple[ScoreMod, ...] = ()
    w_o: bool = False
    shared_kv: bool = False
    additive: bool = False
    loss: str = "output_mse"


def settings_of(spec: Variant, result, *, shared_kv: bool, loss: str) -> Settings:
    """The :class:`Settings` of a run of the variant ``spec``: the score modifiers (the scale
    first) and W_O as the forward ``result`` recorded them."""
    return Settings(mods=tuple(getattr(result, "score_mods", ())),
                    w_o=getattr(result, "w_o", None) is not None, shared_kv=shared_kv,
                    additive=not spec.projections, loss=loss)


def formulas(s: Settings) -> dict[str, str]:
    """The LaTeX of each backward step, keyed like the gradients: loss, d_w_o, d_v, d_weights,
    d_scaled, d_scores, d_q, d_k, params."""
    scale, rest = split_scale(s.mods)
    out = {"loss": LOSS_FORMULAS[s.loss]}
    head_o = r"dO_h = (dO\,W_O^\top)_{[:,\,h]}" if s.w_o else ""
    out["d_w_o"] = r"dW_O = \mathrm{Concat}^\top dO" if s.w_o else ""
    loss_p = r" + \frac{\partial L}{\partial P}" if s.loss == "pattern_ce" else ""
    o = "dO_h" if s.w_o else "dO"
    out["d_weights"] = (head_o + r",\quad " if head_o else "") + rf"dP = {o}\,V^\top{loss_p}"
    out["d_scaled"] = r"d\tilde S = P \circ \left(dP - \mathrm{rowsum}(P \circ dP)\right)"
    if s.additive:
        out["d_scores"] = (r"de = d\tilde S,\quad dF_{ij} = de_{ij}\,v_a,\quad "
                           r"dv_a = \sum_{ij} de_{ij}\,F_{ij}")
        out["d_q"] = r"dq_i = \sum_j \left(dF_{ij} \circ (1 - F_{ij}^2)\right) W_q^\top"
        out["d_k"] = r"dk_j = \sum_i \left(dF_{ij} \circ (1 - F_{ij}^2)\right) W_k^\top"
        out["d_v"] = rf"dV = P^\top {o}"
        out["params"] = (r"dW_q = X^\top \sum_j dH_{ij},\quad dW_k = X_s^\top \sum_i dH_{ij},"
                         r"\quad dH_{ij} = dF_{ij} \circ (1 - F_{ij}^2)")
        return out
    through = "".join(mod.written_derivative(r"\tilde S") for mod in reversed(rest))
    out["d_scores"] = rf"dS = {through}d\tilde S \cdot {scale.written_derivative('S')}"
    out["d_q"] = r"dQ = dS\,K"
    group = r"\sum_{h \in g}" if s.shared_kv else ""
    out["d_k"] = rf"dK_g = {group} dS_h^\top Q_h" if s.shared_kv else r"dK = dS^\top Q"
    out["d_v"] = rf"dV_g = {group} P_h^\top dO_h" if s.shared_kv else rf"dV = P^\top {o}"
    for mod in rest:  # terms a change of the scores computed from q and k send back to them
        if isinstance(mod, QKScoreMod):
            d_q, d_k = mod.written_qk_backward()
            out["d_q"], out["d_k"] = out["d_q"] + d_q, out["d_k"] + d_k
    out["params"] = (r"dW_Q = X^\top dQ,\quad dW_K = X^\top dK,\quad dW_V = X^\top dV,\quad "
                     r"dX = dQ\,W_Q^\top + dK\,W_K^\top + dV\,W_V^\top")
    return out


@dataclass(frozen=True)
class CellGradient:
    """One dS̃_ij with the numbers that make it.

    Attributes
    ----------
    p : float
        P_ij.
    dp : float
        dP_ij.
    row_sum : float
        Σ_k P_ik dP_ik.
    value : float
        dS̃_ij = P_ij (dP_ij − Σ_k P_ik dP_ik), as the backward pass computed it.
    masked : bool
        P_ij is 0 (a masked key): dS̃_ij is exactly 0.
    """

    p: float
    dp: float
    row_sum: float
    value: float
    masked: bool


def cell_gradient(weights, d_weights, d_scaled, i: int, j: int) -> CellGradient:
    """dS̃_ij of one head (2-D arrays) with its parts; ``value`` is read from ``d_scaled``."""
    p_row, dp_row = np.asarray(weights)[i], np.asarray(d_weights)[i]
    return CellGradient(float(p_row[j]), float(dp_row[j]), float(np.dot(p_row, dp_row)),
                        float(np.asarray(d_scaled)[i, j]), bool(p_row[j] == 0))


def cell_latex(c: CellGradient) -> str:
    """dS̃_ij = P_ij (dP_ij − Σ_k P_ik dP_ik), then on a second line the numbers = value (two
    lines: one is too wide for a 1024-pixel screen)."""
    def n(x: float) -> str:
        return f"{x:.5g}".replace("e", r"\mathrm{e}")

    def par(x: float) -> str:
        return f"({n(x)})" if x < 0 else n(x)
    return (r"\begin{aligned} d\tilde S_{ij} &= P_{ij}\left(dP_{ij} - \sum_k P_{ik}\,dP_{ik}"
            rf"\right) \\ &= {n(c.p)} \times \left({n(c.dp)} - {par(c.row_sum)}\right) = "
            rf"{n(c.value)} \end{{aligned}}")
