"""How a dashboard server starts, for ``python -m attnviz`` and its class command alike: where
the dashboard's files are, where the server listens, and whether it may load models.

The dashboard's folder (:func:`dashboard_root`) is the repository checkout beside the package
(a checkout or an editable install, ``pip install -e ".[ui]"``: ``app.py``, ``pages/`` and
``.streamlit/`` at its top level), else the copy of those files a wheel carries inside the
package as ``attnviz/_dashboard/`` (``pip install ".[ui]"``; setup.py puts it there).

Model loading (Model view's models folder and Hub) is off whenever the server listens beyond
loopback (``--server.address 0.0.0.0``, a LAN address, or a class's ``--address``): the server
runs with ``ATTNVIZ_NO_MODELS=1`` unless the teacher passes ``--allow-models`` (taken out of
the arguments before they reach Streamlit); :func:`model_loading` gives the environment and
the line the start command prints.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from pathlib import Path

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
