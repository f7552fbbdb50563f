"""Words of the Gradients page (pages/gradients.py, keys ``gradients_``).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
The LaTeX formulas are chosen by :func:`attnviz.teach.backward.formulas` for the current
settings.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "LOSS_VALUE": ("value",),
    "KV_HEAD": ("g", "heads"),
    "SWEEP_CAPTION_SCALE": ("now",),
    "SWEEP_CAPTION_TEMPERATURE": ("now",),
    "TRACE_CHOSEN": ("query", "key"),
    "NO_BACKWARD": ("variant",),
}

HEADER = "Gradients: the backward pass"
INTRO = (
    "Training changes W_Q, W_K and W_V along the gradient of a loss. Pick a loss below: every "
    "matrix of the forward pass (left) is shown beside its gradient ∂L/∂· (right, blue < 0 < "
    "red, centred at 0), computed exactly for the current scenario and variant. A positive "
    "gradient means: increasing this entry increases the loss."
)
LOSS_LABEL = "Loss"
LOSS_NAMES = {
    "output_mse": "½‖O − T‖² (a target output T)",
    "pattern_ce": "cross-entropy to a target pattern",
    "given": "a given dO",
}
LOSS_HELP = (
    "½‖O − T‖²: the squared distance of the output to a target you edit (to start: the "
    "output each token would give attending only to itself). Cross-entropy: −Σ T_ij log P_ij "
    "for a target attention pattern T (rows normalised to sum to 1; with several heads the "
    "mean over the heads). Given dO: you set the upstream gradient of the output yourself "
    "(L = Σ O∘dO)."
)
PATTERN_LABEL = "Target pattern"
PATTERN_NAMES = {
    "previous": "attend to the previous token",
    "first": "attend to the first token",
    "self": "attend to itself (diagonal)",
    "same_word": "attend to the same word earlier (a first occurrence: itself)",
    "uniform": "uniform",
    "custom": "draw your own",
}
TARGET_TITLE = {
    "output_mse": "Target output T (to start: each token attending only to itself)",
    "pattern_ce": "Target pattern T (rows are normalised; a row of zeros asks nothing)",
    "given": "Upstream gradient dO",
}
# {value}: the loss, formatted
LOSS_VALUE = "Loss L = {value}"
FORWARD = "Forward"
BACKWARD = "Backward"
OUTPUT = "Output O"
WEIGHTS = "Weights P"
SCALED = "Softmax input S̃ (masked: −∞)"
Q_TITLE, K_TITLE, V_TITLE = "Q", "K", "V"
PARAMS_TITLE = "The weights the model learns"
PARAM_NAMES = {
    "w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O", "x": "X (embeddings)",
    "source_x": "source X", "q_in": "Q (given)", "k_in": "K (given)", "v_in": "V (given)",
    "w_a_q": "W_q (additive)", "w_a_k": "W_k (additive)", "v_a": "v_a (additive)",
}
# {g}: the key/value head, {heads}: the query heads sharing it
KV_HEAD = "key/value head {g} (sum over query heads {heads})"
SATURATION_TITLE = "Why √d_k, told with gradients"
SATURATION = (
    "Make the softmax sharper — a larger scale, or a smaller temperature τ — and the weights "
    "saturate: each row puts almost all its weight on one key, P ∘ (dP − rowsum(P ∘ dP)) is "
    "almost 0, and ‖dS̃‖ collapses — so W_Q and W_K stop learning. That is why the scores are "
    "divided by √d_k. (With the cross-entropy loss on the weights the log undoes the exp: "
    "dS̃ = P − T does not vanish, so the curve stays up; ties between keys also keep a floor.)"
)
SWEEP_SCALE_LABEL = "Scale (multiple of 1/√d_k)"
SWEEP_TEMPERATURE_LABEL = "Temperature τ"
# {now}: the value the scenario uses
SWEEP_CAPTION_SCALE = "‖dS̃‖ for each scale, everything else as now (the scenario uses {now})."
# {now}: the temperature the scenario uses
SWEEP_CAPTION_TEMPERATURE = (
    "This variant fixes its scale, so the sweep moves τ instead (the scenario uses τ = {now}).")
SWEEP_AXIS_SCALE = "scale factor"
SWEEP_AXIS_TEMPERATURE = "temperature τ"
SWEEP_AXIS_NORM = "‖dS̃‖ (Frobenius)"
SWEEP_SERIES = "‖dS̃‖"
SWEEP_HEATMAP = "dS̃ at the chosen value"
TRACE_TITLE = "Trace one gradient dS̃_ij"
# {query}, {key}: the chosen query and key labels
TRACE_CHOSEN = "query {query}, key {key}"
TRACE_MASKED = "This key is masked for this query: P_ij = 0, so dS̃_ij = 0 exactly."
TRACE_QUERY, TRACE_KEY = "Query i", "Key j"
# {variant}: the variant's name
NO_BACKWARD = "Gradients are not available for {variant} yet."
CANNOT = "Cannot compute the gradients"
