"""The prefix-LM mask part: bidirectional over the first p tokens, causal after.

A prefix language model (Raffel et al., 2020, T5 §3.2.1, "prefix LM"; PaLI and UL2's
non-causal prefix) reads its prompt as an encoder does — every prefix token sees every other
prefix token — and writes the rest as a decoder: a later token sees the whole prefix and the
tokens before it. Query i may attend to key j when j ≤ i or j < p. With p = 0 (or 1) it is the
causal mask; with p at least the sequence's length nothing is masked. It holds the causal part
itself: a list with :class:`~attnviz.core.steps.Causal` as well would mask the prefix again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from attnviz.core.masks import causal_mask
from attnviz.core.steps.base import MaskPart

MAX_PREFIX = 1 << 20


@dataclass(frozen=True, eq=False)
class PrefixLM(MaskPart):
    """Query i sees key j when j ≤ i or j < ``prefix`` (the first ``prefix`` keys: the
    prompt, read both ways)."""

    prefix: int = 1
    name: ClassVar[str] = "prefix_lm"
    title: ClassVar[str] = "Prefix-LM mask"

    def __post_init__(self):
        if isinstance(self.prefix, bool) or not isinstance(self.prefix, (int, np.integer)) or \
                not 0 <= self.prefix <= MAX_PREFIX:
            raise ValueError(f"the prefix length must be a whole number from 0 to {MAX_PREFIX}, "
                             f"got {self.prefix!r:.40}")

    def allowed(self, t_q: int, t_k: int) -> NDArray[np.bool_]:
        in_prefix = np.arange(t_k)[None, :] < self.prefix  # (1, t_k)
        return causal_mask(t_q, t_k) | in_prefix

    def written(self) -> str:
        return rf"M_{{ij}} = (j \le i \vee j < {int(self.prefix)})"
