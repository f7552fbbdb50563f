"""RoPE's given frequencies (``rope_inv_freq``) are bounded where they come in: a scenario's
params, a scenario file, a link. A real model's θ_i lie in (0, 1] (θ_0 = b^0 = 1; scaled RoPE
only lowers them); up to rope.MAX_INV_FREQ (1e3) is accepted, anything larger or not finite is
refused in a sentence naming rope_inv_freq — [1e308, 1e308] used to pass and turn q and k into
NaN, which every page then blamed on q_h."""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, run_scenario
from attnviz.io import scenario_io
from attnviz.scenarios.variants import rope


def preset(freq) -> object:
    sc = PRESETS["rope_shift"].build()  # d_k = 4: two pairs
    return replace(sc, params={**sc.params, "rope_inv_freq": freq})


def file_with(freq) -> dict:
    data = scenario_io.to_dict(PRESETS["rope_shift"].build())
    data.setdefault("params", {})["rope_inv_freq"] = freq
    return data


@pytest.mark.parametrize("freq, shown", [
    ((1e308, 1e308), "1e+308"),
    ((0.5, 1e4), "10000.0"),
    ((0.5, 10**400), "a whole number of about 401 digits"),
    ((0.5, np.float32(2e3)), "2000.0"),
])
def test_frequencies_above_the_bound_are_refused_naming_rope_inv_freq(freq, shown):
    index = 0 if freq[0] != 0.5 else 1
    message = rf"rope_inv_freq\[{index}\] must be at most 1000, got {re.escape(shown)}"
    with pytest.raises(ValueError, match=message):
        run_scenario(preset(freq))
    if not isinstance(freq[1], np.generic):  # a file holds JSON numbers
        with pytest.raises(ValueError, match=message):
            scenario_io.from_dict(file_with(list(freq)))


def test_the_bound_itself_and_a_real_model_s_frequencies_are_accepted():
    assert rope.MAX_INV_FREQ == 1e3
    for freq in ((1000.0, 1.0), (1.0, 1e-4), (1.0, 5e-324)):
        result = run_scenario(preset(freq)).attention
        assert np.isfinite(result.weights).all() and np.isfinite(result.q).all()


def test_a_link_with_huge_frequencies_names_rope_inv_freq_not_q_h():
    link = scenario_io.to_link_param(preset((0.5, 0.25)))
    data = scenario_io.from_link_param(link)
    assert data.params["rope_inv_freq"] == (0.5, 0.25)
    raw = json.loads(zlib.decompress(base64.urlsafe_b64decode(link + "=" * (-len(link) % 4))))
    raw["params"]["rope_inv_freq"] = [1e308, 1e308]
    bad = base64.urlsafe_b64encode(zlib.compress(json.dumps(raw).encode())).decode().rstrip("=")
    with pytest.raises(ValueError) as err:
        scenario_io.from_link_param(bad)
    assert "rope_inv_freq[0] must be at most 1000, got 1e+308" in str(err.value)
    assert "q_h" not in str(err.value)


def test_a_message_shows_the_number_as_given_not_converted():
    with pytest.raises(ValueError, match=r"rope_inv_freq\[1\] must be a positive finite number, "
                                         r"got nan$"):
        run_scenario(preset((0.5, np.float64("nan"))))
    with pytest.raises(ValueError, match=r"rope_inv_freq\[0\] must be a positive finite number, "
                                         r"got 0$"):
        run_scenario(preset((0, 0.5)))  # the whole number 0, as given (it said 0.0)
