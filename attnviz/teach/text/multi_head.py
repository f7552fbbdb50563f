"""Words of the Multi-head page (pages/multi_head.py, keys ``multi_head_``, and the head-count
control and head-mix editor of attnviz/ui/multi_head_view.py): split W_Q, W_K, W_V into heads, one
weights map per head, concatenate, project by W_O, or mix the heads with one weight each.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "BAD_HEADS": ("n", "dk", "dv", "choices", "nearest", "shown"),
    "ZERO_HEADS": ("dk", "dv", "choices", "nearest", "shown"),
    "WIDTHS": ("dk", "heads", "d_k", "dv", "d_v", "choices"),
    "SETTINGS_LINE": ("scale", "scale_mode", "tau"),
    "HEAD_TITLE": ("h",),
    "HEAD_OUTPUT_TITLE": ("h",),
    "OUTPUTS_SCALE": ("bound",),
    "CANNOT_MIX": ("reason",),
    "OPENING_HEADS": ("heads", "stored"),
}

HEADER = "Multi-head attention"

INTRO = (
    "Multi-head attention cuts the columns of W_Q, W_K and W_V into h equal blocks. Each block "
    "is one head: it computes its own weights and its own output with the same steps as "
    "single-head attention. The heads' outputs are put side by side (concatenated) and "
    "multiplied by W_O. This page always computes multi-head self-attention on the current "
    "tokens, with the scenario's mask, scale and temperature, whatever variant is picked."
)

DIRECT = (
    "This scenario gives Q, K and V directly, as its seed notebook does. Multi-head attention "
    "needs token embeddings and the weight matrices W_Q, W_K, W_V (their columns are split into "
    "heads), so there is nothing to split here. Load a scenario with embeddings and weights:"
)

# --- The head count (attnviz.ui.multi_head_view.head_count_control) ------------------------------

HEADS_LABEL = "Number of heads h"

HEADS_HELP = (
    "The number of heads h must divide the Q/K width and the V width: each head gets "
    "width / h columns."
)

# {n}: the count typed; {dk}, {dv}: the Q/K and V widths; {choices}: the valid counts;
# {nearest}: the valid counts nearest to n (joined by NEAREST_OR); {shown}: the heads drawn
# ("1 head", "2 heads")
BAD_HEADS = (
    "{n} heads cannot split the Q/K width ({dk}) and the V width ({dv}) into equal blocks. "
    "Valid choices: {choices}; nearest: {nearest}. Still showing {shown}."
)

# {heads}: the heads drawn ("3 heads"); {stored}: the scenario's own count ("1 head")
OPENING_HEADS = (
    "Shown with {heads} to compare them; the scenario itself keeps {stored} (the other pages "
    "use it) until you change the number of heads here."
)

# {dk}, {dv}, {choices}, {nearest}, {shown}: as in BAD_HEADS
ZERO_HEADS = (
    "0 heads: attention needs at least 1 head. Valid choices for the Q/K width ({dk}) and the "
    "V width ({dv}): {choices}; nearest: {nearest}. Still showing {shown}."
)

NEAREST_OR = " or "  # joins the two nearest valid counts: "2 or 4"

# {dk}, {dv}: the Q/K and V widths; {heads}: the number of heads ("1 head", "3 heads");
# {d_k}, {d_v}: the widths of one head;
# {choices}: the valid head counts
WIDTHS = (
    "Q/K width {dk} = {heads} × d_k {d_k};  V width {dv} = {heads} × d_v {d_v}.  "
    "Valid head counts: {choices}"
)

INPUTS_EXPANDER = "Tokens, embeddings and weight matrices"

COMPUTE_WHAT = "multi-head attention"  # completes common.CANNOT_COMPUTE

# {scale}: the scale factor; {scale_mode}: how it was chosen (common.SCALE_MODES);
# {tau}: the temperature; WITH_PE and WITH_MASK follow when they apply
SETTINGS_LINE = "scale = {scale:.4g} ({scale_mode}), temperature τ = {tau:g}"
WITH_PE = ", positional encoding added to X"
WITH_MASK = ", with the scenario's mask"

# --- Per head ------------------------------------------------------------------------------

WEIGHTS_HEADER = "Attention weights per head"

WEIGHTS = (
    "One weights matrix per head, all on the same 0–1 colour scale: rows are queries, columns "
    "keys. Different heads can attend to different tokens."
)

WEIGHTS_SCALE = "Colour: dark purple = 0, yellow = 1; hover a cell for its exact value."
# the same with the high-contrast projector colours (attnviz.figures.colours.PROJECTOR)
WEIGHTS_SCALE_PROJECTOR = "Colour: black = 0, yellow = 1; hover a cell for its exact value."

HEAD_TITLE = "**head {h}**"  # {h}: the head

OUTPUTS_HEADER = "Output of each head"

HEAD_OUTPUTS = "Each head's output O_h = A_h V_h (shared colour scale across the heads)."

# {bound}: the largest absolute output value (the colour scale runs from -bound to +bound)
OUTPUTS_SCALE = "Colour: blue < 0 < red, from −{bound:.3g} to +{bound:.3g}."

HEAD_OUTPUT_TITLE = "**head {h}: O{h}**"  # {h}: the head

# --- W_O and the head mix --------------------------------------------------------------------

PROJECT_HEADER = "Project with W_O"

W_O_LABEL = "W_O"

WO_FORMULA = r"O = \mathrm{Concat}(O_1, \dots, O_h)\, W_O"

MIX_HEADER = "Alternative: mix the heads with one weight each (seed 004)"

MIX = (
    "Seed 004 combines the heads with one number per head instead of W_O: "
    "output = Σ_h w_h · O_h. This needs every head to have the same width d_v and mixes them "
    "column by column. Edit the weights below (default: the average, 1/h each)."
)

MIX_FORMULA = r"O_{\text{mix}} = \sum_{h} w_h\, O_h"

MIX_EDITOR_LABEL = "Head weights"

MIXED_TITLE = "Mixed output O_mix"

# {reason}: why the heads cannot be mixed (a sentence without its full stop)
CANNOT_MIX = "Cannot mix the heads: {reason}. Edit the head weights: one number per head."
