"""A link carrying RoPE frequencies no model has ([1e308, 1e308]) is refused on the page with a
sentence naming rope_inv_freq; it used to open, and the page then blamed q_h for the NaN the
rotation made."""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import replace

from apptest_helpers import open_page

from attnviz import PRESETS
from attnviz.io import scenario_io


def link_with(freq: list) -> str:
    sc = PRESETS["rope_shift"].build()
    sc = replace(sc, params={**sc.params, "rope_inv_freq": (0.5, 0.25)})
    raw = scenario_io.to_dict(sc)
    raw["params"]["rope_inv_freq"] = freq
    packed = zlib.compress(json.dumps(raw).encode())
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")


def test_a_link_with_absurd_frequencies_names_rope_inv_freq_on_the_page():
    at = open_page("playground")
    at.query_params[scenario_io.LINK_PARAM] = link_with([1e308, 1e308])
    at = at.run()
    assert not at.exception, [e.message for e in at.exception]
    shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("rope_inv_freq[0] must be at most 1000, got 1e+308" in e for e in shown), shown
    assert not any("q_h" in e for e in shown), shown
