"""attnviz.show in a real notebook, drawn offline: a notebook calling it on captured weights
(an (n_layers, n_heads, t, t) array with its tokens) and on a preset scenario is run headless
by nbclient on the ipykernel of this Python; its outputs, as Jupyter keeps them, are opened in
Chromium with the network off (an offline context, and every request that is not the file
itself aborted). Each Plotly chart must be drawn (``_fullData``) with the attention as its z:
the plotly.js it runs can only have come from the output itself."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from helpers import TIMEOUT_MS, VIEWPORT, screenshot
from nbclient import NotebookClient
from playwright.sync_api import Browser, Page

import attnviz

TOKENS = ["the", "cat", "sat", "on", "the", "mat", "and", "slept"]
SHAPE = (3, 4, 8, 8)  # (n_layers, n_heads, t, t)
PRESET = "seed_004_two_heads"
LOCAL = ("file:", "data:", "blob:")


def weights() -> np.ndarray:
    """Captured-like attention: a softmax of random scores in every layer and head."""
    s = np.random.default_rng(7).normal(size=SHAPE) * 2
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, str]:
    """The executed notebook's HTML outputs by cell name, and the kernel's interpreter."""
    folder = tmp_path_factory.mktemp("notebook")
    np.save(folder / "attention.npy", weights())
    cells = {
        "kernel": "import sys\nprint(sys.executable)",
        "model_view": ("import numpy as np\nimport attnviz\n"
                       "attention = np.load('attention.npy')\n"
                       f"attnviz.show(attention, {TOKENS!r})"),
        "scenario": f"attnviz.show(attnviz.PRESETS[{PRESET!r}])",
    }
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells.values()])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    nbformat.write(nb, folder / "shown.ipynb")  # as Jupyter would save it
    saved = nbformat.read(folder / "shown.ipynb", as_version=4)
    found = {}
    for name, cell in zip(cells, saved.cells, strict=True):
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.outputs
        if name == "kernel":
            found[name] = "".join(o.text for o in cell.outputs if o.output_type == "stream")
        else:
            [result] = [o for o in cell.outputs if o.output_type == "execute_result"]
            found[name] = result.data["text/html"]
    return found


def open_offline(browser: Browser, html: str, folder: Path) -> tuple[Page, list[str]]:
    """The outputs in a page of their own, opened from a file with the network off; returns
    the page and every request it tried beyond the file itself."""
    path = folder / "outputs.html"
    path.write_text(f'<!doctype html><html><head><meta charset="utf-8"></head><body>{html}'
                    "</body></html>", encoding="utf-8")
    context = browser.new_context(offline=True, viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    tried: list[str] = []

    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            tried.append(r.request.url)
            r.abort()

    page = context.new_page()
    page.route("**/*", route)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.errors = errors  # read by the tests
    return page, tried


def drawn_z(page: Page, count: int) -> list[np.ndarray]:
    """Wait for ``count`` Plotly charts to be drawn; the z of each one's first trace."""
    page.wait_for_function(
        "n => { const g = [...document.querySelectorAll('.js-plotly-plot')];"
        " return g.length === n && g.every(d => d._fullData && d._fullData.length > 0) }",
        arg=count)
    zs = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                       ".map(g => Array.from(g._fullData[0].z).map(r => Array.from(r)))")
    return [np.array(z, dtype=float) for z in zs]


def test_the_notebook_ran_on_this_python(outputs):
    assert outputs["kernel"].strip() == sys.executable


def test_the_model_view_and_a_scenario_are_drawn_with_the_network_off(browser, outputs,
                                                                        tmp_path):
    page, tried = open_offline(browser, outputs["model_view"] + outputs["scenario"], tmp_path)
    try:
        grid, *heads = drawn_z(page, 3)
        n = SHAPE[-1]
        step = n + max(1, n // 8)
        thumbnails = np.array([[grid[r * step:r * step + n, c * step:c * step + n]
                                for c in range(SHAPE[1])] for r in range(SHAPE[0])])
        np.testing.assert_allclose(thumbnails, weights(), rtol=0, atol=1e-7)  # float32
        expected = attnviz.run_scenario(attnviz.PRESETS[PRESET].build()).attention.weights
        assert len(heads) == expected.shape[0]
        for z, w in zip(heads, expected, strict=True):
            np.testing.assert_allclose(z, w, rtol=0, atol=1e-15)
        text = page.inner_text("body")
        assert "3 layers × 4 heads, 8 tokens" in text and "6 queries × 6 keys" in text
        # the grid's hover names the tokens
        hover = page.evaluate("() => document.querySelector('.js-plotly-plot')"
                              "._fullData.at(-1).hovertext[1]")
        assert hover.startswith("layer 0 · head 1") and "click" not in hover
        assert tried == [] and page.errors == []
        screenshot(page, "notebook_offline")
    finally:
        page.context.close()


def test_each_output_draws_on_its_own(browser, outputs, tmp_path):
    """An output needs no other: the scenario's, alone in a page, unpacks its own plotly.js."""
    page, tried = open_offline(browser, outputs["scenario"], tmp_path)
    try:
        assert len(drawn_z(page, 2)) == 2
        assert tried == [] and page.errors == []
    finally:
        page.context.close()
