"""Words of the Modern attention page (pages/modern.py, keys ``modern_``).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "SHIFT_RESULT": ("delta", "rope", "pe"),
    "PE_SHIFT_TITLE": ("delta", "pe"),
    "GAIN_TITLE": ("gain", "bound"),
    "ALIBI_HEADS_SHOWN": ("shown", "n"),
    "ALIBI_HEAD": ("h",),
    "RATIO": ("ratio",),
    "KV_NAME": ("g",),
    "SHARING_TITLE": ("q", "kv"),
    "NORM_RESULT": ("plain", "normed", "bound", "plain_h", "normed_h"),
    "ANGLE_WIDTH_NOTE": ("d", "pairs", "d_k"),
}

HEADER = "Modern attention: RoPE, ALiBi, grouped-query attention and QK-norm"
INTRO = (
    "How today's models tell positions apart and share keys and values — computed on the "
    "current scenario's embeddings and weights (one head: every column of W_Q and W_K). Pick "
    "the RoPE, ALiBi or GQA variant in the sidebar's scenario (or load their presets) to see "
    "them on every other page too."
)
ROPE_TAB, ALIBI_TAB, GQA_TAB, NORM_TAB = "RoPE", "ALiBi", "GQA / MQA", "QK-norm"
ROPE_INTRO = (
    "RoPE rotates each pair of dimensions of q and k by position · θ_i, θ_i = base^(−2i/d). "
    "A rotation by m·θ dotted with one by n·θ depends on m − n only: shift every position by "
    "Δ and the scores do not change. Add the sinusoidal encoding to x instead and they do."
)
OWN_BASE = ("This tab rotates with its own base b (the slider under the angles), not with the "
            "frequencies θ_i of the opened model's head, which every other page uses.")
BASE_PREFIX = "drag the base: "
ON_CHARTS = ("Set Δ with the slider under the sinusoidal scores and the base with the "
             "slider under the angles, below.")
BASE_ON_CHART = "Set the base with the slider under the angles, below."
BASE_DRAG = ("Drag the slider under the angles: they follow the base while you drag (a small "
             "base turns every pair fast, a large one turns the last pairs hardly at all); "
             "releasing it sets the base above.")
DELTA_LABEL = "Shift every position by Δ"
ANGLES = "Angle (radians) of each position and pair"
AXIS_PAIR = "pair i"
ANGLE_WIDTH_LABEL = "Head width d of the angle chart"
ANGLE_WIDTH_HELP = ("The angles of a head of this width: d/2 pairs, pair i turning by "
                    "base^(−2i/d) per position. The scores above use the scenario's own head.")
# {d}: the chart's head width; {pairs}: d/2; {d_k}: the scenario's head width
ANGLE_WIDTH_NOTE = ("The angles of a head of width d = {d} ({pairs} pairs); the scores above "
                    "rotate the scenario's own head (d_k = {d_k}).")
AXIS_POSITION = "position"
ROPE_SCORES = "RoPE scores, positions shifted by Δ"
PE_SCORES = "Sinusoidal PE scores, positions shifted by Δ"
# {delta}: the shift; {pe}: the largest change of a score with the sinusoidal encoding
PE_SHIFT_TITLE = "Δ = {delta}: scores moved by up to {pe}"
DELTA_PREFIX = "drag Δ: "
DELTA_DRAG = ("Drag the slider under these scores: they follow Δ while you drag (computed in "
              "advance for every Δ), while RoPE's on the left stay; releasing it sets Δ above.")
# {delta}: the shift; {rope}, {pe}: the largest change of a score each way
SHIFT_RESULT = ("Shifted by Δ = {delta}: the largest change of a RoPE score is {rope}; with the "
                "sinusoidal encoding added to x it is {pe}.")
ALIBI_INTRO = (
    "ALiBi adds −m_h·(i − j) to head h's scores: a penalty growing with the distance, a "
    "different slope per head, and no positional encoding. Nothing in it depends on the "
    "sequence length, so it applies to longer inputs than the model was trained on: move the "
    "length past the scenario's tokens."
)
HEADS_LABEL = "Heads"
# {shown}: the heads drawn; {n}: how many heads there are
ALIBI_HEADS_SHOWN = "Heads {shown} of {n} are drawn (the first, the last and evenly between)."
LENGTH_LABEL = "Sequence length"
# {h}: the head
ALIBI_HEAD = "Bias of head {h}"
SLOPES_TITLE = "Slope m_h of every head"
SLOPE_ROW = "m_h"
HEADS_PREFIX = "drag the heads: "
HEADS_DRAG = ("Drag the slider under the slopes: they follow the number of heads while you drag "
              "(for n a power of two m_h = 2^(−8(h+1)/n), a geometric sequence, finer with more "
              "heads; other n take the nearest lower power of two's slopes and every other one "
              "of the next); releasing it sets the heads above and redraws the biases below.")
LENGTH_PREFIX = "drag the length: "
LENGTH_DRAG = ("Drag the slider under head 0's bias: it grows with the length while you drag — "
               "the same −m_h·(i − j) at every length, coloured on one scale; releasing it sets "
               "the length above and redraws every head.")
GQA_INTRO = (
    "Grouped-query attention: groups of query heads share one key/value head, so the KV "
    "cache keeps fewer keys and values per token. n_kv_heads = n_heads is multi-head "
    "attention, 1 is multi-query attention: the two ends of one slider."
)
QUERY_HEADS_LABEL = "Query heads"
KV_HEADS_LABEL = "Key/value heads"
SHARING = "Which key/value head each query head reads"
AXIS_QUERY_HEAD = "query head"
AXIS_KV_HEAD = "key/value head"
# {g}: a key/value head
KV_NAME = "kv {g}"
CACHE_TITLE = "KV cache per token and layer (numbers kept)"
CACHE_COLUMNS = ("attention", "key/value heads", "numbers per token", "vs multi-head")
CACHE_NAMES = {"mha": "multi-head (MHA)", "gqa": "grouped-query (GQA)", "mqa": "multi-query (MQA)"}
# {ratio}: a number of times
RATIO = "{ratio}×"
HEAD_WIDTH_LABEL = "Head width d_head"
NORM_INTRO = (
    "QK-norm divides every query and key row (per head) by its root mean square and multiplies "
    "by a gain g before the scores: the logits can no longer grow with the embeddings, so the "
    "softmax cannot saturate from large inputs. Below: the same scenario with and without it "
    "(one head, the scenario's scale, temperature and mask)."
)
KV_PREFIX = "drag the key/value heads: "
QUERY_HEADS_PREFIX = "drag the query heads: "
KV_DRAG = ("Drag the sliders under the grid: the query heads regroup onto 1 to all key/value "
           "heads while you drag (MQA at the left end, MHA at the right), or their number "
           "changes (the key/value heads stay while they divide it); releasing one sets the "
           "heads above.")
# {q}: the query heads, counted in words; {kv}: the key/value heads, counted in words
SHARING_TITLE = "{q}, {kv}"
QUERY_HEAD_NOUN, KV_HEAD_NOUN = "query head", "key/value head"  # counted: common.count
GAIN_LABEL = "Gain g"
# {gain}: the gain g; {bound}: QK-norm's bound on |logit|, d_k·g²·scale/τ
GAIN_TITLE = "g = {gain}: |logit| ≤ {bound}"
GAIN_PREFIX = "drag g: "
GAIN_DRAG = ("Drag the slider under these logits: they follow the gain g while you drag "
             "(computed in advance for every g); releasing it sets g above.")
NORM_PLAIN = "Plain scaled scores (the softmax's input)"
NORM_NORMED = "With QK-norm"
# {plain}, {normed}: the largest |logit| each way; {bound}: QK-norm's bound; {plain_h},
# {normed_h}: the mean entropy of the weights' rows
NORM_RESULT = ("Largest |logit|: {plain} plain, {normed} with QK-norm (never above d_k·g²·"
               "scale/τ = {bound}). Mean entropy of the weights' rows: {plain_h} nats plain, "
               "{normed_h} with QK-norm.")
