"""Capture from real transformers models (attnviz.io.capture): tiny random models built from
configs and a tokenizer (tests/hf_models.py; nothing downloaded, HF_HUB_OFFLINE=1), saved with
save_pretrained and loaded back through load_model, the path a user takes.

Checks: shapes, rows sum to 1, causal models' upper triangle is 0, a sliding window's old keys
are 0, padding stripped (a padded sequence equals the same sequence alone), the capture equals
``model(..., output_attentions=True)``, the saved file reads back through attention_io's loader
with no torch imported, every refusal, and the docs' and the page's snippets run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from hf_models import (  # noqa: E402 - the shared builders
    VOCAB,
    configs,
    make_tokenizer,
    save_model,
    seq2seq_configs,
)

from attnviz.io import attention_io, model_size  # noqa: E402
from attnviz.io.capture import (  # noqa: E402
    MAX_CAPTURE_TOKENS,
    Capture,
    capture,
    check_model,
    load_model,
    model_bytes,
    save_capture,
)
from attnviz.teach.text import your_attention as page_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Each architecture saved with save_pretrained (model and tokenizer) to its own folder."""
    from transformers import AutoModel

    torch.manual_seed(0)
    folders = {}
    for name, (config, bert, pad) in configs().items():
        folder = tmp_path_factory.mktemp(name)
        AutoModel.from_config(config).save_pretrained(folder)
        make_tokenizer(bert, pad).save_pretrained(folder)
        folders[name] = folder
    return folders


@pytest.fixture(scope="module")
def loaded(saved) -> dict:
    return {name: load_model(folder) for name, folder in saved.items()}


def reference(model, **inputs) -> np.ndarray:
    """The model's own attentions, eager, as (batch, layers, heads, t, t) float64."""
    model.set_attn_implementation("eager")
    with torch.no_grad():
        out = model(**{k: torch.as_tensor(v) for k, v in inputs.items()},
                    output_attentions=True)
    return torch.stack(out.attentions, dim=1).double().numpy()


def pad_right(rows: list[list[int]]) -> dict[str, np.ndarray]:
    """input_ids and attention_mask of a batch padded on the right with id 0."""
    t = max(map(len, rows))
    return {"input_ids": np.array([r + [0] * (t - len(r)) for r in rows]),
            "attention_mask": np.array([[1] * len(r) + [0] * (t - len(r)) for r in rows])}


def check_weights(cap: Capture, causal: bool) -> None:
    for w, tokens in zip(cap.attentions, cap.tokens, strict=True):
        assert w.dtype == np.float64 and w.shape == (2, 4, len(tokens), len(tokens))
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-6)
        upper = w[..., np.triu(np.ones(w.shape[-2:], dtype=bool), 1)]  # (layers, heads, n)
        if causal:
            assert np.all(upper == 0)
        else:
            assert np.all(upper > 0)


# ---------------------------------------------------------------------------------------------
# Every architecture: load, capture, compare with the model's own attentions
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "mistral", "gemma2", "qwen3"])
def test_capture_equals_the_models_attentions(loaded, name):
    model, tokenizer = loaded[name]
    assert model.config._attn_implementation == "eager"  # load_model loads eager
    texts = ["the cat sat on a mat and then slept", "a dog ran"]
    cap = capture(model, tokenizer, text=texts)
    assert len(cap) == 2 and cap.model_type == name and cap.is_causal == (name != "bert")
    check_weights(cap, causal=name != "bert")
    assert [t for t in cap.tokens[1] if not t.startswith("[")] == ["a", "dog", "ran"]
    enc = pad_right(tokenizer(texts)["input_ids"])  # llama's tokenizer has no pad token
    expected = reference(model, **enc)
    for b, w in enumerate(cap.attentions):
        keep = np.flatnonzero(enc["attention_mask"][b])
        np.testing.assert_array_equal(w, expected[b][:, :, keep][:, :, :, keep])
        np.testing.assert_array_equal(cap.input_ids[b], enc["input_ids"][b][keep])
    json.dumps(cap.config)  # JSON-safe
    assert cap.config["model_type"] == name and cap.layers == 2 and cap.heads == 4
    assert type(model.config).from_dict(cap.config).num_hidden_layers == 2  # rebuilds


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama"])
def test_a_padded_sequence_equals_the_sequence_alone(loaded, name):
    model, tokenizer = loaded[name]
    batch = capture(model, tokenizer, text=["the cat sat on a mat", "a dog"])
    alone = capture(model, tokenizer, text="a dog")
    assert batch.attentions[1].shape[-1] == len(alone.tokens[0]) < batch.attentions[0].shape[-1]
    assert batch.tokens[1] == alone.tokens[0] and "[PAD]" not in batch.tokens[1]
    np.testing.assert_allclose(batch.attentions[1], alone.attentions[0], atol=1e-6)


def test_left_padding_given_as_input_ids_is_stripped(loaded):
    model, tokenizer = loaded["llama"]
    ids = [[0, 0, 4, 5, 6], [4, 5, 6, 7, 8]]
    mask = [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]
    cap = capture(model, input_ids=np.array(ids), attention_mask=np.array(mask))
    assert [len(t) for t in cap.tokens] == [3, 5] and cap.tokens[0] == ("4", "5", "6")
    np.testing.assert_array_equal(cap.positions[0], [2, 3, 4])
    check_weights(cap, causal=True)
    alone = capture(model, tokenizer, input_ids=np.array([4, 5, 6]))
    assert alone.tokens[0] == ("the", "cat", "sat")
    np.testing.assert_allclose(cap.attentions[0], alone.attentions[0], atol=1e-6)


def test_sentence_pairs_carry_their_segments(loaded):
    model, tokenizer = loaded["bert"]
    cap = capture(model, tokenizer, text=[("the cat sat", "a dog ran far"), ("a cat", "ran")])
    assert cap.tokens[0] == ("[CLS]", "the", "cat", "sat", "[SEP]", "a", "dog", "ran", "far",
                             "[SEP]")
    np.testing.assert_array_equal(cap.token_type_ids[0], [0] * 5 + [1] * 5)
    np.testing.assert_array_equal(cap.token_type_ids[1], [0, 0, 0, 0, 1, 1])
    enc = tokenizer(["the cat sat", "a cat"], ["a dog ran far", "ran"], padding=True,
                    return_tensors="np")
    expected = reference(model, **enc)  # the segments reached the model
    np.testing.assert_array_equal(cap.attentions[0], expected[0])
    one = capture(model, tokenizer, text=("a cat", "ran"))
    np.testing.assert_allclose(one.attentions[0], cap.attentions[1], atol=1e-6)


def test_sliding_window_keys_are_zero(loaded):
    model, tokenizer = loaded["mistral"]
    w = capture(model, tokenizer, text="the cat sat on a mat").attentions[0]  # t = 6, W = 3
    i, j = np.indices(w.shape[-2:])
    assert np.all(w[..., i - j >= 3] == 0) and np.all(w[..., (i >= j) & (i - j < 3)] > 0)
    gemma = capture(*loaded["gemma2"], text="the cat sat on a mat").attentions[0]
    assert np.all(gemma[0][:, i - j >= 3] == 0)  # layer 0 slides
    assert np.all(gemma[1][:, i >= j] > 0)  # layer 1 sees every earlier key


def test_capture_forces_eager_and_gives_the_setting_back(saved):
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(saved["gpt2"], local_files_only=True)
    assert model.config._attn_implementation == "sdpa"  # transformers 5's default
    with torch.no_grad():
        assert not model(torch.tensor([[4, 5]]), output_attentions=True).attentions
    tokenizer = AutoTokenizer.from_pretrained(saved["gpt2"], local_files_only=True)
    cap = capture(model, tokenizer, text="the cat sat")
    assert cap.attentions[0].shape == (2, 4, 3, 3)
    assert model.config._attn_implementation == "sdpa"
    grad_enabled = []
    model.register_forward_hook(lambda *_: grad_enabled.append(torch.is_grad_enabled()))
    capture(model, tokenizer, text="the cat")
    assert grad_enabled == [False]


def test_capture_runs_without_dropout_and_gives_the_training_mode_back(loaded, saved):
    from transformers import AutoModel

    model, tokenizer = loaded["bert"]
    trained = AutoModel.from_pretrained(saved["bert"], local_files_only=True,
                                        attention_probs_dropout_prob=0.5).train()
    cap = capture(trained, tokenizer, text="the cat sat on a mat")
    assert trained.training  # given back
    np.testing.assert_array_equal(
        cap.attentions[0], capture(model, tokenizer, text="the cat sat on a mat").attentions[0])


# ---------------------------------------------------------------------------------------------
# The saved file: read by the dashboard's loader, without torch
# ---------------------------------------------------------------------------------------------

def test_saved_capture_reads_back_through_the_uploads_loader(loaded, tmp_path):
    model, tokenizer = loaded["bert"]
    cap = capture(model, tokenizer, text=[("the cat", "a dog ran"), ("a mat", "sun")])
    path = tmp_path / "attention.npz"
    size = save_capture(cap, path, sequence=1)
    assert size == path.stat().st_size
    up = attention_io.load_attention(path.read_bytes(), path.name)
    assert up.array_name == "attention" and up.tokens == cap.tokens[1] and not up.warnings
    np.testing.assert_array_equal(up.weights, cap.attentions[1].astype(np.float32))
    save_capture(cap, path, sequence=1, dtype=np.float64)
    up = attention_io.load_attention(path.read_bytes(), path.name)
    np.testing.assert_array_equal(up.weights, cap.attentions[1])
    with np.load(path) as npz:  # our own file: its metadata
        assert json.loads(str(npz["config"]))["model_type"] == "bert"
        assert str(npz["model_type"]) == "bert" and not bool(npz["is_causal"])
        assert int(npz["sequence"]) == 1 and int(npz["attnviz_capture"]) == 1
        np.testing.assert_array_equal(npz["layers"], [0, 1])
        np.testing.assert_array_equal(npz["token_type_ids"], [0, 0, 0, 0, 1, 1])
        np.testing.assert_array_equal(npz["input_ids"], cap.input_ids[1])


def test_loading_a_capture_does_not_import_torch(loaded, tmp_path):
    cap = capture(*loaded["llama"], text="the cat sat on a mat")
    path = tmp_path / "attention.npz"
    save_capture(cap, path)
    code = ("import sys\n"
            "from attnviz.io import attention_io, capture\n"
            f"up = attention_io.load_attention(open({str(path)!r}, 'rb').read(), 'a.npz')\n"
            "print(up.weights.shape, len(up.tokens))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'transformers', 'tokenizers')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True)
    assert out.stdout.splitlines() == ["(2, 4, 6, 6) 6", "[]"]


def test_save_refuses_what_the_dashboard_cannot_load(loaded, tmp_path, monkeypatch):
    cap = capture(*loaded["gpt2"], text=["the cat", "a dog"])
    path = tmp_path / "attention.npz"
    with pytest.raises(ValueError, match=r"sequence 2 does not exist; the capture holds 2"):
        save_capture(cap, path, sequence=2)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        save_capture(cap, path, dtype=np.float16)
    with pytest.raises(ValueError, match=r"layers must list layer indices from 0 to 1, got "
                                         r"\[2\]"):
        save_capture(cap, path, layers=[2])
    save_capture(cap, path, layers=[1])
    up = attention_io.load_attention(path.read_bytes(), path.name)
    np.testing.assert_array_equal(up.weights[0], cap.attentions[0][1].astype(np.float32))
    with np.load(path) as npz:
        np.testing.assert_array_equal(npz["layers"], [1])
    path.unlink()
    monkeypatch.setattr("attnviz.scenarios.limits.MAX_UPLOAD_BYTES", 100)
    with pytest.raises(ValueError, match=r"the file would be [\d,]+ bytes; an upload may be at "
                                         r"most 100 bytes — save fewer layers"):
        save_capture(cap, path)
    with pytest.raises(ValueError, match=r"save float32 weights, fewer layers"):
        save_capture(cap, path, dtype=np.float64)
    assert not path.exists()


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------

def test_load_model_refuses_a_folder_that_is_not_a_model(saved, tmp_path):
    with pytest.raises(ValueError, match="is not a folder"):
        load_model(tmp_path / "missing")
    with pytest.raises(ValueError, match="is not a model folder: it has no config.json"):
        load_model(tmp_path)
    (tmp_path / "config.json").write_text((saved["bert"] / "config.json").read_text())
    with pytest.raises(ValueError, match="has a config.json but no weights"):
        load_model(tmp_path)


def test_load_model_refuses_damaged_weights(saved, tmp_path):
    for p in saved["gpt2"].iterdir():
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="the weights in .* cannot be loaded"):
        load_model(tmp_path)


def test_load_model_refuses_a_missing_tokenizer(saved, tmp_path):
    for name in ("config.json", "model.safetensors"):
        (tmp_path / name).write_bytes((saved["bert"] / name).read_bytes())
    with pytest.raises(ValueError, match=r"has no tokenizer .*tokenizer.save_pretrained"):
        load_model(tmp_path)


def test_load_model_refuses_an_unknown_architecture(saved, tmp_path):
    for p in saved["bert"].iterdir():
        (tmp_path / p.name).write_bytes(p.read_bytes())
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config | {"model_type": "attnviz_nope"}))
    with pytest.raises(ValueError, match="names model_type 'attnviz_nope', an architecture "
                                         "this version of transformers does not know"):
        load_model(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json of .* is not valid JSON"):
        load_model(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 16}))
    with pytest.raises(ValueError, match="config.json of .* names no model_type"):
        load_model(tmp_path)
    bad = config | {"hidden_size": 18}  # not divisible by its 4 heads
    (tmp_path / "config.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="does not describe a model transformers can build"):
        load_model(tmp_path)


def test_load_model_refuses_a_model_too_large_before_reading_weights(saved, tmp_path):
    from transformers import LlamaConfig

    LlamaConfig(hidden_size=8192, num_hidden_layers=80, intermediate_size=28672,
                num_attention_heads=64, num_key_value_heads=8,
                vocab_size=128256).save_pretrained(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"")  # never read: refused from the config
    for p in saved["llama"].glob("tokenizer*"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    # the arithmetic's lower bound (a third of a standard transformer's count) refuses first
    with pytest.raises(ValueError, match=r"needs at least 6\d\.\d\d GiB for its parameters "
                                         r"in float32 and its buffers \(80 layers of width "
                                         r"8,192: .*at most 2\.00 GiB are allowed"):
        load_model(tmp_path)
    # between the lower bound and the exact count: the meta device's count refuses
    exact = check_model(saved["llama"])
    config = json.loads((saved["llama"] / "config.json").read_text())
    assert model_size.estimate_bytes(config).n_bytes < exact - 1
    with pytest.raises(ValueError, match=r"needs about 0\.00 GiB .* at most 0\.00 GiB"):
        load_model(saved["llama"], max_bytes=exact - 1)
    model = load_model(saved["llama"], max_bytes=exact)[0]
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    assert buffers > 0  # the rotary frequencies
    assert exact == model_bytes(model.config) == 4 * model.num_parameters() + buffers


def test_capture_refuses_text_longer_than_the_limits(loaded):
    model, tokenizer = loaded["bert"]
    with pytest.raises(ValueError, match=r"a sequence holds 8 tokens; at most 5 are captured"):
        capture(model, tokenizer, text="the cat sat on a mat", max_tokens=5)
    long = " ".join(["cat"] * 70)
    with pytest.raises(ValueError, match=r"holds 72 tokens; this model has 64 positions"):
        capture(model, tokenizer, text=long)
    with pytest.raises(ValueError, match=r"holds 2,000,000 characters; at most"):
        capture(model, tokenizer, text="a" * 2_000_000)
    assert MAX_CAPTURE_TOKENS == 1024


def test_capture_refuses_bad_arguments(loaded):
    model, tokenizer = loaded["gpt2"]
    with pytest.raises(ValueError, match="either text .* or input_ids, not both"):
        capture(model, tokenizer)
    with pytest.raises(ValueError, match="either text .* or input_ids, not both"):
        capture(model, tokenizer, text="a", input_ids=[4])
    with pytest.raises(ValueError, match="text needs the model's tokenizer"):
        capture(model, text="the cat")
    with pytest.raises(ValueError, match="text item 1 is a int"):
        capture(model, tokenizer, text=["the cat", 3])
    with pytest.raises(ValueError, match="at most 64 are captured in one call"):
        capture(model, tokenizer, text=["cat"] * 65)
    with pytest.raises(ValueError, match="attention_mask has shape"):
        capture(model, input_ids=np.ones((2, 3), dtype=int), attention_mask=np.ones((2, 4)))
    with pytest.raises(ValueError, match="input_ids must be a rectangular array"):
        capture(model, input_ids=[[4, 5], [4]])
    with pytest.raises(ValueError, match="input_ids must be integers"):
        capture(model, input_ids=np.ones((1, 3)))
    with pytest.raises(ValueError, match="token_type_ids has shape"):
        capture(model, input_ids=np.ones((1, 3), dtype=int), token_type_ids=[0, 1])
    with pytest.raises(ValueError, match="has no tokens"):
        capture(model, input_ids=np.ones((1, 3), dtype=int), attention_mask=np.zeros((1, 3)))


def test_without_the_extra_the_error_names_it(loaded, saved, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers fails
    with pytest.raises(ImportError, match=r"needs torch and transformers .*in the attnviz "
                                          r"folder.*pip install '\.\[models\]'"):
        load_model(saved["gpt2"])
    with pytest.raises(ImportError, match=r"pip install '\.\[models\]'"):
        capture(*loaded["gpt2"], text="the cat")


def test_capture_refuses_an_encoder_decoder_model_and_reads_its_encoder():
    from transformers import T5Config, T5Model

    model = T5Model(T5Config(vocab_size=len(VOCAB), d_model=16, d_kv=4, d_ff=32, num_layers=2,
                             num_heads=4)).eval()
    with pytest.raises(ValueError, match=r"T5Model is an encoder-decoder model; capture its "
                                         r"three kinds of attention with capture_seq2seq\(.*"
                                         r"or one stack: capture\(model.get_encoder\(\)"):
        capture(model, input_ids=[4, 5, 6])
    cap = capture(model.get_encoder(), input_ids=[4, 5, 6])
    assert cap.attentions[0].shape == (2, 4, 3, 3) and not cap.is_causal
    np.testing.assert_allclose(cap.attentions[0].sum(axis=-1), 1.0, atol=1e-6)



# ---------------------------------------------------------------------------------------------
# The snippets users copy: docs/capture.md (and any capture example in README.md or docs/, with
# path/to/model as the model folder) and the page's how-to run as written
# ---------------------------------------------------------------------------------------------

PLACEHOLDER = "path/to/model"


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.S)


def run_snippet(code: str, folder: Path, cwd: Path, monkeypatch) -> dict:
    assert PLACEHOLDER in code
    monkeypatch.chdir(cwd)
    scope: dict = {}
    exec(compile(code.replace(PLACEHOLDER, str(folder)), "<snippet>", "exec"), scope)
    return scope


def test_the_docs_snippets_run(saved, tmp_path, monkeypatch):
    blocks = python_blocks((ROOT / "docs" / "capture.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if page.name != "capture.md":  # every other capture example of the docs
            blocks += [code for code in python_blocks(page.read_text(encoding="utf-8"))
                       if "attnviz.io.capture" in code]
    seq2seq_folder = None
    for i, code in enumerate(blocks):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        if "capture_seq2seq" in code:  # an encoder-decoder example runs on a tiny saved T5
            if seq2seq_folder is None:
                seq2seq_folder = save_model(*seq2seq_configs()["t5"], tmp_path / "t5")
            run_snippet(code, seq2seq_folder, cwd, monkeypatch)
            files = sorted(cwd.glob("*.npz"))
            assert files, f"block {i} saved no .npz"
            for f in files:  # the three kinds of attention, in the encoder-decoder format
                with np.load(f) as data:
                    assert int(data["attnviz_capture"]) == 2
                    t_s, t = data["attention"].shape[-1], data["decoder_attention"].shape[-1]
                    assert data["cross_attention"].shape[-2:] == (t, t_s)
            continue
        run_snippet(code, saved["bert"], cwd, monkeypatch)
        files = sorted(cwd.glob("*.npz"))
        assert files, f"block {i} saved no .npz"
        for f in files:
            up = attention_io.load_attention(f.read_bytes(), f.name)
            assert up.layers == 2 and up.heads == 4 and up.tokens[0] == "[CLS]"


def test_the_pages_howto_runs(saved, tmp_path, monkeypatch):
    run_snippet(page_text.HOWTO, saved["gpt2"], tmp_path, monkeypatch)
    up = attention_io.load_attention((tmp_path / "attention.npz").read_bytes(), "attention.npz")
    assert up.layers == 2 and up.heads == 4 and not up.warnings
    assert np.all(np.triu(up.weights[0, 0], 1) == 0)
