"""The layers of the house (README, Development): dependencies point one way, no module imports
another's private names, and ``import attnviz`` loads numpy and scipy only.

pages -> ui -> figures -> teach / io -> scenarios -> core (numpy and scipy only).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "attnviz"
# layer -> the attnviz layers it may import (besides itself)
ALLOWED = {
    "core": set(),
    "scenarios": {"core"},
    "io": {"core", "scenarios"},
    "teach": {"core", "scenarios"},
    "figures": {"core", "scenarios", "teach", "io"},
    "ui": {"core", "scenarios", "teach", "io", "figures"},
}
THIRD_PARTY_UI = {"streamlit", "plotly", "pandas", "threadpoolctl"}


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE)


def layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0]


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in the file, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_dependencies_point_one_way(path):
    own = layer(path)
    for module, _names in imports(path):
        parts = module.split(".")
        if parts[0] == "attnviz" and len(parts) > 1:
            target = parts[1]
            if target == "__main__":
                continue
            assert target == own or target in ALLOWED[own], \
                f"{path.relative_to(ROOT)} ({own}) imports {module} ({target})"
        if own in ("core", "scenarios", "io", "teach"):
            assert parts[0] not in THIRD_PARTY_UI, \
                f"{path.relative_to(ROOT)} ({own}) imports {module}: numpy/scipy layers only"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_another_modules_private_names(path):
    for module, names in imports(path):
        if module.startswith("attnviz"):
            private = [n for n in names if n.startswith("_")]
            assert not private, f"{path.relative_to(ROOT)} imports {private} from {module}"


def test_import_attnviz_loads_numpy_and_scipy_only():
    """No ui library and no teaching text (numpy itself loads ctypes: no longer ours to count)."""
    code = ("import sys, attnviz; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'streamlit', 'plotly', 'pandas', 'threadpoolctl'}), "
            "sorted(m for m in sys.modules if m.startswith('attnviz.teach')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""}).stdout
    assert out.strip() == "[] []"
