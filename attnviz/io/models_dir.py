"""The models folder: the only place Model view loads a model from.

A teacher puts model folders (written by ``model.save_pretrained(path)`` and
``tokenizer.save_pretrained(path)``) in one folder, :func:`models_dir` — the setting
:data:`MODELS_DIR_ENV`, by default ``attnviz/models`` in the user's data directory
(``$XDG_DATA_HOME``, else ``~/.local/share``). Each of its subfolders holding a ``config.json``
is a model the page offers in a list; with :data:`HF_CACHE_ENV` = 1 the models of the local
Hugging Face cache (``models--<org>--<name>/snapshots/<revision>``) are offered too. Nobody
types a path: a name is loaded only when it is in the listing (:func:`resolve`), so nothing
outside these folders is read, and no message says whether some other path exists.

Listing is bounded and never blocks: at most :data:`MAX_ENTRIES` directory entries are looked
at, folders are entered only when they are real folders (a symbolic link to a folder is not
followed), and no file is opened — a ``config.json`` counts when it is a regular file (a
symbolic link to one counts only when it resolves inside the model's own root: a cached
snapshot's files link into the cache's ``blobs``). numpy-free, no Streamlit.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NO_MODELS_ENV = "ATTNVIZ_NO_MODELS"  # "1": the server loads no model (Model view says so)
ALLOW_MODELS_FLAG = "--allow-models"  # the start commands' option: load models on a LAN too
MODELS_DIR_ENV = "ATTNVIZ_MODELS_DIR"  # the models folder (default: default_models_dir())
HF_CACHE_ENV = "ATTNVIZ_MODELS_HF_CACHE"  # "1": also offer the local Hugging Face cache
MAX_ENTRIES = 500  # directory entries looked at in one listing, every folder counted
CACHE_PREFIX = "hf:"  # the key of a model from the Hugging Face cache starts with this
CONFIG = "config.json"


@dataclass(frozen=True)
class ModelEntry:
    """One model the page may load.

    Attributes
    ----------
    key : str
        Unique in a listing: the folder's name, or ``hf:<org>/<name>`` (``@<revision>`` added
        when the cache holds several revisions) for a cached model.
    name : str
        The folder's name, or the Hub name ``<org>/<name>`` of a cached model.
    path : str
        The model folder (absolute, symbolic links resolved).
    root : str
        The folder nothing of this model may resolve outside of: the models folder, or the
        cached model's own ``models--<org>--<name>`` folder.
    revision : str or None
        A cached model's snapshot revision; None for the models folder's.
    """

    key: str
    name: str
    path: str
    root: str
    revision: str | None = None

    @property
    def cached(self) -> bool:
        """True for a model of the Hugging Face cache."""
        return self.revision is not None


@dataclass(frozen=True)
class Listing:
    """The models offered, sorted by key; ``truncated`` when :data:`MAX_ENTRIES` stopped the
    scan before every entry was seen."""

    entries: tuple[ModelEntry, ...]
    folder: str
    truncated: bool = False

    def keys(self) -> list[str]:
        return [e.key for e in self.entries]


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def _absolute(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def default_models_dir(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_DATA_HOME/attnviz/models``, else ``~/.local/share/attnviz/models``
    (``%LOCALAPPDATA%\\attnviz\\models`` on Windows)."""
    env = os.environ if env is None else env
    if os.name == "nt" and env.get("LOCALAPPDATA"):
        base = env["LOCALAPPDATA"]
    else:
        base = env.get("XDG_DATA_HOME", "").strip() or os.path.join("~", ".local", "share")
    return _absolute(os.path.join(base, "attnviz", "models"))


def models_dir(env: Mapping[str, str] | None = None) -> str:
    """The models folder: :data:`MODELS_DIR_ENV` when set, else :func:`default_models_dir`
    (absolute; it need not exist)."""
    env = os.environ if env is None else env
    given = env.get(MODELS_DIR_ENV, "").strip()
    return _absolute(given) if given else default_models_dir(env)


def hf_cache_allowed(env: Mapping[str, str] | None = None) -> bool:
    """True when :data:`HF_CACHE_ENV` says the Hugging Face cache's models are offered."""
    return _flag(os.environ if env is None else env, HF_CACHE_ENV)


def hf_cache_dir(env: Mapping[str, str] | None = None) -> str:
    """The local Hugging Face hub cache, found as huggingface_hub finds it: ``HF_HUB_CACHE``
    (or the older ``HUGGINGFACE_HUB_CACHE``), else ``$HF_HOME/hub``, else
    ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``."""
    env = os.environ if env is None else env
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(name, "").strip():
            return _absolute(os.path.expandvars(env[name].strip()))
    home = env.get("HF_HOME", "").strip() or os.path.join(
        env.get("XDG_CACHE_HOME", "").strip() or os.path.join("~", ".cache"), "huggingface")
    return _absolute(os.path.join(os.path.expandvars(home), "hub"))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _regular_inside(path: str, root: str) -> bool:
    """True when ``path`` is a regular file, or a symbolic link resolving to a regular file
    inside ``root`` (read with stat only: nothing is opened, so a FIFO cannot block)."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            target = os.path.realpath(path)
            if not _inside(target, root):
                return False
            mode = os.stat(target).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(mode)


class _Budget:
    """Counts the directory entries looked at; :meth:`scan` stops at the limit."""

    def __init__(self, limit: int) -> None:
        self.left, self.truncated = limit, False

    def scan(self, folder: str):
        """(name, path) of each real subfolder of ``folder`` (no symbolic links), hidden
        names skipped, until the budget is spent."""
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if self.left <= 0:
                        self.truncated = True
                        return
                    self.left -= 1
                    try:
                        real_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        real_dir = False
                    if real_dir and not entry.name.startswith("."):
                        yield entry.name, entry.path
        except (OSError, ValueError):
            return


def _folder_models(folder: str, budget: _Budget) -> list[ModelEntry]:
    root = os.path.realpath(folder)
    return [ModelEntry(key=name, name=name, path=os.path.join(root, name), root=root)
            for name, path in budget.scan(root)
            if _regular_inside(os.path.join(path, CONFIG), root)]


def _cached_models(cache: str, budget: _Budget) -> list[ModelEntry]:
    cache = os.path.realpath(cache)
    found = []
    for repo, repo_path in budget.scan(cache):
        parts = repo.split("--")
        if parts[0] != "models" or len(parts) < 2 or not all(parts[1:]):
            continue
        name = "/".join(parts[1:])
        revisions = [(rev, path) for rev, path in budget.scan(os.path.join(repo_path,
                                                                           "snapshots"))
                     if _regular_inside(os.path.join(path, CONFIG), repo_path)]
        for rev, path in revisions:
            key = CACHE_PREFIX + name + (f"@{rev[:12]}" if len(revisions) > 1 else "")
            found.append(ModelEntry(key=key, name=name, path=path, root=repo_path,
                                    revision=rev))
    return found


def list_models(env: Mapping[str, str] | None = None, limit: int = MAX_ENTRIES) -> Listing:
    """The models offered: the models folder's, then (when allowed) the Hugging Face cache's;
    at most ``limit`` directory entries are looked at in all."""
    env = os.environ if env is None else env
    budget = _Budget(limit)
    folder = models_dir(env)
    entries = _folder_models(folder, budget)
    if hf_cache_allowed(env):
        entries += _cached_models(hf_cache_dir(env), budget)
    unique = {}
    for entry in entries:
        unique.setdefault(entry.key, entry)
    return Listing(tuple(sorted(unique.values(), key=lambda e: e.key)), folder,
                   budget.truncated)


def resolve(key: str, env: Mapping[str, str] | None = None) -> ModelEntry:
    """The model of this listing key, listed again now.

    Raises
    ------
    ValueError
        When the key is not among the models offered (it never says whether a folder of that
        name exists anywhere).
    """
    for entry in list_models(env).entries:
        if entry.key == key:
            return entry
    raise ValueError("that model is not in the models folder (any more); pick one from the "
                     "list")


def cache_root(folder: str | os.PathLike) -> str:
    """The ``models--<org>--<name>`` folder of a snapshot folder of the Hugging Face cache
    (``.../models--org--name/snapshots/<revision>``): its files link into its ``blobs``."""
    return str(Path(os.path.realpath(folder)).parent.parent)
