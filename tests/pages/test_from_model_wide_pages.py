"""A real head wider than the editing limit (a GPT-2-small-sized head: x 32 × 769 with the bias
column, W_Q, W_K, W_V 769 × 64, W_O 64 × 768) opens on every page without an exception (issue
29 item 2: "open on every page"): the d_model box of the size controls had a maximum of
MAX_D_MODEL (64) and refused the value 769 on the Playground's full view, Multi-head and the
encoder–decoder page. Its width is the model's: the box shows it and is disabled.

The scenario is built directly (random numbers in the head's shapes, the causal variant), so
no model is needed here; tests/scenarios/test_from_model_wide.py opens a real one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from apptest_helpers import open_page, switch_to

from attnviz.scenarios import limits
from attnviz.scenarios.scenario import projected
from attnviz.ui import state

PAGES = Path(__file__).resolve().parents[2] / "pages"


def wide_head():
    rng = np.random.default_rng(0)
    t, d, d_k = 32, 769, 64
    x = np.hstack([rng.normal(size=(t, d - 1)), np.ones((t, 1))])
    w_q, w_k, w_v = (rng.normal(0, 0.02, size=(d, d_k)) for _ in range(3))
    return projected([f"t{i}" for i in range(t)], x, w_q, w_k, w_v,
                     w_o=rng.normal(0, 0.02, size=(d_k, d - 1)), variant="causal",
                     title="gpt2 layer 0, head 0")


def test_a_wide_real_head_opens_on_every_page() -> None:
    pages = sorted(p.stem for p in PAGES.glob("*.py"))
    assert {"playground", "multi_head", "encoder_decoder", "step_by_step"} <= set(pages)
    sc = wide_head()
    assert sc.d_model > limits.MAX_D_MODEL
    at = open_page(None, timeout=120)
    failed = {}
    for page in pages:
        at.session_state[state.SCENARIO] = sc
        switch_to(at, page)
        if at.exception:
            failed[page] = [e.message[:200] for e in at.exception]
    assert not failed, failed
    switch_to(at, "playground")  # the full view: the size controls
    box = next(n for n in at.number_input if str(n.key).startswith("playground_d_model"))
    assert box.value == sc.d_model and box.disabled


def test_save_and_share_says_why_a_wide_head_has_no_file_and_no_link() -> None:
    """A file of a 769-wide head was offered but could not be loaded back (files hold d_model
    ≤ 64); the page says so instead, and the link box says why there is no link."""
    from attnviz.teach.text import common

    sc = wide_head()
    at = open_page(None, timeout=120)
    at.session_state[state.SCENARIO] = sc
    switch_to(at, "share")
    assert not at.exception, [e.message for e in at.exception]
    said = common.SHARE_REAL_HEAD_FILE.format(d=sc.d_model, limit=limits.MAX_D_MODEL)
    assert said in [i.value for i in at.info]
    assert not [b for b in at.get("download_button") if "scenario_json" in str(b.proto.id)]
    assert any("cannot be shared by a link" in w.value for w in at.warning)
