"""TODO"""

from __future__ import annotations

INTRO = (
    "Predict, then reveal. The weights are hidden: from the queries and keys (and the mask), "
    "predict for every query the key that gets the most weight, then reveal the weights and see "
    "your score. Hint: the largest weight goes to the largest allowed score q_i·k_j."
)

SOURCES = {"practice": "Practice question (random small integers)",
                "scenario": "The current scenario"}

REVEAL_HELP = "Show the hidden weights and score the predictions."

TIES = "Where several keys tie for the largest weight, any of them counts."

FULLY_MASKED = "Fully masked query: nothing to predict (not scored)."

OUTLINES = "Orange outlines: your predictions."

TOO_MANY = (
    "The quiz takes at most {limit} queries; this scenario has {n}. Use a practice question or "
    "a smaller scenario."
)

CAPTURED = (
    "Weight captured: the weight of the keys you picked divided by the largest weights — "
    "partial credit for a near miss."
)
