"""Words of the Trace a cell page (pages/trace.py, keys ``trace_``, attnviz/ui/trace_view.py).

The formulas are not here: both explanation pages take them from
:func:`attnviz.teach.explain.formulas`.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
The LaTeX pieces (``HEAD_ROWS``, ``SUM_OF_TERMS``) are formatted the same way but, being LaTeX,
are not in ``FIELDS``.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "WEIGHTS_TITLE": ("head",),
    "HEAD_SUFFIX": ("h",),
    "MATRIX_TITLE": ("name", "row"),
    "QKV_WIDE": ("t_q", "d_k", "t_k", "d_v"),
    "DIMENSION": ("m",),
    "CHOSEN": ("query", "key"),
    "CHECK_LINES": ("recomputed", "core"),
}

HEADER = "Trace a cell"
INTRO = (
    "Every attention weight is a short chain of arithmetic. Click a cell of the weights heatmap "
    "(or pick a query and a key below) to see that chain for the current scenario, with its "
    "numbers: from the query and key vectors to the weight α_ij and to α_ij·v_j, the share of "
    "key j in the output of query i. The matching rows and cells are outlined in orange."
)
QUERY_LABEL = "Query i"
KEY_LABEL = "Key j"
CLICK = "Click a cell to trace it."
# presenter mode: the weights drawn without axis titles (their cells keep the room)
CLICK_PRESENTER = "Rows: the query i, columns: the key j. Click a cell to trace it."
# {head}: HEAD_SUFFIX for a multi-head scenario, else ""
WEIGHTS_TITLE = "**Attention weights{head}**"
# {h}: the head shown
HEAD_SUFFIX = " — head {h}"
# {name}: Q, K or V; {row}: the row outlined (the query i or the key j)
MATRIX_TITLE = "**{name}** (row {row} outlined)"
DIMENSION = "d{m}"  # {m}: a column of Q, K or V
# A wide head's Q, K and V (a real head's 64 columns) are drawn when this expander is opened;
# {t_q}, {t_k}: the queries and keys; {d_k}, {d_v}: the widths of Q and K, and of V
QKV_WIDE = ("Q ({t_q} × {d_k}), K ({t_k} × {d_k}) and V ({t_k} × {d_v}) of this head, the "
            "rows i and j outlined: open to draw them")
# {query}, {key}: the labels of the chosen query i and key j
CHOSEN = "query i = {query}\nkey j = {key}"
# Title of each step shown (formulas: attnviz.teach.explain.formulas); the page numbers them.
TITLES = {
    "query_key": "The query and the key",
    "score": "Dot product",
    "scale": "Scale",
    "temperature": "Temperature",
    "bias": "Bias (ALiBi)",
    "cap": "Soft-capping",
    "mask": "Mask",
    "max": "Row maximum",
    "exp": "Exponential (shifted by the row maximum)",
    "sum": "Row sum",
    "weight": "The weight",
    "term": "Its share of the output",
    "w_o": "Through W_O (multi-head)",
}
ADDITIVE_TITLES = {**TITLES, "features": "Alignment features", "score": "Score with v_a",
                   "term": "Its share of the context"}
# LaTeX; {h}: the head whose rows of W_O the term meets
HEAD_ROWS = r"W_O[\text{{head {h}}}]"
SHIFT_NOTE = (
    "Subtracting m_i does not change α_ij (it cancels in e_ij / Z_i) but keeps exp from "
    "overflowing; a masked key has e_ij = exp(−∞) = 0."
)
FULLY_MASKED = (
    "Every key of this query is masked, so Z_i = 0: attnviz gives the whole row weight 0 and "
    "the output row 0 (a naive softmax would compute 0/0 = NaN)."
)
MASKED = "Key j is masked for query i: its score is −∞ and its weight is exactly 0."
CHECK = "Check: α_ij recomputed here and the value in the heatmap (the vectorised core)."
# {recomputed}: α_ij recomputed step by step; {core}: the heatmap's value (17 digits each)
CHECK_LINES = "recomputed here: {recomputed}\nheatmap (core):  {core}"
W_O = (
    "In multi-head attention the head outputs are concatenated and multiplied by W_O. Head h "
    "occupies columns h·d_v … (h+1)·d_v − 1 of the concatenation, so α_ij v_j meets exactly "
    "those rows of W_O. Summed over every key and every head, these shares give output row i."
)
MIXED = (
    "This scenario combines its heads with one weight per head (seed 004) as well; the trace "
    "follows W_O."
)
# LaTeX; {n}: the number of terms of a sum too long to write out
SUM_OF_TERMS = r"\textstyle\sum(\text{{{n} terms}})"
