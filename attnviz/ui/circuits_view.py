"""The Model view's circuits section: every head of the model shown scored as a
previous-token, induction, duplicate-token and first-token head, ranked in a table and
coloured in a layers × heads grid, every head above the threshold named.

Two sources of scores: the text the page shows (any captured weights, a file included), and —
for weights captured from a model folder — Olsson et al.'s probe, the model run again on
repeated random tokens (:func:`attnviz.io.circuit_probe.probe_model`). The probe's result is
the one thing this section keeps in the session (:data:`PROBE_KEY`: the folder it ran on and
its :class:`~attnviz.io.circuit_probe.CircuitProbe`, a few kB; never the model).
"""

from __future__ import annotations

import gc

import numpy as np
import streamlit as st

from attnviz.figures.circuits import head_name, ranked_table, score_grid
from attnviz.scenarios.circuits import COPYING, KINDS, HeadScores, score_heads, token_ids
from attnviz.teach.text import circuits as text
from attnviz.teach.text import model_view as view_text
from attnviz.ui.panels import show_figure
from attnviz.ui.share import plain

PROBE_KEY = "model_view_circuits_probe"  # (folder, CircuitProbe) of the last probe
KIND_KEY = "model_view_circuits_kind"
KIND_DEFAULT = "_model_view_circuits_kind_default"  # the kind shown until one is picked
REPEATED = ("induction", "duplicate_token")  # the scores that need a repeated token


def text_scores(data) -> HeadScores:
    """The scores of the attention the page shows, on its own text (its token strings)."""
    return score_heads(data.weights, token_ids(data.tokens))


def probed(data):
    """The probe's result for the data's model folder, or None."""
    kept = st.session_state.get(PROBE_KEY)
    if kept is None or data.folder is None or kept[0] != data.folder:
        return None
    return kept[1]


def run_probe(folder: str, root: str | None = None) -> None:
    """Load the model from its folder, probe it, release it; keep the result (or say why
    not: the result kept before stays)."""
    from attnviz.io.circuit_probe import probe_model
    from attnviz.ui import model_view

    try:
        with st.spinner(model_view.waiting_words(text.PROBING)):
            # the page's own loader: the same checks and bounds as its capture
            model, tokenizer = model_view._load_model(folder, root)
            try:
                probe = probe_model(model, tokenizer)
            finally:
                del model, tokenizer  # the session keeps the scores only
                gc.collect()
    except (ValueError, ImportError, OSError) as exc:
        st.error(plain(text.CANNOT_PROBE.format(reason=str(exc).rstrip("."))))
        return
    st.session_state[PROBE_KEY] = (folder, probe)


def scored_stack(kind: str | None) -> str | None:
    """The self-attention an encoder–decoder model's scores are of, for the kind the page
    shows: the encoder's or the decoder's; the decoder's for the cross-attention (a query and
    its keys in one sequence is what every score measures; induction heads copy in a causal
    self-attention). None for a one-stack model."""
    if kind is None:
        return None
    return "encoder" if kind == "encoder" else "decoder"


def show(data, kind: str | None = None) -> None:
    """The section, for the page's :class:`~attnviz.ui.model_view.ModelViewData`; ``kind``:
    the kind of attention an encoder–decoder model's page shows (None for one stack)."""
    st.subheader(text.TITLE)
    st.caption(text.CAPTION)
    stack = scored_stack(kind) if getattr(data, "seq2seq", False) else None
    if stack is not None:
        data = data.of_kind(stack)
        st.caption(text.SEQ2SEQ_STACK.format(stack=view_text.KIND_NAMES[stack]))
    elif data.folder is None:
        st.caption(text.NO_MODEL)
    else:
        st.markdown(f"**{text.PROBE_TITLE}**")
        st.caption(text.PROBE_CAPTION)
        if st.button(text.PROBE_BUTTON, key="model_view_circuits_run", type="primary"):
            run_probe(data.folder, getattr(data, "root", None))
    probe = probed(data)
    if probe is not None:
        scores = probe.scores
        first = text.PROBE_FIRST.format(token=probe.prefix[0]) if probe.prefix else ""
        st.caption(text.PROBE_DONE.format(batch=probe.batch, length=probe.length, first=first,
                                          t=probe.input_ids.shape[1]))
    else:
        scores = text_scores(data)
        on_text = text.ON_TEXT if stack is None else text.ON_TEXT_SEQ2SEQ
        st.caption(on_text.format(t=len(data.tokens)))
        if all(np.isnan(scores.score(k)).all() for k in REPEATED):  # no token repeats
            st.info(text.NO_REPEAT.format(kinds=", ".join(text.KINDS[k] for k in REPEATED)))
    named(scores)
    chosen = st.session_state.get(KIND_KEY)
    if chosen not in scores.kinds or chosen == st.session_state.get(KIND_DEFAULT):
        # not picked by the person: induction, or the first score these heads have (a text
        # where nothing repeats has no induction score: its grid would be empty)
        default = next((k for k in ("induction", *scores.kinds)
                        if not np.isnan(scores.score(k)).all()), "induction")
        st.session_state[KIND_KEY] = st.session_state[KIND_DEFAULT] = default
    kind = st.radio(text.KIND_LABEL, list(scores.kinds), format_func=text.KINDS.get,
                    horizontal=True, key=KIND_KEY)
    if kind == COPYING:
        st.caption(text.COPYING_NOTE)
    show_figure(score_grid(scores, kind), key="model_view_circuits_fig_grid")
    show_figure(ranked_table(scores, kind), key="model_view_circuits_fig_table", grow=False)


def named(scores: HeadScores) -> None:
    """Every named head of each kind, highest score first, and the threshold."""
    threshold = f"{scores.threshold:g}"
    lines = []
    for kind in KINDS:
        heads = scores.named(kind)
        lines.append(text.NAMED.format(kind=text.KINDS[kind], heads=", ".join(
            f"{head_name(*h)} ({scores.score(kind)[h]:.2f})" for h in heads)) if heads
            else text.NONE_NAMED.format(kind=text.KINDS[kind], threshold=threshold))
    st.markdown("  \n".join(lines))
    st.caption(text.THRESHOLD_NOTE.format(threshold=threshold))
