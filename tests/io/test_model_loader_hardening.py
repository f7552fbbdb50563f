"""The model loader against planted folders (attnviz.io.capture's loading half and
attnviz.io.model_size): only regular files are opened, inside the root when one is given;
every size a config.json states is judged by arithmetic before torch builds anything, in well
under a second; tokenizer files have a cap; the loads in flight share one budget; every
refusal is a short sentence.

A check that could hang (a FIFO, a config of a million layers) runs in a thread with a timeout,
so a regression fails the test instead of holding the suite. Models are tiny random ones
(tests/hf_models.py); nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_models import VOCAB, configs, parity_configs, save_model  # noqa: E402

from attnviz.io import capture as cap  # noqa: E402
from attnviz.io import model_size  # noqa: E402

GIB = 1024**3
QUICK = 1.0  # seconds a refusal may take (a check that hangs is stopped at HANG)
HANG = 30.0


def within(seconds: float, fn, *args, **kwargs):
    """(result or exception, elapsed seconds) of fn run in a daemon thread; fails the test when
    it has not returned after ``seconds``."""
    out: dict = {}

    def run():
        start = time.perf_counter()
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["value"] = exc
        out["elapsed"] = time.perf_counter() - start

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn.__name__} had not returned after {seconds} s"
    return out["value"], out["elapsed"]


def refused(seconds: float, fn, *args, **kwargs) -> str:
    """The sentence of the ValueError fn raises within ``seconds`` (QUICK by default)."""
    result, elapsed = within(HANG, fn, *args, **kwargs)
    assert isinstance(result, ValueError), f"expected a refusal, got {result!r}"
    assert elapsed < seconds, f"refused after {elapsed:.2f} s"
    message = str(result)
    assert "Traceback" not in message and "\n" not in message and len(message) < 400
    return message


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A GPT-2 of width 16 and 2 layers with its tokenizer, loaded once so that transformers'
    imports are done before any timing."""
    config, bert, pad = configs()["gpt2"]
    folder = save_model(config, bert, pad, tmp_path_factory.mktemp("gpt2"))
    cap.load_model(folder)
    return folder


def planted(tiny: Path, folder: Path, **config) -> Path:
    """A copy of the tiny model whose config.json is changed by ``config`` (a value of None
    removes a field)."""
    shutil.copytree(tiny, folder)
    data = json.loads((tiny / "config.json").read_text())
    data.update(config)
    data = {k: v for k, v in data.items() if v is not None}
    (folder / "config.json").write_text(json.dumps(data))
    return folder


# ---------------------------------------------------------------------------------------------
# Only regular files
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model.safetensors",
                                  "generation_config.json"])
def test_a_fifo_in_a_model_folder_is_refused_at_once(tiny, tmp_path, name):
    folder = tmp_path / "m"
    shutil.copytree(tiny, folder)
    (folder / name).unlink(missing_ok=True)
    os.mkfifo(folder / name)
    message = refused(QUICK, cap.load_model, folder)
    assert message.startswith(f"'{name}' in ") and "is not a regular file" in message


def test_reading_config_json_never_waits_on_a_pipe(tmp_path):
    # the file is opened without blocking and checked on the open descriptor, so a pipe put
    # in place of config.json after the folder was listed is refused, not waited on
    os.mkfifo(tmp_path / "config.json")
    message = refused(QUICK, cap._read_config, str(tmp_path), "'m'")
    assert message == "the config.json of 'm' cannot be read as a regular file"


def test_a_folder_named_like_a_file_it_reads_is_refused(tiny, tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(tiny, folder)
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer.json").mkdir()
    assert "'tokenizer.json' in " in refused(QUICK, cap.load_model, folder)


def test_a_sharded_index_may_name_only_files_of_its_folder(tiny, tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(tiny, folder)
    (tmp_path / "outside.safetensors").write_bytes(b"")
    index = {"metadata": {}, "weight_map": {"wte.weight": "../outside.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    assert "names the weights file '../outside.safetensors', which is not a file of that " \
           "folder" in refused(QUICK, cap.load_model, folder)


def test_a_folder_of_thousands_of_entries_is_refused(tiny, tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(tiny, folder)
    for i in range(cap.MAX_FOLDER_ENTRIES):
        (folder / f"f{i}").touch()
    assert "holds more than 1,000 entries" in refused(QUICK, cap.load_model, folder)


def hf_cache(tiny: Path, cache: Path) -> Path:
    """The tiny model laid out as the Hugging Face cache keeps it: snapshot files are links
    into the repository's blobs. Returns the snapshot folder."""
    repo = cache / "models--teacher--tiny"
    snapshot = repo / "snapshots" / "0123abcd"
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    for i, p in enumerate(sorted(tiny.iterdir())):
        shutil.copyfile(p, repo / "blobs" / f"blob{i}")
        (snapshot / p.name).symlink_to(Path("..", "..", "blobs", f"blob{i}"))
    return snapshot


def test_inside_a_root_links_into_the_cache_load_and_links_out_are_refused(tiny, tmp_path):
    snapshot = hf_cache(tiny, tmp_path / "hub")
    repo = snapshot.parent.parent
    model, tokenizer = cap.load_model(snapshot, root=repo)  # links into ../../blobs
    assert model.config.model_type == "gpt2" and tokenizer("the cat")["input_ids"]
    assert cap.check_model("snapshots/0123abcd", root=repo) > 0  # relative to the root
    # a file that links out of the root is refused, though it is a good tokenizer
    outside = tmp_path / "elsewhere.json"
    shutil.copyfile(tiny / "tokenizer.json", outside)
    (snapshot / "tokenizer.json").unlink()
    (snapshot / "tokenizer.json").symlink_to(outside)
    message = refused(QUICK, cap.load_model, snapshot, root=repo)
    assert "'tokenizer.json' in " in message and "leads outside the models folder" in message
    cap.check_model(snapshot)  # without a root, the same folder is not judged by one


def test_outside_the_root_the_answer_does_not_say_what_exists(tiny, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(tiny, root / "tiny")
    secret = tmp_path / "secret"
    secret.mkdir()
    (root / "escape").symlink_to(secret)
    answers = {re.sub(r"^'.*?' is", "'P' is", refused(QUICK, cap.load_model, path, root=root))
               for path in (secret, tmp_path / "nothing", tmp_path, "../secret", "escape",
                            root / "escape" / "x")}
    assert answers == {"'P' is not a folder of the models folder; only model folders inside "
                       "it are opened"}
    assert cap.check_model("tiny", root=root) == cap.check_model(root / "tiny")


# ---------------------------------------------------------------------------------------------
# Every size, by arithmetic, before anything is built
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_layer", [2000, 20000, 1_000_000])
def test_a_config_of_thousands_of_layers_is_refused_in_well_under_a_second(tiny, tmp_path,
                                                                           n_layer):
    folder = planted(tiny, tmp_path / "m", n_layer=n_layer)
    assert refused(QUICK, cap.load_model, folder) == (
        f"the config.json says n_layer = {n_layer}; it must be a whole number from 0 to 256")


def test_gpt_neo_causal_masks_are_counted_before_the_model_is_built(tiny, tmp_path):
    from transformers import GPTNeoConfig

    neo = dict(hidden_size=16, num_layers=4, num_heads=4, vocab_size=len(VOCAB),
               attention_types=[[["global", "local"], 2]], window_size=8)
    small = save_model(GPTNeoConfig(**neo, max_position_embeddings=64), False, True,
                       tmp_path / "small")
    # 30,000 positions: 8 MB of parameters, 3.35 GiB of masks
    big = planted(small, tmp_path / "big", max_position_embeddings=30_000)
    message = refused(QUICK, cap.load_model, big)
    assert "needs at least 3.35 GiB" in message
    assert "(4 causal masks of 30,000² bytes: 3.35 GiB)" in message
    model, _ = cap.load_model(small)
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    assert buffers == 4 * 64 * 64  # one bool mask of 64² a layer
    assert cap.check_model(small) == 4 * model.num_parameters() + buffers


def test_the_arithmetic_stays_below_the_exact_count():
    # a lower bound: what the arithmetic refuses, the exact count refuses too
    from transformers import (
        ConvBertConfig,
        Mamba2Config,
        MobileBertConfig,
        SqueezeBertConfig,
        SwinConfig,
    )

    lighter = {  # architectures whose layers weigh less than a standard transformer's
        "mobilebert": MobileBertConfig(vocab_size=99, hidden_size=64, embedding_size=16,
                                       intra_bottleneck_size=16, num_hidden_layers=2,
                                       intermediate_size=64, num_attention_heads=4),
        "squeezebert": SqueezeBertConfig(vocab_size=99, hidden_size=64, num_hidden_layers=2,
                                         intermediate_size=256, num_attention_heads=4,
                                         embedding_size=64),
        "convbert": ConvBertConfig(vocab_size=99, hidden_size=64, num_hidden_layers=2,
                                   intermediate_size=256, num_attention_heads=4),
        "swin": SwinConfig(embed_dim=16, depths=[1, 1], num_heads=[2, 2]),
        "mamba2": Mamba2Config(hidden_size=64, num_hidden_layers=2, num_heads=8, head_dim=16,
                               vocab_size=99, n_groups=1),
    }
    every = {name: c for name, (c, _, _) in (configs() | parity_configs()).items()} | lighter
    for name, config in every.items():
        estimate = model_size.estimate_bytes(config.to_dict()).n_bytes
        assert 0 < estimate <= cap.model_bytes(config), name


@pytest.mark.parametrize(("fields", "sentence"), [
    ({"n_embd": -32},
     "the config.json says n_embd = -32; it must be a whole number from 1 to 65,536"),
    ({"n_embd": 1e308, "n_layer": "2"},  # the first in the file's (sorted) order
     "the config.json says n_embd = 1e+308; it must be a whole number from 1 to 65,536"),
    ({"n_layer": "2"},
     "the config.json says n_layer = \"2\"; it must be a whole number from 0 to 256"),
    ({"n_head": True},
     "the config.json says n_head = true; it must be a whole number from 1 to 4,096"),
    ({"vocab_size": 2.5},
     "the config.json says vocab_size = 2.5; it must be a whole number from 1 to 8,388,608"),
    ({"n_positions": [64, "x"]},
     "the config.json says n_positions = [64, \"x\"]; it must be each a whole number from 1 "
     "to 16,777,216"),
    ({"n_inner": 10**7},
     "the config.json says n_inner = 10000000; it must be a whole number from 1 to 1,048,576"),
])
def test_a_size_that_is_not_a_sane_whole_number_gets_a_sentence(tiny, tmp_path, fields,
                                                                 sentence):
    folder = planted(tiny, tmp_path / "m", **fields)
    assert refused(QUICK, cap.load_model, folder) == sentence


def test_sub_configs_are_checked_and_the_defaults_transformers_fills_in_too():
    with pytest.raises(ValueError, match=r"^the config.json says text_config.hidden_size = "
                                         r"-1; it must be"):
        model_size.check_fields({"model_type": "x", "text_config": {"hidden_size": -1}})
    model_size.check_fields({"max_position_embeddings": 1200.0,  # a whole number as a float
                             "intermediate_size": [64, 128],  # per layer
                             "num_hidden_layers": {"vision": 5, "language": 9},  # per part
                             "n_inner": None, "label2id": {"n_layer": "kept as a label"}})


def test_a_huge_but_well_typed_model_is_refused_by_arithmetic_in_milliseconds(tiny, tmp_path):
    folder = planted(tiny, tmp_path / "m", n_embd=65536, n_layer=256, n_head=64)
    start = time.perf_counter()
    message = refused(QUICK, cap.load_model, folder)
    assert time.perf_counter() - start < 0.2
    assert message.startswith("the model in ") and "needs at least" in message
    assert "(256 layers of width 65,536: " in message


# ---------------------------------------------------------------------------------------------
# Tokenizer files
# ---------------------------------------------------------------------------------------------

def test_a_tokenizer_file_over_its_cap_is_refused_before_it_is_parsed(tiny, tmp_path):
    folder = tmp_path / "m"
    shutil.copytree(tiny, folder)
    with open(folder / "tokenizer.json", "r+b") as fp:
        fp.truncate(32 * 1024**2 + 1)  # sparse: no disk written
    message = refused(QUICK, cap.load_model, folder)
    assert message.startswith("the tokenizer file 'tokenizer.json' in ")
    assert "is 33,554,433 bytes; at most 33,554,432 are read" in message
    assert cap.MAX_TOKENIZER_BYTES >= 32 * 1024**2  # Llama 3's (9 MB) and Qwen's (7 MB) fit


# ---------------------------------------------------------------------------------------------
# One budget for the loads in flight
# ---------------------------------------------------------------------------------------------

def hold(n_bytes: int):
    """A reservation held by another thread until the returned event is set."""
    held, release = threading.Event(), threading.Event()

    def run():
        with cap.loading_budget(n_bytes):
            held.set()
            release.wait(HANG)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert held.wait(HANG)
    return release, thread


def test_concurrent_reservations_share_one_budget():
    assert cap.bytes_in_flight() == 0
    release, thread = hold(int(1.5 * GIB))
    assert cap.bytes_in_flight() == int(1.5 * GIB)
    result, _ = within(QUICK, cap.loading_budget(1 * GIB).__enter__)
    assert isinstance(result, cap.LoadsBusy) and isinstance(result, ValueError)
    assert str(result) == ("other model loads on this server hold 1.50 GiB of the 2.00 GiB "
                           "that loads may take at once, and this model needs 1.00 GiB; try "
                           "again in a moment")
    with cap.loading_budget(GIB // 2):  # what still fits is admitted
        assert cap.bytes_in_flight() == 2 * GIB
    release.set()
    thread.join(HANG)
    assert cap.bytes_in_flight() == 0
    with cap.loading_budget(1 * GIB):  # after the release: accepted
        pass
    with cap.loading_budget(3 * GIB):  # a load alone is judged by its own limit only
        assert cap.bytes_in_flight() == 3 * GIB
    assert cap.bytes_in_flight() == 0


def test_a_load_is_refused_while_others_hold_the_budget_and_releases_its_own(tiny):
    n_bytes = cap.check_model(tiny)
    release, thread = hold(cap.LOADS_BUDGET_BYTES)
    message = refused(QUICK, cap.load_model, tiny)
    assert message.startswith("other model loads on this server hold 2.00 GiB") \
        and message.endswith("try again in a moment")
    release.set()
    thread.join(HANG)
    cap.load_model(tiny)
    assert cap.bytes_in_flight() == 0  # load_model gave its reservation back
    with cap.loaded_model(tiny) as (model, tokenizer):
        assert cap.bytes_in_flight() == n_bytes  # held while the model is in use
        assert model.config.model_type == "gpt2"
    assert cap.bytes_in_flight() == 0
    with pytest.raises(KeyError), cap.loaded_model(tiny):
        raise KeyError("the caller's own error")
    assert cap.bytes_in_flight() == 0  # released however the block ends


def test_eight_students_loading_at_once_fit_in_the_budget(tiny, monkeypatch):
    # a budget of three loads: of eight at once, the ones beyond it are refused, none waits
    n_bytes = cap.check_model(tiny)
    monkeypatch.setattr(cap, "LOADS_BUDGET_BYTES", 3 * n_bytes)
    peak, lock, start = [0], threading.Lock(), threading.Barrier(8)

    def student():
        start.wait(HANG)
        with cap.loaded_model(tiny) as (model, _):
            with lock:
                peak[0] = max(peak[0], cap.bytes_in_flight())
            time.sleep(0.3)  # capturing
            return model.config.model_type

    threads = [threading.Thread(target=lambda: results.append(within(HANG, student)[0]))
               for _ in range(8)]
    results: list = []
    for t in threads:
        t.start()
    for t in threads:
        t.join(2 * HANG)
    assert len(results) == 8
    assert peak[0] <= 3 * n_bytes
    assert all(r == "gpt2" or isinstance(r, cap.LoadsBusy) for r in results), results
    assert "gpt2" in results and cap.bytes_in_flight() == 0


# ---------------------------------------------------------------------------------------------
# Every refusal a short sentence
# ---------------------------------------------------------------------------------------------

def test_paths_that_name_nothing_get_short_sentences(tmp_path):
    assert refused(QUICK, cap.load_model, "~nosuchuser/x") == (
        "'~nosuchuser/x' is not a folder; give the folder written by "
        "model.save_pretrained(path)")
    message = refused(QUICK, cap.load_model, "a" * 10**6)
    assert message == ("the model folder is 1,000,000 characters long; a path has at most "
                       "4,096")
    long = str(tmp_path / ("b" * 200))
    message = refused(QUICK, cap.load_model, long)
    assert "…" in message and len(message) < 200 and "b" * 60 not in message
    assert "holds a NUL character" in refused(QUICK, cap.load_model, "a\x00b")
    assert refused(QUICK, cap.load_model, 3) == "the model folder must be a path, got int"
    assert "is not a folder" in refused(QUICK, cap.load_model, tmp_path / ("c" * 300))
