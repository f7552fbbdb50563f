"""New token lists: repeated words reuse a vector, old words keep theirs, renamed positions keep
their row, new words get a vector seeded by the word."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.tokens import retoken, spread, word_vector

SEED_000 = PRESETS["seed_000"].build()  # word_1 .. word_4, one-hot-ish 3-d rows


def test_the_cat_sat_on_the_mat_after_the_default():
    done = retoken(SEED_000, "the cat sat on the mat".split())
    x = done.scenario.x
    assert done.scenario.tokens == ("the", "cat", "sat", "on", "the", "mat")
    np.testing.assert_array_equal(x[:4], SEED_000.x)  # renamed positions keep their rows
    np.testing.assert_array_equal(x[4], x[0])  # the second "the" is the first
    np.testing.assert_array_equal(x[5], word_vector("mat", 3, spread(SEED_000.x)))
    assert np.abs(x[5]).sum() > 0  # never a silent zero row
    assert done.fresh == ("mat",) and done.reused == ("the",)


def test_an_old_word_keeps_its_vector_wherever_it_moves():
    done = retoken(SEED_000, ["word_3", "word_1", "new"])
    np.testing.assert_array_equal(done.scenario.x[0], SEED_000.x[2])
    np.testing.assert_array_equal(done.scenario.x[1], SEED_000.x[0])
    # position 2 held word_3, which is still in the list: not a rename, so "new" is new
    assert done.fresh == ("new",)


def test_the_vector_of_a_word_follows_the_documented_rule():
    """Independent of the module: BLAKE2b-8 of the UTF-8 bytes, little-endian, seeds
    numpy's default generator; normal entries at the given scale, rounded to 2 decimals."""
    seed = int.from_bytes(hashlib.blake2b("Köln 🚆".encode(), digest_size=8).digest(), "little")
    expected = np.round(np.random.default_rng(seed).normal(0.0, 0.5, size=5), 2)
    np.testing.assert_array_equal(word_vector("Köln 🚆", 5, 0.5), expected)


@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=8))
def test_every_word_has_one_vector_and_old_words_keep_theirs(words):
    done = retoken(SEED_000, words)
    x = done.scenario.x
    assert x.shape == (len(words), SEED_000.d_model)
    for i, w in enumerate(words):
        first = words.index(w)
        np.testing.assert_array_equal(x[i], x[first])
        if w in SEED_000.tokens:
            np.testing.assert_array_equal(x[i], SEED_000.x[SEED_000.tokens.index(w)])
    assert set(done.fresh) <= set(words) and len(done.fresh) == len(set(done.fresh))


def test_source_tokens_are_retokened_the_same_way():
    sc = PRESETS["translation"].build()
    words = list(sc.source_tokens) + ["neu"]  # one more source word
    done = retoken(sc, words, source=True)
    np.testing.assert_array_equal(done.scenario.source_x[:-1], sc.source_x)
    assert done.scenario.tokens == sc.tokens and done.fresh == ("neu",)
    assert done.scenario.source_x.shape == (len(words), sc.d_model)
