"""Real browser: a cell edit in the Playground grid repaints the weights heatmap, and a preset
loaded from the sidebar is drawn. (Every page's own smoke test, its charts drawn and a
screenshot of it, is the walk in test_every_preset.py; every page's first view with the default
scenario is drawn in test_presenter_pages.py's walks; every page runs every preset without an
exception in tests/pages/test_every_preset_apptest.py.)"""

from __future__ import annotations

import re

import numpy as np
from helpers import (
    REPO_ROOT,
    assert_no_exception,
    edit_cell,
    goto_page,
    load_preset,
    screenshot,
    wait_for_plots,
)

import attnviz
from attnviz.scenarios.presets import PRESETS

PAGE_FILES = re.findall(r'st\.Page\("pages/(\w+)\.py"', (REPO_ROOT / "app.py").read_text())


def keyed_z(page, key: str) -> np.ndarray:
    """The z matrix the browser drew for the chart with ``key=`` (Streamlit's st-key class)."""
    rows = page.evaluate(
        """(key) => {
            const g = document.querySelector(`.st-key-${key} .js-plotly-plot`);
            if (!g || !g._fullData) return null;
            return Array.from(g._fullData[0].z, r => Array.from(r));
        }""",
        key,
    )
    assert rows is not None, f"no drawn chart with key {key!r}"
    return np.array(rows, dtype=float)


def test_app_lists_pages():
    assert {"home", "playground", "step_by_step", "masks", "multi_head", "positional_encoding",
            "encoder_decoder"} <= set(PAGE_FILES)


def test_editing_an_embedding_cell_repaints_weights(app_server, page):
    goto_page(page, app_server, "playground")
    wait_for_plots(page, n=3)
    before = keyed_z(page, "playground_fig_weights_slot_1")
    sc = PRESETS["seed_000"].build()
    np.testing.assert_allclose(before, attnviz.run_scenario(sc).attention.weights, atol=1e-12)
    editor = page.locator(".st-key-playground_x_v0")
    edit_cell(page, editor, row=0, col=1, text="2.5")
    wait_for_plots(page, n=3)
    x = sc.x.copy()
    x[0, 1] = 2.5
    expected = attnviz.self_attention(x, sc.w_q, sc.w_k, sc.w_v).weights
    np.testing.assert_allclose(keyed_z(page, "playground_fig_weights_slot_1"), expected,
                               atol=1e-12)
    assert not np.allclose(before, expected)
    assert_no_exception(page)
    screenshot(page, "playground_after_edit")


def test_sidebar_preset_loads_everywhere(app_server, page):
    goto_page(page, app_server, "playground")
    wait_for_plots(page, n=3)
    load_preset(page, PRESETS["seed_001_causal"].title)
    wait_for_plots(page, n=3)  # the lecture view's three matrices
    expected = attnviz.run_scenario(PRESETS["seed_001_causal"].build()).attention.weights
    np.testing.assert_allclose(keyed_z(page, "playground_fig_weights_slot_1"), expected,
                               atol=1e-12)
    assert_no_exception(page)
    screenshot(page, "playground_seed_001")
