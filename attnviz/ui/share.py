"""Save, share and export from any page: scenario files and links, matrix and figure downloads.

* :func:`restore_from_link` runs from :func:`attnviz.ui.state.init_state` on every page: a URL
  carrying ``?scenario=...`` replaces the scenario once per session (a bad link shows a message
  and keeps the current scenario).
* :func:`link_box`, :func:`scenario_download`, :func:`scenario_upload`: the Save & share page.
* :func:`matrix_downloads` and :func:`report_button`: any page can offer its matrices (CSV,
  .npz, JSON) and a standalone HTML report of its figures.
* :func:`image_format_picker`: whether the charts' camera button saves PNG or SVG.

Every message that may quote a file or a link goes through :func:`plain` (no Markdown).
"""

from __future__ import annotations

import io
import ipaddress
import re
import socket
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import segno
import streamlit as st

from attnviz.io import export, scenario_io
from attnviz.scenarios import limits
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.scenario import Scenario
from attnviz.teach.text import common as text
from attnviz.ui import state

LINK_PAGE = "playground"  # the page a shared link opens
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~:=&])")
_FLASH = "_share_flash"
_URL_MEMO = "_share_url_memo"  # session memo: fingerprint -> link parameter or None
_OWN_PARAMS = "_share_own_params"  # the last links keep_in_url wrote into the address bar
_OWN_KEPT = 20
_EAGER_VALUES = 2**16  # matrix downloads with more values in all are built on click


def plain(message: str) -> str:
    """A message safe for st.error/st.warning/st.success: Markdown characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", str(message))


def file_stem(scenario: Scenario) -> str:
    """A file-name stem from the scenario's title: ``attnviz_four_words_seed_000``."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", scenario.title).strip("_").lower()[:40]
    return f"attnviz_{slug}" if slug else "attnviz_scenario"


def _flash(message: str) -> None:
    """Show ``message`` (a success) on the next run, after an st.rerun()."""
    st.session_state[_FLASH] = message


def show_flash() -> None:
    """Show and clear a message left by :func:`_flash`."""
    message = st.session_state.pop(_FLASH, None)
    if message:
        state.mark_one_time_message()
        st.success(plain(message))


# ---------------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------------

def restore_from_link() -> None:
    """Apply ``?scenario=...`` from the URL once per session (called by the frame, app.py,
    before the page runs).

    A link that cannot be read shows a message and leaves the current (default) scenario.
    """
    param = st.query_params.get(scenario_io.LINK_PARAM)
    if param is None or st.session_state.get(state.LINK_APPLIED) == param \
            or param in st.session_state.get(_OWN_PARAMS, ()):
        return  # applied already, or written by keep_in_url (a rerun sent before the browser
        # showed the newer one must not bring an older scenario back)
    st.session_state[state.LINK_APPLIED] = param
    state.mark_one_time_message()  # what follows is said in this run only
    try:
        scenario = scenario_io.from_link_param(param)
    except ValueError as exc:
        reason = str(exc)
        st.error(plain(text.SHARE_BAD_LINK_REASON.format(reason=reason[:1].upper() + reason[1:])))
        return
    except Exception:  # never a traceback for a link, whatever it holds
        st.error(plain(text.SHARE_BAD_LINK))
        return
    state.open_whole(scenario)
    st.toast(text.SHARE_LINK_LOADED)


def keep_in_url(scenario: Scenario) -> None:
    """Write the scenario into the address bar (``?scenario=...``) after every run, so that a
    reload or a bookmark keeps it (the frame, app.py, calls this). A scenario too large for a
    link leaves the address bar without one. The link is made once per scenario content."""
    def make() -> str | None:
        try:
            return scenario_io.to_link_param(state.with_true_title(scenario))
        except ValueError:
            return None

    param = state.session_memo(_URL_MEMO, fingerprint(scenario), make)
    if param is None:
        if scenario_io.LINK_PARAM in st.query_params:
            del st.query_params[scenario_io.LINK_PARAM]
        return
    if st.query_params.get(scenario_io.LINK_PARAM) != param:
        own = st.session_state.setdefault(_OWN_PARAMS, [])
        own[:] = [*own[-(_OWN_KEPT - 1):], param]
        st.session_state[state.LINK_APPLIED] = param  # it is the current scenario already
        st.query_params[scenario_io.LINK_PARAM] = param


def page_base_url(here: str) -> str:
    """The app's base URL, from the browser's URL of the page ``here`` (its url_path)."""
    url = (st.context.url or "").split("?", 1)[0].rstrip("/")
    if url.endswith("/" + here):
        url = url[: -len(here) - 1]
    return url


def link_url(scenario: Scenario, *, here: str, page: str = LINK_PAGE) -> str:
    """The shareable URL that opens ``page`` with this scenario.

    Raises
    ------
    ValueError
        If the scenario is too large for a link (share the file instead).
    """
    # "Edited from ..." once edited
    param = scenario_io.to_link_param(state.with_true_title(scenario))
    base = page_base_url(here)
    return f"{base}/{page}?{scenario_io.LINK_PARAM}={param}"


def link_box(scenario: Scenario, *, key: str, here: str) -> str | None:
    """Show the shareable link (with a copy button) and a button that puts it in the address
    bar; returns the link, or None when the scenario is too large for one."""
    try:
        url = link_url(scenario, here=here)
    except ValueError as exc:
        st.warning(plain(text.SHARE_NO_LINK.format(reason=exc)))
        return None
    st.code(url, language=None, wrap_lines=True)
    st.caption(text.SHARE_LINK_HELP.format(n=len(url), limit=limits.MAX_LINK_CHARS))
    if st.button(text.SHARE_TO_ADDRESS_BAR, key=f"{key}_to_address_bar"):
        param = url.split(f"{scenario_io.LINK_PARAM}=", 1)[1]
        st.session_state[state.LINK_APPLIED] = param  # it is the current scenario already
        st.query_params[scenario_io.LINK_PARAM] = param
    return url


def listens_beyond_loopback() -> bool:
    """True when this server accepts connections from other machines (``server.address`` is
    not a loopback address; unset means every interface)."""
    address = (st.get_option("server.address") or "").strip()
    if not address:
        return True
    if address == "localhost":
        return False
    try:
        return not ipaddress.ip_address(address).is_loopback
    except ValueError:  # a host name: resolved by the machine, assumed reachable
        return True


def lan_address() -> str | None:
    """This machine's address on its network, from its routing table (a UDP socket is
    "connected", which sends nothing), or None without a network."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("10.254.254.254", 9))  # no packet leaves: UDP connect only routes
            address = sock.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address


def room_url(url: str) -> str:
    """The link as students' machines must open it: a loopback host (the lecturer's own
    browser on 127.0.0.1 or localhost) replaced by this machine's LAN address, when it has
    one; any other host kept."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    loopback = host == "localhost"
    try:
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    lan = lan_address() if loopback else None
    if not lan:
        return url
    netloc = lan if parts.port is None else f"{lan}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def qr_png(url: str) -> bytes | None:
    """A PNG QR code of ``url`` (segno, offline), large modules for a projector; None when the
    link is longer than a QR code holds."""
    try:
        code = segno.make(url, error="l", micro=False)
    except segno.DataOverflowError:
        return None
    out = io.BytesIO()
    code.save(out, kind="png", scale=8, border=4)
    return out.getvalue()


def room_box(url: str, *, key: str) -> None:
    """The link for a room: a warning when students cannot reach this server, else the link
    with this machine's LAN address and its QR code."""
    if not listens_beyond_loopback():
        st.warning(text.SHARE_LOOPBACK)
        return
    shared = room_url(url)
    if shared != url:
        st.caption(text.SHARE_ROOM_LINK)
        st.code(shared, language=None, wrap_lines=True)
    png = qr_png(shared)
    if png is None:
        st.caption(text.SHARE_NO_QR.format(n=len(shared)))
        return
    st.image(png, width=480, caption=text.SHARE_QR_CAPTION)  # ~5 px a module at 100 modules
    st.session_state[f"{key}_qr_url"] = shared  # what the code holds (tests read it)


# ---------------------------------------------------------------------------------------------
# Scenario files
# ---------------------------------------------------------------------------------------------

def scenario_download(scenario: Scenario, *, key: str) -> None:
    """A download button for the scenario as a JSON file (or the reason it cannot be saved:
    a real model's head wider than a file is read back with is not offered as a file)."""
    if scenario.d_model > limits.MAX_D_MODEL:
        st.info(text.SHARE_REAL_HEAD_FILE.format(d=scenario.d_model, limit=limits.MAX_D_MODEL))
        return
    try:
        # titled as the link is
        data = scenario_io.to_json(state.with_true_title(scenario)).encode("utf-8")
    except ValueError as exc:
        st.error(plain(text.SHARE_CANNOT_SAVE.format(reason=exc)))
        return
    st.download_button(text.SHARE_DOWNLOAD_SCENARIO, data,
                       file_name=f"{file_stem(scenario)}.json", mime="application/json",
                       key=f"{key}_scenario_json", on_click="ignore",
                       help=text.SHARE_FILE_HELP)


def read_scenario_upload(data: bytes, name: str) -> Scenario:
    """The scenario in an uploaded file (size checked first).

    Raises
    ------
    ValueError
        Too large, not JSON, or not a valid scenario file.
    """
    if len(data) > limits.MAX_UPLOAD_BYTES:
        raise ValueError(text.SHARE_TOO_LARGE.format(size_mb=len(data) / 2**20,
                                                     limit=limits.MAX_UPLOAD_MB))
    if not str(name).lower().endswith(".json"):
        raise ValueError(text.SHARE_NOT_JSON)
    return scenario_io.from_json(data)


def scenario_upload(*, key: str) -> None:
    """Upload a scenario file; a new file replaces the scenario once (then editing goes on)."""
    uploaded = st.file_uploader(text.SHARE_UPLOAD_LABEL, type=["json"], key=key,
                                max_upload_size=limits.MAX_UPLOAD_MB,
                                help=text.SHARE_UPLOAD_HELP.format(limit=limits.MAX_UPLOAD_MB))
    if uploaded is None:
        return
    done_key = f"_{key}_applied"
    if st.session_state.get(done_key) == uploaded.file_id:
        return  # already loaded: later edits must not be overwritten by the same file
    st.session_state[done_key] = uploaded.file_id
    try:
        scenario = read_scenario_upload(uploaded.getvalue(), uploaded.name)
    except ValueError as exc:
        st.error(plain(text.SHARE_NOT_LOADED.format(reason=exc)))
        return
    state.open_whole(scenario)
    _flash(text.SHARE_FILE_LOADED)
    st.rerun()


# ---------------------------------------------------------------------------------------------
# Matrices, figures
# ---------------------------------------------------------------------------------------------

def matrix_downloads(arrays: Mapping[str, np.ndarray], *, key: str, stem: str,
                     labels: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None,
                     q_labels: Sequence[str] | None = None,
                     k_labels: Sequence[str] | None = None) -> None:
    """CSV of one chosen matrix, and every matrix as .npz and as JSON.

    Files of large scenarios are built only when their button is clicked: built on every rerun
    they cost seconds and, at the editing limits, ~100 MB of server memory per session.
    """
    if not arrays:
        st.caption(text.DOWNLOADS_NONE)
        return
    labels = labels or {}
    lazy = sum(int(np.size(a)) for a in arrays.values()) > _EAGER_VALUES

    def data(build):
        return build if lazy else build()
    flat = [name for name, a in arrays.items() if np.ndim(a) <= 2]
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    if flat:
        name = c1.selectbox(text.DOWNLOADS_MATRIX_LABEL, flat, key=f"{key}_csv_matrix",
                            help=text.DOWNLOADS_MATRIX_HELP)
        rows, cols = labels.get(name, (None, None))
        c2.download_button(text.DOWNLOADS_CSV,
                           data(lambda: export.csv_bytes(arrays[name], rows, cols)),
                           file_name=f"{stem}_{name}.csv", mime="text/csv",
                           key=f"{key}_csv", on_click="ignore", width="stretch")
    c3, c4 = st.columns(2)
    c3.download_button(text.DOWNLOADS_NPZ,
                       data(lambda: export.npz_bytes(arrays, q_labels=q_labels,
                                                     k_labels=k_labels)),
                       file_name=f"{stem}_matrices.npz", mime="application/octet-stream",
                       key=f"{key}_npz", on_click="ignore", width="stretch",
                       help=text.DOWNLOADS_NPZ_HELP)
    c4.download_button(text.DOWNLOADS_JSON,
                       data(lambda: export.json_bytes(arrays, q_labels=q_labels,
                                                      k_labels=k_labels)),
                       file_name=f"{stem}_matrices.json", mime="application/json",
                       key=f"{key}_json", on_click="ignore", width="stretch")


def report_button(figures: Sequence, *, key: str, title: str = text.REPORT_TITLE,
                  notes: Sequence[str] = (), file_name: str = "attnviz_report.html") -> None:
    """A download button for a standalone HTML report of ``figures`` (opens offline).

    ``figures`` holds go.Figure objects or (title, figure) pairs. The ~5 MB report is built only
    when the button is clicked.
    """
    from attnviz.figures.report import html_report_bytes  # plotly: only when a page needs it

    figures = list(figures)

    def build() -> bytes:
        return html_report_bytes(figures, title=title, notes=notes)

    st.download_button(text.REPORT_BUTTON, build,
                       file_name=file_name, mime="text/html", key=key, on_click="ignore",
                       disabled=not figures, help=text.SHARE_REPORT_HELP)


def image_format_picker(*, key: str) -> str:
    """PNG or SVG for every chart's camera button (kept for the whole session, all pages)."""
    formats = ["png", "svg"]
    current = st.session_state.get(state.IMAGE_FORMAT, "png")
    choice = st.radio(text.IMAGE_FORMAT_LABEL, formats,
                      index=formats.index(current) if current in formats else 0,
                      format_func=text.IMAGE_FORMATS.get,
                      horizontal=True, key=key, help=text.SHARE_IMAGE_HELP)
    st.session_state[state.IMAGE_FORMAT] = choice
    return choice
