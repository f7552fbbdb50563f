"""Named scenarios: every example of the seed notebooks plus a few hand-built classroom demos.

Each preset is built by a small function so its data are visible in one place. Seed examples
reproduce the notebooks' numbers where the notebook is right (see tests/scenarios/test_presets.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from attnviz.core.initializers import init_weights
from attnviz.scenarios.patterns import PATTERNS
from attnviz.scenarios.scenario import Scenario


@dataclass(frozen=True)
class Preset:
    """A one-click scenario.

    Attributes
    ----------
    key : str
    title : str
    source : str
        Where it comes from ("seed 000", "hand-built", ...).
    build : callable returning Scenario
    """

    key: str
    title: str
    source: str
    build: Callable[[], Scenario]


def _self(tokens, x, w_q, w_k, w_v, **settings) -> Scenario:
    """A projected self-attention scenario with W_O = identity and a default source sequence."""
    # np.array copies: no two scenarios (or two fields) share a module constant or a matrix
    x = np.array(x, dtype=float)
    w_v = np.array(w_v, dtype=float)
    d_model = x.shape[1]
    d_a = settings.pop("d_a", 3)
    wa_q, wa_k, v_a = init_weights("normal", [(d_model, d_a), (d_model, d_a), (1, d_a)], seed=7)
    defaults = dict(
        w_o=np.eye(w_v.shape[1], d_model),
        source_tokens=tuple(tokens), source_x=x.copy(),
        w_a_q=wa_q, w_a_k=wa_k, v_a=v_a[0],
        pool_w=np.full(d_model, 0.5), pool_b=np.zeros(len(tokens)),
    )
    defaults.update(settings)
    return Scenario(tokens=tuple(tokens), x=x, w_q=np.array(w_q, dtype=float),
                    w_k=np.array(w_k, dtype=float), w_v=w_v, **defaults)


def seed_000() -> Scenario:
    """Seed 000: four words, three dimensions, np.random.seed(42) randint weights."""
    w_q, w_k, w_v = init_weights("randint", [(3, 3)] * 3, seed=42)
    return _self(["word_1", "word_2", "word_3", "word_4"],
                 [[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]], w_q, w_k, w_v,
                 title="Four words (seed 000)",
                 description="General attention from scratch: scaled dot-product "
                             "self-attention on four 3-d word embeddings.")


def seed_001_causal() -> Scenario:
    """Seed 001's causal example: Q, K, V given directly, causal mask, scaled."""
    q = np.array([[1.0, 0, 0], [0, 1, 0]])
    k = np.array([[1.0, 2, 3], [4, 5, 6]])
    v = np.array([[0.0, 1, 0], [1, 0, 1]])
    base = seed_000()
    return Scenario(
        tokens=("q0", "q1"), x=q.copy(), w_q=np.eye(3), w_k=np.eye(3), w_v=np.eye(3),
        w_o=np.eye(3), variant="causal", source_tokens=("k0", "k1"), source_x=k.copy(),
        w_a_q=base.w_a_q, w_a_k=base.w_a_k, v_a=base.v_a,
        direct=True, q_in=q, k_in=k, v_in=v,
        title="Causal dot-product attention (seed 001)",
        description="Two queries, two keys: query 0 may only see key 0. The notebook prints "
                    "[[0, 0.3595, 0], [1, 0.6405, 1]] because its softmax runs over the "
                    "queries; the right answer is [[0, 1, 0], [0.8497, 0.1503, 0.8497]].")


def seed_002() -> Scenario:
    """Seed 002: step-by-step self-attention on four words with the same seeded weights."""
    w_q, w_k, w_v = init_weights("randint", [(3, 3)] * 3, seed=42)
    return _self(["word_1", "word_2", "word_3", "word_4"],
                 [[1, 0, 1], [0, 1, 1], [1, 0, 0], [1, 1, 1]], w_q, w_k, w_v,
                 title="Step-by-step self-attention (seed 002)",
                 description="Word 1 scores [23, 11, 18, 29] against the four keys; "
                             "softmax(scores/√3) mixes the values.")


def seed_003_glorot() -> Scenario:
    """Seed 003's Attention class: Glorot-uniform weights, latent sizes d_k = 3, d_v = 2."""
    x = init_weights("normal", [(5, 4)], seed=3)[0].round(2)
    w_q, w_k, w_v = init_weights("glorot_uniform", [(4, 3), (4, 3), (4, 2)], seed=3)
    return _self(["the", "cat", "sat", "on", "mats"], x, w_q, w_k, w_v,
                 title="Glorot-initialised attention (seed 003)",
                 description="Weights drawn from U(−√(6/(fan_in+fan_out)), +…); queries and keys "
                             "live in a 3-d latent space, values in a 2-d one; scaled by √d_k.")


SLEEPY_TOKENS = ("The", "sleepy", "child", "reads", "a", "book")
SLEEPY_EMBEDDINGS = np.array([[0.0, 0, 0], [2, 0, 1], [1, -1, -2], [2, 3, 1], [-2, 0, 0],
                              [0, 2, 1]])
SLEEPY_VALUES = np.array([[0.0], [-0.2], [0.3], [0.4], [0.0], [0.1]])


def seed_004_sleepy() -> Scenario:
    """Seed 004: the single query "book" against "The sleepy child reads a book"."""
    base = seed_000()
    return Scenario(
        tokens=("book",), x=SLEEPY_EMBEDDINGS[5:].copy(), w_q=np.eye(3), w_k=np.eye(3),
        w_v=np.eye(3), w_o=np.eye(3), variant="scaled_dot_product",
        source_tokens=SLEEPY_TOKENS, source_x=SLEEPY_EMBEDDINGS.copy(),
        w_a_q=base.w_a_q, w_a_k=base.w_a_k, v_a=base.v_a,
        direct=True, q_in=SLEEPY_EMBEDDINGS[5:].copy(), k_in=SLEEPY_EMBEDDINGS.copy(),
        v_in=SLEEPY_VALUES.copy(),
        title="The sleepy child reads a book (seed 004)",
        description="One query (book = [0, 2, 1]) against six keys (the word embeddings); the "
                    "values are each word's sentiment. b = softmax(q·Kᵀ/√3), output = b·V.")


def seed_004_two_heads() -> Scenario:
    """Seed 004's trainable two-head self-attention, heads mixed by a weight vector."""
    w_q, w_k, w_v = init_weights("normal", [(3, 6), (3, 6), (3, 4)], seed=4)
    return _self(SLEEPY_TOKENS, SLEEPY_EMBEDDINGS, w_q, w_k, w_v, variant="multi_head",
                 n_heads=2, head_mix=np.array([0.7, -0.4]), w_o=np.eye(4),
                 pool_w=np.array([0.5, -0.3, 0.8]),
                 title="Two heads mixed by a weight vector (seed 004)",
                 description="Two heads (d_k = 3, d_v = 2) on the sleepy-child embeddings; "
                             "the notebook combines them with a weight per head instead of W_O.")


def cat_sat() -> Scenario:
    """Hand-built: a repeated word, causal attention, positional encoding on."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    x = np.array([[1.0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0.5, 0, 0, 1], [1, 0, 0, 0],
                  [0, 1, 1, 0]])
    w_q, w_k, w_v = init_weights("glorot_uniform", [(4, 4)] * 3, seed=1)
    return _self(tokens, x, w_q, w_k, w_v, variant="causal", use_pe=True,
                 title="The cat sat on the mat (causal, with PE)",
                 description="'the' appears twice: identical embeddings, but positional encoding "
                             "makes its two copies attend differently.")


def translation() -> Scenario:
    """Hand-built: encoder–decoder attention from English to French."""
    src = ["the", "black", "cat"]
    tgt = ["le", "chat", "noir"]
    src_x = np.array([[1.0, 0, 0, 0], [0, 1, 0, 0.5], [0, 0, 1, 0]])
    tgt_x = np.array([[0.9, 0, 0.1, 0], [0, 0.1, 0.9, 0], [0, 0.9, 0, 0.4]])
    w = np.eye(4) * 2.0
    return _self(tgt, tgt_x, w, w, np.eye(4), variant="cross", source_tokens=tuple(src),
                 source_x=src_x,
                 title="Translation: the black cat → le chat noir (cross-attention)",
                 description="Each French word (query) looks for its English counterpart "
                             "(keys): 'chat' attends to 'cat' although the word order differs.")


def bahdanau() -> Scenario:
    """Hand-built: additive attention on the translation example."""
    sc = translation()
    w_a_q, w_a_k, v_a = init_weights("normal", [(4, 3), (4, 3), (1, 3)], seed=11)
    return replace(sc, variant="additive", w_a_q=w_a_q, w_a_k=w_a_k, v_a=v_a[0],
                   title="Additive (Bahdanau) attention",
                   description="A one-layer network scores each decoder-encoder pair; the "
                               "weights form the context vector for each target word.")


PRESETS: dict[str, Preset] = {p.key: p for p in (
    Preset("seed_000", "Four words (seed 000)", "seed 000", seed_000),
    Preset("seed_001_causal", "Causal example (seed 001)", "seed 001", seed_001_causal),
    Preset("seed_002", "Step-by-step self-attention (seed 002)", "seed 002", seed_002),
    Preset("seed_003_glorot", "Glorot attention class (seed 003)", "seed 003", seed_003_glorot),
    Preset("seed_004_sleepy", "The sleepy child reads a book (seed 004)", "seed 004",
           seed_004_sleepy),
    Preset("seed_004_two_heads", "Two heads mixed by weights (seed 004)", "seed 004",
           seed_004_two_heads),
    Preset("cat_sat", "The cat sat on the mat (causal + PE)", "hand-built", cat_sat),
    Preset("translation", "Translation (cross-attention)", "hand-built", translation),
    Preset("bahdanau", "Additive (Bahdanau) attention", "hand-built", bahdanau),
)}
# attention patterns built by construction (attnviz.scenarios.patterns)
PRESETS.update({key: Preset(key, title, "by construction", build)
                for key, title, build in PATTERNS})

DEFAULT_PRESET = "seed_000"


def default_scenario() -> Scenario:
    """The scenario a new session starts with."""
    return PRESETS[DEFAULT_PRESET].build()
