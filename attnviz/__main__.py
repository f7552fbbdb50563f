"""``python -m attnviz`` (or the ``attnviz`` command): start the dashboard.

Runs ``streamlit run <dashboard>/app.py`` from the dashboard's folder, so its
``.streamlit/config.toml`` applies (loopback address, 5 MB upload cap, XSRF protection).
Extra arguments go to Streamlit, e.g. ``python -m attnviz --server.port 8600``.
``python -m attnviz class ...`` starts several servers behind nginx instead
(:mod:`attnviz.classroom`). Either way the servers run with :func:`attnviz.offline.server_env`:
Streamlit's lookup of the external IP address goes nowhere.

Model loading (Model view's models folder and Hub) is off whenever the server listens beyond
loopback (``--server.address 0.0.0.0``, a LAN address, or a class's ``--address``): the server
runs with ``ATTNVIZ_NO_MODELS=1`` unless the teacher passes ``--allow-models`` (taken out of
the arguments before they reach Streamlit). The start command prints one line saying which
(:func:`model_loading`).

The dashboard's folder (:func:`dashboard_root`) is the repository checkout beside the package
(a checkout or an editable install, ``pip install -e ".[ui]"``: ``app.py``, ``pages/`` and
``.streamlit/`` at its top level), else the copy of those files a wheel carries inside the
package as ``attnviz/_dashboard/`` (``pip install ".[ui]"``; setup.py puts it there).
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from attnviz import offline
from attnviz.io import models_dir

PACKAGE_DIR = Path(__file__).resolve().parent
# where app.py, pages/ and .streamlit/ may be, first found wins: a repository checkout (or an
# editable install of one), then the copy an installed wheel carries (setup.py)
CANDIDATE_ROOTS = (PACKAGE_DIR.parent, PACKAGE_DIR / "_dashboard")
CONFIG_ADDRESS = "127.0.0.1"  # the dashboard's .streamlit/config.toml: server.address
ADDRESS_OPTION = "--server.address"
ADDRESS_ENV = "STREAMLIT_SERVER_ADDRESS"  # Streamlit's environment form of that option


def dashboard_root() -> Path | None:
    """The first of :data:`CANDIDATE_ROOTS` that holds ``app.py`` and ``pages/``; None when
    neither does (a broken install)."""
    for root in CANDIDATE_ROOTS:
        if (root / "app.py").is_file() and (root / "pages").is_dir():
            return root
    return None


def is_loopback(address: str) -> bool:
    """True for an address only this computer reaches (127.x.x.x, ::1, localhost); any other
    (0.0.0.0, "", a LAN address, a host name) counts as reachable by others."""
    address = address.strip().strip("[]")
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def listen_address(args: list[str], env: Mapping[str, str]) -> str:
    """Where ``streamlit run`` with these arguments listens: the last ``--server.address``
    given, else STREAMLIT_SERVER_ADDRESS, else the dashboard's config (127.0.0.1)."""
    address = env.get(ADDRESS_ENV, CONFIG_ADDRESS)
    for i, arg in enumerate(args):
        if arg == ADDRESS_OPTION and i + 1 < len(args):
            address = args[i + 1]
        elif arg.startswith(ADDRESS_OPTION + "="):
            address = arg.split("=", 1)[1]
    return address


def model_loading(env: Mapping[str, str], address: str, allow: bool
                  ) -> tuple[dict[str, str], str]:
    """The server's environment with model loading on or off, and the line that says which.

    Off (``ATTNVIZ_NO_MODELS=1``) when the environment already says so, or when ``address``
    is not loopback and ``allow`` (``--allow-models``) was not given; on otherwise. The models
    folder's setting is made absolute (the server runs from the dashboard's folder).
    """
    out = dict(env)
    folder = models_dir.models_dir(env)
    if out.get(models_dir.MODELS_DIR_ENV, "").strip():
        out[models_dir.MODELS_DIR_ENV] = folder
    off_env = out.get(models_dir.NO_MODELS_ENV, "").strip().lower() not in (
        "", "0", "false", "no", "off")
    where = f"the server listens on {address or 'every interface'}"
    if off_env:
        line = (f"Model loading is OFF ({models_dir.NO_MODELS_ENV} is set in the environment); "
                "unset it to let Model view load the models of " + folder + ".")
    elif is_loopback(address):
        line = (f"Model loading is ON ({where}, this computer only): Model view offers the "
                f"models of {folder} ({models_dir.MODELS_DIR_ENV} chooses another folder).")
    elif allow:
        line = (f"Model loading is ON for everyone who reaches this server "
                f"({models_dir.ALLOW_MODELS_FLAG}, {where}): Model view offers the models of "
                f"{folder}. Start without {models_dir.ALLOW_MODELS_FLAG} to turn it off.")
    else:
        out[models_dir.NO_MODELS_ENV] = "1"
        line = (f"Model loading is OFF ({where}, which other computers reach): students can "
                f"view the example and captured files only. Start again with "
                f"{models_dir.ALLOW_MODELS_FLAG} to offer the models of {folder} to everyone.")
    return out, line


def without_flag(args: list[str]) -> tuple[list[str], bool]:
    """The arguments without ``--allow-models``, and whether it was there."""
    kept = [a for a in args if a != models_dir.ALLOW_MODELS_FLAG]
    return kept, len(kept) != len(args)


def main(argv: list[str] | None = None) -> int:
    """Start ``streamlit run app.py``; returns Streamlit's exit code (2 if it cannot start)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["class"]:
        from attnviz import classroom

        return classroom.main(args[1:])
    args, allow = without_flag(args)
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
    env, line = model_loading(env, listen_address(args, env), allow)
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
