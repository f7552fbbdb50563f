"""Export the matrices of a computation: CSV (one matrix), .npz (all) and JSON (all).

:func:`matrices` names every matrix of a :class:`~attnviz.scenarios.scenario.ScenarioResult` —
the same names the pages and :mod:`attnviz.teach.text` use (``x``, ``q``, ``k``, ``v``,
``scores``, ``scaled``, ``masked``, ``mask``, ``weights``, ``output``; ``head0_weights`` ... for
multi-head attention).
:func:`axis_labels` gives the row and column labels of each 2-D one.

Values are written exactly: CSV and JSON use Python's shortest round-tripping float repr, .npz
stores the arrays themselves. A masked score is −∞: ``-inf`` in CSV (``np.loadtxt`` and pandas
read it), the string ``"-inf"`` in JSON (JSON has no infinity). The .npz holds only numbers,
booleans and text, so ``np.load(f, allow_pickle=False)`` reads it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence

import numpy as np

from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import MultiHeadResult
from attnviz.scenarios.scenario import ScenarioResult

FORMAT = "attnviz-matrices"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _dims(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{j}" for j in range(n)]


def matrices(result: ScenarioResult) -> dict[str, np.ndarray]:
    """Every matrix of a computed scenario, by name, in the order a page shows them.

    Multi-head results are split per head (``head0_scores``, ``head0_weights``, ...), so every
    entry except additive attention's ``features`` (t_q, t_k, d_a) is 1-D or 2-D.
    """
    out: dict[str, np.ndarray] = {"x": result.x}
    if result.pe is not None:
        out["pe"] = result.pe
    if result.source_x is not None:
        out["source_x"] = result.source_x
    att = result.attention
    if isinstance(att, AdditiveResult):
        out.update(features=att.features, scores=att.scores)
    else:
        out.update(q=att.q, k=att.k, v=att.v)
    if isinstance(att, MultiHeadResult):
        for h in range(att.n_heads):
            for name in ("scores", "scaled", "masked", "weights"):
                out[f"head{h}_{name}"] = getattr(att, name)[h]
            out[f"head{h}_output"] = att.head_outputs[h]
        out.update(concat=att.concat, output=att.output, mask=att.mask)
    else:
        if not isinstance(att, AdditiveResult):
            out.update(scores=att.scores, scaled=att.scaled)
        out.update(mask=att.mask, masked=att.masked, weights=att.weights, output=att.output)
    if result.mixed is not None:
        out["mixed"] = result.mixed
    if result.pooling is not None:
        out.update(pooling_scores=result.pooling.scores, pooling_weights=result.pooling.weights,
                   pooling_output=result.pooling.output)
    return {name: np.asarray(value) for name, value in out.items()}


def axis_labels(result: ScenarioResult) -> dict[str, tuple[list[str], list[str]]]:
    """(row labels, column labels) of every 1-D and 2-D matrix of :func:`matrices`.

    Rows of query-side matrices are the position labels of the tokens ("0:the"), columns of
    score-like matrices the key labels, columns of vectors ``d0``, ``q0``, ``o0``, ...
    """
    q_lab, k_lab = list(result.q_labels), list(result.k_labels)
    labels: dict[str, tuple[list[str], list[str]]] = {}
    for name, m in matrices(result).items():
        if m.ndim > 2:
            continue
        if m.ndim == 1:
            cols = q_lab if len(q_lab) == m.shape[0] and name != "pooling_output" else \
                _dims("d", m.shape[0])
            labels[name] = ([name], cols)
            continue
        rows_k = name in ("k", "v", "source_x")
        rows = k_lab if rows_k else q_lab
        if m.shape[0] != len(rows):  # e.g. a single query
            rows = _dims("r", m.shape[0])
        base = name.split("_", 1)[1] if name.startswith("head") else name
        if base in ("scores", "scaled", "masked", "weights", "mask") and m.shape[1] == len(k_lab):
            cols = k_lab
        else:
            prefix = {"x": "d", "pe": "d", "source_x": "d", "q": "q", "k": "k", "v": "v",
                      "concat": "c"}.get(base, "o")
            cols = _dims(prefix, m.shape[1])
        labels[name] = (list(rows), list(cols))
    return labels


# ---------------------------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------------------------

def _number(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    return repr(float(v))  # shortest repr that reads back exactly; 'inf', '-inf', 'nan'


def _label(text: str) -> str:
    """A label cell that a spreadsheet will not run as a formula."""
    text = str(text)
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_bytes(matrix, row_labels: Sequence[str] | None = None,
              col_labels: Sequence[str] | None = None) -> bytes:
    """One matrix as CSV (UTF-8). 1-D input is written as one row.

    With labels, the first row holds the column labels (after an empty corner cell) and each
    row starts with its label: ``pandas.read_csv(f, index_col=0)`` reads it back; without, the
    file holds numbers only (``np.loadtxt(f, delimiter=",")``).

    Raises
    ------
    ValueError
        If the array is not 1-D or 2-D, or the labels do not fit its shape.
    """
    m = np.asarray(matrix)
    if m.ndim == 1:
        m = m[None, :]
    if m.ndim != 2:
        raise ValueError(f"a CSV file holds one 1-D or 2-D matrix, got shape {m.shape}")
    if row_labels is not None and len(row_labels) != m.shape[0]:
        raise ValueError(f"{len(row_labels)} row labels for {m.shape[0]} rows")
    if col_labels is not None and len(col_labels) != m.shape[1]:
        raise ValueError(f"{len(col_labels)} column labels for {m.shape[1]} columns")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if col_labels is not None:
        writer.writerow(([""] if row_labels is not None else []) + [_label(c) for c in col_labels])
    for i, row in enumerate(m.tolist()):
        cells = [_number(v) for v in row]
        writer.writerow(([_label(row_labels[i])] if row_labels is not None else []) + cells)
    return buf.getvalue().encode("utf-8")


def npz_bytes(arrays: Mapping[str, np.ndarray], *, q_labels: Sequence[str] | None = None,
              k_labels: Sequence[str] | None = None) -> bytes:
    """All matrices in one compressed .npz (plus the labels as text arrays, if given).

    Readable with ``np.load(f, allow_pickle=False)``: only numeric, boolean and text arrays.
    """
    bundle = {name: _plain(name, a) for name, a in arrays.items()}
    for name, labels in (("q_labels", q_labels), ("k_labels", k_labels)):
        if labels is not None:
            bundle[name] = np.array([str(s) for s in labels], dtype=str)
    buf = io.BytesIO()
    np.savez_compressed(buf, **bundle)
    return buf.getvalue()


def _plain(name: str, a) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype.hasobject or arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers or booleans, got {arr.dtype}")
    return arr


def _json_value(v):
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    if isinstance(v, bool):
        return v
    f = float(v)
    if math.isfinite(f):
        return f
    return "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")


def to_json_dict(arrays: Mapping[str, np.ndarray], *, q_labels: Sequence[str] | None = None,
                 k_labels: Sequence[str] | None = None) -> dict:
    """The matrices as a JSON-ready dict: ``{"format", "q_labels", "k_labels", "matrices"}``.

    Each matrix is ``{"shape": [...], "values": nested lists}``; ±∞ and NaN are the strings
    ``"inf"``, ``"-inf"`` and ``"nan"``; a mask holds true/false.
    """
    out = {"format": FORMAT, "version": 1}
    if q_labels is not None:
        out["q_labels"] = [str(s) for s in q_labels]
    if k_labels is not None:
        out["k_labels"] = [str(s) for s in k_labels]
    out["matrices"] = {
        name: {"shape": list(np.shape(a)), "values": _json_value(_plain(name, a).tolist())}
        for name, a in arrays.items()
    }
    return out


def json_bytes(arrays: Mapping[str, np.ndarray], *, q_labels: Sequence[str] | None = None,
               k_labels: Sequence[str] | None = None) -> bytes:
    """:func:`to_json_dict` as UTF-8 JSON text (strict JSON)."""
    data = to_json_dict(arrays, q_labels=q_labels, k_labels=k_labels)
    return json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")


def from_json_values(values) -> np.ndarray:
    """Read back a matrix's ``values`` from :func:`to_json_dict` ("-inf" etc. become floats)."""
    def conv(v):
        if isinstance(v, list):
            return [conv(x) for x in v]
        return float(v) if isinstance(v, str) else v
    return np.array(conv(values))
