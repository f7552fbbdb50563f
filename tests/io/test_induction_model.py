"""The shipped induction model (attnviz/io/examples/induction_model.npz): its script rebuilds it
byte for byte, it reads back without pickles, and the model in it has the circuit its record
says (its parameters reproduce the recorded attention; ablating its induction head costs loss).
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from attnviz.core.transformer import forward
from attnviz.io.examples.make_induction_model import (
    INDUCTION_NPZ,
    SEED,
    build_induction_model,
    load_induction_model,
    npz_bytes,
)
from attnviz.scenarios.induction import InductionSettings, induction_loss


def test_the_script_rebuilds_the_shipped_file_byte_for_byte():
    rebuilt = npz_bytes(build_induction_model())
    shipped = INDUCTION_NPZ.read_bytes()
    if rebuilt != shipped:  # say which array moved before failing
        with np.load(INDUCTION_NPZ, allow_pickle=False) as z:
            fresh = np.load(io.BytesIO(rebuilt), allow_pickle=False)
            for name in z.files:
                np.testing.assert_array_equal(fresh[name], z[name], err_msg=name)
    assert rebuilt == shipped


def test_the_file_is_small_and_holds_no_clock():
    data = INDUCTION_NPZ.read_bytes()
    assert len(data) < 200_000
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert {info.date_time for info in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    arrays = {"b": np.arange(3.0), "a": np.array("x")}
    assert npz_bytes(arrays) == npz_bytes(dict(arrays))
    assert npz_bytes(arrays) != npz_bytes({"a": arrays["a"], "b": arrays["b"]})  # order kept


def test_the_shipped_model_reads_back_and_has_the_circuit():
    model = load_induction_model()
    assert model.settings == InductionSettings(seed=SEED)
    assert model.roles.formed
    assert model.roles.previous_token[0] == 0 and model.roles.induction[0] == 1
    record = model.record
    tokens = record["heldout_tokens"]
    result = forward(model.params, tokens)
    np.testing.assert_array_equal(result.weights[:, 0], record["final_weights"])
    assert record["losses"].shape == (model.settings.steps,)
    assert record["frames"][-1] == model.settings.steps
    assert record["phase_change"][0] > 0  # the phase change was found
    keep = np.ones((2, 2), bool)
    keep[model.roles.induction] = False
    assert induction_loss(model.params, model.settings, keep) > \
        induction_loss(model.params, model.settings) + 0.25


def test_plain_numpy_reads_the_file_without_pickles():
    with np.load(INDUCTION_NPZ, allow_pickle=False) as z:
        assert "param.embed" in z.files and z["param.embed"].dtype == np.float64


def test_a_file_without_settings_is_refused(tmp_path):
    path = tmp_path / "other.npz"
    path.write_bytes(npz_bytes({"attention": np.zeros((1, 2, 2))}))
    with pytest.raises(ValueError, match="holds no settings_json: not an induction model"):
        load_induction_model(path)
