"""The circuit detector's figures read directly: the grid's z is the chosen score with the
named heads outlined (0..1 weights scale; the copying score on the signed −1..1 scale), the
table ranks every head by the chosen score, shades the named ones and writes a dash where a
text repeats no token."""

from __future__ import annotations

import numpy as np

from attnviz.figures.circuits import NAMED_FILL, ranked_table, score_grid, table_rows
from attnviz.scenarios.circuits import HeadScores, score_heads, token_ids

SCORES = HeadScores(previous_token=np.array([[0.2, 0.9], [0.1, 0.6]]),
                    induction=np.array([[0.0, 0.1], [0.93, 0.88]]),
                    duplicate_token=np.zeros((2, 2)), first_token=np.full((2, 2), 0.05),
                    copying=np.array([[0.1, -0.4], [0.99, 0.97]]))


def test_the_grid_is_the_score_with_every_named_head_outlined():
    fig = score_grid(SCORES, "induction")
    np.testing.assert_array_equal(fig.data[0].z, SCORES.induction)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)
    outlined = {(round((s.y0 + s.y1) / 2), round((s.x0 + s.x1) / 2)) for s in fig.layout.shapes}
    assert outlined == {(1, 0), (1, 1)}
    signed = score_grid(SCORES, "copying")
    assert (signed.data[0].zmin, signed.data[0].zmax) == (-1.0, 1.0)
    assert not signed.layout.shapes  # the copying score names no head


def test_the_table_ranks_every_head_and_shades_the_named():
    fig = ranked_table(SCORES, "previous_token")
    rows = table_rows(fig)
    assert [r[1] for r in rows] == ["L0 H1", "L1 H1", "L0 H0", "L1 H0"]
    assert [r[2] for r in rows] == ["0.90", "0.60", "0.20", "0.10"]
    assert rows[0][-1] == "previous-token" and rows[1][-1] == "previous-token, induction"
    fills = fig.data[0].cells.fill.color[0]
    assert list(fills) == [NAMED_FILL, NAMED_FILL, "white", "white"]


def test_a_text_that_repeats_nothing_gets_dashes_not_numbers():
    t = 5
    w = np.broadcast_to(np.tri(t) / np.arange(1, t + 1)[:, None], (1, 2, t, t))
    scores = score_heads(w, token_ids(["a", "b", "c", "d", "e"]))
    assert np.isnan(scores.induction).all() and scores.named("induction") == ()
    rows = table_rows(ranked_table(scores, "first_token"))
    assert all(r[4] == r[5] == "—" for r in rows)  # induction and duplicate-token columns
    assert all(r[2] != "—" for r in rows)
