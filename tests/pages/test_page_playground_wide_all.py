"""AppTest: the Playground's "All" focus on a real head wider than the editable widths (GPT-2
small: x 32 × 769, W_Q, W_K, W_V 769 × 64): its weight editors are folded and not drawn until
the expander is opened (else grids of ~49,000 cells each are sent and drawn on every "All");
a head of the editable widths keeps them open and drawn.
"""

from __future__ import annotations

from apptest_helpers import closed_lazy_expanders, editor_keys, open_page, switch_to
from test_from_model_wide_pages import wide_head

from attnviz.scenarios.presets import default_scenario
from attnviz.ui import state

WEIGHTS = "playground_wide_weights"  # the wide head's folded expander (lecture.weights_box)


def weight_editors(at) -> set[str]:
    return {k for k in editor_keys(at) if k.startswith(("playground_w_q", "playground_w_k",
                                                         "playground_w_v"))}


def test_a_wide_heads_weight_editors_are_drawn_only_once_opened() -> None:
    at = open_page(None, timeout=120)
    at.session_state[state.SCENARIO] = wide_head()
    switch_to(at, "playground", lazy_open=False)
    assert not at.exception, [e.message for e in at.exception]
    assert WEIGHTS in closed_lazy_expanders(at)
    assert not weight_editors(at)
    assert any(k.startswith("playground_x") for k in editor_keys(at))  # x still drawn
    at.session_state[WEIGHTS] = True  # the user opens it
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert weight_editors(at)  # W_Q's, in the first of its tabs


def test_a_head_of_the_editable_widths_keeps_its_weight_editors_open() -> None:
    at = open_page(None)
    at.session_state[state.SCENARIO] = default_scenario()
    switch_to(at, "playground", lazy_open=False)
    assert WEIGHTS not in [e.key for e in at.expander]
    assert weight_editors(at)  # W_Q's, in the first of its tabs


def test_a_wide_heads_charts_get_the_margins_plotly_would_grow_them_to() -> None:
    """Margins Plotly's automargin grows draw a chart twice (~2× the time: ten such charts made
    "All" slow on a real head). With more than CELL_TEXT_LIMIT columns Plotly stands their labels
    upright; the margins measured in Chromium for these charts (benchmarks/RESULTS.md)
    are given up front: the chart is drawn once."""
    import numpy as np

    from attnviz.figures import heatmap

    tokens = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "slept", "in", "sun"]
    rng = np.random.default_rng(0)
    for t, drawn in ((32, {"x": (96, 75, 13), "scores": (96, 96, 13)}),
                     (128, {"x": (104, 73, 10), "scores": (104, 102, 10)})):
        labels = [f"{i}:{tokens[i % len(tokens)]}" for i in range(t)]
        figs = {"x": heatmap(rng.normal(size=(t, 769)), [f"d{j}" for j in range(769)], labels,
                             y_title="token", x_title="dimension"),
                "scores": heatmap(rng.normal(size=(t, t)), labels, labels, y_title="query",
                                  x_title="key")}
        for name, (left, top, bottom) in drawn.items():
            m = figs[name].layout.margin
            assert m.l >= left and m.t >= top and m.b >= bottom, (t, name, m.l, m.t, m.b)
