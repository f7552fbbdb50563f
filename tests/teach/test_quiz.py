"""Scoring predictions of the most-attended key."""

import numpy as np
import pytest

from attnviz.teach.quiz import answers, practice_question, score_predictions

W = np.array([[0.7, 0.2, 0.1],
              [0.4, 0.4, 0.2],   # a tie: keys 0 and 1
              [0.0, 0.0, 0.0],   # fully masked: not scored
              [0.1, 0.3, 0.6]])


def test_answers_with_ties_and_masked_rows():
    assert answers(W) == ((0,), (0, 1), (), (2,))


def test_all_right():
    s = score_predictions(W, [0, 1, None, 2])
    assert s.correct.tolist() == [True, True, False, True]
    assert s.scored.tolist() == [True, True, False, True]
    assert (s.n_correct, s.n_scored) == (3, 3)
    assert s.fraction == 1.0
    assert s.captured == pytest.approx(1.0)


def test_partial_credit():
    s = score_predictions(W, [1, None, 0, 1])
    assert s.correct.tolist() == [False, False, False, False]
    assert s.n_correct == 0 and s.n_scored == 3
    np.testing.assert_allclose(s.predicted_weight, [0.2, 0.0, 0.0, 0.3])
    assert s.captured == pytest.approx((0.2 + 0.0 + 0.3) / (0.7 + 0.4 + 0.6))


def test_bad_predictions_raise():
    with pytest.raises(ValueError, match="one prediction per query"):
        score_predictions(W, [0, 1])
    with pytest.raises(ValueError, match="between 0 and 2"):
        score_predictions(W, [0, 1, 2, 3])


def test_practice_question_has_unique_answers_and_is_seeded():
    q1 = practice_question(5, t=4, d_k=2)
    q2 = practice_question(5, t=4, d_k=2)
    np.testing.assert_array_equal(q1.q, q2.q)
    scores = q1.q @ q1.k.T
    for row in scores:
        assert np.sum(row == row.max()) == 1
    assert [len(a) for a in answers(q1.result.weights)] == [1, 1, 1, 1]
    assert score_predictions(q1.result.weights, list(np.argmax(scores, axis=1))).fraction == 1
    assert not np.array_equal(practice_question(6).q, q1.q)
    assert np.all(np.abs(q1.q) <= 2) and np.all(q1.q == np.round(q1.q))
