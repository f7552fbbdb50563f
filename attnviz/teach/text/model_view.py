"""Model view: every layer and head of a real model at a glance, one head opened, rollout.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "NO_TORCH": ("module",),
    "MODELS_OFF": ("env", "flag"),
    "MODELS_CAPTION": ("path",),
    "MODELS_EMPTY": ("path", "env"),
    "MODELS_TRUNCATED": ("n",),
    "CACHED_MODEL": ("name",),
    "CACHED_MODEL_REVISION": ("name", "revision"),
    "HUB_NOT_ALLOWED": ("env", "offline"),
    "TEXT_LIMIT": ("t", "chars"),
    "CANNOT_LOAD": ("reason",),
    "STARTING_TORCH": ("then",),
    "SHOWING": ("source", "layers", "heads", "t", "kind"),
    "MEMORY": ("bytes",),
    "WARNING": ("warning",),
    "TILE_HOVER": ("layer", "h", "query", "key", "weight", "top", "mean"),
    "LAYER_HOVER": ("layer", "query", "key", "weight", "top", "mean"),
    "LAYER_TICK": ("i",),
    "HEAD_TICK": ("h",),
    "OPENED_TITLE": ("layer", "h"),
    "AGGREGATE_TILE": ("i",),
    "ROLLOUT_CAPTION": ("r",),
    "KNOWN_ARCHITECTURES": ("names",),
    "TOO_MANY_VALUES": ("values", "limit"),
    "PAIR_ON_CAUSAL": ("model_type",),
    "NOT_A_CAPTURE": ("what",),
    "OTHER_VERSION": ("found", "expected"),
    "TAMPERED": ("what",),
    "TAMPERED_WHY": ("name", "reason", "n", "layers", "indices", "t"),
    "HUB_NAME": ("name",),
    "HUB_FAILED": ("name", "reason"),
    "HUB_TOO_LARGE": ("name", "gib", "limit"),
    "DIRECTORY_NAME": ("name",),
    "CACHED_SOURCE_NAME": ("name",),
    "HUB_SOURCE_NAME": ("name",),
    "UPLOAD_NAME": ("name",),
    "REAL_OPEN_BUTTON": ("layer", "h"),
    "REAL_CANNOT_OPEN": ("reason",),
    "REAL_OPENED": ("layer", "h"),
    "REAL_HEAD_TITLE": ("model_type", "layer", "h"),
    "REAL_HEAD_DESCRIPTION": ("layer", "kv", "variant", "scale"),
    "REAL_BIAS_NOTE": ("d_model",),
    "REAL_NORM_ACROSS_NOTE": ("width", "d_k"),
    "REAL_RELATIVE_NOTE": ("c",),
    "REAL_CHANGED": ("now", "then"),
    "CROSS_SHOWING": ("source", "layers", "heads", "t", "t_s"),
    "CROSS_HEAD_TITLE": ("layer", "h"),
    "REAL_CROSS_TITLE": ("model_type", "layer", "h"),
    "REAL_CROSS_DESCRIPTION": ("layer", "scale"),
    "KIND_SOURCE": ("source", "kind"),
    "KIND_GRID_TITLE": ("kind",),
    "KIND_OPENED_TITLE": ("layer", "h", "kind"),
    "KIND_REAL_OPENED": ("layer", "h", "kind"),
    "REAL_KIND_TITLE": ("model_type", "kind", "layer", "h"),
}

TITLE = "Model view"
INTRO = (
    "Every layer and every head of a real model at once: one small heatmap per head (queries "
    "down, keys across, the same 0–1 colour scale for all). Hover a thumbnail for its tokens, "
    "click it to open that head below: its lines, BertViz-style, and its full heatmap. Then "
    "the heads of each layer fused (mean or max) and the attention rollout across layers."
)

SOURCE_LABEL = "Attention from"
# The choices of the source radio
SOURCES = {
    "example": "the example file",
    "upload": "a captured file (.npz)",
    "directory": "a model of the models folder",
    "hub": "the Hugging Face Hub (downloads)",
}
# {module}: the package that is not installed (torch or transformers)
NO_TORCH = (
    "Loading a model needs torch and transformers; {module} is not installed here. "
    "Install them, in the attnviz folder, with: .venv/bin/python -m pip install '.[models]' "
    "— or capture elsewhere with "
    "attnviz.io.capture.save_capture and upload the .npz file (no torch needed to view it)."
)
# {env}: the environment variable that turned model loading off; {flag}: the start command's
# option that keeps it on for a server other computers reach
MODELS_OFF = (
    "Model loading is off on this server ({env}=1): other computers can reach it, and it was "
    "started without {flag}. Upload a captured .npz file instead."
)
MODELS_LABEL = "Model"
# {path}: the models folder
MODELS_CAPTION = (
    "The models folder {path}: each folder in it written by save_pretrained (model and "
    "tokenizer) is offered here. Nothing outside it is read."
)
# {path}: the models folder; {env}: the setting that chooses another folder
MODELS_EMPTY = (
    "The models folder {path} holds no model yet. Save one in a folder of its own there "
    "(model.save_pretrained(folder) and tokenizer.save_pretrained(folder)), or choose another "
    "folder with {env}, then reload this page."
)
# {n}: the most folder entries looked at
MODELS_TRUNCATED = (
    "The models folder holds many entries: only the first {n} were looked at, so some models "
    "may be missing from the list."
)
# {name}: the Hub name of a model of the local Hugging Face cache
CACHED_MODEL = "{name} (Hugging Face cache)"
# {name}: the Hub name of a cached model; {revision}: the cached revision's first characters
CACHED_MODEL_REVISION = "{name} (Hugging Face cache, revision {revision})"
HUB_NAME_LABEL = "Model name on the Hub (owner/name)"
HUB_CAPTION = (
    "The model is downloaded from the Hub (safetensors weights only), after its size has been "
    "checked from its config. Nothing is taken from this machine's cache by name: when the "
    "Hub cannot be reached, nothing is loaded (models already in the cache are in the models "
    "list when the server offers the cache)."
)
TEXT_LABEL = "Text"
TEXT_B_LABEL = ("Second sentence (encoder models such as BERT; leave empty for one text), or "
                "the target an encoder–decoder model such as T5 or BART writes (the first "
                "text is then its source)")
DEFAULT_TEXT = "the cat sat on the mat"
# {t}: the most tokens captured; {chars}: the most characters typed
TEXT_LIMIT = "At most {t} tokens (and {chars} characters) are captured."
CAPTURE_BUTTON = "Capture attention"
UPLOAD_LABEL = "Captured attention (.npz from save_capture, or any (n_layers, n_heads, t, t))"
LOADING = "Loading the model and running it once…"
# said instead of any loading message while this server has not imported PyTorch yet
# {then}: the loading message itself, lower-cased
STARTING_TORCH = ("Starting PyTorch: the first model this server loads waits up to half a minute "
                  "for it; then {then}")
# {reason}: what is wrong, a sentence without its full stop
CANNOT_LOAD = "Nothing was loaded: {reason}. The view below is unchanged."
# {source}: where the attention came from; {layers}, {heads}: counts; {t}: tokens;
# {kind}: CAUSAL or BIDIRECTIONAL
SHOWING = "{source}: {layers} layers × {heads} heads, {t} tokens, {kind}."
CAUSAL = "causal (queries see only earlier keys: the upper triangle is blank)"
BIDIRECTIONAL = "bidirectional"
# {bytes}: the captured arrays' size, formatted with thousands separators
MEMORY = (
    "This session keeps only the captured weights: {bytes} bytes. The model itself is "
    "released right after its forward pass."
)
# {warning}: a warning about the file, a sentence without its full stop
WARNING = "{warning}."
EXAMPLE_NAME = "The example file"
# {name}: the model's folder in the models folder
DIRECTORY_NAME = "Model {name}"
# {name}: the Hub name of a model of the local Hugging Face cache
CACHED_SOURCE_NAME = "Model {name} from the Hugging Face cache"
# {name}: the Hub model's name
HUB_SOURCE_NAME = "Hub model {name}"
# {name}: the uploaded file's name
UPLOAD_NAME = "File {name}"

GRID_TITLE = "Every layer and head"
GRID_CAPTION = (
    "Rows are layers (0 nearest the input), columns heads. One colour scale, 0 to 1, for every "
    "thumbnail. Click a thumbnail to open its head."
)
PAIR_CAPTION = "A white line in every matrix marks where the second sentence starts."
# {layer}, {h}: the thumbnail's layer and head; {query}, {key}, {weight}: its strongest link;
# {top}: the key attended most on average; {mean}: that average weight
TILE_HOVER = (
    "layer {layer} · head {h}<br>strongest: {query} → {key} ({weight})<br>"
    "most attended: {top} (mean {mean})<br>click to open"
)
# {layer}: a layer; {query}, {key}, {weight}: its strongest link; {top}: the key attended
# most on average; {mean}: that average weight
LAYER_HOVER = (
    "layer {layer}<br>strongest: {query} → {key} ({weight})<br>most attended: {top} (mean {mean})"
)
# {i}: a layer's index (row label of the grid)
LAYER_TICK = "L{i}"
# {h}: a head's index (column label of the grid)
HEAD_TICK = "H{h}"
COLOUR_BAR = "weight"
OPEN_LAYER_LABEL = "Open layer"
OPEN_HEAD_LABEL = "Open head"
# {layer}, {h}: the opened head
OPENED_TITLE = "Layer {layer}, head {h}"
FOCUS_LABEL = "Highlight the links of a token"
NO_FOCUS = "every token"
FOCUS_CAPTION = (
    "The lines of the chosen token (or click a token's dot). Hovering a dot names it."
)
LINES_TOO_LONG = "The line view draws at most 64 tokens a side without a focus; pick a token."
HEATMAP_TITLE = "Weights of this head"

AGGREGATE_TITLE = "Heads of each layer fused"
AGGREGATE_LABEL = "Fuse the heads by"
AGGREGATE_CHOICES = {"mean": "mean (rows still sum to 1)",
                     "max": "max (each cell: its strongest head)"}
# {i}: a layer's index (column label of the fused row)
AGGREGATE_TILE = "L{i}"
ROLLOUT_TITLE = "Attention rollout across layers"
# {r}: the weight of the residual path
ROLLOUT_CAPTION = (
    "Abnar & Zuidema (2020): each layer's heads averaged, the residual path added as "
    "attention to oneself (A′ = {r}·I + (1 − {r})·A, rows renormalised), and the layers "
    "multiplied from the input up. Row i: how much of position i's mix after the last layer "
    "comes from each input token. The row of cumulative rollouts shows it layer by layer."
)
ROLLOUT_FINAL = "Rollout after the last layer"
AXIS_QUERY = "position (after the layers)"
AXIS_KEY = "input token"

# {names}: the architectures transformers knows, comma-separated
KNOWN_ARCHITECTURES = "Architectures this installation can load: {names}."
# {values}: weights the capture holds; {limit}: the most the page keeps
TOO_MANY_VALUES = (
    "the capture holds {values:,} weights (layers·heads·t·t); this page keeps at most {limit:,} "
    "— capture a shorter text"
)
# {model_type}: the model's architecture
PAIR_ON_CAUSAL = (
    "a second sentence is for encoder models (BERT-style segments); this {model_type} model "
    "is causal — put the whole text in the first box"
)
EMPTY_TEXT = "the text is empty; type a sentence to capture"
NO_FOLDER = "no model was chosen; pick one from the models folder's list"
# {what}: what the file lacks or holds
NOT_A_CAPTURE = "the file is not an attention capture: {what}"
# {found}: the file's capture format; {expected}: the format this version reads
OTHER_VERSION = (
    "the file was written by another version of attnviz (capture format {found}; this version "
    "reads format {expected}) — capture it again with this version"
)
# {what}: which part of the file contradicts the rest (one of TAMPERED_WHY)
TAMPERED = "the file has been changed after it was captured: {what}"
# Why a capture looks tampered with. {name}: an array of the file; {reason}: why it cannot be
# read, a sentence without its full stop (about "it", the array); {n}: how many it holds;
# {layers}: the weights' layers; {indices}: the layer indices it lists (the first 8);
# {t}: the weights' tokens
TAMPERED_WHY = {
    "unreadable": "its {name} array cannot be read: {reason}",
    "missing": "its {name} array is missing",
    "tokens": "its token labels do not match the weights",
    "is_causal": "is_causal is not one true/false value",
    "layers": "it lists {n} layer indices for {layers} layers",
    "layer_range": "its layer indices ({indices}) include a negative one; layers count from 0",
    "layer_order": (
        "its layer indices ({indices}) do not increase; a capture lists the layers it keeps "
        "in increasing order, each once"
    ),
    "input_ids": "it holds {n} token ids for {t} tokens",
    "segments": "its segments are not one 0 or 1 for each of the {t} tokens",
    "rows": "its rows of weights do not sum to 1",
    "causal": "it says causal, yet queries attend to later keys",
}
# {name}: the name typed
HUB_NAME = (
    "{name} is not a Hub model name; give owner/name (letters, digits, '-', '_', '.')"
)
# {name}: the Hub model's name; {reason}: the Hub's first line of error
HUB_FAILED = (
    "{name} cannot be fetched from the Hub ({reason}); nothing is loaded from the local cache "
    "by name"
)
# {env}: the setting that allows the Hub; {offline}: the variable that keeps the Hub off
HUB_NOT_ALLOWED = (
    "this server does not download from the Hub: start it with {env}=1 and without {offline}"
)
# {name}: the Hub model's name; {gib}: its parameters' size; {limit}: the most allowed
HUB_TOO_LARGE = (
    "{name} needs about {gib:.2f} GiB for its parameters in float32; at most {limit:.2f} GiB "
    "are allowed"
)

# --- Opening a head of a model from a folder on every page ---------------------------------
REAL_OPEN_TITLE = "Open this head on every page"
REAL_OPEN_CAPTION = (
    "Makes the chosen head the current scenario, with the model's own numbers: x (the hidden "
    "states entering the layer's attention, after its input norm), the head's W_Q, the W_K and "
    "W_V of the key/value head it reads, its rows of W_O, the model's scale, RoPE, mask, window "
    "and soft-cap. The model is loaded again from its folder for this (the page keeps only the "
    "weights). Step by step, Trace a cell, Gradients and Compare then show that head, and its "
    "weights can be edited there."
)
# {layer}, {h}: the layer and head chosen above
REAL_OPEN_BUTTON = "Open layer {layer}, head {h} on every page"
OPENING = "Loading the model again and reading the layer…"
# {reason}: why (a sentence from the adapter or the scenario, without its final full stop)
REAL_CANNOT_OPEN = "This head cannot be opened: {reason}. The current scenario is unchanged."
NO_INPUTS = (
    "A captured file holds the attention probabilities only, not the layer's inputs and "
    "weights, so its heads cannot be opened on the other pages. Load the model from its folder "
    "(\"a model of the models folder\" above) to open a head."
)
# {layer}, {h}: the head opened
REAL_OPENED = "Layer {layer}, head {h} is now the current scenario. Open it on:"
REAL_OPEN_PAGES = {"pages/step_by_step.py": "Step by step", "pages/trace.py": "Trace a cell",
                   "pages/gradients.py": "Gradients",
                   "pages/compare.py": "Compare"}  # app.py's titles
# {model_type}: config.model_type; {layer}, {h}: the head
REAL_HEAD_TITLE = "{model_type} layer {layer}, head {h}"
# {layer}: its layer; {kv}: the key/value head it reads; {variant}: the variant's name;
# {scale}: the scale factor
REAL_HEAD_DESCRIPTION = (
    "x is the hidden state entering layer {layer}'s attention; K and V come from key/value "
    "head {kv}; {variant}, scale {scale:.6g}."
)
# {d_model}: the model's hidden size (x's last column, labelled d{d_model}, counting from 0)
REAL_BIAS_NOTE = (
    "Bias trick: x's last column, d{d_model}, is a constant 1 and row d{d_model} of W_Q, W_K "
    "and W_V holds the model's bias, so x·W gives x·W + b exactly."
)
# {width}: the width the model's QK-norm runs over (all heads); {d_k}: one head's width
REAL_NORM_ACROSS_NOTE = (
    "QK-norm across heads: the model normalises q and k over all heads together ({width} "
    "dimensions, this head's {d_k} among them). The other heads' share of each row's mean "
    "square is held fixed as the model computed it from this text, so an edit of W_Q, W_K or x "
    "here changes only this head's own share."
)
# {c}: the factor the model multiplies its relative terms by, 1/√(d_k·(1 + terms))
REAL_RELATIVE_NOTE = (
    "Relative positions: each score gets c·(q_i·K^r + k_j·Q^r), c = {c}, where K^r and Q^r are "
    "the layer's relative position embeddings projected by the model's own projections of "
    "positions and picked by the distance i − j. They are held as the model computed them: an "
    "edit of W_Q, W_K or x here changes q and k, not K^r and Q^r, and the scale and τ change "
    "q·k only."
)
# {now}, {then}: the tokens the model gives now and those captured (short)
REAL_CHANGED = (
    "the folder's model or tokenizer has changed since the capture (tokens {now} now, {then} "
    "then); capture again"
)


# --- An encoder–decoder model's three kinds of attention ---------------------------------------
KIND_LABEL = "Attention"
# kind -> its name (attnviz.io.capture.SEQ2SEQ_KINDS)
KINDS = {"encoder": "Encoder self-attention (source × source)",
         "decoder": "Decoder self-attention (target × target, causal)",
         "cross": "Cross-attention (target × source)"}
# {source}: where it came from; {layers}, {heads}: the decoder's; {t}: decoder tokens;
# {t_s}: source tokens
CROSS_SHOWING = ("{source}: cross-attention of {layers} decoder layers × {heads} heads, {t} "
                 "target tokens over {t_s} source tokens.")
# kind -> how titles and captions name it
KIND_NAMES = {"encoder": "encoder self-attention", "decoder": "decoder self-attention",
              "cross": "cross-attention"}
# {source}: where the weights came from; {kind}: a KIND_NAMES value
KIND_SOURCE = "{source}, {kind}"
# {kind}: a KIND_NAMES value
KIND_GRID_TITLE = "Every layer and head of the {kind}"
# {kind}: a KIND_NAMES value; {layer}, {h}: the head
KIND_OPENED_TITLE = "Layer {layer}, head {h} of the {kind}"
# {kind}: a KIND_NAMES value; {layer}, {h}: the head opened
KIND_REAL_OPENED = ("Layer {layer}, head {h} of the {kind} is now the current scenario. Open it "
                    "on:")
# {model_type}: config.model_type; {kind}: a KIND_NAMES value; {layer}, {h}: the head
REAL_KIND_TITLE = "{model_type} {kind} layer {layer}, head {h}"
# the pages that show an opened cross-attention head (app.py's titles)
REAL_CROSS_OPEN_PAGES = {"pages/encoder_decoder.py": "Encoder–decoder & additive",
                         "pages/step_by_step.py": "Step by step", "pages/trace.py": "Trace a cell",
                         "pages/gradients.py": "Gradients"}
# {layer}, {h}: the head shown
CROSS_HEAD_TITLE = "Cross-attention, layer {layer}, head {h}"
CROSS_CAPTION = ("Rows are the decoder's input (its start token, then the target: row i is the "
                 "step that writes target token i), columns the source tokens the encoder "
                 "read; each row sums to 1.")
AXIS_TARGET_QUERY = "target (query)"
AXIS_SOURCE_KEY = "source (key)"
REAL_CROSS_OPEN_CAPTION = (
    "Makes the chosen cross-attention head the current scenario, with the model's own numbers: "
    "x (the decoder's hidden states entering the cross-attention), the source (the encoder's "
    "output, which K and V are projected from), the head's W_Q, W_K, W_V, its rows of W_O and "
    "the model's scale (T5: 1, no position bias; BART: 1/√d_k). The Encoder–decoder page, Step "
    "by step and Trace a cell then show that head."
)
# {model_type}: config.model_type; {layer}, {h}: the head
REAL_CROSS_TITLE = "{model_type} cross-attention layer {layer}, head {h}"
# {layer}: its decoder layer; {scale}: the scale factor
REAL_CROSS_DESCRIPTION = (
    "x is the decoder's hidden state entering layer {layer}'s cross-attention; the source is "
    "the encoder's output; cross-attention, scale {scale:.6g}."
)
# An encoder–decoder capture file's decoder side, as its refusals name it
TARGET_TOKENS = "the target tokens"
TARGET_NOT_LABELS = "the target tokens are not a list of text labels"
DECODER_SIDE = "decoder_attention or cross_attention"
