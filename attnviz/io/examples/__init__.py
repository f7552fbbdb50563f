"""Example files shipped with attnviz (made by ``python -m attnviz.io.examples.make_example``).

``EXAMPLE_NPZ`` holds attention weights of shape (layers, heads, t, t) = (2, 4, 6, 6) under the
name ``attention`` and the six token labels under ``tokens``; ``EXAMPLE_TOKENS`` holds the same
labels as a JSON list. Use them to try the "Your own attention" page, or in a notebook::

    import numpy as np
    from attnviz.io.examples import EXAMPLE_NPZ
    weights = np.load(EXAMPLE_NPZ, allow_pickle=False)["attention"]
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE_NPZ = HERE / "attention_example.npz"
EXAMPLE_TOKENS = HERE / "attention_example_tokens.json"

__all__ = ["EXAMPLE_NPZ", "EXAMPLE_TOKENS"]
