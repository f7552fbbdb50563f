"""AppTest: in presenter mode a page's introduction folds into an expander, so the lesson starts
on the projected screen (walking every page at 1024×768 in presenter mode, the title and the
introduction filled the first screen of Step by step, Gradients, Masks, Multi-head, ...)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from apptest_helpers import open_page

from attnviz.teach.lectures import LECTURES
from attnviz.teach.text import common

PAGES = Path(__file__).resolve().parents[2] / "pages"
# every page that writes an introduction through presenter.page_intro, with its text module
WITH_INTRO = sorted(p.stem for p in PAGES.glob("*.py")
                    if "presenter.page_intro(text.INTRO)" in p.read_text(encoding="utf-8"))


def _intro(page: str) -> str:
    source = (PAGES / f"{page}.py").read_text(encoding="utf-8")
    module = re.search(r"from attnviz\.teach\.text import (\w+) as text", source).group(1)
    return importlib.import_module(f"attnviz.teach.text.{module}").INTRO


def _folded_count(at, body: str) -> int:
    """How often the introduction is drawn inside the folded "About this page" expander."""
    return sum(m.value == body for e in at.expander if e.label == common.PRESENTER_INTRO
               for m in e.markdown)


def _folded(at, body: str) -> bool:
    return _folded_count(at, body) == 1


def _written_out(at, body: str) -> bool:
    """The introduction is drawn in the main area outside the folded expander (``main``'s
    markdown includes what expanders hold)."""
    return sum(m.value == body for m in at.main.markdown) > _folded_count(at, body)


def test_most_pages_write_an_introduction_through_page_intro():
    assert len(WITH_INTRO) >= 15, WITH_INTRO


@pytest.mark.parametrize("page", WITH_INTRO)
def test_the_introduction_folds_in_presenter_mode_only(page):
    body = _intro(page)
    at = open_page(page, lazy_open=False)
    assert _written_out(at, body) and not _folded(at, body)
    at.toggle(key="presenter_mode").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    assert _folded(at, body) and not _written_out(at, body)


def test_a_drag_sliders_value_line_is_bigger_in_presenter_mode():
    """"drag τ = 1" under the lecture view's weights was drawn at 15 px on a 1920×1080
    projector; in presenter mode the charts with a slider are handed to the chart component
    as presenter charts, which draws the value line bigger (tests/browser/test_fit_js.py)."""
    from apptest_helpers import chart_keys, spec_by_key

    def sliders(at) -> list[tuple[int, bool]]:
        return [(s["currentvalue"]["font"]["size"],
                 spec_by_key(at, key).get("view", {}).get("presenter", False))
                for key in chart_keys(at)
                for s in spec_by_key(at, key)["layout"].get("sliders", [])]

    at = open_page("playground", lazy_open=False, focus="weights")
    assert sliders(at) and set(sliders(at)) == {(15, False)}
    at.toggle(key="presenter_mode").set_value(True).run()
    assert set(sliders(at)) == {(15, True)}


def test_every_heads_chart_sends_its_numbers_for_the_browser_to_size():
    """The heads focus with GQA's 8 heads (a guided lecture's step) and Your own attention's
    example sent no numbers (a head or token count decided it on the server), so 59-px cells
    at 1920×1080 showed none; the browser now sizes them to the drawn cells or leaves them out."""
    from apptest_helpers import chart_keys, spec_by_key

    from attnviz.ui import head_grid, lecture_bar

    at = open_page(lazy_open=False)
    at.selectbox(key=lecture_bar.CHOICE).select("modern").run()
    step = next(i for i, s in enumerate(LECTURES["modern"].steps) if s.preset == "gqa_8_2")
    for _ in range(step):
        at.button(key="lecture_next").click().run()
    keys = [k for k in chart_keys(at) if k.startswith("playground_fig_lecture_head_")]
    assert len(keys) == 8
    assert all(spec_by_key(at, k)["data"][0].get("texttemplate") == "%{text}" for k in keys)
    # one shared scale said once, row labels on the first head of a row: the cells get the room
    assert all(spec_by_key(at, k)["data"][0].get("showscale") is False for k in keys)
    labelled = [spec_by_key(at, k)["layout"]["yaxis"].get("showticklabels", True) for k in keys]
    assert labelled == [True, False, False, False] * 2
    assert head_grid.scale_words() in [c.value for c in at.caption]
    yours = open_page("your_attention", lazy_open=False)
    keys = [k for k in chart_keys(yours)
            if k.startswith("your_attention_fig_head_") or k == "your_attention_fig_entropy"]
    assert keys and all(spec_by_key(yours, k)["data"][0].get("texttemplate") == "%{text}"
                        for k in keys), keys
