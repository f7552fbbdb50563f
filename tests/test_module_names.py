"""Module names follow two rules.

Test modules have unique file names: pytest imports them by base name (rootdir import mode, no
__init__.py), so two ``test_x.py`` in different folders stop the collection of ``tests/`` with
"import file mismatch" — and with it every test.

A page's view module is named after the page: ``pages/<page>.py`` draws with
``attnviz/ui/<page>_view.py`` and takes its words from ``attnviz/teach/text/<page>.py``."""

import ast
import re
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []


ROOT = TESTS.parent
PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py"))
UI = sorted(p.stem for p in (ROOT / "attnviz" / "ui").glob("*.py"))
# ``*_view`` modules that are not a page's whole view: a part of one page's view, or the chart
# component every page draws through.
VIEW_PARTS = {"circuits_view": "model_view", "full_view": "playground", "plotly_view": None}


def view_module(page: str) -> str:
    """The name of a page's view module: ``<page>_view``, or the page's own name when that
    already ends in ``_view`` (Line view, Model view)."""
    return page if page.endswith("_view") else f"{page}_view"


def test_a_view_module_is_named_after_its_page():
    views = {view_module(p) for p in PAGES}
    assert [m for m in UI if m.endswith("_view") and m not in views | VIEW_PARTS.keys()] == []
    assert [m for m, page in VIEW_PARTS.items() if page is not None and page not in PAGES] == []


def test_a_page_imports_its_own_view_module():
    import_of = re.compile(r"from attnviz\.ui(?: import [^\n]*\b(\w+_view)\b|\.(\w+) import)")
    missing = []
    for page in PAGES:
        view = view_module(page)
        if view not in UI:
            continue
        source = (ROOT / "pages" / f"{page}.py").read_text(encoding="utf-8")
        imported = {a or b for a, b in import_of.findall(source)}
        if view not in imported and f"import {view} as" not in source:
            missing.append(page)
    assert missing == []


def test_a_page_docstring_names_its_own_view_module():
    """A page's docstring that names the module of its views (``The views: :mod:`...```) names
    ``<page>_view``, the module beside the page's text ``teach/text/<page>.py``."""
    named = re.compile(r"^The [\w ]+: :mod:`attnviz\.ui\.(\w+)`", re.MULTILINE)
    wrong = {}
    for page in PAGES:
        doc = ast.get_docstring(ast.parse((ROOT / "pages" / f"{page}.py").read_text(
            encoding="utf-8"))) or ""
        found = named.findall(doc)
        if found and found != [view_module(page)]:
            wrong[page] = found
    assert wrong == {}
