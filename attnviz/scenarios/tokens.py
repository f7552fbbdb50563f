"""New token lists keep every vector they can and give a new word a real, repeatable vector.

When a user types a new token list (the first thing a lecturer tries: "the cat sat on the
mat"), each position's embedding row is chosen by :func:`retoken`:

1. a word seen earlier in the new list reuses that row (the second "the" is the first "the");
2. a word of the old list keeps its old row, wherever it moves;
3. a renamed position (its old word is gone from the list) keeps its row: relabelling rows
   never changes a number;
4. any other word gets :func:`word_vector`: normal entries from a generator seeded by the
   word's UTF-8 bytes (BLAKE2b), so the same word has the same vector in every session and on
   every machine, at the spread of the existing embeddings, rounded to 2 decimals to be
   readable and editable.

Bidirectional control characters (U+202A–U+202E embeddings and overrides, U+2066–U+2069
isolates, U+200E/U+200F/U+061C marks) are taken out of typed labels (:func:`without_bidi`): a label
holding U+202E shows its text, and every label after it on the same line, reversed, so what a
chart's axis shows would not be what was typed. Scenario files and links refuse them instead
(:mod:`attnviz.io.scenario_io`), uploaded token lists lose them with a warning
(:mod:`attnviz.io.attention_io`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.scenarios.scenario import Scenario, resize

Array = NDArray[np.float64]
DECIMALS = 2
# Unicode's explicit bidirectional formatting characters: embeddings and overrides (U+202A..E),
# isolates (U+2066..9) and the marks (left-to-right U+200E, right-to-left U+200F, Arabic U+061C).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
                          "\u200e\u200f\u061c")
_NO_BIDI = {ord(c): None for c in BIDI_CONTROLS}


def bidi_controls_in(text: str) -> list[str]:
    """The bidirectional control characters in ``text``, as ``U+XXXX`` (in order, once each)."""
    found = dict.fromkeys(c for c in text if c in BIDI_CONTROLS)
    return [f"U+{ord(c):04X}" for c in found]


def without_bidi(text: str) -> str:
    """``text`` with every bidirectional control character (:data:`BIDI_CONTROLS`) removed."""
    return text.translate(_NO_BIDI)


@dataclass(frozen=True)
class Retokened:
    """A scenario with a new token list, and what happened to its vectors.

    Attributes
    ----------
    scenario : Scenario
    fresh : tuple of str
        Words that got a new vector from :func:`word_vector` (in order, once each).
    reused : tuple of str
        Words repeated in the list, whose later occurrences reuse the first one's vector.
    """

    scenario: Scenario
    fresh: tuple[str, ...]
    reused: tuple[str, ...]


def word_vector(word: str, d_model: int, scale: float = 1.0) -> Array:
    """The vector a new word gets: ``d_model`` normal(0, scale²) entries, rounded to 2
    decimals, from a generator seeded by the BLAKE2b hash of the word's UTF-8 bytes."""
    digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return np.round(rng.normal(0.0, scale, size=d_model), DECIMALS)


def spread(x: Array) -> float:
    """The scale of new vectors: the standard deviation of the nonzero entries of ``x``
    (1 when there are none)."""
    nonzero = np.asarray(x, dtype=float)[np.asarray(x) != 0]
    s = float(nonzero.std()) if nonzero.size > 1 else 0.0
    return s if np.isfinite(s) and s > 0 else 1.0


def retoken(scenario: Scenario, tokens, *, source: bool = False) -> Retokened:
    """The scenario with ``tokens`` as its token list (or source tokens), rows chosen as the
    module docstring says; every other size follows (:func:`resize`). Bidirectional control
    characters are taken out of the labels (:func:`without_bidi`)."""
    tokens = tuple(without_bidi(str(t)) for t in tokens)
    old = scenario.source_tokens if source else scenario.tokens
    old_x = np.asarray(scenario.source_x if source else scenario.x, dtype=float)
    sized = resize(scenario, **{"t_source" if source else "t": len(tokens)})
    width = old_x.shape[1] if old_x.ndim == 2 and old_x.shape[1] else scenario.d_model
    x = np.zeros((len(tokens), width))  # (a source the scenario lacked: d_model wide)
    scale = spread(old_x)
    fresh, reused, first = [], [], {}
    for i, word in enumerate(tokens):
        if word in first:  # 1) a repeat
            x[i] = x[first[word]]
            if word not in reused:
                reused.append(word)
            continue
        first[word] = i
        if word in old:  # 2) a word of the old list
            x[i] = old_x[old.index(word)]
        elif i < len(old) and old[i] not in tokens:  # 3) a renamed position
            x[i] = old_x[i]
        else:  # 4) a new word
            x[i] = word_vector(word, x.shape[1], scale)
            fresh.append(word)
    field, x_field = ("source_tokens", "source_x") if source else ("tokens", "x")
    return Retokened(replace(sized, **{field: tokens, x_field: x}), tuple(fresh), tuple(reused))
