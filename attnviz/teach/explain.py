"""How Step by step and Trace a cell write a row's arithmetic: one number formatter and one
formula table, with the same symbols on both pages.

Symbols (dot product / additive): q_i, k_j, s_ij / e_ij (score), scale, τ, s'_ij (scaled),
M_ij and s''_ij (masked), m_i (row maximum), e_ij / ε_ij (shifted exp), Z_i (row sum), α_ij
(weight), v_j, o_i / c_i (output row), o_i^(h), concat_i and W_O (multi-head).

The formulas follow the computation they describe (:func:`formulas_for` reads it from the
row): no √d_k when the scale is 1 or custom, no τ when the temperature is 1, no M when nothing
is masked — a formula never names a step that did not happen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnviz.core.explain import RowSteps
from attnviz.core.score_mods import ScoreMod

SCALE_KINDS = ("sqrt_dk", "none", "custom")


def number(x: float, digits: int = 4, style: str = "text") -> str:
    """A number as the explanation pages write it: ``digits`` significant digits.

    Parameters
    ----------
    x : float
    digits : int
    style : {"text", "table", "latex"}
        ``"text"``: written-out arithmetic (Unicode minus "−", "−∞", never "−0");
        ``"table"``: a table's text column, the same as its number columns' ``%.{digits}g``
        (ASCII minus) with "−∞" / "∞" for infinities; ``"latex"``: for ``st.latex``
        (``-\\infty``, ``1.5\\times 10^{-7}`` instead of ``1.5e-07``).
    """
    x = float(x)
    if style == "latex":
        if math.isinf(x):
            return r"-\infty" if x < 0 else r"\infty"
        if math.isnan(x):
            return r"\text{NaN}"
        text = f"{x:.{digits}g}"
        if "e" in text:
            mantissa, exponent = text.split("e")
            text = rf"{mantissa}\times 10^{{{int(exponent)}}}"
        return "0" if text == "-0" else text
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    text = f"{x:.{digits}g}"
    if style == "table":
        return text
    if text == "-0":
        return "0"
    return "NaN" if math.isnan(x) else text.replace("-", "−")


@dataclass(frozen=True)
class Settings:
    """What a row's computation did, as far as its formulas care.

    Attributes
    ----------
    kind : {"dot", "additive"}
    scale : {"sqrt_dk", "none", "custom"}
        1/√d_k, 1 (nothing to scale) or any other factor.
    tempered : bool
        The temperature is not 1.
    masked : bool
        The result masks at least one pair.
    multi_head : bool
    mods : tuple of ScoreMod
        The changes of the scores after the scale, in order (a bias, a cap, a variant's own:
        :mod:`attnviz.core.score_mods`); each writes its own step.
    """

    kind: str = "dot"
    scale: str = "sqrt_dk"
    tempered: bool = False
    masked: bool = False
    multi_head: bool = False
    mods: tuple[ScoreMod, ...] = ()


def settings_of(row: RowSteps) -> Settings:
    """The settings of an explained row (scale kind read from the factor the core used)."""
    if row.kind == "additive" or row.scale == 1.0:
        scale = "none"
    elif math.isclose(row.scale, 1.0 / math.sqrt(row.d_k), rel_tol=1e-12):
        scale = "sqrt_dk"
    else:
        scale = "custom"
    return Settings(kind=row.kind, scale=scale, tempered=row.temperature != 1.0,
                    masked=row.any_masked, multi_head=row.n_heads > 1 or row.head is not None,
                    mods=tuple(step.mod for step in row.mod_steps))


def output_symbol(settings: Settings, i: int, head: int | None = None) -> str:
    """The LaTeX name of output row ``i``: ``o_{2}``, ``o_{2}^{(1)}`` (head 1), ``c_{2}``."""
    o = "c" if settings.kind == "additive" else "o"
    return f"{o}_{{{i}}}" + (f"^{{({head})}}" if settings.multi_head and head is not None else "")


def formulas_for(row: RowSteps) -> dict[str, str]:
    """The formula table for an explained row (see :func:`formulas`)."""
    return formulas(settings_of(row))


def formulas(settings: Settings) -> dict[str, str]:
    """One LaTeX formula per step, for these settings.

    Steps: ``query``, ``query_head``, ``query_direct``, ``query_key``, ``projections`` and
    ``features`` (additive), ``score``, ``scale``, ``temperature`` and ``scaled`` (both at
    once), ``mask``, ``max``, ``exp``, ``sum``, ``weight``, ``softmax`` (max to weight at
    once), ``term``, ``output``, ``w_o`` and ``concat`` (multi-head). A step that did not
    happen (no scale, τ = 1, nothing masked, additive attention's scale and temperature) is
    absent; the later formulas then name the quantity that reached them.
    """
    if settings.scale not in SCALE_KINDS:
        raise ValueError(f"scale must be one of {', '.join(SCALE_KINDS)}; got {settings.scale!r}")
    additive = settings.kind == "additive"
    s = "e" if additive else "s"  # the score
    e = r"\epsilon" if additive else "e"  # the shifted exp
    o = "c" if additive else "o"  # the output row
    table: dict[str, str] = {}
    if additive:
        table["projections"] = r"a_i = x_i W_q,\qquad b_j = k_j W_k"
        table["features"] = r"f_{ij} = \tanh(a_i + b_j) = \tanh(x_i W_q + k_j W_k)"
        table["score"] = r"e_{ij} = v_a \cdot f_{ij} = \sum_m v_{a,m}\, f_{ijm}"
    else:
        table["query"] = r"q_i = x_i W_Q"
        table["query_head"] = r"q_i^{(h)} = x_i W_Q^{(h)}"
        table["query_direct"] = r"q_i = \text{row } i \text{ of } Q \text{ (given directly)}"
        table["query_key"] = r"q_i,\ k_j"
        table["score"] = r"s_{ij} = q_i \cdot k_j = \sum_m q_{im}\,k_{jm}"
    # scale and temperature: s'_ij, or nothing when neither changes the score
    current = f"{s}_{{ij}}"
    if not additive and (settings.scale != "none" or settings.tempered):
        scaled_by = {"sqrt_dk": r"\frac{s_{ij}}{\sqrt{d_k}}",
                     "custom": r"s_{ij} \times \text{scale}", "none": r"s_{ij}"}[settings.scale]
        if settings.scale != "none":  # the scaled score is s'_ij unless τ still follows
            table["scale"] = scaled_by if settings.tempered else rf"s'_{{ij}} = {scaled_by}"
        divided = rf"{scaled_by} \div \tau" if settings.tempered else scaled_by
        if settings.tempered:
            table["temperature"] = rf"s'_{{ij}} = {divided}"
        table["scaled"] = rf"s'_{{ij}} = {divided}"
        current = "s'_{ij}"
    for mod in settings.mods:  # each later change of the scores writes its own step
        table[mod.key], current = mod.written(current)
    if settings.masked:
        table["mask"] = (rf"{s}''_{{ij}} = \begin{{cases}} {current} & \text{{if }} M_{{ij}}\\ "
                         r"-\infty & \text{otherwise}\end{cases}")
        current = f"{s}''_{{ij}}"
    arg = current.replace("_{ij}", "_{ij'}")
    table["max"] = rf"m_i = \max_{{j'}} {arg}"
    table["exp"] = rf"{e}_{{ij}} = \exp({current} - m_i)"
    table["sum"] = rf"Z_i = \sum_{{j'}} {e}_{{ij'}}"
    table["weight"] = rf"\alpha_{{ij}} = \frac{{{e}_{{ij}}}}{{Z_i}}"
    table["softmax"] = (rf"\alpha_{{ij}} = \frac{{{e}_{{ij}}}}{{Z_i}},\quad "
                        rf"{table['exp']},\quad {table['max']},\quad {table['sum']}")
    head = "^{(h)}" if settings.multi_head else ""
    table["term"] = (rf"\alpha_{{ij}}\, v_j \quad\text{{(one term of }} "
                     rf"{o}_i{head} = \textstyle\sum_j \alpha_{{ij}} v_j)")
    table["output"] = rf"{o}_i{head} = \sum_j \alpha_{{ij}}\, v_j"
    if settings.multi_head:
        table["w_o"] = r"(\alpha_{ij}\, v_j)\, W_O[\text{rows of head } h]"
        table["concat"] = (r"\mathrm{concat}_i = [\,o_i^{(0)}, \dots, o_i^{(H-1)}\,],\quad "
                           r"o_i = \mathrm{concat}_i\, W_O")
    return table
