"""Shared helpers for AppTest page tests: start the app, open a page, read chart data."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import streamlit.testing.v1.app_test as app_test_module
import streamlit.testing.v1.local_script_runner as local_script_runner
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import RerunData
from streamlit.testing.v1 import AppTest

from attnviz.ui import plotly_view
from attnviz.ui.diagnostics import panel_key

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


class ServerLikePagesManager(PagesManager):
    """A PagesManager whose process has already left legacy pages/ mode, as on a server.

    AppTest makes a new PagesManager on every run, which puts the class flag
    ``uses_pages_directory`` back to legacy mode; app.py (``state.use_app_frame``) then switches
    it off and reruns — once per server process on a real server, but on *every* AppTest run.
    That extra run loses button clicks in tests and doubles every timing in benchmarks.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


_FRAGMENT: list[str | None] = [None]  # the st.fragment the next AppTest run reruns alone


def _rerun_data_with_fragment(**kwargs):
    """AppTest's RerunData, carrying ``_FRAGMENT`` while it is set: both the runner's initial
    request and the run's (a full rerun coalesced with a fragment rerun is a full rerun)."""
    if _FRAGMENT[0]:
        kwargs["fragment_id"] = _FRAGMENT[0]
    return RerunData(**kwargs)


def act_like_a_server() -> None:
    """Make AppTest run app.py as a server process does after its first run (see above), and
    able to rerun one ``st.fragment`` alone (see ``run_like_a_server``)."""
    app_test_module.PagesManager = ServerLikePagesManager
    local_script_runner.RerunData = _rerun_data_with_fragment


def fragment_of(at: AppTest, key: str | None) -> str | None:
    """The id of the ``st.fragment`` the widget ``key`` was drawn in; None for the page body
    (read from the widget's registered metadata: Streamlit internals)."""
    try:
        state = at.session_state._state._state  # noqa: SLF001
        widget_id = state._key_id_mapper.get_id_from_key(key)
        return state._new_widget_state.widget_metadata[widget_id].fragment_id
    except (AttributeError, KeyError, TypeError):
        return None


def run_like_a_server(at: AppTest, key: str | None) -> AppTest:
    """Run after a change of widget ``key`` as a server does: a widget drawn inside an
    ``st.fragment`` reruns that fragment alone (the browser sends the fragment's id), any
    other the whole script. AppTest itself always reruns the whole script.

    After a fragment run, ``at`` holds only the elements that run drew (the fragment's; the
    browser keeps showing the others). Needs ``act_like_a_server()``.
    """
    _FRAGMENT[0] = fragment_of(at, key)
    try:
        return at.run()
    finally:
        _FRAGMENT[0] = None


# expanders whose content runs only while they are open (``on_change="rerun"``); tests open them
# so that every widget is there (test_page_multi_head.py, test_page_encoder_decoder.py and
# test_page_playground.py check the lazy behaviour)
LAZY_EXPANDERS = ("mha_inputs", "encoder_decoder_inputs", "encoder_decoder_cross_weights",
                  "encoder_decoder_additive_inputs",
                  "pg_downloads",
                  *(panel_key(k) for k in ("pg_diag", "pg_diag_heads", "trace_diag",
                                           "line_view_diag",
                                           "compare_diag_a", "compare_diag_b")))


def open_lazy_expanders(at: AppTest) -> AppTest:
    """Have the lazy expanders open on the next run (as a user clicking them would)."""
    for key in LAZY_EXPANDERS:
        at.session_state[key] = True
    return at


def user_key(element) -> str:
    """The key an element or widget was drawn with (Streamlit ends its id with "-<key>")."""
    return element.proto.id.split("-", 2)[-1]


def editor_keys(at: AppTest) -> set[str]:
    """The widget keys of the data editors of the current run."""
    return {user_key(e) for e in at.get("data_editor")}


# editors in lazy tabs (only the selected tab's editor runs): (tabs key, tab label)
ADDITIVE_TABS = {"encoder_decoder_w_a_q": ("encoder_decoder_additive_weights", "W_q"),
                 "encoder_decoder_w_a_k": ("encoder_decoder_additive_weights", "W_k"),
                 "encoder_decoder_v_a": ("encoder_decoder_additive_weights", "v_a")}


def show_weight_tab(at: AppTest, name: str) -> AppTest:
    """Select the tab of editor ``name`` ("pg_w_k") when its editor is not on the page.

    The W_Q/W_K/W_V(/W_O) tabs of ``controls.weight_editors`` and the additive W_q/W_k/v_a
    tabs are lazy: only the selected tab's editor runs, as only it is on screen (a user
    clicks the tab first).
    """
    prefix, field = name[:-4], name[-3:]  # "encoder_decoder_w_k": the prefix may hold "_"
    tab = ADDITIVE_TABS.get(name) or (
        (f"{prefix}_weights", field.upper()) if field in ("w_q", "w_k", "w_v", "w_o") else None)
    if tab and not any(k.startswith(f"{name}_v") for k in editor_keys(at)):
        at.session_state[tab[0]] = tab[1]
        at.run()
    return at


def each_weight_tab(at: AppTest) -> list[str]:
    """Rerun the page with each of its other weight tabs selected, then the first again.

    The tabs are lazy (only the selected tab's editor runs), so a sweep that wants every
    editor to meet a scenario goes through them; each run is checked by the caller's
    ``at``. Returns the labels visited.
    """
    def containers(node):
        for child in getattr(node, "children", {}).values():
            if getattr(child, "type", "") == "tab_container":
                yield child
            yield from containers(child)

    visited = []
    for container in list(containers(at._tree)):  # noqa: SLF001 — AppTest's element tree
        key = user_key(container)
        labels = [tab.label for tab in container.children.values()]
        if not key.endswith("_weights"):
            continue
        for label in labels[1:] + labels[:1]:
            at.session_state[key] = label
            at.run()
            assert not at.exception, (key, label, [e.message for e in at.exception])
            visited.append(label)
    return visited


def open_page(page: str | None = None, *, timeout: float = 30,
              lazy_open: bool = True) -> AppTest:
    """Run app.py, then switch to ``pages/<page>.py`` (None = Home); fail on any exception.

    ``lazy_open``: open the lazy expanders (see ``LAZY_EXPANDERS``) as the page is opened.
    """
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    if page:
        if lazy_open:
            open_lazy_expanders(at)
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def decode(value):
    """Turn plotly's base64 typed arrays ({"dtype", "bdata", "shape"}) back into numpy."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else shape
            arr = arr.reshape(dims)
        return arr
    return np.asarray(value)


def charts(at: AppTest) -> list:
    """Every chart element of the current run, in page order: attnviz's in-place chart
    component (``attnviz.ui.plotly_view``) or, where static serving is off,
    ``st.plotly_chart``."""
    return [node for node in at.main
            if getattr(node, "type", None) == "plotly_chart"
            or (getattr(node, "type", None) == "bidi_component"
                and node.proto.component_name == plotly_view.NAME)]


def chart_spec(element) -> dict:
    """A chart element's figure as a dict: ``data``, ``layout`` and the Plotly ``config``."""
    if element.type == "plotly_chart":
        return {**json.loads(element.proto.spec), "config": json.loads(element.proto.config)}
    return json.loads(element.proto.bytes)  # plotly_view's JSON, sent as UTF-8 bytes


def chart_specs(at: AppTest) -> list[dict]:
    """Every chart of the current run as a decoded-JSON figure dict (with its ``config``)."""
    return [chart_spec(c) for c in charts(at)]


def chart_z(at: AppTest, index: int, trace: int = 0) -> np.ndarray:
    """The z matrix of the index-th plotly chart (first trace by default) as float64."""
    return decode(chart_specs(at)[index]["data"][trace]["z"]).astype(np.float64)


def chart_by_title(at: AppTest, title: str) -> dict:
    """The first chart whose title (layout title or top-axis title) contains ``title``."""
    for spec in chart_specs(at):
        layout = spec.get("layout") or {}
        texts = [((layout.get(part) or {}).get("title") or {}) for part in ("xaxis",)]
        texts.append(layout.get("title") or {})
        if any(title in (t.get("text") or "") for t in texts if isinstance(t, dict)):
            return spec
    raise AssertionError(f"no chart titled {title!r}")


def chart_keys(at: AppTest) -> list[str]:
    """The ``key=`` of every chart, in page order (Streamlit ids end with "-<key>")."""
    return [user_key(c) for c in charts(at)]


def spec_by_key(at: AppTest, key: str) -> dict:
    """The figure dict of the chart drawn with ``key=key``."""
    keys = chart_keys(at)
    assert key in keys, f"no chart with key {key!r}; charts: {keys}"
    return chart_specs(at)[keys.index(key)]


def chart_z_by_key(at: AppTest, key: str, trace: int = 0) -> np.ndarray:
    """The z matrix of the chart drawn with ``key=key``."""
    keys = chart_keys(at)
    assert key in keys, f"no chart with key {key!r}; charts: {keys}"
    return chart_z(at, keys.index(key), trace)


def edit_cells(at: AppTest, widget_key: str, edits: dict[int, dict[str, float]]) -> AppTest:
    """Seed a data_editor's edits in session state (AppTest cannot type into the grid)."""
    at.session_state[widget_key] = {"edited_rows": edits, "added_rows": [], "deleted_rows": []}
    return at.run()
