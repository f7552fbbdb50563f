"""``import attnviz`` loads the core only: no streamlit, plotly or pandas (STYLE.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attnviz

ROOT = Path(__file__).resolve().parents[2]
UI_PACKAGES = ("streamlit", "plotly", "pandas")


def _fresh_import(statement: str) -> dict:
    """Run ``statement`` in a fresh interpreter; report which UI packages got imported."""
    code = (
        f"import json, sys\n{statement}\n"
        f"print(json.dumps({{name: name in sys.modules for name in {UI_PACKAGES!r}}}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_attnviz_loads_no_ui_packages():
    loaded = _fresh_import("import attnviz")
    assert loaded == dict.fromkeys(UI_PACKAGES, False)


def test_running_a_preset_loads_no_ui_packages():
    loaded = _fresh_import("import attnviz; attnviz.run_scenario(attnviz.default_scenario())")
    assert loaded == dict.fromkeys(UI_PACKAGES, False)


def test_public_names_exist():
    for name in attnviz.__all__:
        assert hasattr(attnviz, name), name
    assert len(set(attnviz.__all__)) == len(attnviz.__all__)
    assert attnviz.__version__ == "0.1.0"


def test_the_vocabulary_is_written_down_once():
    doc = attnviz.__doc__
    for word in ("x ", "q, k, v", "d_model", "d_k", "d_v", "n_heads", "t_q, t_k", "scores",
                 "weights", "output", "mask"):
        assert word in doc, word
