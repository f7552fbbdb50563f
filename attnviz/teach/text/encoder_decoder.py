"""Encoder–decoder & additive: cross-attention, Bahdanau's scores and attention pooling.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "ADDITIVE_WEIGHTS_TITLE": ("d_model", "d_a"),
    "POOLING_ERROR": ("reason",),
}

INTRO = (
    "Encoder–decoder attention reads from two sequences: the queries come from the target "
    "(the decoder, e.g. the French sentence being written) and the keys and values from the "
    "source (the encoder, e.g. the English sentence). Row i of the weights says where target "
    "token i looks in the source."
)

DIRECT = (
    "This scenario gives Q, K and V directly, as its seed notebook does. This page projects "
    "token embeddings with weight matrices, so it needs a scenario that has them:"
)

CROSS_FORMULA = (
    r"A = \mathrm{softmax}\!\left(\frac{(X_{\text{tgt}}W_Q)(X_{\text{src}}W_K)^\top}"
    r"{\sqrt{d_k}\,\tau}\right),\quad O = A\,X_{\text{src}}W_V"
)

CROSS = "Rows are target tokens (queries), columns source tokens (keys); each row sums to 1."

ADDITIVE = (
    "Bahdanau et al. (2014) score a pair with a small network instead of a dot product: project "
    "the target token and the source token into an alignment space of size d_a, add, apply tanh "
    "and take the dot product with v_a. The softmax over the source gives the weights and the "
    "context vector of each target token is the weighted sum of the source embeddings."
)

ADDITIVE_FORMULA = (
    r"e_{ij} = v_a^\top \tanh\!\left(x^{\text{tgt}}_i W_q + x^{\text{src}}_j W_k\right),\quad "
    r"\alpha_{ij} = \mathrm{softmax}_j(e_{ij}),\quad c_i = \sum_j \alpha_{ij}\, x^{\text{src}}_j"
)

POOLING = (
    "Seed 004's Keras Attention layer has no query at all: it scores each time step of one "
    "sequence (here the target tokens) with a weight vector w and a bias per step, and returns "
    "one context vector for the whole sequence (used there to classify a sentence)."
)

POOLING_FORMULA = (
    r"e_t = \tanh(x_t \cdot w + b_t),\quad \alpha_t = \frac{e^{e_t}}{\sum_{t'} e^{e_{t'}}},"
    r"\quad c = \sum_t \alpha_t\, x_t"
)

PE_ON = "Positional encoding is on: PE is added to the target and the source embeddings."

TITLE = "Encoder–decoder & additive attention"
INPUTS_TITLE = "Target and source sequences: tokens and embeddings"
TARGET_TITLE = "Target (queries, decoder side)"
SOURCE_TITLE = "Source (keys and values, encoder side)"
CROSS_WEIGHTS_TITLE = "W_Q, W_K, W_V of the cross-attention"
CROSS_TITLE = "Cross-attention"
AXIS_TARGET = "target"
AXIS_SOURCE = "source"
AXIS_TARGET_QUERY = "target (query)"
AXIS_SOURCE_KEY = "source (key)"
CROSS_WEIGHTS = "Weights A"
CROSS_OUTPUT = "Output O = A V"
ADDITIVE_TITLE = "Additive (Bahdanau) attention"
# {d_model}: the embedding width; {d_a}: the width of the alignment space
ADDITIVE_WEIGHTS_TITLE = "W_q, W_k (d_model × d_a = {d_model} × {d_a}) and v_a"
# The additive scorer's parameters: scenario field -> label (tab and editor)
ADDITIVE_PARAMETERS = {"w_a_q": "W_q", "w_a_k": "W_k", "v_a": "v_a"}
ADDITIVE_SCORES = "Scores eᵢⱼ"
ADDITIVE_WEIGHTS = "Weights αᵢⱼ"
ADDITIVE_CONTEXT = "Context vectors cᵢ"
POOLING_TITLE = "Attention pooling (seed 004's Keras layer)"
POOL_W = "w"
POOL_B = "b"
# {reason}: why the pooling cannot be computed (a ValueError's message)
POOLING_ERROR = "Cannot compute the attention pooling: {reason}."
POOL_SCORES = "Scores eₜ"
POOL_CONTEXT = "Context vector c"
POOL_WEIGHTS = "Weights αₜ"

# --- A real model's cross-attention --------------------------------------------------------------
REAL_TITLE = "Cross-attention of a real model"
REAL_NONE = (
    "Capture an encoder–decoder model (T5, BART, MarianMT, ...) on the Model view page — its "
    "first text is the source, its second the target — and its cross-attention shows here, "
    "one layer and head at a time, ready to open on every page."
)
REAL_LINK = "Model view"
