"""One query's row, step by step, as the Step by step page shows it (tables and written lines).

Every number comes from one :class:`attnviz.core.explain.RowSteps`: the tables show the core's
own numbers where the core stores them (scores, scaled and masked scores, weights, output) and
the row's recomputed inner steps between them (× scale, − max, exp, α·v); the tests check both.
No Streamlit here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from attnviz.core.explain import RowSteps
from attnviz.teach.explain import number
from attnviz.teach.text import step_by_step as text

Array = NDArray[np.float64]

WRITTEN_TERMS = 8  # write every term of a dot product up to this width, else the first few
COLUMNS = text.COLUMNS


def _factor(x: float) -> str:
    """A factor in a product: negative numbers in parentheses, ``1×(−2)``."""
    written = number(x)
    return f"({written})" if written.startswith("−") else written


def written_dot(a: Array, b: Array, name: str, value: float) -> str:
    """``"q_0·k_2 = 1×2 + 0×1 + 0×2 = 2"``: a dot product with its terms written out.

    ``value`` is shown after the last "="; long vectors show the first terms and "…".
    """
    n = a.shape[0]
    shown = n if n <= WRITTEN_TERMS else WRITTEN_TERMS // 2
    terms = " + ".join(f"{_factor(x)}×{_factor(y)}" for x, y in zip(a[:shown], b[:shown],
                                                                   strict=True))
    if shown < n:
        terms += text.MORE_TERMS.format(n=n)
    return f"{name} = {terms} = {number(value)}"


def score_lines(row: RowSteps) -> list[str]:
    """One written-out score per key: ``q_i·k_j = ... = s_ij`` (additive:
    ``e_i,j = v_a·f_i,j = ... = e_ij``), ending with the core's score."""
    i = row.i
    if row.kind == "additive":
        return [written_dot(row.v_a, row.features[j], f"e_{i},{j} = v_a·f_{i},{j}",
                            row.core.scores[j]) for j in range(row.t_k)]
    return [written_dot(row.q, row.k[j], f"q_{i}·k_{j}", row.core.scores[j])
            for j in range(row.t_k)]


def steps_frame(row: RowSteps, k_labels: list[str]) -> pd.DataFrame:
    """One row per key, one column per step, from the score to the weight."""
    if row.kind == "additive":
        columns = {COLUMNS["additive_score"]: row.core.scores}
    else:
        columns = {COLUMNS["score"]: row.core.scores,
                   COLUMNS["times_scale"]: row.times_scale,
                   COLUMNS["scaled"]: row.factor_scaled}
        for ms in row.mod_steps:  # every later change of the scores, in order
            columns[ms.mod.title] = ms.after
    columns.update({
        COLUMNS["allowed"]: row.mask,
        COLUMNS["masked"]: row.core.masked,
        COLUMNS["shifted"]: row.shifted,
        COLUMNS["exp"]: row.exp,
        COLUMNS["weight"]: row.core.weights,
    })
    return pd.DataFrame(columns, index=pd.Index(k_labels, name=text.KEY_AXIS))


def sum_frame(row: RowSteps, k_labels: list[str]) -> pd.DataFrame:
    """α_ij and α_ij · v_j per key, with a last row holding Σ_j (the core's output row)."""
    cols = [text.VALUE_TERM.format(m=m) for m in range(row.terms.shape[1])]
    body = pd.DataFrame(row.terms, index=k_labels, columns=cols)
    body.insert(0, COLUMNS["alpha"], row.core.weights)
    total = pd.DataFrame([row.core.output], index=[text.SUM_LABEL], columns=cols)
    total.insert(0, COLUMNS["alpha"], float(np.sum(row.core.weights)))
    frame = pd.concat([body, total])
    frame.index.name = text.KEY_AXIS
    return frame


def value_frame(v: Array, k_labels: list[str], name: str = "v") -> pd.DataFrame:
    """Vectors per key (the values v_j by default), one row per key."""
    return pd.DataFrame(v, index=pd.Index(k_labels, name=text.KEY_AXIS),
                        columns=[text.DIMENSION.format(name=name, m=m)
                                 for m in range(v.shape[1])])


def vector_frame(vec: Array, label: str, prefix: str) -> pd.DataFrame:
    """A single vector as a one-row table (columns ``prefix[0], prefix[1], ...``)."""
    return pd.DataFrame([vec], index=[label], columns=[text.DIMENSION.format(name=prefix, m=m)
                                                       for m in range(vec.shape[0])])
