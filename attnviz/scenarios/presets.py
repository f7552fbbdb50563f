"""Named scenarios: every example of the seed notebooks plus a few hand-built classroom demos.

Each preset is built by a small function so its data are visible in one place. Seed examples
reproduce the notebooks' numbers where the notebook is right (see tests/scenarios/test_presets.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from attnviz.core.initializers import init_weights
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.patterns import PATTERNS
from attnviz.scenarios.registry import variant_presets
from attnviz.scenarios.scenario import Scenario, projected
from attnviz.scenarios.variant import Preset


def seed_000() -> Scenario:
    """Seed 000: four words, three dimensions, np.random.seed(42) randint weights."""
    w_q, w_k, w_v = init_weights("randint", [(3, 3)] * 3, seed=42)
    return projected(["word_1", "word_2", "word_3", "word_4"],
                 [[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]], w_q, w_k, w_v,
                 title="Four words (seed 000)",
                 description="General attention from scratch: scaled dot-product "
                             "self-attention on four 3-d word embeddings.")


def seed_001_causal() -> Scenario:
    """Seed 001's causal example: Q, K, V given directly, causal mask, scaled."""
    q = np.array([[1.0, 0, 0], [0, 1, 0]])
    k = np.array([[1.0, 2, 3], [4, 5, 6]])
    v = np.array([[0.0, 1, 0], [1, 0, 1]])
    return Scenario(
        tokens=("q0", "q1"), x=q.copy(), w_q=np.eye(3), w_k=np.eye(3), w_v=np.eye(3),
        w_o=np.eye(3), variant="causal", source_tokens=("k0", "k1"), source_x=k.copy(),
        direct=True, q_in=q, k_in=k, v_in=v,
        title="Causal dot-product attention (seed 001)",
        description="Two queries, two keys: query 0 may only see key 0. The notebook prints "
                    "[[0, 0.3595, 0], [1, 0.6405, 1]] because its softmax runs over the "
                    "queries; the right answer is [[0, 1, 0], [0.8497, 0.1503, 0.8497]].")


def seed_002() -> Scenario:
    """Seed 002: step-by-step self-attention on four words with the same seeded weights."""
    w_q, w_k, w_v = init_weights("randint", [(3, 3)] * 3, seed=42)
    return projected(["word_1", "word_2", "word_3", "word_4"],
                 [[1, 0, 1], [0, 1, 1], [1, 0, 0], [1, 1, 1]], w_q, w_k, w_v,
                 title="Step-by-step self-attention (seed 002)",
                 description="Word 1 scores [23, 11, 18, 29] against the four keys; "
                             "softmax(scores/√3) mixes the values.")


def seed_003_glorot() -> Scenario:
    """Seed 003's Attention class: Glorot-uniform weights, latent sizes d_k = 3, d_v = 2."""
    x = init_weights("normal", [(5, 4)], seed=3)[0].round(2)
    w_q, w_k, w_v = init_weights("glorot_uniform", [(4, 3), (4, 3), (4, 2)], seed=3)
    return projected(["the", "cat", "sat", "on", "mats"], x, w_q, w_k, w_v,
                 title="Glorot-initialised attention (seed 003)",
                 description="Weights drawn from U(−√(6/(fan_in+fan_out)), +…); queries and keys "
                             "live in a 3-d latent space, values in a 2-d one; scaled by √d_k.")


SLEEPY_TOKENS = ("The", "sleepy", "child", "reads", "a", "book")
SLEEPY_EMBEDDINGS = np.array([[0.0, 0, 0], [2, 0, 1], [1, -1, -2], [2, 3, 1], [-2, 0, 0],
                              [0, 2, 1]])
SLEEPY_VALUES = np.array([[0.0], [-0.2], [0.3], [0.4], [0.0], [0.1]])


def seed_004_sleepy() -> Scenario:
    """Seed 004: the single query "book" against "The sleepy child reads a book"."""
    return Scenario(
        tokens=("book",), x=SLEEPY_EMBEDDINGS[5:].copy(), w_q=np.eye(3), w_k=np.eye(3),
        w_v=np.eye(3), w_o=np.eye(3), variant="scaled_dot_product",
        source_tokens=SLEEPY_TOKENS, source_x=SLEEPY_EMBEDDINGS.copy(),
        direct=True, q_in=SLEEPY_EMBEDDINGS[5:].copy(), k_in=SLEEPY_EMBEDDINGS.copy(),
        v_in=SLEEPY_VALUES.copy(),
        title="The sleepy child reads a book (seed 004)",
        description="One query (book = [0, 2, 1]) against six keys (the word embeddings); the "
                    "values are each word's sentiment. b = softmax(q·Kᵀ/√3), output = b·V.")


def seed_004_two_heads() -> Scenario:
    """Seed 004's trainable two-head self-attention, heads mixed by a weight vector."""
    w_q, w_k, w_v = init_weights("normal", [(3, 6), (3, 6), (3, 4)], seed=4)
    return projected(SLEEPY_TOKENS, SLEEPY_EMBEDDINGS, w_q, w_k, w_v, variant="multi_head",
                 n_heads=2, head_mix=np.array([0.7, -0.4]), w_o=np.eye(4),
                 pool_w=np.array([0.5, -0.3, 0.8]),
                 title="Two heads mixed by a weight vector (seed 004)",
                 description="Two heads (d_k = 3, d_v = 2) on the sleepy-child embeddings; "
                             "the notebook combines them with a weight per head instead of W_O.")


def made(preset: Preset) -> Preset:
    """A variant's preset whose ``build`` makes the Scenario from the variant's
    :class:`~attnviz.scenarios.variant.Draft`."""
    return replace(preset, build=functools.partial(_from_draft, preset.build))


def _from_draft(build) -> Scenario:
    d = build()
    return d if isinstance(d, Scenario) else projected(d.tokens, d.x, d.w_q, d.w_k, d.w_v,
                                                       **d.fields)


# Where each seed preset differs from its notebook (checked against ../shared/seeds and
# tests/scenarios/test_presets.py); the bugs among them are on the Pitfalls page.
FIDELITY = {
    "seed_000": "Same numbers as the notebook: its scores, weights and outputs are reproduced "
                "exactly (np.random.seed(42) integer weights).",
    "seed_001_causal": "The notebook prints [[0, 0.3595, 0], [1, 0.6405, 1]] for this masked "
                       "self-attention: its softmax normalises over the queries; over the keys "
                       "the output is [[0, 1, 0], [0.8497, 0.1503, 0.8497]], shown here. Its "
                       "markdown example mask [[0, 0], [−1e9, 0]] has the wrong triangle "
                       "(query 0 sees the future key 1). Both are on the Pitfalls page.",
    "seed_002": "Same numbers as the notebook: word 1's scores [23, 11, 18, 29], the weights "
                "and the outputs are reproduced exactly.",
    "seed_003_glorot": "The notebook prints no numbers and names no tokens (these are "
                       "invented). Its W_V is drawn with the limit √(6/(d_L + d_K)) — d_K where "
                       "W_V's size needs d_V; here W_V uses √(6/(d_L + d_V)) (Pitfalls).",
    "seed_004_sleepy": "The notebook never uses this table: it prints −0.1116 from unseeded "
                       "random arrays, and prints K transposed (3×6 for \"Keys: (6, 3)\"). "
                       "From the table, softmax(K q / √3)·V = 0.3078, shown here.",
    "seed_004_two_heads": "The notebook's two heads use unseeded random weights, so its numbers "
                          "cannot be reproduced; these are seeded. Its \"in one catch\" pooling "
                          "cell drops the tanh its step-by-step cells apply (Pitfalls).",
}

PRESETS: dict[str, Preset] = {p.key: p for p in (
    Preset("seed_000", "Four words (seed 000)", "seed 000", seed_000, FIDELITY["seed_000"]),
    Preset("seed_001_causal", "Causal example (seed 001)", "seed 001", seed_001_causal,
           FIDELITY["seed_001_causal"]),
    Preset("seed_002", "Step-by-step self-attention (seed 002)", "seed 002", seed_002,
           FIDELITY["seed_002"]),
    Preset("seed_003_glorot", "Glorot attention class (seed 003)", "seed 003", seed_003_glorot,
           FIDELITY["seed_003_glorot"]),
    Preset("seed_004_sleepy", "The sleepy child reads a book (seed 004)", "seed 004",
           seed_004_sleepy, FIDELITY["seed_004_sleepy"]),
    Preset("seed_004_two_heads", "Two heads mixed by weights (seed 004)", "seed 004",
           seed_004_two_heads, FIDELITY["seed_004_two_heads"]),
    *(made(p) for p in variant_presets()),
)}
# attention patterns built by construction (attnviz.scenarios.patterns)
PRESETS.update({key: Preset(key, title, "by construction", build)
                for key, title, build in PATTERNS})

DEFAULT_PRESET = "seed_000"


def default_scenario() -> Scenario:
    """The scenario a new session starts with."""
    return PRESETS[DEFAULT_PRESET].build()


EDITED_FROM = "Edited from {title}"  # the title of a preset's scenario once it was edited


@functools.cache
def _built() -> dict[str, tuple[str, str]]:
    """Every preset's scenario title and content fingerprint (presets are deterministic)."""
    out = {}
    for key, preset in PRESETS.items():
        scenario = preset.build()
        out[key] = (scenario.title, fingerprint(scenario))
    return out


def preset_of(scenario: Scenario) -> str | None:
    """The key of the preset this scenario still is (every number and setting equal), or None
    (edited, or not from a preset)."""
    digest = None
    for key, (title, print_) in _built().items():
        if title == scenario.title:
            digest = digest or fingerprint(scenario)
            if digest == print_:
                return key
    return None


def weights_from_preset(scenario: Scenario) -> str | None:
    """The key of the preset the scenario was loaded from (by its title) while W_Q, W_K and
    W_V still hold that preset's values, else None (made by an initialiser, edited, or loaded
    from a file or a link)."""
    for key, (title, _) in _built().items():
        if title == scenario.title and all(
                np.array_equal(getattr(scenario, f), w)
                for f, w in zip(("w_q", "w_k", "w_v"), _built_weights(key), strict=True)):
            return key
    return None


@functools.cache
def _built_weights(key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    built = PRESETS[key].build()
    return built.w_q, built.w_k, built.w_v


def with_true_title(scenario: Scenario, origins: Mapping[str, str] | None = None) -> Scenario:
    """The scenario with a title and description that hold for its numbers.

    A preset's own while it is that preset; "Edited from <title>" and no description (its
    claims no longer hold) once edited. The same for a scenario opened whole from elsewhere
    (a real model's head, a trained induction head, a file, a link): ``origins`` maps each
    such title to the :func:`fingerprint` it was opened with. Anything else stays as it is.
    """
    titles = {title for title, _ in _built().values()}
    if scenario.title in titles and preset_of(scenario) is None:
        return _edited(scenario)
    opened = (origins or {}).get(scenario.title)
    if opened is not None and scenario.title not in titles \
            and not scenario.title.startswith(EDITED_FROM.format(title="")) \
            and fingerprint(scenario) != opened:
        return _edited(scenario)
    return scenario


def _edited(scenario: Scenario) -> Scenario:
    return replace(scenario, title=EDITED_FROM.format(title=scenario.title), description="")
