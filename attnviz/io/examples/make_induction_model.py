"""Build the shipped induction-head model from the project's own code.

Trains :class:`~attnviz.scenarios.induction.InductionSettings` at its defaults with seed
:data:`SEED` (2 layers × 2 heads, width 32, vocabulary 16, 24 tokens, Adam 1e-2, batch 32,
300 steps: a few seconds) and writes ``induction_model.npz`` beside this file: the final
parameters and everything the Induction page replays — every recorded step's attention of every
head on the held-out sequence, the scores over training, the loss curve and the loss by
position — so that opening the page trains nothing (:attr:`InductionModel.run`). No pickled
objects; float64 but for the recorded attention (float32: 0..1 drawn on a fixed colour scale,
and the figure sends float32 anyway). The zip is written with fixed timestamps and a fixed
member order, so the same numbers give the same bytes (numpy's ``savez`` stamps the current
time). Size: 347 KB (``tests/io/test_induction_model.py`` keeps it under 1 MB).

The same bytes come back only where numpy's SIMD loops and the OpenBLAS kernel are those that
built the file: another CPU's kernels round training's last bits differently, and a rebuild
there gives the same heads, phase change and tokens, and every array within 1e-8 of its
largest entry (float32 attention: one float32 step). ``tests/io/test_induction_model.py``
checks both; docs/contributing.md states it.

Run ``python -m attnviz.io.examples.make_induction_model`` to (re)write it; read it back with
:func:`load_induction_model` (``np.load`` with ``allow_pickle=False``: numbers and one JSON
string only).

Members of the file
-------------------
settings_json        the settings (a JSON object in a 0-d string array)
param.<name>         every parameter (:class:`attnviz.core.transformer.Params` names)
losses               (steps,) the training loss of every step
frames               (f,) recorded steps
previous_token, prefix_matching, copying   (f, n_layers, n_heads) scores at each frame
eval_loss            (f,) the task loss of the fixed evaluation batch
heldout_tokens       (t,) the held-out repeated sequence
weights              (f, n_layers, n_heads, t, t) float32: every head's attention on it at
                     each recorded step (the frames the page's slider and Play step through)
position_loss        (f, t − 1) its next-token loss at every position, at each recorded step
final_weights        (n_layers, n_heads, t, t) every head's attention on it, trained (float64)
roles                (4,) previous-token head (layer, head), induction head (layer, head)
phase_change         (3,) step, start, end of the loss's phase change (−1 if none)
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnviz.core.transformer import Params
from attnviz.io.examples import HERE
from attnviz.scenarios.induction import (
    HeadRoles,
    InductionRun,
    InductionSettings,
    detect_phase_change,
    heldout_sequence,
    identify_heads,
    train_induction,
)

INDUCTION_NPZ = HERE / "induction_model.npz"
SEED = 0
RECORD = ("losses", "frames", "weights", "previous_token", "prefix_matching", "copying",
          "position_loss", "eval_loss", "heldout_tokens")  # the members the page replays
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: no clock in the file


@dataclass(frozen=True, eq=False)
class InductionModel:
    """The shipped model, read back.

    Attributes
    ----------
    params : Params
    settings : InductionSettings
    record : dict of str to ndarray
        The training summary (every member of the file but the parameters and settings).
    roles : HeadRoles
        Identified from the last frame's scores.
    run : InductionRun
        The recorded training run as the page replays it, read from the file (no training):
        its ``weights`` are float32, ``seconds`` is 0 (a duration is not reproducible).
    """

    params: Params
    settings: InductionSettings
    record: dict[str, np.ndarray]
    roles: HeadRoles
    run: InductionRun


def build_induction_model(settings: InductionSettings | None = None) -> dict[str, np.ndarray]:
    """Train (defaults, seed :data:`SEED` unless ``settings`` are given) and return the
    arrays of the file, in the order they are written."""
    settings = InductionSettings(seed=SEED) if settings is None else settings
    run = train_induction(settings)
    return run_arrays(run)


def run_arrays(run: InductionRun) -> dict[str, np.ndarray]:
    """The arrays a run is saved as (see the module docstring)."""
    phase = run.phase_change
    arrays: dict[str, np.ndarray] = {
        "settings_json": np.array(json.dumps(run.settings.as_dict(), sort_keys=True)),
    }
    arrays.update({f"param.{name}": np.array(a) for name, a in run.params.items()})
    arrays.update({
        "losses": run.losses,
        "frames": run.frames.astype(np.int64),
        "previous_token": run.previous_token,
        "prefix_matching": run.prefix_matching,
        "copying": run.copying,
        "eval_loss": run.eval_loss,
        "heldout_tokens": run.heldout.tokens[0].astype(np.int64),
        "weights": run.weights.astype(np.float32),
        "position_loss": run.position_loss,
        "final_weights": run.weights[-1],
        "roles": np.array([*run.roles.previous_token, *run.roles.induction], dtype=np.int64),
        "phase_change": np.array([-1, -1, -1] if phase is None else
                                 [phase.step, phase.start, phase.end], dtype=np.int64),
    })
    return arrays


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The .npz of ``arrays``, deflated, with fixed timestamps: the same arrays, the same
    bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, value in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buffer.getvalue()


def write_induction_model(path: Path = INDUCTION_NPZ) -> bytes:
    """Build the model and write it to ``path``; returns the bytes written."""
    data = npz_bytes(build_induction_model())
    Path(path).write_bytes(data)
    return data


def load_induction_model(path: Path = INDUCTION_NPZ) -> InductionModel:
    """Read a file written by :func:`write_induction_model` (no pickles).

    Raises
    ------
    ValueError
        If a member is missing or the parameters do not fit the settings.
    """
    with np.load(path, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files}
    if "settings_json" not in arrays:
        raise ValueError(f"{Path(path).name} holds no settings_json: not an induction model")
    missing = [name for name in RECORD if name not in arrays]
    if missing:
        raise ValueError(f"{Path(path).name} lacks {', '.join(missing)}: rebuild it with "
                         "python -m attnviz.io.examples.make_induction_model")
    settings = InductionSettings(**json.loads(str(arrays.pop("settings_json"))))
    params = Params(settings.config(), {name[len("param."):]: arrays.pop(name)
                                        for name in list(arrays) if name.startswith("param.")})
    run = recorded_run(params, settings, arrays)
    return InductionModel(params, settings, arrays, run.roles, run)


def recorded_run(params: Params, settings: InductionSettings,
                 record: dict[str, np.ndarray]) -> InductionRun:
    """The training run a file recorded, rebuilt without training: the recorded arrays, the
    held-out sequence (checked against the file's), the heads identified from the last
    frame's scores and the phase change found again on the loss curve."""
    heldout = heldout_sequence(settings)
    if not np.array_equal(heldout.tokens[0], record["heldout_tokens"]):
        raise ValueError("the file's held-out sequence is not the one its settings make: "
                         "rebuild it with python -m attnviz.io.examples.make_induction_model")
    previous, prefix = record["previous_token"], record["prefix_matching"]
    losses = record["losses"]
    return InductionRun(settings, params, losses, record["frames"], record["weights"], previous,
                        prefix, record["copying"], record["position_loss"],
                        record["eval_loss"], heldout, identify_heads(previous[-1], prefix[-1]),
                        detect_phase_change(losses), "", 0.0)


if __name__ == "__main__":
    written = write_induction_model()
    model = load_induction_model()
    print(f"wrote {INDUCTION_NPZ} ({len(written):,} bytes): previous-token head "
          f"{model.roles.previous_token} ({model.roles.previous_token_score:.2f}), induction "
          f"head {model.roles.induction} ({model.roles.induction_score:.2f})")
