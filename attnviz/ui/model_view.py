"""The Model view page's logic: where the attention comes from (the example, a captured file,
a model of the models folder, the Hub), the checks a captured file goes through, and the
page's views.

State: the page keeps ONE thing in the session, :data:`DATA_KEY`, a :class:`ModelViewData`
(the captured weights and tokens; never the model). It is replaced only by a load that
succeeded entirely: a refused model, text or file leaves it as it was.

Model loading needs the optional extra (torch, transformers) and can be turned off for a whole
server with the environment variable :data:`NO_MODELS_ENV` = 1 (read here only, by
:func:`models_allowed`; ``python -m attnviz`` sets it for a server that listens beyond
loopback unless the teacher starts it with ``--allow-models``). Models come only from the
models folder (:mod:`attnviz.io.models_dir`): the page offers its model folders as a list,
nobody types a path. The Hub is offered only when the server allows it (:data:`ALLOW_HUB_ENV`
= 1) and ``HF_HUB_OFFLINE`` is not set, and a download asks the Hub first: a model is never
taken from the local cache by its name when the Hub cannot be reached.
"""

from __future__ import annotations

import gc
import importlib.util
import io
import json
import os
import re
import stat
import sys
import zipfile
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attnviz.core.rollout import aggregate_heads, attention_rollout
from attnviz.figures import heatmap
from attnviz.figures.clickable import point_from_selection
from attnviz.figures.line_view import MAX_TOKENS as LINE_VIEW_MAX
from attnviz.figures.line_view import head_view
from attnviz.figures.model_view import layer_row, model_grid, weights_heatmap
from attnviz.io import attention_io as aio
from attnviz.io import models_dir
from attnviz.io.capture import CAPTURE_FORMAT, SEQ2SEQ_FORMAT
from attnviz.io.examples import EXAMPLE_NPZ
from attnviz.io.scenario_io import quote
from attnviz.scenarios import limits
from attnviz.scenarios.from_model import cross_scenario, kv_head, layer_scenario
from attnviz.scenarios.scenario import position_labels, scale_of
from attnviz.scenarios.tokens import without_bidi
from attnviz.teach.text import model_view as text
from attnviz.ui import state
from attnviz.ui.panels import show_figure
from attnviz.ui.share import plain

NO_MODELS_ENV = models_dir.NO_MODELS_ENV  # "1": a server that loads no model (LAN, class)
ALLOW_MODELS_FLAG = models_dir.ALLOW_MODELS_FLAG  # how the teacher turns loading on there
MODELS_DIR_ENV = models_dir.MODELS_DIR_ENV
MAX_LISTED = models_dir.MAX_ENTRIES  # folder entries a listing looks at
ALLOW_HUB_ENV = "ATTNVIZ_ALLOW_HUB"  # "1": the Hub source is offered (downloads by name)
HUB_OFFLINE_ENV = "HF_HUB_OFFLINE"
MAX_TEXT_TOKENS = 128  # tokens of a captured text (a 12 × 12 model: 2.4 M weights, 19 MB)
MAX_TEXT_CHARS = 2000  # characters typed in each text box
MAX_VALUES = limits.MAX_UPLOAD_VALUES  # weights kept per session: the same bound as an upload
SIDE_BY_SIDE_T = 16  # the opened head's lines and heatmap share a row up to this many tokens
HEAD_COLUMNS = (2, 3)  # ... the lines' share of the row and the heatmap's
DATA_KEY = "model_view_data"  # the one thing this page keeps in the session
OPENED_KEY = "model_view_opened"  # (source, layer, head, kind) of the real head last opened
_UPLOAD_CACHE = "_model_view_upload_cache"  # session memo: file_id -> its error or None
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")


@dataclass(frozen=True, eq=False)
class ModelViewData:
    """What the page shows: the captured weights and their tokens (no model).

    Attributes
    ----------
    weights : ndarray of shape (n_layers, n_heads, t, t), float64
    tokens : tuple of str
    segments : ndarray of shape (t,) of int, or None
        0 for the first sentence of a pair, 1 for the second; None for one text.
    causal : bool
    source : str
        Where the weights came from, as shown on the page.
    warnings : tuple of str
    folder : str or None
        The model folder the weights were captured from (a folder or the Hub's download), so a
        head can be opened on every page (:func:`open_on_every_page`); None for a file.
    texts : str or (str, str) or None
        The text captured from that folder.
    root : str or None
        The folder nothing of that model may resolve outside of (the models folder, or the
        cached model's own folder); None when no such bound was given.
    decoder : ndarray of shape (decoder layers, n_heads, t_d, t_d), float64, or None
        An encoder–decoder model's decoder self-attention (``weights`` and ``tokens`` are then
        its encoder's); None for a one-stack model.
    cross : ndarray of shape (decoder layers, n_heads, t_d, t), float64, or None
        Its cross-attention: the decoder's input (rows) over the source (columns).
    target_tokens : tuple of str or None
        The decoder's input: its start token, then the target's tokens.
    """

    weights: NDArray[np.float64]
    tokens: tuple[str, ...]
    segments: NDArray[np.int64] | None
    causal: bool
    source: str
    warnings: tuple[str, ...] = ()
    folder: str | None = None
    texts: str | tuple[str, str] | None = None
    root: str | None = None
    decoder: NDArray[np.float64] | None = None
    cross: NDArray[np.float64] | None = None
    target_tokens: tuple[str, ...] | None = None

    @property
    def nbytes(self) -> int:
        """Bytes this session keeps for these data."""
        seg = 0 if self.segments is None else self.segments.nbytes
        more = sum(a.nbytes for a in (self.decoder, self.cross) if a is not None)
        labels = self.tokens + (self.target_tokens or ())
        return int(self.weights.nbytes + seg + more + sum(len(t.encode()) for t in labels))

    @property
    def seq2seq(self) -> bool:
        """True for an encoder–decoder model's three kinds of attention."""
        return self.cross is not None

    def of_kind(self, kind: str) -> ModelViewData:
        """The encoder's ("encoder") or the decoder's ("decoder") self-attention as one-stack
        data (the page's grid, heads, fusion and rollout read those)."""
        if kind == "decoder" and self.decoder is not None:
            return replace(self, weights=self.decoder, tokens=self.target_tokens, causal=True,
                           segments=None)
        return self

    @property
    def boundary(self) -> int | None:
        """The first token of the second sentence, or None."""
        if self.segments is None or not (self.segments == 1).any():
            return None
        return int(np.argmax(self.segments == 1))


# ---------------------------------------------------------------------------------------------
# What this machine allows
# ---------------------------------------------------------------------------------------------

def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def models_allowed() -> bool:
    """False when the server sets ATTNVIZ_NO_MODELS=1 (a LAN or class server started without
    ``--allow-models``)."""
    return not _flag(NO_MODELS_ENV)


def hub_allowed() -> bool:
    """True only when models load, the server allows the Hub (ATTNVIZ_ALLOW_HUB=1) and
    HF_HUB_OFFLINE is not set."""
    return models_allowed() and _flag(ALLOW_HUB_ENV) and not _flag(HUB_OFFLINE_ENV)


def sources() -> list[str]:
    """The sources this server offers (keys of ``text.SOURCES``): a model of the models
    folder only while models load, the Hub only while :func:`hub_allowed`."""
    offered = ["example", "upload"]
    if models_allowed():
        offered.append("directory")
    if hub_allowed():
        offered.append("hub")
    return offered


def model_listing() -> models_dir.Listing:
    """The models the page offers (the models folder's, and the Hugging Face cache's when
    allowed), listed now."""
    return models_dir.list_models()


def model_label(entry: models_dir.ModelEntry) -> str:
    """How a model of the listing reads in the list."""
    if not entry.cached:
        return entry.name
    revision = entry.revision[:12] if "@" in entry.key else None
    return (text.CACHED_MODEL if revision is None else text.CACHED_MODEL_REVISION).format(
        name=entry.name, revision=revision)


def missing_extra() -> str | None:
    """The first of torch and transformers that is not installed, or None (checked without
    importing them: torch takes seconds and hundreds of MB to import)."""
    for name in ("torch", "transformers"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return name
    return None


# ---------------------------------------------------------------------------------------------
# Loading: the example, a captured file, a model folder, the Hub
# ---------------------------------------------------------------------------------------------

def _labels(tokens) -> tuple[str, ...]:
    return tuple(without_bidi(str(t))[: limits.MAX_LABEL_CHARS] for t in tokens)


def _causal_shape(w: np.ndarray) -> bool:
    """True when every matrix has nothing above the diagonal (and t > 1)."""
    t = w.shape[-1]
    return t > 1 and not w[..., np.triu_indices(t, 1)[0], np.triu_indices(t, 1)[1]].any()


def example() -> ModelViewData:
    """The example file shipped with attnviz (2 layers, 4 heads, 6 tokens)."""
    return from_upload(EXAMPLE_NPZ.read_bytes(), EXAMPLE_NPZ.name, text.EXAMPLE_NAME)


def from_upload(data: bytes, name: str, source: str | None = None) -> ModelViewData:
    """An uploaded .npy/.npz through the uploads' checks (attention_io), plus, for a file
    written by :func:`attnviz.io.capture.save_capture`, its metadata's checks
    (:func:`capture_metadata`). No torch needed.

    Raises
    ------
    ValueError
        Whatever the uploads refuse, a capture of another format version, or a capture whose
        parts contradict each other (tampered with).
    """
    att = aio.load_attention(data, name)
    meta = capture_metadata(data, name, att)
    tokens = att.tokens if att.tokens is not None else aio.default_tokens(att.t)
    return ModelViewData(weights=att.weights, tokens=_labels(tokens),
                         segments=meta["segments"], causal=meta["causal"],
                         source=source or text.UPLOAD_NAME.format(name=quote(name, 60)),
                         warnings=att.warnings, decoder=meta.get("decoder"),
                         cross=meta.get("cross"), target_tokens=meta.get("target_tokens"))


def _small_array(archive: zipfile.ZipFile, name: str, kinds: str, max_count: int) -> np.ndarray:
    """A metadata array of the .npz, read by the uploads' own header checks
    (:func:`attention_io.read_small_array`): of dtype kind in ``kinds``, at most ``max_count``
    values, no Python objects; else a ValueError saying which array and why."""
    try:
        return aio.read_small_array(archive, name, kinds, max_count, "it")
    except ValueError as exc:
        why = text.TAMPERED_WHY["unreadable"].format(name=name, reason=str(exc).rstrip("."))
        raise ValueError(text.TAMPERED.format(what=why)) from None


def capture_metadata(data: bytes, name: str, att: aio.UploadedAttention) -> dict:
    """Whether the weights are causal and their segments, from a capture's metadata (checked
    against the weights) or, for any other file, causal when nothing lies above a diagonal.

    A capture (an .npz with ``attnviz_capture``) must be of this version's
    :data:`~attnviz.io.capture.CAPTURE_FORMAT`, and agree with itself: token labels, one layer
    index per layer, one token id (and segment) per token, rows summing to 1, and nothing
    above the diagonal when it says causal.
    """
    plain_file = dict(causal=_causal_shape(att.weights), segments=None)
    if not str(name).lower().endswith(".npz"):
        return plain_file
    archive = zipfile.ZipFile(io.BytesIO(data))  # load_attention has read it already
    names = {i.filename for i in archive.infolist()}
    if "attnviz_capture.npy" not in names:
        return plain_file
    version = _small_array(archive, "attnviz_capture", "iu", 1)
    if version.size != 1 or int(version.ravel()[0]) not in (CAPTURE_FORMAT, SEQ2SEQ_FORMAT):
        found = int(version.ravel()[0]) if version.size == 1 else "?"
        raise ValueError(text.OTHER_VERSION.format(found=found, expected=CAPTURE_FORMAT))

    def tampered(why: str, **fields) -> ValueError:
        return ValueError(text.TAMPERED.format(what=text.TAMPERED_WHY[why].format(**fields)))

    for member in ("is_causal", "layers", "input_ids", "tokens"):
        if member + ".npy" not in names:
            raise tampered("missing", name=member)
    if att.tokens is None:
        raise tampered("tokens")
    causal = _small_array(archive, "is_causal", "b", 16)
    layers = _small_array(archive, "layers", "iu", limits.MAX_UPLOAD_LAYERS)
    ids = _small_array(archive, "input_ids", "iu", limits.MAX_UPLOAD_T)
    segments = (_small_array(archive, "token_type_ids", "iu", limits.MAX_UPLOAD_T)
                if "token_type_ids.npy" in names else None)
    if causal.size != 1:
        raise tampered("is_causal")
    if layers.shape != (att.layers,):
        raise tampered("layers", n=layers.size, layers=att.layers)
    indices = ", ".join(str(int(i)) for i in layers[:8]) + (", ..." if layers.size > 8 else "")
    if (layers.astype(np.int64) < 0).any():  # a uint64 beyond int64 turns negative too
        raise tampered("layer_range", indices=indices)
    if (np.diff(layers.astype(np.int64)) <= 0).any():
        raise tampered("layer_order", indices=indices)
    if ids.shape != (att.t,):
        raise tampered("input_ids", n=ids.size, t=att.t)
    if segments is not None and (segments.shape != (att.t,) or not np.isin(segments,
                                                                            (0, 1)).all()):
        raise tampered("segments", t=att.t)
    if att.rows_off:  # a warning about the labels (cut, bidi removed) is not tampering
        raise tampered("rows")
    causal = bool(causal.ravel()[0])
    t = att.t
    if causal and t > 1 and att.weights[..., np.triu_indices(t, 1)[0],
                                         np.triu_indices(t, 1)[1]].max() > 1e-6:
        raise tampered("causal")
    meta = dict(causal=causal, segments=None if segments is None else segments.astype(np.int64))
    if int(version.ravel()[0]) == SEQ2SEQ_FORMAT:
        meta.update(_decoder_side(archive, names, len(data), att))
    return meta


def _decoder_side(archive: zipfile.ZipFile, names: set, uploaded: int,
                  att: aio.UploadedAttention) -> dict:
    """An encoder–decoder capture's decoder side (:func:`attnviz.io.capture.save_seq2seq`):
    its target tokens, decoder self-attention (causal) and cross-attention (target × the
    encoder's tokens), each checked against the others."""
    for member in ("target_tokens", "decoder_attention", "cross_attention"):
        if member + ".npy" not in names:
            raise ValueError(text.TAMPERED.format(
                what=text.TAMPERED_WHY["missing"].format(name=member)))
    try:
        labels = aio.read_small_array(archive, "target_tokens", "U", limits.MAX_UPLOAD_T,
                                      text.TARGET_TOKENS)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError(text.TARGET_NOT_LABELS)
        target = _labels(labels.tolist())
        t, t_s = len(target), att.t
        decoder = aio.read_side_weights(archive, "decoder_attention", (None, None, t, t),
                                        uploaded)
        cross = aio.read_side_weights(archive, "cross_attention",
                                      (decoder.shape[0], decoder.shape[1], t, t_s), uploaded)
    except ValueError as exc:
        why = text.TAMPERED_WHY["unreadable"].format(name=text.DECODER_SIDE,
                                                      reason=str(exc).rstrip("."))
        raise ValueError(text.TAMPERED.format(what=why)) from None
    return dict(decoder=decoder, cross=cross, target_tokens=target)


def from_capture(cap, source: str) -> ModelViewData:
    """The first sequence of a :class:`attnviz.io.capture.Capture`, within the page's limits."""
    weights = cap.attentions[0]
    if weights.size > MAX_VALUES:
        raise ValueError(text.TOO_MANY_VALUES.format(values=weights.size, limit=MAX_VALUES))
    weights, warnings = aio.as_attention(weights)
    segments = None if cap.token_type_ids is None else cap.token_type_ids[0]
    if segments is not None and not (segments == 1).any():
        segments = None
    return ModelViewData(weights=weights, tokens=_labels(cap.tokens[0]), segments=segments,
                         causal=bool(cap.is_causal), source=source, warnings=tuple(warnings))


def _texts(text_a: str, text_b: str):
    """The capture's ``text``: one string or a pair, refused when empty or too long."""
    text_a, text_b = (text_a or "").strip(), (text_b or "").strip()
    if not text_a:
        raise ValueError(text.EMPTY_TEXT)
    for typed in (text_a, text_b):
        if len(typed) > MAX_TEXT_CHARS:
            raise ValueError(text.TEXT_LIMIT.format(t=MAX_TEXT_TOKENS, chars=MAX_TEXT_CHARS)
                             .rstrip("."))
    return (text_a, text_b) if text_b else text_a


def _load_model(folder: str, root: str | None):
    """:func:`attnviz.io.capture.load_model` of ``folder``, nothing read outside ``root`` (the
    models folder, or a cached model's own folder; None: no bound)."""
    from attnviz.io.capture import load_model

    return load_model(folder, root=root)


def _loaded_model(folder: str, root: str | None):
    """:func:`attnviz.io.capture.loaded_model` of ``folder`` inside ``root``: the model's bytes
    stay counted in the process-wide budget of loads until the block ends (the forward pass
    included)."""
    from attnviz.io.capture import loaded_model

    return loaded_model(folder, root=root)


def from_folder(path: str, text_a: str, text_b: str = "", source: str | None = None,
                root: str | None = None) -> ModelViewData:
    """Load a save_pretrained folder, capture the text once, release the model. The page
    reaches it through :func:`from_models_dir` only (a folder of the models folder).

    Raises
    ------
    ValueError
        Everything :func:`attnviz.io.capture.load_model` and :func:`~attnviz.io.capture.capture`
        refuse (not a model, no tokenizer, unknown architecture, too large, text too long, a
        file outside ``root``), a sentence pair on a causal model, or more weights than
        :data:`MAX_VALUES`.
    """
    from attnviz.io.capture import capture, capture_seq2seq, is_causal, is_encoder_decoder

    path = (path or "").strip()
    if not path:
        raise ValueError(text.NO_FOLDER)
    texts = _texts(text_a, text_b)
    try:
        with _loaded_model(path, root) as (model, tokenizer):
            if is_encoder_decoder(model):  # the first text is the source, the second the target
                texts = (text_a.strip(), (text_b or "").strip())
                cap = capture_seq2seq(model, tokenizer, *texts, max_tokens=MAX_TEXT_TOKENS)
            else:
                if isinstance(texts, tuple) and is_causal(model):
                    raise ValueError(text.PAIR_ON_CAUSAL.format(
                        model_type=model.config.model_type))
                cap = capture(model, tokenizer, text=texts, max_tokens=MAX_TEXT_TOKENS)
    finally:
        model = tokenizer = None  # the session keeps the weights only
        gc.collect()
    name = source or text.DIRECTORY_NAME.format(
        name=_shown_name(os.path.basename(path.rstrip("/\\"))))
    data = from_seq2seq(cap, name) if hasattr(cap, "cross") else from_capture(cap, name)
    return replace(data, folder=path, texts=texts, root=root)


def from_seq2seq(cap, source: str) -> ModelViewData:
    """A :class:`attnviz.io.capture.Seq2SeqCapture` (encoder, decoder and cross-attention),
    within the page's limits: ``weights`` and ``tokens`` are the encoder's."""
    values = cap.encoder.size + cap.decoder.size + cap.cross.size
    if values > MAX_VALUES:
        raise ValueError(text.TOO_MANY_VALUES.format(values=values, limit=MAX_VALUES))
    encoder, warnings = aio.as_attention(cap.encoder)
    decoder, more = aio.as_attention(cap.decoder)
    return ModelViewData(weights=encoder, tokens=_labels(cap.source_tokens), segments=None,
                         causal=False, source=source, warnings=tuple(warnings + more),
                         decoder=decoder, cross=np.array(cap.cross, dtype=np.float64),
                         target_tokens=_labels(cap.target_tokens))


def _shown_name(name: str, limit: int = 60) -> str:
    """A model's name made safe for a Markdown sentence: letters, digits, ``_ . - /`` and
    spaces kept, anything else ``?`` (as :func:`attnviz.io.scenario_io.quote`, with the
    Hub's ``/``)."""
    return re.sub(r"[^A-Za-z0-9 _./-]", "?", name[:limit]) + ("..." if len(name) > limit
                                                              else "")


def from_models_dir(key: str, text_a: str, text_b: str = "") -> ModelViewData:
    """The model of the models folder (or of the Hugging Face cache, when allowed) under this
    listing key (:func:`attnviz.io.models_dir.resolve`: listed again now), captured as
    :func:`from_folder` does, nothing read outside its root. Messages name the model, not its
    path.
    """
    entry = models_dir.resolve(key)
    name = _shown_name(entry.name)
    source = (text.CACHED_SOURCE_NAME if entry.cached else text.DIRECTORY_NAME).format(name=name)
    try:
        return from_folder(entry.path, text_a, text_b, source=source, root=entry.root)
    except ValueError as exc:
        raise ValueError(str(exc).replace(entry.path, name)) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def from_hub(name: str, text_a: str, text_b: str = "") -> ModelViewData:
    """Download a model from the Hub, then capture it as a folder (:func:`hub_allowed` says
    when the page offers this).

    The Hub is asked for the model's current revision first, and that revision is what is
    downloaded: when the Hub cannot be reached the load is refused, never answered from the
    local cache (a cached model is offered in the models list instead). Only config.json is
    fetched before the model's size is checked from it; only safetensors weights are fetched
    (no pickled .bin).
    """
    name = (name or "").strip()
    if not HUB_NAME.match(name) or ".." in name:
        raise ValueError(text.HUB_NAME.format(name=quote(name, 60)))
    _texts(text_a, text_b)
    if not hub_allowed():
        raise ValueError(text.HUB_NOT_ALLOWED.format(env=ALLOW_HUB_ENV,
                                                     offline=HUB_OFFLINE_ENV))
    from huggingface_hub import HfApi, hf_hub_download, snapshot_download
    from transformers import AutoConfig

    from attnviz.io.capture import MAX_MODEL_BYTES, model_bytes

    try:
        revision = HfApi().model_info(name).sha  # the Hub itself: fails when unreachable
        if not revision:
            raise ValueError("the Hub named no revision")
        config = hf_hub_download(name, "config.json", revision=revision)
        n_bytes = model_bytes(AutoConfig.from_pretrained(os.path.dirname(config),
                                                         local_files_only=True,
                                                         trust_remote_code=False))
    except Exception as exc:  # the Hub's errors: not found, gated, no network, ...
        raise ValueError(text.HUB_FAILED.format(name=name, reason=_first_line(exc))) from None
    if n_bytes > MAX_MODEL_BYTES:
        raise ValueError(text.HUB_TOO_LARGE.format(name=name, gib=n_bytes / 1024**3,
                                                   limit=MAX_MODEL_BYTES / 1024**3))
    try:
        folder = snapshot_download(name, revision=revision,
                                   allow_patterns=["*.json", "*.safetensors", "*.model",
                                                   "*.txt", "*.tiktoken"])
    except Exception as exc:
        raise ValueError(text.HUB_FAILED.format(name=name, reason=_first_line(exc))) from None
    return from_folder(folder, text_a, text_b, source=text.HUB_SOURCE_NAME.format(name=name),
                       root=models_dir.cache_root(folder))


def unknown_architecture(path: str) -> bool:
    """True when the folder's config.json names a model_type transformers does not know (read
    as plain JSON, at most MAX_CONFIG_BYTES, only when it is a regular file; False when it
    cannot be read)."""
    from transformers import CONFIG_MAPPING

    from attnviz.io.capture import MAX_CONFIG_BYTES

    if not str(path).strip():
        return False
    config = os.path.join(str(path).strip(), "config.json")
    try:
        info = os.stat(config)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            return False
        with open(config, encoding="utf-8") as fp:
            model_type = json.load(fp).get("model_type")
    except (OSError, ValueError, AttributeError, RecursionError):
        return False
    return isinstance(model_type, str) and model_type not in CONFIG_MAPPING


def _listed_path(key: str) -> str:
    """The folder of a listing key, or "" when it is not listed."""
    try:
        return models_dir.resolve(key).path
    except ValueError:
        return ""


def known_architectures() -> str:
    """The model types this transformers can build (for the unknown-architecture refusal)."""
    from transformers import CONFIG_MAPPING

    return text.KNOWN_ARCHITECTURES.format(names=", ".join(sorted(CONFIG_MAPPING.keys())))


def waiting_words(words: str) -> str:
    """What a spinner says while a model loads: ``words``, after a note that PyTorch is being
    started while this server process has not imported it yet (the first load waits for it,
    up to half a minute, with no other sign of why)."""
    if "torch" in sys.modules:
        return words
    return text.STARTING_TORCH.format(then=words[:1].lower() + words[1:])


def load(loader, *args) -> None:
    """Run a loader; store its data only when it succeeded, else say why (state unchanged)."""
    try:
        with st.spinner(waiting_words(text.LOADING)):
            data = loader(*args)
    except (ValueError, ImportError, OSError) as exc:
        st.error(plain(text.CANNOT_LOAD.format(reason=str(exc).rstrip("."))))
        if loader is from_models_dir and unknown_architecture(_listed_path(args[0])):
            st.caption(known_architectures())
        return
    st.session_state[DATA_KEY] = data


def uploaded(file) -> None:
    """A captured file: read once per file; stored when it passes every check."""
    def read() -> str | None:
        """Read the file, store its data when it passes; the error's message, else None."""
        try:
            st.session_state[DATA_KEY] = from_upload(file.getvalue(), file.name)
        except ValueError as exc:
            return str(exc)
        return None

    error = state.session_memo(_UPLOAD_CACHE, file.file_id, read)
    if error:
        st.error(plain(text.CANNOT_LOAD.format(reason=error.rstrip("."))))


def current(source: str) -> ModelViewData:
    """What to show: the example, or the last data loaded (the example before any)."""
    if source == "example":
        return example()
    return st.session_state.get(DATA_KEY) or example()


# ---------------------------------------------------------------------------------------------
# The views
# ---------------------------------------------------------------------------------------------

def _choice(key: str, n: int) -> int:
    """A select box's stored index kept inside 0..n-1 (another model may have fewer)."""
    if st.session_state.get(key) not in range(n):
        st.session_state[key] = 0
    return st.session_state[key]


def _grid_clicked(chart: str, picker: int, n_heads: int,
                  keys: tuple[str, str] = ("model_view_layer", "model_view_head")) -> None:
    point = point_from_selection(st.session_state.get(chart), [picker])
    if point is not None:
        st.session_state[keys[0]], st.session_state[keys[1]] = divmod(point[1], n_heads)


def _token_clicked(chart: str, markers: list[int], choice) -> None:
    point = point_from_selection(st.session_state.get(chart), markers)
    if point is not None and point[0] == markers[0]:
        st.session_state["model_view_focus"] = None if choice == point[1] else point[1]


def show(data: ModelViewData) -> str | None:
    """The grid, the opened head, the fused heads and the rollout; for an encoder–decoder
    model, of the kind of attention picked (the cross-attention: :func:`cross_section`).
    Returns that kind (None for a one-stack model)."""
    kind = None
    if data.seq2seq:
        kind = st.radio(text.KIND_LABEL, list(text.KINDS), format_func=text.KINDS.get,
                        horizontal=True, key="model_view_kind")
        if kind == "cross":
            for warning in data.warnings:
                st.warning(plain(text.WARNING.format(warning=warning.rstrip("."))))
            cross_section(data, "model_view", grid=True)
            return kind
        data = data.of_kind(kind)
    w, labels = data.weights, position_labels(data.tokens)
    n_layers, n_heads, t, _ = w.shape
    for warning in data.warnings:
        st.warning(plain(text.WARNING.format(warning=warning.rstrip("."))))
    source = (data.source if kind is None
              else text.KIND_SOURCE.format(source=data.source, kind=text.KIND_NAMES[kind]))
    st.caption(text.SHOWING.format(source=source, layers=n_layers, heads=n_heads, t=t,
                                   kind=text.CAUSAL if data.causal else text.BIDIRECTIONAL))
    layer, head = _choice("model_view_layer", n_layers), _choice("model_view_head", n_heads)
    st.subheader(text.GRID_TITLE if kind is None
                 else text.KIND_GRID_TITLE.format(kind=text.KIND_NAMES[kind]))
    st.caption(text.GRID_CAPTION if data.boundary is None
               else f"{text.GRID_CAPTION} {text.PAIR_CAPTION}")
    fig, picker = model_grid(w, labels, causal=data.causal, boundary=data.boundary,
                             selected=(layer, head))
    show_figure(fig, key="model_view_fig_grid", grow=False,
                on_select=lambda: _grid_clicked("model_view_fig_grid", picker, n_heads))

    st.subheader(text.OPENED_TITLE.format(layer=layer, h=head) if kind is None
                 else text.KIND_OPENED_TITLE.format(kind=text.KIND_NAMES[kind], layer=layer,
                                                    h=head))
    c1, c2, c3 = st.columns(3)
    c1.selectbox(text.OPEN_LAYER_LABEL, range(n_layers), key="model_view_layer")
    c2.selectbox(text.OPEN_HEAD_LABEL, range(n_heads), key="model_view_head")
    if st.session_state.get("model_view_focus") not in (None, *range(t)):
        st.session_state["model_view_focus"] = None
    focus = c3.selectbox(text.FOCUS_LABEL, [None, *range(t)], key="model_view_focus",
                         format_func=lambda i: text.NO_FOCUS if i is None else labels[i])
    # side by side while the heatmap's labels fit (the lines need less width), else stacked
    left, right = (st.columns(HEAD_COLUMNS, gap="large") if t <= SIDE_BY_SIDE_T
                   else (st.container(),) * 2)
    with left:
        st.caption(text.FOCUS_CAPTION)
        if focus is None and t > LINE_VIEW_MAX:
            st.info(text.LINES_TOO_LONG)
        else:
            lines = head_view(w[layer], labels, labels, heads=[head],
                              focus=None if focus is None else ("query", focus))
            markers = [len(lines.data) - 2, len(lines.data) - 1]
            show_figure(lines, key="model_view_fig_lines", on_select=lambda: _token_clicked(
                "model_view_fig_lines", markers, focus))
    with right:
        st.markdown(f"**{text.HEATMAP_TITLE}**")
        show_figure(weights_heatmap(w[layer, head], labels, causal=data.causal,
                                    boundary=data.boundary, focus=focus),
                    key="model_view_fig_head")
    open_on_every_page(data, layer, head, kind)

    st.subheader(text.AGGREGATE_TITLE)
    how = st.radio(text.AGGREGATE_LABEL, list(text.AGGREGATE_CHOICES), horizontal=True,
                   format_func=text.AGGREGATE_CHOICES.get, key="model_view_fuse")
    show_figure(layer_row(aggregate_heads(w, how), labels, causal=data.causal,
                          boundary=data.boundary), key="model_view_fig_fused", grow=False)

    st.subheader(text.ROLLOUT_TITLE)
    roll = attention_rollout(w)
    st.caption(text.ROLLOUT_CAPTION.format(r=roll.residual))
    show_figure(layer_row(roll.cumulative, labels, causal=data.causal, boundary=data.boundary,
                          tick=text.LAYER_TICK), key="model_view_fig_rollout_layers", grow=False)
    st.markdown(f"**{text.ROLLOUT_FINAL}**")
    show_figure(weights_heatmap(roll.rollout, labels, causal=data.causal, boundary=data.boundary,
                                x_title=text.AXIS_KEY, y_title=text.AXIS_QUERY),
                key="model_view_fig_rollout")
    return kind


# ---------------------------------------------------------------------------------------------
# Opening a real head on every page
# ---------------------------------------------------------------------------------------------

def real_head_scenario(data: ModelViewData, layer: int, head: int, kind: str | None = None):
    """The scenario of head ``head`` of layer ``layer`` of the model the data were captured
    from: the model is loaded again from its folder, run once on the same text
    (:func:`attnviz.io.hf_layers.layer_inputs`; for an encoder–decoder model, the same source
    and target, :func:`~attnviz.io.hf_layers.seq2seq_layer_inputs` of ``kind``), and released.

    Raises
    ------
    ValueError
        Data from a file (no folder); what loading, the adapter,
        :func:`~attnviz.scenarios.from_model.layer_scenario` or
        :func:`~attnviz.scenarios.from_model.cross_scenario` refuse; tokens that differ from
        the captured ones (the folder changed since).
    """
    from attnviz.io.hf_layers import layer_inputs, seq2seq_layer_inputs

    if data.folder is None:
        raise ValueError(text.NO_INPUTS.rstrip("."))
    try:
        with _loaded_model(data.folder, data.root) as (model, tokenizer):
            if data.seq2seq:
                li = seq2seq_layer_inputs(model, tokenizer, *data.texts, layer, kind or "cross")
            else:
                li = layer_inputs(model, tokenizer, data.texts, layer)
    finally:
        model = tokenizer = None  # the scenario keeps the head's matrices only
        gc.collect()
    then = data.target_tokens if data.seq2seq and kind != "encoder" else data.tokens
    if _labels(li.tokens) != then:
        raise ValueError(text.REAL_CHANGED.format(now=len(li.tokens), then=len(then)))
    if data.seq2seq and (kind or "cross") == "cross":
        return described_cross(li, head)
    return described_head(li, head, kind if data.seq2seq else None)


def described_cross(ci, head: int):
    """Head ``head`` of a read cross-attention layer
    (:func:`attnviz.io.hf_layers.seq2seq_layer_inputs`) as the scenario every page opens,
    titled and described: its layer, where queries and keys come from, its scale, and the bias
    trick when it was used."""
    scenario = cross_scenario(ci, head, title=text.REAL_CROSS_TITLE.format(
        model_type=ci.model_type, layer=ci.layer, h=head))
    description = text.REAL_CROSS_DESCRIPTION.format(
        layer=ci.layer, scale=scale_of(scenario) or scenario.w_q.shape[1] ** -0.5)
    if scenario.d_model != ci.x.shape[1]:  # the bias trick added a column of ones
        description = f"{description} {text.REAL_BIAS_NOTE.format(d_model=ci.x.shape[1])}"
    return replace(scenario, description=description)


def cross_section(data: ModelViewData, prefix: str, *, grid: bool = False) -> None:
    """An encoder–decoder model's cross-attention: with ``grid``, every layer and head as a
    thumbnail (click one to pick it); a layer and a head picked, that head's weights (target
    queries × source keys) with their numbers, and the button that opens it on every page.
    ``prefix``: the page's key prefix."""
    n_layers, n_heads, t, t_s = data.cross.shape
    st.caption(text.CROSS_SHOWING.format(source=data.source, layers=n_layers, heads=n_heads,
                                         t=t, t_s=t_s))
    keys = (f"{prefix}_cross_layer", f"{prefix}_cross_head")
    layer, head = _choice(keys[0], n_layers), _choice(keys[1], n_heads)
    if grid:
        st.subheader(text.KIND_GRID_TITLE.format(kind=text.KIND_NAMES["cross"]))
        st.caption(text.GRID_CAPTION)
        chart = f"{prefix}_fig_cross_grid"
        fig, picker = model_grid(data.cross, position_labels(data.target_tokens), causal=False,
                                 selected=(layer, head),
                                 key_labels=position_labels(data.tokens))
        show_figure(fig, key=chart, grow=False,
                    on_select=lambda: _grid_clicked(chart, picker, n_heads, keys))
    c1, c2 = st.columns(2)
    c1.selectbox(text.OPEN_LAYER_LABEL, range(n_layers), key=f"{prefix}_cross_layer")
    c2.selectbox(text.OPEN_HEAD_LABEL, range(n_heads), key=f"{prefix}_cross_head")
    st.markdown(f"**{text.CROSS_HEAD_TITLE.format(layer=layer, h=head)}**")
    st.caption(text.CROSS_CAPTION)
    fig = heatmap(data.cross[layer, head], position_labels(data.tokens),
                  position_labels(data.target_tokens), kind="weights",
                  x_title=text.AXIS_SOURCE_KEY, y_title=text.AXIS_TARGET_QUERY)
    show_figure(fig, key=f"{prefix}_fig_cross_head")
    open_on_every_page(data, layer, head, "cross", prefix=prefix)


def described_head(li, head: int, kind: str | None = None):
    """Head ``head`` of a read layer (:func:`attnviz.io.hf_layers.layer_inputs`) as the scenario
    every page opens, titled and described as the pages name a real head: its layer (and, for
    an encoder–decoder model, the ``kind`` of attention), the key/value head it reads, its
    variant and scale, and the bias trick when it was used."""
    title = (text.REAL_HEAD_TITLE.format(model_type=li.model_type, layer=li.layer, h=head)
             if kind is None else text.REAL_KIND_TITLE.format(
                 model_type=li.model_type, kind=text.KIND_NAMES[kind], layer=li.layer, h=head))
    scenario = layer_scenario(li, head, title=title)
    description = text.REAL_HEAD_DESCRIPTION.format(
        layer=li.layer, kv=kv_head(li.n_heads, li.n_kv_heads, head), variant=scenario.spec.name,
        scale=scale_of(scenario) or scenario.w_q.shape[1] ** -0.5)
    if scenario.d_model != li.x.shape[1]:  # the bias trick added a column of ones
        description = f"{description} {text.REAL_BIAS_NOTE.format(d_model=li.x.shape[1])}"
    if li.norm_across:  # OLMo 2: the other heads' share of the norm, held fixed
        note = text.REAL_NORM_ACROSS_NOTE.format(width=li.n_heads * li.head_dim, d_k=li.head_dim)
        description = f"{description} {note}"
    if li.relative is not None:  # DeBERTa: the projected positions, held as the model's
        note = text.REAL_RELATIVE_NOTE.format(c=f"{float(li.relative['scale']):.4g}")
        description = f"{description} {note}"
    return replace(scenario, description=description)


def open_on_every_page(data: ModelViewData, layer: int, head: int, kind: str | None = None,
                       *, prefix: str = "model_view") -> None:
    """The button that makes the chosen head the current scenario (from a model folder), or
    why a captured file's heads cannot be opened; then links to the pages that show it.
    ``kind``: an encoder–decoder model's kind of attention; ``prefix``: the page's key
    prefix."""
    st.markdown(f"**{text.REAL_OPEN_TITLE}**")
    if data.folder is None:
        st.info(text.NO_INPUTS)
        return
    st.caption(text.REAL_CROSS_OPEN_CAPTION if kind == "cross" else text.REAL_OPEN_CAPTION)
    if st.button(text.REAL_OPEN_BUTTON.format(layer=layer, h=head), key=f"{prefix}_open",
                 type="primary"):
        try:
            with st.spinner(waiting_words(text.OPENING)):
                scenario = real_head_scenario(data, layer, head, kind)
        except (ValueError, ImportError, OSError) as exc:
            st.error(plain(text.REAL_CANNOT_OPEN.format(reason=str(exc).rstrip("."))))
            return
        state.open_whole(scenario)
        st.session_state[OPENED_KEY] = (data.source, layer, head, kind)
        st.rerun()  # the sidebar and the page from the opened head (one source of truth)
    opened = st.session_state.get(OPENED_KEY)
    if opened and opened[0] == data.source and opened[3:] == (kind,):  # this model, this kind
        st.success(text.REAL_OPENED.format(layer=opened[1], h=opened[2]) if kind is None
                   else text.KIND_REAL_OPENED.format(kind=text.KIND_NAMES[kind],
                                                     layer=opened[1], h=opened[2]))
        pages = text.REAL_CROSS_OPEN_PAGES if kind == "cross" else text.REAL_OPEN_PAGES
        for column, (page, title) in zip(st.columns(len(pages)), pages.items(), strict=True):
            column.page_link(page, label=title)
