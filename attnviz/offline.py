"""Keep the dashboard's server process off the internet.

Streamlit 1.67 looks the machine's external IP address up over the internet
(``checkip.amazonaws.com`` through ``requests``) when it prints its URLs for a server listening
on every interface, and on every WebSocket opened from a foreign origin (another site's page in
the user's browser: its allowed-origin check). No Streamlit option turns that lookup off
without turning CORS protection off, so the server runs with every proxy variable ``requests``
honours pointing at a closed port of this machine (the discard port of 127.0.0.1): the lookup
fails at once and nothing leaves the machine. Nothing else in the server makes an HTTP request.
``python -m attnviz`` and ``python -m attnviz class`` start their servers with this
environment (a server started with plain ``streamlit run app.py`` does not have it).
"""

from __future__ import annotations

from collections.abc import Mapping

BLACK_HOLE = "http://127.0.0.1:9"  # the discard port: closed, so a request fails at once
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy")
BYPASS_VARIABLES = ("NO_PROXY", "no_proxy")  # would send some hosts around the proxy


def server_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with every proxy variable pointing at :data:`BLACK_HOLE` and no bypass list."""
    out = {k: v for k, v in env.items() if k not in BYPASS_VARIABLES}
    out.update(dict.fromkeys(PROXY_VARIABLES, BLACK_HOLE))
    return out

