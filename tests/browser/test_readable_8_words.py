"""Real browser: every page readable in presenter mode at 1024×768 and 1920×1080 after a
8-word sentence was typed (one walk by the "next page" link; readable_walk.py says what
is measured and lists the cases still failing). With eight words, also what a class sees on
the first screens of the Playground, Learn, Your own attention, Pitfalls, Induction heads,
Step by step and Multi-head (readable_walk.FIRST_SCREEN)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser
from readable_walk import FIRST_SCREEN_CASES, Walks, check_page, page_cases

WORDS = 8


@pytest.fixture(scope="module")
def walks(browser: Browser, app_server: str) -> Walks:
    return Walks(browser, app_server)


@pytest.mark.parametrize(("name", "size"), page_cases(WORDS))
def test_page_readable_with_a_typed_sentence(walks: Walks, name: str, size: str) -> None:
    check_page(walks, WORDS, name, size)


@pytest.mark.parametrize(("name", "size"), FIRST_SCREEN_CASES)
def test_first_screen_shows_the_title_and_the_lesson(walks: Walks, name: str, size: str) -> None:
    found = walks.first_screen(name, size)
    assert not found, f"{name} at {size}: " + "; ".join(found)
