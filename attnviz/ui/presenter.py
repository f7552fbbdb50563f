"""Presenter mode: bigger type for a projector, and the lecture view's compact page.

The sidebar toggle (``state.PRESENTER``) switches it on. app.py collapses the sidebar while it
is on (:func:`sidebar_state`) and calls :func:`apply` on every run, which injects one static
CSS block; it contains no user data. Figures grow in the browser (``panels.show_figure`` tells
the chart component that presenter mode is on), which also sizes their cell numbers from the
drawn cells (14-32 px, none where a cell is too small: hover gives it; attnviz/ui/plotly_fit.js
``presented`` and ``PRESENTER_CELL_TEXT``). The Playground's full
view collapses its editors; its lecture view puts the tokens and settings in one short row,
folds the editor into an expander under the charts and lets the browser fit the charts' height
to the screen (``ui/lecture.py``).

The CSS blocks reach Streamlit's elements through their ``data-testid`` attributes: not a
public API, so a Streamlit release may rename one and the rule using it would silently stop
applying. :func:`streamlit_selectors` lists every such selector the blocks use;
tests/browser/test_presenter_selectors.py opens the app in presenter mode and fails when one of
them matches no element.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import streamlit as st

from attnviz.teach.text import common as text
from attnviz.ui import state

PRESENTER_CSS = """
<style>
[data-testid="stMain"] { font-size: 1.3rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stText"],
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.3rem; }
[data-testid="stMain"] h1 { font-size: 3rem; }
[data-testid="stMain"] h2 { font-size: 2.4rem; }
[data-testid="stMain"] h3 { font-size: 2rem; }
[data-testid="stMain"] .katex-display .katex { font-size: 1.25em; }
[data-testid="stMain"] code { font-size: 1.15rem; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.2rem; }
[data-testid="stMain"] input { font-size: 1.2rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 3rem; }
[data-testid="stMainBlockContainer"] { padding-left: 1.5rem; padding-right: 1.5rem; }
/* tables of numbers (Step by step's steps, ui/step_by_step_view.py): as large as the charts' cell
   numbers, at least 14 px at 1024 px wide and 24 px at 1920 */
[data-testid="stMain"] table th, [data-testid="stMain"] table td { font-size: max(14px, 1.3vw); }
/* the links to the previous and next page (ui/page_nav.py): fixed in the top bar, left of its
   menu (Streamlit's header sits at z-index 999990), out of the page's flow with their wrapper
   (an empty wrapper in the column still adds the column's gap); the wrapper, fixed, is the
   links' stacking context: it carries the z-index that puts them above the header */
[data-testid="stLayoutWrapper"]:has(> .st-key-page_nav) { position: fixed; z-index: 999991; }
.st-key-page_nav { position: fixed; top: 0.4rem; right: 4.5rem; z-index: 999991;
  width: auto !important; max-width: 60vw; }
.st-key-page_nav [data-testid="stPageLink"] p { font-size: 0.95rem; white-space: nowrap; }
</style>
"""

# A page that must fit one screen (the Playground's lecture view): less empty space above.
# In presenter mode 2rem stay: the sidebar's reopen arrow sits there.
COMPACT_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 1rem; padding-bottom: 0.25rem; }
[data-testid="stMain"] h1 { padding-top: 0; }
[data-testid="stMain"] .katex-display > .katex { white-space: normal; }
</style>
"""
COMPACT_PRESENTER_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 2rem; padding-bottom: 0.25rem; }
[data-testid="stMain"] h1 { padding-top: 0; }
[data-testid="stMain"] .katex-display > .katex { white-space: normal; }
.st-key-playground_focus [role="tablist"], .st-key-playground_focus [role="tab"] {
  height: 1.6rem; }
.st-key-playground_focus [role="tablist"] { position: relative; z-index: 1; }
.st-key-playground_focus [role="tab"] p { font-size: 1.1rem; }
.st-key-playground_focus [role="tabpanel"] { padding-top: 0; }
.st-key-playground_presenter_controls [data-testid="stWidgetLabel"] {
  min-width: 0; max-width: 100%; overflow: hidden; }
.st-key-playground_presenter_controls [data-testid="stWidgetLabel"] p {
  font-size: 1rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.st-key-playground_presenter_controls [data-testid="stCaptionContainer"] { font-size: 1rem; }
</style>
"""
# (the lecture view's row of controls in presenter mode, ui/lecture.py: one line per label, the
# whole label in its help; a label wrapping to four lines in a narrow column pushes the charts
# below the screen; the focus tabs' bar 30 px shorter than Streamlit's, so ten rows still
# fit at 1024×768 under it, and above its panel: a tall title's formula reaching into it
# takes the tabs' clicks)
# A display formula may wrap where it allows a break (a formula wider than the page, e.g. a
# YaRN head's: ui/controls.py breakable), instead of scrolling out of sight (KaTeX keeps it on
# one line by default).


# A page with a title and an introduction in presenter mode (:func:`page_intro`): compact, but
# the title's text starts below Streamlit's header (60 px, white, drawn over the page): at 2rem
# the top of the title's line is under it (measured at 1024×768).
INTRO_PRESENTER_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 3rem; padding-bottom: 0.25rem; }
[data-testid="stMain"] h1 { padding-top: 0; }
[data-testid="stMain"] .katex-display > .katex { white-space: normal; }
</style>
"""


_STREAMLIT_SELECTOR = re.compile(r'\[data-(?:testid|baseweb)="[^"]+"\]')


def streamlit_selectors() -> tuple[str, ...]:
    """Every selector of Streamlit's page structure that presenter mode's CSS relies on, as
    written in :data:`PRESENTER_CSS`, :data:`COMPACT_CSS` and :data:`COMPACT_PRESENTER_CSS`
    (read from them, so the list cannot miss one), in order of first use:

    - ``stMain``: the page's main area (every rule is scoped to it, never the sidebar);
    - ``stMarkdownContainer``, ``stText``, ``stCaptionContainer``: markdown, ``st.text`` and
      ``st.caption``;
    - ``stWidgetLabel``: a widget's label (a number or select box's text is its ``input``);
    - ``stMetricValue``: the number of an ``st.metric`` (the Quiz's score);
    - ``stMainBlockContainer``: the main area's padded column (less padding in presenter mode
      and on the lecture view);
    - ``stLayoutWrapper``, ``stPageLink``: the wrapper of a container (the page links' one is
      taken out of the column, or the column's gap would push the page down) and a page link.

    None of them is a public API of Streamlit (1.67 here): tests/browser/test_presenter_selectors.py
    fails when one stops matching an element of the app.
    """
    found = _STREAMLIT_SELECTOR.findall(PRESENTER_CSS + COMPACT_CSS + COMPACT_PRESENTER_CSS)
    return tuple(dict.fromkeys(found))


def sidebar_state() -> str:
    """The sidebar's state for ``st.set_page_config``: collapsed in presenter mode (its toggle
    stays one click away, behind the sidebar's arrow)."""
    return "collapsed" if state.presenter() else "auto"


# A page entered from the sidebar starts at its top: the main area is one scrolled element and
# the new page sometimes keeps the scroll position of the page before (at random: its title
# out of sight). Installed once per browser page (the component's function
# is not called again on a page change): for 2 s after the address changes, the main area is
# held at its top unless the user scrolls or types first. Static code, no data.
_PAGE_TOP_JS = (Path(__file__).parent / "page_top.js").read_text(encoding="utf-8")


@functools.cache
def _page_top():
    """The component that scrolls a newly entered page to its top (once per process)."""
    return st.components.v2.component("attnviz_page_top", js=_PAGE_TOP_JS)


def page_top() -> None:
    """Mount :data:`_PAGE_TOP_JS` (in the sidebar: no room taken on the page)."""
    with st.sidebar:
        _page_top()(key="attnviz_page_top")


def apply() -> None:
    """Scroll a newly entered page to its top (:func:`page_top`); inject the presenter CSS
    when presenter mode is on (static CSS only)."""
    page_top()
    if state.presenter():
        st.html(PRESENTER_CSS)


def compact_page(*, titled: bool = False) -> None:
    """Less empty space above the page's first element (static CSS only). ``titled``: the page
    starts with its title, whose text must start below Streamlit's header in presenter mode
    (:data:`INTRO_PRESENTER_CSS`; the Playground's lecture view starts with its controls)."""
    if state.presenter():
        st.html(INTRO_PRESENTER_CSS if titled else COMPACT_PRESENTER_CSS)
    else:
        st.html(COMPACT_CSS)


def page_intro(body: str) -> None:
    """A page's introduction under its title: written out; in presenter mode folded into an
    expander, with less space above the title, so the lesson (the page's first chart) starts
    on the projected screen (at 1024×768 the title and introduction written out fill it)."""
    if state.presenter():
        st.html(INTRO_PRESENTER_CSS)
        with st.expander(text.PRESENTER_INTRO, expanded=False):
            st.write(body)
    else:
        st.write(body)


def lesson_box():
    """In presenter mode a container at this place, for the page's lesson (its charts) that is
    computed after the controls below it, so the lesson is on the first projected screen (at
    1024×768 a page's controls in large type fill it); None outside presenter mode (the
    lesson follows its controls)."""
    return st.container() if state.presenter() else None
