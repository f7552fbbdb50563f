"""Real browser: what a class sees on the first projected screen of the Playground, Learn, Your
own attention, Pitfalls, Induction heads, Step by step and Multi-head in presenter mode, after an
eight-word sentence was typed.

Walking every page at 1024×768 in presenter mode, Learn, Your own attention and Pitfalls
showed only controls on their first screen (Learn's target after its controls, Your own
attention's uploads, Pitfalls' seventeen titles), Induction heads' title sat partly under
Streamlit's header, and labels were cut ("Add po…", "Heads (must divide"). Measured here, at
1024×768 and at 1920×1080 in one session: no widget label is cut short, every page's title
starts below the header, Learn, Your own attention, Pitfalls and Step by step show a full row
of cell numbers (at least eight) inside the window at the classroom sizes (≥ 14 px at 1024,
≥ 24 px at 1920), and Step by step's tables of numbers (a canvas grid at ≈ 14 px on any
screen before) are as large. The page order in the AppTest: tests/pages/test_first_screens.py.
"""

from __future__ import annotations

from helpers import assert_no_exception, expect_rerun, goto_page, wait_for_app_run, wait_for_charts
from playwright.sync_api import Page
from presenter_helpers import new_page, presenter_on
from test_presenter_pages import open_from_nav

from attnviz.teach.text import common

SENTENCE = "the teacher wrote eight words on the board"
# the page's title (navigation) -> whether its first screen must show cell numbers
PAGES = {"Playground": False, "Learn": True, "Your own attention": True, "Pitfalls": True,
         "Induction heads": False, "Step by step": True, "Multi-head": False}
SIZES = {(1024, 768): 14, (1920, 1080): 24}

# the title's top and the header's bottom; the cell numbers drawn wholly inside the window
SCREEN = """() => {
  // the page's title (st.header: an h2), its text's box (not the heading's padding)
  const heading = document.querySelector('[data-testid=stMain] h1, [data-testid=stMain] h2');
  const range = document.createRange();
  if (heading) range.selectNodeContents(heading);
  const header = document.querySelector('[data-testid=stHeader]');
  const numbers = [...document.querySelectorAll('.js-plotly-plot .heatmaplayer text')]
    .filter(t => t.textContent.trim()).map(t => {
      const r = t.getBoundingClientRect();
      return {px: parseFloat(getComputedStyle(t).fontSize), inside: r.width > 0
              && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth};
    }).filter(n => n.inside);
  return {title: heading ? range.getBoundingClientRect().top : null,
          header: header ? header.getBoundingClientRect().bottom : 0,
          numbers: numbers.map(n => n.px),
          tables: [...document.querySelectorAll('[data-testid=stMain] table td')]
            .map(t => parseFloat(getComputedStyle(t).fontSize)),
          // widget labels cut short (presenter mode keeps a label on one line, with an ellipsis)
          clipped: [...document.querySelectorAll(
              '[data-testid=stMain] [data-testid=stWidgetLabel] p')]
            .filter(p => p.getBoundingClientRect().width > 0 && p.scrollWidth > p.clientWidth + 1)
            .map(p => p.textContent)};
}"""


def type_sentence(page: Page, sentence: str) -> None:
    """Type the sentence into the token box as a person does: select what is there, type,
    Enter."""
    box = page.get_by_role("textbox", name=common.TOKENS_LABEL)
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(sentence)
    with expect_rerun(page):
        page.keyboard.press("Enter")


def test_first_screens_show_the_title_and_the_lesson(browser, app_server) -> None:
    page = new_page(browser, (1024, 768))
    wrong = []
    try:
        goto_page(page, app_server, "playground")
        type_sentence(page, SENTENCE)
        presenter_on(page)
        for (width, height), least in SIZES.items():
            page.set_viewport_size({"width": width, "height": height})
            for title, with_numbers in PAGES.items():
                open_from_nav(page, title, presenter=True)
                wait_for_charts(page)
                wait_for_app_run(page)
                assert_no_exception(page)
                seen = page.evaluate(SCREEN)
                where = f"{title} at {width}×{height}"
                untitled = title == "Playground"  # its lecture view starts with controls
                if not untitled and (seen["title"] is None or seen["title"] < seen["header"]):
                    wrong.append(f"{where}: title at {seen['title']} px, header to "
                                 f"{seen['header']} px")
                readable = [px for px in seen["numbers"] if px >= least]
                if with_numbers and len(readable) < 8:
                    wrong.append(f"{where}: {len(readable)} numbers ≥ {least} px on the first "
                                 f"screen (all: {sorted(seen['numbers'])[:8]})")
                small = [px for px in seen["tables"] if px < least]
                if small:  # Step by step's tables of numbers, as large as the charts' numbers
                    wrong.append(f"{where}: {len(small)} table numbers below {least} px "
                                 f"({min(small)} px)")
                if seen["clipped"]:
                    wrong.append(f"{where}: labels cut short: {seen['clipped']}")
                if title == "Step by step" and not seen["tables"]:
                    wrong.append(f"{where}: no table of numbers drawn")
        assert not wrong, "\n".join(wrong)
    finally:
        page.context.close()
