"""Sliding window with attention sinks (StreamingLLM) and a learned sink logit (gpt-oss).

Causal attention over a window of the last ``window`` keys (the query itself included), plus
the first ``n_sink`` tokens, which every query keeps seeing; optionally a sink logit that joins
each row's softmax and is dropped afterwards, so the weights of a row sum to less than 1
(:mod:`attnviz.core.sinks`). One head. The window here counts the keys a query sees (Mistral's
``sliding_window``); the Masks page's window counts neighbours on each side.
"""

import numpy as np

from attnviz.core import steps as S
from attnviz.core.initializers import init_weights
from attnviz.core.sinks import attention_with_sink, sink_window_mask
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.online_softmax import single_head_qkv

PARAMS = (
    Param("window", "Window (keys seen, itself included)", 3, low=1, high=256),
    Param("n_sink", "Sink tokens kept (the first ones)", 1, low=0, high=256),
    Param("learned_sink", "Learned sink logit (gpt-oss)", False),
    Param("sink_logit", "Sink logit", 0.0, low=-20.0, high=20.0),
)


def compute(inputs: Inputs):
    """softmax over [S̃ (window + sinks), sink logit], the sink column dropped."""
    sc = inputs.scenario
    q, k, v = single_head_qkv(inputs)
    mask = sink_window_mask(np.shape(q)[0], window=sc.param("window"),
                            n_sink=sc.param("n_sink"))
    if inputs.mask is not None:
        mask = mask & inputs.mask
    return attention_with_sink(q, k, v, mask=mask, scale=inputs.scale,
                               temperature=inputs.temperature,
                               sink_logit=sc.param("sink_logit") if sc.param("learned_sink")
                               else None)


def streaming():
    """Hand-built: 8 tokens whose queries mostly match nothing; the first token is kept."""
    tokens = ["<s>", "the", "rain", "in", "Spain", "stays", "mainly", "dry"]
    x = np.round(init_weights("normal", [(8, 4)], seed=41)[0], 1)
    x[0] = [2.0, 2.0, 0.0, 0.0]  # the start token: a key every query scores high against
    w_q, w_k, w_v = (np.round(w, 2) for w in init_weights("glorot_uniform", [(4, 4)] * 3,
                                                           seed=42))
    w_q[:, :2] += 0.8
    w_k[:, :2] += 0.8
    return draft(tokens, x, w_q, w_k, w_v, variant="sinks",
                     params={"window": 3, "n_sink": 1},
                     title="Attention sinks: a window of 3 that keeps the first token",
                     description="The softmax must put its weight somewhere; heads learn to "
                                 "park it on the first token, which every query can see. Set "
                                 "the sink tokens to 0 (a plain sliding window) and that weight "
                                 "is forced onto the window's tokens; switch on the learned "
                                 "sink logit and the rows may sum to less than 1 instead.")



def loop_reference(inputs: Inputs):
    """Explicit loops: key j ≤ i seen when i − j < window or j < n_sink (and the user's mask),
    the learned sink logit in every row's denominator."""
    sc = inputs.scenario
    x = inputs.x
    q, k, v = (reference.matmul(x, getattr(sc, w)) for w in ("w_q", "w_k", "w_v"))
    window, n_sink = sc.param("window"), sc.param("n_sink")
    user = reference.allowed(inputs, len(x), len(x))
    ok = [[user[i][j] and j <= i and (i - j < window or j < n_sink) for j in range(len(x))]
          for i in range(len(x))]
    sink = float(sc.param("sink_logit")) if sc.param("learned_sink") else None
    weights, output = reference.attend_loop(q, k, v, ok, reference.scaled_logit(
        inputs, q.shape[1]), sink=sink)
    return weights[None], output


def to_steps(scenario) -> tuple:
    """The window of keys that keeps the first tokens, and the sink logit when learned."""
    p = scenario.param
    window = S.Window(p("window"), keys=True, keep_first=p("n_sink"))
    return (window, S.SinkSoftmax((float(p("sink_logit")),))) if p("learned_sink") \
        else (window,)


VARIANT = Variant(
    key="sinks", name="Sliding window + sinks", order=150,
    description="Causal attention over the last few keys plus the first tokens, the attention "
                "sinks (StreamingLLM); "
                "optionally a learned sink logit that takes weight and is dropped (gpt-oss).",
    formula=r"\alpha_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_{k \in W_i} e^{\tilde S_{ik}} + "
            r"e^{s}},\quad W_i = \{j \le i : i - j < w\} \cup \{j < n_{\text{sink}}\},\quad "
            + PROJECTIONS,
    compute=compute, backward=dot_product_backward, causal=True, params=PARAMS,
    presets=(Preset("sinks_streaming", "Attention sinks: window + first token", "hand-built",
                    streaming),),
    reference=loop_reference, to_steps=to_steps,
)
