"""Strings several pages share, and those of the ``attnviz.ui`` helpers and ``attnviz.figures``.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations


def count(n: int, word: str) -> str:
    """``n`` and the noun: "1 token", "3 tokens" (``word`` is the singular; plural adds "s")."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"

FIELDS: dict[str, tuple[str, ...]] = {
    "SHARE_LINK_HELP": ("n", "limit"),
    "SHARE_NO_QR": ("n",),
    "HEADS_POOLED": ("t", "shown", "f"),
    "LIMITS_CAPTION": ("tokens", "d_model", "width", "heads", "chars"),
    "LIMITS_TOKENS_HELP": ("tokens", "chars"),
    "LIMITS_HEADS_REPLACED": ("n", "dk", "dv", "shown", "choices"),
    "LIMITS_MASKED_ROWS": ("rows",),
    "HEAD_NAME": ("h",),
    "VARIANT_SAME_AS": ("name",),
    "SIDEBAR_SCENARIO": ("variant", "tokens", "d_model"),
    "PAGE_BACK": ("title",),
    "PAGE_NEXT": ("title",),
    "TOKENS_NEW_VECTORS": ("words",),
    "TOKENS_REUSED_VECTORS": ("words",),
    "SIDEBAR_HEADS": ("heads",),
    "EDITOR_BAD_CELLS": ("label", "cells", "more"),
    "EDITOR_MORE": ("n",),
    "EDITOR_TYPED": ("typed",),
    "EDITOR_KEPT": ("value",),
    "MASK_EDITOR_BAD_SHAPE": ("rows", "cols"),
    "EDITOR_BAD_STATE": ("label", "reason"),
    "GRID_NOT_OBJECT": ("what",),
    "GRID_BAD_ROW": ("row",),
    "GRID_ROW_OUTSIDE": ("row", "last"),
    "GRID_BAD_CELLS": ("row",),
    "GRID_BAD_CELL": ("row", "col"),
    "GRID_BAD_TICK": ("row", "col"),
    "CHART_STATE_REFUSED": ("reason",),
    "CHART_STATE_BAD_POINTS": ("limit",),
    "MASK_EDITOR_BAD_STATE": ("reason",),
    "DIAGNOSTICS_INVALID": ("reason",),
    "DIAGNOSTICS_ENTROPY_HELP": ("max_entropy",),
    "SHARE_BAD_LINK_REASON": ("reason",),
    "SHARE_NO_LINK": ("reason",),
    "SHARE_REAL_HEAD_FILE": ("d", "limit"),
    "SHARE_CANNOT_SAVE": ("reason",),
    "SHARE_TOO_LARGE": ("size_mb", "limit"),
    "SHARE_UPLOAD_HELP": ("limit",),
    "SHARE_NOT_LOADED": ("reason",),
    "REPORT_FIGURE": ("n",),
    "REPORT_MADE": ("stamp",),
    "TOO_MANY_TOKENS": ("limit", "n"),
    "LABELS_CUT": ("chars",),
    "D_MODEL_HELP": ("limit",),
    "QK_WIDTH_HELP": ("limit",),
    "V_WIDTH_HELP": ("limit",),
    "CANNOT_COMPUTE": ("what", "reason"),
    "FIGURE_TITLE_COLUMNS": ("title", "columns"),
    "WEIGHTS_FROM_PRESET": ("title",),
    "WEIGHTS_FROM_INIT": ("kind", "seed"),
    "PARAM_VECTOR_GIVEN": ("label", "values"),
    "PARAM_STRUCTURED": ("label", "value"),
    "STEPS_MENU_REFUSED": ("reason",),
    "PARAM_VECTOR_GIVEN_HELP": ("n",),
    "PARAM_VECTOR_NONE": ("label",),
    "PARAM_OVERRIDDEN": ("label",),
    "PARAM_OVERRIDDEN_HELP": ("label",),
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
    "masked": ("Masked scores", r"S''_{ij} = \mathrm{mask}_M(S')_{ij} = \begin{cases} S'_{ij} & "
               r"M_{ij}\\ -\infty & \text{otherwise}\end{cases}",
               "Masked pairs get −∞, so exp(−∞) = 0 removes them from the softmax."),
    "weights": ("Attention weights", r"A_{ij} = \frac{e^{S''_{ij}}}{\sum_{j'} e^{S''_{ij'}}}",
                "Softmax over the keys: each row is positive and sums to 1."),
    "output": ("Output", r"O = A V", "Each row is the weighted average of the value rows."),
    "concat": ("Concatenated heads", r"\mathrm{Concat}(O_1, \dots, O_h)",
               "The heads' outputs side by side (np.hstack)."),
    "multi_head_output": ("Multi-head output", r"O = \mathrm{Concat}(O_1, \dots, O_h)\, W_O",
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

INIT_KINDS = {"randint": "random integers 0–2 (notebooks)", "normal": "normal N(0, 1)",
              "glorot_uniform": "Glorot uniform", "identity": "identity", "zeros": "zeros"}


MASKS_ALL_BLOCKED = (
    "Every cell of the mask is blocked: no query may attend to any key. All weights and all "
    "outputs are 0. The figures still show what happens."
)

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

# {reason}: why the scenario does not fit in a link (the core's words)
SHARE_NO_LINK = "No link for this scenario: {reason}."
# {n}: the link's length in characters; {limit}: the longest link allowed
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

# {t}, {shown}, {f}; then the page's own sentence on where the exact weights are
HEADS_POOLED = (
    "t = {t}: each head is shown as {shown}×{shown} blocks of {f}×{f} tokens, how much "
    "attention a block's queries pay on average to its keys (rows still sum to 1; the hover "
    "names a block's positions). "
)

# {tokens}, {d_model}, {width}, {heads}, {chars} come from attnviz.scenarios.limits.
LIMITS_CAPTION = (
    "Limits: at most {tokens} tokens, d_model up to {d_model}, Q/K and V widths up to {width}, "
    "up to {heads} heads; token labels are cut to {chars} characters."
)

# {tokens}, {chars}: as in LIMITS_CAPTION
LIMITS_TOKENS_HELP = (
    "Up to {tokens} tokens, each at most {chars} characters. The same word may appear twice: "
    "labels are told apart by position (0:the, 4:the)."
)

# {n}, {dk}, {dv}, {shown}, {choices} are filled in by attnviz.ui.controls.
LIMITS_HEADS_REPLACED = (
    "This scenario asks for {n} heads, but the number of heads must divide the Q/K width "
    "({dk}) and the V width ({dv}); it uses {shown} instead. Valid counts: {choices}."
)

# {rows}: the fully masked query rows, e.g. "0, 3"
LIMITS_MASKED_ROWS = (
    "Query row(s) {rows} (counting from 0) may attend to no key under this mask: their "
    "weights and outputs are all 0."
)

# --- Words every page shares (axis titles, head names) -------------------------------------

AXIS_QUERY = "query"
AXIS_KEY = "key"
AXIS_QUERIES = "queries"
AXIS_KEYS = "keys"
AXIS_POSITION = "position"
HEAD_LABEL = "Head"
HEADS_LABEL = "Heads"
SEED_LABEL = "Seed"
# {h}: a head's index, from 0
HEAD_NAME = "head {h}"
NO_VALUE = "—"  # a table cell with nothing in it (no key, no prediction)
# {name}: the name of the variant that computes exactly the same (Variant.same_as)
VARIANT_SAME_AS = (
    "Computes exactly what {name} computes: two names from two literatures for one formula."
)

# --- Sidebar (attnviz.ui.sidebar) -----------------------------------------------------------

SIDEBAR_PRESETS = "Presets"
SIDEBAR_PRESET_CHOICE = "Classroom demos"
SIDEBAR_LOAD = "Load preset"
SIDEBAR_LOAD_HELP = "Replaces the whole scenario (tokens, embeddings, weights, settings)"
# {words}: the new words, comma-separated (after a token list was typed)
TOKENS_NEW_VECTORS = (
    "New words get a vector seeded by the word itself (the same in every session): {words}. "
    "Edit them in the embeddings table."
)
# {words}: the repeated words, comma-separated
TOKENS_REUSED_VECTORS = "A repeated word reuses its first occurrence's vector: {words}."

SIDEBAR_CURRENT = "Current scenario"
# {variant}: the variant's name; {tokens}: count(t, "token"); {d_model}: the embedding width
SIDEBAR_SCENARIO = "{variant}\n{tokens} · d_model {d_model}"
# {heads}: count(n_heads, "head") (appended to SIDEBAR_SCENARIO for multi-head variants)
SIDEBAR_HEADS = " · {heads}"
SIDEBAR_PRESENTER = "Presenter mode"
# presenter mode's links to the neighbouring pages (attnviz/ui/page_nav.py); {title}: the page's
PAGE_BACK = "‹ {title}"
# {title}: the next page's title
PAGE_NEXT = "{title} ›"
PAGE_BACK_HELP = "The previous page (or press Page Up)"
# presenter mode: the buttons that pick the one map a page shows large (ui/one_map.py)
ONE_MAP_LABEL = "Map"
PAGE_NEXT_HELP = "The next page (or press Page Down)"
PRESENTER_INTRO = "About this page"  # a page's introduction, folded in presenter mode
SIDEBAR_PRESENTER_HELP = "Bigger type and figures, editors collapsed — for a projector"
SIDEBAR_PROJECTOR = "High-contrast colours"
SIDEBAR_PROJECTOR_HELP = ("Colour scales with a wider range of lightness and bold numbers, for "
                          "a washed-out projector: weights black (0) to yellow (1), signed "
                          "matrices deep blue (< 0), white (0), deep red (> 0)")

# --- Matrix and mask editors (attnviz.ui.editors, attnviz.ui.mask_editor) -------------------

# {label}: the editor's label; {cells}: the first bad cells, each with EDITOR_TYPED or
# EDITOR_EMPTY_CELL and EDITOR_KEPT; {more}: EDITOR_MORE or ""
EDITOR_BAD_CELLS = (
    "{label}: cell {cells}{more} is empty or not a finite number; its previous value is kept, "
    "and every chart uses it until you type a number there. Enter a number with a decimal "
    "point (e.g. 0.5, -2 or 1e-3; not 1,5)."
)
# {value}: the number a refused cell keeps (every digit)
EDITOR_KEPT = "(kept: {value})"
# {typed}: what was typed into a refused cell (its first characters)
EDITOR_TYPED = "typed as “{typed}”"
EDITOR_EMPTY_CELL = "left empty"
# {n}: how many more bad cells than the ones named
EDITOR_MORE = " and {n} more"
# Added to EDITOR_BAD_CELLS when a refused cell holds digits of another script (the digit policy)
EDITOR_FOREIGN_DIGITS = (
    "Digits of other scripts (١٢, １２, ...) are not read as numbers: type the digits 0-9."
)
# {rows}×{cols}: the mask's shape (t_q × t_k)
MASK_EDITOR_BAD_SHAPE = "The mask grid must be {rows}×{cols}; the previous mask is kept."
# What a grid's edits sent by the browser are refused for (attnviz.ui.grid.read_edits): a page
# never sends these, a hand-made client can. {label}: the editor's label; {reason}: one of the
# GRID_* sentences below
EDITOR_BAD_STATE = (
    "{label}: the grid sent edits attnviz cannot use ({reason}); every edit of this grid is "
    "ignored and the previous values are kept. Reload the page to start the grid again."
)
# {what}: GRID_EDITED_ROWS or GRID_EDITS
GRID_NOT_OBJECT = "{what} must be an object of rows"
GRID_EDITED_ROWS = "edited_rows"
GRID_EDITS = "the grid's edits"
GRID_HUGE_ROW = "(a huge number)"
# {row}: the row key sent (quoted safely)
GRID_BAD_ROW = "the row “{row}” is not a whole number from 0 up"
# {row}: the row key sent; {last}: the matrix's last row
GRID_ROW_OUTSIDE = "row {row} is outside the matrix (rows 0 to {last})"
# {row}: the row number
GRID_BAD_CELLS = "row {row} must be an object of at most one value per column"
# {row}, {col}: the cell's row and column numbers
GRID_BAD_CELL = "the cell in row {row}, column {col} must be text or a number"
# {row}, {col}: the tick box's row and column numbers
GRID_BAD_TICK = (
    "the tick box in row {row}, column {col} must be true, false or empty, not a list or an "
    "object"
)
MASK_STATE_UNREADABLE = "its edits cannot be read"
# A chart's click or slider event the browser sent that attnviz ignores
# (attnviz.ui.plotly_view.state_problem). {reason}: one of the CHART_STATE_* sentences
CHART_STATE_REFUSED = "The chart sent an event attnviz cannot use ({reason}); it was ignored."
CHART_STATE_NOT_OBJECT = "its state must be an object"
# {limit}: most points one event may name
CHART_STATE_BAD_POINTS = "a selection must be an object with a list of at most {limit} points"
CHART_STATE_BAD_POINT = "a selected point must name a trace and a point of this chart"
CHART_STATE_BAD_SLIDER = "a slider must stop on one of this chart's steps"
MASK_ROWS_FIXED = "rows cannot be added to or deleted from the mask"
# {reason}: what was wrong with the mask grid's state
MASK_EDITOR_BAD_STATE = (
    "The mask grid sent ticks attnviz cannot use ({reason}); the previous mask is kept. Reload "
    "the page to start the grid again."
)

# --- Diagnostics panel (attnviz.ui.diagnostics) ---------------------------------------------

# {reason}: why the weights are not attention weights (a ValueError's message)
DIAGNOSTICS_INVALID = "No diagnostics: {reason}."
# {max_entropy}: ln t_k, the entropy of uniform weights
DIAGNOSTICS_ENTROPY_HELP = "ln t_k = {max_entropy:.4f} means uniform"
DIAGNOSTICS_HEAD = "head"

# --- Scenario files, links and downloads (attnviz.ui.share) ---------------------------------

# {reason}: what is wrong with the link, as a sentence
SHARE_BAD_LINK_REASON = SHARE_BAD_LINK + " {reason}."
SHARE_TO_ADDRESS_BAR = "Put this link in the address bar"
SHARE_LOOPBACK = (
    "This server listens on this computer only (127.0.0.1): students' browsers cannot open "
    "the link. To serve a class, start it with `python -m attnviz --server.address 0.0.0.0` "
    "(or `python -m attnviz class`): see the README's \"Serving a "
    "classroom on a LAN\"."
)
SHARE_ROOM_LINK = "Students open it at this machine's network address:"
SHARE_QR_CAPTION = "Scan to open this scenario (the link above)"
# {n}: the link's length in characters
SHARE_NO_QR = ("The link has {n} characters, more than a QR code holds (2,953): share the "
               "scenario file instead, or shorten the scenario.")
# {d}: the head's d_model; {limit}: limits.MAX_D_MODEL
SHARE_REAL_HEAD_FILE = (
    "This is a real model's head (d_model {d}): a scenario file holds d_model up to {limit}, "
    "so a file of it could not be loaded back. To show it again, open the head from Model "
    "view (the same model folder and sentence); its matrices can be downloaded below.")
# {reason}: why the scenario cannot be written to a file
SHARE_CANNOT_SAVE = "This scenario cannot be saved: {reason}."
SHARE_DOWNLOAD_SCENARIO = "Download the scenario (.json)"
# {size_mb}: the file's size in MB; {limit}: the upload limit in MB
SHARE_TOO_LARGE = "the file is {size_mb:.1f} MB; uploads may be at most {limit} MB"
SHARE_NOT_JSON = "a scenario file is a .json file saved by attnviz"
SHARE_UPLOAD_LABEL = "Load a scenario file (.json)"
# {limit}: the upload limit in MB
SHARE_UPLOAD_HELP = "A file saved here, at most {limit} MB."
# {reason}: why the file was refused
SHARE_NOT_LOADED = "This file was not loaded: {reason}. The current scenario is kept."
DOWNLOADS_NONE = "No matrices to download."
DOWNLOADS_MATRIX_LABEL = "Matrix"
DOWNLOADS_MATRIX_HELP = "Every matrix of this page; 3-D ones are in the .npz and JSON"
DOWNLOADS_CSV = "CSV"
DOWNLOADS_NPZ = "All matrices (.npz)"
DOWNLOADS_NPZ_HELP = "np.load(f, allow_pickle=False)"
DOWNLOADS_JSON = "All matrices (.json)"
REPORT_BUTTON = "Download an HTML report of these figures"
IMAGE_FORMAT_LABEL = "The camera button of every chart saves"
IMAGE_FORMATS = {"png": "PNG (2× resolution)", "svg": "SVG (vector, for slides and papers)"}

# --- Figures (attnviz.figures) ----------------------------------------------------------------

FIGURE_ROW = "row"  # hover name of a heatmap's rows when it has no y title
FIGURE_COLUMN = "column"  # hover name of its columns when it has no x title
# {title}: a heatmap's title; {columns}: what its columns are (the x axis's name)
FIGURE_TITLE_COLUMNS = "{title} (columns: {columns})"
FIGURE_VALUE = "value"
FIGURE_MAY_ATTEND = "may attend"
FIGURE_MASKED = "masked"
FIGURE_MINUS_INF = "−∞ (masked)"
REPORT_TITLE = "attnviz report"
# {n}: the figure's number, from 1
REPORT_FIGURE = "Figure {n}"
# {stamp}: date and time the report was made
REPORT_MADE = (
    "Made with attnviz on {stamp}. Opens offline; hover for exact values; the camera icon saves "
    "a figure as SVG."
)
REPORT_EMPTY = "This page shows no figures."

# --- Scenario controls (attnviz.ui.controls) ------------------------------------------------

TOKENS_LABEL = "Tokens (separated by spaces)"
SOURCE_TOKENS_LABEL = "Source tokens (keys/values)"
NO_TOKENS = "Enter at least one token (separated by spaces); the previous tokens are kept."
# {limit}: the most tokens the editors take; {n}: how many were entered
TOO_MANY_TOKENS = (
    "At most {limit} tokens can be edited; you entered {n}. The previous tokens are kept: "
    "remove some tokens."
)
# {chars}: the longest token label kept
LABELS_CUT = "Token labels are cut to {chars} characters."
D_MODEL_LABEL = "d_model"
# {limit}: the largest d_model
D_MODEL_HELP = "Embedding width, 1 to {limit}."
QK_WIDTH_LABEL = "Q/K width"
# {limit}: the largest width
QK_WIDTH_HELP = "n_heads · d_k, 1 to {limit}."
V_WIDTH_LABEL = "V width"
# {limit}: the largest width
V_WIDTH_HELP = "n_heads · d_v, 1 to {limit}."
EMBEDDINGS_LABEL = "X (embeddings)"
SOURCE_EMBEDDINGS_LABEL = "source X"
INIT_LABEL = "Initialiser"
REGENERATE = "Regenerate"
REGENERATE_HELP = "Draw new W_Q, W_K, W_V with this initialiser and seed"
# {title}: the preset whose weights the scenario holds
WEIGHTS_FROM_PRESET = "W_Q, W_K, W_V now: the preset's own ({title})."
# {kind}: the initialiser (INIT_KINDS); {seed}: its seed
WEIGHTS_FROM_INIT = "W_Q, W_K, W_V now: made by Regenerate with {kind}, seed {seed}."
WEIGHTS_OTHER = ("W_Q, W_K, W_V now: edited, or loaded from a file or a link — not made by the "
                 "initialiser shown here until you press Regenerate.")
VARIANT_LABEL = "Attention variant"
SCALE_LABEL = "Scale"
SCALE_FIXED_HELP = "Unscaled by definition for this variant"
CUSTOM_SCALE_LABEL = "Custom scale"
TEMPERATURE_LABEL = "Temperature τ (divides the scaled scores)"
TEMPERATURE_HELP = (
    "A teaching knob: standard attention (Vaswani et al.) has none, i.e. τ = 1. Below 1 the "
    "softmax sharpens towards the largest score; above 1 it flattens towards uniform weights."
)
# short: it shares a narrow column at 1024 px in presenter mode (there "Add positional
# encoding" is cut to "Add po…"); the help says what it adds
PE_TOGGLE = "Positional encoding"
PE_TOGGLE_HELP = (
    "Adds the sinusoidal positional encoding P of Vaswani et al. to the embeddings: the "
    "matrices are computed from X + P. The Positional encoding page shows P."
)
HEADS_SLIDER_LABEL = "Heads"  # the rule in its help (a long label was cut at 1024 px)
HEADS_SLIDER_HELP = ("The number of heads must divide the Q/K width and the V width: each "
                     "head gets an equal share of the columns.")
PRESET_LABEL = "Preset"
PRESET_LOAD = "Load preset"
THIS_SCENARIO = "this scenario"  # what compute() could not compute, unless a page says
# {what}: what could not be computed (THIS_SCENARIO or a page's words); {reason}: the core's
# message (a sentence without its full stop, naming the field and what is wrong with it)
CANNOT_COMPUTE = "Cannot compute {what}: {reason}."
# A variant's vector setting (RoPE's frequencies from a real model), shown read-only; short
# captions (they may sit in a narrow column of presenter mode), the sentence in the help.
# {label}: the setting's label; {values}: the first few numbers, rounded
PARAM_VECTOR_GIVEN = "{label}: {values}"
# {n}: how many numbers
PARAM_VECTOR_GIVEN_HELP = (
    "{n} values: the model's own scaled RoPE frequencies (linear, YaRN, Llama 3, ...). θ_i "
    "comes from them, so the RoPE base does not apply."
)
# {label}: the setting's label
PARAM_VECTOR_NONE = "{label}: none"
PARAM_VECTOR_NONE_HELP = "θ_i = b^(−2i/d) from the RoPE base b."
PARAM_VECTOR_DROP = "Use the base"
PARAM_VECTOR_DROP_HELP = (
    "Forgets the model's frequencies: θ_i is computed from the RoPE base again (the head then "
    "no longer computes what the model did)."
)
# {label}: the setting's label; {value}: the list of attention steps in words, in order
PARAM_STRUCTURED = "{label}: {value}"
STEPS_MENU_LABEL = "Steps in the list"
STEPS_MENU_HELP = (
    "Add or drop a step of the attention: a step added joins with its default settings, after "
    "the steps of its kind (changes of q and k, of the scores, mask parts, the normaliser). The "
    "scale and τ are the scale mode and the temperature.")
# {reason}: why the edit makes no list of steps, a sentence
STEPS_MENU_REFUSED = "The steps stay as they were: {reason}."
# {label}: the label of the setting that replaces this one
PARAM_OVERRIDDEN = "Not used: {label}"
# {label}: the label of the setting that replaces this one
PARAM_OVERRIDDEN_HELP = "Not used: the setting “{label}” replaces it."
