"""Words of the Compare page (pages/compare.py, keys ``compare_``): the same inputs under two
settings, side by side, and their difference A − B.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "NOT_APPLICABLE": ("reason",),
    "SIDE_TITLE": ("side", "label"),
    "SIDE_NAME": ("side", "label"),
    "CANNOT_COMPUTE": ("side", "reason"),
}

HEADER = "Compare"

INTRO = (
    "The same tokens, embeddings and weights under two settings, side by side, and their "
    "difference A − B (red: A gives more, blue: B gives more, white: no change). Only the one "
    "thing named in the choice differs; the scenario itself is not changed."
)

KIND_LABEL = "What to compare"

KINDS = {
    "scale": "Scaled (1/√d_k) vs unscaled",
    "causal": "Causal vs bidirectional",
    "heads": "1 head vs several heads",
    "pe": "With vs without positional encoding",
    "temperature": "Temperature τ vs another τ",
    "variants": "Any two variants",
}

HEADS_B = "Heads in B"
TEMPERATURE_B = "τ in B"
VARIANT_A = "Variant A"
VARIANT_B = "Variant B"

SIDES = ("A", "B")  # the names of the two sides

# {reason}: why the comparison does not apply (a sentence without its full stop)
NOT_APPLICABLE = "This comparison does not apply to the current scenario: {reason}."

# {side}: A or B; {label}: what that side computes (its setting)
SIDE_TITLE = "**{side}: {label}**"
# {side}: A or B; {label}: what that side computes (above its diagnostics, as plain text)
SIDE_NAME = "{side}: {label}"
# {side}: A or B; {reason}: why the core refused it (a sentence without its full stop)
CANNOT_COMPUTE = "{side} cannot be computed: {reason}. Pick another comparison or setting."

DIFF_TITLE = "**A − B**"
# presenter mode: the button of the difference beside the sides' (SIDE_NAME) picking the one
# shown large
DIFF_BUTTON = "A − B"

WEIGHTS_HEADER = "Attention weights"

WEIGHTS = "Attention weights (rows are queries, columns keys)."

HEADS_MEAN = (
    "With several heads each head has its own weights; shown here is their mean over the "
    "heads (its rows still sum to 1). The outputs compare directly: both are Concat(heads)·W_O."
)

DIFF = "A − B, on a colour scale centred at 0."

SHAPES = (
    "A and B have different shapes (for example another number of keys), so there is no "
    "element-wise difference to show."
)

OUTPUTS_HEADER = "Outputs"

OUTPUT = "Outputs (rows are queries)."
