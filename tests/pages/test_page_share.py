"""Save & share page and shared links: every control, through AppTest.

Downloads are read back from AppTest's in-memory media storage (``downloads`` fixture), so the
tests check the bytes a user would get, not only that a button exists.
"""

from __future__ import annotations

import io
import json
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from apptest_helpers import APP, chart_specs, chart_z_by_key, open_page, recorded_downloads
from streamlit.testing.v1 import AppTest

from attnviz import PRESETS, run_scenario
from attnviz.io import scenario_io
from attnviz.scenarios import limits
from attnviz.scenarios.presets import default_scenario
from attnviz.teach.text import common
from attnviz.ui import state
from attnviz.ui.share import plain, read_scenario_upload


@pytest.fixture
def downloads():
    """A function: download button -> the bytes it serves (from the latest run)."""
    with recorded_downloads() as read:
        yield read


def button(at: AppTest, label: str):
    found = [b for b in at.download_button if b.proto.label == label]
    assert found, [b.proto.label for b in at.download_button]
    return found[0]


def link_param(at: AppTest) -> str:
    codes = [c.value for c in at.code if f"?{scenario_io.LINK_PARAM}=" in c.value]
    assert len(codes) == 1, [c.value[:80] for c in at.code]
    url = urlparse(codes[0])
    assert url.path.endswith("/playground")
    return parse_qs(url.query)[scenario_io.LINK_PARAM][0]


def current(at: AppTest):
    return at.session_state[state.SCENARIO]


def same_arrays(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f))
               for f in ("x", "w_q", "w_k", "w_v", "w_o", "source_x", "q_in", "k_in", "v_in"))


# ---------------------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------------------

def test_page_shows_every_control():
    at = open_page("share")
    labels = [b.proto.label for b in at.download_button]
    assert labels == [common.SHARE_DOWNLOAD_SCENARIO, common.DOWNLOADS_CSV,
                      common.DOWNLOADS_NPZ, common.DOWNLOADS_JSON]
    assert at.file_uploader(key="share_upload").proto.type == [".json"]
    assert at.button(key="share_to_address_bar").label == common.SHARE_TO_ADDRESS_BAR
    assert at.radio(key="share_image_format").value == "png"
    assert not at.error and not at.exception


def test_scenario_file_download_is_the_current_scenario(downloads):
    at = open_page("share")
    data = downloads(button(at, common.SHARE_DOWNLOAD_SCENARIO))
    assert button(at, common.SHARE_DOWNLOAD_SCENARIO).proto.url.endswith(".json")
    back = scenario_io.from_json(data)
    assert same_arrays(back, default_scenario())
    assert json.loads(data)["schema_version"] == 2


def test_link_decodes_to_the_current_scenario():
    at = open_page("share")
    back = scenario_io.from_link_param(link_param(at))
    assert same_arrays(back, current(at))
    assert back.title == current(at).title


def test_address_bar_button_sets_query_params():
    at = open_page("share")
    param = link_param(at)
    at.button(key="share_to_address_bar").click().run()
    assert at.query_params[scenario_io.LINK_PARAM] == param
    assert not at.exception and not at.error
    assert at.session_state[state.SCENARIO] is not None


def test_too_large_for_a_link_shows_the_file_route():
    at = open_page("share")
    rng = np.random.default_rng(1)
    t, d = 64, 32
    big = scenario_io.from_dict({**scenario_io.to_dict(default_scenario()),
                                 **scenario_io.to_dict(_big(rng, t, d))})
    at.session_state[state.SCENARIO] = big
    at.run()
    warnings = [w.value for w in at.warning]
    assert any("a link may hold; download it as a scenario file" in w for w in warnings)
    assert all(w[:1].isupper() for w in warnings), warnings  # sentences, not the core's clause
    assert not [c for c in at.code if "?scenario=" in c.value]
    assert button(at, common.SHARE_DOWNLOAD_SCENARIO)  # the file route is still there


def _big(rng, t, d):
    from dataclasses import replace
    return replace(default_scenario(), tokens=tuple(f"w{i}" for i in range(t)),
                   x=rng.normal(size=(t, d)), w_q=rng.normal(size=(d, d)),
                   w_k=rng.normal(size=(d, d)), w_v=rng.normal(size=(d, d)), w_o=np.eye(d),
                   source_tokens=(), source_x=np.zeros((0, 0)), w_a_q=np.zeros((0, 0)),
                   w_a_k=np.zeros((0, 0)), v_a=np.zeros(0), pool_w=np.zeros(0),
                   pool_b=np.zeros(0), title="big")


def test_upload_a_scenario_file_replaces_the_scenario_once():
    at = open_page("share")
    version = at.session_state[state.EDITOR_VERSION]
    text = scenario_io.to_json(PRESETS["cat_sat"].build()).encode()
    at.file_uploader(key="share_upload").set_value(("cat.json", text, "application/json"))
    at.run()
    assert not at.exception and not at.error
    assert same_arrays(current(at), PRESETS["cat_sat"].build())
    assert at.session_state[state.EDITOR_VERSION] == version + 1  # editors restart
    assert [s.value for s in at.success] == [
        "Scenario loaded from the file; every page now uses it\\."]
    # an edit made after the upload survives the next reruns (the file is not re-applied)
    edited = current(at)
    from dataclasses import replace
    at.session_state[state.SCENARIO] = replace(edited, temperature=2.5)
    at.run()
    at.run()
    assert current(at).temperature == 2.5


@pytest.mark.parametrize("name, data, message", [
    ("bad.json", b"{not json", "not valid JSON"),
    ("v2.json", json.dumps({**scenario_io.to_dict(default_scenario()),
                            "schema_version": 3}).encode(), "schema\\_version 3 is not supported"),
    ("empty.json", b"", "the file is empty"),
    ("shape.json", json.dumps({**scenario_io.to_dict(default_scenario()),
                               "x": {"shape": [4, 3], "values": [[1, 2, 3]]}}).encode(),
     "x must hold 4 rows of 3"),
    ("big.json", b" " * (limits.MAX_UPLOAD_BYTES + 1), "uploads may be at most 5 MB"),
])
def test_bad_scenario_files_keep_the_current_scenario(name, data, message):
    at = open_page("share")
    before = current(at)
    at.file_uploader(key="share_upload").set_value((name, data, "application/json"))
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0], errors
    with pytest.raises(ValueError) as reason:
        read_scenario_upload(data, name)
    assert errors == [plain(common.SHARE_NOT_LOADED.format(reason=reason.value))]
    assert same_arrays(current(at), before)


def test_matrix_downloads_serve_exact_data(downloads):
    at = open_page("share")
    at.selectbox(key="share_mx_csv_matrix").set_value("weights").run()
    weights = run_scenario(default_scenario()).attention.weights
    csv = downloads(button(at, "CSV")).decode()
    assert button(at, "CSV").proto.url.endswith(".csv")
    rows = [line.split(",") for line in csv.strip().splitlines()]
    assert rows[0] == ["", "0:word_1", "1:word_2", "2:word_3", "3:word_4"]
    np.testing.assert_array_equal(np.array([r[1:] for r in rows[1:]], dtype=float), weights)
    with np.load(io.BytesIO(downloads(button(at, "All matrices (.npz)"))),
                 allow_pickle=False) as z:
        np.testing.assert_array_equal(z["weights"], weights)
        assert list(z["q_labels"]) == ["0:word_1", "1:word_2", "2:word_3", "3:word_4"]
    data = json.loads(downloads(button(at, "All matrices (.json)")))
    np.testing.assert_array_equal(np.array(data["matrices"]["weights"]["values"]), weights)


def test_image_format_choice_reaches_every_chart():
    at = open_page("share")
    at.radio(key="share_image_format").set_value("svg").run()
    assert at.session_state[state.IMAGE_FORMAT] == "svg"
    at.switch_page("pages/playground.py").run()
    configs = [spec["config"] for spec in chart_specs(at)]
    assert configs and all(c["toImageButtonOptions"]["format"] == "svg" for c in configs)
    assert configs[0]["toImageButtonOptions"]["filename"].startswith("attnviz_")
    at.switch_page("pages/share.py").run()
    assert at.radio(key="share_image_format").value == "svg"  # kept across pages


def test_png_is_the_default_at_twice_the_resolution():
    at = open_page("playground")
    config = chart_specs(at)[0]["config"]
    assert config["toImageButtonOptions"]["format"] == "png"
    assert config["toImageButtonOptions"]["scale"] == 2
    assert config["displaylogo"] is False


# ---------------------------------------------------------------------------------------------
# Opening a link, on any page
# ---------------------------------------------------------------------------------------------

def run_with_link(param: str, page: str | None = None) -> AppTest:
    """A fresh session opening ``/<page>?scenario=<param>`` (one run, like a browser)."""
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params[scenario_io.LINK_PARAM] = param
    if page:
        at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.parametrize("key", ["cat_sat", "seed_004_two_heads", "translation"])
def test_link_restores_the_identical_scenario_and_weights(key):
    scenario = PRESETS[key].build()
    at = run_with_link(scenario_io.to_link_param(scenario), "playground")
    assert same_arrays(current(at), scenario)
    assert current(at).variant == scenario.variant
    expected = run_scenario(scenario).attention  # the lecture view: head 0 when there are heads
    np.testing.assert_array_equal(chart_z_by_key(at, "playground_fig_weights_slot_1"),
                                  expected.head(0).weights)
    np.testing.assert_array_equal(chart_z_by_key(at, "playground_fig_weights_slot_2"),
                                  expected.output)


@pytest.mark.parametrize("page", ["masks", "step_by_step", "share", "your_attention"])
def test_link_works_opened_on_any_page(page):
    scenario = PRESETS["cat_sat"].build()
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params[scenario_io.LINK_PARAM] = scenario_io.to_link_param(scenario)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    assert same_arrays(current(at), scenario)


def test_link_is_applied_once_so_later_edits_are_kept():
    scenario = PRESETS["cat_sat"].build()
    at = run_with_link(scenario_io.to_link_param(scenario), "playground")
    version = at.session_state[state.EDITOR_VERSION]
    from dataclasses import replace
    at.session_state[state.SCENARIO] = replace(current(at), description="edited")
    at.run()
    at.switch_page("pages/masks.py").run()
    assert current(at).description == "edited"  # not replaced by the link again
    assert at.session_state[state.EDITOR_VERSION] == version


@pytest.mark.parametrize("param, message", [
    ("garbage!!", "holds characters that attnviz links never contain"),
    ("eJwLSS0u0UvOzytJzSvRy0nNS8_Ms1LLSy0uyczPs1JIzs8tKEotLi5JTbEC", "link"),
    ("A" * (limits.MAX_LINK_CHARS + 5), "8,005 characters long"),
], ids=["bad-characters", "truncated", "too-long"])
def test_bad_link_shows_a_message_and_the_default_scenario(param, message):
    at = run_with_link(param, "playground")
    errors = [e.value for e in at.error]
    assert errors and errors[0].startswith(plain(common.SHARE_BAD_LINK))
    assert message.replace(",", "\\,") in errors[0] or message in errors[0].replace("\\", "")
    assert same_arrays(current(at), default_scenario())
    assert chart_specs(at)  # the page still draws


def test_tampered_link_with_markup_is_shown_as_plain_text():
    data = scenario_io.to_dict(default_scenario())
    data["variant"] = "![x](http://evil.example/x.png)"
    import base64
    import zlib
    param = base64.urlsafe_b64encode(zlib.compress(json.dumps(data).encode())).decode()
    at = run_with_link(param.rstrip("="))
    error = at.error[0].value
    assert "](" not in error and "http://" not in error
    assert "variant must be one of" in error.replace("\\", "")


# ---------------------------------------------------------------------------------------------
# Sharing with a room: the LAN address and the QR code
# ---------------------------------------------------------------------------------------------

def decode_qr(png: bytes) -> str:
    """The text a QR code PNG holds, read by an independent decoder (zxing-cpp)."""
    zxingcpp = pytest.importorskip("zxingcpp")
    from PIL import Image

    (found,) = zxingcpp.read_barcodes(np.array(Image.open(io.BytesIO(png)).convert("L")),
                                      formats=zxingcpp.BarcodeFormat.QRCode)
    return found.text


@pytest.mark.parametrize("url, want", [
    ("http://127.0.0.1:8501/playground?scenario=abc", "http://192.168.1.23:8501/playground?scenario=abc"),
    ("http://localhost:8501/playground", "http://192.168.1.23:8501/playground"),
    ("http://10.0.0.5:8501/playground?scenario=abc", "http://10.0.0.5:8501/playground?scenario=abc"),
    ("https://attnviz.school.example/playground", "https://attnviz.school.example/playground"),
])
def test_a_loopback_link_gets_this_machines_lan_address(monkeypatch, url, want):
    from attnviz.ui import share
    monkeypatch.setattr(share, "lan_address", lambda: "192.168.1.23")
    assert share.room_url(url) == want


def test_without_a_network_the_link_is_kept(monkeypatch):
    from attnviz.ui import share
    monkeypatch.setattr(share, "lan_address", lambda: None)
    assert share.room_url("http://127.0.0.1:8501/x") == "http://127.0.0.1:8501/x"


def test_the_qr_code_decodes_to_the_link():
    from attnviz.ui.share import link_url, qr_png
    url = "http://192.168.1.23:8501" + link_url(default_scenario(), here="share")
    assert decode_qr(qr_png(url)) == url
    assert qr_png("x" * 3000) is None  # more than a QR code holds


def test_the_share_page_warns_when_students_cannot_reach_the_server(monkeypatch):
    from attnviz.ui import share
    monkeypatch.setattr(share, "listens_beyond_loopback", lambda: False)
    at = open_page("share")
    assert any(common.SHARE_LOOPBACK in w.value for w in at.warning)
    assert "share_qr_url" not in at.session_state


def test_the_share_page_shows_the_rooms_link_as_a_qr_code(monkeypatch):
    from attnviz.ui import share
    monkeypatch.setattr(share, "listens_beyond_loopback", lambda: True)
    at = open_page("share")
    assert not at.warning
    shown = at.session_state["share_qr_url"]
    assert scenario_io.LINK_PARAM + "=" in shown
    assert shown.endswith(at.code[0].value.split("?", 1)[1])  # the same link as shown above
