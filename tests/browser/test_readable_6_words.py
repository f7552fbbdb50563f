"""Real browser: every page readable in presenter mode at 1024×768 and 1920×1080 after a
6-word sentence was typed (one walk by the "next page" link; readable_walk.py says what
is measured and lists the cases still failing)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser
from readable_walk import Walks, check_page, page_cases

WORDS = 6


@pytest.fixture(scope="module")
def walks(browser: Browser, app_server: str) -> Walks:
    return Walks(browser, app_server)


@pytest.mark.parametrize(("name", "size"), page_cases(WORDS))
def test_page_readable_with_a_typed_sentence(walks: Walks, name: str, size: str) -> None:
    check_page(walks, WORDS, name, size)
