"""Shared pieces of the benchmark scripts: machine facts, the page list, scenarios, tables.

The scripts are measurements, not tests: each prints a markdown section and can save its raw
figures as JSON (``--json PATH``) for ``run_all.py``, which writes ``benchmarks/RESULTS.md``.
Every timing is a median over several runs; the machine and its load are recorded beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a fresh clone without installing the package
    sys.path.insert(0, str(ROOT))

from attnviz.classroom import free_port, healthy  # noqa: E402 - after the path

APP = ROOT / "app.py"
RESULTS_DIR = ROOT / "benchmarks" / "results"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

VIEWPORT = {"width": 1366, "height": 768}  # the browser benchmarks' window

# Per-frame times (ms) of a chart with frames: ``Plotly.animate`` to each of its frames, awaited
# (what a drag does at every step), ``runs`` times over; page.evaluate(ANIMATE_FRAMES, [key, runs])
# (a third item, ``[key, runs, n]``, animates the first n frames only: the --quick smoke runs)
ANIMATE_FRAMES = """async ([key, runs, limit]) => {
    const g = document.querySelector(`.st-key-${key} .js-plotly-plot`);
    const names = g._transitionData._frames.map(f => f.name).slice(0, limit ?? undefined);
    const opts = {mode: 'immediate', frame: {duration: 0, redraw: true},
                  transition: {duration: 0}};
    const times = [];
    for (let r = 0; r < runs; r++) {
        for (const name of names) {
            const t = performance.now();
            await window.Plotly.animate(g, [name], opts);
            times.push(performance.now() - t);
        }
    }
    return times;
}"""

# The large scenario of the server and browser benchmarks: t tokens, n_heads heads.
BIG_T = 256
BIG_HEADS = 8
BIG_D_MODEL = 64  # limits.MAX_D_MODEL: the widest embedding the editors accept


# ---------------------------------------------------------------- command line and output

def parser(description: str) -> argparse.ArgumentParser:
    """The options every benchmark script takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes and one or two runs: checks the script works, not speed")
    p.add_argument("--runs", type=int, default=None, help="timed runs per measurement")
    p.add_argument("--json", type=Path, default=None,
                   help="also save the raw figures and the markdown section to this file")
    return p


def add_pages_option(p: argparse.ArgumentParser) -> None:
    """The ``--pages`` option of the scripts that measure every page."""
    p.add_argument("--pages", default="", help="comma-separated page stems (default: all)")


def chosen_pages(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The pages to measure: every page of app.py, or those ``--pages`` names; with
    ``--quick``, the Playground alone (else the first of them)."""
    chosen = pages()
    if args.pages:
        wanted = set(args.pages.split(","))
        chosen = [(path, t) for path, t in chosen if url_path(path) in wanted]
    if args.quick:
        chosen = [p for p in chosen if url_path(p[0]) == "playground"] or chosen[:1]
    return chosen


def emit(args: argparse.Namespace, section: dict) -> None:
    """Print the section's markdown and save the whole section as JSON when asked."""
    print(section["markdown"])
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(section, indent=1, default=float))


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table; every row must have one cell per header."""
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, the table has {len(headers)} columns")
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines)


def median(values: Sequence[float]) -> float:
    """The median (NaN for no values)."""
    return statistics.median(values) if values else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between the closest ranks."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def ms(seconds: float) -> str:
    """Seconds as a millisecond figure for a table."""
    if seconds != seconds:  # NaN
        return "n/a"
    value = seconds * 1000
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def kib(n_bytes: float) -> str:
    """Bytes as KiB for a table."""
    return f"{n_bytes / 1024:.1f}"


def verdict(ok: bool | None) -> str:
    """Met / not met, in words."""
    return "n/a" if ok is None else ("met" if ok else "NOT met")


def target(name: str, measured: str, ok: bool | None, note: str = "") -> dict:
    """One row of the targets table."""
    return {"target": name, "measured": measured, "ok": ok, "note": note}


# ---------------------------------------------------------------- machine

def machine() -> dict:
    """CPU model, cores, RAM, load, Python and library versions."""
    import numpy
    info = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "ram_gib": None, "python": platform.python_version(), "numpy": numpy.__version__,
            "os": platform.platform(terse=True)}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["ram_gib"] = round(int(line.split()[1]) / 1024**2, 1)
                break
    except OSError:
        pass
    for lib in ("streamlit", "plotly", "pandas", "scipy"):
        try:
            info[lib] = __import__(lib).__version__
        except ImportError:
            info[lib] = "not installed"
    try:
        info["load_avg_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        info["load_avg_1_5_15"] = None
    try:
        import numpy as np
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        info["blas"] = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # the BLAS line is a courtesy; never fail a benchmark over it
        info["blas"] = "unknown"
    return info


def chromium_version() -> str:
    """The system Chromium's version string (or why it is missing)."""
    try:
        out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({exc})"


def load_average() -> str:
    """The 1-minute load average now (other processes share the cores)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


# ---------------------------------------------------------------- pages

_PAGE_RE = re.compile(r"""st\.Page\(\s*["'](pages/[\w./-]+\.py)["']"""
                      r"""(?:.*?title\s*=\s*["']([^"']+)["'])?""")


def pages() -> list[tuple[str, str]]:
    """Every page registered in app.py's PAGES list as ``(path, title)``, in menu order.

    Read from the source (the list changes while other pages are being added), falling back to
    ``pages/*.py`` when app.py names none.
    """
    found = []
    for match in _PAGE_RE.finditer(APP.read_text()):
        path, title = match.group(1), match.group(2)
        if (ROOT / path).is_file() and path not in {p for p, _ in found}:
            found.append((path, title or Path(path).stem))
    if not found:
        found = [(f"pages/{p.name}", p.stem) for p in sorted((ROOT / "pages").glob("*.py"))]
    return found


def url_path(page: str) -> str:
    """The URL path st.navigation gives a page file (its stem)."""
    return Path(page).stem


# ---------------------------------------------------------------- scenarios

def default_scenario():
    """The scenario a new session starts with."""
    from attnviz.scenarios.presets import default_scenario as build
    return build()


def big_scenario(t: int = BIG_T, n_heads: int = BIG_HEADS, d_model: int = BIG_D_MODEL):
    """Multi-head self-attention on t tokens with n_heads heads (d_model wide, 8 dims a head).

    Built from the default scenario with ``resize`` and ``init_weights`` (seeded), so it is the
    same on every run; the source sequence has t tokens too.
    """
    import numpy as np

    from attnviz.core.initializers import init_weights
    from attnviz.scenarios.scenario import resize

    s = replace(default_scenario(), variant="multi_head")
    s = resize(s, t=t, d_model=d_model, d_k=d_model, d_v=d_model, t_source=t)
    w_q, w_k, w_v, w_o = init_weights("glorot_uniform", [(d_model, d_model)] * 4, seed=0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((t, d_model))
    return replace(s, x=x, source_x=x.copy(), w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o,
                   n_heads=n_heads, tokens=tuple(f"tok{i}" for i in range(t)),
                   source_tokens=tuple(f"src{i}" for i in range(t)),
                   title=f"Benchmark: {t} tokens, {n_heads} heads", description="")


# ---------------------------------------------------------------- a server for browser runs

@contextmanager
def streamlit_server(log_path: Path, env: dict | None = None, timeout: float = 90,
                     script: Path = APP) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run ``streamlit run app.py`` (or ``script``) on a free loopback port; yield (base URL,
    Popen).

    ``env`` adds environment variables to this process's (a value ``None`` removes one). The
    log starts with the command line; a server that exits or is not healthy within ``timeout``
    seconds raises RuntimeError with the log's tail. Only 127.0.0.1 is used. The server is
    terminated (this Popen only) on exit.
    """
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless=true",
           "--browser.gatherUsageStats=false", "--server.address=127.0.0.1",
           f"--server.port={port}", "--server.fileWatcherType=none"]
    environ = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("w")
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT,
                            env={k: v for k, v in environ.items() if v is not None})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while not healthy(f"{base}/_stcore/health"):
            if proc.poll() is not None or time.monotonic() > deadline:
                state = (f"exited with code {proc.returncode}" if proc.poll() is not None
                         else f"was not healthy after {timeout:.0f} s")
                raise RuntimeError(f"the streamlit server for {script} {state}; log {log_path}:\n"
                                   + log_path.read_text(errors="replace")[-4000:])
            time.sleep(0.1)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@contextmanager
def chromium() -> Iterator:
    """The system Chromium, headless, through Playwright's sync API (a Browser); closed, and
    Playwright stopped, on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def rss_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a process in MiB, from /proc/<pid>/status."""
    cur = peak = float("nan")
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return cur, peak


def server_errors(log_path: Path) -> list[str]:
    """Lines of a server log that report an error or a traceback."""
    if not log_path.is_file():
        return []
    return [line for line in log_path.read_text(errors="replace").splitlines()
            if "Traceback" in line or "Error" in line or "Exception" in line]


def attention_npz(t: int = 1024, heads: int = 2, seed: int = 0) -> bytes:
    """A .npz of causal attention weights, shape (1, heads, t, t) float32, as a user uploads.

    Two heads at t = 1024 compress to ~3.9 MB, under the 5 MB upload cap.
    """
    import io

    import numpy as np

    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((1, heads, t, t)).astype(np.float32) * 2
    scores = np.where(np.tril(np.ones((t, t), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    buf = io.BytesIO()
    np.savez_compressed(buf, attention=weights)
    return buf.getvalue()
