"""Uploaded attention weights and token lists, read once per file and kept for the session.

Streamlit hands the same uploaded file to every rerun; parsing is done once per file
(``file_id``) and the result — or the error message — is kept in session state. Without an
upload the example shipped with attnviz is used.
"""

from __future__ import annotations

from attnviz.io import attention_io as aio
from attnviz.io.examples import EXAMPLE_NPZ
from attnviz.ui import state

_WEIGHTS_CACHE = "_your_attention_weights_cache"
_TOKENS_CACHE = "_your_attention_tokens_cache"


def example() -> aio.UploadedAttention:
    """The example file (2 layers, 4 heads, 6 tokens) with its tokens."""
    return aio.load_attention(EXAMPLE_NPZ.read_bytes(), EXAMPLE_NPZ.name)


def _cached(cache_key: str, uploaded, read):
    """``read(bytes, name)`` once per uploaded file: returns (value, error message)."""
    def make():
        try:
            return read(uploaded.getvalue(), uploaded.name), None
        except ValueError as exc:
            return None, str(exc)

    return state.session_memo(cache_key, uploaded.file_id, make)


def attention_upload(uploaded) -> tuple[aio.UploadedAttention | None, str | None]:
    """(weights, error) for an uploaded .npy/.npz, or the example when nothing is uploaded."""
    if uploaded is None:
        return example(), None
    return _cached(_WEIGHTS_CACHE, uploaded, aio.load_attention)


def tokens_upload(uploaded) -> tuple[tuple[tuple[str, ...], list[str]] | None, str | None]:
    """((tokens, warnings), error) for an uploaded token file; (None, None) without one."""
    if uploaded is None:
        return None, None
    return _cached(_TOKENS_CACHE, uploaded, aio.parse_tokens)


def labels_for(att: aio.UploadedAttention, parsed, error: str | None) -> tuple[
        tuple[str, ...], list[str], str | None]:
    """The token labels to draw with, warnings, and an error about the token file (if any).

    Priority: an uploaded token file that fits, then tokens stored in the .npz, then
    ``t0, t1, ...``.
    """
    warnings: list[str] = []
    if parsed is not None:
        tokens, token_warnings = parsed
        try:
            aio.check_tokens(tokens, att.t)
            return tokens, list(token_warnings), None
        except ValueError as exc:
            error = str(exc)
    if att.tokens is not None:
        return att.tokens, warnings, error
    return aio.default_tokens(att.t), warnings, error
