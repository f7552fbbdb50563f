"""Model view page through AppTest: the example opens the grid; a tiny GPT-2 saved in a tmp
models folder (ATTNVIZ_MODELS_DIR) and picked from the page's list captures and shows layers ×
heads thumbnails; nothing outside that folder can be picked and no box takes a path; a click
opens a head; every refusal leaves the session's data as it was; ATTNVIZ_NO_MODELS hides
loading; the Hub is offered only when allowed and online, and never answers from the local
cache by name; without torch the page says how to install it.

The model tests skip where the optional extra (torch, transformers) is not installed; nothing
is downloaded (HF_HUB_OFFLINE=1, local tokenizer from tests/hf_models.py).
"""

from __future__ import annotations

import gc
import io
import json
import os
import re
import shutil
import sys
import zipfile

import numpy as np
import pytest
from apptest_helpers import chart_keys, decode, open_page, spec_by_key

from attnviz.io import models_dir as md
from attnviz.io.examples.make_example import build_example
from attnviz.teach.text import model_view as text
from attnviz.ui import model_view as mv

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may go online
EXAMPLE, EXAMPLE_TOKENS = build_example()
GRID = "model_view_fig_grid"


def grid_tiles(at) -> tuple[int, int, list[str]]:
    """(rows, columns, hover texts) of the grid: its tick labels and click targets."""
    spec = spec_by_key(at, GRID)
    layout = spec["layout"]
    picker = spec["data"][-1]
    return (len(layout["yaxis"]["ticktext"]), len(layout["xaxis"]["ticktext"]),
            list(picker["hovertext"]))


def errors(at) -> list[str]:
    """The page's error messages, Markdown escapes (share.plain) taken out."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def choose(at, source: str):
    at.radio(key="model_view_source").set_value(source)
    return at.run()


@pytest.fixture
def at(monkeypatch, tmp_path):
    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    monkeypatch.delenv(mv.ALLOW_HUB_ENV, raising=False)
    monkeypatch.delenv(md.HF_CACHE_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(tmp_path / "no_models"))
    return open_page("model_view")


def test_the_example_opens_the_grid(at):
    assert not at.exception and not errors(at)
    rows, cols, hovers = grid_tiles(at)
    assert (rows, cols) == EXAMPLE.shape[:2] == (2, 4)
    assert len(hovers) == 8 and "layer 1 · head 3" in hovers[-1]
    assert any(tok in hovers[0] for tok in EXAMPLE_TOKENS)  # token labels on hover
    z = decode(spec_by_key(at, GRID)["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(z[:6, :6], EXAMPLE[0, 0], atol=1e-6)  # tile (0, 0) = L0 H0
    assert np.isnan(z[:6, 6]).all()  # a blank gap between thumbnails
    keys = chart_keys(at)
    for key in ("model_view_fig_lines", "model_view_fig_head", "model_view_fig_fused",
                "model_view_fig_rollout_layers", "model_view_fig_rollout"):
        assert key in keys
    assert mv.DATA_KEY not in at.session_state  # the example is not stored


def test_a_click_on_a_thumbnail_opens_its_head(at):
    picker = len(spec_by_key(at, GRID)["data"]) - 1
    at.session_state[GRID] = {"selection": {"points": [{"curve_number": picker,
                                                          "point_index": 6}]}}
    # AppTest cannot fire the component's event: the handler is tested below; here its result
    at.session_state["model_view_layer"], at.session_state["model_view_head"] = divmod(6, 4)
    at.run()
    assert text.OPENED_TITLE.format(layer=1, h=2) in [s.value for s in at.subheader]
    z = decode(spec_by_key(at, "model_view_fig_head")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(z, EXAMPLE[1, 2], atol=1e-6)


def test_the_grid_click_handler_reads_the_point(monkeypatch):
    import streamlit as st

    store = {GRID: {"selection": {"points": [{"curve_number": 9, "point_index": 7}]}}}
    monkeypatch.setattr(st, "session_state", store)
    mv._grid_clicked(GRID, 9, 4)
    assert (store["model_view_layer"], store["model_view_head"]) == (1, 3)
    store[GRID] = {"selection": {"points": [{"curve_number": 2, "point_index": 0}]}}
    mv._grid_clicked(GRID, 9, 4)  # another trace: ignored
    assert (store["model_view_layer"], store["model_view_head"]) == (1, 3)


def test_aggregation_and_rollout_are_drawn_from_the_core(at):
    from attnviz.core.rollout import aggregate_heads, attention_rollout

    fused = decode(spec_by_key(at, "model_view_fig_fused")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(fused[:6, :6], aggregate_heads(EXAMPLE)[0], atol=1e-6)
    at.radio(key="model_view_fuse").set_value("max").run()
    fused = decode(spec_by_key(at, "model_view_fig_fused")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(fused[:6, 7:13], EXAMPLE[1].max(axis=0), atol=1e-6)
    roll = decode(spec_by_key(at, "model_view_fig_rollout")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(roll, attention_rollout(EXAMPLE).rollout, atol=1e-6)


# --- captured files ---------------------------------------------------------------------------

def npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def causal_weights(layers=2, heads=3, t=5, seed=0):
    x = np.random.default_rng(seed).normal(size=(layers, heads, t, t))
    x = np.where(np.tri(t, dtype=bool), x, -np.inf)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def capture_file(**changes) -> dict:
    w = causal_weights()
    arrays = dict(attention=w, tokens=np.array(list("abcde")),
                  attnviz_capture=np.array(1, dtype=np.int64), config=np.array("{}"),
                  model_type=np.array("gpt2"), is_causal=np.array(True),
                  sequence=np.array(0, dtype=np.int64), layers=np.arange(2, dtype=np.int64),
                  input_ids=np.arange(5, dtype=np.int64))
    arrays.update(changes)
    return {k: v for k, v in arrays.items() if v is not None}


def upload(at, data: bytes, name="capture.npz"):
    choose(at, "upload")
    at.file_uploader(key="model_view_upload").set_value((name, data, "application/zip"))
    return at.run()


def test_a_captured_file_is_shown_causal(at):
    at = upload(at, npz(**capture_file()))
    assert not errors(at), errors(at)
    data = at.session_state[mv.DATA_KEY]
    assert data.causal and data.weights.shape == (2, 3, 5, 5)
    z = decode(spec_by_key(at, GRID)["data"][0]["z"]).astype(float)
    assert np.isnan(z[0, 1:5]).all() and np.isfinite(z[4, :5]).all()  # upper triangle blank
    assert text.MEMORY.format(bytes=f"{data.nbytes:,}") in [c.value for c in at.caption]


@pytest.mark.parametrize("changes, why", [
    (dict(attnviz_capture=np.array(3, dtype=np.int64)), text.OTHER_VERSION.split("(")[0]),
    (dict(is_causal=None), text.TAMPERED_WHY["missing"].format(name="is_causal")),
    (dict(layers=np.arange(3, dtype=np.int64)),
     text.TAMPERED_WHY["layers"].format(n=3, layers=2)),
    (dict(input_ids=np.arange(4, dtype=np.int64)),
     text.TAMPERED_WHY["input_ids"].format(n=4, t=5)),
    (dict(token_type_ids=np.full(5, 3, dtype=np.int64)),
     text.TAMPERED_WHY["segments"].format(t=5)),
    (dict(attention=np.full((2, 3, 5, 5), 0.2, dtype=np.float32)),
     text.TAMPERED_WHY["causal"]),
    (dict(attention=causal_weights() * 0.5), text.TAMPERED_WHY["rows"]),
    (dict(is_causal=np.array([True, False])), text.TAMPERED_WHY["is_causal"]),
])
def test_a_tampered_or_other_version_capture_is_refused_and_nothing_changes(at, changes, why):
    at = upload(at, npz(**capture_file()), name="good.npz")
    before = at.session_state[mv.DATA_KEY]
    at = upload(at, npz(**capture_file(**changes)), name="bad.npz")
    assert any(why in e for e in errors(at)), errors(at)
    assert at.session_state[mv.DATA_KEY] is before  # the session's data unchanged
    assert not at.exception


def test_a_damaged_file_is_refused_by_the_uploads_checks(at):
    at = upload(at, b"PK\x03\x04 not a zip")
    assert errors(at) and mv.DATA_KEY not in at.session_state


def test_a_sentence_pair_capture_marks_its_segments(at):
    w = np.full((1, 2, 4, 4), 0.25, dtype=np.float32)
    at = upload(at, npz(**capture_file(attention=w, tokens=np.array(list("abcd")),
                                       is_causal=np.array(False),
                                       layers=np.arange(1, dtype=np.int64),
                                       input_ids=np.arange(4, dtype=np.int64),
                                       token_type_ids=np.array([0, 0, 1, 1]))))
    assert not errors(at), errors(at)
    assert at.session_state[mv.DATA_KEY].boundary == 2
    shapes = spec_by_key(at, "model_view_fig_head")["layout"]["shapes"]
    assert {(s["x0"], s["x1"]) for s in shapes} >= {(1.5, 1.5)}  # the separator
    assert len(spec_by_key(at, GRID)["data"]) == 5  # heatmap, frames, seams, selected, picker


# --- loading a model --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    """A tiny GPT-2 saved outside any models folder (tests copy it into theirs)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_models import configs, save_model

    config, bert, pad = configs()["gpt2"]
    return save_model(config, bert, pad, tmp_path_factory.mktemp("store") / "gpt2")


@pytest.fixture
def models(monkeypatch, tmp_path):
    """This test's models folder (empty), set as ATTNVIZ_MODELS_DIR."""
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(folder))
    return folder


def put(models, source, name: str | None = None):
    """A copy of a model folder in the models folder (a link to it would not be listed)."""
    return shutil.copytree(source, models / (name or source.name))


def capture_from(at, key: str, text_a: str = "the cat sat on a mat", text_b: str = ""):
    choose(at, "directory")
    at.selectbox(key="model_view_model").set_value(key)
    at.text_input(key="model_view_text").set_value(text_a)
    at.text_input(key="model_view_text_b").set_value(text_b)
    at.button(key="model_view_capture").click()
    return at.run()


def test_a_saved_gpt2_picked_from_the_models_folder_shows_its_grid(at, models, gpt2_folder):
    put(models, gpt2_folder)
    at = capture_from(at, "gpt2")
    assert not errors(at) and not at.exception, errors(at)
    rows, cols, hovers = grid_tiles(at)
    assert (rows, cols) == (2, 4) and len(hovers) == 8
    data = at.session_state[mv.DATA_KEY]
    assert data.causal and data.weights.shape == (2, 4, 6, 6)
    assert data.tokens == tuple("the cat sat on a mat".split())
    assert data.folder == str(models / "gpt2") and data.root == str(models)
    gc.collect()  # the model was released after its forward pass: none is left anywhere
    assert not [o for o in gc.get_objects() if type(o).__name__ == "GPT2Model"]
    assert text.MEMORY.format(bytes=f"{data.nbytes:,}") in [c.value for c in at.caption]
    shown = text.SHOWING.format(source=text.DIRECTORY_NAME.format(name="gpt2"), layers=2,
                                heads=4, t=6, kind=text.CAUSAL)
    assert shown in [c.value for c in at.caption]


def test_the_source_is_a_list_of_the_models_folder_and_no_path_box(at, models, gpt2_folder,
                                                                    tmp_path):
    put(models, gpt2_folder)
    put(models, gpt2_folder, "second")
    (models / "notes").mkdir()  # no config.json: not a model
    outside = put(tmp_path, gpt2_folder, "outside")
    (models / "linked").symlink_to(outside, target_is_directory=True)  # leads out: not listed
    at = choose(at, "directory")
    assert not at.exception
    box = at.selectbox(key="model_view_model")
    assert box.options == ["gpt2", "second"] and box.label == text.MODELS_LABEL
    assert text.MODELS_CAPTION.format(path=models) in [c.value for c in at.caption]
    # nowhere to type a path: the only text boxes are the sentences
    assert [t.key for t in at.text_input] == ["model_view_text", "model_view_text_b"]


@pytest.mark.parametrize("where", ["outside", "nothing_here", "~/.ssh", "/etc", "../outside"])
def test_a_folder_outside_the_models_folder_cannot_be_chosen(at, models, gpt2_folder,
                                                              tmp_path, where):
    put(models, gpt2_folder)
    outside = put(tmp_path, gpt2_folder, "outside")
    typed = str(tmp_path / where) if where in ("outside", "nothing_here") else where
    at = choose(at, "directory")
    assert at.selectbox(key="model_view_model").options == ["gpt2"]  # nothing else to pick
    # a hand-made client's value outside the options is put back to the first option by
    # Streamlit; the loader itself loads only what the listing holds, in one sentence for all
    with pytest.raises(ValueError) as err:
        mv.from_models_dir(typed, "the cat")
    with pytest.raises(ValueError) as nothing:
        mv.from_models_dir(str(tmp_path / "nothing_here"), "the cat")
    assert str(err.value) == str(nothing.value)
    assert str(outside) not in str(err.value) and "no config.json" not in str(err.value)


def test_an_empty_models_folder_says_where_to_put_models(at, models):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    at = choose(at, "directory")
    assert text.MODELS_EMPTY.format(path=models, env=md.MODELS_DIR_ENV) in [
        i.value for i in at.info]
    assert "model_view_capture" not in [b.key for b in at.button]
    assert "model_view_model" not in [b.key for b in at.selectbox]


def test_an_encoder_captures_a_sentence_pair_with_its_separator(at, models):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_models import configs, save_model

    config, bert, pad = configs()["bert"]
    save_model(config, bert, pad, models / "bert")
    at = capture_from(at, "bert", "the cat sat", "a dog ran")
    assert not errors(at), errors(at)
    data = at.session_state[mv.DATA_KEY]
    assert not data.causal
    assert data.tokens == ("[CLS]", "the", "cat", "sat", "[SEP]", "a", "dog", "ran", "[SEP]")
    assert data.boundary == 5  # the first token of the second sentence
    assert f"{text.GRID_CAPTION} {text.PAIR_CAPTION}" in [c.value for c in at.caption]
    z = decode(spec_by_key(at, GRID)["data"][0]["z"]).astype(float)
    assert np.isfinite(z[:9, :9]).all()  # bidirectional: no blank triangle
    seams = spec_by_key(at, GRID)["data"][2]
    assert seams["line"]["color"] == "#ffffff" and 4.5 in seams["x"]  # x = 0 - 0.5 + 5


def test_refusals_name_the_problem_and_change_nothing(at, models, gpt2_folder):
    put(models, gpt2_folder)
    at = capture_from(at, "gpt2")
    before = at.session_state[mv.DATA_KEY]

    def refused(key, *texts) -> str:
        found = errors(capture_from(at, key, *texts))
        assert len(found) == 1 and at.session_state[mv.DATA_KEY] is before, found
        assert str(models) not in found[0]  # the model is named, not its path
        return found[0]

    no_tok = models / "no_tokenizer"
    no_tok.mkdir()
    for f in gpt2_folder.iterdir():
        if f.name in ("config.json", "model.safetensors"):
            (no_tok / f.name).write_bytes(f.read_bytes())
    assert "no tokenizer" in refused("no_tokenizer")
    alien = put(models, gpt2_folder, "alien")
    config = json.loads((alien / "config.json").read_text())
    (alien / "config.json").write_text(json.dumps(config | {"model_type": "no-such-arch"}))
    assert "does not know" in refused("alien")
    assert any("gpt2" in c.value and "bert" in c.value for c in at.caption)  # the known list
    huge = put(models, gpt2_folder, "huge")
    (huge / "config.json").write_text(json.dumps(config | {"n_embd": 16384, "n_layer": 48,
                                                           "n_head": 64}))
    assert "GiB" in refused("huge")
    assert f"at most {mv.MAX_TEXT_TOKENS}" in refused("gpt2", " ".join(["the"] * 130))
    assert "64 positions" in refused("gpt2", " ".join(["the cat"] * 40))  # the model's
    assert text.PAIR_ON_CAUSAL.split(";")[0] in refused("gpt2", "the cat", "a dog")
    assert text.EMPTY_TEXT in refused("gpt2", "  ")


def test_no_models_env_hides_loading(monkeypatch, models):
    monkeypatch.setenv(mv.NO_MODELS_ENV, "1")
    monkeypatch.setenv(mv.ALLOW_HUB_ENV, "1")  # the Hub goes with model loading
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    at = open_page("model_view")
    assert at.radio(key="model_view_source").options == [text.SOURCES["example"],
                                                          text.SOURCES["upload"]]
    assert text.MODELS_OFF.format(env=mv.NO_MODELS_ENV, flag="--allow-models") in [
        i.value for i in at.info]
    assert not [i for i in at.info if str(models) in i.value]  # the folder is not named
    assert GRID in chart_keys(at)  # the example still shows
    with pytest.raises(ValueError, match="does not download from the Hub"):
        mv.from_hub("teacher/tiny", "the cat")


def test_without_torch_the_page_says_how_to_install_it(at, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # "import torch" now fails
    at = choose(at, "directory")
    assert text.NO_TORCH.format(module="torch") in [i.value for i in at.info]
    assert "pip install '.[models]'" in text.NO_TORCH
    assert not [t for t in at.text_input if t.key.startswith("model_view")]
    assert GRID in chart_keys(at)


def test_the_hub_is_offered_only_when_allowed_and_online(at, monkeypatch):
    def offered() -> bool:
        return text.SOURCES["hub"] in open_page("model_view").radio(
            key="model_view_source").options

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv(mv.ALLOW_HUB_ENV, raising=False)
    assert text.SOURCES["hub"] not in at.radio(key="model_view_source").options
    assert not offered()  # online, not allowed
    monkeypatch.setenv(mv.ALLOW_HUB_ENV, "1")
    assert offered()  # online and allowed
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not offered()  # allowed, offline
    monkeypatch.delenv("HF_HUB_OFFLINE")
    at = choose(open_page("model_view"), "hub")
    assert not at.exception and "model_view_online" not in [c.key for c in at.checkbox]
    assert at.text_input(key="model_view_hub_name").label == text.HUB_NAME_LABEL
    assert text.HUB_CAPTION in [c.value for c in at.caption]


@pytest.fixture
def hf_cache(monkeypatch, tmp_path, gpt2_folder):
    """A local Hugging Face cache holding teacher/tiny (the tiny GPT-2) as huggingface_hub
    lays it out, found through HF_HUB_CACHE, and a Hub that cannot be reached."""
    import huggingface_hub.constants as hub

    cache = tmp_path / "hf" / "hub"
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--teacher--tiny"
    shutil.copytree(gpt2_folder, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hub, "ENDPOINT", "http://127.0.0.1:9")  # closed: no internet
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv(mv.ALLOW_HUB_ENV, "1")
    return repo


def test_the_hub_never_loads_a_cached_model_by_name_without_the_hub(hf_cache):
    with pytest.raises(ValueError) as err:
        mv.from_hub("teacher/tiny", "the cat sat")
    assert "cannot be fetched from the Hub" in str(err.value)
    assert "nothing is loaded from the local cache" in str(err.value)


def test_a_cached_model_is_offered_in_the_list_when_allowed(at, models, hf_cache,
                                                           monkeypatch):
    at = choose(at, "directory")
    assert text.MODELS_EMPTY.split("{")[0] in at.info[0].value  # the cache is not offered
    monkeypatch.setenv(md.HF_CACHE_ENV, "1")
    at.run()
    box = at.selectbox(key="model_view_model")
    assert box.options == [text.CACHED_MODEL.format(name="teacher/tiny")]
    at = capture_from(at, "hf:teacher/tiny", "the cat sat")
    assert not errors(at) and not at.exception, errors(at)
    data = at.session_state[mv.DATA_KEY]
    assert data.source == text.CACHED_SOURCE_NAME.format(name="teacher/tiny")
    assert data.root == str(hf_cache) and data.weights.shape[:2] == (2, 4)


def test_a_file_linked_from_outside_the_models_folder_is_not_read(at, models, gpt2_folder,
                                                                   tmp_path):
    planted = put(models, gpt2_folder, "planted")
    outside = put(tmp_path, gpt2_folder, "outside")
    (planted / "model.safetensors").unlink()
    (planted / "model.safetensors").symlink_to(outside / "model.safetensors")
    at = capture_from(at, "planted")
    assert mv.DATA_KEY not in at.session_state and len(errors(at)) == 1, errors(at)
    assert str(tmp_path) not in errors(at)[0]


def test_a_capture_holds_its_bytes_in_the_loads_budget_until_it_ends(models, gpt2_folder,
                                                                   monkeypatch):
    """Concurrent captures count the model while its forward pass runs, not only while it
    loads."""
    from attnviz.io import capture as cap

    put(models, gpt2_folder)
    held = []
    real = cap.capture
    monkeypatch.setattr(cap, "capture", lambda *a, **k: held.append(cap.bytes_in_flight())
                        or real(*a, **k))
    data = mv.from_models_dir("gpt2", "the cat sat")
    assert data.weights.shape[:2] == (2, 4)
    assert held and held[0] > 0 and cap.bytes_in_flight() == 0


def test_a_bad_hub_name_is_refused_before_anything_is_fetched():
    with pytest.raises(ValueError, match="not a Hub model name"):
        mv.from_hub("../etc/passwd", "the cat")


def test_capture_metadata_refuses_an_array_of_the_wrong_type():
    from attnviz.io.attention_io import load_attention

    data = npz(**capture_file(is_causal=np.array(0.5)))
    assert "is_causal.npy" in zipfile.ZipFile(io.BytesIO(data)).namelist()
    with pytest.raises(ValueError, match="is_causal array cannot be read"):
        mv.capture_metadata(data, "x.npz", load_attention(data, "x.npz"))


# --- a genuine capture is not refused for its labels; messages name the real cause -----------

def saved_capture(tmp_path, tokens) -> bytes:
    """The bytes save_capture writes for a capture built from numpy arrays (no torch)."""
    from attnviz.io.capture import Capture, save_capture

    t = len(tokens)
    w = causal_weights(t=t).astype(np.float64)
    cap = Capture(attentions=(w,), tokens=(tuple(tokens),),
                  input_ids=(np.arange(t, dtype=np.int64),), token_type_ids=None,
                  positions=(np.arange(t, dtype=np.int64),), config={"model_type": "gpt2"},
                  model_type="gpt2", is_causal=True)
    save_capture(cap, tmp_path / "capture.npz")
    return (tmp_path / "capture.npz").read_bytes()


@pytest.mark.parametrize("tokens, warning", [
    (["a" * 41, "b", "c", "d", "e"], "token labels are cut to 40 characters"),
    (["a\u202eb", "c", "d", "e", "f"], "bidirectional control characters"),
])
def test_a_genuine_capture_with_long_or_bidi_labels_is_shown_with_a_warning(at, tmp_path,
                                                                              tokens, warning):
    at = upload(at, saved_capture(tmp_path, tokens))
    assert not errors(at), errors(at)
    data = at.session_state[mv.DATA_KEY]
    assert data.causal and data.weights.shape == (2, 3, 5, 5)
    assert any(warning in w.value for w in at.warning), [w.value for w in at.warning]
    assert all(len(label) <= 40 and "\u202e" not in label for label in data.tokens)


def test_a_capture_header_of_an_impossible_size_is_refused_in_a_sentence(at):
    good = npz(**capture_file())
    buf = io.BytesIO()
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False,
                                                  "shape": (2**62, 4)})
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(buf, "w") as dst:
        for member in src.namelist():
            raw = header.getvalue() if member == "layers.npy" else src.read(member)
            dst.writestr(member, raw)
    at = upload(at, buf.getvalue())
    assert any("'layers'" in e and "declares an impossible size in its header" in e
               for e in errors(at)), errors(at)
    assert not any("reshape" in e for e in errors(at)) and not at.exception


def test_layers_listed_in_descending_order_are_named_as_the_cause(at):
    at = upload(at, npz(**capture_file(layers=np.array([1, 0], dtype=np.int64))))
    assert any(text.TAMPERED_WHY["layer_order"].format(indices="1, 0") in e
               for e in errors(at)), errors(at)
    assert not any("lists 2 layer indices for 2 layers" in e for e in errors(at))


def test_a_capture_array_beyond_its_size_says_how_many_values_it_holds():
    from attnviz.io.attention_io import load_attention

    data = npz(**capture_file(is_causal=np.zeros(17, dtype=bool)))
    with pytest.raises(ValueError, match="its is_causal array cannot be read: it holds 17 "
                                         "values; at most 16 are allowed"):
        mv.capture_metadata(data, "x.npz", load_attention(data, "x.npz"))


def test_a_load_before_pytorch_is_imported_says_it_is_starting_pytorch(monkeypatch):
    """The first capture in a fresh server waits for torch's import (~24 s) behind a spinner:
    its words say so while torch is not imported yet, and only then."""
    import sys

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    first = mv.waiting_words(text.LOADING)
    assert first.startswith("Starting PyTorch") and first.endswith(text.LOADING[1:])
    monkeypatch.setitem(sys.modules, "torch", object())
    assert mv.waiting_words(text.LOADING) == text.LOADING
