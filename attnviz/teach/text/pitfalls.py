"""Pitfalls: bugs that real tutorials ship, each computed wrong and right on the same inputs.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "SOURCE": ("source",),
    "SYMPTOM": ("symptom",),
    "PANEL_TITLE": ("side", "matrix"),
}

INTRO = (
    "Bugs that real attention tutorials ship — several from the seed notebooks this dashboard "
    "grew out of. For each one the wrong code and the right code run on the same inputs; both "
    "results are computed live (the wrong function is shown exactly as it runs)."
)

# title, source, the symptom in one sentence, what to look at.
PITFALLS = {
    "softmax_over_queries": dict(
        title="Softmax over the queries instead of the keys",
        source="seed 001 (its causal example prints [[0, 0.3595, 0], [1, 0.6405, 1]])",
        symptom="The columns of the weights sum to 1 instead of the rows, so query 0 gets "
                "weight 0.36 instead of 1 on the only key it may see and its output is "
                "[0, 0.36, 0] instead of v_0 = [0, 1, 0].",
        look="The mask is built with a batch axis, shape (1, t, t); np.where broadcasts the "
             "scores to (1, t, t), so the notebook's axis=1 is now the query axis. Normalise "
             "over the last axis (axis=-1) and the right answer appears.",
    ),
    "softmax_length_one": dict(
        title="Softmax over an axis of length one",
        source="seed 004 (Keras: K.softmax(score) on a score of shape (batch, t, 1))",
        symptom="Every weight is exactly 1, so the 'context vector' is the plain sum of the "
                "values ([3, 4, 1] here) and the scores have no effect at all.",
        look="K.softmax normalises over the last axis; with one neuron that axis has length "
             "one and exp(s)/exp(s) = 1. Squeeze the score to (t,) first, as the notebook's "
             "earlier cell does, so the softmax runs over the tokens.",
    ),
    "sum_broadcast": dict(
        title="A hand-written softmax whose sum broadcasts along the wrong axis",
        source="seed 004 (softmax = np.exp(x) / np.sum(np.exp(x), axis=axis))",
        symptom="Without keepdims the (t,) vector of row sums is divided along the columns: "
                "entry (i, j) is divided by the sum of row j, so rows sum to anything (0.07 "
                "to 3.3 here) and no error is raised.",
        look="The diagonal is right (row i divided by its own sum), which makes the bug easy "
             "to miss on a glance. Use np.sum(..., keepdims=True), or the stable softmax.",
    ),
    "scale_by_length": dict(
        title="Scaling by √(sequence length) instead of √d_k",
        source="seed 004 (batched_tensor_dot divides by np.sqrt(q.shape[0]))",
        symptom="q.shape[0] is the number of tokens (6), not the width d_k (3): the scores are "
                "divided by √6 instead of √3, so every row is flatter than it should be — and "
                "the same sentence would attend differently if it were longer.",
        look="Compare the diagonals: 'reads' attends to itself with 0.92 instead of 0.98. For "
             "the single query the notebook's q.shape[0] happened to be d (q was a vector), "
             "which hid the bug.",
    ),
    "naive_overflow": dict(
        title="The naive exp overflowing for large scores",
        source="the textbook formula exp(s) / Σ exp(s)",
        symptom="exp(710) is larger than the largest float64 (≈ 1.8e308) and becomes inf; "
                "inf/inf = NaN, so a row with a large score gives NaN (or 0 and NaN) weights "
                "although the right weights are perfectly ordinary.",
        look="Subtracting the row maximum first, exp(s − max s), changes nothing mathematically "
             "(the factor cancels) and the largest exponent becomes exp(0) = 1.",
    ),
    "mask_after_softmax": dict(
        title="The mask applied after the softmax instead of before",
        source="a common mistake when adding a causal mask",
        symptom="Zeroing forbidden weights after normalising leaves rows that sum to less than "
                "1 (0.24 for the first word): the output shrinks and the future still "
                "influenced how much weight the allowed keys got.",
        look="Set forbidden scores to −∞ before the softmax; the allowed weights are then "
             "renormalised among themselves and every row sums to 1.",
    ),
    "fully_masked_row": dict(
        title="−1e9 instead of −∞, and a fully masked row",
        source="seed 001 fills masked scores with −1e9",
        symptom="A query whose keys are all masked (the left padding token here) gets a row of "
                "equal scores −1e9, so the softmax spreads it uniformly (1/3 each) over keys it "
                "must not see and its output is their average.",
        look="Rows with at least one allowed key agree (exp(−1e9 − max) is exactly 0). With "
             "−∞ a fully masked row is 0/0 in a naive softmax; attnviz's rule gives it zero "
             "weights and a zero output, which downstream code can detect.",
    ),
    "pe_base_typo": dict(
        title="The positional-encoding base 1000 instead of 10000",
        source="seed 002 (its formula prints w_k = 1/1000^(2k/d))",
        symptom="Nothing crashes, but the slow dimensions turn up to 10 times faster, so the "
                "code differs from the paper and from every pretrained model, and distant "
                "positions look alike sooner.",
        look="Columns d0 and d1 are identical in both (frequency 1); the later columns differ "
             "more and more (column d2 reaches 0.46 instead of 1.00 at t = 15).",
    ),
    "seed001_wrong_triangle": dict(
        title="A causal mask with the wrong triangle",
        source="seed 001's markdown example mask [[0, 0], [−1e9, 0]]",
        symptom="The −1e9 sits below the diagonal: query 0 attends to the future key 1 "
                "(weight 0.85) and query 1 may not see its past key 0 (weight 0). Nothing "
                "errors; the model simply looks ahead.",
        look="Causal attention hides the keys above the diagonal (j > i): query 0 sees only "
             "itself (weights [1, 0]) and query 1 gets [0.15, 0.85].",
    ),
    "seed004_dropped_tanh": dict(
        title="Attention pooling without its tanh",
        source="seed 004's \"in one catch\" cell (its step-by-step cells apply the tanh)",
        symptom="Without tanh the scores are unbounded: one time step takes 0.93 of the "
                "weight and the context is nearly that one embedding.",
        look="With e = tanh(x·w + b) every score lies in (−1, 1): the weights stay spread "
             "(the largest 0.31) and the context mixes several time steps.",
    ),
    "seed003_glorot_limit": dict(
        title="Glorot's limit for W_V computed from d_K",
        source="seed 003 (limit = √(6/(d_K + d_L)) for W_Q, W_K and W_V alike)",
        symptom="W_V is d_L × d_V, but its entries are drawn within √(6/(d_L + d_K)): with "
                "d_K = 1 and d_V = 16 that is 1.10 instead of 0.55, so the values come out "
                "with 4 times the variance Glorot's rule aims for (1.6 instead of 0.4).",
        look="Each matrix takes the limit from its own shape: W_V's is √(6/(d_L + d_V)). The "
             "seed 003 preset draws its W_V that way.",
    ),
    "gradients_vanish": dict(
        title="No 1/√d_k: the softmax saturates and stops learning",
        source="the √d_k story (Vaswani et al. 2017, §3.2.1), told with gradients",
        symptom="Without the scale, scores of width d_k = 256 have a standard deviation of 16: "
                "each row of weights is almost one-hot, and the gradient of the scores, "
                "dS̃ = P ∘ (dP − rowsum(P ∘ dP)), is about 50 times smaller (‖dS̃‖ 0.025 "
                "instead of 1.29) — W_Q and W_K barely learn.",
        look="Compare the dS̃ heatmaps: nearly white on the wrong side. The Gradients page "
             "draws ‖dS̃‖ against the scale for your own scenario; the Learn page's 'saturated "
             "softmax' experiment shows the loss that does not fall.",
    ),
    "gqa_tiled_heads": dict(
        title="GQA heads grouped with tile instead of repeat_interleave",
        source="grouped-query attention (Ainslie et al. 2023); torch repeat vs repeat_interleave",
        symptom="With 4 query heads on 2 key/value heads, np.tile (torch repeat) gives query "
                "heads 0, 1, 2, 3 the key heads 0, 1, 0, 1; the model was trained with "
                "groups 0, 0, 1, 1. Query head 1 then looks through the wrong keys.",
        look="The first panel shows which key/value head each query head uses; the weights of "
             "query head 1 change completely.",
    ),
    "decode_top_left": dict(
        title="The causal mask aligned top-left during cached decoding",
        source="KV-cache decoding (PyTorch's causal_upper_left vs causal_lower_right)",
        symptom="A decoding call has one query row and i + 1 cached keys. np.tril(ones(1, i + "
                "1)) is aligned top-left: it allows key 0 only, so every decoded token attends "
                "to the first token alone and every output row equals v_0.",
        look="Wrong: every row of weights is [1, 0, 0, ...]. Right: the mask aligned "
             "bottom-right gives exactly the rows of full causal attention.",
    ),
    "window_off_by_one": dict(
        title="A sliding window off by one",
        source="sliding-window attention (Mistral's sliding_window = keys seen, the query "
               "included)",
        symptom="A window of 3 keys written as i − j <= 3 lets each query see 4 keys: itself "
                "and the 3 before it. Implementations differ by exactly this one key.",
        look="Compare the 'keys seen' column: 4 instead of 3 from the fourth token on. "
             "attnviz's Masks page states its own convention next to the control: |i − j| <= "
             "width, so a query sees up to 2·width + 1 keys (width on each side and itself).",
    ),
    "alibi_twelve_heads": dict(
        title="ALiBi slopes from the power-of-two formula for 12 heads",
        source="ALiBi (Press et al. 2022) and its reference code's get_slopes",
        symptom="2^(−8(h+1)/n) is the paper's formula only when n is a power of two. For 12 "
                "heads the paper takes the 8 slopes of 8 heads (1/2 ... 1/256) and then every "
                "other slope of 16 heads (2^−0.5, 2^−1.5, ...): the slopes differ, starting "
                "with the first (0.63 instead of 0.5).",
        look="The right slopes are not in decreasing order: heads 8 to 11 interleave between "
             "the first ones — that is the paper's rule, not a bug.",
    ),
    "rope_mixed_layouts": dict(
        title="RoPE layouts mixed",
        source="RoPE's two layouts: split-half (GPT-NeoX, Hugging Face rotate_half) and "
               "interleaved (GPT-J, Meta's apply_rotary_emb)",
        symptom="Weights converted for one layout and rotated with the other pair the wrong "
                "dimensions: each dimension is rotated with a partner the model never paired "
                "it with, and the attention pattern changes.",
        look="Compare the weights: same q and k, same positions, different pairs. The two "
             "layouts agree only after permuting the dimensions (layout_permutation).",
    ),
}

WRONG = "Wrong"

RIGHT = "Right"

INPUTS = "Inputs (the same for both)"

NAN = "NaN (grey cells) means 'not a number': the computation produced 0/0 or inf/inf."
NAN_NAME = "not a number"  # the legend name of the NaN cells' overlay

TITLE = "Pitfalls"
CHOICE_LABEL = "Pitfall"
# {source}: where the bug was found (PITFALLS[...]["source"])
SOURCE = "Source: {source}"
# {symptom}: what goes wrong (PITFALLS[...]["symptom"])
SYMPTOM = "Symptom: {symptom}"
# {side}: WRONG or RIGHT; {matrix}: the panel's name
PANEL_TITLE = "{side}: {matrix}"
