"""TODO"""

from __future__ import annotations

INTRO = (
    "Keep or hand on the exact scenario (tokens, embeddings, every weight matrix, variant, "
    "settings and masks): as a file, or as a link that opens it on any machine running "
    "attnviz. Download the matrices behind the figures, and choose how charts save images."
)

MATRICES = (
    "Every matrix of the current scenario, computed as on the Playground: CSV for one matrix "
    "(row and column labels included), or all of them as .npz (np.load(f, allow_pickle=False)) "
    "or JSON. Masked scores are −∞: -inf in CSV, the string \"-inf\" in JSON."
)
