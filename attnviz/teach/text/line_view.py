"""Line view: BertViz's head view — a line from each query to each key, opacity = weight.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "TOO_MANY": ("limit", "n"),
    "FOCUS_OPTION": ("side", "label"),
    "HEAD_WEIGHTS": ("h",),
}

INTRO = (
    "The head view of BertViz, drawn offline: queries on the left, keys on the right, and a "
    "line from every query to every key whose opacity is the weight (a weight of 1 is a solid "
    "line, 0 is invisible). Each head has its own colour. Choose a token — or click it — to "
    "see only its lines."
)

FOCUS_NONE = "all tokens"

OPACITY = (
    "Opacity = weight, rounded to steps of 1/40; weights below 1/80 are not drawn."
)

NO_HEAD = "Choose at least one head."

# {limit}: the most tokens a side the view draws; {n}: the tokens of the scenario
TOO_MANY = (
    "The line view draws at most {limit} tokens per side; this scenario has {n}. Focus on one "
    "token to see its lines, or use the heatmaps."
)

TITLE = "Line view"
FOCUS_LABEL = "Focus on a token"
# A focus option's label. {side}: AXIS_QUERY or AXIS_KEY of common; {label}: the token's label
FOCUS_OPTION = "{side} {label}"
# {h}: the head shown beside the lines
HEAD_WEIGHTS = "Weights of head {h}"
WEIGHTS = "Weights"
# presenter mode: after the weights' title (the chart is drawn without axis titles)
AXES_PRESENTER = " (rows: queries, columns: keys)"
