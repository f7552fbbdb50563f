"""Quiz: the weights are hidden; predict where each query looks, then reveal and score.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "TOO_MANY": ("limit", "n"),
    "QUERY_NAME": ("i",),
    "KEY_NAME": ("j",),
    "DIM_NAME": ("m",),
    "PREDICTION_LABEL": ("i",),
    "SCORE_VALUE": ("n_correct", "n_scored"),
}

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

# {limit}: the most queries a question has; {n}: the queries of the scenario
TOO_MANY = (
    "The quiz takes at most {limit} queries; this scenario has {n}. Use a practice question or "
    "a smaller scenario."
)

CAPTURED = (
    "Weight captured: the weight of the keys you picked divided by the largest weights — "
    "partial credit for a near miss."
)

TITLE = "Quiz: predict, then reveal"
SOURCE_LABEL = "Question"
TOKENS_LABEL = "Tokens"
D_K_LABEL = "d_k"
# Labels of a practice question
QUERY_NAME = "q{i}"  # {i}: a query's index
KEY_NAME = "k{j}"  # {j}: a key's index
DIM_NAME = "d{m}"  # {m}: a column of Q and K
KNOWN = "What you know"
SCORES = "alignment scores e_ij"
Q = "Q"
K = "K"
MASK = "mask"
HINT = "Hint: show the scaled, masked scores"
PREDICT = "Your prediction: the key with the most weight, for each query"
# {i}: the query's index (a widget label: no token text, it would render as Markdown)
PREDICTION_LABEL = "query {i}"
REVEAL = "Reveal"
NEW_QUESTION = "New question"
SCORE = "Score"
# {n_correct}: right predictions; {n_scored}: queries scored
SCORE_VALUE = "{n_correct} / {n_scored}"
CAPTURED_LABEL = "Weight captured"
HIDDEN_WEIGHTS = "The hidden weights"
# Columns of the answers table
COLUMNS = {"yours": "your key", "right": "right key(s)", "weight": "its weight",
           "max": "max weight", "correct": "right"}
