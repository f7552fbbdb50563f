"""Your own attention: upload weights (.npy/.npz) and tokens, explore them with the same views.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "DOWNSAMPLED": ("t", "limit", "shown", "f"),
    "LINE_VIEW_TOO_LONG": ("limit",),
    "LIMITS": ("mb", "t", "heads", "layers", "values"),
    "CANNOT_SHOW": ("reason",),
    "TOKENS_NOT_USED": ("reason",),
    "WARNING": ("warning",),
    "SHAPE": ("shape", "layers", "heads", "t"),
    "LAYER_NAME": ("i",),
    "SELECTION": ("layer", "head"),
    "WEIGHTS_TITLE": ("name",),
    "EVERY_HEAD_TITLE": ("layer",),
    "HEADS_RANGE": ("first", "last", "n_heads"),
    "HEAD_FIGURE": ("layer", "h"),
    "LINE_VIEW_FIGURE": ("layer",),
    "REPORT_NOTE": ("layers", "heads", "tokens", "name"),
}

INTRO = (
    "Look at attention weights from your own model with the same views: upload a .npy or "
    ".npz file holding an array of shape (t, t), (n_heads, t, t) or (n_layers, n_heads, t, t) — "
    "for example captured from a transformers model with attnviz's capture (below) — and, "
    "optionally, the tokens as a text file (one per line, or separated by spaces) or a JSON list."
)

# Runs as written (tests/io/test_capture.py executes it on a tiny saved model). Needs the extra:
# .venv/bin/python -m pip install '.[models]' in the attnviz folder. The model folder is a
# save_pretrained output, read offline.
HOWTO = (
    "# in the attnviz folder: .venv/bin/python -m pip install '.[models]'   (torch, transformers)\n"
    "from attnviz.io.capture import capture, load_model, save_capture\n"
    "\n"
    "model, tokenizer = load_model('path/to/model')  # a save_pretrained folder, offline\n"
    "cap = capture(model, tokenizer, text='the cat sat on a mat')  # eager, no gradients\n"
    "save_capture(cap, 'attention.npz')  # upload this file here"
)

EXAMPLE = (
    "Showing the example file shipped with attnviz: two layers of four-head self-attention on "
    "seed 004's sentence, made by attnviz/examples/make_example.py. Upload your own above."
)

SAFETY = (
    "Files are read as plain numbers: arrays of Python objects (pickles) are refused, and so "
    "is anything larger than the limits below."
)

# {t}: tokens in the file; {limit}: the most cells a side drawn; {shown}: blocks a side;
# {f}: tokens a block side
DOWNSAMPLED = (
    "t = {t} is more than {limit} tokens: the heatmap shows {shown}×{shown} blocks of {f}×{f} "
    "tokens — how much attention a block's queries pay, on average, to the block's keys, so "
    "rows still sum to 1 (the hover names the token positions of a block). The CSV download "
    "holds the exact, full matrix."
)

HEADS_EXACT = "The exact weights of a head: pick it above, or download them."

# {limit}: the most tokens a side the line view draws
LINE_VIEW_TOO_LONG = (
    "The line view draws at most {limit} tokens per side; focus on one query below to see "
    "its lines."
)

DIAGNOSTICS = (
    "Per query row: entropy H = −Σ α ln α (0 = all weight on one key, ln t = uniform), the "
    "effective number of keys exp(H), and the largest weight with its key."
)

TITLE = "Your own attention"
HOWTO_TITLE = "Saving attention from a transformers model"
WEIGHTS_UPLOAD = "Attention weights (.npy or .npz)"
TOKENS_UPLOAD = "Tokens, optional (.txt or .json)"
# {mb}: MB per file; {t}: tokens; {heads}: heads; {layers}: layers; {values}: values in all
LIMITS = (
    "Limits: {mb} MB per file, t ≤ {t} tokens, ≤ {heads} heads, ≤ {layers} layers, "
    "≤ {values:,} values in all."
)
# {reason}: what is wrong with the weights file
CANNOT_SHOW = "This file cannot be shown: {reason}."
# {reason}: what is wrong with the token file
TOKENS_NOT_USED = "The token file is not used: {reason}."
# {warning}: one warning about the files, as a sentence without its full stop
WARNING = "{warning}."
# {shape}: the array's shape in the file; {layers}, {heads}: "1 layer", "2 heads"; {t}: tokens
SHAPE = "Shape in the file {shape} → {layers} × {heads} × {t} × {t}"
LAYER_LABEL = "Layer"
# {i}: a layer's index
LAYER_NAME = "layer {i}"
MEAN_OF_HEADS = "mean of the heads"
# {layer}: the layer's name (LAYER_NAME); {head}: MEAN_OF_HEADS or common.HEAD_NAME
SELECTION = "{layer}, {head}"
# {name}: the layer and head shown (SELECTION)
WEIGHTS_TITLE = "Attention weights — {name}"
WEIGHTS_FORMULA = r"A_{ij} = \text{weight of key } j \text{ for query } i"
WEIGHTS_EXPLANATION = "Each row is one query's weights over the keys (0–1 scale)."
# {layer}: the layer's index
EVERY_HEAD_TITLE = "Every head of layer {layer}"
FIRST_HEAD_LABEL = "First head shown"
# {first}, {last}: the heads shown; {n_heads}: the heads of the layer
HEADS_RANGE = "Heads {first}–{last} of {n_heads}."
# {layer}, {h}: a thumbnail's layer and head (a figure of the HTML report)
HEAD_FIGURE = "Layer {layer}, head {h}"
LINE_VIEW_TITLE = "Line view"
FOCUS_LABEL = "Focus on a query"
ALL_QUERIES = "all queries"
# {layer}: the layer's index (a figure of the HTML report)
LINE_VIEW_FIGURE = "Line view — layer {layer}"
DIAGNOSTICS_TITLE = "Diagnostics"
ENTROPY_TITLE = "Entropy (nats) per head and query"
ENTROPY_FIGURE = "Entropy per head and query"
AXIS_HEAD = "head"
# Columns of the diagnostics table
COLUMNS = {"query": "query", "entropy": "entropy", "effective": "effective keys",
           "max_weight": "max weight", "argmax": "top key", "row_sum": "row sum"}
DOWNLOAD_TITLE = "Download"
REPORT_TITLE = "attnviz — your own attention"
# {layers}, {heads}, {tokens}: the file's sizes ("1 layer", "12 heads", "7 tokens");
# {name}: the layer and head shown (SELECTION)
REPORT_NOTE = "{layers} × {heads} × {tokens}; {name}"
