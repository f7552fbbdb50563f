"""Server: rerun time after an edit on every page (AppTest), and the bytes each page sends.

    python benchmarks/bench_server.py [--quick] [--runs N] [--json PATH] [--pages a,b]

For every page registered in app.py (read at run time, so new pages are measured too) and two
scenarios — the default one, and multi-head self-attention on 256 tokens with 8 heads
(d_model = 64) set in ``st.session_state["scenario"]`` before the first run — the script opens
the page in Streamlit's AppTest and then, ``runs`` times, makes one edit and times the rerun:

- the first matrix editor on the page: cell (0, 0) gets a new value (the way a student edits);
- else the first slider, number input, select slider or select box of the page (not of the
  sidebar) moves by one step (select boxes to the next of their real option values);
- else the page is simply rerun (it has nothing to edit; said in the table).
On Your own attention the edit switches between the mean of the heads and head 0.

Payload: the bytes of figure JSON the page sends (over its charts: the in-place chart
component's JSON bytes, ``len(proto.spec)`` of an ``st.plotly_chart``) and the bytes of its
matrix editors' grids (their JSON), after the last rerun.

An edit of a widget drawn inside an ``st.fragment`` reruns that fragment alone, as the server
does (AppTest itself always reruns the whole script): said in the table.

Targets: rerun after an edit <= 50 ms median (default scenario), <= 300 ms (t = 256, 8 heads).
AppTest runs the script in this process, so a rerun time includes AppTest's own bookkeeping
(building its element tree) — a little more than the server spends in a browser session.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import _common as c

DEFAULT_TARGET_S = 0.050
BIG_TARGET_S = 0.300


def _quiet() -> None:
    """Silence Streamlit's bare-mode warnings (AppTest runs without a server)."""
    import logging

    import streamlit.testing.v1  # noqa: F401 — configures Streamlit's loggers first
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")


def _share_script_cache() -> None:
    """Give AppTest one script cache, as a server has.

    AppTest builds a fresh ``ScriptCache`` on every run, so it recompiles app.py and the page
    (AST "magic" included) each time — work a Streamlit server does once per script. Without
    this the benchmark would time the compiler, not the app.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared


def _edit(at, i: int) -> tuple[str, str | None]:
    """Make the i-th edit on the page (not yet run); return what was edited and the widget's
    key (None: nothing was edited)."""
    heads = [w for w in at.get("selectbox") if (w.key or "").startswith("your_attention_head_")]
    if heads:  # Your own attention: switch between the mean of the heads and head 0
        at.session_state[heads[0].key] = 0 if i % 2 == 0 else "mean"
        return f"selectbox {heads[0].key}", heads[0].key
    from apptest_helpers import grid_cells, grid_state, grids, user_key  # see main()

    editors = grids(at)
    if editors:
        el = editors[0]
        col = json.loads(el.proto.json)["cols"][0]
        cells = grid_cells(el)  # none in a large grid's rerun (the browser keeps them)
        base = float(cells[0][0]) if cells else 0.0
        value = base + (0.125 if i % 2 == 0 else 0.25)
        key = user_key(el)
        at.session_state[key] = grid_state({0: {col: value}})
        return f"editor {key} cell (0, {col})", key
    for kind in ("slider", "number_input", "select_slider", "selectbox"):
        for w in at.get(kind):
            if getattr(w.proto, "disabled", False) or (w.key or "").startswith("sidebar"):
                continue
            try:
                if w.key and _step(at, kind, w, i):
                    return f"{kind} {w.key}", w.key
            except (ValueError, TypeError):  # a widget AppTest cannot set by its labels
                continue
    return "nothing to edit (plain rerun)", None


def _options(at, w) -> list | None:
    """The real option values of a select box or select slider (AppTest shows only labels).

    Read from the widget's registered deserializer (Streamlit internals; None if absent).
    """
    try:
        state = at.session_state._state._state  # Streamlit internals
        serde = state._new_widget_state.widget_metadata[w.id].deserializer.__self__
        return list(serde.options)
    except (AttributeError, KeyError):
        return None


def _step(at, kind: str, w, i: int) -> bool:
    """Move one widget by one step (back and forth with i); False if it cannot move."""
    if kind in ("selectbox", "select_slider"):
        options = _options(at, w)
        value = w.value
        if not options or len(options) < 2 or isinstance(value, (tuple, list)) \
                or value not in options:
            return False
        at.session_state[w.key] = options[(options.index(value) + 1) % len(options)]
    elif kind == "slider":
        if not isinstance(w.value, (int, float)):
            return False
        step = w.step or 1
        new = w.value + step if w.value + step <= w.max else w.value - step
        w.set_value(type(w.value)(min(max(new, w.min), w.max)))
    elif i % 2 == 0:
        w.increment()
    else:
        w.decrement()
    return True


def _payload(at) -> tuple[int, int, int]:
    """(number of charts, figure JSON bytes, the grids' JSON bytes) of the current run."""
    from apptest_helpers import charts

    elements = charts(at)
    fig_bytes = sum(len(ch.proto.spec if ch.type == "plotly_chart" else ch.proto.bytes)
                    for ch in elements)
    from apptest_helpers import grids

    editor_bytes = sum(len(e.proto.json) for e in grids(at))
    return len(elements), fig_bytes, editor_bytes


def measure_page(page: str, scenario, runs: int, upload: tuple[str, bytes] | None = None) -> dict:
    """Open one page with one scenario, then time ``runs`` reruns after an edit each.

    ``upload`` (file name, bytes) goes to the page's first uploader that takes that file type;
    "open page" is then the run that reads and draws the upload.
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(c.APP), default_timeout=300)
    if scenario is not None:
        at.session_state["scenario"] = scenario
    at.run()
    start = time.perf_counter()
    at.switch_page(page).run()
    opened = time.perf_counter() - start
    if upload is not None and not at.exception:
        suffix = upload[0].rsplit(".", 1)[-1]
        uploader = next(u for u in at.get("file_uploader")
                        if any(t.lstrip(".") == suffix for t in u.allowed_type))
        uploader.upload(upload[0], upload[1])
        start = time.perf_counter()
        at.run()
        opened = time.perf_counter() - start
    row = {"open": opened, "error": None}
    if at.exception:
        row["error"] = at.exception[0].message.splitlines()[0][:120]
        return row
    from apptest_helpers import fragment_of, run_like_a_server  # on sys.path: see main()

    edits, plain = [], []
    what = ""
    for i in range(runs):
        what, key = _edit(at, i)
        if fragment_of(at, key):
            what += " (reruns its st.fragment)"
        start = time.perf_counter()
        run_like_a_server(at, key)
        edits.append(time.perf_counter() - start)
        if at.exception:
            row["error"] = at.exception[0].message.splitlines()[0][:120]
            break
        start = time.perf_counter()
        at.run()
        plain.append(time.perf_counter() - start)
    charts, fig_bytes, editor_bytes = _payload(at)
    row.update(edit=c.median(edits), plain=c.median(plain), edits=edits, what=what,
               charts=charts, fig_bytes=fig_bytes, editor_bytes=editor_bytes,
               errors_shown=len(at.error))
    return row


UPLOAD_PAGE = "pages/your_attention.py"
UPLOAD_LABEL = "uploaded t={t}, {heads} heads"


def measure(pages: list[tuple[str, str]], runs: int, big, big_label: str,
            upload: dict | None) -> list[dict]:
    """Every page with the default scenario and with the large one (and an uploaded file on
    the page that takes attention weights)."""
    rows = []
    for path, title in pages:
        cases = [("default", None, None), (big_label, big, None)]
        if path == UPLOAD_PAGE and upload is not None:
            cases.append((upload["label"], None, (upload["name"], upload["data"])))
        for label, scenario, file in cases:
            row = {"page": title, "path": path, "scenario": label, "runs": runs}
            try:
                row.update(measure_page(path, scenario, runs, file))
            except Exception as exc:  # report and go on: one broken page must not hide the rest
                row.update(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            rows.append(row)
            print(f"  {title:28s} {label:24s} edit {c.ms(row.get('edit', float('nan')))} ms",
                  flush=True)
    return rows


def _limit(row: dict) -> float:
    """The rerun target of a row: 50 ms for the default scenario, else 300 ms."""
    return DEFAULT_TARGET_S if row["scenario"] == "default" else BIG_TARGET_S


def section(rows: list[dict], quick: bool, big_label: str) -> dict:
    """Two tables (rerun times, payload) and the targets."""
    runs = rows[0]["runs"] if rows else 0
    timing = c.md_table(
        ["page", "scenario", "edit", "open page (ms)", "rerun after edit (ms, median)",
         "rerun, nothing changed (ms)", "target (ms)", "verdict"],
        [[r["page"], r["scenario"], r.get("what", "") if not r.get("error") else
          f"ERROR: {r['error']}", c.ms(r.get("open", float("nan"))),
          c.ms(r.get("edit", float("nan"))), c.ms(r.get("plain", float("nan"))),
          c.ms(_limit(r)), c.verdict(None if r.get("error") else r["edit"] <= _limit(r))]
         for r in rows])
    payload = c.md_table(
        ["page", "scenario", "charts", "figure JSON (KiB)", "editor grids (KiB)"],
        [[r["page"], r["scenario"], r.get("charts", "n/a"),
          c.kib(r["fig_bytes"]) if "fig_bytes" in r else "n/a",
          c.kib(r["editor_bytes"]) if "editor_bytes" in r else "n/a"] for r in rows])
    targets = []
    labels = [("default", DEFAULT_TARGET_S, "default scenario"),
              (big_label, BIG_TARGET_S, big_label)]
    labels += [(lab, BIG_TARGET_S, f"{lab} (Your own attention)")
               for lab in dict.fromkeys(r["scenario"] for r in rows)
               if lab.startswith("uploaded")]
    for label, limit, name in labels:
        sel = [r for r in rows if r["scenario"] == label]
        ok_rows = [r for r in sel if not r.get("error")]
        worst = max(ok_rows, key=lambda r: r["edit"], default=None)
        missed = [r["page"] for r in ok_rows if r["edit"] > limit]
        broken = [r["page"] for r in sel if r.get("error")]
        measured = (f"worst {c.ms(worst['edit'])} ms ({worst['page']})" if worst else "n/a")
        note = ", ".join(filter(None, [f"over on: {', '.join(missed)}" if missed else "",
                                       f"errors on: {', '.join(broken)}" if broken else ""]))
        targets.append(c.target(f"server: rerun after an edit, {name}, <= "
                                f"{c.ms(limit)} ms median on every page", measured,
                                bool(ok_rows) and not missed and not broken, note))
    md = (f"### Server: rerun after an edit (AppTest, median of {runs} edits"
          f"{', QUICK' if quick else ''})\n\n{timing}\n\n"
          f"### Payload: what each page sends\n\n{payload}\n\n"
          "*Figure JSON*: the figure JSON of the page's charts (the chart component's JSON bytes, "
          "an `st.plotly_chart`'s `spec`); *editor grids*: "
          "the JSON bytes of its matrix editors' grids.\n")
    return {"name": "server", "rows": rows, "targets": targets, "markdown": md}


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    c.add_pages_option(p)
    args = p.parse_args(argv)
    _quiet()
    _share_script_cache()
    sys.path.insert(0, str(c.ROOT / "tests"))  # apptest_helpers: AppTest helpers of the tests
    pages = c.chosen_pages(args)
    runs = args.runs or (1 if args.quick else 7)
    big_t = 16 if args.quick else c.BIG_T
    big = c.big_scenario(t=big_t)
    big_label = f"t={big_t}, {c.BIG_HEADS} heads"
    up_t, up_heads = (32, 2) if args.quick else (1024, 2)
    upload = {"label": UPLOAD_LABEL.format(t=up_t, heads=up_heads), "name": "attention.npz",
              "data": c.attention_npz(up_t, up_heads)}
    from apptest_helpers import server_like_pages  # app.py as on a server: no legacy rerun

    with server_like_pages():
        rows = measure(pages, runs, big, big_label, upload)
    c.emit(args, section(rows, args.quick, big_label))


if __name__ == "__main__":
    main()
