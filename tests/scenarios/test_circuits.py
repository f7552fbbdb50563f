"""The circuit detector's scores and naming rule (attnviz/scenarios/circuits.py): hand-built
patterns with known scores, an explicit-loop reference, the OV copying score against the full
vocabulary circuit, and the shipped induction model, whose two layer-1 heads both score as
induction heads and whose named heads are the ones ablation shows matter.

Measured on the shipped model (attnviz/io/examples/induction_model.npz), held-out sequence:
previous-token 0.265 (L0 H0) and 0.559 (L0 H1), prefix-matching 0.717 (L1 H0) and 0.825
(L1 H1); zeroing one head changes the task loss of the evaluation batch (0.942) by −0.036
(L0 H0), +1.548 (L0 H1), +0.771 (L1 H0), +0.480 (L1 H1) — on 4,000 task sequences −0.003,
+1.753, +0.678, +0.533. So the three named heads matter and the unnamed one does not; within
the induction heads the lower-ranked costs more when zeroed (the prefix-matching score ranks
attention, not use). On Olsson et al.'s probe (12 random tokens repeated, 32 sequences):
previous-token 0.276 / 0.579, induction 0.855 / 0.861, no duplicate-token or first-token head.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.core.transformer import forward
from attnviz.io.examples.make_induction_model import load_induction_model
from attnviz.scenarios import circuits
from attnviz.scenarios.circuits import (
    KINDS,
    THRESHOLD,
    HeadScores,
    duplicate_token_score,
    first_token_score,
    named_heads,
    ov_copying_score,
    prefix_matching_score,
    previous_token_score,
    repeated_tokens,
    score_heads,
)
from attnviz.scenarios.induction import identify_heads, induction_loss


def causal_uniform(t: int) -> np.ndarray:
    return np.tri(t) / np.arange(1, t + 1)[:, None]


def rows_on(targets: np.ndarray) -> np.ndarray:
    """Attention spread evenly over each row's targets (a row without any: on itself)."""
    w = targets.astype(float)
    empty = ~targets.any(axis=1)
    w[empty, empty.nonzero()[0]] = 1.0
    return w / w.sum(axis=1, keepdims=True)


TOKENS = np.array([5, 1, 2, 3, 1, 2, 3, 7])  # 1 2 3 repeats


# ------------------------------------------------------------------------------ hand-built


def test_each_score_is_one_on_its_own_pattern_and_low_on_the_others():
    t = len(TOKENS)
    shift = np.eye(t, k=-1)
    shift[0, 0] = 1
    sink = np.zeros((t, t))
    sink[:, 0] = 1
    dup = rows_on(circuits.duplicate_targets(TOKENS))
    ind = rows_on(circuits.prefix_targets(TOKENS))
    w = np.stack([shift, sink, dup, ind])  # (4, t, t)
    got = np.stack([previous_token_score(w), first_token_score(w),
                    duplicate_token_score(w, TOKENS), prefix_matching_score(w, TOKENS)])
    np.testing.assert_allclose(np.diag(got), 1.0)
    assert (got[~np.eye(4, dtype=bool)] < THRESHOLD).all()


def test_uniform_causal_attention_scores_what_its_keys_count():
    t = len(TOKENS)
    uniform = causal_uniform(t)
    assert previous_token_score(uniform) == pytest.approx(np.mean(1 / np.arange(2, t + 1)))
    assert first_token_score(uniform) == pytest.approx(np.mean(1 / np.arange(2, t + 1)))
    # queries 4, 5, 6 each have one earlier occurrence (and one key after it)
    assert duplicate_token_score(uniform, TOKENS) == pytest.approx(np.mean(1 / np.arange(5, 8)))


def explicit(weights: np.ndarray, tokens, offset: int) -> float:
    """The duplicate-token (offset 0) or prefix-matching (offset 1) score by loops."""
    per_query = []
    for i in range(len(tokens)):
        keys = {j + offset for j in range(i) if tokens[j] == tokens[i]}
        if keys:
            per_query.append(sum(weights[i, k] for k in keys))
    return float(np.mean(per_query))


def test_scores_match_an_explicit_loop_on_random_attention():
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 4, size=12)  # many repeats, some of them several times
    logits = rng.normal(size=(3, 12, 12))
    logits[:, ~np.tri(12, dtype=bool)] = -np.inf
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    for h in range(3):
        assert duplicate_token_score(w, tokens)[h] == pytest.approx(explicit(w[h], tokens, 0))
        assert prefix_matching_score(w, tokens)[h] == pytest.approx(explicit(w[h], tokens, 1))
        assert previous_token_score(w)[h] == pytest.approx(
            np.mean([w[h, i, i - 1] for i in range(1, 12)]))
        assert first_token_score(w)[h] == pytest.approx(np.mean(w[h, 1:, 0]))


def test_scores_need_a_repeated_token_and_square_weights():
    with pytest.raises(ValueError, match="duplicate-token score needs a repeated token"):
        duplicate_token_score(np.eye(3), [0, 1, 2])
    with pytest.raises(ValueError, match="square"):
        first_token_score(np.ones((2, 3)))
    with pytest.raises(ValueError, match="one entry per position"):
        prefix_matching_score(np.eye(3), [0, 0])


# ------------------------------------------------------------------------------ naming


def test_every_head_above_the_threshold_is_named_highest_first():
    scores = np.array([[0.2, 0.5], [0.93, 0.879]])
    assert named_heads(scores) == ((1, 0), (1, 1), (0, 1))  # 0.5 is at the threshold
    assert named_heads(scores, 0.9) == ((1, 0),)
    assert named_heads(np.zeros((2, 2))) == ()
    tied = np.array([[0.7, 0.7], [0.7, 0.1]])
    assert named_heads(tied) == ((0, 0), (0, 1), (1, 0))


def test_score_heads_averages_the_sequences_and_names_each_kind():
    rng = np.random.default_rng(0)
    ids = repeated_tokens(rng, np.arange(10, 30), 5, batch=3, prefix=[1])  # (3, 11)
    t = ids.shape[1]
    stacks = []
    for seq in ids:
        shift = np.eye(t, k=-1)
        shift[0, 0] = 1
        layer0 = np.stack([shift, rows_on(circuits.duplicate_targets(seq))])
        layer1 = np.stack([rows_on(circuits.prefix_targets(seq)), np.tile(np.eye(t)[0], (t, 1))])
        stacks.append(np.stack([layer0, layer1]))  # (2, 2, t, t)
    w = np.stack(stacks)  # (3, 2, 2, t, t)
    scores = score_heads(w, ids)
    assert scores.named("previous_token") == ((0, 0),)
    assert scores.named("duplicate_token") == ((0, 1),)
    assert scores.named("induction") == ((1, 0),)
    assert scores.named("first_token") == ((1, 1),)
    assert scores.roles(1, 0) == ("induction",)
    assert scores.kinds == KINDS and scores.copying is None
    one = score_heads(w[1], ids[1])
    np.testing.assert_allclose(scores.induction,
                               np.mean([score_heads(w[b], ids[b]).induction
                                        for b in range(3)], axis=0))
    assert one.shape == (2, 2)
    assert scores.ranked("first_token")[0] == (1, 1)
    with pytest.raises(ValueError, match="kind must be one of"):
        scores.score("copying")
    with pytest.raises(ValueError, match="token ids of shape"):
        score_heads(w, ids[:2])
    with pytest.raises(ValueError, match="threshold"):
        score_heads(w, ids, threshold=0.0)


def test_repeated_tokens_repeat_after_the_prefix():
    ids = repeated_tokens(np.random.default_rng(1), [4, 5, 6, 7], 6, batch=5, prefix=[0])
    assert ids.shape == (5, 13) and (ids[:, 0] == 0).all()
    np.testing.assert_array_equal(ids[:, 1:7], ids[:, 7:])
    assert np.isin(ids[:, 1:], [4, 5, 6, 7]).all()
    again = repeated_tokens(np.random.default_rng(1), [4, 5, 6, 7], 6, batch=5, prefix=[0])
    np.testing.assert_array_equal(ids, again)
    with pytest.raises(ValueError, match="length must be a whole number >= 2"):
        repeated_tokens(np.random.default_rng(1), [4, 5], 1)


def test_ov_copying_score_is_the_vocabulary_circuits_eigenvalue_ratio():
    rng = np.random.default_rng(2)
    w_ev, w_ou = rng.normal(size=(9, 3)), rng.normal(size=(3, 9))
    eig = np.linalg.eigvals(w_ev @ w_ou)  # the 9 × 9 circuit: 3 nonzero eigenvalues
    assert ov_copying_score(w_ev, w_ou) == pytest.approx(eig.real.sum() / np.abs(eig).sum())
    assert ov_copying_score(w_ev, w_ev.T) == pytest.approx(1.0)  # W W^T: a pure copier
    assert ov_copying_score(w_ev, -w_ev.T) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="transposed shapes"):
        ov_copying_score(w_ev, w_ou[:, :4])
    scores = HeadScores(*(np.zeros((1, 2)),) * 4, copying=np.array([[0.9, -0.2]]))
    assert scores.kinds[-1] == "copying" and scores.named("copying") == ()


# ------------------------------------------------------------------------------ the shipped model


@pytest.fixture(scope="module")
def shipped():
    return load_induction_model()


def test_the_shipped_model_s_named_heads_are_those_ablation_shows_matter(shipped):
    """The page names every head at or above the threshold; zeroing each named head raises the
    task loss (of the batch the page's ablation shows) by more than 0.4, zeroing the unnamed
    one changes it by less than 0.1."""
    run = shipped.run
    roles = identify_heads(run.previous_token[-1], run.prefix_matching[-1])
    assert roles.inductions == ((1, 1), (1, 0))  # 0.825 and 0.717: both, highest first
    assert roles.previous_tokens == ((0, 1),)  # 0.559 (L0 H0: 0.265)
    assert roles.induction == (1, 1) and roles.formed
    assert run.roles == roles
    assert [roles.role(*h) for h in ((0, 0), (0, 1), (1, 0), (1, 1))] == \
        ["", "previous", "induction", "induction"]
    full = induction_loss(shipped.params, shipped.settings)
    rise = {}
    for head in ((0, 0), (0, 1), (1, 0), (1, 1)):
        keep = np.ones((2, 2), dtype=bool)
        keep[head] = False
        rise[head] = induction_loss(shipped.params, shipped.settings, keep) - full
    named = set(roles.previous_tokens) | set(roles.inductions)
    assert {head for head, r in rise.items() if r > 0.4} == named, rise
    assert all(abs(r) < 0.1 for head, r in rise.items() if head not in named), rise


def test_the_detector_finds_the_shipped_circuit_on_repeated_random_tokens(shipped):
    ids = repeated_tokens(np.random.default_rng(0), np.arange(shipped.settings.vocab_size), 12,
                          batch=32)
    result = forward(shipped.params, ids)
    weights = np.moveaxis(result.weights, 1, 0)  # (batch, layers, heads, t, t)
    scores = score_heads(weights, ids)
    assert set(scores.named("induction")) == {(1, 0), (1, 1)}
    assert scores.named("previous_token") == ((0, 1),)
    assert scores.named("duplicate_token") == () and scores.named("first_token") == ()
