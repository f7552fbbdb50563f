"""Export of matrices: names, labels, CSV, .npz (no pickles) and JSON, all exact."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from attnviz import PRESETS, run_scenario
from attnviz.core.attention import MultiHeadResult
from attnviz.io.export import (
    axis_labels,
    csv_bytes,
    from_json_values,
    json_bytes,
    matrices,
    npz_bytes,
    to_json_dict,
)
from attnviz.scenarios.scenario import with_parts


@pytest.fixture(params=list(PRESETS))
def result(request):
    return run_scenario(PRESETS[request.param].build())


def test_single_head_names_and_values():
    res = run_scenario(PRESETS["seed_000"].build())
    m = matrices(res)
    assert list(m) == ["x", "q", "k", "v", "scores", "scaled", "mask", "masked", "weights",
                       "output"]
    # the pooling matrices come with a scenario that has the pooling part (Encoder–decoder)
    pooled = matrices(run_scenario(with_parts(PRESETS["seed_000"].build(), ["pooling"])))
    assert list(pooled)[-3:] == ["pooling_scores", "pooling_weights", "pooling_output"]
    att = res.attention
    for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "output"):
        assert m[name] is getattr(att, name) or np.array_equal(m[name], getattr(att, name))
    # seed 000's raw scores (golden: x·W_Q·(x·W_K)ᵀ with np.random.seed(42) randint weights)
    np.testing.assert_array_equal(m["scores"], att.q @ att.k.T)


def test_multi_head_is_split_per_head():
    res = run_scenario(PRESETS["seed_004_two_heads"].build())
    assert isinstance(res.attention, MultiHeadResult)
    m = matrices(res)
    for h in range(2):
        np.testing.assert_array_equal(m[f"head{h}_weights"], res.attention.weights[h])
        np.testing.assert_array_equal(m[f"head{h}_output"], res.attention.head_outputs[h])
    assert "mixed" in m and "concat" in m
    assert all(a.ndim <= 2 for a in m.values())


def test_additive_keeps_3d_features():
    res = run_scenario(PRESETS["bahdanau"].build())
    m = matrices(res)
    assert m["features"].ndim == 3
    assert "features" not in axis_labels(res)
    assert "q" not in m


def test_labels_fit_every_2d_matrix(result):
    m = matrices(result)
    labels = axis_labels(result)
    for name, a in m.items():
        if a.ndim > 2:
            continue
        rows, cols = labels[name]
        shape = a.shape if a.ndim == 2 else (1, a.shape[0])
        assert (len(rows), len(cols)) == shape, name
        csv_bytes(a, rows, cols)  # never raises


def test_weights_labels_are_query_and_key_positions():
    res = run_scenario(PRESETS["translation"].build())
    rows, cols = axis_labels(res)["weights"]
    assert rows == ["0:le", "1:chat", "2:noir"]
    assert cols == ["0:the", "1:black", "2:cat"]


def test_csv_round_trip_is_exact_with_labels_and_minus_inf():
    res = run_scenario(PRESETS["cat_sat"].build())  # causal: masked scores hold −inf
    masked = matrices(res)["masked"]
    assert np.isneginf(masked).any()
    rows, cols = axis_labels(res)["masked"]
    data = csv_bytes(masked, rows, cols)
    header, *lines = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert header[1:] == cols and [line[0] for line in lines] == rows
    np.testing.assert_array_equal(np.array([line[1:] for line in lines], dtype=float), masked)
    bare = np.loadtxt(io.BytesIO(csv_bytes(masked)), delimiter=",")
    np.testing.assert_array_equal(bare, masked)


def test_csv_golden_text():
    data = csv_bytes(np.array([[0.1 + 0.2, -np.inf], [1.0, 2.5]]), ["0:a", "1:b"], ["k0", "k1"])
    assert data.decode() == ",k0,k1\n0:a,0.30000000000000004,-inf\n1:b,1.0,2.5\n"
    assert csv_bytes(np.array([True, False])).decode() == "1,0\n"


def test_csv_labels_cannot_start_a_formula():
    data = csv_bytes(np.eye(2), ["=HYPERLINK(\"x\")", "+1"], ["@a", "-b"]).decode()
    rows = list(csv.reader(io.StringIO(data)))
    assert rows[0] == ["", "'@a", "'-b"]
    assert rows[1][0] == "'=HYPERLINK(\"x\")" and rows[2][0] == "'+1"


def test_csv_refuses_3d_and_wrong_labels():
    with pytest.raises(ValueError, match=r"one 1-D or 2-D matrix, got shape \(2, 2, 2\)"):
        csv_bytes(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"3 row labels for 2 rows"):
        csv_bytes(np.zeros((2, 2)), ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"1 column labels for 2 columns"):
        csv_bytes(np.zeros((2, 2)), None, ["a"])


def test_npz_reads_back_without_pickle(result):
    m = matrices(result)
    data = npz_bytes(m, q_labels=result.q_labels, k_labels=result.k_labels)
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        assert set(z.files) == set(m) | {"q_labels", "k_labels"}
        for name, a in m.items():
            np.testing.assert_array_equal(z[name], a)
            assert z[name].dtype == a.dtype
        assert list(z["q_labels"]) == result.q_labels


def test_npz_refuses_object_arrays():
    with pytest.raises(ValueError, match=r"bad must hold numbers or booleans, got object"):
        npz_bytes({"bad": np.array([None, 1], dtype=object)})


def test_json_round_trip_is_exact(result):
    m = matrices(result)
    data = json.loads(json_bytes(m, q_labels=result.q_labels, k_labels=result.k_labels))
    assert data["format"] == "attnviz-matrices"
    assert data["q_labels"] == result.q_labels
    for name, a in m.items():
        entry = data["matrices"][name]
        assert entry["shape"] == list(a.shape)
        np.testing.assert_array_equal(from_json_values(entry["values"]).reshape(a.shape), a)


def test_json_is_strict_and_writes_infinity_as_text():
    d = to_json_dict({"masked": np.array([[1.5, -np.inf]]), "mask": np.array([[True, False]])})
    assert d["matrices"]["masked"]["values"] == [[1.5, "-inf"]]
    assert d["matrices"]["mask"]["values"] == [[True, False]]
    text = json_bytes({"masked": np.array([[np.nan, np.inf]])}).decode()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["matrices"]["masked"]["values"] == [["nan", "inf"]]


def test_io_modules_load_no_ui_libraries():
    import subprocess
    import sys
    code = ("import sys, attnviz.io.scenario_io, attnviz.io.attention_io, attnviz.io.export, "
            "attnviz.io.examples.make_example; "
            "print(sorted(m for m in ('streamlit', 'plotly', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
