"""The Playground's variant formula may wrap between its parts: a YaRN
head's formula ran past the page's right edge at 1366×768 outside presenter mode (its end out
of sight). :func:`attnviz.ui.controls.breakable` allows a line break after each top-level
``,\\quad`` / ``,\\ `` and groups each part so it never breaks inside; the Playground's CSS lets
the display formula wrap there. The browser side (the whole formula inside the page at 1024 and
1366, presenter mode or not): tests/browser/test_presenter_row_browser.py.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from apptest_helpers import open_page, switch_to

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import written
from attnviz.ui import presenter, state
from attnviz.ui.controls import breakable

WRAP = '.katex-display > .katex { white-space: normal; }'


def _unbroken(latex: str) -> str:
    """What ``breakable`` added taken away again: the break points and each part's braces."""
    parts = re.split(r"(,\\quad|,\\ )\\allowbreak ", latex)
    return "".join(p[1:-1] if i % 2 == 0 else p for i, p in enumerate(parts))


def test_a_formula_breaks_after_its_parts_and_never_inside_one():
    plain = r"\mathrm{softmax}(S)V,\quad Q = XW_Q,\ K = XW_K"
    assert breakable(plain) == (r"{\mathrm{softmax}(S)V},\quad\allowbreak { Q = XW_Q},"
                                r"\ \allowbreak {K = XW_K}")


def test_separators_inside_braces_delimiters_or_environments_are_not_break_points():
    inside = r"\left(a,\quad b\right),\quad \text{x,\ y},\quad \begin{cases}1,\ 2\end{cases}"
    assert breakable(inside) == (r"{\left(a,\quad b\right)},\quad\allowbreak "
                                 r"{ \text{x,\ y}},\quad\allowbreak "
                                 r"{ \begin{cases}1,\ 2\end{cases}}")
    # an escaped brace is not a group: W = \{ ... \} still breaks after it
    assert breakable(r"W = \{j\},\quad c") == r"{W = \{j\}},\quad\allowbreak { c}"
    # \quadrant would not be a separator (a longer command's prefix)
    assert breakable(r"a,\quadrant b") == r"a,\quadrant b"


def test_a_formula_of_one_part_is_unchanged():
    assert breakable(r"\mathrm{softmax}(QK^\top)V") == r"\mathrm{softmax}(QK^\top)V"


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_every_presets_formula_is_kept_whole(key):
    sc = PRESETS[key].build()
    latex = sc.spec.written(written(sc, None))
    assert _unbroken(breakable(latex)) == latex
    assert breakable(latex).count("{") == breakable(latex).count("}")


def test_the_playground_writes_a_real_heads_formula_breakable_and_lets_it_wrap():
    sc = PRESETS["rope_shift"].build()
    sc = replace(sc, params={**sc.params, "rope_inv_freq": (1.0, 0.0025),
                             "rope_attention_scaling": 1.138629436111989})
    at = open_page(None)
    at.session_state[state.SCENARIO] = sc
    switch_to(at, "playground", focus="weights")
    assert not at.exception
    top = at.latex[0].value
    assert r"\theta_i\ \text{from the model (not from the base } b\text{)}}" in top
    assert top.count(r"\allowbreak") == 5  # softmax | θ_i | a | Q | K | V
    assert WRAP in presenter.COMPACT_CSS and WRAP in presenter.COMPACT_PRESENTER_CSS
