"""The Generate page through AppTest: a tiny causal Llama (RoPE, GQA) and GPT-2 saved with their
language-model heads in a tmp models folder (ATTNVIZ_MODELS_DIR), picked from the page's list.

What the page draws is read from the app and compared with the generation made here by
attnviz.io.generate (itself checked against Hugging Face in tests/io/test_generate.py): the
tokens, each step's strips (the new token's rows), the candidates' probabilities, the cache;
a head opened at a step is the scenario whose last query row is the row the page showed; a click
stops at the budget and Continue goes on to the same tokens; refusals name the model; loading
off (a LAN server) shows the Model view's sentence. Skips only where torch/transformers are not
installed; nothing is downloaded.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from apptest_helpers import chart_specs, decode, open_page

from attnviz.io import models_dir as md
from attnviz.scenarios import limits
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import generate as text
from attnviz.teach.text import model_view as mv_text
from attnviz.ui import generate_view as gv
from attnviz.ui import state

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may go online
N = 5
ROUNDING = 5e-6  # float32: the page's torch runs one thread, this process's may run more


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_causal import save_causal_lm
    from hf_models import parity_configs, save_model

    root = tmp_path_factory.mktemp("models")
    save_causal_lm("llama", root / "llama")
    save_causal_lm("gpt2", root / "gpt2")
    save_model(*parity_configs()["llama"], root / "llama_base")  # no LM head saved
    return root


@pytest.fixture(scope="module")
def expected(folder) -> dict:
    """The generations the page should show, made here."""
    from hf_causal import PROMPT

    from attnviz.io.generate import generate, load_causal_lm

    model, tokenizer = load_causal_lm(folder / "llama", root=folder)
    return {"greedy": generate(model, tokenizer, PROMPT, N),
            "sampled": generate(model, tokenizer, PROMPT, N, temperature=1.5, seed=11)}


@pytest.fixture
def at(monkeypatch, folder):
    monkeypatch.delenv(md.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(folder))
    return open_page("generate")


def errors(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def generate_on(at, model: str = "llama", n: int = N, temperature: float | None = None,
                seed: int = 0):
    at.selectbox(key="generate_model").set_value(model)
    at.number_input(key="generate_n").set_value(n)
    if temperature is not None:
        at.radio(key="generate_mode").set_value("sample").run()
        at.number_input(key="generate_temperature").set_value(temperature)
        at.number_input(key="generate_seed").set_value(seed)
    at.button(key="generate_run").click()
    return at.run(timeout=180)


def strips(at, n_layers: int, n_heads: int) -> np.ndarray:
    """The grid's strips as (n_layers, n_heads, t): the row drawn in each strip's first row."""
    spec = next(s for s in chart_specs(at) if s["data"][0]["type"] == "heatmap"
                and s["data"][-1].get("name") == "strips")
    z = decode(spec["data"][0]["z"]).astype(np.float64)
    gap_columns = np.isnan(z).all(axis=0)
    t = int(np.argmax(gap_columns)) if gap_columns.any() else z.shape[1]
    step = t + max(1, t // 8)
    return np.array([[z[layer * 5, h * step:h * step + t] for h in range(n_heads)]
                     for layer in range(n_layers)])


def test_loading_off_says_so_and_offers_nothing(monkeypatch, folder):
    monkeypatch.setenv(md.NO_MODELS_ENV, "1")
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(folder))
    at = open_page("generate")
    assert [i.value for i in at.info] == [mv_text.MODELS_OFF.format(
        env=md.NO_MODELS_ENV, flag=md.ALLOW_MODELS_FLAG)]
    assert not [b for b in at.button if b.key == "generate_run"]
    assert str(folder) not in " ".join(c.value for c in at.caption)


def test_an_empty_models_folder_says_where_to_save_one(monkeypatch, tmp_path):
    monkeypatch.delenv(md.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(tmp_path))
    at = open_page("generate")
    assert [i.value for i in at.info] == [mv_text.MODELS_EMPTY.format(
        path=str(tmp_path), env=md.MODELS_DIR_ENV)]


def test_greedy_generation_is_shown_step_by_step(at, expected):
    gen = expected["greedy"]
    assert at.selectbox(key="generate_model").options == ["gpt2", "llama", "llama_base"]
    at = generate_on(at)
    assert not at.exception and not errors(at), errors(at)
    shown = at.session_state[gv.RECORD]["gen"]
    assert shown.ids.tolist() == gen.ids.tolist() and shown.generated == N
    assert at.slider(key="generate_step").value == N  # the whole text first
    assert at.slider(key="generate_step").max == N
    source = text.SOURCE.format(name="llama", prompt=6, new=N, how=text.GREEDY,
                                kib=f"{shown.nbytes / 1024:,.1f}")
    assert source in [c.value for c in at.caption]
    for k in (N, 2, 0):
        at.slider(key="generate_step").set_value(k).run()
        assert not at.exception
        step = shown.steps[k]  # drawn as recorded; the same as made here, to float32 rounding
        np.testing.assert_allclose(step.rows, gen.steps[k].rows, atol=ROUNDING)
        np.testing.assert_allclose(step.top_probs, gen.steps[k].top_probs, atol=ROUNDING)
        t = step.position + 1
        # the text so far, the step's token marked
        before, new = gen.text(k)
        assert at.markdown[1].value.endswith(f":orange-background[**{new.strip()}**]")
        assert at.markdown[1].value.startswith(before.split()[0])
        # every layer and head's row for that token, as the generation recorded it
        np.testing.assert_allclose(strips(at, 2, 4), step.rows, atol=1e-6)
        # the candidates and their probabilities, best first
        bars = next(s for s in chart_specs(at) if s["data"][0]["type"] == "bar")["data"][0]
        np.testing.assert_allclose(decode(bars["x"]), step.top_probs, rtol=0, atol=1e-12)
        assert list(bars["y"]) == list(gen.top_tokens[k])
        colours = bars["marker"]["color"]
        if k < N:  # the next step's token is drawn orange, and it is the first (greedy)
            assert colours[0] == "#ff7f0e" and set(colours[1:]) == {"#7f7f7f"}
        cache = text.CACHE.format(tokens=t, layers=2, kib=f"{step.cache_bytes / 1024:,.1f}")
        assert any(c.value.startswith(cache) for c in at.caption)
        assert step.cache_bytes == 2 * 2 * 2 * 4 * t * 4  # K and V, 2 layers, 2 kv heads of 4
    assert any(c.value == text.STEP_PROMPT.format(t=6) for c in at.caption)


def test_the_chosen_heads_row_is_drawn_with_its_labels(at, expected):
    gen = expected["greedy"]
    at = generate_on(at)
    at.slider(key="generate_step").set_value(3).run()
    at.selectbox(key="generate_layer").set_value(1)
    at.selectbox(key="generate_head").set_value(2).run()
    row = next(s for s in chart_specs(at) if s["data"][0]["type"] == "heatmap"
               and s["data"][-1].get("name") != "strips")
    np.testing.assert_allclose(decode(row["data"][0]["z"]).astype(float)[0],
                               at.session_state[gv.RECORD]["gen"].steps[3].rows[1, 2],
                               atol=1e-12)
    np.testing.assert_allclose(decode(row["data"][0]["z"]).astype(float)[0],
                               gen.steps[3].rows[1, 2], atol=ROUNDING)
    assert f"**{text.ROW_TITLE.format(layer=1, h=2)}**" in [m.value for m in at.markdown]
    # the strips' click targets: one point per head, at its strip's centre, in head order
    grid = next(s for s in chart_specs(at) if s["data"][-1].get("name") == "strips")
    targets = grid["data"][-1]
    assert len(decode(targets["x"])) == 2 * 4
    assert targets["hovertext"][1 * 4 + 2].startswith("L1 H2<br>most at ")


def test_a_step_opens_its_head_on_every_page(at, expected):
    gen = expected["greedy"]
    at = generate_on(at)
    at.slider(key="generate_step").set_value(2).run()
    at.selectbox(key="generate_layer").set_value(1)
    at.selectbox(key="generate_head").set_value(3).run()
    before = at.session_state[state.SCENARIO]
    assert at.button(key="generate_open").label == mv_text.REAL_OPEN_BUTTON.format(layer=1, h=3)
    at.button(key="generate_open").click()
    at = at.run(timeout=180)
    assert not at.exception and not errors(at), errors(at)
    scenario = at.session_state[state.SCENARIO]
    assert scenario is not before
    assert scenario.title == mv_text.REAL_HEAD_TITLE.format(model_type="llama", layer=1, h=3)
    t = gen.steps[2].position + 1
    assert scenario.x.shape[0] == t == 8  # the 6 prompt tokens and 2 new ones
    weights = np.asarray(run_scenario(scenario).attention.weights)
    # the opened head's last query is the new token: its row is the row the page showed
    np.testing.assert_allclose(weights[-1], gen.steps[2].rows[1, 3], atol=1e-5)
    assert [s.value for s in at.success] == [mv_text.REAL_OPENED.format(layer=1, h=3)]
    links = [(link.proto.page, link.proto.label) for link in at.get("page_link")]
    assert links == [(page.removeprefix("pages/").removesuffix(".py"), label)
                     for page, label in mv_text.REAL_OPEN_PAGES.items()]
    # a weight opened with every head of the model's own numbers: not another head's row
    assert np.abs(weights[-1] - gen.steps[2].rows[1, 2]).max() > 1e-3


def test_sampling_with_a_seed_is_the_generations_draw(at, expected):
    gen = expected["sampled"]
    at = generate_on(at, temperature=1.5, seed=11)
    assert not at.exception and not errors(at), errors(at)
    shown = at.session_state[gv.RECORD]["gen"]
    assert shown.ids.tolist() == gen.ids.tolist()
    assert shown.settings.temperature == 1.5 and shown.settings.seed == 11
    bars = [s for s in chart_specs(at) if s["data"][0]["type"] == "bar"][0]["data"]
    assert len(bars) == 2  # the model's probabilities and those it was drawn from
    np.testing.assert_allclose(decode(bars[1]["x"]), shown.steps[-1].top_sampled, atol=1e-12)
    np.testing.assert_allclose(shown.steps[-1].top_sampled, gen.steps[-1].top_sampled,
                               atol=ROUNDING)
    how = text.SAMPLED.format(t="1.5", seed=11)
    assert any(how in c.value for c in at.caption)


def test_a_click_stops_at_the_budget_and_continue_goes_on(at, expected, monkeypatch):
    monkeypatch.setattr(limits, "TRAIN_SECONDS", 1e-6)  # time for the first token only
    at = generate_on(at)
    record = at.session_state[gv.RECORD]
    assert record["gen"].generated == 1
    assert [w.value for w in at.warning] == [text.BUDGET_OUT.format(budget="1e-06", done=1,
                                                                     n=N)]
    for done in range(2, N + 1):
        at.button(key="generate_continue").click()
        at = at.run(timeout=180)
        assert at.session_state[gv.RECORD]["gen"].generated == done
    gen = at.session_state[gv.RECORD]["gen"]
    assert gen.done and gen.ids.tolist() == expected["greedy"].ids.tolist()
    assert not at.warning and not [b for b in at.button if b.key == "generate_continue"]
    for a, b in zip(gen.steps, expected["greedy"].steps, strict=True):
        np.testing.assert_allclose(a.rows, b.rows, atol=5e-6)


def test_a_model_without_its_head_is_refused_by_name_and_the_last_generation_kept(at):
    at = generate_on(at)
    kept = at.session_state[gv.RECORD]
    at = generate_on(at, model="llama_base")
    said = errors(at)
    assert len(said) == 1 and said[0].startswith("Cannot generate: the weights in ")
    assert "language-model head" in said[0] and "llama_base" in said[0]
    assert str(at.session_state[gv.RECORD]["key"]) == "llama"
    assert at.session_state[gv.RECORD] is kept  # the last generation is still shown
    assert at.slider(key="generate_step").value == N


def test_a_prompt_beyond_the_tokens_shown_is_refused(at):
    at.text_input(key="generate_prompt").set_value(" ".join(["the"] * 125))
    at = generate_on(at, model="gpt2", n=5)
    said = errors(at)
    assert said == ["Cannot generate: the prompt's 125 tokens and 5 new ones make 130; at most "
                    "128 are shown — shorten the prompt or ask for fewer tokens. The last "
                    "generation is kept."]
    assert gv.RECORD not in at.session_state


def test_a_run_cut_short_keeps_its_tokens_says_so_and_goes_on(at, expected, monkeypatch):
    """A click's run ends early when the session reruns (Stop, another control): the tokens
    made so far are stored as each comes, and the record is still marked as running; the next
    run says the generation was stopped and offers Continue, which finishes it."""
    monkeypatch.setattr(limits, "TRAIN_SECONDS", 1e-6)
    at = generate_on(at)
    record = at.session_state[gv.RECORD]
    record["state"] = gv.RUNNING  # what a run cut short by a rerun leaves
    at = at.run()
    assert [w.value for w in at.warning] == [text.STOPPED.format(done=1, n=N)]
    assert at.session_state[gv.RECORD]["state"] == ""
    monkeypatch.setattr(limits, "TRAIN_SECONDS", 60.0)
    at.button(key="generate_continue").click()
    at = at.run(timeout=180)
    gen = at.session_state[gv.RECORD]["gen"]
    assert gen.done and gen.ids.tolist() == expected["greedy"].ids.tolist()
    assert not at.warning
