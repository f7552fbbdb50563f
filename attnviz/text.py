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
