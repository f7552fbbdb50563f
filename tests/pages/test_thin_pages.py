"""Pages are thin (STYLE.md "The shape of the house"): every page is a short
script of layout that calls attnviz.ui, attnviz.scenarios and attnviz.teach — at most
MAX_PAGE_LINES lines, no import of attnviz.core (the maths reaches a page through a scenario, a
teaching function or a view), and no layout number of its own (column ratios and pixel heights
are named in attnviz/ui/layout.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py"))
MAX_PAGE_LINES = 120  # STYLE.md: one flat script per page, ~40-120 lines
# Pages not thinned yet, each with why. Strict: a page that becomes thin fails here until its
# entry is removed, so the list can only shrink.
NOT_YET_THIN: dict[str, str] = {}


def pages_to_check() -> list:
    """Every page, those in NOT_YET_THIN marked as a strict expected failure (of the length
    and layout checks; the core-import check holds for every page)."""
    return [pytest.param(p, id=p.name, marks=pytest.mark.xfail(
        strict=True, reason=NOT_YET_THIN[p.name])) if p.name in NOT_YET_THIN
        else pytest.param(p, id=p.name) for p in PAGES]


def core_imports(source: str) -> list[str]:
    """Every import of attnviz.core (or one of its modules) in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names
                      if a.name == "attnviz.core" or a.name.startswith("attnviz.core.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "attnviz.core" or node.module.startswith("attnviz.core."):
                found.append(node.module)
            elif node.module == "attnviz":
                found += [f"attnviz.{a.name}" for a in node.names if a.name == "core"]
    return found


def literal_layout(source: str) -> list[tuple[int, str]]:
    """(line, code) of every layout number written in ``source``: a ``columns`` call given a
    list or tuple of numbers, and a ``height=`` that is a number."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        spec = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "spec"), None)
        if name == "columns" and isinstance(spec, (ast.List, ast.Tuple)) and any(
                isinstance(e, ast.Constant) for e in spec.elts):
            found.append((node.lineno, ast.unparse(node)))
        for k in node.keywords:
            if k.arg == "height" and isinstance(k.value, ast.Constant) \
                    and isinstance(k.value.value, (int, float)):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_every_page_is_checked():
    assert len(PAGES) >= 19 and (ROOT / "pages" / "playground.py") in PAGES


@pytest.mark.parametrize("page", pages_to_check())
def test_the_page_is_at_most_120_lines(page):
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_PAGE_LINES, (
        f"pages/{page.name} has {lines} lines (at most {MAX_PAGE_LINES}): move its views to "
        "attnviz/ui and what it computes to attnviz/scenarios or attnviz/teach")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_page_imports_no_core_module(page):
    assert core_imports(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", pages_to_check())
def test_the_page_writes_no_layout_number(page):
    assert literal_layout(page.read_text(encoding="utf-8")) == [], \
        "name the ratio or height in attnviz/ui/layout.py"


def test_the_checks_find_what_they_look_for():
    source = ("import attnviz.core.attention\n"
              "from attnviz.core.alibi import alibi_bias\n"
              "from attnviz import core\n"
              "from attnviz import scenarios\n"
              "from attnviz.ui import layout\n"
              "a, b = st.columns([3, 2])\n"
              "a, b = st.columns(layout.WIDE_LEFT)\n"
              "a, b, c = st.columns(3)\n"
              "fig = heatmap(z, height=420)\n"
              "fig = heatmap(z, height=layout.SQUARE_CHART_PX)\n")
    assert core_imports(source) == ["attnviz.core.attention", "attnviz.core.alibi",
                                    "attnviz.core"]
    assert [line for line, _ in literal_layout(source)] == [6, 9]


def test_the_layout_module_names_the_numbers_the_pages_use():
    """Every ``layout.NAME`` a page or an attnviz.ui module reads exists in attnviz/ui/layout.py
    (a typo fails here, not on one page in a browser)."""
    from attnviz.ui import layout

    used = set()
    for path in [*PAGES, *sorted((ROOT / "attnviz" / "ui").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "layout":
                used.add(node.attr)
    assert used, "no page reads attnviz.ui.layout"
    assert sorted(n for n in used if not hasattr(layout, n)) == []


# --- What the pages computed, where it lives now -------------------------------------------------

def test_alibi_causal_bias_is_minus_slope_times_distance_below_the_diagonal():
    from attnviz.teach.modern import causal_bias, slopes

    n_heads, length = 4, 5
    for h in range(n_heads):
        m = 2.0 ** (-8.0 * (h + 1) / n_heads)  # the paper's slopes for a power of two
        assert slopes(n_heads)[h] == pytest.approx(m, rel=1e-15)
        bias = causal_bias(n_heads, h, length)
        for i in range(length):
            for j in range(length):
                expected = -m * (i - j) if j <= i else -np.inf
                assert bias[i, j] == pytest.approx(expected, rel=1e-15, abs=0.0)
        assert not np.signbit(np.diag(bias)).any()  # 0, not −0, on the diagonal


def test_alibi_lengths_shown_heads_and_gqa_choices():
    from attnviz.teach.modern import (
        ALIBI_LENGTHS,
        alibi_length,
        alibi_lengths,
        cache_rows,
        kv_choices,
        kv_for,
        shown_heads,
    )

    assert alibi_length(1) == 2 and alibi_length(9) == 9 and alibi_length(300) == 64
    assert alibi_lengths(9) == sorted({*ALIBI_LENGTHS, 9}) and 9 not in ALIBI_LENGTHS
    assert shown_heads(3) == [0, 1, 2] and shown_heads(16) == [0, 5, 10, 15]
    assert kv_choices(12) == [1, 2, 3, 4, 6, 12]
    assert kv_for(12, 4) == 4 and kv_for(12, 5) == 4 and kv_for(8, 3) == 4  # the middle one
    rows = cache_rows(8, 2, 64)
    assert [r[0] for r in rows] == ["mha", "gqa", "mqa"]
    assert [r[2] for r in rows] == [2 * 8 * 64, 2 * 2 * 64, 2 * 1 * 64]
    assert [r[3] for r in rows] == [1.0, 0.25, 0.125]


def test_gradients_head_arithmetic_and_sweep():
    from types import SimpleNamespace

    from attnviz.scenarios.gradients import (
        SCALE_MULTIPLES,
        SWEEP_TEMPERATURES,
        kv_head,
        saturation_sweep,
    )
    from attnviz.scenarios.presets import PRESETS

    projected = SimpleNamespace(spec=SimpleNamespace(projections=True))
    grads = SimpleNamespace(attention=SimpleNamespace(n_heads=8, d_v=np.zeros((2, 4, 3))))
    for head in range(8):  # 8 query heads share 2 key/value heads: 0-3 read 0, 4-7 read 1
        kv = kv_head(projected, grads, head)
        assert (kv.n_kv, kv.group, kv.kv) == (2, 4, head // 4)
        assert head in kv.query_heads and len(kv.query_heads) == 4
    additive = SimpleNamespace(spec=SimpleNamespace(projections=False))
    one = SimpleNamespace(attention=SimpleNamespace(n_heads=1, d_v=np.zeros((5, 3))))
    assert (kv_head(additive, one, 0).n_kv, kv_head(additive, one, 0).kv) == (1, 0)

    from attnviz.scenarios.registry import VARIANTS
    from attnviz.scenarios.scenario import with_variant

    scenario = PRESETS["seed_000"].build()  # scaled dot-product: the custom scale is swept
    sweep = saturation_sweep(scenario, 4)
    assert sweep.setting == "scale" and sweep.picks == SCALE_MULTIPLES
    assert sweep.values == [m / 2.0 for m in SCALE_MULTIPLES]  # × 1/√4
    swept = sweep.swept(scenario, 2.0)
    assert swept.scale_mode == "custom" and swept.custom_scale == 1.0
    fixed = next(v.key for v in VARIANTS.values() if v.scale_fixed is not None)
    sweep = saturation_sweep(with_variant(scenario, fixed), 4)  # τ instead
    assert sweep.setting == "temperature" and sweep.values == list(SWEEP_TEMPERATURES)
    assert sweep.swept(scenario, 0.5).temperature == 0.5
