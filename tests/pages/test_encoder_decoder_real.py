"""A real encoder–decoder model on the pages, through AppTest: a tiny T5 and a tiny BART saved
with save_pretrained in a tmp models folder (ATTNVIZ_MODELS_DIR) are captured on Model view
(first text the source, second the target), which then offers the three kinds of attention; the
Encoder–decoder page shows the cross-attention head picked (target tokens × source tokens, the
model's own numbers) and opens it on every page: the current scenario becomes that head, a
"cross" scenario whose run gives the probabilities the page showed. Before any capture the page
says where to capture one. Skips only where torch/transformers are not installed.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from apptest_helpers import chart_keys, decode, open_page, spec_by_key, switch_to

from attnviz.io import models_dir as md
from attnviz.scenarios.circuits import score_heads, token_ids
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import circuits as circuits_text
from attnviz.teach.text import encoder_decoder as ed_text
from attnviz.teach.text import model_view as text
from attnviz.ui import model_view as mv
from attnviz.ui import state

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may go online
SOURCE = "the cat sat on a mat"
TARGET = "a dog ran far"


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_models import save_model, seq2seq_configs

    models = tmp_path_factory.mktemp("models")
    return {name: save_model(*config, models / name, seed=1, bias_std=0.5 * (name == "bart"))
            for name, config in seq2seq_configs().items() if name in ("t5", "bart")}


@pytest.fixture
def at(monkeypatch, folders):
    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(folders["t5"].parent))
    return open_page("model_view")


def errors(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def capture_from(at, folder):
    at.radio(key="model_view_source").set_value("directory")
    at.run()
    at.selectbox(key="model_view_model").set_value(folder.name)
    at.text_input(key="model_view_text").set_value(SOURCE)
    at.text_input(key="model_view_text_b").set_value(TARGET)
    at.button(key="model_view_capture").click()
    return at.run()


def test_before_a_capture_the_page_says_where_to_capture(monkeypatch):
    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    at = open_page("encoder_decoder")
    assert not at.exception
    assert ed_text.REAL_NONE in [i.value for i in at.info]
    assert "encoder_decoder_fig_cross_head" not in chart_keys(at)


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_a_cross_attention_head_opens_from_the_encoder_decoder_page(at, folders, name):
    at = capture_from(at, folders[name])
    assert not at.exception and not errors(at)
    data = at.session_state[mv.DATA_KEY]
    assert data.seq2seq and data.texts == (SOURCE, TARGET)
    assert data.tokens == tuple(SOURCE.split()) and data.target_tokens[1:] == tuple(
        TARGET.split())
    # Model view: a kind picker; the decoder's kind is causal, over the target's tokens
    assert at.radio(key="model_view_kind").options == list(text.KINDS.values())
    at.radio(key="model_view_kind").set_value("decoder")
    at.run()
    assert not at.exception
    head = decode(spec_by_key(at, "model_view_fig_head")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(np.nan_to_num(head), data.decoder[0, 0], atol=1e-6)
    # titles and the caption name the kind shown
    decoder = text.KIND_NAMES["decoder"]
    assert [text.KIND_GRID_TITLE.format(kind=decoder),
            text.KIND_OPENED_TITLE.format(kind=decoder, layer=0, h=0)] == [
        s.value for s in at.subheader][:2]
    assert text.KIND_SOURCE.format(source=data.source, kind=decoder) + ":" in " ".join(
        c.value for c in at.caption)
    # the circuits section scores the decoder's self-attention, on the target, and says so
    captions = [c.value for c in at.caption]
    assert circuits_text.SEQ2SEQ_STACK.format(stack=decoder) in captions
    assert circuits_text.ON_TEXT_SEQ2SEQ.format(t=len(data.target_tokens)) in captions
    assert "model_view_circuits_run" not in [b.key for b in at.button]  # one-stack probe only
    scored = at.radio(key="model_view_circuits_kind").value
    grid = decode(spec_by_key(at, "model_view_circuits_fig_grid")["data"][0]["z"]).astype(float)
    expected = score_heads(data.decoder, token_ids(data.target_tokens)).score(scored)
    np.testing.assert_allclose(grid, expected, atol=1e-6)
    assert not np.allclose(expected, score_heads(data.weights, token_ids(data.tokens)).score(
        scored), equal_nan=True)  # not the encoder's scores
    at.radio(key="model_view_kind").set_value("cross")
    at.run()
    assert circuits_text.SEQ2SEQ_STACK.format(stack=decoder) in [c.value for c in at.caption]
    assert not at.exception and "model_view_fig_cross_head" in chart_keys(at)
    # the cross-attention's layer × head grid: thumbnails of target × source
    assert text.KIND_GRID_TITLE.format(kind=text.KIND_NAMES["cross"]) in [
        s.value for s in at.subheader]
    grid = decode(spec_by_key(at, "model_view_fig_cross_grid")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(grid[6:11, 7:13], data.cross[1, 1], atol=1e-6)  # gap 1

    switch_to(at, "encoder_decoder")
    assert not at.exception and not errors(at)
    at.selectbox(key="encoder_decoder_cross_layer").set_value(1)
    at.selectbox(key="encoder_decoder_cross_head").set_value(2)
    at.run()
    spec = spec_by_key(at, "encoder_decoder_fig_cross_head")
    shown = decode(spec["data"][0]["z"]).astype(float)
    assert shown.shape == (5, 6)  # target tokens (start + 4) × source tokens
    np.testing.assert_allclose(shown, data.cross[1, 2], atol=1e-6)
    assert list(spec["data"][0]["y"])[1:] == [f"{i}:{w}" for i, w in
                                              enumerate(TARGET.split(), start=1)]
    assert list(spec["data"][0]["x"]) == [f"{i}:{w}" for i, w in enumerate(SOURCE.split())]
    at.button(key="encoder_decoder_open").click()
    at.run()
    assert not at.exception and not errors(at)
    sc = at.session_state[state.SCENARIO]
    assert sc.title == text.REAL_CROSS_TITLE.format(model_type=name, layer=1, h=2)
    assert sc.variant == "cross" and sc.source_tokens == tuple(SOURCE.split())
    weights = np.asarray(run_scenario(sc).attention.weights)
    np.testing.assert_allclose(weights, data.cross[1, 2], rtol=0, atol=1e-5)
    assert np.abs(weights - data.cross[1, 1]).max() > 1e-3  # not another head's
    assert [s.value for s in at.success] == [text.KIND_REAL_OPENED.format(
        kind=text.KIND_NAMES["cross"], layer=1, h=2)]
    links = [link.proto.page for link in at.get("page_link")]
    assert links == [p.split("/")[-1][:-3] for p in text.REAL_CROSS_OPEN_PAGES]
    for page in ("step_by_step", "trace", "gradients", "playground", "encoder_decoder"):
        switch_to(at, page)
        assert not at.exception, (page, [e.message for e in at.exception])
        assert not errors(at), (page, errors(at))
        assert at.session_state[state.SCENARIO] is sc
    # the page's own cross-attention draws that head (target × source)
    toy = decode(spec_by_key(at, "encoder_decoder_fig_cross_weights")["data"][0]["z"])
    np.testing.assert_allclose(toy.astype(float), data.cross[1, 2], atol=1e-5)


def test_a_saved_encoder_decoder_capture_uploads_with_its_three_kinds(folders, tmp_path):
    import io
    import zipfile

    from attnviz.io.capture import (
        capture_seq2seq,
        load_model,
        save_capture,
        save_seq2seq,
        seq2seq_arrays,
    )

    cap = capture_seq2seq(*load_model(folders["t5"]), SOURCE, TARGET)
    save_seq2seq(cap, tmp_path / "t5.npz")
    data = mv.from_upload((tmp_path / "t5.npz").read_bytes(), "t5.npz")
    assert data.seq2seq and data.folder is None
    assert data.tokens == cap.source_tokens and data.target_tokens == cap.target_tokens
    for ours, theirs in ((data.weights, cap.encoder), (data.decoder, cap.decoder),
                         (data.cross, cap.cross)):
        np.testing.assert_allclose(ours, theirs, atol=1e-7)  # saved as float32
    # a one-stack capture file still loads as before
    from hf_models import configs, save_model

    from attnviz.io.capture import capture

    gpt2 = save_model(*configs()["gpt2"], tmp_path / "gpt2")
    save_capture(capture(*load_model(gpt2), text=SOURCE), tmp_path / "gpt2.npz")
    old = mv.from_upload((tmp_path / "gpt2.npz").read_bytes(), "gpt2.npz")
    assert not old.seq2seq and old.causal and old.weights.shape == (2, 4, 6, 6)
    # a cross-attention that does not fit the tokens is refused in a sentence
    arrays = seq2seq_arrays(cap)
    arrays["cross_attention"] = arrays["cross_attention"][..., :-1]
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    with pytest.raises(ValueError, match=r"the file has been changed after it was captured: "
                                         r".*'cross_attention' of the .npz has shape"):
        mv.from_upload(buffer.getvalue(), "t5.npz")
    assert zipfile.is_zipfile(io.BytesIO(buffer.getvalue()))
