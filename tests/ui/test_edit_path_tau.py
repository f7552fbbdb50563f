"""τ has one control in the lecture view's weights focus, the weights chart's own slider, and
its step repaints in the browser.

The scaled scores and the output follow the slider through frames of one Plotly group; the
rerun that records τ sends figures whose frame-independent part (``still``) is unchanged and
whose shown frame is the one the browser stepped to, so ``plotly_view.js`` redraws nothing.
That is only truthful if the frame a figure starts at is the figure's own drawing: checked
here, bit for bit, with the frames' matrices against a run at each τ.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import pytest
from apptest_helpers import decode, open_page, spec_by_key

from attnviz.figures.heatmap import heatmap, with_slider
from attnviz.scenarios import sweep
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.scenarios.scenario import run_scenario
from attnviz.scenarios.shared_lru import SharedLru
from attnviz.ui.plotly_view import figure_json

CHARTS = ("playground_fig_weights_slot_0", "playground_fig_weights_slot_1",
          "playground_fig_weights_slot_2")
REWEIGHED = [k for k, p in PRESETS.items() if p.build().t <= 12
             and sweep.reweighable(p.build(), "temperature", "output")]


def test_most_presets_reweigh_their_output():
    assert len(REWEIGHED) >= 15 and "seed_000" in REWEIGHED


@pytest.mark.parametrize("key", REWEIGHED)
def test_output_frames_are_a_run_at_each_tau_bit_for_bit(key):
    scenario = PRESETS[key].build()
    taus = [0.05, 0.35, 1.0, 2.5, 5.0]
    for z, tau in zip(sweep.score_sweep(scenario, "temperature", taus, "output"), taus,
                      strict=True):
        np.testing.assert_array_equal(
            z, run_scenario(replace(scenario, temperature=tau)).attention.output)


def test_heads_combined_by_w_o_are_not_reweighed():
    scenario = PRESETS["gqa_8_2"].build()
    assert not sweep.reweighable(scenario, "temperature", "output")
    assert sweep.reweighable(scenario, "temperature", "weights")


def _decoded(trace: dict, key: str):
    value = trace.get(key)
    return decode(value) if isinstance(value, dict) else np.asarray(value)


@pytest.fixture(scope="module")
def weights_focus():
    """The Playground's weights focus after a first τ change (the outlines then stay)."""
    at = open_page("playground", focus="weights")
    scenario = at.session_state["scenario"]
    at.session_state["scenario"] = replace(scenario, temperature=1.05)
    at.run()
    return at, scenario


def test_the_frame_a_figure_starts_at_is_the_figure_itself(weights_focus):
    at, _ = weights_focus
    for key in CHARTS:
        spec = spec_by_key(at, key)
        assert spec["shown"] == "1.05", key
        (frame,) = [f for f in spec["frames"] if f["name"] == spec["shown"]]
        base = spec["data"][0]
        for field in frame["data"][0]:
            got = _decoded(base, field)
            want = _decoded(frame["data"][0], field)
            if field == "z":
                np.testing.assert_array_equal(got.astype(float), want.astype(float))
            else:
                assert np.array_equal(got, want), (key, field)


def test_only_the_frames_values_and_the_sliders_position_depend_on_tau(weights_focus):
    at, scenario = weights_focus
    stills = []
    for tau in (0.05, 4.0, 1.0, 2.0):  # each a change (a rerun with none clears outlines)
        at.session_state["scenario"] = replace(scenario, temperature=tau)
        at.run()
        stills.append([spec_by_key(at, k)["still"] for k in CHARTS])
    assert all(s == stills[0] for s in stills), stills
    at.session_state["scenario"] = replace(scenario, x=scenario.x + 0.5)  # an edit redraws
    at.run()
    changed = [spec_by_key(at, k)["still"] for k in CHARTS]
    assert all(a != b for a, b in zip(changed, stills[0], strict=True))


def test_the_weights_focus_has_one_tau_control(weights_focus):
    at, _ = weights_focus
    assert not [s for s in at.slider if "temperature" in str(s.key)]
    sliders = [len(spec_by_key(at, k)["layout"].get("sliders", [])) for k in CHARTS]
    assert sliders == [0, 1, 0]
    groups = [{f.get("group") for f in spec_by_key(at, k)["frames"]} for k in CHARTS]
    assert groups == [{"tau"}] * 3


def test_a_tau_slider_above_where_the_chart_has_none():
    """A sequence too long for frames keeps τ's slider above the charts (one control still)."""
    from attnviz.figures.heatmap import CELL_TEXT_LIMIT
    from attnviz.scenarios.scenario import resize
    from attnviz.ui import state

    at = open_page("playground", focus="weights")
    at.session_state[state.SCENARIO] = resize(default_scenario(), t=CELL_TEXT_LIMIT + 1)
    at.run()
    assert [s for s in at.slider if "temperature" in str(s.key)]
    assert not spec_by_key(at, "playground_fig_weights_slot_1")["layout"].get("sliders")


def test_the_active_mark_is_not_sent_and_names_the_shown_frame():
    fig = heatmap(np.eye(2), ["a", "b"], ["a", "b"])
    frames = with_slider(fig, [np.eye(2) * k for k in (1, 2, 3)], ["1", "2", "3"], 1,
                         prefix="k: ", group="g")
    assert [f.get("active", False) for f in frames] == [False, True, False]
    spec = json.loads(figure_json(fig, {}, frames=frames))
    assert spec["shown"] == "2" and spec["still"]
    assert not any("active" in f for f in spec["frames"])
    assert {f["group"] for f in spec["frames"]} == {"g"}
    assert "still" not in json.loads(figure_json(go.Figure(), {}))


def test_a_following_chart_fits_its_colour_bar_to_every_frame():
    scaled = [np.array([[1.0, -2.0]]) * k for k in (1, 50, 1000)]
    fig = heatmap(scaled[0], ["a", "b"], ["q"])
    frames = with_slider(fig, scaled, ["1", "50", "1000"], 0, prefix="", slider=False,
                         ranges=True)
    assert not fig.layout.sliders
    assert [f["data"][0]["zmax"] for f in frames] == [2.0, 100.0, 2000.0]
    wide = heatmap(scaled[2], ["a", "b"], ["q"])  # the widest frame drawn on its own
    assert fig.layout.margin.r >= wide.layout.margin.r


# ---------------------------------------------------------------------------------------------
# τ frames from one matrix of raw scores, kept by the scenario without τ
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def runs(monkeypatch) -> list[float]:
    """The τ of every run_scenario call the sweeps make (an empty cache to start from)."""
    calls: list[float] = []
    real = sweep.run_scenario

    def counted(scenario, *args, **kwargs):
        calls.append(scenario.temperature)
        return real(scenario, *args, **kwargs)

    monkeypatch.setattr(sweep, "run_scenario", counted)
    monkeypatch.setattr(sweep, "_CACHE", SharedLru(sweep.CACHE_ENTRIES))
    return calls


def _tau_sweeps(scenario) -> list[list[np.ndarray]]:
    """What the lecture view's weights focus sweeps over τ: weights, scaled scores, output."""
    grid = sweep.temperature_grid()
    return [sweep.score_sweep(scenario, "temperature", grid, m) for m in CHARTS_MATRICES]


CHARTS_MATRICES = ("weights", "scaled", "output")


def test_tau_frames_take_one_run_and_a_new_tau_takes_none(runs):
    scenario = default_scenario()
    first = _tau_sweeps(scenario)
    assert len(runs) == 1  # one run: its raw scores reweighed at every τ, for every chart
    runs.clear()
    again = _tau_sweeps(replace(scenario, temperature=2.35))  # τ released elsewhere
    assert runs == []  # no run: the sweeps are kept by the scenario without τ
    for made, kept in zip(first, again, strict=True):
        assert all(a is b for a, b in zip(made, kept, strict=True))
        assert not any(z.flags.writeable for z in kept)  # shared: read-only


def test_kept_tau_frames_are_the_runs_at_each_tau_bit_for_bit(runs):
    """Frames made at one τ, read back at another, are still a run at each τ."""
    scenario = PRESETS["cat_sat"].build()
    _tau_sweeps(replace(scenario, temperature=0.4))
    grid = sweep.temperature_grid()
    for matrix, zs in zip(CHARTS_MATRICES, _tau_sweeps(replace(scenario, temperature=3.0)),
                          strict=True):
        for tau in (0.05, 1.0, 4.95):
            run = run_scenario(replace(scenario, temperature=tau)).attention
            expected = run.output if matrix == "output" else getattr(run.head(0), matrix)
            np.testing.assert_array_equal(zs[grid.index(tau)], expected)


def test_any_other_change_makes_the_frames_again(runs):
    scenario = default_scenario()
    before = _tau_sweeps(scenario)
    runs.clear()
    x = scenario.x.copy()
    x[0, 0] += 1.0
    after = _tau_sweeps(replace(scenario, x=x))
    assert len(runs) == 1
    assert not np.array_equal(before[0][20], after[0][20])


def test_the_cache_is_bounded(runs):
    scenario = default_scenario()
    for i in range(sweep.CACHE_ENTRIES + 5):
        sweep.score_sweep(replace(scenario, custom_scale=float(i), scale_mode="custom"),
                          "temperature", [0.5, 1.0], "weights")
    assert len(sweep._CACHE) == sweep.CACHE_ENTRIES


def _weights_figure(scenario):
    """The lecture view's weights chart as lecture.temperature_frames makes it."""
    result = run_scenario(scenario).attention
    labels = [f"{i}:{t}" for i, t in enumerate(scenario.tokens)]
    return heatmap(result.weights, labels, labels, kind="weights")


def test_tau_frames_built_once_are_the_frames_built_afresh(monkeypatch):
    """with_slider keeps the frames it built (a τ release changes only the frame shown): the
    kept frames equal those built without the cache, bit for bit, at any τ shown."""
    module = importlib.import_module("attnviz.figures.heatmap")  # the module, not the function

    grid = sweep.temperature_grid()
    scenario = default_scenario()
    zs = sweep.score_sweep(scenario, "temperature", grid, "weights")
    labels = [f"{v:g}" for v in grid]
    first = with_slider(_weights_figure(scenario), zs, labels, 19, prefix="τ = ",
                        kind="weights", group="tau")
    calls = []
    real = module._frames
    monkeypatch.setattr(module, "_frames", lambda *a: calls.append(1) or real(*a))
    moved = replace(scenario, temperature=2.0)
    kept = with_slider(_weights_figure(moved), zs, labels, 39, prefix="τ = ", kind="weights",
                       group="tau")
    assert calls == []  # built on the first call, kept
    monkeypatch.setattr(module, "_CACHE", SharedLru(4))  # no frame kept: built afresh
    fresh = with_slider(_weights_figure(moved), zs, labels, 39, prefix="τ = ",
                        kind="weights", group="tau")
    assert calls == [1]
    assert [f.get("active") for f in kept] == [f.get("active") for f in fresh]
    assert [i for i, f in enumerate(first) if f.get("active")] == [19]  # not marked again
    assert json.dumps(kept, default=_plain) == json.dumps(fresh, default=_plain)


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else str(value)
