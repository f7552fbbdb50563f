"""AppTest: the Induction page — opens on the shipped model (loss, the replayable grid, scores,
loss by position, residual stream), ablation, the classroom experiments, settings out of
range, live training within the click budget, and opening a head as the current scenario."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_keys, decode, open_page, spec_by_key, switch_to

from attnviz.io.examples.make_induction_model import load_induction_model
from attnviz.scenarios import induction, limits
from attnviz.scenarios.induction import InductionSettings, induction_loss, train_induction
from attnviz.teach.text import induction as text
from attnviz.ui import induction_view as view
from attnviz.ui import state

SHIPPED = load_induction_model()
CHARTS = ["induction_fig_grid", "induction_fig_scores", "induction_fig_positions",
          "induction_fig_residual"]


def ok(at):
    assert not at.exception, [e.message for e in at.exception]
    return at


def on_page():
    return ok(open_page("induction"))


def messages(elements) -> list[str]:
    return [e.value for e in elements]


def heads(z, layout, n_layers=2, n_heads=2, t=24) -> np.ndarray:
    """Every head's pattern cut from the grid's one heatmap, where its axes' position labels
    put it: (n_layers, n_heads, t, t)."""
    z = decode(z)
    cols = np.reshape(layout["xaxis2"]["tickvals"], (n_heads, t))
    rows = np.reshape(layout["yaxis2"]["tickvals"], (n_layers, t))
    return np.array([[z[np.ix_(r, c)] for c in cols] for r in rows])


def test_it_opens_on_the_shipped_model_with_every_chart_and_the_replay():
    at = on_page()
    assert chart_keys(at) == CHARTS
    grid = spec_by_key(at, "induction_fig_grid")
    # the loss curve is the shipped model's own record
    np.testing.assert_array_equal(decode(grid["data"][0]["y"]), SHIPPED.record["losses"])
    frames = grid["frames"]
    assert [f["name"] for f in frames] == [str(s) for s in SHIPPED.record["frames"]]
    assert len(frames) == 51
    # the last frame (and the figure as drawn) is the shipped model's attention, every head
    layout, final = grid["layout"], SHIPPED.record["final_weights"]
    np.testing.assert_allclose(heads(frames[-1]["data"][0]["z"], layout), final, atol=1e-7)
    np.testing.assert_allclose(heads(grid["data"][1]["z"], layout), final, atol=1e-7)
    # between the patterns nothing is drawn (NaN), and the labels name the positions
    assert np.isnan(decode(grid["data"][1]["z"])).sum() == decode(
        grid["data"][1]["z"]).size - 4 * 24 * 24
    shown = [s for s in layout["xaxis2"]["ticktext"][:24] if s]
    assert shown[:2] == [f"0:t{SHIPPED.record['heldout_tokens'][0]}",
                         f"2:t{SHIPPED.record['heldout_tokens'][2]}"]  # every other one
    # the first frame is before training: nearly uniform attention, far from the last
    first = heads(frames[0]["data"][0]["z"], layout)[1, 1]
    assert np.abs(first - final[1, 1]).max() > 0.5
    labels = [b["label"] for b in grid["layout"]["updatemenus"][0]["buttons"]]
    assert labels == [text.PLAY, text.PAUSE]
    assert grid["layout"]["sliders"][0]["active"] == 50
    # its height follows the screen in the browser, never below what it is built with
    margin = grid["layout"]["margin"]
    fit = grid["view"]["fit"]  # (asked of the chart component: plotly_fit.js)
    assert fit["rows"] == 1 and fit["minRow"] == grid["layout"]["height"] - margin["t"] - \
        margin["b"] and fit["maxRow"] > fit["minRow"] and fit["bottom"] > margin["b"]
    assert len(grid["layout"]["shapes"]) == 2  # the phase change marked: band and line
    assert grid["layout"]["shapes"][1]["x0"] == SHIPPED.record["phase_change"][0]
    # the heads named by their scores
    assert any(text.FORMED.split(":")[0] in s and "L0 H1" in s and "L1 H1" in s
               for s in messages(at.success))
    titles = [a["text"] for a in grid["layout"]["annotations"]]
    assert titles == ["<b>L0 H0</b>", "<b>L0 H1 · previous-token</b>",  # L0 H0: 0.26, unnamed
                      "<b>L1 H0 · induction</b>", "<b>L1 H1 · induction</b>"]
    scores = spec_by_key(at, "induction_fig_scores")
    assert len(scores["data"]) == 3 * 4  # three scores × four heads
    np.testing.assert_allclose(decode(scores["data"][4 + 3]["y"]),
                               SHIPPED.record["prefix_matching"][:, 1, 1], rtol=1e-12)
    assert any(text.SHIPPED_SOURCE.format(steps=300, seed=0) == c for c in messages(at.caption))


def test_the_first_visit_reads_the_recorded_frames_and_trains_nothing(monkeypatch):
    """Counted, not timed: a fresh server process (the shipped model's cache cleared) opening
    the page takes no training step, and runs the model forward only for the ablation's loss
    and the residual stream (retraining the shipped model took 300 gradient steps and 102
    forward passes for its frames)."""
    calls = {"gradients": 0, "forward": 0, "start": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(induction, "loss_and_gradients",
                        counted("gradients", induction.loss_and_gradients))
    monkeypatch.setattr(induction, "forward", counted("forward", induction.forward))
    monkeypatch.setattr(view, "start_training", counted("start", view.start_training))
    view.shipped.clear()
    at = on_page()
    assert chart_keys(at) == CHARTS
    assert calls == {"gradients": 0, "forward": 2, "start": 0}, calls
    grid = spec_by_key(at, "induction_fig_grid")
    assert len(grid["frames"]) == 51  # the replay is all there
    np.testing.assert_array_equal(heads(grid["frames"][25]["data"][0]["z"], grid["layout"]),
                                  SHIPPED.record["weights"][25])


def test_late_tokens_of_the_repeat_are_easier_than_early_ones():
    at = on_page()
    spec = spec_by_key(at, "induction_fig_positions")
    before, after = (decode(d["y"]) for d in spec["data"][:2])
    repeat = slice(int(spec["layout"]["shapes"][0]["x0"] + 0.5),
                   int(spec["layout"]["shapes"][0]["x1"] - 0.5) + 1)
    assert after[repeat].mean() < 0.5 * before[repeat].mean()
    assert after[repeat].mean() < after[:repeat.start].mean()


def test_ablating_the_induction_head_brings_the_loss_back():
    at = on_page()
    full = induction_loss(SHIPPED.params, SHIPPED.settings)
    assert [m.value for m in at.metric] == [f"{full:.3f}"]
    at.multiselect(key=view.ABLATE).set_value(["L1 H1"])
    ok(at.run())
    keep = np.array([[True, True], [True, False]])
    ablated = induction_loss(SHIPPED.params, SHIPPED.settings, keep)
    assert [m.value for m in at.metric] == [f"{full:.3f}", f"{ablated:.3f}"]
    assert ablated > full + 0.3  # measured 0.94 -> 1.42
    # the loss by position gains the ablated line, the residual stream loses the head's row
    assert len(spec_by_key(at, "induction_fig_positions")["data"]) == 3
    z = decode(spec_by_key(at, "induction_fig_residual")["data"][0]["z"])
    assert np.all(z[4] == 0) and np.all(z[3] > 0)


@pytest.mark.parametrize("key,expected", [
    ("one_layer", dict(induction_layers=1, induction_heads=2, induction_lr=0.01)),
    ("no_positions", dict(induction_positional="none", induction_layers=2)),
    ("one_head", dict(induction_heads=1, induction_layers=2)),
    ("high_lr", dict(induction_lr=0.1, induction_layers=2)),
])
def test_an_experiment_button_sets_the_settings(key, expected):
    at = on_page()
    at.session_state["induction_layers"] = 3  # changed before: the button resets it
    ok(at.run())
    ok(at.button(key=f"induction_exp_{key}").click().run())
    for widget, value in expected.items():
        assert at.session_state[widget] == value, widget
    assert text.EXPERIMENT_NOTES[key] in messages(at.info)


@pytest.mark.parametrize("widget,value,message", [
    ("induction_steps", 5000, "steps must be between 1 and 3,000"),
    ("induction_lr", 0.0, "the learning rate must be a number above 0"),
    ("induction_lr", 5.0, "the learning rate must be a number above 0 and at most 1"),
])
def test_settings_out_of_range_are_refused_with_a_message(widget, value, message):
    at = on_page()
    at.session_state[widget] = value
    ok(at.run())
    assert any(text.CANNOT in e and message in e for e in messages(at.error)), messages(at.error)
    assert at.button(key="induction_train").disabled


def test_train_again_records_a_run_that_replaces_the_shipped_one():
    at = on_page()
    at.session_state["induction_steps"] = 40
    at.session_state["induction_seed"] = 3
    ok(at.button(key="induction_train").click().run())
    run = at.session_state[view.RUN]["run"]
    expected = train_induction(InductionSettings(steps=40, seed=3))
    np.testing.assert_array_equal(run.losses, expected.losses)
    grid = spec_by_key(at, "induction_fig_grid")
    assert [f["name"] for f in grid["frames"]] == [str(s) for s in expected.frames]
    np.testing.assert_array_equal(decode(grid["data"][0]["y"]), expected.losses)
    mb = f"{run.nbytes() / 1e6:.1f}"
    assert any(c.startswith(text.RUN_SOURCE.split("{")[0]) and f"{mb} MB" in c
               for c in messages(at.caption))
    assert at.session_state[view.RUN]["state"] is None  # done: the training state is let go
    # "open a head" starts on the new run's own induction-head candidate
    assert run.roles.induction != (1, 1)  # not the shipped model's: the selects moved
    assert (at.selectbox(key="induction_open_layer").value,
            at.selectbox(key="induction_open_head").value) == run.roles.induction
    ok(at.button(key="induction_shipped").click().run())  # back to the shipped model
    assert view.RUN not in at.session_state
    assert len(spec_by_key(at, "induction_fig_grid")["frames"]) == 51


def test_a_click_stops_at_the_budget_and_continue_goes_on(monkeypatch):
    monkeypatch.setattr(limits, "TRAIN_SECONDS", 0.3)
    at = on_page()
    at.session_state["induction_steps"] = 3000
    ok(at.button(key="induction_train").click().run())
    record = at.session_state[view.RUN]
    assert record["paused"] == "budget"
    training = record["state"]
    assert 0 < training.step < 3000 and not training.done
    warning = text.BUDGET_OUT.format(budget="0.3", done=training.step, steps=3000)
    assert warning in messages(at.warning), messages(at.warning)
    ok(at.button(key="induction_continue").click().run())
    assert at.session_state[view.RUN]["state"].step > training.step


def test_open_a_head_makes_it_the_scenario_that_step_by_step_shows():
    at = on_page()
    # the select starts on the induction head
    assert (at.selectbox(key="induction_open_layer").value,
            at.selectbox(key="induction_open_head").value) == (1, 1)
    ok(at.button(key="induction_open").click().run())
    sc = at.session_state[state.SCENARIO]
    np.testing.assert_array_equal(sc.w_q, SHIPPED.params["1.w_q"][1])
    np.testing.assert_array_equal(sc.w_o, SHIPPED.params["1.w_o"][1])
    assert sc.variant == "causal" and sc.t == 24
    assert text.OPENED.format(head="L1 H1") in messages(at.success)
    ok(switch_to(at, "step_by_step"))
    assert at.session_state[state.SCENARIO] is sc
    first = f"0:t{SHIPPED.record['heldout_tokens'][0]}"
    shown = [s for spec in map(lambda k: spec_by_key(at, k), chart_keys(at))
             for d in spec["data"] for s in (d.get("x") or []) if isinstance(s, str)]
    assert first in shown, shown[:10]


@pytest.mark.parametrize("page", ["trace", "gradients", "compare"])
def test_an_opened_head_draws_on_the_other_pages(page):
    at = on_page()
    at.session_state["induction_open_layer"] = 0
    at.session_state["induction_open_head"] = 1  # the previous-token head
    ok(at.button(key="induction_open").click().run())
    sc = at.session_state[state.SCENARIO]
    np.testing.assert_array_equal(sc.w_k, SHIPPED.params["0.w_k"][1])
    ok(switch_to(at, page))
    assert at.session_state[state.SCENARIO] is sc
    assert at.header and chart_keys(at), page
    assert not at.error, [e.value for e in at.error]


def test_an_interrupted_run_shows_the_steps_taken_and_goes_on():
    """A run cut by a rerun (Stop, another control) keeps its steps: the page says so and
    Continue goes on from there."""
    from attnviz.scenarios.induction import start_training, train_steps

    at = on_page()
    settings = InductionSettings(steps=60)
    at.session_state["induction_steps"] = 60
    partial = train_steps(start_training(settings), 20)
    at.session_state[view.RUN] = dict(settings=settings, state=partial, run=None, paused="")
    ok(at.run())
    assert text.PAUSED.format(done=20, steps=60) in messages(at.warning)
    assert len(spec_by_key(at, "induction_fig_grid")["data"][0]["y"]["bdata"]) > 0
    ok(at.button(key="induction_continue").click().run())
    record = at.session_state[view.RUN]
    assert record["state"] is None and len(record["run"].losses) == 60  # done, let go
    np.testing.assert_array_equal(record["run"].losses,
                                  train_induction(settings).losses)  # chunking changes nothing
    assert not at.warning


def test_a_rope_model_trains_and_its_head_opens_with_the_rope_variant():
    at = on_page()
    at.session_state["induction_positional"] = "rope"
    at.session_state["induction_steps"] = 20
    ok(at.button(key="induction_train").click().run())
    assert at.session_state[view.RUN]["run"].settings.positional == "rope"
    ok(at.button(key="induction_open").click().run())
    sc = at.session_state[state.SCENARIO]
    assert (sc.variant, sc.mask_kind) == ("rope", "causal")
    ok(switch_to(at, "step_by_step"))
    assert not at.error, [e.value for e in at.error]


def test_an_alibi_model_trains_and_its_head_opens_with_its_slope():
    at = on_page()
    select = at.selectbox(key="induction_positional")
    assert select.options == list(text.POSITIONAL_NAMES.values())  # ALiBi among them
    ok(select.select("alibi").run())
    at.session_state["induction_steps"] = 20
    ok(at.button(key="induction_train").click().run())
    run = at.session_state[view.RUN]["run"]
    assert run.settings.positional == "alibi"
    np.testing.assert_array_equal(
        run.losses, train_induction(InductionSettings(positional="alibi", steps=20)).losses)
    ok(at.button(key="induction_open").click().run())
    sc = at.session_state[state.SCENARIO]
    assert sc.variant == "steps" and "alibi" in [s.name for s in sc.params["steps"]]
    ok(switch_to(at, "step_by_step"))
    assert not at.error, [e.value for e in at.error]


def test_an_opened_head_once_edited_reads_edited_from_its_name():
    """A trained head opened on every page keeps its title while its numbers are the model's,
    and reads "Edited from <title>" in the sidebar once a cell is edited (it kept claiming to
    be the trained head)."""
    from apptest_helpers import edit_cells

    from attnviz.scenarios.presets import EDITED_FROM

    at = on_page()
    ok(at.button(key="induction_open").click().run())
    title = at.session_state[state.SCENARIO].title
    assert title and any(title == t.value for t in at.sidebar.text)
    at = switch_to(at, "playground")
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "3"}}).run()
    assert any(EDITED_FROM.format(title=title) == t.value for t in at.sidebar.text)
