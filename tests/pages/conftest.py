"""AppTest page tests: every test here runs app.py as a server does after its first run (see
``apptest_helpers.server_like_pages``, the one place that patches Streamlit for them)."""

import pytest
from apptest_helpers import server_like_pages


@pytest.fixture(autouse=True)
def _server_like_pages():
    with server_like_pages():
        yield
