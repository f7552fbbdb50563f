"""Test modules have unique file names: pytest imports them by base name (rootdir import mode,
no __init__.py), so two ``test_x.py`` in different folders stop the collection of ``tests/``
with "import file mismatch" — and with it every test."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name():
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
