"""Your own attention page: every control through AppTest, uploads included.

Streamlit 1.67's AppTest drives ``st.file_uploader`` with ``set_value((name, bytes, mime))``,
so the page is tested with real uploads: good files, bad files, tokens, large sequences.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_specs, chart_z_by_key, decode, open_page

from attnviz.io.examples.make_example import build_example
from attnviz.scenarios import limits
from attnviz.teach.text import common
from attnviz.teach.text import your_attention as text
from attnviz.ui.share import plain

EXAMPLE, EXAMPLE_TOKENS = build_example()
LABELS = [f"{i}:{t}" for i, t in enumerate(EXAMPLE_TOKENS)]


def npy(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def softmax_rows(shape, seed=0):
    x = np.random.default_rng(seed).normal(size=shape) * 2
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def spec(at, key):
    return chart_specs(at)[chart_keys(at).index(key)]


def upload(at, name, data, key="your_attention_weights"):
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream"))
    return at.run()


@pytest.fixture
def at():
    return open_page("your_attention")


def test_example_is_shown_without_an_upload(at):
    assert text.EXAMPLE in [i.value for i in at.info]
    assert chart_keys(at) == ["your_attention_fig_weights", "your_attention_fig_head_0",
                              "your_attention_fig_head_1", "your_attention_fig_head_2",
                              "your_attention_fig_head_3", "your_attention_fig_lines",
                              "your_attention_fig_entropy"]
    # default: layer 0, mean of the heads
    np.testing.assert_allclose(chart_z_by_key(at, "your_attention_fig_weights"),
                               EXAMPLE[0].astype(float).mean(axis=0), rtol=0, atol=1e-15)
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"] == LABELS
    for h in range(4):
        np.testing.assert_array_equal(chart_z_by_key(at, f"your_attention_fig_head_{h}"),
                                      EXAMPLE[0, h])
    assert not at.error and not at.warning and not at.exception


def test_layer_and_head_pickers(at):
    at.selectbox(key="your_attention_layer_2").set_value(1).run()
    at.selectbox(key="your_attention_head_4").set_value(2).run()
    np.testing.assert_array_equal(chart_z_by_key(at, "your_attention_fig_weights"), EXAMPLE[1, 2])
    name = text.SELECTION.format(layer=text.LAYER_NAME.format(i=1),
                                 head=common.HEAD_NAME.format(h=2))
    assert f"**{text.WEIGHTS_TITLE.format(name=name)}**" in [m.value for m in at.markdown]
    for h in range(4):  # the grid follows the layer
        np.testing.assert_array_equal(chart_z_by_key(at, f"your_attention_fig_head_{h}"),
                                      EXAMPLE[1, h])
    # the diagnostics table follows the head
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["max weight"].to_numpy(), EXAMPLE[1, 2].max(axis=1))
    assert list(table["top key"]) == [LABELS[j] for j in EXAMPLE[1, 2].argmax(axis=1)]
    p = EXAMPLE[1, 2].astype(float)
    entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0), axis=1)
    np.testing.assert_allclose(table["entropy"].to_numpy(), entropy, rtol=1e-12)


def test_line_view_focus(at):
    lines = spec(at, "your_attention_fig_lines")
    all_traces = len(lines["data"])
    at.selectbox(key="your_attention_focus_6").set_value(5).run()
    focused = spec(at, "your_attention_fig_lines")
    assert len(focused["data"]) < all_traces
    assert not at.exception


def test_entropy_chart_golden_for_uniform_rows(at):
    uniform = np.full((2, 4, 4), 0.25)
    upload(at, "u.npy", npy(uniform))
    z = chart_z_by_key(at, "your_attention_fig_entropy")
    np.testing.assert_allclose(z, np.log(4), rtol=1e-12)  # ln t for a uniform row


def test_upload_npy_with_tokens(at):
    w = softmax_rows((3, 5, 5))
    upload(at, "mine.npy", npy(w))
    assert text.EXAMPLE not in [i.value for i in at.info]
    assert at.text[0].value == text.SHAPE.format(shape=(3, 5, 5), layers="1 layer",
                                                 heads="3 heads", t=5)
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"] == [f"{i}:t{i}" for i in range(5)]
    assert [k for k in chart_keys(at) if k.startswith("your_attention_fig_head_")] == [
        "your_attention_fig_head_0", "your_attention_fig_head_1", "your_attention_fig_head_2"]
    at.selectbox(key="your_attention_head_3").set_value(1).run()
    np.testing.assert_array_equal(chart_z_by_key(at, "your_attention_fig_weights"), w[1])
    upload(at, "tokens.txt", b"<b>The</b> cat sat on mats", key="your_attention_tokens")
    x = spec(at, "your_attention_fig_weights")["data"][0]["x"]
    assert x == ["0:<b>The</b>", "1:cat", "2:sat", "3:on", "4:mats"]  # labels only in axes
    upload(at, "tokens.json", json.dumps(["a", "b", "c", "d", "e"]).encode(),
           key="your_attention_tokens")
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"][0] == "0:a"
    assert not at.error and not at.exception


def test_tokens_of_the_wrong_length_show_an_error_and_default_labels(at):
    upload(at, "w.npy", npy(softmax_rows((4, 4))))
    upload(at, "t.txt", b"one two three", key="your_attention_tokens")
    errors = [e.value for e in at.error]
    assert len(errors) == 1
    assert errors[0].startswith(plain(text.TOKENS_NOT_USED.split("{")[0]))
    assert "holds 3 tokens but the attention matrices are 4×4" in errors[0].replace("\\", "")
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"] == ["0:t0", "1:t1", "2:t2",
                                                                      "3:t3"]
    assert chart_keys(at)  # the page still draws


def test_bad_token_file(at):
    upload(at, "t.json", b"[1, 2]", key="your_attention_tokens")
    assert "token 0 of the JSON list is not a string" in at.error[0].value.replace("\\", "")
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"] == LABELS  # example's own tokens


@pytest.mark.parametrize("name, data, message", [
    ("p.npz", None, "holds Python objects (pickled data); attnviz never unpickles uploads"),
    ("e.npy", b"", "the file is empty"),
    ("c.npy", b"not an array at all", "is not a valid .npy array"),
    ("z.npz", b"PK\x03\x04junk", "damaged or not a .npz"),
    ("s.npy", npy(np.zeros((2, 3))), "the last two sizes must be equal (t, t)"),
    ("n.npy", npy(-softmax_rows((3, 3))), "negative values"),
    ("big.npy", b"\x93NUMPY" + b"\0" * limits.MAX_UPLOAD_BYTES,
     "uploads may be at most 5,242,880 bytes (5 MB)"),
    ("long.npy", None, "has t = 1025 tokens; at most 1024 are allowed"),
], ids=["pickled", "empty", "corrupt", "corrupt-zip", "not-square", "negative", "oversize",
        "too-long"])
def test_bad_uploads_show_a_message_never_a_traceback(at, name, data, message):
    if name == "p.npz":
        objects = np.empty(1, dtype=object)
        objects[0] = {"a": 1}
        buf = io.BytesIO()
        np.savez(buf, attention=objects)
        data = buf.getvalue()
    if name == "long.npy":
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                      "shape": (1025, 1025)})
        data = header.getvalue()
    upload(at, name, data)
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(text.CANNOT_SHOW.split("{")[0])
    assert message in errors[0], errors
    assert chart_keys(at) == []  # nothing half-drawn
    # a good file afterwards works again
    upload(at, "ok.npy", npy(softmax_rows((2, 2))))
    assert not at.error and chart_keys(at)[0] == "your_attention_fig_weights"


def test_rows_not_summing_to_one_warn_and_still_draw(at):
    w = softmax_rows((2, 4, 4))
    w[0, 1] *= 0.5
    upload(at, "w.npz", npz(attention=w))
    warnings = [x.value.replace("\\", "") for x in at.warning]
    assert len(warnings) == 1 and warnings[0].startswith("1 of 8 rows do not sum to 1")
    np.testing.assert_array_equal(chart_z_by_key(at, "your_attention_fig_weights"), w.mean(axis=0))


def test_long_sequence_is_downsampled_with_a_message(at):
    t = 600
    w = np.full((t, t), 1.0 / t, dtype=np.float32)
    w[:, 0] += 0.5 / t
    w[:, 1] -= 0.5 / t
    upload(at, "long.npy", npy(w))
    infos = [i.value for i in at.info]
    assert text.DOWNSAMPLED.format(t=600, limit=512, shown=300, f=2) in infos
    assert text.LINE_VIEW_TOO_LONG.format(limit=64) in infos
    main = spec(at, "your_attention_fig_weights")["data"][0]
    z = decode(main["z"]).astype(float)
    assert z.shape == (300, 300)
    # queries of a block averaged, keys summed: rows still sum to 1
    np.testing.assert_allclose(z[0, 0], w[:2, :2].astype(float).sum(axis=1).mean(), rtol=1e-6)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, rtol=1e-5)
    assert main["x"][:2] == ["0–1", "2–3"]
    assert main["xgap"] == 0  # no 1-px gaps between cells of a few pixels
    grid = decode(spec(at, "your_attention_fig_head_0")["data"][0]["z"])
    assert grid.shape == (60, 60)  # the per-head grid is averaged further (≤ 64)
    pooled = common.HEADS_POOLED.format(t=600, shown=60, f=10) + text.HEADS_EXACT
    assert pooled in [c.value for c in at.caption]
    entropy = decode(spec(at, "your_attention_fig_entropy")["data"][0]["z"])
    assert entropy.shape == (1, 120)  # every head kept, queries averaged in blocks of 5
    assert spec(at, "your_attention_fig_entropy")["data"][0]["y"] == ["head 0"]
    assert "your_attention_fig_lines" not in chart_keys(at)


def test_many_heads_are_paged_by_sixteen(at):
    upload(at, "w.npy", npy(softmax_rows((20, 3, 3))))
    heads = [k for k in chart_keys(at) if k.startswith("your_attention_fig_head_")]
    assert heads == [f"your_attention_fig_head_{h}" for h in range(16)]
    at.number_input(key="your_attention_first_head").set_value(4).run()
    heads = [k for k in chart_keys(at) if k.startswith("your_attention_fig_head_")]
    assert heads == [f"your_attention_fig_head_{h}" for h in range(4, 20)]


def test_downloads_and_report_button(at):
    labels = [b.proto.label for b in at.download_button]
    assert labels == ["CSV", "All matrices (.npz)", "All matrices (.json)",
                      "Download an HTML report of these figures"]
    report = at.download_button[-1]
    assert report.proto.deferred_file_id or report.proto.url  # built on click
    assert not report.proto.disabled
    assert at.selectbox(key="your_attention_dl_csv_matrix").options == ["weights", "entropy",
                                                                        "effective"]


# ---------------------------------------------------------------------------------------------
# Huge and tiny values, BERT-style token files, lone surrogates
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [1e306, 1e308, np.finfo(np.float64).max])
def test_weights_too_large_to_draw_are_a_message(at, value):
    w = softmax_rows((4, 6, 6))
    w[2, 3, 1] = value
    upload(at, "huge.npy", npy(w))
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(text.CANNOT_SHOW.split("{")[0])
    assert "at layer 0, head 2, row 3, column 1; attention weights lie between 0 and 1" \
        in errors[0]
    assert chart_keys(at) == []


@pytest.mark.parametrize("value", [-0.0, 5e-324, 2.2250738585072014e-308, 1e100])
def test_extreme_but_computable_weights_draw_every_view(at, value):
    w = softmax_rows((2, 5, 5))
    w[1, 2] = value  # one row of -0.0, subnormals or huge values
    upload(at, "w.npy", npy(w))
    assert not at.exception and not at.error
    assert len(chart_keys(at)) == 5  # weights, 2 heads, lines, entropy
    np.testing.assert_array_equal(chart_z_by_key(at, "your_attention_fig_weights"),
                                  w.mean(axis=0))
    entropy = chart_z_by_key(at, "your_attention_fig_entropy")
    assert np.isfinite(entropy).all()
    table = at.dataframe[0].value
    assert np.isfinite(table.select_dtypes("number").to_numpy()).all()


def test_a_bert_style_token_file_labels_the_axes(at):
    upload(at, "w.npy", npy(softmax_rows((2, 4, 4))))
    upload(at, "tokens.txt", b"[CLS]\nhello\nworld\n[SEP]\n", key="your_attention_tokens")
    assert not at.error and not at.exception
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"] == [
        "0:[CLS]", "1:hello", "2:world", "3:[SEP]"]
    upload(at, "tokens2.txt", b"[CLS] a b [SEP]", key="your_attention_tokens")
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"][0] == "0:[CLS]"


@pytest.mark.parametrize("name, data, message", [
    ("t.json", b'["a", "b", "\\ud800", "d", "e", "f"]',
     "token 2 of the token file holds a character that is not valid Unicode"),
    ("t.txt", b'["\\udc00", "b", "c", "d", "e", "f"]',
     "token 0 of the token file holds a character that is not valid Unicode"),
])
def test_a_token_file_with_a_lone_surrogate_is_a_message(at, name, data, message):
    upload(at, name, data, key="your_attention_tokens")
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and message in errors[0]
    assert spec(at, "your_attention_fig_weights")["data"][0]["x"] == LABELS  # example's tokens


def test_npz_tokens_with_a_lone_surrogate_are_a_message(at):
    data = npz(attention=softmax_rows((2, 3, 3)), tokens=np.array(["a", "\udfff", "c"]))
    upload(at, "w.npz", data)
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1
    assert "token 1 of array tokens of the .npz holds a character that is not valid" in errors[0]
