"""``python -m attnviz`` (or the ``attnviz`` command): start the dashboard.

Runs ``streamlit run <dashboard>/app.py`` from the dashboard's folder, so its
``.streamlit/config.toml`` applies (loopback address, 5 MB upload cap, XSRF protection).
Extra arguments go to Streamlit, e.g. ``python -m attnviz --server.port 8600``.
``python -m attnviz class ...`` starts several servers behind nginx instead
(:mod:`attnviz.classroom`). Either way the servers run with :func:`attnviz.offline.server_env`:
Streamlit's lookup of the external IP address goes nowhere.

Where the dashboard's files are and whether the server may load models (off beyond loopback
unless ``--allow-models``; the start prints one line saying which) is
:mod:`attnviz.launch`'s, shared with the class command.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from attnviz import launch, offline


def main(argv: list[str] | None = None) -> int:
    """Start ``streamlit run app.py``; returns Streamlit's exit code (2 if it cannot start)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["class"]:
        from attnviz import classroom

        return classroom.main(args[1:])
    args, allow = launch.without_flag(args)
    root = launch.dashboard_root()
    if root is None:
        print("attnviz: the dashboard (app.py and pages/) is in none of "
              f"{', '.join(map(str, launch.CANDIDATE_ROOTS))}.\nReinstall it (pip install '.[ui]' "
              "from a repository checkout) or run it from the checkout.", file=sys.stderr)
        return 2
    if importlib.util.find_spec("streamlit") is None:
        print("attnviz: Streamlit is not installed; pip install '.[ui]'", file=sys.stderr)
        return 2
    cmd = command(args, root)
    env = offline.server_env(os.environ)  # Streamlit's external-IP lookup goes nowhere
    env, line = launch.model_loading(env, launch.listen_address(args, env), allow)
    print(f"attnviz: {line}", flush=True)
    return serve(cmd, root, env)


def serve(cmd: list[str], root: Path, env: dict[str, str]) -> int:
    """Run the server command in ``root`` with ``env``; its exit code."""
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
