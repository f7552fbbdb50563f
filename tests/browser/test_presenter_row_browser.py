"""Real browser (issue 28, session 18): the Playground's RoPE row in presenter mode and the
variant formula, at 1024×768 and 1366×768.

- Presenter mode's row of controls: with RoPE's seven settings in a column each, the values
  were cut (the base box read "1000…", a real head's attention scaling "1.13862…", the pair
  layout "split_"). Now (tests/pages/test_presenter_row.py) the unused settings sit behind
  "More"; measured here: every value in the row (number and text boxes, the frequencies'
  caption, the buttons) shows whole (``scrollWidth <= clientWidth``; the labels are cut on
  purpose, their help has them), the row's columns do not overlap, and "More" opens on the
  folded settings.
- The formula of a scaled-RoPE head (θ_i from the model, a = 1.139) ran past the page's right
  edge at 1366 px; now it wraps between its parts: the display formula is no wider than its box,
  with the sidebar open and in presenter mode.

The head: the rope_shift preset (six tokens) with a YaRN head's frequencies and attention
scaling, as tests/pages/test_presenter_row.py builds it. Screenshots
(tests/artifacts/screenshots/): presenter_row_<case>_<width>[_presenter].png.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import assert_no_exception, goto_page, screenshot, wait_for_app_run
from presenter_helpers import new_page, presenter_on

from attnviz.io.scenario_io import to_link_param
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import playground as text

SIZES = [(1024, 768), (1366, 768)]


def _real_head():
    sc = PRESETS["rope_shift"].build()
    return replace(sc, params={**sc.params, "rope_inv_freq": (1.0, 0.0025),
                               "rope_attention_scaling": 1.138629436111989})


CASES = {"rope_shift": PRESETS["rope_shift"].build(), "real_head": _real_head()}

# the row's values: every box, caption and button text (not the widget labels, cut on purpose)
ROW_VALUES = """() => {
  const row = document.querySelector('.st-key-playground_presenter_controls');
  const shown = [...row.querySelectorAll('input:not([type=checkbox]), '
      + 'button [data-testid=stMarkdownContainer], [data-testid=stCaptionContainer]')]
    .filter(e => !e.closest('[data-testid=stWidgetLabel]') && e.getBoundingClientRect().width);
  return shown.map(e => ({what: e.value || e.innerText, scroll: e.scrollWidth,
                          client: e.clientWidth}));
}"""
# the row's columns, left to right: their edges and whether their content spills
ROW_COLUMNS = """() => [...document.querySelector('.st-key-playground_presenter_controls')
    .querySelectorAll('[data-testid=stColumn]')]
  .map(c => { const r = c.getBoundingClientRect();
              return {left: r.left, right: r.right, scroll: c.scrollWidth,
                      client: c.clientWidth}; })
  .sort((a, b) => a.left - b.left)"""
# the variant formula's box and the pieces KaTeX laid out in it (its lines' chunks)
FORMULA = """() => { const k = document.querySelector('[data-testid=stMain] .katex-display');
  const box = k.getBoundingClientRect();
  const parts = [...k.querySelectorAll('.katex-html > .base')].map(b => b.getBoundingClientRect());
  return {left: box.left, right: box.right, lines: new Set(parts.map(p => p.top)).size,
          first: Math.min(...parts.map(p => p.left)), last: Math.max(...parts.map(p => p.right))};
}"""


def _assert_formula_whole(page, where: str) -> int:
    """The formula's every part inside its box (not scrolled out of sight); returns how many
    lines it takes."""
    f = page.evaluate(FORMULA)
    assert f["first"] >= f["left"] - 1 and f["last"] <= f["right"] + 1, (where, f)
    return f["lines"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("case", list(CASES))
def test_the_rope_row_and_formula_show_every_value_whole(app_server, browser, case, size):
    page = new_page(browser, size)
    try:
        goto_page(page, app_server, f"playground?scenario={to_link_param(CASES[case])}")
        assert_no_exception(page)
        lines = _assert_formula_whole(page, f"{case}, {size}, sidebar open")
        if case == "real_head":  # too wide for one line beside the sidebar: it wraps
            assert lines >= 2
        screenshot(page, f"presenter_row_{case}_{size[0]}")
        presenter_on(page)
        wait_for_app_run(page)
        assert_no_exception(page)
        screenshot(page, f"presenter_row_{case}_{size[0]}_presenter")
        _assert_formula_whole(page, f"{case}, {size}, presenter mode")
        values = page.evaluate(ROW_VALUES)
        texts = " | ".join(v["what"] for v in values)
        assert "the cat the cat the cat" in texts and text.PRESENTER_MORE_SETTINGS in texts
        if case == "real_head":
            assert "1, 0.0025" in texts and "1.138629436111989" in texts, texts
        else:
            assert "1.138629436111989" not in texts
        cut = [v for v in values if v["scroll"] > v["client"] + 1]
        assert not cut, (case, size, cut)
        columns = page.evaluate(ROW_COLUMNS)
        assert len(columns) >= 4
        for left, right in zip(columns, columns[1:], strict=False):
            assert left["right"] <= right["left"] + 0.5, (case, size, columns)
        assert all(c["scroll"] <= c["client"] + 1 for c in columns), (case, size, columns)
        # "More" opens on the settings folded there
        page.get_by_role("button", name=text.PRESENTER_MORE_SETTINGS).click()
        page.get_by_text("Pair layout", exact=True).wait_for()
    finally:
        page.context.close()
