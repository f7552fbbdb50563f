"""A class on one server, without a browser per student: simulated students over the WebSocket.

    python benchmarks/ws_load.py [--students 20,60,120] [--seconds 120] [--every 3]
                                 [--scenario default|largest] [--expire S] [--classes K]
                                 [--url http://127.0.0.1:PORT] [--json PATH]

Each simulated student is one Streamlit session that speaks the browser's own protocol to the
real server: the ``BackMsg`` and ``ForwardMsg`` protobuf messages of the installed streamlit
package, over ``ws://<host>/_stcore/stream`` (the ``websockets`` client Streamlit's own server
stack installs). A student

1. opens the Playground (the lecture page) and reads every chart the run sends;
2. every ``--every`` seconds (±50 %, so the class does not edit in lock step) makes one edit, in
   turn: a cell of the embeddings editor, τ (released on the weights chart's own slider), the
   variant select box — sent as the widget states the browser would send (all the student's
   edits so far, the grid's cumulative ``edited_rows`` included);
3. after each edit waits for the run to finish and checks the drawn weights and output against
   ``run_scenario`` on the scenario the student expects (its own copy, edited the same way):
   a chart that differs by more than 1e-12, or is missing, counts as an *edit lost*; an
   exception element, a closed socket or a run that does not finish in ``WAIT_S`` as an *error*.

``--scenario largest`` opens the page with the ``?scenario=`` link of the largest preset a link
can carry (the most numbers), as a class following the lecturer's link does. ``--expire S``
reads the server's RSS again S seconds after the last student left and one more short visit
(Streamlit keeps a closed session for ``server.disconnectedSessionTTL`` = 120 s and removes
expired ones when a session next disconnects, so S > 120 shows what is given back).
``--classes K`` runs the class K times one after another on the same server (with ``--expire``
between them): whether a second class reuses the memory the first one gave back.

Reported per class size: students, edits, p50/p95 latency from sending an edit to the run's
``script_finished`` (what a student waits for before the picture is complete), errors, edits
lost, and the server's RSS (idle, peak, end). Bounded: at most ``--students`` sessions for
``--seconds`` each; without ``--url`` the server is started on a free port of 127.0.0.1 and
stopped afterwards; nothing but loopback is contacted.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from urllib.parse import urlparse

import _common as c
import numpy as np
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import run_scenario, with_variant

PAGE = "playground"
UPLOAD_PAGE, UPLOAD_KEY, UPLOAD_NAME = "share", "share_upload", "scenario.json"
WAIT_S = 60.0  # longest wait for one run
TOL = 1e-12
GRID = "attnviz_grid"  # attnviz.ui.grid.NAME: the matrix editors' component
CHART = "attnviz_plotly"  # attnviz.ui.plotly_view.NAME: the charts (other components: no data)
VARIANT_CYCLE = ("causal", "scaled_dot_product")  # the select box alternates between these
# the lecture view's Weights tab (the Playground's default focus) draws these two
CHECKED = {"weights": "playground_fig_weights_slot_1",
           "output": "playground_fig_weights_slot_2"}


def user_key(widget_id: str) -> str:
    """The ``key=`` a widget or chart was made with (Streamlit ids end with ``-<key>``)."""
    return widget_id.split("-", 2)[-1] if widget_id.startswith("$$ID-") else widget_id


def chart_z(element) -> np.ndarray:
    """The z matrix of an attnviz chart component (plotly JSON sent as UTF-8 bytes)."""
    import base64

    z = json.loads(element.bytes)["data"][0]["z"]
    if isinstance(z, dict) and "bdata" in z:
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = z.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")] if isinstance(shape, str)
                              else shape)
        return arr  # float32 for large matrices: what the browser is sent
    return np.asarray(z, dtype=np.float64)


@dataclass
class Run:
    """What one script run sent: widget ids by key, chart z by key, exceptions."""

    widgets: dict[str, str] = field(default_factory=dict)
    charts: dict[str, np.ndarray] = field(default_factory=dict)
    exceptions: list[str] = field(default_factory=list)
    query: str | None = None  # the address bar's new query string, when the app changed it
    session_id: str = ""  # the server's id of this session (new_session message)


@dataclass
class Student:
    """One simulated student: its socket, its widget states and the scenario it expects."""

    index: int
    scenario: object
    query: str = ""  # the page's query string (a scenario link)
    ws: object = None
    widgets: dict[str, str] = field(default_factory=dict)  # key -> id
    states: dict[str, object] = field(default_factory=dict)  # id -> WidgetState
    cell_edits: dict[str, dict[str, str]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    edits: int = 0
    lost: int = 0
    errors: list[str] = field(default_factory=list)
    cookies: dict[str, str] = field(default_factory=dict)  # as a browser keeps them


async def read_run(ws) -> Run:
    """Read ForwardMsgs until the script run finishes; collect widgets, charts, exceptions."""
    run = Run()
    deadline = time.monotonic() + WAIT_S
    while True:
        raw = await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic()))
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            sub = getattr(element, element.WhichOneof("type"))
            widget_id = getattr(sub, "id", "")
            if element.WhichOneof("type") == "exception":
                run.exceptions.append(f"{sub.type}: {sub.message}"[:200])
            elif element.WhichOneof("type") == "bidi_component":
                if sub.component_name == GRID:  # a matrix editor: a widget
                    run.widgets[user_key(sub.id)] = sub.id
                elif sub.component_name == CHART:  # its numbers, and its id (its slider)
                    run.charts[user_key(sub.id)] = chart_z(sub)
                    run.widgets[user_key(sub.id)] = sub.id
            elif widget_id:
                run.widgets[user_key(widget_id)] = widget_id
        elif kind == "new_session":
            run.session_id = msg.new_session.initialize.session_id
        elif kind == "page_info_changed":  # st.query_params changed the address bar
            run.query = msg.page_info_changed.query_string
        elif kind == "script_finished":
            # FINISHED_SUCCESSFULLY = 0; a run cut short for the next rerun is followed by it
            if msg.script_finished == 0:
                return run


async def rerun(student: Student, page: str = PAGE) -> Run:
    """Send the student's widget states (as the browser does after an edit) and read the run."""
    back = BackMsg()
    back.rerun_script.query_string = student.query
    back.rerun_script.page_name = page
    for state in student.states.values():
        back.rerun_script.widget_states.widgets.append(state)
    await student.ws.send(back.SerializeToString())
    run = await read_run(student.ws)
    if run.query is not None:  # the browser sends the address bar as it now is
        student.query = run.query
    return run


def first_cookies(base: str, cookies: dict[str, str] | None = None) -> dict[str, str]:
    """The cookies the server gives a browser on a request (its health check, as the page
    does), added to ``cookies``: the XSRF cookie an upload must send back (and as the
    X-Xsrftoken header) and, behind ``python -m attnviz class``, the sticky ``attnviz_node``
    cookie that keeps the page, its WebSocket and its uploads on one process."""
    import urllib.request

    cookies = dict(cookies or {})
    request = urllib.request.Request(f"{base}/_stcore/health",
                                     headers={"Cookie": cookie_header(cookies)})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=WAIT_S) as response:
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            cookies[name.strip()] = rest.split(";", 1)[0]
    return cookies


def cookie_header(cookies: dict[str, str]) -> str:
    """The Cookie header a browser sends with these cookies."""
    return "; ".join(f"{k}={v}" for k, v in cookies.items())


def put_file(base: str, upload_url: str, cookies: dict[str, str], name: str,
             data: bytes) -> int:
    """PUT one file to the upload URL the server gave (multipart, as the browser sends it)."""
    import urllib.request

    boundary = "attnvizloadtest"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"UploadedFile\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/json\r\n\r\n").encode() + data \
        + f"\r\n--{boundary}--\r\n".encode()
    url = upload_url if upload_url.startswith("http") else base + upload_url
    request = urllib.request.Request(url, data=body, method="PUT", headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Cookie": cookie_header(cookies),
        "X-Xsrftoken": cookies.get("_streamlit_xsrf", "")})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=WAIT_S) as response:
        return response.status


async def upload_scenario(student: Student, base: str, data: bytes) -> Run:
    """Load a scenario file through the Save & share page's uploader, as a browser does: open
    the page, ask the server for an upload URL, PUT the file, send the uploader's new state
    (the page then replaces the scenario and reruns), and return that run."""
    from streamlit.proto.Common_pb2 import FileURLs, UploadedFileInfo
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    opened = await rerun(student, page=UPLOAD_PAGE)
    uploader = opened.widgets[UPLOAD_KEY]
    back = BackMsg()
    back.file_urls_request.request_id = f"upload-{student.index}"
    back.file_urls_request.file_names.append(UPLOAD_NAME)
    back.file_urls_request.session_id = opened.session_id
    await student.ws.send(back.SerializeToString())
    deadline = time.monotonic() + WAIT_S
    while True:
        msg = ForwardMsg()
        msg.ParseFromString(await asyncio.wait_for(student.ws.recv(),
                                                   max(0.1, deadline - time.monotonic())))
        if msg.WhichOneof("type") == "file_urls_response":
            urls = msg.file_urls_response.file_urls[0]
            break
    student.cookies = await asyncio.to_thread(first_cookies, base, student.cookies)
    status = await asyncio.to_thread(put_file, base, urls.upload_url, student.cookies,
                                     UPLOAD_NAME, data)
    if status != 204 and status != 200:
        raise OSError(f"upload answered HTTP {status}")
    state = WidgetState(id=uploader)
    state.file_uploader_state_value.uploaded_file_info.append(UploadedFileInfo(
        name=UPLOAD_NAME, size=len(data), file_id=urls.file_id,
        file_urls=FileURLs(file_id=urls.file_id, upload_url=urls.upload_url,
                           delete_url=urls.delete_url)))
    student.states[uploader] = state
    loaded = await rerun(student, page=UPLOAD_PAGE)
    del student.states[uploader]  # the Playground has no uploader
    return loaded


def widget_state(widget_id: str, **value):
    """A WidgetState proto for one widget id and one value field."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=widget_id)
    (name, v), = value.items()
    if name == "double_array_value":
        state.double_array_value.data.extend(v)
    else:
        setattr(state, name, v)
    return state


def edit(student: Student, step: int, rng: random.Random) -> None:
    """Make the student's next edit (cell, temperature, variant in turn) on its widget states and
    on the scenario it expects."""
    s = student.scenario
    kind = step % 3
    if kind == 0:  # a cell of the embeddings: the grid sends all edits of this editor so far
        r, col = rng.randrange(s.x.shape[0]), rng.randrange(s.x.shape[1])
        value = round(rng.uniform(-2, 2), 3)
        student.cell_edits.setdefault(str(r), {})[f"d{col}"] = repr(value)
        x = np.array(s.x, dtype=float)
        x[r, col] = value
        student.scenario = replace(s, x=x)
        key = next(k for k in student.widgets if k.startswith(f"{PAGE}_x_v"))
        payload = {"edits": {"edited_rows": student.cell_edits}}  # the grid's state
        state = widget_state(student.widgets[key], json_value=json.dumps(payload))
    elif kind == 1:  # τ: the weights chart's own slider, released on a step (its label);
        # a sequence too long for the chart's frames keeps the τ slider above it instead
        value = round(rng.uniform(0.3, 3.0), 1)
        student.scenario = replace(s, temperature=value)
        above = [k for k in student.widgets if k.startswith(f"{PAGE}_temperature")]
        if above:
            state = widget_state(student.widgets[above[0]], double_array_value=[value])
        else:
            state = widget_state(student.widgets[CHECKED["weights"]],
                                 json_value=json.dumps({"slider": f"{value:g}"}))
    else:  # the variant select box: its value is the option's label
        variant = VARIANT_CYCLE[(step // 3) % 2]
        student.scenario = with_variant(s, variant)
        key = next(k for k in student.widgets if k.startswith(f"{PAGE}_variant"))
        state = widget_state(student.widgets[key], string_value=VARIANTS[variant].name)
    student.states[state.id] = state


def check(student: Student, run: Run) -> None:
    """Count an exception as an error and a chart that differs from the core as an edit lost."""
    if run.exceptions:
        student.errors.extend(run.exceptions)
        return
    student.widgets.update(run.widgets)
    expected = run_scenario(student.scenario).attention
    for name, key in CHECKED.items():
        got = run.charts.get(key)
        want = np.asarray(getattr(expected, name), dtype=float)
        if got is not None:  # a large matrix is sent as float32: the core's numbers rounded so
            want = want.astype(got.dtype).astype(float)
        if got is None or got.shape != want.shape or not np.allclose(got, want, rtol=0,
                                                                      atol=TOL):
            student.lost += 1
            return


async def student_session(student: Student, ws_url: str, seconds: float, every: float,
                          start_delay: float, upload: bytes | None = None,
                          base: str = "") -> None:
    """Open the page (after loading ``upload``, a scenario file, on Save & share), then edit
    every ``every`` s (±50 %) for ``seconds``; check every run."""
    rng = random.Random(student.index)
    await asyncio.sleep(start_delay)
    try:
        if base:  # the page's first request sets the cookies its socket and uploads send
            student.cookies = await asyncio.to_thread(first_cookies, base)
        # no client pings: a browser sends none (Streamlit's server keeps the socket alive)
        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None,
                                      open_timeout=WAIT_S, ping_interval=None,
                                      additional_headers={"Cookie": cookie_header(
                                          student.cookies)}) as ws:
            student.ws = ws
            if upload is not None:
                loaded = await upload_scenario(student, base, upload)
                student.errors.extend(loaded.exceptions)
            check(student, await rerun(student))
            end = time.monotonic() + seconds
            step = 0
            while time.monotonic() < end:
                await asyncio.sleep(every * rng.uniform(0.5, 1.5))
                edit(student, step, rng)
                step += 1
                t0 = time.perf_counter()
                run = await rerun(student)
                student.latencies.append(time.perf_counter() - t0)
                student.edits += 1
                check(student, run)
    except (TimeoutError, OSError, websockets.WebSocketException, StopIteration) as err:
        student.errors.append(f"{type(err).__name__}: {err}"[:200])


def sample_rss(pid: int | None, stop: threading.Event, peak: list[float]) -> None:
    """Keep the largest RSS of the server seen every 0.25 s in ``peak[0]``."""
    while pid is not None and not stop.is_set():
        peak[0] = max(peak[0], c.rss_mib(pid)[0])
        stop.wait(0.25)


def limits_scenario():
    """A scenario at the editing limits, which only a file can carry (a link holds 8,000
    characters): 256 tokens, embeddings 64 wide, Q/K/V 128 wide, single-head (the variant
    select box of the edits switches between single-head variants)."""
    from attnviz.core.initializers import init_weights

    s = c.big_scenario()
    w_q, w_k, w_v = init_weights("glorot_uniform", [(s.d_model, 128)] * 3, seed=1)
    return replace(s, variant="scaled_dot_product", w_q=w_q, w_k=w_k, w_v=w_v,
                   w_o=np.eye(128, s.d_model), n_heads=1, title="Load test: the editing limits")


def largest_linkable_preset() -> tuple[str, object]:
    """The preset whose link is longest (the most numbers a link can carry) and its scenario."""
    from attnviz.io import scenario_io
    from attnviz.scenarios.presets import PRESETS

    best = (0, "")
    for key, preset in PRESETS.items():
        try:
            best = max(best, (len(scenario_io.to_link_param(preset.build())), key))
        except ValueError:
            continue
    return best[1], PRESETS[best[1]].build()


def run_class(base: str, pid: int | None, students: int, seconds: float, every: float, *,
              scenario: str = "default", expire: float = 0.0) -> dict:
    """One class: ``students`` sessions at once (starting 50 ms apart); figures as a dict."""
    ws_url = f"ws://{urlparse(base).netloc}/_stcore/stream"
    from attnviz.io import scenario_io
    from attnviz.scenarios.presets import default_scenario

    upload = None
    if scenario == "largest":
        key, start = largest_linkable_preset()
        query = f"{scenario_io.LINK_PARAM}={scenario_io.to_link_param(start)}"
        crowd = [Student(i, start, query) for i in range(students)]
    elif scenario == "limits":
        upload = scenario_io.to_json(limits_scenario()).encode("utf-8")
        start = scenario_io.from_json(upload)  # what the server reads from the file
        key, crowd = "limits (upload)", [Student(i, start) for i in range(students)]
    else:
        key, crowd = "default", [Student(i, default_scenario()) for i in range(students)]
    idle = c.rss_mib(pid)[0] if pid else float("nan")
    stop, peak = threading.Event(), [idle]
    sampler = threading.Thread(target=sample_rss, args=(pid, stop, peak), daemon=True)
    sampler.start()
    t0 = time.monotonic()

    async def all_students():
        await asyncio.gather(*(student_session(s, ws_url, seconds, every, 0.05 * s.index,
                                               upload, base) for s in crowd))

    asyncio.run(all_students())
    stop.set()
    sampler.join()
    end_rss = c.rss_mib(pid)[0] if pid else float("nan")
    if expire > 0 and pid:
        time.sleep(expire)
        # Streamlit removes expired sessions lazily, when a session next disconnects (its
        # TTLCache reaps on a write): one short visit does it, as the next student would
        run_class(base, None, 1, 1.0, 1.0)
        time.sleep(2)
    latencies = [x for s in crowd for x in s.latencies]
    errors = [e for s in crowd for e in s.errors]
    return {
        "students": students, "seconds": seconds, "every_s": every, "scenario": key,
        "wall_s": round(time.monotonic() - t0, 1),
        "edits": sum(s.edits for s in crowd),
        "p50_ms": round(1000 * c.percentile(latencies, 50), 1) if latencies else None,
        "p95_ms": round(1000 * c.percentile(latencies, 95), 1) if latencies else None,
        "errors": len(errors), "error_examples": sorted(set(errors))[:3],
        "edits_lost": sum(s.lost for s in crowd),
        "rss_idle_mib": round(idle, 1), "rss_peak_mib": round(peak[0], 1),
        "rss_end_mib": round(end_rss, 1),
        "rss_expired_mib": round(c.rss_mib(pid)[0], 1) if pid and expire > 0 else None,
        "expire_s": expire,
        "load_average": c.load_average(),
    }


def main() -> None:
    parser = c.parser(__doc__.splitlines()[0])
    parser.add_argument("--students", default="20,60,120",
                        help="class sizes, comma-separated (each a separate run)")
    parser.add_argument("--seconds", type=float, default=120.0, help="editing time per student")
    parser.add_argument("--every", type=float, default=3.0, help="mean seconds between edits")
    parser.add_argument("--scenario", default="default",
                        help="comma-separated: default (the default scenario), largest (the "
                             "largest link), limits (a file at the editing limits, uploaded)")
    parser.add_argument("--expire", type=float, default=0.0,
                        help="read the RSS again this many seconds after the class left")
    parser.add_argument("--classes", type=int, default=1,
                        help="run each class this many times on the same server")
    parser.add_argument("--url", default="", help="use this running server instead of starting one")
    args = parser.parse_args()
    if args.quick:  # checks the script works: two students, a few edits
        args.students, args.seconds, args.every = "2", 3.0, 0.5
    sizes = [int(n) for n in args.students.split(",") if n.strip()]
    scenarios = [name.strip() for name in args.scenario.split(",") if name.strip()]
    unknown = set(scenarios) - {"default", "largest", "limits"}
    if unknown:
        parser.error(f"--scenario: unknown {sorted(unknown)}")
    classes = max(1, min(args.classes, 3))
    rows = []
    if args.url:
        rows = [run_class(args.url, None, n, args.seconds, args.every, scenario=name)
                for name in scenarios for n in sizes]
    else:
        for name in scenarios:
            for n in sizes:  # a fresh server per class size: RSS figures do not carry over
                log = c.RESULTS_DIR / f"ws-load-server-{name}-{n}.log"
                with c.streamlit_server(log) as (base, proc):
                    for k in range(classes):
                        rows.append(run_class(base, proc.pid, n, args.seconds, args.every,
                                              scenario=name, expire=args.expire))
                        rows[-1]["class"] = k + 1
                for row in rows[-classes:]:
                    row["server_log_errors"] = len(c.server_errors(log))
    headers = ["students", "class", "scenario", "edits", "p50 (ms)", "p95 (ms)", "errors",
               "edits lost", "RSS idle / peak / end (MiB)", "RSS after expiry (MiB)",
               "load average"]
    table = c.md_table(headers, [[r["students"], r.get("class", 1), r["scenario"], r["edits"],
                                  r["p50_ms"],
                                  r["p95_ms"], r["errors"], r["edits_lost"],
                                  f"{r['rss_idle_mib']} / {r['rss_peak_mib']} / "
                                  f"{r['rss_end_mib']}",
                                  f"{r['rss_expired_mib']} ({r['expire_s']:g} s + a visit)"
                                  if r["rss_expired_mib"] else "not measured",
                                  r["load_average"]] for r in rows])
    targets = [c.target(f"load: {r['students']} simulated student{'s' * (r['students'] != 1)} "
                        f"({r['scenario']}, class {r.get('class', 1)}) edit for "
                        f"{r['seconds']:g} s; 0 errors, 0 edits lost",
                        f"{r['errors']} errors, {r['edits_lost']} lost "
                        f"of {r['edits']} edits", r["errors"] == 0 and r["edits_lost"] == 0)
               for r in rows]
    title = ("Memory: a class, its sessions' expiry and a second class" if args.expire > 0
             else "Load: simulated students over the WebSocket")
    shown = [a for i, a in enumerate(sys.argv[1:]) if a != "--json"
             and (i == 0 or sys.argv[i] != "--json")]  # the command without its output file
    command = " ".join(["python benchmarks/ws_load.py", *shown])
    markdown = (f"### {title} (`{command}`)\n\n"
                f"Each student edits every {args.every:g} s on average (a cell, the temperature, "
                "the variant in turn) and checks the drawn weights and output against the core. "
                "Latency: sending an edit to the end of its run."
                + (" RSS after expiry: read after every session of the class expired and one "
                   "more short visit (Streamlit removes expired sessions when a session next "
                   "disconnects); the class then runs again on the same server."
                   if args.expire > 0 else "") + "\n\n" + table + "\n")
    c.emit(args, {"name": "ws_load", "title": title,
                  "data": {"rows": rows}, "targets": targets, "markdown": markdown})

if __name__ == "__main__":
    main()
