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
    "mask": ("Mask", r"M_{ij} = \text{True} \iff \text{query } i \text{ may attend to key } j",
             "Blue ✓ = may attend, grey ✕ = masked (its score becomes −∞)."),
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

# --- Step by step and Masks pages ------------------------------------------------------------

STEP_INTRO = (
    "Follow one query through the whole computation with the numbers of the current scenario: "
    "its dot product with every key, the scale and temperature, the mask, the softmax written "
    "out (subtract the row maximum, exponentiate, divide by the row sum) and the weighted sum "
    "of the values. These are the same steps the seed notebooks print for their first word."
)
STEP_DIRECT = (
    "This scenario gives Q, K and V directly (seed 001 and seed 004 do this). Edit them here; "
    "every page uses the edited values."
)
STEP_PICK = (
    "Pick the query whose row you want to follow; the weights map shows every query's row, "
    "this one outlined."
)
STEP_WITH_PE = "Positional encoding is on: x_i here is the embedding plus its position code."
STEP_MULTI_HEAD = (
    "Each head runs the same steps on its own column block of Q, K and V. Pick a head; the heads' "
    "outputs are then concatenated and projected by W_O (see the Multi-head page)."
)
# (title, LaTeX formula) of each step of scaled dot-product attention for query i.
STEP_FORMULAS = {
    "q": ("1. The query", r"q_i = x_i W_Q"),
    "q_head": ("1. The query (this head's columns)", r"q_i^{(h)} = x_i W_Q^{(h)}"),
    "q_direct": ("1. The query", r"q_i = \text{row } i \text{ of } Q \text{ (given directly)}"),
    "scores": ("2. Dot product with every key", r"s_{ij} = q_i \cdot k_j = \sum_m q_{im}\,k_{jm}"),
    "scaled": ("3. Scale and temperature",
               r"s'_{ij} = s_{ij} \times \text{scale} \div \tau"),
    "masked": ("4. Mask", r"s''_{ij} = \begin{cases} s'_{ij} & \text{if } M_{ij}\\ -\infty & "
               r"\text{otherwise}\end{cases}"),
    "softmax": ("5. Softmax over the keys",
                r"\alpha_{ij} = \frac{e^{s''_{ij} - m_i}}{\sum_{j'} e^{s''_{ij'} - m_i}},\quad "
                r"m_i = \max_{j} s''_{ij}"),
    "output": ("6. Weighted sum of the values", r"o_i = \sum_j \alpha_{ij}\, v_j"),
}
STEP_SOFTMAX_NOTE = (
    "Subtracting the row maximum m_i changes nothing in the result (it cancels in the fraction) "
    "but keeps exp from overflowing; exp(−∞) = 0, so masked keys get weight 0."
)
# (title, LaTeX formula) of each step of additive (Bahdanau) attention for query i.
ADDITIVE_STEP_FORMULAS = {
    "proj": ("1. Project the query and every key into the alignment space",
             r"a_i = x_i W_q,\qquad b_j = k_j W_k"),
    "features": ("2. Features: tanh of their sum", r"f_{ij} = \tanh(a_i + b_j)"),
    "scores": ("3. Score with v_a", r"e_{ij} = v_a \cdot f_{ij} = \sum_m v_{a,m}\, f_{ijm}"),
    "masked": ("4. Mask", r"e''_{ij} = \begin{cases} e_{ij} & \text{if } M_{ij}\\ -\infty & "
               r"\text{otherwise}\end{cases}"),
    "softmax": ("5. Softmax over the keys",
                r"\alpha_{ij} = \frac{e^{e''_{ij} - m_i}}{\sum_{j'} e^{e''_{ij'} - m_i}},\quad "
                r"m_i = \max_{j} e''_{ij}"),
    "output": ("6. Context: weighted sum of the values", r"c_i = \sum_j \alpha_{ij}\, v_j"),
}
STEP_FULLY_MASKED = (
    "Every key of this query is masked: all its scores are −∞, exp gives 0 everywhere and the "
    "row sum is 0. "
)

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
MHA_HEAD_OUTPUTS = "Each head's output O_h = A_h V_h (shared colour scale across the heads)."
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
