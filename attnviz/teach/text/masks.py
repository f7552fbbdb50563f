"""Masks: causal, padding, sliding-window and custom masks, and what −∞ does to the softmax.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "FILL_BUTTON": ("fill",),
    "BLOCKED_ROWS": ("rows",),
    "COLUMN_WEIGHT": ("j",),
    "COLUMN_OUTPUT": ("m",),
}

KINDS = {"none": "no mask", "causal": "causal", "padding": "padding (valid length)",
              "window": "sliding window", "custom": "custom grid"}

INTRO = (
    "A mask says which keys each query may look at (✓ = may attend). Forbidden scores are set "
    "to −∞ before the softmax; exp(−∞) = 0, so those keys get weight 0 and the remaining "
    "weights of the row are renormalised to sum to 1."
)

KIND_HELP = {
    "none": "Every query may attend to every key.",
    "causal": "Query i may attend to keys 0..i only: no looking at the future (decoders, GPT).",
    "padding": "Only the first keys are real tokens; the rest are padding that nobody may "
               "attend to (every row has the same columns blocked).",
    "window": "Query i may attend to key j when |i − j| <= width (local attention, Longformer).",
    "custom": "Tick or untick any cell of the grid: row = query, column = key.",
}

CAUSAL_VARIANT = (
    "The variant 'Causal self-attention' adds its own causal mask on top of the mask chosen "
    "here: the mask used is your mask AND the causal mask, so a cell is allowed only when both "
    "allow it. Pick 'Scaled dot-product' in the Playground to use your mask alone."
)

NO_MASK = (
    "For comparison: the softmax of the same scaled scores with no mask at all (not even the "
    "variant's own)."
)

CUSTOM_RESET = (
    "The custom grid did not match the current number of queries and keys; it was reset to "
    "'all may attend'."
)

TITLE = "Masks"
KIND_LABEL = "Mask"
VALID_LEN_LABEL = "Valid length (real keys; the rest is padding)"
WINDOW_LABEL = ("Window width (visible neighbours on each side: a query sees up to 2·width + 1 "
                "keys, itself included)")
# The buttons that fill the custom grid: name (the end of the button's key) -> what it fills
FILLS = {"attend": "All may attend", "causal": "Causal", "blocked": "All blocked"}
# {fill}: one of FILLS' values
FILL_BUTTON = "Fill: {fill}"
CUSTOM_HELP = "Ticked = may attend. Rows are queries, columns are keys."
# {rows}: the fully masked query rows, e.g. "0, 3"
BLOCKED_ROWS = (
    "Query row(s) {rows} (counting from 0) may attend to no key: their weights and outputs are "
    "all 0 (see below)."
)
MASK_USED = "Mask used"
MASK_USED_CAUSAL = "Mask used (yours AND causal)"
WEIGHTS_MASKED = "Weights with the mask (renormalised)"
WEIGHTS_NO_MASK = "Weights without any mask"
NO_MASK_FORMULA = r"A^{\text{no mask}} = \mathrm{softmax}(S')"
FULLY_MASKED_TITLE = "A fully masked row"
# Columns of the fully-masked-rows table. {j}: a key's index
COLUMN_WEIGHT = "α[{j}]"
COLUMN_OUTPUT = "o[{m}]"  # {m}: a column of the output
NONE_FULLY_MASKED = (
    "No query is fully masked with the current mask; try padding with valid length 0, or untick "
    "a whole row of the custom grid."
)
WINDOW_PREFIX = "drag the window width: "
WINDOW_ON_CHART = "Set the window width with the slider under the weights below."
WINDOW_DRAG = ("Drag the slider under the weights: they follow the window width while you drag "
               "(computed in advance for every width); releasing it sets the width above.")
