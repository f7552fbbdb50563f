"""All explanatory text of the dashboard, in one place to review and correct.

Formulas are LaTeX for ``st.latex``; explanations are one plain sentence (rendered as text,
never as HTML). Each page reads its strings from here. A test checks that the formulas match
what the code computes where that can be checked on an example.
"""

from __future__ import annotations

APP_TITLE = "attnviz — see every matrix of attention"

HOME_INTRO = (
    "Attention lets every token build its new representation as a weighted average of other "
    "tokens' values. Each token asks a question (its query q) and every token offers a label "
    "(its key k) and a content (its value v). The dot product q·k scores how well a key answers "
    "the query; dividing by √d_k keeps those scores in a range where the softmax stays soft. "
    "The softmax turns each query's scores into weights that are positive and sum to 1, and a "
    "mask can forbid some pairs (for example the future, in a decoder). The output for each "
    "query is the weights times the values — and here you can edit every number on the way."
)

PAGES_OVERVIEW = {
    "Playground": "edit tokens, embeddings and W_Q/W_K/W_V, pick a variant, see every matrix.",
    "Step by step": "one query at a time: q·k for every key, scale, mask, exp, sum, weights, "
                    "output — with the actual numbers.",
    "Masks": "causal, padding, sliding-window and custom masks, and what −∞ does to the "
             "softmax.",
    "Multi-head": "split into heads, one weights map per head, concatenate, project by W_O.",
    "Positional encoding": "the sinusoidal PE matrix, its similarity structure, and why "
                           "attention without it cannot tell word order.",
    "Encoder–decoder & additive": "cross-attention between two sequences, Bahdanau's additive "
                                  "scores and attention pooling.",
}

# One entry per matrix shown on the Playground: (title, LaTeX formula, one-line explanation).
MATRICES = {
    "x": ("X — token embeddings", r"X \in \mathbb{R}^{t \times d_{model}}",
          "One row per token: the vectors attention works on."),
    "x_pe": ("X + PE — embeddings with positional encoding", r"X' = X + PE",
             "The sinusoidal position code is added so that order becomes visible."),
    "q": ("Q — queries", r"Q = X W_Q", "What each token is looking for."),
    "k": ("K — keys", r"K = X W_K", "What each token offers to be found by."),
    "v": ("V — values", r"V = X W_V", "What each token passes on when attended to."),
    "scores": ("Raw scores", r"S = Q K^\top", "S_ij = q_i · k_j: how well key j matches query i."),
    "scaled": ("Scaled scores", r"S' = \frac{S \cdot \text{scale}}{\tau}",
               "Scores times the scale (1/√d_k by default) and divided by the temperature τ."),
    "mask": ("Mask", r"M_{ij} \in \{\text{True}, \text{False}\}",
             "True (blue ✓): query i may attend to key j; False (grey ✕): masked, its score "
             "becomes −∞."),
    "masked": ("Masked scores", r"S'' = \begin{cases} S'_{ij} & M_{ij}\\ -\infty & "
               r"\text{otherwise}\end{cases}",
               "Masked pairs get −∞, so exp(−∞) = 0 removes them from the softmax."),
    "weights": ("Attention weights", r"A_{ij} = \frac{e^{S''_{ij}}}{\sum_{j'} e^{S''_{ij'}}}",
                "Softmax over the keys: each row is positive and sums to 1."),
    "output": ("Output", r"O = A V", "Each row is the weighted average of the value rows."),
    "concat": ("Concatenated heads", r"\mathrm{Concat}(O_1, \dots, O_h)",
               "The heads' outputs side by side (np.hstack)."),
    "mha_output": ("Multi-head output", r"O = \mathrm{Concat}(O_1, \dots, O_h)\, W_O",
                   "The concatenation projected by W_O."),
    "features": ("Alignment features", r"\tanh(q_i W_q + k_j W_k)",
                 "The hidden layer of the additive scorer (shown for the first query)."),
    "additive_scores": ("Alignment scores", r"e_{ij} = v_a^\top \tanh(q_i W_q + k_j W_k)",
                        "A small network, not a dot product, scores each pair."),
}

FULLY_MASKED_ROW = (
    "A query whose keys are all masked has nothing to attend to: attnviz gives it a weights "
    "row of zeros and an output row of zeros (a naive softmax would give 0/0 = NaN)."
)

SCALE_MODES = {"sqrt_dk": "1/√d_k", "none": "none (1)", "custom": "custom"}
MASK_KINDS = {"none": "no mask", "causal": "causal", "padding": "padding (valid length)",
              "window": "sliding window", "custom": "custom grid"}
INIT_KINDS = {"randint": "random integers 0–2 (notebooks)", "normal": "normal N(0, 1)",
              "glorot_uniform": "Glorot uniform", "identity": "identity", "zeros": "zeros"}

# --- Masks page (Step by step: attnviz.teach.text.step_by_step) -----------------------------

MASKS_INTRO = (
    "A mask says which keys each query may look at (✓ = may attend). Forbidden scores are set "
    "to −∞ before the softmax; exp(−∞) = 0, so those keys get weight 0 and the remaining "
    "weights of the row are renormalised to sum to 1."
)
MASK_KIND_HELP = {
    "none": "Every query may attend to every key.",
    "causal": "Query i may attend to keys 0..i only: no looking at the future (decoders, GPT).",
    "padding": "Only the first keys are real tokens; the rest are padding that nobody may "
               "attend to (every row has the same columns blocked).",
    "window": "Query i may attend to key j when |i − j| <= width (local attention, Longformer).",
    "custom": "Tick or untick any cell of the grid: row = query, column = key.",
}
MASKS_CAUSAL_VARIANT = (
    "The variant 'Causal self-attention' adds its own causal mask on top of the mask chosen "
    "here: the mask used is your mask AND the causal mask, so a cell is allowed only when both "
    "allow it. Pick 'Scaled dot-product' in the Playground to use your mask alone."
)
MASKS_NO_MASK = (
    "For comparison: the softmax of the same scaled scores with no mask at all (not even the "
    "variant's own)."
)
MASKS_ALL_BLOCKED = (
    "Every cell of the mask is blocked: no query may attend to any key. All weights and all "
    "outputs are 0. The figures still show what happens."
)
MASKS_CUSTOM_RESET = (
    "The custom grid did not match the current number of queries and keys; it was reset to "
    "'all may attend'."
)

# --- Multi-head, Positional encoding, Encoder–decoder & additive pages -----------------------

MHA_INTRO = (
    "Multi-head attention cuts the columns of W_Q, W_K and W_V into h equal blocks. Each block "
    "is one head: it computes its own weights and its own output with the same steps as "
    "single-head attention. The heads' outputs are put side by side (concatenated) and "
    "multiplied by W_O. This page always computes multi-head self-attention on the current "
    "tokens, with the scenario's mask, scale and temperature, whatever variant is picked."
)
MHA_DIRECT = (
    "This scenario gives Q, K and V directly, as its seed notebook does. Multi-head attention "
    "needs token embeddings and the weight matrices W_Q, W_K, W_V (their columns are split into "
    "heads), so there is nothing to split here. Load a scenario with embeddings and weights:"
)
MHA_HEADS_HELP = (
    "The number of heads h must divide the Q/K width and the V width: each head gets "
    "width / h columns."
)
# {n}, {dk}, {dv}, {choices}, {nearest}, {shown} are filled in by the page.
MHA_BAD_HEADS = (
    "{n} heads cannot split the Q/K width ({dk}) and the V width ({dv}) into equal blocks. "
    "Valid choices: {choices}; nearest: {nearest}. Still showing {shown} heads."
)
MHA_ZERO_HEADS = (
    "0 heads: attention needs at least 1 head. Valid choices for the Q/K width ({dk}) and the "
    "V width ({dv}): {choices}; nearest: {nearest}. Still showing {shown} heads."
)
MHA_WEIGHTS = (
    "One weights matrix per head, all on the same 0–1 colour scale: rows are queries, columns "
    "keys. Different heads can attend to different tokens."
)
MHA_WEIGHTS_SCALE = "Colour: dark purple = 0, yellow = 1; hover a cell for its exact value."
MHA_HEAD_OUTPUTS = "Each head's output O_h = A_h V_h (shared colour scale across the heads)."
MHA_OUTPUTS_SCALE = "Colour: blue < 0 < red, from −{bound:.3g} to +{bound:.3g}."
MHA_MIX = (
    "Seed 004 combines the heads with one number per head instead of W_O: "
    "output = Σ_h w_h · O_h. This needs every head to have the same width d_v and mixes them "
    "column by column. Edit the weights below (default: the average, 1/h each)."
)
MHA_MIX_FORMULA = r"O_{\text{mix}} = \sum_{h} w_h\, O_h"
MHA_WO_FORMULA = r"O = \mathrm{Concat}(O_1, \dots, O_h)\, W_O"

PE_INTRO = (
    "Attention itself does not know the order of the tokens: it compares every token with "
    "every other one, wherever they stand. The sinusoidal positional encoding (Vaswani et al. "
    "2017, §3.5) adds to each token a vector that depends only on its position: pairs of "
    "sine and cosine waves whose wavelengths grow geometrically with the dimension."
)
PE_FORMULA = (
    r"PE_{t,\,2i} = \sin\!\left(\frac{t}{\text{base}^{2i/d_{model}}}\right),\quad "
    r"PE_{t,\,2i+1} = \cos\!\left(\frac{t}{\text{base}^{2i/d_{model}}}\right)"
)
PE_EXPLORE = (
    "Explore the encoding on its own (these sliders do not change the scenario): rows are "
    "positions, columns dimensions. Low dimensions oscillate fast, high dimensions slowly."
)
PE_BASE_TYPO = (
    "Base 1000 is the value printed in seed 002's formula, a typo: the paper uses 10000. With "
    "a smaller base the slow dimensions repeat sooner, so far-apart positions look more alike."
)
PE_LINES = "Chosen dimensions as curves over the positions: even columns are sines, odd cosines."
PE_SIMILARITY = (
    "PE·PEᵀ: the dot product of every pair of positions. It depends only on the distance "
    "t − t': the diagonal is d_model/2 (sin² + cos² = 1 for each pair of columns) and nearby "
    "positions have similar codes."
)
PE_SIMILARITY_FORMULA = r"S_{t t'} = PE_t \cdot PE_{t'} = \sum_i \cos\!\big(\omega_i (t - t')\big)"
PE_SIMILARITY_ROWS = (
    "Two rows of the matrix on the left: the similarity falls off (with ripples) as t moves "
    "away from the reference position, the same way on both sides, and the second curve is "
    "the first one shifted: only the distance matters."
)
PE_COMPARE = (
    "The attention weights of the current scenario (its tokens, weights, mask and variant) "
    "computed without and with PE added to the embeddings, on the same 0–1 scale."
)
PE_COMPARE_HEAD = "Multi-head scenario: head 0 is shown."
PE_DIRECT = (
    "This scenario gives Q, K and V directly, so there are no embeddings to add PE to. Load a "
    "preset with embeddings (for example 'The cat sat on the mat') to compare."
)
PE_PERMUTATION = (
    "Shuffle the tokens and run self-attention again (the scenario's W_Q, W_K, W_V, scale and "
    "temperature, no mask). Without PE every output row simply moves with its token: put the "
    "rows back in the original order and they are identical. Attention alone cannot tell "
    "'dog bites man' from 'man bites dog'. With PE the code of each position is added after "
    "shuffling, so a token gets a different code and its output changes."
)
PE_ROUNDING = (
    "Without PE the difference is 0 up to floating-point rounding (exactly {diff:.1e}): the "
    "softmax sums run over the same numbers in another order."
)
PE_IDENTITY = "With a single token there is nothing to shuffle."

ED_INTRO = (
    "Encoder–decoder attention reads from two sequences: the queries come from the target "
    "(the decoder, e.g. the French sentence being written) and the keys and values from the "
    "source (the encoder, e.g. the English sentence). Row i of the weights says where target "
    "token i looks in the source."
)
ED_DIRECT = (
    "This scenario gives Q, K and V directly, as its seed notebook does. This page projects "
    "token embeddings with weight matrices, so it needs a scenario that has them:"
)
ED_CROSS_FORMULA = (
    r"A = \mathrm{softmax}\!\left(\frac{(X_{\text{tgt}}W_Q)(X_{\text{src}}W_K)^\top}"
    r"{\sqrt{d_k}\,\tau}\right),\quad O = A\,X_{\text{src}}W_V"
)
ED_CROSS = "Rows are target tokens (queries), columns source tokens (keys); each row sums to 1."
ED_ADDITIVE = (
    "Bahdanau et al. (2014) score a pair with a small network instead of a dot product: project "
    "the target token and the source token into an alignment space of size d_a, add, apply tanh "
    "and take the dot product with v_a. The softmax over the source gives the weights and the "
    "context vector of each target token is the weighted sum of the source embeddings."
)
ED_ADDITIVE_FORMULA = (
    r"e_{ij} = v_a^\top \tanh\!\left(x^{\text{tgt}}_i W_q + x^{\text{src}}_j W_k\right),\quad "
    r"\alpha_{ij} = \mathrm{softmax}_j(e_{ij}),\quad c_i = \sum_j \alpha_{ij}\, x^{\text{src}}_j"
)
ED_POOLING = (
    "Seed 004's Keras Attention layer has no query at all: it scores each time step of one "
    "sequence (here the target tokens) with a weight vector w and a bias per step, and returns "
    "one context vector for the whole sequence (used there to classify a sentence)."
)
ED_POOLING_FORMULA = (
    r"e_t = \tanh(x_t \cdot w + b_t),\quad \alpha_t = \frac{e^{e_t}}{\sum_{t'} e^{e_{t'}}},"
    r"\quad c = \sum_t \alpha_t\, x_t"
)
ED_PE_ON = "Positional encoding is on: PE is added to the target and the source embeddings."

# --- Teaching depth: trace, compare, pitfalls, why √d_k, diagnostics, line view, quiz, patterns,
# --- presenter mode ---------------------------------------------------------------------------

PAGES_OVERVIEW.update({
    "Trace a cell": "click any cell of the weights heatmap and follow α_ij back to q_i and k_j, "
                    "number by number (and through W_O for multi-head).",
    "Compare": "the same inputs under two settings side by side — scaled vs unscaled, causal "
               "vs bidirectional, 1 vs several heads, with vs without PE — and A − B.",
    "Pitfalls": "eight bugs real tutorials ship, each computed wrong and right on the same "
                "inputs.",
    "Why √d_k": "random q and k for growing d_k: the variance of q·k grows and the unscaled "
                "softmax saturates; scaled, it does not.",
    "Line view": "BertViz-style head view: a line from each query to each key, as opaque as "
                 "its weight, one colour per head.",
    "Quiz": "predict where each query looks before the weights are revealed.",
})

# Trace a cell: attnviz.teach.text.trace

# Compare -----------------------------------------------------------------------------------

COMPARE_INTRO = (
    "The same tokens, embeddings and weights under two settings, side by side, and their "
    "difference A − B (red: A gives more, blue: B gives more, white: no change). Only the one "
    "thing named in the choice differs; the scenario itself is not changed."
)
COMPARE_KINDS = {
    "scale": "Scaled (1/√d_k) vs unscaled",
    "causal": "Causal vs bidirectional",
    "heads": "1 head vs several heads",
    "pe": "With vs without positional encoding",
    "temperature": "Temperature τ vs another τ",
    "variants": "Any two variants",
}
COMPARE_WEIGHTS = "Attention weights (rows are queries, columns keys)."
COMPARE_HEADS_MEAN = (
    "With several heads each head has its own weights; shown here is their mean over the "
    "heads (its rows still sum to 1). The outputs compare directly: both are Concat(heads)·W_O."
)
COMPARE_DIFF = "A − B, on a colour scale centred at 0."
COMPARE_SHAPES = (
    "A and B have different shapes (for example another number of keys), so there is no "
    "element-wise difference to show."
)
COMPARE_OUTPUT = "Outputs (rows are queries)."
COMPARE_NOT_APPLICABLE = "This comparison does not apply to the current scenario: {reason}."

# Pitfalls ----------------------------------------------------------------------------------

PITFALLS_INTRO = (
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
}
PITFALL_WRONG = "Wrong"
PITFALL_RIGHT = "Right"
PITFALL_INPUTS = "Inputs (the same for both)"
PITFALL_NAN = "NaN (grey cells) means 'not a number': the computation produced 0/0 or inf/inf."

# Why √d_k ----------------------------------------------------------------------------------

SQRT_DK_INTRO = (
    "If the entries of q and k are independent with mean 0 and variance 1, their dot product "
    "q·k = Σ q_m k_m is a sum of d_k such terms: its variance is d_k. For large d_k the scores "
    "are spread so widely that the softmax gives almost all the weight to one key (it "
    "saturates, and its gradients vanish). Dividing by √d_k brings the variance back to 1 "
    "whatever d_k is (Vaswani et al. 2017, §3.2.1). Below: random q and k, measured."
)
SQRT_DK_FORMULA = (
    r"\operatorname{Var}(q\cdot k) = \sum_{m=1}^{d_k} \operatorname{Var}(q_m k_m) = d_k,"
    r"\qquad \operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = 1"
)
SQRT_DK_VARIANCE = (
    "Variance of the scores over all random pairs: unscaled it follows the line d_k (log-log "
    "axes), scaled it stays at 1."
)
SQRT_DK_ENTROPY = (
    "Mean entropy of the softmax weights of a query (nats). ln t_k (dashed) means uniform "
    "weights, 0 means all the weight on one key. Unscaled, the entropy collapses as d_k grows; "
    "scaled, it hardly changes with d_k."
)
SQRT_DK_EXAMPLE = "One random query's weights over the keys at the chosen d_k."
SQRT_DK_MAX_WEIGHT = "Mean largest weight of a row (1 = one-hot, 1/t_k = uniform)."

# Diagnostics -------------------------------------------------------------------------------

DIAGNOSTICS_TITLE = "Row diagnostics"
DIAGNOSTICS_INTRO = (
    "For each query row: its entropy H = −Σ α ln α (0 = all weight on one key, ln t_k = "
    "uniform), the effective number of attended tokens exp(H), the largest weight and its key, "
    "and the row sum, which must be 1 (or 0 for a fully masked query)."
)
DIAGNOSTICS_FORMULA = (
    r"H_i = -\sum_j \alpha_{ij} \ln \alpha_{ij},\quad N_i = e^{H_i},\quad "
    r"\textstyle\sum_j \alpha_{ij} = 1"
)
DIAGNOSTICS_COLUMNS = {
    "entropy": "entropy (nats)",
    "effective": "effective tokens",
    "max_weight": "max weight",
    "argmax": "most-attended key",
    "row_sum": "row sum",
    "ok": "row sum OK",
}
DIAGNOSTICS_ALL_OK = "Every row sums to 1 (fully masked rows: 0)."
DIAGNOSTICS_NOT_OK = "Some rows do not sum to 1: these are not softmax weights."

# Line view ---------------------------------------------------------------------------------

LINE_VIEW_INTRO = (
    "The head view of BertViz, drawn offline: queries on the left, keys on the right, and a "
    "line from every query to every key whose opacity is the weight (a weight of 1 is a solid "
    "line, 0 is invisible). Each head has its own colour. Choose a token — or click it — to "
    "see only its lines."
)
LINE_VIEW_FOCUS_NONE = "all tokens"
LINE_VIEW_OPACITY = (
    "Opacity = weight, rounded to steps of 1/40; weights below 1/80 are not drawn."
)
LINE_VIEW_NO_HEAD = "Choose at least one head."
LINE_VIEW_TOO_MANY = (
    "The line view draws at most {limit} tokens per side; this scenario has {n}. Focus on one "
    "token to see its lines, or use the heatmaps."
)

# Quiz --------------------------------------------------------------------------------------

QUIZ_INTRO = (
    "Predict, then reveal. The weights are hidden: from the queries and keys (and the mask), "
    "predict for every query the key that gets the most weight, then reveal the weights and see "
    "your score. Hint: the largest weight goes to the largest allowed score q_i·k_j."
)
QUIZ_SOURCES = {"practice": "Practice question (random small integers)",
                "scenario": "The current scenario"}
QUIZ_REVEAL_HELP = "Show the hidden weights and score the predictions."
QUIZ_TIES = "Where several keys tie for the largest weight, any of them counts."
QUIZ_FULLY_MASKED = "Fully masked query: nothing to predict (not scored)."
QUIZ_OUTLINES = "Orange outlines: your predictions."
QUIZ_TOO_MANY = (
    "The quiz takes at most {limit} queries; this scenario has {n}. Use a practice question or "
    "a smaller scenario."
)
QUIZ_CAPTURED = (
    "Weight captured: the weight of the keys you picked divided by the largest weights — "
    "partial credit for a near miss."
)

# Presenter mode ----------------------------------------------------------------------------

PRESENTER_ON = "Presenter mode: bigger type and figures, editors collapsed."
# --- end of the teaching-depth section ---------------------------------------------------

# --- Save & share, Your own attention ---------------------------------------------------------

SHARE_INTRO = (
    "Keep or hand on the exact scenario (tokens, embeddings, every weight matrix, variant, "
    "settings and masks): as a file, or as a link that opens it on any machine running "
    "attnviz. Download the matrices behind the figures, and choose how charts save images."
)
SHARE_LINK_HELP = (
    "Anyone opening this link on a machine that serves attnviz gets this exact scenario on "
    "the Playground ({n:,} characters; links hold at most {limit:,}). The link carries the "
    "numbers themselves, compressed: nothing is stored on the server."
)
SHARE_LINK_LOADED = "Scenario loaded from the link."
SHARE_BAD_LINK = "This link could not be opened, so the default scenario is shown."
SHARE_FILE_HELP = (
    "A JSON file with every number of the scenario (schema version 1); load it here to "
    "restore the scenario exactly."
)
SHARE_FILE_LOADED = "Scenario loaded from the file; every page now uses it."
SHARE_REPORT_HELP = (
    "One HTML file with every figure of this page, interactive (hover for the values) and "
    "readable offline: plotly.js is inside the file (about 5 MB)."
)
SHARE_IMAGE_HELP = (
    "The camera icon in each chart's toolbar saves the chart as it is on screen, drawn by "
    "your browser (offline). PNG at twice the resolution for slides; SVG for papers."
)
SHARE_MATRICES = (
    "Every matrix of the current scenario, computed as on the Playground: CSV for one matrix "
    "(row and column labels included), or all of them as .npz (np.load(f, allow_pickle=False)) "
    "or JSON. Masked scores are −∞: -inf in CSV, the string \"-inf\" in JSON."
)

BYO_INTRO = (
    "Look at attention weights from your own model with the same views: upload a .npy or "
    ".npz file holding an array of shape (t, t), (heads, t, t) or (layers, heads, t, t) — for "
    "example from a transformers model run with output_attentions=True — and, optionally, "
    "the tokens as a text file (one per line, or separated by spaces) or a JSON list."
)
BYO_HOWTO = (
    "weights = torch.stack(model(**inputs, output_attentions=True).attentions)[:, 0]\n"
    "np.savez('attention.npz', attention=weights.float().numpy(),\n"
    "         tokens=np.array(tokenizer.convert_ids_to_tokens(inputs['input_ids'][0])))"
)
BYO_EXAMPLE = (
    "Showing the example file shipped with attnviz: two layers of four-head self-attention on "
    "seed 004's sentence, made by attnviz/examples/make_example.py. Upload your own above."
)
BYO_SAFETY = (
    "Files are read as plain numbers: arrays of Python objects (pickles) are refused, and so "
    "is anything larger than the limits below."
)
BYO_DOWNSAMPLED = (
    "t = {t} is more than {limit} tokens: the heatmap shows {shown}×{shown} blocks of {f}×{f} "
    "tokens — how much attention a block's queries pay, on average, to the block's keys, so "
    "rows still sum to 1 (the hover names the token positions of a block). The CSV download "
    "holds the exact, full matrix."
)
# {t}, {shown}, {f}; then the page's own sentence on where the exact weights are
HEADS_POOLED = (
    "t = {t}: each head is shown as {shown}×{shown} blocks of {f}×{f} tokens, how much "
    "attention a block's queries pay on average to its keys (rows still sum to 1; the hover "
    "names a block's positions). "
)
HEADS_EXACT_PLAYGROUND = ("The exact weights of a head: Step by step, Trace a cell, or the "
                          "downloads below.")
HEADS_EXACT_BYO = "The exact weights of a head: pick it above, or download them."
BYO_LINE_VIEW_TOO_LONG = (
    "The line view draws at most {limit} tokens per side; focus on one query below to see "
    "its lines."
)
BYO_DIAGNOSTICS = (
    "Per query row: entropy H = −Σ α ln α (0 = all weight on one key, ln t = uniform), the "
    "effective number of keys exp(H), and the largest weight with its key."
)

# --- Hardening: limits and bad input (shared controls) ---------------------------------------
# {tokens}, {d_model}, {width}, {heads}, {chars} come from attnviz.scenarios.limits.
LIMITS_CAPTION = (
    "Limits: at most {tokens} tokens, d_model up to {d_model}, Q/K and V widths up to {width}, "
    "up to {heads} heads; token labels are cut to {chars} characters."
)
LIMITS_TOKENS_HELP = (
    "Up to {tokens} tokens, each at most {chars} characters. The same word may appear twice: "
    "labels are told apart by position (0:the, 4:the)."
)
# {n}, {dk}, {dv}, {shown}, {choices} are filled in by attnviz.ui.controls.
LIMITS_HEADS_REPLACED = (
    "This scenario asks for {n} heads, but the number of heads must divide the Q/K width "
    "({dk}) and the V width ({dv}); {shown} heads are used instead. Valid counts: {choices}."
)
LIMITS_MASKED_ROWS = (
    "Query row(s) {rows} (counting from 0) may attend to no key under this mask: their "
    "weights and outputs are all 0."
)
