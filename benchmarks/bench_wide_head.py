"""Browser: a GPT-2-small-sized real head opened on every page — page open and cell edit to
every chart repainted (d_model 768, 12 heads of 64, up to 128 tokens,
edit -> repaint <= 1 s).

    python benchmarks/bench_wide_head.py [--quick] [--runs N] [--json PATH] [--tokens 32,128]
                                         [--all-focus]

A GPT-2 model with GPT-2 small's attention shape (n_embd 768, 12 heads of 64; one layer, random
weights, a small local word-level tokenizer: tests/hf_models.py) is saved with
``save_pretrained`` to a temporary folder. ``streamlit run app.py`` starts on a free loopback
port with HF_HUB_OFFLINE=1, and the system Chromium (headless, 1366×768) opens the head the way
a user does: Model view, "a model folder on this machine", the folder and a text of t tokens,
Capture, "Open layer 0, head 0 on every page". Then, in that session:

- *open*: a sidebar click to Step by step, then to the Playground, until every chart is drawn;
- *cell edit*: a new number typed into x[0, 767] on the Playground (x is 769 columns wide with
  the bias column; the cell reached by scrolling the grid) and committed with Enter, to every
  chart repainted (bench_browser.py's watcher: the last chart redrawn once the script has
  finished and no chart changed for 0.5 s); then W_Q[767, 63] on the Q K V focus likewise;
- *All focus* (``--all-focus``, instead of the edits): the Playground's focus switch clicked to
  "All" (every matrix: ten heatmaps), from the press to every chart drawn, and back to Weights.

Beside it, in this process: the server-side pieces of one run (the scenario's run, the
figures' JSON, the grids' payload) for the same scenario.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import _common as c
from bench_browser import _ARM, _WATCH, _nav, _settle, _wait_drawn, _wait_idle

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported (never download)
sys.path.insert(0, str(c.ROOT / "tests"))  # tests/hf_models.py: the local tokenizer

TARGET_S = 1.0
D_MODEL = 768  # GPT-2 small's hidden size
WAIT_MS = 180_000
WORDS = "the cat sat on a mat and then slept in sun".split()


def gpt2_small_folder(folder: Path, n_layer: int = 1) -> Path:
    """A random GPT-2 with GPT-2 small's attention (768 wide, 12 heads of 64), saved."""
    from hf_models import VOCAB, save_model
    from transformers import GPT2Config

    config = GPT2Config(n_embd=D_MODEL, n_head=12, n_layer=n_layer, n_positions=256,
                        vocab_size=len(VOCAB), bos_token_id=2, eos_token_id=3)
    return save_model(config, False, True, folder)


def sentence(t: int) -> str:
    """t words of the local tokenizer's vocabulary (one token each)."""
    return " ".join(WORDS[i % len(WORDS)] for i in range(t))


def _type_into(page, label: str, typed: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.click()
    box.press("Control+a")
    box.fill(typed)
    box.press("Enter")
    _wait_idle(page)


def open_head(page, base: str, folder: Path, t: int) -> dict:
    """Model view -> capture the folder's text -> open layer 0, head 0; the seconds each
    took."""
    from attnviz.teach.text import model_view as text

    page.goto(f"{base}/model_view")
    _wait_idle(page)
    page.get_by_text(text.SOURCES["directory"], exact=True).click()
    _wait_idle(page)
    page.locator(".st-key-model_view_model input").wait_for()  # the folder: the list's pick
    _type_into(page, text.TEXT_LABEL, sentence(t))
    start = time.perf_counter()
    page.get_by_role("button", name=text.CAPTURE_BUTTON).click()
    _wait_idle(page)
    _wait_drawn(page)
    captured = time.perf_counter() - start
    button = page.get_by_role("button", name=text.REAL_OPEN_BUTTON.format(layer=0, h=0))
    button.scroll_into_view_if_needed()
    start = time.perf_counter()
    button.click()
    page.get_by_test_id("stAlertContentSuccess").wait_for(timeout=WAIT_MS)
    _wait_idle(page)
    opened = time.perf_counter() - start
    return {"capture": captured, "open_head": opened}


def far_right_edit(page, text_: str, column: int = D_MODEL - 1, row: int = 0,
                   grid_key: str = "playground_x") -> dict:
    """Type ``text_`` into (``row``, ``column``) of the grid under ``grid_key`` (x: row 0 and
    the hidden states' last column, the bias column's ones being the last), scrolled to;
    Enter; the settled times."""
    grid = page.locator(f"[class*='st-key-{grid_key}'] table.attnviz-grid").first
    grid.scroll_into_view_if_needed()
    box = grid.locator("xpath=..")
    box.evaluate("(b, down) => { b.scrollLeft = b.scrollWidth; b.scrollTop = down ? "
                 "b.scrollHeight : 0; }", row > 0)
    page.wait_for_timeout(100)
    cell = grid.locator(f"input[data-r='{row}'][data-c='{column}']")
    cell.click()
    cell.press("Control+a")
    page.keyboard.type(text_)
    page.evaluate(_ARM)
    page.keyboard.press("Enter")
    out = _settle(page)
    out["column"] = column
    return out


def edit_runs(page, runs: int) -> dict:
    """x[0, 767] typed into ``runs`` times, then W_Q[767, 63] on the Q K V focus: the settled
    times of each edit and their medians."""
    row: dict = {}
    edits = [far_right_edit(page, "0.3125" if i % 2 == 0 else "0.4375") for i in range(runs)]
    row["edits"] = edits
    row["edit_last"] = c.median([e["last"] for e in edits if e["last"] is not None])
    row["edit_run"] = c.median([e["run"] for e in edits if e["run"]])
    # W_Q (769 × 64) on the Q K V focus: its last hidden row, last column
    page.get_by_test_id("stButtonGroup").get_by_text("Q K V", exact=True).click()
    _wait_idle(page)
    _wait_drawn(page)
    w_edits = [far_right_edit(page, "0.25" if i % 2 == 0 else "0.5", column=63,
                              row=D_MODEL - 1, grid_key="playground_w_q") for i in range(runs)]
    row["w_q_edits"] = w_edits
    row["w_q_last"] = c.median([e["last"] for e in w_edits if e["last"] is not None])
    return row


def all_focus(page, runs: int) -> dict:
    """The focus switch clicked to "All" ``runs`` times (back to Weights between): the settled
    times of each switch to All (bench_clicks.py's clock, from the press)."""
    from bench_clicks import _PRESS, _arm, _timed

    from attnviz.teach.text import playground as text

    page.evaluate(f"({_PRESS})()")
    switches = []
    for _ in range(runs):
        for focus in ("all", "weights"):
            button = page.locator(".st-key-playground_focus [role='tab']").filter(
                has_text=text.FOCUS[focus]).first
            button.scroll_into_view_if_needed()
            _arm(page)
            button.click()
            times = _timed(page)
            if focus == "all":
                switches.append(times)
    return {"all_switches": switches,
            "all_last": c.median([s["last"] for s in switches if s["last"] is not None]),
            "all_run": c.median([s["run"] for s in switches if s["run"]]),
            "all_charts": c.median([s["count"] for s in switches])}


def browser_runs(folder: Path, tokens: list[int], runs: int,
                 focus_all: bool = False) -> list[dict]:
    """One browser session per token count: open the head, the pages, the edits."""
    from playwright.sync_api import sync_playwright

    rows = []
    log = c.RESULTS_DIR / f"wide-head-server-{os.getpid()}.log"
    os.environ.pop("ATTNVIZ_NO_MODELS", None)  # model loading on (the server's environment)
    offline = {"HF_HUB_OFFLINE": "1", "ATTNVIZ_MODELS_DIR": str(folder.parent)}  # its only model
    with c.streamlit_server(log, env=offline) as (base, _proc), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                     args=c.CHROMIUM_ARGS)
        try:
            for t in tokens:
                context = browser.new_context(viewport={"width": 1366, "height": 768})
                context.set_default_timeout(WAIT_MS)
                page = context.new_page()
                page.add_init_script(f"({_WATCH})()")
                row: dict = {"t": t}
                try:
                    row.update(open_head(page, base, folder, t))
                    for path, key in (("pages/step_by_step.py", "open_step"),
                                      ("pages/playground.py", "open_playground")):
                        start = time.perf_counter()
                        _nav(page, base, path)
                        row[key] = time.perf_counter() - start
                    row.update(all_focus(page, runs) if focus_all else edit_runs(page, runs))
                    row["exceptions"] = page.locator("[data-testid='stException']").count()
                    shot = c.RESULTS_DIR / f"wide_head{'_all' if focus_all else ''}_t{t}.png"
                    page.screenshot(path=str(shot))
                    row["screenshot"] = str(shot.relative_to(c.ROOT))
                except Exception as exc:  # report it and go on with the next size
                    row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                    shot = c.RESULTS_DIR / f"FAILED-wide_head_t{t}.png"
                    try:
                        page.screenshot(path=str(shot), full_page=True)
                    except Exception:  # the screenshot is a courtesy
                        pass
                finally:
                    context.close()
                rows.append(row)
                print(f"  t={t}: {json.dumps(row, default=float)[:400]}", flush=True)
        finally:
            browser.close()
    return rows, c.server_errors(log)


def server_pieces(folder: Path, t: int) -> dict:
    """Seconds of the server's pieces for this head at t tokens, and payload sizes."""
    from attnviz.io.capture import load_model
    from attnviz.io.hf_layers import layer_inputs
    from attnviz.scenarios.from_model import layer_scenario
    from attnviz.scenarios.scenario import run_scenario
    from attnviz.ui.editors import cell_text

    model, tokenizer = load_model(folder)
    li = layer_inputs(model, tokenizer, sentence(t), 0)
    start = time.perf_counter()
    scenario = layer_scenario(li, 0)
    made = time.perf_counter() - start
    start = time.perf_counter()
    run_scenario(scenario)
    ran = time.perf_counter() - start
    start = time.perf_counter()
    cells = [[cell_text(v) for v in row] for row in scenario.x]
    texts = time.perf_counter() - start
    return {"t": t, "d_model": scenario.d_model, "layer_scenario": made, "run": ran,
            "x_cell_texts": texts, "x_grid_json_bytes": len(json.dumps(cells))}


def section(rows: list[dict], pieces: list[dict], quick: bool, errors: list[str]) -> dict:
    nan = float("nan")

    def ok(r):
        if r.get("error") or r.get("edit_last") is None or r.get("w_q_last") is None:
            return None
        return max(r["edit_last"], r["w_q_last"]) <= TARGET_S and not r.get("exceptions")

    table = c.md_table(
        ["tokens", "capture (ms)", "open head (ms)", "open Step by step (ms)",
         "open Playground (ms)", "cell edit: rerun in browser (ms)",
         "cell edit: all repainted (ms)", "W_Q edit: all repainted (ms)", "verdict"],
        [[r["t"], c.ms(r.get("capture", nan)), c.ms(r.get("open_head", nan)),
          c.ms(r.get("open_step", nan)), c.ms(r.get("open_playground", nan)),
          c.ms(r.get("edit_run", nan)),
          f"ERROR: {r['error']}" if r.get("error") else c.ms(r.get("edit_last", nan)),
          c.ms(r.get("w_q_last", nan)), c.verdict(ok(r))] for r in rows])
    server = c.md_table(
        ["tokens", "d_model (+ bias)", "layer_scenario (ms)", "run_scenario (ms)",
         "x's cell texts (ms)", "x's cells as JSON (KiB)"],
        [[p["t"], p["d_model"], c.ms(p["layer_scenario"]), c.ms(p["run"]),
          c.ms(p["x_cell_texts"]), c.kib(p["x_grid_json_bytes"])] for p in pieces])
    measured = [r for r in rows if ok(r) is not None]
    worst = max(measured, key=lambda r: max(r["edit_last"], r["w_q_last"]), default=None)
    targets = [c.target(
        "browser: GPT-2-small-sized head, cell edit to every chart repainted, <= 1000 ms",
        f"worst {c.ms(max(worst['edit_last'], worst['w_q_last']))} ms (t={worst['t']})"
        if worst else "n/a",
        bool(measured) and all(ok(r) for r in measured) and len(measured) == len(rows))]
    md = (f"### A GPT-2-small-sized real head (768 wide, 12 heads of 64, layer 0 head 0)"
          f"{' QUICK' if quick else ''}\n\n{table}\n\nServer pieces, in one process:\n\n"
          f"{server}\n\nThe cell edits: x[0, 767] (the hidden states' last column) on the "
          "Playground's Weights focus, and W_Q[767, 63] on its Q K V focus, each reached by "
          "scrolling its grid; medians. Load average at the start: "
          f"{c.load_average()}.\n")
    if errors:
        md += f"\nServer log reported {len(errors)} error line(s), e.g. `{errors[0][:160]}`.\n"
    return {"name": "wide_head", "rows": rows, "pieces": pieces, "targets": targets,
            "markdown": md}


ALL_TARGET_S = 2.0  # the All focus (ten heatmaps) drawn, issue 29's class of speed


def all_section(rows: list[dict], pieces: list[dict], quick: bool, errors: list[str]) -> dict:
    """The markdown and targets of an ``--all-focus`` run."""
    nan = float("nan")
    ok = [r.get("all_last") is not None and r["all_last"] <= ALL_TARGET_S
          and not r.get("exceptions") for r in rows if not r.get("error")]
    table = c.md_table(
        ["tokens", "open Playground (ms)", "All: script run in browser (ms)",
         "All: every chart drawn (ms)", "charts drawn", "target (ms)", "verdict"],
        [[r["t"], c.ms(r.get("open_playground", nan)), c.ms(r.get("all_run", nan)),
          f"ERROR: {r['error']}" if r.get("error") else c.ms(r.get("all_last", nan)),
          f"{r.get('all_charts', nan):g}", c.ms(ALL_TARGET_S),
          c.verdict(None if r.get("error") else r.get("all_last", 99) <= ALL_TARGET_S)]
         for r in rows])
    md = (f"### A GPT-2-small-sized real head: the Playground's All focus"
          f"{' QUICK' if quick else ''}\n\n{table}\n\nFrom the press on \"All\" (Weights "
          f"before it) to every chart drawn and quiet for 0.5 s; medians. Load average at the "
          f"end: {c.load_average()}.\n")
    if errors:
        md += f"\nServer log reported {len(errors)} error line(s), e.g. `{errors[0][:160]}`.\n"
    targets = [c.target(f"GPT-2-small-sized head, All focus drawn <= {c.ms(ALL_TARGET_S)} ms",
                        ", ".join(f"t={r['t']}: {c.ms(r.get('all_last', nan))} ms"
                                  for r in rows), bool(ok) and all(ok))]
    return {"name": "wide_head_all", "rows": rows, "pieces": pieces, "targets": targets,
            "markdown": md}


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--tokens", default="", help="comma-separated token counts (32..128)")
    p.add_argument("--no-browser", action="store_true", help="the server pieces only")
    p.add_argument("--all-focus", action="store_true",
                   help="time the Playground's All focus (every matrix) instead of the edits")
    args = p.parse_args(argv)
    tokens = ([int(s) for s in args.tokens.split(",")] if args.tokens
              else [8] if args.quick else [32, 128])
    runs = args.runs or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix="wide_head_") as tmp:
        folder = gpt2_small_folder(Path(tmp) / "gpt2_small_shape")
        pieces = [server_pieces(folder, t) for t in tokens]
        rows, errors = ([], []) if args.no_browser else browser_runs(folder, tokens, runs,
                                                                     args.all_focus)
    c.emit(args, all_section(rows, pieces, args.quick, errors) if args.all_focus
           else section(rows, pieces, args.quick, errors))


if __name__ == "__main__":
    main()
