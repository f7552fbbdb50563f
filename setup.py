"""Build hook: a wheel (``pip install .``) carries the dashboard's frame and pages.

The design keeps the dashboard's scripts at the repository's top level (``app.py``, ``pages/``,
and the server settings in ``.streamlit/config.toml``), outside the ``attnviz`` package, so
package data cannot name them. This hook copies them into the built package as
``attnviz/_dashboard/`` (the repository's files stay the only copy in a checkout); the launcher
(``python -m attnviz``, :func:`attnviz.launch.dashboard_root`) runs the checkout's ``app.py``
when there is one and the installed copy otherwise. Everything else is in ``pyproject.toml``.
An editable install (``pip install -e .``) copies nothing: it runs the checkout's files.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DASHBOARD_DIR = "_dashboard"  # inside the package: attnviz/_dashboard/app.py, pages/, .streamlit/


def dashboard_files() -> list[str]:
    """The dashboard's files, relative to the repository root: the frame, every page and the
    server settings (nothing is generated at run time)."""
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))
    return ["app.py", ".streamlit/config.toml", *pages]


class BuildPyWithDashboard(build_py):
    """``build_py`` that also copies :func:`dashboard_files` into ``attnviz/_dashboard/``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # the checkout's own files are run
            return
        target = Path(self.build_lib) / "attnviz" / DASHBOARD_DIR
        for rel in dashboard_files():
            self.mkpath(str((target / rel).parent))
            self.copy_file(str(ROOT / rel), str(target / rel))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        target = Path(self.build_lib) / "attnviz" / DASHBOARD_DIR
        return [*outputs, *(str(target / rel) for rel in dashboard_files())]


setup(cmdclass={"build_py": BuildPyWithDashboard})
