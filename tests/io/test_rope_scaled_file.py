"""A scaled RoPE's settings in scenario files and links: ``rope_inv_freq`` (a list of numbers)
and ``rope_attention_scaling`` round-trip exactly (bit for bit), and a file or link holding a
bad list is refused with a sentence naming the setting.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, run_scenario
from attnviz.io.scenario_io import (
    from_dict,
    from_json,
    from_link_param,
    to_dict,
    to_json,
    to_link_param,
)

# numbers whose shortest repr is long: a round trip through text must keep every bit
FREQ = (1 / 3, np.nextafter(0.0025, 1.0))
SCALING = 0.1 * np.log(4.0) + 1.0  # YaRN's mscale at factor 4


def scaled():
    sc = PRESETS["rope_shift"].build()
    return replace(sc, params={**sc.params, "rope_inv_freq": FREQ,
                               "rope_attention_scaling": SCALING})


def test_a_file_round_trips_the_frequencies_and_scaling_exactly():
    sc = scaled()
    text = to_json(sc)
    data = json.loads(text)
    assert data["params"]["rope_inv_freq"] == list(FREQ)  # a plain list of numbers
    back = from_json(text)
    assert back.params["rope_inv_freq"] == FREQ and isinstance(back.params["rope_inv_freq"],
                                                               tuple)
    assert back.params["rope_attention_scaling"] == SCALING
    np.testing.assert_array_equal(run_scenario(back).attention.weights,
                                  run_scenario(sc).attention.weights)
    assert to_json(back) == text


def test_a_link_round_trips_them_too():
    sc = scaled()
    back = from_link_param(to_link_param(sc))
    assert dict(back.params) == dict(sc.params)


def test_a_scenario_without_them_writes_neither():
    sc = PRESETS["rope_shift"].build()
    params = to_dict(sc)["params"]
    assert "rope_inv_freq" not in params and "rope_attention_scaling" not in params
    assert from_dict(to_dict(sc)).param("rope_inv_freq") == ()


@pytest.mark.parametrize(("value", "message"), [
    ([0.5, -1.0], r"rope_inv_freq\[1\] must be a positive finite number, got -1.0"),
    ([0, 0.5], r"rope_inv_freq\[0\] must be a positive finite number, got 0$"),  # as given
    ([0.5, "1"], r"rope_inv_freq\[1\] must be a number, got '1'"),
    ([[0.5]], r"rope_inv_freq\[0\] must be a number, got a list"),
    ({"shape": [2], "values": [0.5, 0.1]}, r"rope_inv_freq must be a list of positive numbers, "
                                          r"got an object"),
    ([0.5] * 1000, r"rope_inv_freq holds 1000 numbers; at most 64"),
    ([10 ** 400], r"rope_inv_freq\[0\] must be at most 1000, got a whole number of about "
                  r"401 digits"),
    ([1e308, 1e308], r"rope_inv_freq\[0\] must be at most 1000, got 1e\+308"),
])
def test_a_bad_list_in_a_file_or_link_is_refused_naming_the_setting(value, message):
    data = to_dict(scaled())
    data["params"]["rope_inv_freq"] = value
    with pytest.raises(ValueError, match=message):
        from_dict(data)
    with pytest.raises(ValueError, match=r"the link does not hold a valid scenario: " + message):
        from_link_param(_packed(data))


def test_a_list_of_the_wrong_length_loads_and_the_run_says_why():
    """The file holds the frequencies of another head width: the file is read (its length is
    checked against the head where the width is known), and the run names the setting."""
    data = to_dict(scaled())
    data["params"]["rope_inv_freq"] = [0.5]
    sc = from_dict(data)
    with pytest.raises(ValueError, match=r"rope_inv_freq holds 1 frequencies, but a head of "
                                         r"width d_k = 4 rotating the fraction 1 has 2 pairs"):
        run_scenario(sc)


def _packed(data) -> str:
    import base64
    import zlib

    raw = json.dumps(data).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw)).decode("ascii").rstrip("=")
