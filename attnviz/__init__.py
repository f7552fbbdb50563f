"""attnviz — attention, every matrix of it, exact and vectorised.

The core (this package's top level) uses numpy and scipy only: ``import attnviz`` loads no
streamlit, plotly or pandas. Figures live in ``attnviz.figures`` and Streamlit helpers in
``attnviz.ui``; import those explicitly. :func:`show` (attention in a Jupyter notebook) imports
plotly when it is called, not before.

Vocabulary (used everywhere, in code, docs and on screen)
---------------------------------------------------------
x        token embeddings, shape (t, d_model); one row per token (row-vector convention)
q, k, v  queries (t_q, d_k), keys (t_k, d_k), values (t_k, d_v): q = x @ w_q, ...
w_q, w_k, w_v, w_o   projection matrices; w_o maps the concatenated heads to the output
d_model  embedding width;  d_k  query/key width;  d_v  value width (per head)
n_heads  number of heads;  t_q, t_k  number of queries and keys
n_kv_heads  key/value heads (GQA): query head h reads key/value head h // (n_heads / n_kv_heads)
b_q, b_k, b_v, b_o   biases of the projections (q = x @ w_q + b_q; GPT-2, BERT), optional
scores   raw dot products q·kᵀ, shape (t_q, t_k)
scaled   scores × scale ÷ temperature (scale = 1/√d_k unless chosen otherwise)
masked   scaled with −inf where the mask forbids attending
mask     boolean, True = may attend (PyTorch's convention)
weights  softmax of masked over the keys: each row sums to 1 (a fully masked row is all 0)
output   weights @ v

Reference: Vaswani et al. (2017), "Attention Is All You Need", arXiv:1706.03762.
"""

from attnviz.core.additive import (
    AdditiveResult,
    PoolingResult,
    additive_attention,
    attention_pooling,
)
from attnviz.core.attention import (
    AttentionResult,
    MultiHeadResult,
    attend_heads,
    cross_attention,
    mix_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    self_attention,
    softmax,
    valid_head_counts,
)
from attnviz.core.initializers import INIT_KINDS, init_weights
from attnviz.core.masks import causal_mask, padding_mask, sliding_window_mask, window_mask
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.core.rope import apply_rope
from attnviz.core.sinks import (
    MultiHeadSinkResult,
    SinkResult,
    attend_heads_with_sinks,
    attention_with_sink,
)
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.scenarios.registry import VARIANTS, Variant
from attnviz.scenarios.scenario import (
    Scenario,
    ScenarioResult,
    position_labels,
    resize,
    run_scenario,
)
from attnviz.scenarios.variant import Preset


def show(x, tokens=None, *, causal=None, sequence=None):
    """Draw attention inline in a Jupyter notebook, offline: the model view (every layer ×
    head) of a Capture or of weights of shape (layers, heads, t, t), or a scenario's weights.

    The last expression of a cell, ``attnviz.show(cap)``, draws it. Needs the ``ui`` extra
    (plotly); see :func:`attnviz.figures.notebook.show` for every argument.
    """
    from attnviz.figures.notebook import show as show_in_notebook

    return show_in_notebook(x, tokens, causal=causal, sequence=sequence)

__all__ = [
    "INIT_KINDS", "PRESETS", "VARIANTS", "AdditiveResult", "AttentionResult", "MultiHeadResult",
    "MultiHeadSinkResult", "PoolingResult", "Preset", "Scenario", "ScenarioResult",
    "SinkResult", "Variant", "additive_attention", "apply_rope", "attend_heads",
    "attend_heads_with_sinks", "attention_pooling", "attention_with_sink", "causal_mask",
    "cross_attention", "default_scenario", "init_weights", "mix_heads", "multi_head_attention",
    "padding_mask", "position_labels", "resize", "run_scenario", "scaled_dot_product_attention",
    "self_attention", "show", "sinusoidal_positional_encoding", "sliding_window_mask", "softmax",
    "valid_head_counts", "window_mask",
]
__version__ = "0.1.0"
