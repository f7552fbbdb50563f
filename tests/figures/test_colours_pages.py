"""AppTest: the colour conventions and the defaults as the pages draw them — heads compared on
one range (ALiBi, Multi-head), one number format per kind, the zero rule in a RoPE score cell,
the projector theme's toggle, and the defaults that demonstrate (Gradients' target)."""

from __future__ import annotations

import numpy as np
from apptest_helpers import chart_keys, decode, open_page, spec_by_key

from attnviz.figures.colours import DEFAULT, PROJECTOR, colour_scale
from attnviz.scenarios.gradients import self_output
from attnviz.ui import state


def trace0(at, key: str) -> dict:
    return spec_by_key(at, key)["data"][0]


def test_alibi_heads_share_one_signed_range_so_their_slopes_look_different():
    at = open_page("modern")
    n = at.select_slider(key="modern_alibi_heads").value
    assert n == 4
    traces = [trace0(at, f"modern_fig_alibi_{h}") for h in range(n)]
    ranges = {(t["zmin"], t["zmax"], t["zmid"]) for t in traces}
    assert len(ranges) == 1  # one range for every head
    low, high, mid = ranges.pop()
    assert mid == 0 and low == -high < 0
    # how far along the scale each head's farthest cell reaches: 1 for head 0, far less for
    # head 3 (with a scale per head, as before, every head reached 1: they all looked alike)
    reach = [np.nanmin(decode(t["z"]).astype(float)) / low for t in traces]
    assert reach[0] == 1.0 and reach[3] < 0.1
    assert reach == sorted(reach, reverse=True)


def test_multi_head_heads_share_ranges_and_write_numbers_as_the_concatenation():
    at = open_page("multi_head")  # seed 000 opens with 3 heads
    outs = [trace0(at, f"multi_head_fig_out_{h}") for h in range(3)]
    assert len({(t["zmin"], t["zmax"]) for t in outs}) == 1 and outs[0]["zmid"] == 0
    weights = [trace0(at, f"multi_head_fig_head_{h}") for h in range(3)]
    assert {(t["zmin"], t["zmax"]) for t in weights} == {(0.0, 1.0)}
    concat = trace0(at, "multi_head_fig_concat")
    assert concat["zmid"] == 0 and concat["zmin"] == -concat["zmax"]
    d_v = np.shape(outs[0]["text"])[1]
    for h, out in enumerate(outs):  # the same number, written the same way
        assert np.array_equal(np.asarray(out["text"]),
                              np.asarray(concat["text"])[:, h * d_v:(h + 1) * d_v])


def test_a_rope_score_below_the_precision_reads_zero_and_hovers_exactly():
    at = open_page("modern")
    trace = trace0(at, "modern_fig_rope_scores")
    z = decode(trace["z"]).astype(float)
    tiny = np.abs(z) < 1e-12
    assert tiny.any()  # seed 000 shifted by 5: one score is 2.55e-17 in float64
    text = np.asarray(trace["text"])
    assert set(text[tiny]) == {"0"}
    assert not any("e-" in cell for cell in text.ravel())
    assert all(abs(float(v)) < 1e-12 for v in np.asarray(trace["customdata"])[tiny])


def test_the_projector_toggle_draws_every_chart_in_its_scales():
    at = open_page("playground")
    default = [list(map(list, colour_scale(DEFAULT.weights))),
               list(map(list, colour_scale(DEFAULT.signed)))]
    before = [trace0(at, k)["colorscale"] for k in chart_keys(at)]
    assert default[0] in before and default[1] in before
    at.toggle(key=state.PROJECTOR).set_value(True).run()
    assert not at.exception and at.session_state[state.PROJECTOR] is True
    scales = [trace0(at, k)["colorscale"] for k in chart_keys(at)]
    projector = [list(map(list, colour_scale(getattr(PROJECTOR, kind))))
                 for kind in ("weights", "signed")]
    assert projector[0] in scales and projector[1] in scales  # weights and signed matrices
    assert not [s for s in scales if s in default]  # no chart left on a default scale
    at.toggle(key=state.PROJECTOR).set_value(False).run()
    assert any(trace0(at, k)["colorscale"] == default[1] for k in chart_keys(at))


def test_gradients_open_with_a_target_that_is_not_zero():
    at = open_page("gradients")
    sc = at.session_state[state.SCENARIO]
    target = self_output(sc)
    assert np.abs(target).max() > 0.5  # each token attending to itself: its own value
    grad = decode(trace0(at, "gradients_output_grad")["z"]).astype(float)
    assert np.abs(grad).max() > 0.1  # and the gradient it gives is visible


def test_the_multi_head_caption_names_the_colours_drawn():
    from attnviz.teach.text import multi_head as text
    at = open_page("multi_head")  # three heads a row: one shared scale, named in the caption
    assert any(text.WEIGHTS_SCALE in c.value for c in at.caption)
    at.toggle(key=state.PROJECTOR).set_value(True).run()
    captions = [c.value for c in at.caption]
    assert any(text.WEIGHTS_SCALE_PROJECTOR in c for c in captions)
    assert not any(text.WEIGHTS_SCALE in c for c in captions)
