"""Home: the app's title, what attention is, what each page shows, the presets.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {}

TITLE = "attnviz — see every matrix of attention"

INTRO = (
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
    "KV cache & online softmax": "how a decoder computes attention with a KV cache, call by "
                                 "call; FlashAttention's online softmax tile by tile; sliding "
                                 "windows with attention sinks.",
    "RoPE, ALiBi, GQA & QK-norm": "rotary positions and why a shift changes nothing, ALiBi's "
                                  "bias per head, which key/value heads GQA shares and what the "
                                  "KV cache keeps, QK-norm's bounded logits.",
    "Trace a cell": "click any cell of the weights heatmap and follow α_ij back to q_i and k_j, "
                    "number by number (and through W_O for multi-head).",
    "Compare": "the same inputs under two settings side by side — scaled vs unscaled, causal "
               "vs bidirectional, 1 vs several heads, with vs without PE — and A − B.",
    "Pitfalls": "bugs real tutorials ship (and modern attention's classic slips), each "
                "computed wrong and right on the same inputs.",
    "Why √d_k": "random q and k for growing d_k: the variance of q·k grows and the unscaled "
                "softmax saturates; scaled, it does not.",
    "Line view": "BertViz-style head view: a line from each query to each key, as opaque as "
                 "its weight, one colour per head.",
    "Gradients": "the backward pass: every gradient beside its matrix, the formulas, one "
                 "dS̃_ij traced, and why saturated softmax stops learning.",
    "Learn": "train W_Q and W_K toward a pattern or a task and watch attention being learned, "
             "step by step in the browser.",
    "Induction heads": "a two-layer transformer learns to copy in context: watch a previous-token "
                       "head and an induction head form, ablate them, open any head on every "
                       "page.",
    "Quiz": "predict where each query looks before the weights are revealed.",
    "Your own attention": "upload your own model's attention weights and explore them with "
                          "the same views.",
    "Model view": "every layer and head of a real model as thumbnails (a model folder or a "
                  "captured file), one head opened as lines, heads fused, attention rollout.",
    "Generate": "a causal model of the models folder writes a few tokens: step through each new "
                "token's attention in every layer and head, the KV cache and the top-5 next "
                "tokens.",
    "Save & share": "the scenario as a file, a link or a QR code for the room; every matrix "
                    "as CSV, npz or JSON.",
}

OVERVIEW_TITLE = "What each page shows"
PRESETS_TITLE = "Start from a classroom demo"
LOAD = "Load"
