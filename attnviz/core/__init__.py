"""The maths: numpy/scipy only; knows nothing of scenarios, text or Streamlit.

attention (scaled, self, cross, multi-head; ``attend_heads``, the one path over split heads
with an optional score bias, soft-capping and shared key/value heads), additive, masks,
positional (sinusoidal), rope (rotary positions), alibi (linear biases), qk_norm (RMS norm of
q and k), initializers, diagnostics, downsample, explain (one query row step by step), checks
and numerics (validation and the shared stable softmax).
"""
