"""The Generate page's logic (pages/generate.py): a causal model of the models folder generates
within the click budget, with progress and Stop; then a slider steps through the generation —
the text so far with the new token marked, every layer and head's row for it, the cache's size,
the likeliest next tokens — and any step's head opens on every page.

State: ONE record in the session, :data:`RECORD` (the model's listing key and name and the
:class:`~attnviz.io.generate.Generation`, never the model), replaced by a Generate that made a
token; the model is loaded for a click and released after it (Continue loads it again and runs
the tokens so far as one prefill). Loading follows the Model view: the models folder's list,
nothing typed, nothing outside its root, off on a server started for a LAN without
``--allow-models`` (:func:`attnviz.ui.model_view.models_allowed`).
"""

from __future__ import annotations

import functools
import gc
import re
from contextlib import ExitStack

import numpy as np
import streamlit as st

from attnviz.figures.clickable import point_from_selection
from attnviz.figures.generate import candidates, head_row, row_grid
from attnviz.io import generate as gen_io
from attnviz.io import models_dir
from attnviz.scenarios import limits
from attnviz.scenarios.budget import BUDGET, click_budget
from attnviz.scenarios.scenario import position_labels
from attnviz.scenarios.tokens import without_bidi
from attnviz.teach.text import generate as text
from attnviz.teach.text import model_view as mv_text
from attnviz.ui import layout, state
from attnviz.ui import model_view as mv
from attnviz.ui.panels import show_figure
from attnviz.ui.safe import md_escape
from attnviz.ui.share import plain

RECORD = "generate_record"  # dict(id, key, name, gen, state): the one thing the page keeps
OPENED = "generate_opened"  # (record id, step, layer, head) of the head last opened
RUNNING = "running"  # RECORD["state"] while a click generates: still there on the next run, the
# click was interrupted (Stop, another control, leaving the page)
MAX_NEW_TOKENS = gen_io.MAX_NEW_TOKENS
MAX_SEQUENCE_TOKENS = gen_io.MAX_SEQUENCE_TOKENS
MAX_PROMPT_CHARS = gen_io.MAX_PROMPT_CHARS
MIN_TEMPERATURE, MAX_TEMPERATURE = gen_io.MIN_TEMPERATURE, gen_io.MAX_TEMPERATURE
TEMPERATURE_STEP = 0.05
SEED_MAX = limits.SEED_MAX
DEFAULT_N = 10


@functools.cache
def one_torch_thread() -> None:
    """One torch thread for this server process (once): a decoding step is a few small matrix
    products, and torch's thread pool spinning beside the other sessions' threads made a tiny
    model's step several times slower on a busy 2-core machine (see attnviz/ui/blas.py)."""
    import torch

    torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------
# The model and the controls
# ---------------------------------------------------------------------------------------------

def pick_model() -> str | None:
    """The models folder's list (the Model view's), or why there is none: loading off on this
    server, torch or transformers missing, an empty folder. Returns the chosen listing key."""
    if not mv.models_allowed():
        st.info(mv_text.MODELS_OFF.format(env=mv.NO_MODELS_ENV, flag=mv.ALLOW_MODELS_FLAG))
        return None
    missing = mv.missing_extra()
    if missing:
        st.info(mv_text.NO_TORCH.format(module=missing))
        return None
    listing = mv.model_listing()
    if not listing.entries:
        st.info(mv_text.MODELS_EMPTY.format(path=listing.folder, env=mv.MODELS_DIR_ENV))
        return None
    labels = {e.key: mv.model_label(e) for e in listing.entries}
    key = st.selectbox(mv_text.MODELS_LABEL, list(labels), key="generate_model",
                       format_func=lambda k: labels.get(k, k))
    st.caption(text.MODEL_CAPTION.format(path=listing.folder))
    if listing.truncated:
        st.warning(mv_text.MODELS_TRUNCATED.format(n=mv.MAX_LISTED))
    return key


def settings(n, temperature, seed) -> gen_io.GenerationSettings | None:
    """The settings from the widgets, or None with the refusal shown (a box a client sent
    something else than a number in gives None)."""
    try:
        return gen_io.GenerationSettings(
            n_tokens=int(n) if isinstance(n, (int, float)) and float(n).is_integer() else n,
            temperature=temperature, seed=int(seed) if seed is not None else seed)
    except (ValueError, TypeError) as exc:
        st.error(plain(text.CANNOT_GENERATE.format(reason=str(exc).rstrip("."))))
        return None


# ---------------------------------------------------------------------------------------------
# Generating within the click budget
# ---------------------------------------------------------------------------------------------

def panel(key: str, prompt: str, chosen: gen_io.GenerationSettings | None) -> None:
    """Generate (and Continue, when a generation was paused or stopped), the generation itself
    with its progress and Stop, and what became of the last click."""
    record = st.session_state.get(RECORD)
    interrupted = record is not None and record["state"] == RUNNING
    if interrupted:
        record["state"] = ""
    with st.container(horizontal=True, key="generate_buttons"):
        fresh = st.button(text.GENERATE_BUTTON, type="primary", key="generate_run",
                          disabled=chosen is None)
        go_on = (not fresh and record is not None and record["gen"] is not None
                 and not record["gen"].done
                 and st.button(text.CONTINUE_BUTTON, key="generate_continue"))
    if fresh:
        _run(dict(id=_next_id(), key=key, name=_name(key), gen=None, state=""), chosen,
             prompt=prompt)
    elif go_on:
        _run(record, record["gen"].settings, resume=record["gen"])
    record = st.session_state.get(RECORD)
    if record is None or record["gen"] is None or fresh or go_on:
        return
    gen = record["gen"]
    done, n = gen.generated, gen.settings.n_tokens
    if record["state"] == BUDGET:
        st.warning(text.BUDGET_OUT.format(budget=f"{limits.TRAIN_SECONDS:g}", done=done, n=n))
    elif interrupted and not gen.done:
        st.warning(text.STOPPED.format(done=done, n=n))


def _next_id() -> int:
    st.session_state["_generate_runs"] = st.session_state.get("_generate_runs", 0) + 1
    return st.session_state["_generate_runs"]


def _name(key: str, limit: int = 60) -> str:
    """The model's name as messages give it (never its path), safe in a Markdown sentence:
    letters, digits, ``_ . - /`` and spaces kept, anything else ``?`` (as the Model view)."""
    try:
        name = models_dir.resolve(key).name
    except ValueError:
        name = str(key)
    return re.sub(r"[^A-Za-z0-9 _./-]", "?", name[:limit]) + ("..." if len(name) > limit
                                                              else "")


def _run(record: dict, chosen: gen_io.GenerationSettings, *, prompt: str | None = None,
         resume: gen_io.Generation | None = None) -> None:
    """One click's generation: load the model, generate until done, the budget runs out or a
    rerun interrupts (each new token is stored at once), release the model. The budget starts
    once the model is loaded: it bounds the generation, whose length the user chose."""
    n = chosen.n_tokens
    bar = st.progress(0.0 if resume is None else resume.generated / n)
    stop = st.empty()
    stop.button(text.STOP_BUTTON, key="generate_stop")  # its click reruns: that stops the run

    def progress(gen: gen_io.Generation) -> None:
        record["gen"], record["state"] = gen, RUNNING
        if st.session_state.get(RECORD) is not record:  # the first token: this run is the one
            st.session_state[RECORD] = record
            st.session_state.pop(OPENED, None)
        st.session_state["generate_step"] = gen.generated
        bar.progress(min(gen.generated / n, 1.0),
                     text=text.PROGRESS.format(done=gen.generated, n=n))

    entry = None
    try:
        entry = models_dir.resolve(record["key"])
        one_torch_thread()
        with ExitStack() as stack:
            with st.spinner(text.LOADING):
                model, tokenizer = stack.enter_context(
                    gen_io.loaded_causal_lm(entry.path, root=entry.root))
            budget = click_budget()
            gen = gen_io.generate(
                model, tokenizer, prompt, n, temperature=chosen.temperature, seed=chosen.seed,
                top_k=chosen.top_k, resume=resume, should_stop=lambda: not budget.check(),
                progress=progress)
            del model, tokenizer
    except (ValueError, ImportError, OSError) as exc:
        reason = str(exc) if entry is None else str(exc).replace(entry.path, record["name"])
        st.error(plain(text.CANNOT_GENERATE.format(reason=reason.rstrip("."))))
        if st.session_state.get(RECORD) is record:
            record["state"] = ""
        return
    finally:
        gc.collect()
    bar.empty()
    stop.empty()
    if gen.generated == 0 and resume is None:  # not one token in time: nothing to show
        return
    progress(gen)
    record["state"] = BUDGET if not gen.done and budget.reason == BUDGET else ""
    st.rerun()  # the page from the stored generation (its slider at the last step)


def current() -> dict | None:
    """The session's generation record, or None before any."""
    record = st.session_state.get(RECORD)
    return record if record is not None and record["gen"] is not None else None


# ---------------------------------------------------------------------------------------------
# Stepping through a generation
# ---------------------------------------------------------------------------------------------

def _labels(tokens) -> list[str]:
    """Token labels as every page shows them: bidi controls out, cut, unique by position."""
    return position_labels([without_bidi(str(t))[: limits.MAX_LABEL_CHARS] for t in tokens])


def _choice(key: str, n: int) -> int:
    """A select box's stored index kept inside 0..n-1 (another model may have fewer)."""
    if st.session_state.get(key) not in range(n):
        st.session_state[key] = 0
    return st.session_state[key]


def _strip_clicked(picker: int, n_heads: int) -> None:
    point = point_from_selection(st.session_state.get("generate_fig_grid"), [picker])
    if point is not None:
        st.session_state["generate_layer"], st.session_state["generate_head"] = \
            divmod(point[1], n_heads)


def show(record: dict) -> None:
    """The slider and, for the step it is on: the text, the cache, every head's row, the
    chosen head's row, the candidates and the button that opens that head."""
    gen: gen_io.Generation = record["gen"]
    s = gen.settings
    how = text.GREEDY if s.greedy else text.SAMPLED.format(t=f"{s.temperature:g}", seed=s.seed)
    st.caption(text.SOURCE.format(name=record["name"], prompt=gen.prompt_length,
                                  new=gen.generated, how=how, kib=f"{gen.nbytes / 1024:,.1f}"))
    if gen.finished == gen_io.FINISHED_EOS:
        st.info(text.FINISHED_EOS.format(done=gen.generated, n=s.n_tokens))
    if gen.generated >= 1:
        if st.session_state.get("generate_step") not in range(gen.generated + 1):
            st.session_state["generate_step"] = gen.generated
        k = st.slider(text.STEP_LABEL, 0, gen.generated, key="generate_step",
                      help=text.STEP_HELP)
    else:
        k = 0
    step = gen.steps[k]
    t = step.position + 1
    st.caption(text.STEP_PROMPT.format(t=gen.prompt_length) if k == 0 else
               text.STEP_NEW.format(k=k, n=gen.generated, position=step.position))
    st.markdown(marked_text(gen, k))
    notes = [text.CACHE.format(tokens=step.cache_tokens, layers=gen.n_layers,
                               kib=f"{step.cache_bytes / 1024:,.1f}")]
    if step.cache_tokens < t:
        notes.append(text.CACHE_WINDOW.format(tokens=step.cache_tokens, t=t))
    if k >= 1:
        notes.append(text.CHOSEN.format(token=md_escape(gen.tokens[step.position]),
                                        p=f"{step.prob:.4f}"))
    st.caption(" ".join(notes))

    labels = _labels(gen.tokens[:t])
    layer = _choice("generate_layer", gen.n_layers)
    head = _choice("generate_head", gen.n_heads)
    left, right = st.columns(layout.WIDE_LEFT, gap="large")
    with left:
        st.subheader(text.GRID_TITLE)
        st.caption(text.GRID_CAPTION)
        fig, picker = row_grid(step.rows, labels, selected=(layer, head))
        show_figure(fig, key="generate_fig_grid", grow=False,
                    on_select=lambda: _strip_clicked(picker, gen.n_heads))
    with right:
        st.subheader(text.CANDIDATES_TITLE)
        after = gen.steps[k + 1].token_id if k + 1 < len(gen.steps) else None
        hit = np.flatnonzero(step.top_ids == after) if after is not None else []
        show_figure(candidates([without_bidi(c)[: limits.MAX_LABEL_CHARS]
                                for c in gen.top_tokens[k]], step.top_probs,
                               chosen=int(hit[0]) if len(hit) else None,
                               sampled=step.top_sampled,
                               temperature=None if s.greedy else s.temperature),
                    key="generate_fig_top")
        st.caption(text.CANDIDATES_CAPTION)
    c1, c2 = st.columns(2)
    c1.selectbox(text.LAYER_LABEL, range(gen.n_layers), key="generate_layer")
    c2.selectbox(text.HEAD_LABEL, range(gen.n_heads), key="generate_head")
    st.markdown(f"**{text.ROW_TITLE.format(layer=layer, h=head)}**")
    show_figure(head_row(step.rows[layer, head], labels, labels[-1]), key="generate_fig_row")
    open_head(record, k, layer, head)


def marked_text(gen: gen_io.Generation, k: int) -> str:
    """The text up to step ``k`` as Markdown shown literally, the step's token marked."""
    before, new = gen.text(k)
    shown = new.strip() or gen.tokens[gen.steps[k].position]
    gap = " " if new[:1].isspace() else ""
    return f"{md_escape(before)}{gap}:orange-background[**{md_escape(shown)}**]"


# ---------------------------------------------------------------------------------------------
# Opening a step's head on every page
# ---------------------------------------------------------------------------------------------

def head_scenario(record: dict, k: int, layer: int, head: int):
    """The scenario of head ``head`` of layer ``layer`` on the tokens up to step ``k`` (the new
    token the last query): the model is loaded again (:func:`attnviz.io.capture.loaded_model`,
    inside its root), run once on those tokens (:func:`attnviz.io.hf_layers.layer_inputs`) and
    released; the scenario is :func:`~attnviz.scenarios.from_model.layer_scenario`'s, as the
    Model view opens a head.

    Raises
    ------
    ValueError
        What loading, the layer adapter or layer_scenario refuse; tokens that differ from the
        generated ones (the folder changed since).
    """
    from attnviz.io.capture import loaded_model
    from attnviz.io.hf_layers import layer_inputs

    gen: gen_io.Generation = record["gen"]
    t = gen.steps[k].position + 1
    entry = models_dir.resolve(record["key"])
    try:
        with loaded_model(entry.path, root=entry.root) as (model, tokenizer):
            li = layer_inputs(model, tokenizer, layer=layer, input_ids=gen.ids[:t])
            del model, tokenizer  # the scenario keeps the head's matrices only
    except ValueError as exc:
        raise ValueError(str(exc).replace(entry.path, record["name"])) from None
    finally:
        gc.collect()
    if tuple(li.tokens) != gen.tokens[:t]:
        raise ValueError(mv_text.REAL_CHANGED.format(now=len(li.tokens), then=t))
    return mv.described_head(li, head)


def open_head(record: dict, k: int, layer: int, head: int) -> None:
    """The button that makes the chosen head, at this step, the current scenario; then links
    to the pages that show it."""
    st.markdown(f"**{mv_text.REAL_OPEN_TITLE}**")
    st.caption(text.OPEN_CAPTION)
    if st.button(mv_text.REAL_OPEN_BUTTON.format(layer=layer, h=head), key="generate_open",
                 type="primary"):
        try:
            with st.spinner(mv_text.OPENING):
                scenario = head_scenario(record, k, layer, head)
        except (ValueError, ImportError, OSError) as exc:
            st.error(plain(mv_text.REAL_CANNOT_OPEN.format(reason=str(exc).rstrip("."))))
            return
        state.open_whole(scenario)
        st.session_state[OPENED] = (record["id"], k, layer, head)
        st.rerun()  # the sidebar and the page from the opened head (one source of truth)
    opened = st.session_state.get(OPENED)
    if opened and opened[0] == record["id"]:
        st.success(mv_text.REAL_OPENED.format(layer=opened[2], h=opened[3]))
        for column, (page, title) in zip(st.columns(len(mv_text.REAL_OPEN_PAGES)),
                                         mv_text.REAL_OPEN_PAGES.items(), strict=True):
            column.page_link(page, label=title)
