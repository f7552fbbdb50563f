"""LaTeX pieces the dot-product variants' formulas share, written for the current settings.

A formula names only the steps that happen (a teacher projects it beside the
numbers): √d_k only when the scale is 1/√d_k, the custom factor as its number, τ only when it
is not 1, the mask only when something is masked. M is the boolean mask everywhere in attnviz
(True: the query may attend to the key); ``mask_M`` puts −∞ where it is False.
"""

from __future__ import annotations

from dataclasses import dataclass

SCALES = ("sqrt_dk", "none", "custom")


@dataclass(frozen=True)
class Written:
    """What a formula writes.

    Attributes
    ----------
    scale : {"sqrt_dk", "none", "custom"}
        Divide by √d_k, nothing, or multiply by ``custom``.
    custom : float or None
        The custom scale factor.
    tempered : bool
        Divide by τ (the temperature is not 1).
    masked : bool
        Something is masked.
    steps : tuple of Step
        The steps the scenario's variant wrote from its own settings (:mod:`attnviz.core.steps`;
        a RoPE step with its frequencies and attention scaling, a soft-cap, ...): each variant's
        formula reads its own from them. A scenario of attention steps: its whole list, without
        the scale and the user's mask, which the fields above write. Empty: every step as the
        variant is defined.
    """

    scale: str = "sqrt_dk"
    custom: float | None = None
    tempered: bool = True
    masked: bool = True
    steps: tuple = ()

    def __post_init__(self):
        if self.scale not in SCALES:
            raise ValueError(f"scale must be one of {', '.join(SCALES)}; got {self.scale!r}")


GENERAL = Written()  # every step: how the variant is defined

PROJECTIONS = r"Q = XW_Q,\ K = XW_K,\ V = XW_V"


def number(x: float) -> str:
    """A factor as the formula writes it (4 significant digits, LaTeX exponent)."""
    text = f"{x:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = rf"{mantissa}\times 10^{{{int(exponent)}}}"
    return text


def scaled(qk: str, w: Written, *, by: str = "") -> str:
    """The scores ``qk`` scaled and divided by τ as ``w`` says: ``\\frac{QK^\\top}{\\sqrt{d_k}\\,
    \\tau}``, ``\\frac{QK^\\top}{\\tau}``, ``0.5\\,QK^\\top``, ``QK^\\top``; ``by`` divides once
    more (soft-capping's c)."""
    top = rf"{number(w.custom)}\,{qk}" if w.scale == "custom" else qk
    below = [d for d in (r"\sqrt{d_k}" if w.scale == "sqrt_dk" else "",
                         r"\tau" if w.tempered else "", by) if d]
    if not below:
        return top
    return r"\frac{" + top + "}{" + r"\,".join(below) + "}"


def softmax(scores: str, w: Written) -> str:
    """softmax over the keys of ``scores``, masked by M when something is masked."""
    if w.masked:
        scores = r"\mathrm{mask}_M\!\left(" + scores + r"\right)"
    return r"\mathrm{softmax}\!\left(" + scores + r"\right)"


def sdpa(w: Written, qk: str = r"QK^\top", v: str = "V") -> str:
    """softmax(mask_M(QKᵀ / (√d_k·τ)))·V as ``w`` writes it."""
    return softmax(scaled(qk, w), w) + v


def with_mask(formula: str, w: Written, mask: str) -> str:
    """The formula followed by the variant's own M (``mask``), when something is masked."""
    return formula + r",\quad " + mask if w.masked else formula
