"""Guided lectures: the lecture bar, the sidebar's and Home's lecture pickers, the link messages,
and each step's talking point (what to point at on screen).

The lectures themselves (pages, presets, focus, settings) are :mod:`attnviz.teach.lectures`.
Every talking point that states a number or a comparison is checked against the numbers the
step shows by tests/teach/test_lectures.py: change a number here and that test says whether
it still holds.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "BAR_TITLE": ("title", "n", "total"),
    "BAD_STEP": ("title", "total"),
    "HOME_STEPS": ("n",),
    "STEP_TITLE": ("title", "settings"),
}

# The title of a step's scenario when the step changes settings on top of its preset: the
# preset's title and what was changed, so the caption says what the step shows ("Edited from"
# is for a person's edits). {title}: the preset's title; {settings}: SETTING_WORDS joined by ", "
STEP_TITLE = "{title}, {settings}"
# each (setting, value) a lecture step sets, in words (tests/teach/test_lecture_step_titles.py
# fails on a step whose settings have none)
SETTING_WORDS = {
    ("mask_kind", "causal"): "causal mask",
    ("temperature", 0.3): "temperature τ = 0.3",
    ("temperature", 3.0): "temperature τ = 3",
    ("use_pe", False): "no positional encoding",
    ("scale_mode", "none"): "no 1/√d_k scaling",
    ("rope_offset", 5): "positions shifted by 5",
}

# {title}: the lecture's title; {n}: the step shown (1 = first); {total}: its number of steps
BAR_TITLE = "Lecture: {title} — step {n} of {total}"
BACK = "← Back"
NEXT = "Next →"
LEAVE = "Leave"
BACK_HELP = "The previous step (← key, when no input has the focus)."
NEXT_HELP = "The next step (→ key, when no input has the focus)."
LEAVE_HELP = "End the lecture: the page and the scenario stay as they are."
ELSEWHERE = ("This page is not the step's page: Back or Next returns to the lecture's path.")

SIDEBAR_LABEL = "Guided lecture"
SIDEBAR_NONE = "None"
SIDEBAR_HELP = ("An ordered path through the pages, each step with its preset, settings and a "
                "talking point; presenter mode goes on. Next/Back or the → / ← keys move "
                "along; the address bar holds a link a student can follow (?lecture=…&step=…).")

HOME_TITLE = "Guided lectures"
HOME_INTRO = ("Three ready-made lectures: each step opens a page with its scenario and a talking "
              "point, in presenter mode; the → / ← keys move along.")
HOME_START = "Start"
# {n}: the lecture's number of steps
HOME_STEPS = "{n} steps"

BAD_LECTURE = ("This link names no guided lecture; the lectures are: Attention from scratch "
               "(?lecture=scratch), Modern attention (?lecture=modern), Backprop and learning "
               "(?lecture=backprop). The current page and scenario are unchanged.")
# {title}: the lecture's title; {total}: its number of steps
BAD_STEP = ("The link's step is not a step of \"{title}\": step must be a whole number from 1 "
            "to {total}. The lecture starts at step 1.")

LECTURE_TITLES = {
    "scratch": "Attention from scratch",
    "modern": "Modern attention",
    "backprop": "Backprop and learning",
}
LECTURE_ABOUT = {
    "scratch": "Queries, keys and values; scores, scaling and the softmax; temperature, the "
               "causal mask, positional encoding and heads — on four and six words.",
    "modern": "What today's decoders change: the KV cache, online softmax, RoPE, ALiBi, "
              "grouped-query attention, QK-norm, soft-capping, Scalable-Softmax and sinks.",
    "backprop": "Why √d_k, the backward pass and saturation, and attention being learned: "
                "gradients, training and induction heads.",
}

# One talking point per step (keys: attnviz.teach.lectures, Step.talk). Plain sentences.
TALK = {
    # --- Attention from scratch -------------------------------------------------------------
    "scratch_projections": (
        "Every word's query, key and value is its row of X times W_Q, W_K and W_V. word_1's "
        "row of X is [1, 0, 0] (open ✏️ Edit X under the charts), so its query — Q's top row, "
        "[2, 0, 2] — is just the first row of W_Q."),
    "scratch_scores": (
        "Scores compare every query with every key: word_1·word_3 = 10. Scaling divides every "
        "score by √d_k = √3, so that 10 becomes 5.77 in the scaled scores."),
    "scratch_weights": (
        "The softmax turns each row of scaled scores into weights that sum to 1. word_4 puts "
        "0.91 of its attention on word_3; word_2 splits it evenly, 0.45 to word_1 and to "
        "word_3."),
    "scratch_one_query": (
        "One query at a time: word 1 scores [23, 11, 18, 29] against the four keys. Follow the "
        "row through scale, exp and sum: word 4 ends up with 0.97 of the weight."),
    "scratch_decoder": (
        "A decoder sentence: causal mask plus positional encoding. Point at row 1, 'cat': it "
        "gives 0.64 to itself and 0.36 to 'the', and nothing to the future."),
    "scratch_cold": (
        "The temperature τ divides the scores before the softmax. At τ = 0.3 the weights of "
        "'cat' sharpen: its weight on itself is now 0.87."),
    "scratch_hot": (
        "At τ = 3 every row flattens toward uniform: 'cat' now gives 0.55 to itself and 0.45 "
        "to 'the'."),
    "scratch_mask": (
        "The causal mask sets every score above the diagonal to −∞, so those weights are "
        "exactly 0: word_1 can only see itself and gives it weight 1."),
    "scratch_no_pe": (
        "Positional encoding off: the second 'the' (row 4) gives both 'the's exactly the same "
        "weight, 0.18 — without positions attention cannot tell the two apart."),
    "scratch_heads": (
        "Two heads on the same words look at different places: 'child' looks at itself in "
        "head 0 (0.99) and at 'reads' in head 1 (1.00)."),
    "scratch_trace": (
        "Click any cell of the weights to follow it back: α_ij is exp of the scaled score "
        "q_i·k_j divided by the sum of its row's exps."),
    # --- Modern attention -------------------------------------------------------------------
    "modern_baseline": (
        "Our baseline, a causal decoder on six tokens: every row sums to 1 and no token looks "
        "ahead (the upper triangle is 0)."),
    "modern_kv_cache": (
        "Decoding one token at a time: each call computes one new query row against the cached "
        "keys and values, and the cache grows by one key and one value. The rows equal full "
        "causal attention."),
    "modern_online": (
        "FlashAttention's online softmax reads the keys in tiles of two, keeping a running max "
        "and sum: the weights equal the one-pass softmax to rounding (below 1e-15)."),
    "modern_rope": (
        "RoPE rotates q and k by their position, so a score depends only on the distance: the "
        "three 'the'→'cat' pairs at distance 1 all get the same score."),
    "modern_rope_shift": (
        "Shift every position by 5: the scores and weights stay the same to rounding — RoPE "
        "sees distances, not positions."),
    "modern_alibi": (
        "ALiBi adds −slope × distance to the scores, one slope per head: on the last token "
        "head 0 (slope 1/4) gives the nearest token 0.26, head 3 (slope 1/256) spreads almost "
        "evenly (every weight 0.12–0.13)."),
    "modern_gqa": (
        "Grouped-query attention: 8 query heads share 2 key/value heads, so the KV cache is 4 "
        "times smaller; heads 0–3 read the same keys with their own queries."),
    "modern_qk_norm": (
        "QK-norm RMS-normalises q and k, so no score exceeds d_k·g² = 4 and the largest weight "
        "is 0.45; plain attention would put all the weight of 'big' and 'bigger' on "
        "'bigger'."),
    "modern_capping": (
        "Soft-capping squashes each scaled score with c·tanh(s/c): 'three' scores 18 with "
        "itself and 9 with 'one'; capped, they become 2 and 1.98 — nearly equal, and never "
        "beyond c = 2."),
    "modern_ssmax": (
        "The last 'idea' matches itself and the earlier 'idea'. A plain softmax over ten keys "
        "leaves those two 71 % of the row; SSMax scales the scores by s·log 10 and they keep "
        "97 %."),
    "modern_sinks": (
        "A sliding window of 3 plus one sink: every query sees '<s>' and the last 3 tokens up "
        "to itself, nothing else. 'dry' parks 0.99 of its weight on '<s>'."),
    # --- Backprop and learning --------------------------------------------------------------
    "backprop_variance": (
        "Random q and k with d_k dimensions: unscaled, the variance of q·k grows with d_k "
        "(512.04 at d_k = 512), so the softmax saturates. Divided by √d_k the variance stays "
        "near 1."),
    "backprop_scaled": (
        "Back to four words, scaled by √3: word_1's weights are 0.03, 0.00, 0.00 and 0.97 — "
        "sharp, but not yet one-hot."),
    "backprop_unscaled": (
        "Without √d_k the same scores are √3 times larger: word_1 now puts 0.998 on word_4 and "
        "the softmax is saturated."),
    "backprop_gradients": (
        "The backward pass: each gradient sits beside the matrix it belongs to. Through the "
        "softmax, dS̃ = α ⊙ (dα − Σ α·dα): word_1's row of dS̃ reaches 0.06 where its "
        "weights are large."),
    "backprop_saturated": (
        "Unscaled, word_1's softmax is saturated: its row of dS̃ reaches only 0.00495, more "
        "than 10 times less than scaled — W_Q and W_K barely learn from it."),
    "backprop_compare": (
        "Scaled and unscaled side by side on the same inputs, and their difference A − B: "
        "every row is sharper without √d_k."),
    "backprop_learn": (
        "Gradient descent on W_Q and W_K toward a target pattern: press Train and watch the "
        "weights move toward the target, step by step."),
    "backprop_induction": (
        "A two-layer transformer learns to copy in context: point at the loss and its sudden "
        "drop, when a previous-token head and an induction head form."),
    "backprop_quiz": (
        "Your turn: predict where each query looks before the weights are revealed."),
}
