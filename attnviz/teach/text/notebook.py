"""attnviz.show in a Jupyter notebook: the captions above its figures and its refusals.

The model view's own words (the grid's ticks, hover and colour bar, causal or bidirectional)
come from :mod:`attnviz.teach.text.model_view`, as on the Model view page.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "CAPTURE_SOURCE": ("model_type", "sequence"),
    "TILE_HOVER": ("layer", "h", "query", "key", "weight", "top", "mean"),
    "SCENARIO_CAPTION": ("title", "t_q", "t_k", "heads"),
    "RESULT_CAPTION": ("kind", "t_q", "t_k", "heads"),
    "NOT_SHOWN": ("what",),
    "NO_SEQUENCE": ("sequence", "n", "last"),
    "SEQUENCE_WITHOUT_CAPTURE": ("what",),
    "BAD_TOKENS": ("what",),
    "BAD_CAUSAL": ("what",),
    "LAYER_SHAPES": ("shapes",),
    "LAYER_BATCH": ("layer", "shape"),
    "NOT_ARRAY": ("what", "reason"),
}

# {model_type}: the captured model's model_type ("bert", "gpt2", ...); {sequence}: which
# sequence of the batch is shown
CAPTURE_SOURCE = "A capture of {model_type} (sequence {sequence})"
ARRAY_SOURCE = "The weights given"
UNKNOWN_MODEL = "a model of no model_type"
# the Model view's hover of a thumbnail, without "click to open" (a notebook opens no head):
# {layer}, {h}: the thumbnail's layer and head; {query}, {key}, {weight}: its strongest link;
# {top}: the key attended most on average; {mean}: that average weight
TILE_HOVER = (
    "layer {layer} · head {h}<br>strongest: {query} → {key} ({weight})<br>"
    "most attended: {top} (mean {mean})"
)
# {title}: the scenario's title; {t_q}, {t_k}: queries and keys; {heads}: heads drawn
SCENARIO_CAPTION = "{title}: the attention weights, {t_q} queries × {t_k} keys, {heads} head(s)."
# {kind}: the result's class name; {t_q}, {t_k}: queries and keys; {heads}: heads drawn
RESULT_CAPTION = "{kind}: the attention weights, {t_q} queries × {t_k} keys, {heads} head(s)."
# shown in the output's place when the browser cannot unpack the embedded plotly.js
NO_UNPACK = ("This browser cannot unpack the plotly.js embedded in this output (it needs "
             "DecompressionStream, in every browser since 2023); open the notebook in a newer "
             "browser.")

# --- refusals (sentences for ValueError / TypeError) ----------------------------------------
# {what}: the type of what was given
NOT_SHOWN = (
    "attnviz.show draws a Capture (attnviz.io.capture), attention weights of shape (t, t), "
    "(n_heads, t, t) or (n_layers, n_heads, t, t) (an array, a tensor, an UploadedAttention, or "
    "Hugging Face's outputs.attentions), a Scenario, a Preset, a ScenarioResult or a core "
    "result; got {what}")
# {sequence}: the sequence asked for; {n}: sequences in the capture; {last}: n − 1
NO_SEQUENCE = "sequence {sequence} does not exist; the capture holds {n} (0 to {last})"
# {what}: the type of what was given
SEQUENCE_WITHOUT_CAPTURE = "sequence= picks a sequence of a Capture; {what} has none"
# {what}: what is wrong with the tokens
BAD_TOKENS = "tokens must be a list of strings, one per token; {what}"
# {what}: the value given
BAD_CAUSAL = "causal must be True, False or None (None: decided from the weights); got {what}"
SCENARIO_TOKENS = ("tokens= and causal= apply to attention weights; a scenario or a result "
                   "carries its own tokens and mask")
# {shapes}: the layers' shapes, comma-separated
LAYER_SHAPES = ("the layers have attention of different shapes ({shapes}); every layer must "
                "be (n_heads, t, t) or (1, n_heads, t, t)")
# {layer}: the layer's index; {shape}: its shape
LAYER_BATCH = ("layer {layer} has attention of shape {shape}; give one sequence: "
               "(n_heads, t, t), or (1, n_heads, t, t) with a batch of one")
# {what}: the type given; {reason}: why it cannot be read, a sentence without its full stop
NOT_ARRAY = "the weights ({what}) cannot be read as an array of numbers: {reason}"
