"""Words of the Inference page (pages/inference.py, keys ``inference_``).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "CALL": ("call", "calls", "rows", "cache"),
    "DIFFERENCE": ("value",),
    "ONLINE_DIFFERENCE": ("value",),
    "CACHE_SIZE": ("entries", "kib", "llama"),
    "KIB": ("kib",),
    "TILE": ("tile", "tiles", "start", "stop"),
    "TILE_CLAMPED": ("t_k",),
    "PREFILL_CLAMPED": ("t",),
    "ON_CHART": ("settings", "chart"),
    "ON_CHART_ONE": ("settings", "chart"),
}

HEADER = "Inference: the KV cache and FlashAttention's online softmax"
INTRO = (
    "Two ways a model computes the same attention faster. The KV cache: a decoder computes "
    "each new token's query against keys and values it has kept from earlier steps. Online "
    "softmax: FlashAttention goes over the keys tile by tile, keeping only a running maximum "
    "and sum per query. Both give the same numbers as the plain computation — checked below "
    "on the current scenario (one head: all the columns of W_Q, W_K and W_V)."
)
KV_TAB = "KV-cache decoding"
SINKS_TAB = "Sliding window & sinks"
ONLINE_TAB = "Online softmax (tiles)"
PREFILL_LABEL = "Prompt tokens processed at once (prefill)"
CALL_LABEL = "Model call"
# {call}, {calls}: this call and their number; {rows}: the query rows it computes ("1 row",
# "2 rows"); {cache}: the keys in the cache after it ("4 keys")
CALL = "Call {call} of {calls}: {rows}, {cache} cached"
CALL_PREFIX = "drag the call: "
PREFILL_PREFIX = "drag the prefill: "
CALL_DRAG = ("Drag the sliders under the weights to step through the calls, or to process more "
             "or fewer prompt tokens in the first call (computed in advance); releasing one sets "
             "the model call or the prefill for the charts below too.")
# {t}: the number of tokens ("1 token", "4 tokens")
PREFILL_CLAMPED = "The prompt is the whole sequence of {t}: one call."
CACHE_K = "Cached keys K (one row per token so far)"
CACHE_V = "Cached values V"
CALL_WEIGHTS = "This call's weights (mask aligned bottom-right)"
ASSEMBLED = "Rows computed so far (blank: not yet)"
# {value}: the largest absolute difference
DIFFERENCE = "Largest difference to full causal attention over all rows: {value}"
# {entries}: cached numbers of this head; {kib}: their size in KiB (float64); {llama}: the cache
# of a Llama-3-8B-shaped model at this length
CACHE_SIZE = ("This head's cache holds {entries} numbers ({kib} KiB in float64). A model "
              "shaped like Llama 3 8B (32 layers, 8 key/value heads of width 128, bfloat16) "
              "would hold {llama} at this length.")
# {kib}: a size in KiB
KIB = "{kib} KiB"
ALIGN_NOTE = (
    "A decoding call has fewer query rows than keys: its causal mask must be aligned "
    "bottom-right (query row i is position i + t_k − t_q). Aligned top-left, the single new "
    "query would see key 0 only."
)
# {value}: the largest absolute difference
ONLINE_DIFFERENCE = "Largest difference to the one-pass softmax's output: {value}"
TILE_SIZE_LABEL = "Keys per tile"
TILE_STEP_LABEL = "After tile"
# {t_k}: the number of keys
TILE_CLAMPED = "The tile holds every key: one tile of {t_k}."
# {tile}, {tiles}: this tile and their number; {start}, {stop}: its keys
TILE = "After tile {tile} of {tiles} (keys {start} to {stop})"
TILE_PREFIX = "drag the tile: "
TILE_SIZE_PREFIX = "drag the keys per tile: "
TILE_DRAG = ("Drag the sliders under the statistics to watch m, ℓ and α change tile by tile, "
             "or with the keys per tile (computed in advance); releasing one sets the tile or "
             "the keys per tile for the scores and the output too.")
SCORES = "Scaled, masked scores S̃ (this tile outlined)"
RUNNING = "Running statistics of each query after this tile"
RUNNING_COLUMNS = ("m (max)", "ℓ (sum)", "α (rescale)", "m + log ℓ")
RUNNING_NOTE = (
    "m: the largest score seen so far; ℓ: Σ exp(S̃ − m) so far; α = exp(m_old − m): how much "
    "this tile shrank the earlier ℓ and O because m grew (1: m did not change; an empty −∞ "
    "row: the query has seen only masked keys); m + log ℓ: the running log-sum-exp, which "
    "FlashAttention keeps after the last tile for its backward pass."
)
PARTIAL = "Output so far O / ℓ"
MEMORY_TITLE = "Memory read and written (numbers of the arrays, this head)"
MEMORY_COLUMNS = ("path", "read + written", "largest score block kept")
MEMORY_NAIVE = "naive: S and P written and read back"
MEMORY_TILED = "tiled: Q, K, V read once, O written; m and ℓ per tile"
SINKS_INTRO = (
    "Causal attention over a window of the last keys (the query itself included: a window of 3 "
    "sees 3 keys), plus the first tokens, which every query keeps seeing (StreamingLLM's "
    "attention sinks); optionally a learned sink logit that joins each row's softmax and is "
    "dropped afterwards (gpt-oss), so a row's weights may sum to less than 1."
)
WINDOW_LABEL = "Window (keys seen, itself included)"
N_SINK_LABEL = "First tokens kept (sinks)"
LEARNED_LABEL = "Learned sink logit"
LOGIT_LABEL = "Sink logit s"
LOGIT_PREFIX = "drag the sink logit: "
WINDOW_PREFIX = "drag the window: "
N_SINK_PREFIX = "drag the sink tokens: "
SINK_DRAG = ("Drag a slider under the weights: they follow the window, the sink tokens (and "
             "the sink logit, when learned) while you drag (computed in advance); releasing it "
             "sets that value for the mask and the shares too.")
# One control per value: {settings}: the settings set under a chart, in words ("the model call
# and the prefill"); {chart}: that chart, in words
ON_CHART = "Set {settings} with the sliders under {chart}, below."
# {settings}: one setting, in words ("the prefill"); {chart}: its chart, in words
ON_CHART_ONE = "Set {settings} with the slider under {chart}, below."
AND = " and "
CALL_NAME = "the model call"
PREFILL_NAME = "the prefill"
CALL_CHART = "this call's weights"
TILE_STEP_NAME = "the tile"
TILE_SIZE_NAME = "the keys per tile"
RUNNING_CHART = "the running statistics"
WINDOW_NAME = "the window"
N_SINK_NAME = "the sink tokens"
LOGIT_NAME = "the sink logit"
SINK_CHART = "the weights"
SINK_MASK = "Keys each query may see"
SINK_WEIGHTS = "Weights"
SINK_SHARES = "Row sum and the sink's share"
SINK_COLUMNS = ("Σ weights", "sink")
SINKS_WHY = (
    "Why models put weight on the first token at all: the softmax must give each row weights "
    "that sum to 1, even when no key is relevant. Trained models learn to park that weight on "
    "the first token, which every query can see. A plain sliding window drops it and the "
    "parked weight is forced onto the window's tokens (StreamingLLM's failure); keeping the "
    "first tokens, or a learned sink logit that can absorb the weight without being a token, "
    "fixes it. Load the 'Attention sinks' preset and set the sink tokens to 0."
)
