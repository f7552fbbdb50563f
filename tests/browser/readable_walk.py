"""The readable walk (issue 40's browser test): every page readable from the back of a lecture
hall with a real sentence. The walks, their measurements and the failing list; the tests are
test_readable_words.py (6 and 10 words), test_readable_8_words.py (also each page's first
screen) and test_readable_lectures.py, files of their own so that the suite's two processes
share them (each walk runs once, in a browser session of its own).

A lecturer turns presenter mode on, types a sentence of 6, 8 or 10 words into the
Playground's token box and walks every page with the on-screen "next page" link, on a
1024×768 and a 1920×1080 projector. On each page, as drawn:

- the page's lesson is on the first screen: a chart whose plot area lies between the top bar
  (the lecture bar during a lecture) and the window's bottom, writing its numbers when it is a
  heatmap;
- every number written in a heatmap's cell or a text table is at least 14 px (1024×768) /
  24 px (1920×1080), and every axis label at least 12 px / 18 px (a table drawn on a canvas,
  st.dataframe, is not measured);
- no heatmap on the first screen leaves its cells empty ("hover a cell" is no use on a
  projector);
- no label (axis labels, titles, subplot titles, colour bar) is written over another or cut
  by the chart's edge;
- during a guided lecture, every number with decimals the talking point names is written on
  the page (in a chart's cells, labels or titles, or the page's text).

The three guided lectures are walked step by step at both sizes (the steps' presets give
their sentences). One browser session per sentence length walks all pages, resizing the
window on each page and measuring everything of a size in one ``page.evaluate``; the
measured failures are kept per case, and each case is its own test that reads them. Cases
still failing are listed in ``FAILING`` with the measured reason, as ``xfail(strict=True)``:
a listed case that passes fails the run, so the list only shrinks.
Viewport screenshots of the eight-word walk: tests/artifacts/screenshots/readable_*.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from helpers import (
    REPO_ROOT,
    SCREENSHOTS,
    expect_rerun,
    goto_page,
    painted,
    wait_for_app_run,
    wait_for_charts,
)
from playwright.sync_api import Browser, Page
from presenter_helpers import new_page, presenter_on
from talk_numbers import drawn_numbers, missing_numbers

from attnviz.teach.lectures import LECTURES
from attnviz.teach.text import common
from attnviz.teach.text import lectures as lecture_text

SENTENCES = {
    6: "the teacher wrote six short words",
    8: "the teacher wrote eight words on the board",
    10: "the teacher wrote ten words on the big white board",
}
SIZES = {"1024x768": (1024, 768), "1920x1080": (1920, 1080)}
# the least size (px) of a cell's number and of an axis label, per size
CELL_PX = {"1024x768": 14, "1920x1080": 24}
AXIS_PX = {"1024x768": 12, "1920x1080": 18}
# pages whose lesson is no chart (text, buttons, a quiz) or that draw one only after the user
# gave them something (a model that generated, a file): their labels and numbers are checked,
# not that a chart is on the first screen
NO_CHART = {"home", "quiz", "generate", "share"}


def nav_pages() -> list[str]:
    """app.py's pages in the navigation's order, by file stem (the address)."""
    tree = ast.parse((REPO_ROOT / "app.py").read_text(encoding="utf-8"))
    return [Path(node.args[0].value).stem for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page"]


PAGES = nav_pages()
STEPS = [(key, n) for key, lec in LECTURES.items() for n in range(1, len(lec.steps) + 1)]

# Cases measured failing, with what was measured (the chart, without its page's "<page>_fig_"
# prefix, and what it draws): (page, size) for every sentence length, or (page, size, length)
# for one; lecture steps as ("lecture:<key>:<step>", size). "axis labels 16 px", measured while
# presenter mode's tick labels were 16 px at every size: they are 18 px at 1920 px
# (attnviz/ui/plotly_present.js presenterTickPx); these cases fail for their other reasons.
FAILING: dict[tuple, str] = {
    ('encoder_decoder', '1920x1080', 8): (
        'add_scores: cell numbers of 22 px (< 24); axis labels 16 px (< 18)'),
    ('encoder_decoder', '1920x1080', 10): (
        'add_scores: cell numbers of 17 px (< 24); axis labels 16 px (< 18)'),
    ('gradients', '1024x768', 6): 'no chart with numbers on the first screen',
    ('gradients', '1024x768', 8): (
        'sweep_heatmap: turned labels overlap; no chart with numbers on the first screen'),
    ('gradients', '1024x768', 10): (
        'sweep_heatmap: turned labels overlap; no chart with numbers on the first screen'),
    ('gradients', '1920x1080', 6): (
        'sweep: axis labels of 12 px (< 18); sweep_heatmap: cell numbers of 17 px (< 24); axis '
        'labels 16 px (< 18)'),
    ('gradients', '1920x1080', 8): (
        'gradients_scaled_fwd: cell numbers of 23 px (< 24); gradients_scaled_grad: cell '
        'numbers of 20 px (< 24); sweep: axis labels of 12 px (< 18); sweep_heatmap: cell '
        'numbers of 14 px (< 24); axis labels 16 px (< 18)'),
    ('gradients', '1920x1080', 10): (
        'gradients_weights_grad: cell numbers of 22 px (< 24); gradients_scaled_fwd: cell '
        'numbers of 18 px (< 24); gradients_scaled_grad: cell numbers of 16 px (< 24); sweep: '
        'axis labels of 12 px (< 18); no chart with numbers on the first screen; axis labels 16'
        ' px (< 18)'),
    ('induction', '1024x768'): 'grid: no numbers; no chart with numbers on the first screen',
    ('induction', '1920x1080'): (
        'grid: no numbers; grid: labels overlap; no chart with numbers on the first screen; '
        'axis labels 16 px (< 18)'),
    ('learn', '1024x768', 10): 'no chart with numbers on the first screen',
    ('model_view', '1024x768'): 'no chart with numbers on the first screen',
    ('model_view', '1920x1080'): (
        'grid: no numbers; no chart with numbers on the first screen; axis labels 16 px (< 18)'),
    ('playground', '1024x768', 6): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('playground', '1024x768', 8): (
        'weights_slot_0: no numbers; weights_slot_2: no numbers; weights_slot_2: axis labels of'
        ' 9 px (< 12)'),
    ('playground', '1024x768', 10): (
        'weights_slot_0: no numbers; weights_slot_2: no numbers; weights_slot_2: axis labels of'
        ' 9 px (< 12)'),
    ('playground', '1920x1080', 6): 'axis labels 16 px (< 18)',
    ('playground', '1920x1080', 8): (
        'weights_slot_0: cell numbers of 16 px (< 24); weights_slot_2: cell numbers of 18 px (<'
        ' 24); axis labels 16 px (< 18)'),
    ('playground', '1920x1080', 10): (
        'weights_slot_0: no numbers; weights_slot_2: cell numbers of 21 px (< 24); axis labels '
        '16 px (< 18)'),
    ('step_by_step', '1024x768', 10): 'no chart with numbers on the first screen',
    ('lecture:backprop:5', '1024x768'): "the talking point names ['0.00495'], not drawn",
    ('lecture:backprop:4', '1920x1080'): (
        'sweep: axis labels of 12 px (< 18); axis labels 16 px (< 18)'),
    ('lecture:backprop:5', '1920x1080'): (
        'sweep: axis labels of 12 px (< 18); axis labels 16 px (< 18)'),
    ('lecture:backprop:8', '1024x768'): 'no chart with numbers on the first screen',
    ('lecture:backprop:8', '1920x1080'): (
        'grid: no numbers; no chart with numbers on the first screen; axis labels 16 px (< 18)'),
    ('lecture:modern:1', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:modern:1', '1920x1080'): (
        'weights_slot_0: cell numbers of 22 px (< 24); weights_slot_2: cell numbers of 22 px (<'
        ' 24); axis labels 16 px (< 18)'),
    ('lecture:modern:3', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:modern:3', '1920x1080'): (
        'weights_slot_0: cell numbers of 22 px (< 24); weights_slot_2: cell numbers of 23 px (<'
        ' 24); axis labels 16 px (< 18)'),
    ('lecture:modern:6', '1024x768'): (
        'lecture_head_0: no numbers; lecture_head_1: no numbers; lecture_head_2: no numbers; '
        'lecture_head_3: no numbers; no chart with numbers on the first screen; the talking '
        "point names ['0.26', '0.12', '0.13'], not drawn"),
    ('lecture:modern:6', '1920x1080'): (
        'lecture_head_0: cell numbers of 19 px (< 24); lecture_head_1: cell numbers of 18 px (<'
        ' 24); lecture_head_2: cell numbers of 18 px (< 24); lecture_head_3: cell numbers of 18'
        ' px (< 24); axis labels 16 px (< 18)'),
    ('lecture:modern:7', '1024x768'): (
        'lecture_head_0: no numbers; lecture_head_1: no numbers; lecture_head_2: no numbers; '
        'lecture_head_3: no numbers; lecture_head_4: no numbers; lecture_head_5: no numbers; '
        'lecture_head_6: no numbers; lecture_head_7: no numbers; no chart with numbers on the '
        'first screen'),
    ('lecture:modern:7', '1920x1080'): (
        'lecture_head_0: cell numbers of 21 px (< 24); lecture_head_1: cell numbers of 20 px (<'
        ' 24); lecture_head_2: cell numbers of 20 px (< 24); lecture_head_3: cell numbers of 20'
        ' px (< 24); lecture_head_4: cell numbers of 20 px (< 24); lecture_head_5: cell numbers'
        ' of 20 px (< 24); lecture_head_6: cell numbers of 20 px (< 24); lecture_head_7: cell '
        'numbers of 20 px (< 24); axis labels 16 px (< 18)'),
    ('lecture:modern:8', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:modern:9', '1024x768'): (
        'scores_slot_0: labels overlap; scores_slot_1: labels overlap; scores_slot_2: labels '
        'overlap'),
    ('lecture:modern:10', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:modern:10', '1920x1080'): (
        'weights_slot_0: no numbers; weights_slot_2: no numbers; axis labels 16 px (< 18)'),
    ('lecture:modern:11', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:modern:11', '1920x1080'): (
        'weights_slot_0: cell numbers of 15 px (< 24); weights_slot_2: cell numbers of 17 px (<'
        ' 24); axis labels 16 px (< 18)'),
    ('lecture:scratch:5', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:scratch:5', '1920x1080'): (
        'weights_slot_0: cell numbers of 22 px (< 24); weights_slot_2: cell numbers of 22 px (<'
        ' 24); axis labels 16 px (< 18)'),
    ('lecture:scratch:6', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:scratch:6', '1920x1080'): (
        'weights_slot_2: cell numbers of 22 px (< 24); axis labels 16 px (< 18)'),
    ('lecture:scratch:7', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:scratch:7', '1920x1080'): (
        'weights_slot_0: cell numbers of 22 px (< 24); weights_slot_2: cell numbers of 22 px (<'
        ' 24); axis labels 16 px (< 18)'),
    ('lecture:scratch:9', '1024x768'): 'weights_slot_0: no numbers; weights_slot_2: no numbers',
    ('lecture:scratch:9', '1920x1080'): (
        'weights_slot_0: cell numbers of 22 px (< 24); weights_slot_2: cell numbers of 22 px (<'
        ' 24); axis labels 16 px (< 18)'),

}

# Everything the checks read from the page, after every chart has its final drawing.
MEASURE = r"""() => {
  const rect = el => { const r = el.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height}; };
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const header = document.querySelector('[data-testid=stHeader]');
  const bar = document.querySelector('.st-key-lecture_bar');
  const top = Math.max(header ? header.getBoundingClientRect().bottom : 0,
                       bar ? bar.getBoundingClientRect().bottom : 0);
  const main = document.querySelector('[data-testid=stMain]');
  const charts = [...main.querySelectorAll('.js-plotly-plot')]
    .filter(g => { const r = g.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
    .map(g => {
      const key = [...(g.closest('[class*=st-key-]')?.classList || [])]
        .find(c => c.startsWith('st-key-')) || '';
      const label = (t, kind) => { const tr = t.getAttribute('transform') || '';
        const turn = /rotate\(([-\d.e]+)/.exec(tr);
        const at = /translate\(([-\d.e]+),\s*([-\d.e]+)/.exec(tr);
        return {kind, text: t.textContent, px: px(t), box: rect(t),
                turned: turn ? parseFloat(turn[1]) : 0,
                at: at ? [parseFloat(at[1]), parseFloat(at[2])] : null,
                axis: t.closest('g[class$=tick]')?.getAttribute('class') || ''}; };
      const labels = [];
      g.querySelectorAll('.xaxislayer-above text').forEach(t => labels.push(label(t, 'x')));
      g.querySelectorAll('.yaxislayer-above text').forEach(t => labels.push(label(t, 'y')));
      g.querySelectorAll('.g-gtitle text, .g-xtitle text, .g-ytitle text')
        .forEach(t => labels.push(label(t, 'title')));
      g.querySelectorAll('.annotation-text').forEach(t => labels.push(label(t, 'note')));
      g.querySelectorAll('.colorbar text').forEach(t => labels.push(label(t, 'bar')));
      const heat = (g._fullData || []).filter(d => d.type === 'heatmap' && d.visible !== false);
      return {key, box: rect(g), heatmap: heat.length > 0,
              areas: [...g.querySelectorAll('.nsewdrag')].map(rect),
              numbers: [...g.querySelectorAll('.heatmaplayer text')]
                .filter(t => t.textContent.trim()).map(t => ({px: px(t), text: t.textContent})),
              labels: labels.filter(l => l.text.trim() && l.box.w > 0)};
    });
  // tables written as text (st.table): their cells' type, where they show
  const tables = [...main.querySelectorAll('[data-testid=stTable] td, [data-testid=stTable] th')]
    .filter(c => c.getClientRects().length && c.textContent.trim()).map(px);
  const barText = bar ? bar.innerText : '';
  const cells = [...main.querySelectorAll('[data-testid^=glide-cell]')].map(c => c.textContent);
  // the first screen (FIRST_SCREEN): the page's title (st.header: an h2), its text's box (not
  // the heading's padding); the cell numbers drawn wholly inside the window; every text
  // table's cells, shown or not; widget labels cut short (presenter mode keeps a label on one
  // line, with an ellipsis)
  const heading = main.querySelector('h1, h2');
  const range = document.createRange();
  if (heading) range.selectNodeContents(heading);
  const inside = [...main.querySelectorAll('.js-plotly-plot .heatmaplayer text')]
    .filter(t => { if (!t.textContent.trim()) return false; const r = t.getBoundingClientRect();
      return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0
        && r.right <= innerWidth; }).map(px);
  const clipped = [...main.querySelectorAll('[data-testid=stWidgetLabel] p')]
    .filter(p => p.getBoundingClientRect().width > 0 && p.scrollWidth > p.clientWidth + 1)
    .map(p => p.textContent);
  const failed = [...document.querySelectorAll('[data-testid=stException]')]
    .map(e => e.innerText);
  return {top, bottom: innerHeight, width: innerWidth, charts, tables,
          text: main.innerText.replace(barText, '') + '\n' + cells.join('\n'),
          title: heading ? range.getBoundingClientRect().top : null,
          header: header ? header.getBoundingClientRect().bottom : 0,
          inside, allTables: [...main.querySelectorAll('table td')].map(px), clipped, failed};
}"""


def overlaps(a: dict, b: dict, gap: float = 1.0) -> bool:
    """Two labels' boxes share more than a sliver (``gap`` px each way)."""
    ax, ay = min(a["r"], b["r"]) - max(a["l"], b["l"]), min(a["b"], b["b"]) - max(a["t"], b["t"])
    return ax > gap and ay > gap


def label_problems(chart: dict) -> list[str]:
    """Labels written into each other or cut by the chart's edge."""
    out = []
    labels, box = chart["labels"], chart["box"]
    for lab in labels:
        b = lab["box"]
        if b["l"] < box["l"] - 2 or b["r"] > box["r"] + 2:
            out.append(f"{lab['kind']} label {lab['text']!r} cut by the chart's edge")
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a["turned"] and b["turned"] and a["axis"] == b["axis"] and a["at"] and b["at"]:
                # turned labels of one axis: apart when their ticks are a line apart across
                step = abs(a["at"][0] - b["at"][0]) or abs(a["at"][1] - b["at"][1])
                if step * 0.7071 < min(a["px"], b["px"]) - 0.5:
                    out.append(f"turned labels {a['text']!r} and {b['text']!r} overlap")
            elif not (a["turned"] or b["turned"]) and overlaps(a["box"], b["box"]):
                out.append(f"labels {a['text']!r} and {b['text']!r} overlap")
    return out


def problems(seen: dict, size: str, page: str) -> list[str]:
    """What a class would not read on this screen (see the module's list)."""
    out = []
    top, bottom = seen["top"], seen["bottom"]
    cell_px, axis_px = CELL_PX[size], AXIS_PX[size]
    on_screen = []
    for c in seen["charts"]:
        name = c["key"].removeprefix("st-key-") or "a chart"
        first = bool(c["areas"]) and all(a["t"] >= top - 1 and a["b"] <= bottom + 1
                                         for a in c["areas"])
        if first:
            on_screen.append(c)
            if c["heatmap"] and not c["numbers"]:
                out.append(f"{name}: a heatmap on the first screen writes no numbers")
        small = [n["px"] for n in c["numbers"] if n["px"] < cell_px - 0.01]
        if small:
            out.append(f"{name}: cell numbers of {min(small):.0f} px (< {cell_px})")
        ticks = [lab["px"] for lab in c["labels"] if lab["kind"] in "xy"]
        if ticks and min(ticks) < axis_px - 0.01:
            out.append(f"{name}: axis labels of {min(ticks):.0f} px (< {axis_px})")
        out.extend(f"{name}: {p}" for p in dict.fromkeys(label_problems(c)))
    if seen["tables"] and min(seen["tables"]) < cell_px - 0.01:
        out.append(f"a table's numbers of {min(seen['tables']):.0f} px (< {cell_px})")
    if page not in NO_CHART and not any(c["numbers"] or not c["heatmap"] for c in on_screen):
        where = [(c["key"].removeprefix("st-key-"), round(min(a["t"] for a in c["areas"])))
                 for c in seen["charts"] if c["areas"]]
        out.append(f"no lesson chart with numbers on the first screen (charts' tops: {where})")
    return out


# The first screens a class sees after an eight-word sentence was typed (measured in the
# eight-word walk; the title, the sizes and the labels were wrong there before): page -> whether
# its first screen must show a full row of cell numbers (at least eight, at the size's least
# size, wholly inside the window). Every one: its title starts below Streamlit's header (the
# Playground's lecture view starts with controls, no title), no widget label is cut short, no
# text table's number is below the size's least size; Step by step draws its tables of numbers
# as text (a canvas grid at ≈ 14 px on any screen before).
FIRST_SCREEN = {"playground": False, "learn": True, "your_attention": True, "pitfalls": True,
                "induction": False, "step_by_step": True, "multi_head": False}
FIRST_SCREEN_WORDS = 8
FULL_ROW = 8


def first_screen_problems(seen: dict, size: str, page: str) -> list[str]:
    """What is wrong on the first screen of one of ``FIRST_SCREEN``'s pages."""
    out = []
    least = CELL_PX[size]
    if page != "playground" and (seen["title"] is None or seen["title"] < seen["header"]):
        out.append(f"title at {seen['title']} px, header to {seen['header']} px")
    readable = [px for px in seen["inside"] if px >= least]
    if FIRST_SCREEN[page] and len(readable) < FULL_ROW:
        out.append(f"{len(readable)} numbers ≥ {least} px on the first screen "
                   f"(all: {sorted(seen['inside'])[:FULL_ROW]})")
    small = [px for px in seen["allTables"] if px < least]
    if small:
        out.append(f"{len(small)} table numbers below {least} px ({min(small)} px)")
    if seen["clipped"]:
        out.append(f"labels cut short: {seen['clipped']}")
    if page == "step_by_step" and not seen["allTables"]:
        out.append("no table of numbers drawn")
    return out


class Clock:
    """Seconds the walk spent per phase (printed at its end: where its time goes)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.started = time.monotonic()

    def __call__(self, phase: str, since: float) -> float:
        now = time.monotonic()
        self.spent[phase] = self.spent.get(phase, 0.0) + now - since
        return now

    def report(self, what: str) -> str:
        phases = ", ".join(f"{k} {v:.0f} s" for k, v in self.spent.items())
        return f"{what} in {time.monotonic() - self.started:.0f} s ({phases})"


# The page's layout stands still: the main area's height and every chart's place the same for
# five animation frames in a row (after a resize, Streamlit lays some blocks out again a few
# frames later, which moves the charts below them; within 5 s)
STILL = """() => new Promise(done => {
  const main = document.querySelector('[data-testid=stMain]');
  const where = () => JSON.stringify([main?.scrollHeight,
    ...[...document.querySelectorAll('.js-plotly-plot')].map(g => {
      const r = g.getBoundingClientRect(); return [r.top, r.height]; })]);
  let last = where(), same = 0;
  const stop = setTimeout(() => done(false), 5000);
  const tick = () => { const now = where(); same = now === last ? same + 1 : 0; last = now;
    if (same >= 5) { clearTimeout(stop); done(true); } else requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
})"""


def measure(page: Page, size: str, name: str, clock: Clock,
            shot: str | None = None) -> tuple[list[str], dict]:
    """Resize to ``size`` (no reload), wait for the final drawings, and read everything of the
    page in one evaluate; what fails, and what was read."""
    t = time.monotonic()
    w, h = SIZES[size]
    if page.viewport_size != {"width": w, "height": h}:
        page.set_viewport_size({"width": w, "height": h})
        painted(page)
        t = clock("resize", t)
    wait_for_charts(page)
    if not page.evaluate(STILL):
        raise AssertionError(f"{name} at {size}: the layout kept moving for 5 s")
    wait_for_charts(page)  # (a chart that moved is fitted again where it stands)
    t = clock("charts drawn", t)
    seen = page.evaluate(MEASURE)
    if problems(seen, size, name):
        # a page a lecture step opened can draw its full layout for a moment before the run
        # that lays out the lecture's compact one: what fails is read again once the app is
        # idle and the layout stands still once more (what a person sees a moment later; a
        # true failure fails again)
        wait_for_app_run(page)
        wait_for_charts(page)
        page.evaluate(STILL)
        seen = page.evaluate(MEASURE)
    t = clock("measure", t)
    if seen["failed"]:
        raise AssertionError(f"Streamlit exception on {page.url}:\n{seen['failed'][0]}")
    if shot:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"readable_{shot}-{size}.png"))
        clock("screenshot", t)
    return problems(seen, size, name), seen


def written(seen: dict) -> str:
    """Every number and word the page writes: its text, tables, and its charts' cells and
    labels (a number left out of a cell too small for it is not written)."""
    charts = seen["charts"]
    return "\n".join([seen["text"], *(t["text"] for c in charts for t in c["numbers"]),
                      *(lab["text"] for c in charts for lab in c["labels"])])


def type_sentence(page: Page, sentence: str) -> None:
    box = page.get_by_role("textbox", name=common.TOKENS_LABEL)
    box.click()
    box.press("Control+a")
    page.keyboard.type(sentence)
    with expect_rerun(page):
        page.keyboard.press("Enter")


def follow(page: Page, link: str) -> None:
    """Click presenter mode's previous / next page link (``back`` / ``next``) and wait for the
    new page's run to show."""
    with expect_rerun(page):
        page.locator(f".st-key-page_nav_{link} a").first.click()


class Walks:
    """The walks, each run once on first use; failures per case (``first`` for
    ``FIRST_SCREEN``'s pages in the eight-word walk)."""

    def __init__(self, browser: Browser, base_url: str):
        self.browser, self.base_url = browser, base_url
        self.pages: dict[int, object] = {}
        self.first: dict[tuple[str, str], list[str]] = {}
        self.lectures: object = None

    def page_walk(self, n: int) -> dict:
        if n not in self.pages:
            self.pages[n] = self._guard(lambda: self._walk_pages(n))
        return self._result(self.pages[n])

    def first_screen(self, name: str, size: str) -> list[str]:
        self.page_walk(FIRST_SCREEN_WORDS)
        return self.first[(name, size)]

    def lecture_walk(self) -> dict:
        if self.lectures is None:
            self.lectures = self._guard(self._walk_lectures)
        return self._result(self.lectures)

    @staticmethod
    def _guard(walk):
        try:
            return walk()
        except Exception as exc:  # kept: every case of the walk reports it, none walks again
            return exc

    @staticmethod
    def _result(result):
        if isinstance(result, Exception):
            raise result
        return result

    def _walk_pages(self, n: int) -> dict:
        clock = Clock()
        page = new_page(self.browser, SIZES["1024x768"])
        found = {}
        try:
            t = time.monotonic()
            goto_page(page, self.base_url, "playground")
            presenter_on(page)
            type_sentence(page, SENTENCES[n])
            while page.locator(".st-key-page_nav_back a").count():
                follow(page, "back")
            clock("start", t)
            for i, name in enumerate(PAGES):
                assert page.evaluate("() => location.pathname").rstrip("/").endswith(
                    "" if name == "home" else name), (name, page.url)
                # the size the last page ended at first: one resize per page
                order = list(SIZES) if i % 2 == 0 else list(SIZES)[::-1]
                for size in order:
                    found[(name, size)], seen = measure(page, size, name, clock,
                                                        name if n == 8 else None)
                    if n == FIRST_SCREEN_WORDS and name in FIRST_SCREEN:
                        self.first[(name, size)] = first_screen_problems(seen, size, name)
                if i + 1 < len(PAGES):
                    t = time.monotonic()
                    follow(page, "next")
                    clock("next page", t)
        finally:
            page.context.close()
        print(clock.report(f"{n} words: {len(PAGES)} pages at {len(SIZES)} sizes"))
        return found

    def _walk_lectures(self) -> dict:
        clock = Clock()
        found = {}
        page = new_page(self.browser, SIZES["1024x768"])
        try:
            for key, lecture in LECTURES.items():
                t = time.monotonic()
                with expect_rerun(page):
                    page.goto(f"{self.base_url}/?lecture={key}&step=1")
                clock("start", t)
                for n, step in enumerate(lecture.steps, start=1):
                    name = Path(step.page).stem
                    order = list(SIZES) if n % 2 else list(SIZES)[::-1]
                    for size in order:
                        out, seen = measure(page, size, name, clock)
                        talk = lecture_text.TALK[step.talk]
                        missing = missing_numbers(talk, drawn_numbers(written(seen)))
                        if missing:
                            out.append(f"the talking point names {missing}, not drawn")
                        found[(key, n, size)] = out
                    if n < len(lecture.steps):
                        t = time.monotonic()
                        page.locator(".st-key-lecture_bar").click(position={"x": 5, "y": 5})
                        with expect_rerun(page):
                            page.keyboard.press("ArrowRight")
                        clock("next step", t)
        finally:
            page.context.close()
        print(clock.report(f"lectures: {len(STEPS)} steps at {len(SIZES)} sizes"))
        return found


# Cases that fail in some walks and pass in others, with what was seen (not strict xfails, so
# neither outcome fails the suite; each is a fault to find, listed in the session's note).
SOMETIMES: dict[tuple, str] = {
    ("lecture:modern:4", "1024x768"): (
        "sometimes fails since f775a50: after the resize from 1920x1080 the RoPE scores were "
        "measured at top 722 px (below the first screen) although the screenshot taken right "
        "after shows them at ~200 px with their numbers; failed in 5 walks, passed in 3"),
}


def _case(case: tuple, *keys: tuple) -> object:
    reason = next((FAILING[k] for k in keys if k in FAILING), None)
    sometimes = next((SOMETIMES[k] for k in keys if k in SOMETIMES), None)
    if sometimes:
        return pytest.param(*case, marks=pytest.mark.xfail(strict=False, reason=sometimes))
    return pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason=reason)) \
        if reason else pytest.param(*case)


def page_cases(*lengths: int) -> list:
    """The cases of the walks of these sentence lengths, the failing ones strict xfails:
    (page, size) for one length, (length, page, size) for several."""
    return [_case((n, name, size) if len(lengths) > 1 else (name, size),
                  (name, size), (name, size, n))
            for n in lengths for name in PAGES for size in SIZES]


STEP_CASES = [_case((key, step, size), (f"lecture:{key}:{step}", size))
              for key, step in STEPS for size in SIZES]
FIRST_SCREEN_CASES = [(name, size) for name in FIRST_SCREEN for size in SIZES]


def check_page(walks: Walks, n: int, name: str, size: str) -> None:
    found = walks.page_walk(n)[(name, size)]
    assert not found, f"{name} at {size} with {n} words: " + "; ".join(found)
