"""TODO"""

from __future__ import annotations

INTRO = (
    "Look at attention weights from your own model with the same views: upload a .npy or "
    ".npz file holding an array of shape (t, t), (heads, t, t) or (layers, heads, t, t) — for "
    "example from a transformers model run with output_attentions=True — and, optionally, "
    "the tokens as a text file (one per line, or separated by spaces) or a JSON list."
)

HOWTO = (
    "weights = torch.stack(model(**inputs, output_attentions=True).attentions)[:, 0]\n"
    "np.savez('attention.npz', attention=weights.float().numpy(),\n"
    "         tokens=np.array(tokenizer.convert_ids_to_tokens(inputs['input_ids'][0])))"
)

EXAMPLE = (
    "Showing the example file shipped with attnviz: two layers of four-head self-attention on "
    "seed 004's sentence, made by attnviz/examples/make_example.py. Upload your own above."
)

SAFETY = (
    "Files are read as plain numbers: arrays of Python objects (pickles) are refused, and so "
    "is anything larger than the limits below."
)

DOWNSAMPLED = (
    "t = {t} is more than {limit} tokens: the heatmap shows {shown}×{shown} blocks of {f}×{f} "
    "tokens — how much attention a block's queries pay, on average, to the block's keys, so "
    "rows still sum to 1 (the hover names the token positions of a block). The CSV download "
    "holds the exact, full matrix."
)

HEADS_EXACT = "The exact weights of a head: pick it above, or download them."

LINE_VIEW_TOO_LONG = (
    "The line view draws at most {limit} tokens per side; focus on one query below to see "
    "its lines."
)

DIAGNOSTICS = (
    "Per query row: entropy H = −Σ α ln α (0 = all weight on one key, ln t = uniform), the "
    "effective number of keys exp(H), and the largest weight with its key."
)
