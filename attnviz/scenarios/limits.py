"""Sizes the dashboard accepts, chosen so a page stays responsive on a 2-core machine.

Shown on screen next to the controls they bound (see the Speed benchmarks in the README).
"""

MAX_TOKENS = 256  # tokens of an edited sequence
MAX_D_MODEL = 64  # embedding width for editing
# hidden size of a real model's head opened on every page (GPT-2 small: 768; GPT-2 medium,
# 1024): only that head's matrices are shown, the grids draw the cells in view only
MAX_REAL_D_MODEL = 1024
MAX_WIDTH = 128  # total projection width (n_heads·d_k, n_heads·d_v)
MAX_HEADS = 16
MAX_LABEL_CHARS = 40  # longer token labels are cut (with a message)

# --- Uploads, scenario files and shared links (Save & share, Your own attention) -------------
MAX_UPLOAD_MB = 5  # the same cap as server.maxUploadSize in .streamlit/config.toml
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024  # any uploaded file, checked in code too
MAX_UPLOAD_T = 1024  # sequence length of uploaded attention weights
MAX_UPLOAD_HEADS = 64
MAX_UPLOAD_LAYERS = 64
MAX_UPLOAD_VALUES = 2**22  # layers·heads·t·t of an upload (32 MB as float64)
# An .npz is a zip: its members' declared (unpacked) sizes together, checked before reading.
MAX_UPLOAD_UNPACKED_BYTES = 40 * 1024 * 1024
# The memory an upload costs once read (its data as stored plus the float64 weights the pages
# draw from) may be at most this many times the bytes uploaded (a 1.6 KB bzip2 .npz can
# unpack into 55 MiB), but any upload may cost UPLOAD_MEMORY_FLOOR_BYTES.
MAX_UPLOAD_AMPLIFICATION = 64
UPLOAD_MEMORY_FLOOR_BYTES = 2 * 1024 * 1024
MAX_TOKEN_FILE_BYTES = 1024 * 1024  # a token list (text or JSON)
MAX_SCENARIO_BYTES = MAX_UPLOAD_BYTES  # JSON text of a scenario, from a file or an unzipped link
MAX_LINK_CHARS = 8000  # encoded scenario in a URL; larger scenarios go by file
MAX_DISPLAY_T = 512  # larger uploaded matrices are averaged in blocks before drawing
THUMBNAIL_T = 64  # small multiples (one heatmap per head) pool longer sequences to this

# --- Compute per click (attnviz/scenarios/budget.py; benchmarks/bench_budget.py) -------------
TRAIN_SECONDS = 10.0  # wall time of one Train click; then it pauses, Continue goes on
YIELD_EVERY_SECONDS = 0.05  # a long run hands the CPU to other sessions' threads this often
YIELD_PAUSE_SECONDS = 0.0  # ... for this long (0: time.sleep(0), other threads run, no slowdown)

# --- Ranges of the controls, written once ------------------------------------------------------
TEMPERATURE_MIN, TEMPERATURE_MAX, TEMPERATURE_STEP = 0.05, 5.0, 0.05  # τ's slider and frames
CUSTOM_SCALE_MIN, CUSTOM_SCALE_MAX, CUSTOM_SCALE_STEP = 0.0, 100.0, 0.05  # the custom scale's box
CUSTOM_SCALE_DRAG_MAX = 3.0  # the lecture view's drag slider for it: STEP to this, by STEP
SINK_LOGIT_MIN, SINK_LOGIT_MAX, SINK_LOGIT_STEP = -10.0, 10.0, 0.5  # KV cache page: slider, frames
ROPE_SHIFT_MAX = 50  # the RoPE tab's shift Δ (0 to this): its slider and the chart's frames
PE_D_MODEL_MIN, PE_D_MODEL_MAX, PE_D_MODEL_STEP = 2, 128, 2  # the PE matrix's d_model
SEED_MAX = 2**31 - 1  # the largest seed a seed box takes
