"""``python -m attnviz`` (or the ``attnviz`` command): start the dashboard.

Runs ``streamlit run <repo>/app.py`` from the repository root, so the repository's
``.streamlit/config.toml`` applies (loopback address, 5 MB upload cap, XSRF protection).
Extra arguments go to Streamlit, e.g. ``python -m attnviz --server.port 8600``.
``python -m attnviz class ...`` starts several servers behind nginx instead
(:mod:`attnviz.classroom`). Either way the servers run with :func:`attnviz.offline.server_env`:
Streamlit's lookup of the external IP address goes nowhere.

The dashboard's pages (``app.py``, ``pages/``) live next to the package in a repository
checkout, so this works from a checkout or an editable install (``pip install -e ".[ui]"``);
a plain ``pip install .`` gives the core and figure builders for notebooks only.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from attnviz import offline

REPO_ROOT = Path(__file__).resolve().parents[1]
APP = REPO_ROOT / "app.py"


def main(argv: list[str] | None = None) -> int:
    """Start ``streamlit run app.py``; returns Streamlit's exit code (2 if it cannot start)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["class"]:
        from attnviz import classroom

        return classroom.main(args[1:])
    if not APP.is_file() or not (REPO_ROOT / "pages").is_dir():
        print(f"attnviz: the dashboard (app.py and pages/) is not next to the package in "
              f"{REPO_ROOT}.\nRun it from a repository checkout or an editable install: "
              "pip install -e '.[ui]'", file=sys.stderr)
        return 2
    if importlib.util.find_spec("streamlit") is None:
        print("attnviz: Streamlit is not installed; pip install -e '.[ui]'", file=sys.stderr)
        return 2
    cmd = command(args)
    env = offline.server_env(os.environ)  # Streamlit's external-IP lookup goes nowhere
    if os.name == "posix":  # become the server: one process to stop, signals go straight to it
        os.chdir(REPO_ROOT)
        os.execve(sys.executable, cmd, env)
    try:
        return subprocess.call(cmd, cwd=REPO_ROOT, env=env)
    except KeyboardInterrupt:
        return 130


def command(args: list[str]) -> list[str]:
    """The ``streamlit run`` command line (run from REPO_ROOT so its config applies)."""
    return [sys.executable, "-m", "streamlit", "run", str(APP), *args]


if __name__ == "__main__":
    sys.exit(main())
