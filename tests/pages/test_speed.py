"""The speed changes must not change what is shown.

- ``fingerprint``: equal content, equal key; any edit (a cell, a setting, a label, an array
  changed in place) a new key.
- ``controls.compute`` reuses a result only for the same scenario content: an edited scenario
  never gets a stale result (AppTest on the Playground and on a bare script).
- ``heatmap`` builds figures without plotly.py's validation: the figure must be identical to
  the validated one, and later updates by callers are still validated.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import fields, replace

import numpy as np
import plotly.io as pio
import pytest
from apptest_helpers import chart_z_by_key, edit_cells, editor_keys, open_page
from streamlit.testing.v1 import AppTest

from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.scenarios.scenario import run_scenario

heatmap_module = importlib.import_module("attnviz.figures.heatmap")
base_module = importlib.import_module("attnviz.figures.base")


# ------------------------------------------------------------------------------ fingerprint

def test_fingerprint_equal_content_equal_key():
    a, b = default_scenario(), default_scenario()
    assert a is not b
    assert fingerprint(a) == fingerprint(b)
    c = replace(a, x=a.x.copy(), w_q=np.asfortranarray(a.w_q))  # same values, other layout
    assert fingerprint(c) == fingerprint(a)


def _changed(value):
    """A different value of the same kind."""
    if isinstance(value, np.ndarray):
        if value.dtype == bool:
            return ~value if value.size else np.ones((1, 1), dtype=bool)
        return value + 1.0 if value.size else np.zeros((1, 1))
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return value[:-1] + (value[-1] + "x",) if value else ("x",)
    if value is None:
        return np.zeros(1)
    if isinstance(value, Mapping):  # the variant's params
        return {**value, "x": 1.0}
    raise AssertionError(f"no change rule for {type(value)}")


@pytest.mark.parametrize("field", [f.name for f in fields(default_scenario())])
def test_every_field_changes_the_key(field):
    s = PRESETS["seed_000"].build()
    edited = replace(s, **{field: _changed(getattr(s, field))})
    assert fingerprint(edited) != fingerprint(s)


def test_one_cell_in_place_and_dtype_and_shape_change_the_key():
    s = default_scenario()
    before = fingerprint(s)
    s.x[0, 0] += 1e-12  # arrays are not frozen: an in-place edit must not hide
    assert fingerprint(s) != before
    t = default_scenario()
    assert fingerprint(replace(t, x=t.x.astype(np.float32))) != fingerprint(t)
    assert fingerprint(replace(t, x=t.x.reshape(t.x.shape[1], -1))) != fingerprint(t) \
        or t.x.shape[0] == t.x.shape[1]
    assert fingerprint(replace(t, tokens=("a b", "c"))) != fingerprint(replace(t, tokens=(
        "a", "b c")))


# ------------------------------------------------------------------------------ compute memo

def _compute_script():
    """A bare page: compute the scenario in session state twice, record what came back."""
    import numpy as np
    import streamlit as st

    from attnviz.ui import controls

    scenario = st.session_state["scenario"]
    first = controls.compute(scenario)
    second = controls.compute(scenario)
    st.session_state["same_object"] = first is second
    st.session_state["weights"] = None if first is None else np.array(first.attention.weights)
    st.session_state["ids"] = st.session_state.get("ids", []) + [id(first)]


def test_compute_reuses_only_for_the_same_content():
    at = AppTest.from_function(_compute_script, default_timeout=30)
    s = default_scenario()
    at.session_state["scenario"] = s
    at.run()
    assert not at.exception
    assert at.session_state["same_object"]
    np.testing.assert_array_equal(at.session_state["weights"], run_scenario(s).attention.weights)
    at.run()  # nothing changed: the same result object
    assert at.session_state["ids"][0] == at.session_state["ids"][1]
    edited = replace(s, x=s.x + np.eye(*s.x.shape))  # a new scenario with other numbers
    at.session_state["scenario"] = edited
    at.run()
    assert at.session_state["ids"][2] != at.session_state["ids"][1]
    want = run_scenario(edited).attention.weights
    np.testing.assert_array_equal(at.session_state["weights"], want)
    assert not np.allclose(want, run_scenario(s).attention.weights)
    s.x[1, 1] += 3.0  # the same object edited in place: no stale result either
    at.session_state["scenario"] = s
    at.run()
    np.testing.assert_array_equal(at.session_state["weights"], run_scenario(s).attention.weights)


def test_compute_error_is_shown_on_every_rerun():
    at = AppTest.from_function(_compute_script, default_timeout=30)
    s = default_scenario()
    at.session_state["scenario"] = replace(s, tokens=())
    at.run()
    assert at.session_state["weights"] is None
    assert len(at.error) == 2 and "no tokens" in at.error[0].value
    at.run()
    assert len(at.error) == 2  # a remembered error is still reported


def test_compute_memo_is_bounded():
    from attnviz.ui import controls

    at = AppTest.from_function(_compute_script, default_timeout=30)
    s = default_scenario()
    for i in range(controls._MEMO_ENTRIES + 3):
        at.session_state["scenario"] = replace(s, temperature=1.0 + i / 10)
        at.run()
    assert len(at.session_state[controls._MEMO]) == controls._MEMO_ENTRIES


def test_playground_edit_is_never_stale():
    at = open_page("playground")
    before = chart_z_by_key(at, "playground_fig_weights")
    key = next(k for k in editor_keys(at) if k.endswith("playground_x_v0"))
    edit_cells(at, key, {0: {"d0": 5.0}})
    assert not at.exception
    after = chart_z_by_key(at, "playground_fig_weights")
    want = run_scenario(at.session_state["scenario"]).attention.weights
    assert at.session_state["scenario"].x[0, 0] == 5.0
    np.testing.assert_allclose(after, want, atol=1e-12)
    assert not np.allclose(after, before)
    edit_cells(at, key, {0: {"d0": 1.0}})  # back to the original value: the original picture
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_weights"), before, atol=1e-12)


# ------------------------------------------------------------------------------ heatmap

def _prune(obj):
    """Drop what plotly treats as unset, for comparison: empty dicts (``title: {}``) and
    template trace defaults that set nothing (``[{"type": "scatter"}]``)."""
    if isinstance(obj, dict):
        out = {k: _prune(v) for k, v in obj.items()}
        return {k: v for k, v in out.items() if v != {} and v != []}
    if isinstance(obj, list):
        items = [_prune(v) for v in obj]
        return [v for v in items if not (isinstance(v, dict) and set(v) == {"type"})]
    return obj


_RNG = np.random.default_rng(3)
_CASES = [
    (_RNG.random((4, 4)), dict(kind="weights")),
    (_RNG.standard_normal((3, 5)), dict(title="T", x_title="key", y_title="query")),
    (np.array([[1.0, -np.inf], [0.5, 2.0]]), dict(highlight=[1, (0, 1)])),
    (np.array([[1.0, 0.0], [1.0, 1.0]]), dict(kind="mask")),
    (_RNG.random((200, 130)), dict(kind="weights", x_title="key")),  # float32 payload
    (_RNG.standard_normal((20, 30)), dict(values=heatmap_module.Values(zmin=-1, zmax=1),
                                            sizing=heatmap_module.Sizing(role="square"))),
    (_RNG.random(5), dict(values=heatmap_module.Values(show=True, digits=2))),
    (np.full((3, 3), -np.inf), dict(values=heatmap_module.Values(show=False))),
    (np.abs(_RNG.standard_normal((6, 2))), dict(kind="sequential", title="s")),
]


@pytest.mark.parametrize("z, kwargs", _CASES)
def test_fast_heatmap_equals_validated(z, kwargs, monkeypatch):
    fast = heatmap_module.heatmap(z, **kwargs)
    monkeypatch.setattr(base_module, "_VALIDATE", True)
    validated = heatmap_module.heatmap(z, **kwargs)
    a = _prune(json.loads(pio.to_json(fast, validate=False)))
    b = _prune(json.loads(pio.to_json(validated)))
    assert a == b
    assert fast.data[0].type == "heatmap"
    np.testing.assert_array_equal(np.asarray(fast.data[0].z, dtype=float),
                                  np.asarray(validated.data[0].z, dtype=float))


def _chart_cases():
    from attnviz.figures import charts, line_view, lines
    from attnviz.teach.sqrt_dk import sqrt_dk_experiment
    res = sqrt_dk_experiment((1, 4, 16), t_k=8, n_queries=50)
    x = np.arange(7)
    w = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 4))  # (2 heads, 4, 4)
    labels = [f"{i}:t" for i in range(4)]
    return [
        lambda: charts.variance_figure(res), lambda: charts.entropy_figure(res),
        lambda: charts.max_weight_figure(res),
        lambda: charts.grouped_bars(["k0", "k1"], {"a": [0.2, 0.8], "b": [0.5, 0.5]},
                                    y_title="weight", y_range=(0.0, 1.05)),
        lambda: charts.grouped_bars(["k0"], {"a": [1.0]}),
        lambda: lines.line_chart(x, {"d0": np.sin(x), "d1": np.cos(x)}, title="PE",
                                 x_title="position", y_range=(-1.05, 1.05)),
        lambda: lines.line_chart(np.arange(100), {"s": np.arange(100.0)}, references=("s",)),
        lambda: line_view.head_view(w, labels, labels),
        lambda: line_view.head_view(w, labels, labels, heads=[1], focus=("key", 2)),
    ]


@pytest.mark.parametrize("case", range(9))
def test_fast_charts_equal_validated(case, monkeypatch):
    """Line, bar and line-view charts go through the same unvalidated construction as heatmaps."""
    build = _chart_cases()[case]
    fast = build()
    monkeypatch.setattr(base_module, "_VALIDATE", True)
    validated = build()
    assert _prune(json.loads(pio.to_json(fast, validate=False))) == _prune(
        json.loads(pio.to_json(validated)))
    assert json.loads(pio.to_json(fast, validate=False))["layout"]["template"] == {}


def test_fast_heatmap_still_validates_callers_updates():
    fig = heatmap_module.heatmap(np.eye(2))
    fig.update_layout(height=400)
    assert fig.layout.height == 400
    with pytest.raises(ValueError):
        fig.update_layout(not_a_plotly_property=1)


def _contains(outer, inner) -> bool:
    """Every key of ``inner`` is in ``outer`` with the same value (nested dicts: recursively)."""
    if isinstance(inner, dict):
        return isinstance(outer, dict) and all(
            k in outer and _contains(outer[k], v) for k, v in inner.items())
    return outer == inner


def test_heatmap_writes_out_the_default_template():
    fig = heatmap_module.heatmap(np.eye(2), title="t", x_title="key")
    d = json.loads(pio.to_json(fig, validate=False))
    full = pio.templates[pio.templates.default].to_plotly_json()  # what plotly would apply
    assert d["layout"]["template"] == {}  # plotly.js must not apply another template
    ours = {"title", "font", "plot_bgcolor", "xaxis", "yaxis", "margin", "height"}
    kept = [k for k in full["layout"] if k not in base_module._TEMPLATE_SKIP]
    assert kept
    for key in kept:
        value = full["layout"][key]
        if key not in ours:
            assert d["layout"][key] == value, key
        elif isinstance(value, dict):  # the template's other sub-properties still apply
            for sub, v in value.items():
                if sub not in ("text", "x", "size", "title"):
                    assert _contains(d["layout"][key].get(sub), v), (key, sub)
    heat = dict(full["data"].get("heatmap", [{}])[0])
    for key, value in heat.items():
        if key not in ("type", "colorscale"):
            assert _contains(d["data"][0][key], value), key
    assert "key" in d["layout"]["xaxis"]["title"]["text"]


def test_float32_payload_hover_shows_only_digits_float32_holds():
    big = heatmap_module.heatmap(np.full((200, 200), 1 / 3),
                                 values=heatmap_module.Values(show=False))
    assert np.asarray(big.data[0].z).dtype == np.float32
    assert "%{z:.6g}" in big.data[0].hovertemplate  # 0.333333, not 0.3333333433
    small = heatmap_module.heatmap(np.full((20, 20), 1 / 3))
    assert np.asarray(small.data[0].z).dtype == np.float64
    assert "%{z:.10g}" in small.data[0].hovertemplate


@pytest.mark.parametrize("y_labels, colour_bar", [(True, True), (False, False), (True, False)])
def test_compact_grid_cell_equals_the_update_helpers(y_labels, colour_bar):
    from attnviz.figures.grid import compact

    def build():
        return heatmap_module.heatmap(np.array([[0.25, -np.inf], [0.5, 0.5]]), ["a", "b"],
                                      ["c", "d"], kind="weights", x_title="key", y_title="q")

    fast = compact(build(), y_labels=y_labels, colour_bar=colour_bar)
    slow = build()
    slow.update_traces(showscale=colour_bar, selector=dict(type="heatmap"))
    slow.update_xaxes(title=None)
    slow.update_yaxes(title=None, showticklabels=y_labels)
    left, top = slow.layout.margin.l - 22, slow.layout.margin.t - 12  # no titles: no room
    slow.update_layout(margin=dict(l=left if y_labels else 4, t=top,
                                   **({} if colour_bar else {"r": 4})))
    assert _prune(json.loads(pio.to_json(fast, validate=False))) == _prune(
        json.loads(pio.to_json(slow, validate=False)))
    assert fast.data[0].showscale is colour_bar and fast.data[1].showscale is colour_bar
