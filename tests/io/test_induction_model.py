"""The shipped induction model (attnviz/io/examples/induction_model.npz): its script rebuilds it
byte for byte, it reads back without pickles, and the model in it has the circuit its record
says (its parameters reproduce the recorded attention; ablating its induction head costs loss).
The file holds every recorded step the page replays (the attention of every head at every
frame, scores, losses): reading it trains nothing, and the run it gives is the training run
itself (float32 attention).
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from attnviz.core.transformer import forward
from attnviz.io.examples import make_induction_model
from attnviz.io.examples.make_induction_model import (
    INDUCTION_NPZ,
    RECORD,
    SEED,
    build_induction_model,
    load_induction_model,
    npz_bytes,
)
from attnviz.scenarios import induction
from attnviz.scenarios.induction import InductionSettings, induction_loss, train_induction


def test_the_script_rebuilds_the_shipped_file_byte_for_byte():
    rebuilt = npz_bytes(build_induction_model())
    shipped = INDUCTION_NPZ.read_bytes()
    if rebuilt != shipped:  # say which array moved before failing
        with np.load(INDUCTION_NPZ, allow_pickle=False) as z:
            fresh = np.load(io.BytesIO(rebuilt), allow_pickle=False)
            for name in z.files:
                np.testing.assert_array_equal(fresh[name], z[name], err_msg=name)
    assert rebuilt == shipped


@pytest.fixture(scope="module")
def trained():
    """The shipped model's training, run again."""
    return train_induction(InductionSettings(seed=SEED))


def test_the_recorded_frames_are_the_training_run_s_own(trained):
    """Every member the page replays, rebuilt by training again, is the shipped one (the byte
    comparison above covers them too; this names them and their types)."""
    run = trained
    with np.load(INDUCTION_NPZ, allow_pickle=False) as z:
        assert set(RECORD) <= set(z.files)
        weights = z["weights"]
        assert weights.dtype == np.float32 and weights.shape == (51, 2, 2, 24, 24)
        np.testing.assert_array_equal(weights, run.weights.astype(np.float32))
        np.testing.assert_array_equal(z["position_loss"], run.position_loss)
        for name in ("losses", "frames", "previous_token", "prefix_matching", "copying",
                     "eval_loss"):
            np.testing.assert_array_equal(z[name], getattr(run, name), err_msg=name)
        assert np.abs(weights[0] - weights[-1]).max() > 0.5  # the frames differ: training


def test_reading_the_file_trains_nothing_and_gives_the_run(monkeypatch, trained):
    calls = []

    def counting(*args, **kwargs):
        calls.append(args)
        raise AssertionError("training while reading the shipped model")

    monkeypatch.setattr(induction, "loss_and_gradients", counting)
    monkeypatch.setattr(make_induction_model, "train_induction", counting)
    model = load_induction_model()
    assert calls == []
    monkeypatch.undo()
    run, expected = model.run, trained
    np.testing.assert_array_equal(run.losses, expected.losses)
    np.testing.assert_array_equal(run.frames, expected.frames)
    np.testing.assert_allclose(run.weights, expected.weights, atol=1e-7)
    np.testing.assert_array_equal(run.position_loss, expected.position_loss)
    np.testing.assert_array_equal(run.heldout.tokens, expected.heldout.tokens)
    assert run.roles == expected.roles == model.roles
    assert run.phase_change == expected.phase_change
    assert run.params is model.params and run.stopped == ""


def test_a_file_without_the_frames_is_refused(tmp_path):
    with np.load(INDUCTION_NPZ, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files if name != "weights"}
    path = tmp_path / "old.npz"
    path.write_bytes(npz_bytes(arrays))
    with pytest.raises(ValueError, match="old.npz lacks weights: rebuild it"):
        load_induction_model(path)


def test_the_file_is_small_and_holds_no_clock():
    data = INDUCTION_NPZ.read_bytes()
    assert len(data) < 1_000_000  # 348 KB: the attention of 51 frames in float32
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
