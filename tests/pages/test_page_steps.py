"""A scenario of composed attention steps on the pages (AppTest): two query heads on one
key/value head, QK-norm with a gain per dimension, RoPE, ALiBi of chosen slopes, a soft-cap, a
causal window and a sink logit per head. Every page that shows the formula, the steps, a cell,
the gradients, the heads, the mask or a comparison runs on it without an error, and the
formula on Step by step is the list's."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import open_page, switch_to

from attnviz.core import steps as S
from attnviz.scenarios.scenario import projected
from attnviz.ui import state


def combined():
    rng = np.random.default_rng(11)
    listed = (S.Heads(2, 1, project_out=True),
              S.QKNorm(tuple(rng.uniform(0.5, 1.5, 4)), tuple(rng.uniform(0.5, 1.5, 4)), 1e-6),
              S.RoPE(base=100.0), S.ALiBi((0.3, 0.1), "key"), S.SoftCap(2.5), S.Causal(),
              S.Window(4), S.SinkSoftmax((0.5, -0.5)))
    return projected([f"t{i}" for i in range(6)], rng.normal(size=(6, 4)),
                     *(rng.normal(size=(3, 4, 8)) * 0.7), w_o=rng.normal(size=(8, 4)),
                     variant="steps", n_heads=2, params={"steps": listed},
                     title="composed steps")


def shown_text(at) -> str:
    parts = [e.value for kind in ("markdown", "latex", "caption") for e in at.get(kind)]
    return re.sub(r"\\(.)", r"\1", " ".join(str(p) for p in parts))


@pytest.fixture(scope="module")
def at():
    at = open_page()
    at.session_state[state.SCENARIO] = combined()
    return at.run()


@pytest.mark.parametrize("page", ["playground", "step_by_step", "trace", "gradients",
                                  "compare", "masks", "modern", "multi_head"])
def test_every_page_runs_on_a_list_of_steps(at, page):
    switch_to(at, page)
    assert not at.exception, (page, [e.message for e in at.exception])
    assert not at.error, (page, [e.value for e in at.error])
    assert at.session_state[state.SCENARIO].variant == "steps"


def test_step_by_step_writes_each_step_of_the_list(at):
    """The query through QK-norm and RoPE, ALiBi's m_h·j and the cap, from the list."""
    switch_to(at, "step_by_step")
    text = shown_text(at)
    for piece in (r"q_i = R(p_i)\,(\mathrm{RMS}", r"b_{ij} = m_h\,j", r"c\,\tanh"):
        assert re.sub(r"\\(.)", r"\1", piece) in text, piece
