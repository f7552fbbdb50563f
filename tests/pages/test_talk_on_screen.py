"""AppTest: every number a guided lecture's talking point names is on that step's screen.

A lecturer reads the talking point aloud and points at the number: it must be drawn — in a
chart's cells, titles or labels, or in the page's text, metrics or tables — as the step's
link (``?lecture=<key>&step=<n>``) opens it. A number of the talk matches a drawn number
that reads the same at the talk's decimals (the cells may carry one digit more: "0.455"
beside the talk's "0.45"). Whole numbers in the words (counts such as "8 query heads",
settings such as "τ = 3") are not checked here; tests/teach/test_lectures.py checks that
every stated fact holds for the step's numbers. Whether a drawn number is large enough to read
at a projector's size is the browser's part (tests/browser/test_presenter_sizes.py).
"""

from __future__ import annotations

import json

import pytest
from apptest_helpers import APP, chart_specs
from streamlit.testing.v1 import AppTest
from talk_numbers import drawn_numbers, missing_numbers, on_screen

from attnviz.teach.lectures import LECTURES
from attnviz.teach.text import lectures as text
from attnviz.ui import lecture_bar

STEPS = [(key, n) for key, lec in LECTURES.items() for n in range(1, len(lec.steps) + 1)]


def screen_text(at: AppTest) -> str:
    """Everything the run drew that a person can read: charts' cells, titles, labels and
    annotations, and the page's markdown, captions, text, metrics, formulas and tables."""
    parts = []
    for spec in chart_specs(at):
        for trace in spec.get("data", []):
            for field in ("text", "x", "y", "name"):
                if trace.get(field) is not None:
                    parts.append(json.dumps(trace[field], ensure_ascii=False))
        parts.append(json.dumps(spec.get("layout", {}), ensure_ascii=False))
    for kind in ("markdown", "caption", "text", "latex", "metric", "info", "success"):
        parts.extend(str(getattr(el, "value", "")) for el in getattr(at, kind))
    parts.extend(df.value.to_string() for df in at.dataframe)
    parts.extend(t.value.to_string() for t in at.table)
    return "\n".join(parts)


def test_on_screen_matches_a_rounding_not_a_neighbour():
    assert on_screen("0.45", {0.455}) and on_screen("0.87", {0.865})
    assert on_screen("1.98", {1.98}) and not on_screen("0.64", {0.865, 0.135})
    assert not on_screen("10.39", {1.98, 2.0, 18.0})


@pytest.mark.parametrize(("key", "n"), STEPS)
def test_every_number_of_the_talking_point_is_drawn(key, n):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params[lecture_bar.PARAM_LECTURE] = key
    at.query_params[lecture_bar.PARAM_STEP] = str(n)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    talk = text.TALK[LECTURES[key].steps[n - 1].talk]
    drawn = drawn_numbers(screen_text(at))
    missing = missing_numbers(talk, drawn)
    assert not missing, f"{key} step {n} names {missing}, which its screen does not show"


@pytest.mark.parametrize(("key", "n", "title"), [
    ("modern", 10, r"S' = s\,\log n_i \cdot \frac{S}{\sqrt{d_k}}"),  # SSMax scales once more
    ("modern", 9, r"S' = c\,\tanh\!\left(\frac{S}{\sqrt{d_k}\,c}\right)"),  # the cap
    ("scratch", 2, r"S' = \frac{S}{\sqrt{d_k}}"),
])
def test_the_scaled_scores_title_writes_every_change_the_numbers_went_through(key, n, title):
    """The chart titled S' holds the scores after every change the result recorded: SSMax's
    title said S' = S/√d_k above s·log n·S/√d_k (a cell read 3.2655 where S/√d_k is 1.8225)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params[lecture_bar.PARAM_LECTURE] = key
    at.query_params[lecture_bar.PARAM_STEP] = str(n)
    at.run()
    titles = [m.value for m in at.markdown if m.value.startswith("**Scaled scores**")]
    assert titles and all(title in t for t in titles), titles
