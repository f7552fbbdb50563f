"""The numbers a talking point names, and whether a drawn number reads as one of them.

Shared by the AppTest that reads a lecture step's screen from the run
(tests/pages/test_talk_on_screen.py) and the browser walk that reads what is drawn
(tests/browser/readable_walk.py).
"""

from __future__ import annotations

import re

DECIMAL = re.compile(r"(?<![\w.])[−-]?\d+\.\d+")  # a number the talk writes with decimals
NUMBER = re.compile(r"[−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?")


def drawn_numbers(screen: str) -> set[float]:
    """Every number written in ``screen`` ("−" read as a minus)."""
    return {float(n.replace("−", "-")) for n in NUMBER.findall(screen)}


def on_screen(written: str, drawn: set[float]) -> bool:
    """True when a drawn number reads ``written`` at its decimals (to half a unit more)."""
    value = float(written.replace("−", "-"))
    decimals = len(written.split(".")[1])
    return any(abs(x - value) <= 0.6 * 10.0 ** -decimals for x in drawn)


def missing_numbers(talk: str, drawn: set[float]) -> list[str]:
    """The numbers with decimals ``talk`` names that no drawn number reads as."""
    return [w for w in DECIMAL.findall(talk) if not on_screen(w, drawn)]
