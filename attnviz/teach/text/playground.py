"""Words of the Playground (pages/playground.py, keys ``playground_``): edit tokens, embeddings
and weights, pick a variant, see every matrix.

The matrices' titles, formulas and explanations are in :data:`common.MATRICES` (the Masks and
Multi-head pages show some of them too); the editors' words are in :mod:`common`.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "LECTURE_PANEL_TITLE": ("title", "formula"),
    "REPORT_HEAD": ("h",),
    "REPORT_HEAD_POOLED": ("h",),
}

HEADER = "Playground"

# The focus tabs: which stage of the computation fills the screen (the lecture view).
FOCUS = {
    "weights": "Weights",
    "scores": "Scores",
    "projections": "Q K V",
    "heads": "Heads",
    "all": "All",
}
# A tab before the run that fills it (the first switch after an edit; "All" on every switch):
# what the click is waiting for
ALL_ON_OPEN = "Drawing every matrix of the computation…"
TAB_ON_OPEN = "Drawing this focus's matrices…"
HEAD_LABEL = "Head"
# Before the temperature the weights' own slider shows while it is dragged.
TAU_PREFIX = "drag τ = "
# {title}: the matrix's name; {formula}: its one-line LaTeX (a lecture-view panel's heading)
LECTURE_PANEL_TITLE = "**{title}** &nbsp; ${formula}$"
# Short titles where the lecture view's columns are narrow (common.MATRICES has the others).
LECTURE_TITLES = {"weights": "Weights", "multi_head_output": "Output"}
# One-line formulas of the lecture view's matrices (common.MATRICES has the full ones).
LECTURE_FORMULAS = {
    # the heads' outputs side by side (concatenated), then W_O: short enough for a narrow column
    "multi_head_output": r"O = [O_1 \cdots O_h]\, W_O",
    "weights": r"A = \mathrm{softmax}(S'')",
    "masked": r"S'' = \mathrm{mask}_M(S')",  # S' where M, else −∞ (the All view says it)
}
# the weights focus shows no masked scores: its formula names the mask only when one masks
LECTURE_WEIGHTS = {False: r"A = \mathrm{softmax}(S')",
                   True: r"A = \mathrm{softmax}(\mathrm{mask}_M(S'))"}

# the "All" tab's inputs (the tokens, X and the settings are above the tabs)
SIZES_EXPANDER = "Sizes"
SIZES_SOURCE_EXPANDER = "Sizes and the source sequence"
# Presenter mode: the editor of what the focus starts from, folded under the matrices
PRESENTER_EDIT_X = "✏️ Edit X, the embeddings (the matrices above follow)"
PRESENTER_EDIT_W = "✏️ Edit W_Q, W_K, W_V (the matrices above follow)"
# Presenter mode, the row above the charts: a variant with many settings of its own (RoPE)
# keeps those at their defaults that its preset does not set, and those not used, behind this
PRESENTER_MORE_SETTINGS = "⚙️ More"
PRESENTER_MORE_SETTINGS_HELP = (
    "The variant's other settings: at their defaults (its preset does not set them) or not "
    "used by this scenario."
)

DIRECT = (
    "This scenario gives Q, K and V directly (as the seed notebook does); edit them on the Step "
    "by step page or load another preset."
)

WEIGHTS_EXPANDER = "Weight matrices"

SETTINGS_EXPANDER = "Settings"

AXIS_TOKEN = "token"  # the rows of X
AXIS_DIMENSION = "dimension"  # the columns of X

HEADS_TITLE = "**Attention weights per head** (shared 0–1 scale)"

# Follows common.HEADS_POOLED when long sequences are pooled in the heads' thumbnails.
HEADS_EXACT = "The exact weights of a head: Step by step, Trace a cell, or the downloads below."

# {h}: the head; the title of its figure in the HTML report
REPORT_HEAD = "Attention weights, head {h}"
# {h}: the head, when its thumbnail pools blocks of tokens
REPORT_HEAD_POOLED = "Attention weights, head {h} (pooled)"

DOWNLOADS_EXPANDER = "Download these matrices and figures"

REPORT_TITLE = "attnviz — Playground"
SCALE_PREFIX = "drag the scale: "
