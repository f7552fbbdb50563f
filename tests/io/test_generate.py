"""Generation with the KV cache (attnviz.io.generate): tiny causal language models (tests/
hf_causal.py: GPT-2, Llama with GQA and RoPE, Mistral with a sliding window of 3, Qwen 3 with
QK-norm) saved in a tmp models folder and loaded as the page loads them (the listing's entry,
nothing outside its root).

Checks: greedy decoding is Hugging Face's own ``generate(do_sample=False)``; each step's
attention row (from the cache) is the row of one full forward pass over the final sequence, and
its probabilities the softmax of that pass's logits, to float32 rounding; sampling with a seed
is reproducible and is the draw an independent replay makes from the full pass's logits; the
cache's size is the architecture's arithmetic; a run stopped early and resumed equals one run;
loading holds the load budget with the head counted; every bound is refused in a sentence.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_causal import PROMPT, save_causal_lm  # noqa: E402
from hf_models import parity_configs, save_model  # noqa: E402

from attnviz.io import capture as cap_module  # noqa: E402
from attnviz.io import models_dir as md  # noqa: E402
from attnviz.io.capture import capture, check_model  # noqa: E402
from attnviz.io.generate import (  # noqa: E402
    FINISHED_EOS,
    FINISHED_LENGTH,
    MAX_NEW_TOKENS,
    MAX_SEQUENCE_TOKENS,
    GenerationSettings,
    generate,
    load_causal_lm,
    loaded_causal_lm,
    softmax64,
)

NAMES = ("gpt2", "llama", "mistral", "qwen3")
N = 10
ROUNDING = 5e-6  # float32 attention and logits, cache against one pass (measured <= 1.3e-6)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A models folder holding each causal LM (and a Llama saved as a base model)."""
    root = tmp_path_factory.mktemp("models")
    for name in NAMES:
        save_causal_lm(name, root / name)
    save_model(*parity_configs()["llama"], root / "llama_base")
    save_causal_lm("gpt2", root / "gpt2_short", n_positions=12)
    return root


def entry(folder, key: str) -> md.ModelEntry:
    return md.resolve(key, {md.MODELS_DIR_ENV: str(folder)})


@pytest.fixture(scope="module")
def models(folder) -> dict:
    """Each model loaded as the page loads it: its listing entry, inside the entry's root."""
    loaded = {}
    for name in NAMES:
        e = entry(folder, name)
        loaded[name] = load_causal_lm(e.path, root=e.root)
    return loaded


def full_pass(model, ids):
    """Attention (n_layers, n_heads, t, t) and float64 probabilities (t, vocab) of one forward
    pass over the whole sequence."""
    weights = capture(model, input_ids=ids).attentions[0]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([list(ids)])).logits[0].double().numpy()
    return weights, np.array([softmax64(z) for z in logits])


@pytest.mark.parametrize("name", NAMES)
def test_greedy_is_hugging_faces_own_generate(models, name):
    model, tokenizer = models[name]
    gen = generate(model, tokenizer, PROMPT, N)
    prompt = tokenizer(PROMPT)["input_ids"]
    hf = model.generate(torch.tensor([prompt]), do_sample=False, max_new_tokens=N,
                        pad_token_id=0)[0].tolist()
    assert gen.ids.tolist() == hf
    assert gen.prompt_length == len(prompt) == 6
    assert gen.finished in (FINISHED_LENGTH, FINISHED_EOS)
    assert gen.generated == len(hf) - len(prompt) >= 1
    # each step's first candidate is the token the next step adds, with that probability
    for before, after in zip(gen.steps[:-1], gen.steps[1:], strict=True):
        assert after.token_id == before.top_ids[0]
        assert after.prob == before.top_probs[0]
        assert after.position == before.position + 1


@pytest.mark.parametrize("name", NAMES)
def test_cached_rows_and_probabilities_equal_one_full_pass(models, name):
    model, tokenizer = models[name]
    gen = generate(model, tokenizer, PROMPT, N, stop_at_eos=False)
    assert gen.generated == N and gen.finished == FINISHED_LENGTH
    weights, probs = full_pass(model, gen.ids)
    assert len(gen.steps) == N + 1 and gen.steps[0].position == gen.prompt_length - 1
    worst = 0.0
    for step in gen.steps:
        p = step.position
        assert step.rows.shape == (weights.shape[0], weights.shape[1], p + 1)
        worst = max(worst, np.abs(step.rows - weights[:, :, p, : p + 1]).max())
        np.testing.assert_allclose(step.rows.sum(axis=-1), 1.0, atol=1e-6)
        np.testing.assert_allclose(step.top_probs, probs[p, step.top_ids], rtol=0,
                                   atol=ROUNDING)
        order = np.argsort(-probs[p], kind="stable")[:5]
        assert np.all(np.diff(step.top_probs) <= 0)
        np.testing.assert_allclose(step.top_probs, probs[p, order], rtol=0, atol=ROUNDING)
        if p + 1 < len(gen.ids):
            assert gen.steps[p + 1 - gen.prompt_length + 1].prob == pytest.approx(
                probs[p, gen.ids[p + 1]], abs=ROUNDING)
    assert worst <= ROUNDING, worst
    if name == "mistral":  # a window of 3: the new token sees itself and the 2 keys before
        last = gen.steps[-1]
        assert not last.rows[..., : last.position - 2].any()
        assert last.cache_tokens == 2


# ALiBi without position ids (BLOOM, Falcon), a local layer (GPT-Neo), partial rotary (NeoX)
MORE = ("bloom", "falcon_alibi", "gpt_neo", "gpt_neox")


@pytest.mark.parametrize("name", MORE)
def test_more_architectures_generate_as_hugging_face_does(tmp_path, name):
    folder = save_causal_lm(name, tmp_path / name)
    model, tokenizer = load_causal_lm(folder, root=tmp_path)
    gen = generate(model, tokenizer, PROMPT, 6)
    prompt = tokenizer(PROMPT)["input_ids"]
    hf = model.generate(torch.tensor([prompt]), do_sample=False, max_new_tokens=6,
                        pad_token_id=0)[0].tolist()
    assert gen.ids.tolist() == hf
    weights, _ = full_pass(model, gen.ids)
    for step in gen.steps:
        p = step.position
        np.testing.assert_allclose(step.rows, weights[:, :, p, : p + 1], atol=ROUNDING)


def test_the_cache_size_is_the_architectures_arithmetic(models):
    model, tokenizer = models["llama"]  # 2 layers, 2 key/value heads of 4 dimensions
    gen = generate(model, tokenizer, PROMPT, 4, stop_at_eos=False)
    c = model.config
    head_dim = c.hidden_size // c.num_attention_heads
    for step in gen.steps:
        t = step.position + 1
        assert step.cache_tokens == t
        assert step.cache_bytes == 2 * c.num_hidden_layers * c.num_key_value_heads * head_dim \
            * t * 4  # keys and values, float32
    model, tokenizer = models["gpt2"]  # every head keeps its own keys and values
    step = generate(model, tokenizer, PROMPT, 1).steps[-1]
    assert step.cache_bytes == 2 * 2 * model.config.n_embd * (step.position + 1) * 4


@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_sampling_with_a_seed_is_reproducible_and_is_the_replayed_draw(models, name):
    model, tokenizer = models[name]
    runs = [generate(model, tokenizer, PROMPT, N, temperature=1.5, seed=7, stop_at_eos=False)
            for _ in range(2)]
    assert runs[0].ids.tolist() == runs[1].ids.tolist()
    others = {tuple(generate(model, tokenizer, PROMPT, N, temperature=1.5, seed=s,
                             stop_at_eos=False).ids) for s in range(4)}
    assert len(others) > 1  # the seed matters
    gen = runs[0]
    # an independent replay: the full pass's logits at temperature 1.5, the same generator
    _, probs = full_pass(model, gen.ids)
    rng = np.random.default_rng(7)
    for p in range(gen.prompt_length - 1, len(gen.ids) - 1):
        scaled = softmax64(np.log(probs[p]) / 1.5)
        u = rng.random()
        drawn = int(np.searchsorted(np.cumsum(scaled), u * scaled.sum(), side="right"))
        assert drawn == gen.ids[p + 1], p
    step = gen.steps[0]
    np.testing.assert_allclose(step.top_sampled, softmax64(np.log(probs[step.position]) / 1.5)
                               [step.top_ids], atol=ROUNDING)
    assert gen.steps[0].top_sampled[0] < gen.steps[0].top_probs[0]  # T > 1 flattens


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_a_stopped_run_resumed_equals_one_run(models, temperature):
    model, tokenizer = models["llama"]
    whole = generate(model, tokenizer, PROMPT, N, temperature=temperature, seed=3,
                     stop_at_eos=False)
    seen = []
    asked = iter(range(100))
    part = generate(model, tokenizer, PROMPT, N, temperature=temperature, seed=3,
                    stop_at_eos=False, should_stop=lambda: next(asked) >= 4,
                    progress=lambda g: seen.append(g.generated))
    assert part.generated == 4 and part.finished == "" and seen == [1, 2, 3, 4]
    rest = generate(model, tokenizer, resume=part)
    assert rest.ids.tolist() == whole.ids.tolist() and rest.finished == FINISHED_LENGTH
    assert rest.tokens == whole.tokens and rest.texts == whole.texts
    for a, b in zip(rest.steps, whole.steps, strict=True):
        np.testing.assert_allclose(a.rows, b.rows, atol=ROUNDING)
        assert a.top_ids.tolist() == b.top_ids.tolist()


def test_the_text_so_far_and_the_new_token(models):
    model, tokenizer = models["llama"]
    gen = generate(model, tokenizer, PROMPT, 3, stop_at_eos=False)
    before, new = gen.text(0)
    assert (before, new) == ("the cat sat on a", " mat")
    before, new = gen.text(2)
    assert before + new == tokenizer.decode(gen.ids[: gen.prompt_length + 2].tolist())
    assert new.strip() == gen.tokens[gen.prompt_length + 1]
    assert gen.nbytes >= sum(s.rows.nbytes for s in gen.steps)


def test_end_of_sequence_ends_the_generation(models):
    model, tokenizer = models["gpt2"]  # its end-of-sequence token is 3
    free = generate(model, tokenizer, PROMPT, 30, stop_at_eos=False)
    assert 3 in free.ids[free.prompt_length:].tolist()  # this model emits it (seed 0)
    gen = generate(model, tokenizer, PROMPT, 30)
    end = free.ids.tolist().index(3, free.prompt_length)
    assert gen.finished == FINISHED_EOS and gen.ids.tolist() == free.ids[: end + 1].tolist()


def test_loading_holds_the_budget_with_the_head_counted(folder):
    e = entry(folder, "llama")
    base = check_model(e.path, root=e.root)
    with_head = check_model(e.path, root=e.root, head="causal_lm")
    c = parity_configs()["llama"][0]
    assert with_head - base == 4 * c.vocab_size * c.hidden_size  # the untied lm_head
    assert cap_module.bytes_in_flight() == 0
    with loaded_causal_lm(e.path, root=e.root) as (model, _):
        assert cap_module.bytes_in_flight() == with_head
        assert type(model).__name__ == "LlamaForCausalLM"
    assert cap_module.bytes_in_flight() == 0


def test_a_base_model_without_its_head_is_refused(folder):
    e = entry(folder, "llama_base")
    with pytest.raises(ValueError, match=r"lack parts of the language-model head \(lm_head"
                                         r"\.weight; saved as a base model\?\)"):
        load_causal_lm(e.path, root=e.root)
    assert cap_module.bytes_in_flight() == 0


def test_a_bidirectional_model_is_refused(tmp_path):
    from hf_models import SMALL, make_tokenizer
    from transformers import BertConfig, BertLMHeadModel

    BertLMHeadModel(BertConfig(**SMALL)).save_pretrained(tmp_path / "bert")
    make_tokenizer(True).save_pretrained(tmp_path / "bert")
    with pytest.raises(ValueError, match="bert attends both ways"):
        load_causal_lm(tmp_path / "bert", root=tmp_path)


@pytest.mark.parametrize("settings, message", [
    (dict(n_tokens=0), f"n_tokens must be a whole number from 1 to {MAX_NEW_TOKENS}, got 0"),
    (dict(n_tokens=MAX_NEW_TOKENS + 1), f"got {MAX_NEW_TOKENS + 1}"),
    (dict(n_tokens=2.5), "n_tokens must be a whole number"),
    (dict(n_tokens=True), "n_tokens must be a whole number"),
    (dict(n_tokens=5, temperature=-1.0), "temperature must be 0 .greedy. or a number from "
                                         "0.05 to 5, got -1.0"),
    (dict(n_tokens=5, temperature=0.01), "temperature must be 0"),
    (dict(n_tokens=5, temperature=math.nan), "temperature must be 0"),
    (dict(n_tokens=5, temperature=9.0), "temperature must be 0"),
    (dict(n_tokens=5, seed=-1), "seed must be a whole number from 0 to 2,147,483,647"),
    (dict(n_tokens=5, top_k=0), "top_k must be a whole number from 1 to 20"),
])
def test_settings_out_of_range_are_refused_in_sentences(settings, message):
    with pytest.raises(ValueError, match=message):
        GenerationSettings(**settings)


def test_prompts_and_lengths_beyond_the_bounds_are_refused(models, folder):
    model, tokenizer = models["gpt2"]
    with pytest.raises(ValueError, match="the prompt is empty"):
        generate(model, tokenizer, "   ", 3)
    with pytest.raises(ValueError, match="the prompt holds 2,001 characters; at most 2,000"):
        generate(model, tokenizer, "a" * 2001, 3)
    long = " ".join(["the"] * (MAX_SEQUENCE_TOKENS - 4))
    with pytest.raises(ValueError, match=f"the prompt's {MAX_SEQUENCE_TOKENS - 4} tokens and 5 "
                                         f"new ones make {MAX_SEQUENCE_TOKENS + 1}; at most "
                                         f"{MAX_SEQUENCE_TOKENS} are shown"):
        generate(model, tokenizer, long, 5)
    with pytest.raises(ValueError, match="either the prompt's text or its input_ids"):
        generate(model, tokenizer, None, 3)
    e = entry(folder, "gpt2_short")  # 12 positions
    short, tok = load_causal_lm(e.path, root=e.root)
    with pytest.raises(ValueError, match="make 13; this model has 12 positions"):
        generate(short, tok, PROMPT, 7)
    assert generate(short, tok, PROMPT, 6, stop_at_eos=False).ids.size == 12


def test_input_ids_give_the_same_generation_as_the_text(models):
    model, tokenizer = models["qwen3"]
    by_text = generate(model, tokenizer, PROMPT, 4)
    by_ids = generate(model, tokenizer, input_ids=tokenizer(PROMPT)["input_ids"], n_tokens=4)
    assert by_ids.ids.tolist() == by_text.ids.tolist()
    with pytest.raises(ValueError, match="input_ids must be token ids from 0 to"):
        generate(model, tokenizer, input_ids=[5, 10**6], n_tokens=2)
