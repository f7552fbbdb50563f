"""Words of the Step by step page (pages/step_by_step.py, keys ``step_by_step_``,
attnviz/ui/steps.py).

The formulas are not here: both explanation pages take them from
:func:`attnviz.teach.explain.formulas` (one table, the same symbols, following the settings).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
The LaTeX lines (``SCALE_LINE``, ``TAU_LINE``, and the row labels written as ``q_{i}``, which
read as LaTeX too) are formatted the same way but, being LaTeX, are not in ``FIELDS``.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "DIMENSION": ("name", "m"),
    "VALUE_TERM": ("m",),
    "CONCAT_SLICE": ("h", "start", "stop"),
    "MORE_TERMS": ("n",),
    "WIDE_TABLE": ("what", "rows", "cols"),
}

HEADER = "Step by step"
INTRO = (
    "Follow one query through the whole computation with the numbers of the current scenario: "
    "its dot product with every key, the scale and temperature, the mask, the softmax written "
    "out (subtract the row maximum, exponentiate, divide by the row sum) and the weighted sum "
    "of the values. These are the same steps the seed notebooks print for their first word."
)
DIRECT_EXPANDER = "Q, K and V (given directly)"
DIRECT = (
    "This scenario gives Q, K and V directly (seed 001 and seed 004 do this). Edit them here; "
    "every page uses the edited values."
)
QUERY_LABEL = "Query token"
PICK = (
    "Pick the query whose row you want to follow; the weights map shows every query's row, "
    "this one outlined."
)
WEIGHTS_TITLE = "**Attention weights** (the chosen query's row is outlined)"
WITH_PE = "Positional encoding is on: x_i here is the embedding plus its position code."
MULTI_HEAD = (
    "Each head runs the same steps on its own column block of Q, K and V. Pick a head; the heads' "
    "outputs are then concatenated and projected by W_O (see the Multi-head page)."
)
# Title of each step shown (formulas: attnviz.teach.explain.formulas); the page numbers them.
TITLES = {
    "query": "The query",
    "query_head": "The query (this head's columns)",
    "query_direct": "The query",
    "projections": "Project the query and every key into the alignment space",
    "features": "Features: tanh of their sum",
    "score": "Dot product with every key",
    "scaled": "Scale and temperature",
    "mask": "Mask",
    "softmax": "Softmax over the keys",
    "output": "Weighted sum of the values",
    "concat": "Concatenate the heads, project by W_O",
}
ADDITIVE_TITLES = {**TITLES, "score": "Score with v_a",
                   "output": "Context: weighted sum of the values"}
# LaTeX; {root}: " = 1/√d_k" written in LaTeX, or ""; {scale}: the scale factor
SCALE_LINE = r"\text{{scale}}{root} = {scale}"
# LaTeX; {tau}: the temperature
TAU_LINE = r"\tau = {tau}"
SOFTMAX_NOTE = (
    "Subtracting the row maximum m_i changes nothing in the result (it cancels in the fraction) "
    "but keeps exp from overflowing; exp(−∞) = 0, so masked keys get weight 0."
)
FULLY_MASKED = (
    "Every key of this query is masked: all its scores are −∞, exp gives 0 everywhere and the "
    "row sum is 0. "
)
# Column names of the step tables (the tests read the tables by them).
COLUMNS = {
    "score": "q·k",
    "additive_score": "e = v_a·f",
    "times_scale": "× scale",
    "scaled": "÷ τ",
    "allowed": "may attend",
    "masked": "masked",
    "shifted": "− max",
    "exp": "exp",
    "weight": "α = exp / sum",
    "alpha": "α",
}
KEY_AXIS = "key"
# Row labels of the one-row tables; {i}: the query's index
QUERY_VECTOR = "q_{i}"
ADDITIVE_QUERY_VECTOR = "a_{i}"  # {i}: the query's index
# {name}: the vector's name (q, k, v, f, ...); {m}: the dimension's index
DIMENSION = "{name}[{m}]"
# {m}: the dimension of the values (a column of α_ij·v_j)
VALUE_TERM = "α·v[{m}]"
SUM_LABEL = "Σ over keys"
SUM_NOTE = ("Last row: the sums over the keys — the weights α add up to 1, each α·v column adds "
            "up to one entry of the output row.")
CONCAT_ROW = "concat_{i}"  # {i}: the query's index
OUTPUT_ROW = "o_{i}"  # {i}: the query's index
# {n}: the number of terms of a dot product too long to write out (after the first few)
MORE_TERMS = " + … ({n} terms)"
# {h}: the head; {start}…{stop}: its columns in the concatenation
CONCAT_SLICE = (
    "Head {h}'s output row is columns {start}…{stop} of the concatenation (the other heads' rows "
    "are recomputed the same way); the output row is the concatenation times W_O."
)
# A wide step table (a real head's 64 value dimensions over many keys) is drawn when its
# expander is opened (drawing such tables made the page slow to open); {what}: one of
# WIDE_TABLE_WHAT; {rows}, {cols}: its size
WIDE_TABLE = "{what} — a {rows} × {cols} table: open to draw it"
WIDE_TABLE_WHAT = {
    "v": "The values v_j of every key",
    "sum": "α_ij and α_ij · v_j of every key, with the sums",
    "b": "Every key projected into the alignment space",
    "f": "The features of every key",
}
