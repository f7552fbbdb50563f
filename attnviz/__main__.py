"""``python -m attnviz`` (or the ``attnviz`` command): start the dashboard.

Runs ``streamlit run <dashboard>/app.py`` from the dashboard's folder, so its
``.streamlit/config.toml`` applies (loopback address, 5 MB upload cap, XSRF protection).
Extra arguments go to Streamlit, e.g. ``python -m attnviz --server.port 8600``.
``python -m attnviz class ...`` starts several servers behind nginx instead
(:mod:`attnviz.classroom`). Either way the servers run with :func:`attnviz.offline.server_env`:
Streamlit's lookup of the external IP address goes nowhere.

The dashboard's folder (:func:`dashboard_root`) is the repository checkout beside the package
(a checkout or an editable install, ``pip install -e ".[ui]"``: ``app.py``, ``pages/`` and
``.streamlit/`` at its top level), else the copy of those files a wheel carries inside the
package as ``attnviz/_dashboard/`` (``pip install ".[ui]"``; setup.py puts it there).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from attnviz import offline

PACKAGE_DIR = Path(__file__).resolve().parent
# where app.py, pages/ and .streamlit/ may be, first found wins: a repository checkout (or an
# editable install of one), then the copy an installed wheel carries (setup.py)
CANDIDATE_ROOTS = (PACKAGE_DIR.parent, PACKAGE_DIR / "_dashboard")


def dashboard_root() -> Path | None:
    """The first of :data:`CANDIDATE_ROOTS` that holds ``app.py`` and ``pages/``; None when
    neither does (a broken install)."""
    for root in CANDIDATE_ROOTS:
        if (root / "app.py").is_file() and (root / "pages").is_dir():
            return root
    return None


def main(argv: list[str] | None = None) -> int:
    """Start ``streamlit run app.py``; returns Streamlit's exit code (2 if it cannot start)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["class"]:
        from attnviz import classroom

        return classroom.main(args[1:])
    root = dashboard_root()
    if root is None:
        print("attnviz: the dashboard (app.py and pages/) is in none of "
              f"{', '.join(map(str, CANDIDATE_ROOTS))}.\nReinstall it (pip install '.[ui]' "
              "from a repository checkout) or run it from the checkout.", file=sys.stderr)
        return 2
    if importlib.util.find_spec("streamlit") is None:
        print("attnviz: Streamlit is not installed; pip install '.[ui]'", file=sys.stderr)
        return 2
    cmd = command(args, root)
    env = offline.server_env(os.environ)  # Streamlit's external-IP lookup goes nowhere
    if os.name == "posix":  # become the server: one process to stop, signals go straight to it
        os.chdir(root)
        os.execve(sys.executable, cmd, env)
    try:
        return subprocess.call(cmd, cwd=root, env=env)
    except KeyboardInterrupt:
        return 130


def command(args: list[str], root: Path) -> list[str]:
    """The ``streamlit run`` command line for the dashboard in ``root`` (run from ``root`` so
    its ``.streamlit/config.toml`` applies)."""
    return [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), *args]


if __name__ == "__main__":
    sys.exit(main())
