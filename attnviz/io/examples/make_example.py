"""Build the example attention file from the project's own code.

Two layers of four-head self-attention on seed 004's sentence "The sleepy child reads a book":
layer 0 attends over the sentence's embeddings plus the sinusoidal positional encoding, layer 1
over layer 0's residual stream (x + output). Weights are Glorot-uniform with fixed seeds, so
the file is reproducible; it is stored as float32, like a model's saved attentions.

Run ``python -m attnviz.io.examples.make_example`` to (re)write ``attention_example.npz`` (arrays
``attention`` of shape (2, 4, 6, 6) and ``tokens``) and ``attention_example_tokens.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attnviz.core.attention import multi_head_attention
from attnviz.core.initializers import init_weights
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.io.examples import EXAMPLE_NPZ, EXAMPLE_TOKENS
from attnviz.scenarios.presets import SLEEPY_EMBEDDINGS, SLEEPY_TOKENS

N_LAYERS = 2
N_HEADS = 4
D_HEAD = 2


def build_example() -> tuple[np.ndarray, tuple[str, ...]]:
    """Attention weights of shape (layers, heads, t, t) as float32, and the token labels."""
    x = SLEEPY_EMBEDDINGS + sinusoidal_positional_encoding(*SLEEPY_EMBEDDINGS.shape)
    d_model, width = x.shape[1], N_HEADS * D_HEAD
    layers = []
    for layer in range(N_LAYERS):
        w_q, w_k, w_v, w_o = init_weights(
            "glorot_uniform", [(d_model, width)] * 3 + [(width, d_model)], seed=100 + layer)
        result = multi_head_attention(x, None, 2.0 * w_q, 2.0 * w_k, w_v, w_o, n_heads=N_HEADS)
        layers.append(result.weights)  # (n_heads, t, t)
        x = x + result.output  # residual stream feeds the next layer
    return np.stack(layers).astype(np.float32), tuple(SLEEPY_TOKENS)


def write_example(npz: Path = EXAMPLE_NPZ, tokens_json: Path = EXAMPLE_TOKENS) -> None:
    """Write the .npz (weights and tokens, no pickled objects) and the tokens JSON."""
    weights, tokens = build_example()
    np.savez_compressed(npz, attention=weights, tokens=np.array(tokens, dtype=str))
    tokens_json.write_text(json.dumps(list(tokens)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_example()
    print(f"wrote {EXAMPLE_NPZ} and {EXAMPLE_TOKENS}")
