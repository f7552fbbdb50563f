"""The models folder (attnviz.io.models_dir): what is listed, what is not, where it is, and
that a name outside the listing is refused with one sentence whatever exists on the disk."""

from __future__ import annotations

import os
import time

import pytest

from attnviz.io import models_dir as md


def model(folder, name: str, config: str = '{"model_type": "gpt2"}'):
    path = folder / name
    path.mkdir(parents=True)
    (path / "config.json").write_text(config)
    return path


@pytest.fixture
def env(tmp_path):
    root = tmp_path / "models"
    root.mkdir()
    return {md.MODELS_DIR_ENV: str(root), "HOME": str(tmp_path / "home")}


def test_the_models_folders_model_folders_are_listed(tmp_path, env):
    root = tmp_path / "models"
    model(root, "gpt2")
    model(root, "bert")
    (root / "notes").mkdir()  # no config.json
    (root / "stray.json").write_text("{}")  # a file, not a folder
    model(root, ".hidden")
    listing = md.list_models(env)
    assert listing.keys() == ["bert", "gpt2"] and not listing.truncated
    assert listing.folder == str(root)
    entry = listing.entries[1]
    assert (entry.name, entry.path, entry.root, entry.cached) == (
        "gpt2", str(root / "gpt2"), str(root), False)


def test_nothing_outside_the_folder_is_listed(tmp_path, env):
    root = tmp_path / "models"
    outside = model(tmp_path, "elsewhere")
    (root / "linked").symlink_to(outside, target_is_directory=True)  # a folder link
    half = root / "half"
    half.mkdir()
    (half / "config.json").symlink_to(outside / "config.json")  # a file link leading out
    inner = model(root, "inner")
    kept = root / "kept"
    kept.mkdir()
    (kept / "config.json").symlink_to(inner / "config.json")  # a link that stays inside
    assert md.list_models(env).keys() == ["inner", "kept"]


def test_a_fifo_named_config_json_is_not_listed_and_does_not_block(tmp_path, env):
    planted = tmp_path / "models" / "planted"
    planted.mkdir()
    os.mkfifo(planted / "config.json")
    start = time.perf_counter()
    assert md.list_models(env).keys() == []
    assert time.perf_counter() - start < 1.0


def test_the_listing_looks_at_a_bounded_number_of_entries(tmp_path, env):
    root = tmp_path / "models"
    for i in range(30):
        model(root, f"m{i:02d}")
    listing = md.list_models(env, limit=10)
    assert len(listing.entries) == 10 and listing.truncated
    assert md.list_models(env).keys() == [f"m{i:02d}" for i in range(30)]
    assert md.MAX_ENTRIES == 500


def test_the_default_folder_is_in_the_users_data_directory(tmp_path):
    assert md.models_dir({"XDG_DATA_HOME": str(tmp_path / "data")}) == str(
        tmp_path / "data" / "attnviz" / "models")
    home = os.path.expanduser("~")
    assert md.models_dir({}) == os.path.join(home, ".local", "share", "attnviz", "models")
    assert md.models_dir({md.MODELS_DIR_ENV: str(tmp_path / "m")}) == str(tmp_path / "m")
    assert md.list_models({md.MODELS_DIR_ENV: str(tmp_path / "none")}).entries == ()


def cached(cache, org_name: str, revision: str = "abc123def4567890"):
    """A model of a Hugging Face cache, as huggingface_hub lays it out: the snapshot's files
    are links into the repository's blobs."""
    repo = cache / ("models--" + org_name.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    blob = repo / "blobs" / f"cfg{revision}"
    blob.write_text('{"model_type": "gpt2"}')
    snap = repo / "snapshots" / revision
    snap.mkdir(parents=True)
    (snap / "config.json").symlink_to(os.path.relpath(blob, snap))
    return repo, snap


def test_the_hugging_face_cache_is_listed_only_when_allowed(tmp_path, env):
    cache = tmp_path / "hf" / "hub"
    repo, snap = cached(cache, "teacher/tiny")
    cached(cache, "gpt2")
    (cache / "datasets--x--y" / "snapshots" / "r").mkdir(parents=True)
    env = env | {"HF_HUB_CACHE": str(cache)}
    assert md.list_models(env).keys() == []
    allowed = env | {md.HF_CACHE_ENV: "1"}
    listing = md.list_models(allowed)
    assert listing.keys() == ["hf:gpt2", "hf:teacher/tiny"]
    entry = listing.entries[1]
    assert (entry.name, entry.path, entry.root, entry.revision) == (
        "teacher/tiny", str(snap), str(repo), "abc123def4567890")
    assert md.cache_root(snap) == str(repo)
    cached(cache, "teacher/tiny", revision="fedcba9876543210")  # a second revision
    assert md.list_models(allowed).keys() == ["hf:gpt2", "hf:teacher/tiny@abc123def456",
                                              "hf:teacher/tiny@fedcba987654"]


def test_the_cache_is_found_where_huggingface_hub_finds_it(tmp_path):
    assert md.hf_cache_dir({"HF_HUB_CACHE": str(tmp_path / "c")}) == str(tmp_path / "c")
    assert md.hf_cache_dir({"HF_HOME": str(tmp_path / "h")}) == str(tmp_path / "h" / "hub")
    assert md.hf_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "x")}) == str(
        tmp_path / "x" / "huggingface" / "hub")
    assert md.hf_cache_dir({}) == os.path.join(os.path.expanduser("~"), ".cache",
                                               "huggingface", "hub")


def test_a_name_outside_the_listing_is_refused_alike_whatever_exists(tmp_path, env):
    model(tmp_path / "models", "gpt2")
    model(tmp_path, "outside")
    assert md.resolve("gpt2", env).path == str(tmp_path / "models" / "gpt2")
    messages = set()
    for key in ("outside", str(tmp_path / "outside"), "../outside", str(tmp_path / "nothing"),
                os.path.expanduser("~/.ssh"), "/etc", "hf:gpt2", "x" * 10**6):
        with pytest.raises(ValueError) as err:
            md.resolve(key, env)
        messages.add(str(err.value))
    assert len(messages) == 1  # one sentence, naming nothing typed
    assert "not in the models folder" in messages.pop()
