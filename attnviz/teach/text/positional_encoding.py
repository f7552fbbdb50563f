"""Positional encoding: the PE matrix, its curves and similarity, and why attention needs it.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "ROUNDING": ("diff",),
    "PE_TITLE": ("n_pos", "d_model", "base"),
    "DIM_NAME": ("j",),
    "SIMILARITY_ROWS_TITLE": ("mid",),
    "COMPARE_BASE": ("base",),
    "SHUFFLED_ORDER": ("order",),
    "PERMUTATION_ERROR": ("reason",),
}

INTRO = (
    "Attention itself does not know the order of the tokens: it compares every token with "
    "every other one, wherever they stand. The sinusoidal positional encoding (Vaswani et al. "
    "2017, §3.5) adds to each token a vector that depends only on its position: pairs of "
    "sine and cosine waves whose wavelengths grow geometrically with the dimension."
)

FORMULA = (
    r"PE_{t,\,2i} = \sin\!\left(\frac{t}{\text{base}^{2i/d_{model}}}\right),\quad "
    r"PE_{t,\,2i+1} = \cos\!\left(\frac{t}{\text{base}^{2i/d_{model}}}\right)"
)

EXPLORE = (
    "Explore the encoding on its own (these sliders do not change the scenario): rows are "
    "positions, columns dimensions. Low dimensions oscillate fast, high dimensions slowly."
)

BASE_TYPO = (
    "Base 1000 is the value printed in seed 002's formula, a typo: the paper uses 10000. With "
    "a smaller base the slow dimensions repeat sooner, so far-apart positions look more alike."
)

LINES = "Chosen dimensions as curves over the positions: even columns are sines, odd cosines."

SIMILARITY = (
    "PE·PEᵀ: the dot product of every pair of positions. It depends only on the distance "
    "t − t': the diagonal is d_model/2 (sin² + cos² = 1 for each pair of columns) and nearby "
    "positions have similar codes."
)

SIMILARITY_FORMULA = r"S_{t t'} = PE_t \cdot PE_{t'} = \sum_i \cos\!\big(\omega_i (t - t')\big)"

SIMILARITY_ROWS = (
    "Two rows of the matrix on the left: the similarity falls off (with ripples) as t moves "
    "away from the reference position, the same way on both sides, and the second curve is "
    "the first one shifted: only the distance matters."
)

COMPARE = (
    "The attention weights of the current scenario (its tokens, weights, mask and variant) "
    "computed without and with PE added to the embeddings, on the same 0–1 scale."
)

COMPARE_HEAD = "Multi-head scenario: head 0 is shown."

DIRECT = (
    "This scenario gives Q, K and V directly, so there are no embeddings to add PE to. Load a "
    "preset with embeddings (for example 'The cat sat on the mat') to compare."
)

PERMUTATION = (
    "Shuffle the tokens and run self-attention again (the scenario's W_Q, W_K, W_V, scale and "
    "temperature, no mask). Without PE every output row simply moves with its token: put the "
    "rows back in the original order and they are identical. Attention alone cannot tell "
    "'dog bites man' from 'man bites dog'. With PE the code of each position is added after "
    "shuffling, so a token gets a different code and its output changes."
)

# {diff}: the largest difference found (rounding only, below 1e-12)
ROUNDING = (
    "{diff:.1e} is floating-point rounding, not a real difference: the softmax sums run over "
    "the same numbers in another order."
)

IDENTITY = "With a single token there is nothing to shuffle."

TITLE = "Positional encoding"
EXPLORER_TITLE = "The PE matrix"
BASE_LABEL = "base"
D_MODEL_LABEL = "d_model"
POSITIONS_LABEL = "number of positions"
# {n_pos}: number of positions; {d_model}: width; {base}: the base of the wavelengths
PE_TITLE = "PE ({n_pos} × {d_model}), base {base}"
AXIS_DIMENSION = "dimension"
DIMS_LABEL = "Dimensions to draw"
# {j}: a column of PE
DIM_NAME = "d{j}"
AXIS_PE_VALUE = "PE value"
SIMILARITY_TITLE = "PE · PEᵀ: similarity of positions"
# {mid}: the second reference position (half the number of positions)
SIMILARITY_ROWS_TITLE = "Rows 0 and {mid} of PE · PEᵀ"
# Curve names: {t}: the reference position
SIMILARITY_ROW = "PE_{t} · PE_t"
AXIS_POSITION_T = "position t"
AXIS_DOT_PRODUCT = "dot product"
SCENARIO_TITLE = "Attention without and with PE on your tokens"
# {base}: the scenario's PE base
COMPARE_BASE = "PE base here: the scenario's ({base:g})."
WITH_PE = "with PE"
WITHOUT_PE = "without PE"
PERMUTATION_TITLE = "Shuffle the tokens: what changes?"
PERMUTATION_KINDS = {"reverse": "reverse the order", "random": "shuffle with a seed"}
PERMUTATION_LABEL = "Permutation"
# {order}: the shuffled tokens, "0:the  1:cat ..."
SHUFFLED_ORDER = "shuffled order: {order}"
# {reason}: why the scenario cannot be permuted (a ValueError's message)
PERMUTATION_ERROR = "Cannot run the permutation demo: {reason}."
DIFF_WITHOUT_PE = "without PE: max |difference| after un-permuting"
DIFF_WITH_PE = "with PE: max |difference| after un-permuting"
SHOW_OUTPUTS = "Show the outputs"
OUTPUT_ORIGINAL = "Output, original order"
OUTPUT_SHUFFLED = "Output of the shuffled tokens"
OUTPUT_UNPERMUTED = "Shuffled output, rows put back"
BASE_PREFIX = "drag the base: "
D_MODEL_PREFIX = "drag d_model: "
BASE_DRAG = ("Drag a slider under the matrix: it follows the base or d_model while you drag "
             "(computed in advance for every step); releasing it sets that value for the "
             "curves and the similarity below too.")
BOTH_ON_CHART = "Set the base and d_model with the sliders under the PE matrix, below."
BASE_ON_CHART = "Set the base with the slider under the PE matrix, below."
D_MODEL_ON_CHART = "Set d_model with the slider under the PE matrix, below."
