"""Real browser: every page readable in presenter mode at 1024×768 and 1920×1080 after a 6-word
and after a 10-word sentence was typed (one walk by the "next page" link per sentence, each
in a browser session of its own; readable_walk.py says what is measured and lists the cases
still failing). The 8-word walk, which also checks the first screens, is
test_readable_8_words.py: a file of its own so that the suite's two processes share the walks.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser
from readable_walk import Walks, check_page, page_cases

WORDS = (6, 10)


@pytest.fixture(scope="module")
def walks(browser: Browser, app_server: str) -> Walks:
    return Walks(browser, app_server)


@pytest.mark.parametrize(("words", "name", "size"), page_cases(*WORDS))
def test_page_readable_with_a_typed_sentence(walks: Walks, words: int, name: str,
                                            size: str) -> None:
    check_page(walks, words, name, size)
