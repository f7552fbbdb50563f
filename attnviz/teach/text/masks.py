"""TODO"""

from __future__ import annotations

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
