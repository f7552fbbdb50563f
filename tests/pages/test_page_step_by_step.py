"""AppTests of the Step by step page, plus the tables and lines it writes (attnviz.ui.steps; the
row's arithmetic itself is tested in tests/core/test_explain.py).

Golden numbers: seed 000 and seed 002 print the first word's scores, weights and output; seed
001's causal example has weights [[1, 0], [0.1503, 0.8497]] (the notebook's own print is wrong).
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_specs, chart_z_by_key, charts, edit_cells, open_page

from attnviz import PRESETS, causal_mask, run_scenario, scaled_dot_product_attention
from attnviz.teach.explain import number
from attnviz.teach.text import step_by_step as text
from attnviz.ui import steps

COL = text.COLUMNS
CHAIN_COL = COL["weight"]
TERM0 = text.VALUE_TERM.format(m=0)  # the column α·v[0]


def dim(name: str, m: int = 0) -> str:
    """The column name of dimension m of vector ``name`` ("q[0]")."""
    return text.DIMENSION.format(name=name, m=m)
# seed 001, query 1: scores q_1·k = [2, 5], scaled by 1/√3; weight of key 1 = 1 / (1 + e^(−3/√3))
W11 = 1.0 / (1.0 + np.exp(-3.0 / np.sqrt(3.0)))  # 0.84967455...


def frame_with(at, column: str):
    """The first table of the page that has ``column``."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with column {column!r}")


def sum_table(at):
    """The weighted-sum table (α, α·v[m] per key and the Σ row)."""
    return frame_with(at, TERM0)


def load_preset(at, key: str):
    """Load a preset through the sidebar, as a user would."""
    at.selectbox(key="sidebar_preset").set_value(key)
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def highlighted_rows(at) -> list[tuple[float, float]]:
    """(y0, y1) of every outline drawn on the weights chart."""
    spec = chart_specs(at)[chart_keys(at).index("step_by_step_fig_weights")]
    shapes = spec["layout"].get("shapes", [])
    return [(s["y0"], s["y1"]) for s in shapes]


@pytest.fixture
def at():
    return open_page("step_by_step")


# --- the page ----------------------------------------------------------------------------------

def test_default_scenario_shows_seed_000_first_word(at):
    """Seed 000's printed numbers for word 1: scores, weights and output."""
    assert len(charts(at)) == 1
    assert not at.error and not at.warning
    chain = frame_with(at, CHAIN_COL)
    np.testing.assert_array_equal(chain[COL["score"]].to_numpy(), [8, 2, 10, 2])
    np.testing.assert_allclose(chain[CHAIN_COL].to_numpy(),
                               [0.23608986, 0.00738988, 0.74913039, 0.00738988], atol=1e-8)
    np.testing.assert_allclose(sum_table(at).loc[text.SUM_LABEL].to_numpy()[1:],
                               [0.98522025, 1.74174051, 0.75652026], atol=1e-8)
    assert at.code[0].value.splitlines()[2] == "q_0·k_2 = 2×2 + 0×4 + 2×3 = 10"
    assert highlighted_rows(at) == [(-0.5, 0.5)]


def test_numbers_equal_the_core(at):
    """Every number in the step table is the core's, for every query."""
    res = run_scenario(PRESETS["seed_000"].build()).attention
    np.testing.assert_array_equal(chart_z_by_key(at, "step_by_step_fig_weights"), res.weights)
    for i in range(4):
        at.selectbox(key="step_by_step_query").set_value(i).run()
        chain = frame_with(at, CHAIN_COL)
        np.testing.assert_array_equal(chain[COL["score"]].to_numpy(), res.scores[i])
        np.testing.assert_array_equal(chain[COL["scaled"]].to_numpy(), res.scaled[i])
        np.testing.assert_array_equal(chain[COL["masked"]].to_numpy(), res.masked[i])
        np.testing.assert_array_equal(chain[CHAIN_COL].to_numpy(), res.weights[i])
        np.testing.assert_allclose(chain[COL["exp"]] / chain[COL["exp"]].sum(), res.weights[i],
                                   rtol=1e-15)
        np.testing.assert_array_equal(sum_table(at).loc[text.SUM_LABEL].to_numpy()[1:],
                                      res.output[i])
        np.testing.assert_array_equal(frame_with(at, dim("q")).to_numpy()[0], res.q[i])


def test_changing_the_query_moves_the_highlight_and_the_numbers(at):
    before = frame_with(at, CHAIN_COL)[COL["score"]].to_numpy()
    at.selectbox(key="step_by_step_query").set_value(2).run()
    assert highlighted_rows(at) == [(1.5, 2.5)]
    after = frame_with(at, CHAIN_COL)[COL["score"]].to_numpy()
    assert not np.array_equal(before, after)
    assert all(line.startswith("q_2·k_") for line in at.code[0].value.splitlines())
    assert any("m_{2}" in latex.value for latex in at.latex)


def test_seed_002_first_word(at):
    load_preset(at, "seed_002")
    chain = frame_with(at, CHAIN_COL)
    np.testing.assert_array_equal(chain[COL["score"]].to_numpy(), [23, 11, 18, 29])
    np.testing.assert_allclose(
        chain[CHAIN_COL].to_numpy(),
        [3.02989149e-02, 2.96856554e-05, 1.68937823e-03, 9.67982021e-01], rtol=1e-8)
    np.testing.assert_allclose(sum_table(at).loc[text.SUM_LABEL].to_numpy()[1:],
                               [0.99997031, 1.96798202, 0.96801171], atol=1e-8)


def test_seed_001_causal_preset_gives_the_right_weights(at):
    load_preset(at, "seed_001_causal")
    assert at.session_state["scenario"].direct
    weights = chart_z_by_key(at, "step_by_step_fig_weights")
    np.testing.assert_allclose(weights, [[1, 0], [1 - W11, W11]], rtol=1e-14, atol=0)
    chain = frame_with(at, CHAIN_COL)  # query 0: key 1 is in the future
    assert chain[COL["allowed"]].tolist() == [True, False]
    assert chain[COL["masked"]].iloc[1] == "−∞" and chain[COL["exp"]].iloc[1] == 0  # −∞ written out
    at.selectbox(key="step_by_step_query").set_value(1).run()
    chain = frame_with(at, CHAIN_COL)
    np.testing.assert_allclose(chain[CHAIN_COL].to_numpy(), [0.1503254469, 0.8496745531],
                               atol=1e-10)
    np.testing.assert_allclose(sum_table(at).loc[text.SUM_LABEL].to_numpy()[1:],
                               [W11, 1 - W11, W11], rtol=1e-14)
    assert at.code[0].value.splitlines() == ["q_1·k_0 = 0×1 + 1×2 + 0×3 = 2",
                                             "q_1·k_1 = 0×4 + 1×5 + 0×6 = 5"]


def test_direct_mode_edits_q_and_the_edit_survives_a_page_switch(at):
    load_preset(at, "seed_001_causal")
    version = at.session_state["editor_version"]
    edit_cells(at, f"step_by_step_q_in_v{version}", {0: {"q1": 2.0}})  # q_0 = [1, 2, 0]
    assert not at.exception
    assert at.session_state["scenario"].q_in.tolist() == [[1, 2, 0], [0, 1, 0]]
    chain = frame_with(at, CHAIN_COL)
    np.testing.assert_array_equal(chain[COL["score"]].to_numpy(), [5, 14])
    # q_1 is unchanged; its weights follow the core on the edited Q
    expected = scaled_dot_product_attention([[1, 2, 0], [0, 1, 0]], [[1, 2, 3], [4, 5, 6]],
                                            [[0, 1, 0], [1, 0, 1]], mask=causal_mask(2))
    np.testing.assert_array_equal(chart_z_by_key(at, "step_by_step_fig_weights"), expected.weights)
    at.switch_page("pages/masks.py").run()
    at.switch_page("pages/step_by_step.py").run()
    assert not at.exception
    assert at.session_state["scenario"].q_in.tolist() == [[1, 2, 0], [0, 1, 0]]
    assert frame_with(at, CHAIN_COL)[COL["score"]].tolist() == [5, 14]


def test_sleepy_single_query_seed_004(at):
    """Seed 004: b = softmax(q·Kᵀ/√3) for "book", output = b·V (sentiment values)."""
    load_preset(at, "seed_004_sleepy")
    chain = frame_with(at, CHAIN_COL)
    np.testing.assert_array_equal(chain[COL["score"]].to_numpy(), [0, 1, -4, 7, 0, 5])
    scores = np.array([0, 1, -4, 7, 0, 5]) / np.sqrt(3)
    b = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose(chain[CHAIN_COL].to_numpy(), b, rtol=1e-12)
    out = b @ np.array([0, -0.2, 0.3, 0.4, 0, 0.1])
    np.testing.assert_allclose(sum_table(at).loc[text.SUM_LABEL, TERM0], out, rtol=1e-12)
    assert "q_0·k_2 = 0×1 + 2×(−1) + 1×(−2) = −4" in at.code[0].value


def test_multi_head_picks_a_head(at):
    load_preset(at, "seed_004_two_heads")
    res = run_scenario(PRESETS["seed_004_two_heads"].build()).attention
    np.testing.assert_array_equal(chart_z_by_key(at, "step_by_step_fig_weights"), res.weights[0])
    at.selectbox(key="step_by_step_head").set_value(1).run()
    at.selectbox(key="step_by_step_query").set_value(3).run()
    np.testing.assert_array_equal(chart_z_by_key(at, "step_by_step_fig_weights"), res.weights[1])
    chain = frame_with(at, CHAIN_COL)
    np.testing.assert_array_equal(chain[COL["score"]].to_numpy(), res.heads[1].scores[3])
    np.testing.assert_array_equal(chain[CHAIN_COL].to_numpy(), res.heads[1].weights[3])
    np.testing.assert_array_equal(sum_table(at).loc[text.SUM_LABEL].to_numpy()[1:],
                                  res.head_outputs[1, 3])
    assert highlighted_rows(at) == [(2.5, 3.5)]
    # through W_O: row 3 of the concatenation and of the output, head 1's slice named
    np.testing.assert_array_equal(frame_with(at, dim("concat")).to_numpy()[0], res.concat[3])
    np.testing.assert_array_equal(frame_with(at, dim("o")).to_numpy()[0], res.output[3])
    assert text.CONCAT_SLICE.format(h=1, start=2, stop=3) in [c.value for c in at.caption]


def test_additive_shows_its_own_chain(at):
    load_preset(at, "bahdanau")
    sc = PRESETS["bahdanau"].build()
    res = run_scenario(sc)
    att = res.attention
    at.selectbox(key="step_by_step_query").set_value(1).run()
    chain = frame_with(at, CHAIN_COL)
    assert COL["score"] not in chain.columns
    np.testing.assert_array_equal(chain[COL["additive_score"]].to_numpy(), att.scores[1])
    np.testing.assert_array_equal(chain[CHAIN_COL].to_numpy(), att.weights[1])
    np.testing.assert_array_equal(frame_with(at, dim("f")).to_numpy(), att.features[1])
    np.testing.assert_allclose(frame_with(at, dim("a")).to_numpy()[0], res.x[1] @ sc.w_a_q)
    np.testing.assert_array_equal(sum_table(at).loc[text.SUM_LABEL].to_numpy()[1:],
                                  att.output[1])
    assert at.code[0].value.startswith("e_1,0 = v_a·f_1,0 = ")


def test_fully_masked_query_shows_zeros_and_a_warning(at):
    at.session_state["scenario"] = replace(at.session_state["scenario"], mask_kind="padding",
                                           valid_len=0)
    at.run()
    assert not at.exception
    assert any(text.FULLY_MASKED in w.value for w in at.warning)
    chain = frame_with(at, CHAIN_COL)
    assert (chain[COL["masked"]] == "−∞").all()  # a column holding −∞ is written out
    assert (chain[CHAIN_COL] == 0).all() and (chain[COL["exp"]] == 0).all()
    assert (sum_table(at).loc[text.SUM_LABEL] == 0).all()


def test_tables_format_numbers_in_the_grid_and_write_minus_infinity(at):
    """Number columns stay numbers (6 significant digits set as the grid's format); a column
    with −∞ is text in the same format, so the table reads the same either way."""
    load_preset(at, "seed_001_causal")
    chain_el = next(df for df in at.dataframe if CHAIN_COL in df.value.columns)
    config = json.loads(chain_el.proto.columns)
    assert config[COL["score"]]["type_config"]["format"] == "%.6g"
    masked = config[COL["masked"]]
    assert masked["type_config"] == {} or "format" not in masked.get("type_config", {})
    assert masked["alignment"] == "right"
    chain = chain_el.value
    assert chain[COL["masked"]].tolist() == [number(chain[COL["scaled"]].iloc[0], 6, "table"),
                                            "−∞"]
    assert number(-0.123456789, 6, "table") == "-0.123457"
    assert number(1e-9, 6, "table") == "1e-09" and number(-np.inf, 6, "table") == "−∞"


def test_fewer_tokens_resets_the_query_choice(at):
    at.selectbox(key="step_by_step_query").set_value(3).run()
    load_preset(at, "seed_001_causal")  # two queries: query 3 no longer exists
    assert at.selectbox(key="step_by_step_query").value == 0
    assert highlighted_rows(at) == [(-0.5, 0.5)]


# --- attnviz.ui.steps and the formatter -------------------------------------------------------

def test_written_dot_formats_negatives_and_long_vectors():
    assert steps.written_dot(np.array([1.0, -2.0]), np.array([0.5, 3.0]), "q_0·k_1", -5.5) \
        == "q_0·k_1 = 1×0.5 + (−2)×3 = −5.5"
    long = steps.written_dot(np.ones(20), np.ones(20), "q_0·k_0", 20.0)
    assert long == "q_0·k_0 = 1×1 + 1×1 + 1×1 + 1×1 + … (20 terms) = 20"
    assert number(-np.inf) == "−∞" and number(-0.0) == "0"


def test_scale_is_written_as_one_over_root_dk(at):
    assert any(r"\text{scale} = 1/\sqrt{3} = 0.57735" in latex.value for latex in at.latex)


def test_a_scenario_the_core_rejects_gives_a_message_not_a_traceback(at):
    at.session_state["scenario"] = replace(at.session_state["scenario"], mask_kind="custom",
                                           custom_mask=None)
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "reset it on the Masks page" in at.error[0].value
    assert not charts(at)


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_draws_with_the_core_numbers(at, key):
    load_preset(at, key)
    assert not at.error
    res = run_scenario(PRESETS[key].build()).attention
    weights = res.weights[0] if res.weights.ndim == 3 else res.weights  # head 0
    np.testing.assert_array_equal(chart_z_by_key(at, "step_by_step_fig_weights"), weights)
    np.testing.assert_array_equal(frame_with(at, CHAIN_COL)[CHAIN_COL].to_numpy(), weights[0])


def test_formulas_follow_the_settings(at):
    """No √d_k with scale "none", τ only when it is not 1, M only when something is masked."""
    assert not any(r"\tau" in m.value or "M_{ij}" in m.value for m in at.latex)
    assert text.TITLES["mask"] not in [h.value.split(". ", 1)[-1] for h in at.subheader]
    at.session_state["scenario"] = replace(at.session_state["scenario"], scale_mode="none",
                                           temperature=2.0, mask_kind="causal")
    at.run()
    assert not at.exception
    latex = [m.value for m in at.latex]
    assert not any(r"\sqrt" in m for m in latex)
    assert any(r"s'_{ij} = s_{ij} \div \tau" in m for m in latex)
    assert any("M_{ij}" in m for m in latex)
    assert any(f"\n{text.TAU_LINE.format(tau='2')}\n" in m for m in latex)  # no scale line
    titles = [h.value.split(". ", 1)[-1] for h in at.subheader]
    assert text.TITLES["mask"] in titles
    np.testing.assert_array_equal([int(h.value.split(".")[0]) for h in at.subheader],
                                  range(1, len(titles) + 1))  # numbered without gaps
