"""A matrix editor writes its base matrix's cell texts once per base, not on every rerun (a real
head's x, 128 × 769, took 0.25 s of every edit's run: benchmarks/bench_wide_head.py), and the
grid's digest, made from a digest of the values, follows them. A large grid the browser holds
already is not sent its cells again (2.2 MB of JSON per edit at 128 tokens), unless the browser
asks for them."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from attnviz.ui import editors, grid


def _script() -> None:
    import numpy as np

    from attnviz.ui.editors import matrix_editor

    matrix_editor("X", np.arange(6.0).reshape(2, 3) - 0.0, key="cache_x", row_labels=["a", "b"],
                  col_labels=["c0", "c1", "c2"])


def test_the_texts_are_written_once_per_base(monkeypatch) -> None:
    written = []

    def counting(value: float) -> str:
        written.append(value)
        return repr(float(value))

    monkeypatch.setattr(editors, "cell_text", counting)
    at = AppTest.from_function(_script, default_timeout=30).run()
    assert not at.exception
    assert written == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    at.run()
    at.run()
    assert not at.exception
    assert len(written) == 6  # two reruns wrote nothing again


def test_the_digest_follows_the_values() -> None:
    from attnviz.ui.grid import _signature

    data = {"label": "X", "rows": ["a"], "cols": ["c0"], "disabled": False, "big": False,
            "cells": [["1.0"]]}
    assert _signature(data, "d1") != _signature(data, "d2")
    assert _signature(data, "d1") == _signature(dict(data, cells=[["2.0"]]), "d1")
    assert _signature(data) != _signature(dict(data, cells=[["2.0"]]))


def _wide_script() -> None:
    import numpy as np

    from attnviz.ui.editors import matrix_editor

    matrix_editor("X", np.arange(64 * 40.0).reshape(64, 40), key="wide_x",
                  row_labels=[f"r{i}" for i in range(64)],
                  col_labels=[f"c{j}" for j in range(40)])


def _sent_cells(at: AppTest):
    (element,) = [node for node in at.get("bidi_component")
                  if node.proto.component_name == grid.NAME]
    data = json.loads(element.proto.json)
    return data["cells"], data["sig"]


def test_a_large_grid_drawn_already_is_sent_without_its_cells() -> None:
    assert 64 * 40 > grid.ELIDE_CELLS
    at = AppTest.from_function(_wide_script, default_timeout=30).run()
    cells, sig = _sent_cells(at)
    assert len(cells) == 64 and cells[63][39] == repr(2559.0)
    at.run()
    assert _sent_cells(at) == (None, sig)  # the browser has them: not sent again
    # the browser asks for them (a grid drawn again without them kept): sent again
    at.session_state["wide_x_v0"] = {grid.STATE: {"edited_rows": {}, "need": sig}}
    at.run()
    cells, again = _sent_cells(at)
    assert again == sig and cells[63][39] == repr(2559.0)
    assert not at.exception
