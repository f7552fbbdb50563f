"""The Induction page's settings refused with what was sent, not with a stand-in: Streamlit's
number box replaces a number it does not keep (NaN, ±inf; an integer box also anything beyond
±2⁵³) by the box's default before the page runs, so a learning rate of NaN read "got 0.0" and
steps of 1e18 "got 0". The boxes now come back empty for such a number and say so, and steps
of 1e18 reach the settings' own check as 1e18."""

from __future__ import annotations

import math

import pytest
from apptest_helpers import open_page

from attnviz.scenarios.induction import InductionSettings
from attnviz.teach.text import induction as text


def ok(at):
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.fixture(scope="module")
def page():
    return ok(open_page("induction"))


def sent(at, key: str, value):
    """``value`` sent by the browser (or a client speaking Streamlit's protocol) for box
    ``key``; the page's error messages after the rerun, and whether Train is disabled."""
    at.number_input(key=key).set_value(value)
    at = ok(at.run())
    found = [e.value for e in at.error if text.CANNOT in e.value]
    disabled = at.button(key="induction_train").disabled
    at.number_input(key=key).set_value({"induction_lr": 0.01, "induction_steps": 300}[key])
    ok(at.run())
    return found, disabled


@pytest.mark.parametrize("key, value, expected", [
    ("induction_lr", math.nan, text.LR_MISSING.format(limit="1")),
    ("induction_lr", math.inf, text.LR_MISSING.format(limit="1")),
    ("induction_lr", 1e18, "the learning rate must be a number above 0 and at most 1, got 1e+18"),
    ("induction_steps", 1e18, "steps must be between 1 and 3,000, got 1e+18"),
    ("induction_steps", math.nan, text.STEPS_MISSING.format(limit="3,000")),
    ("induction_steps", 2.5, "steps must be a whole number, got 2.5"),
])
def test_a_setting_is_refused_with_what_was_sent(page, key, value, expected):
    found, disabled = sent(page, key, value)
    assert len(found) == 1 and expected in found[0], found
    assert "got 0" not in found[0] and disabled


def test_an_accepted_number_of_steps_trains_as_a_whole_number(page):
    found, disabled = sent(page, "induction_steps", 40)
    assert not found and not disabled


@pytest.mark.parametrize("changes, expected", [
    (dict(steps=10**18), "steps must be between 1 and 3,000, got 1e+18"),
    (dict(steps=5000), "steps must be between 1 and 3,000, got 5,000"),
    (dict(steps=10**400), "got a whole number of about 401 digits"),
    (dict(lr=math.nan), "at most 1, got nan"),
    (dict(steps=1e18), "steps must be a whole number, got 1e+18"),
])
def test_settings_from_a_file_show_the_value_as_given(changes, expected):
    with pytest.raises(ValueError) as err:
        InductionSettings(**changes)
    assert str(err.value).endswith(expected), str(err.value)
