"""Widgets that edit the shared scenario, reused by every page.

Each function draws its widgets (keys prefixed by the page, tied to the editor generation via
``state.vkey``) and reports bad input in the page with a message instead of an exception. What
the user changes is written to the scenario in session state by the widget's change callback
(:func:`writes`), which Streamlit runs before the script: the page reads one final scenario
from its top, and every part of the run (the caption, the sidebar, the charts, the link) draws
that one. The functions return the scenario they were given.
"""

from __future__ import annotations

import re
from contextlib import nullcontext

import numpy as np
import streamlit as st

from attnviz.core.attention import valid_head_counts
from attnviz.core.initializers import INIT_KINDS, init_weights
from attnviz.scenarios import limits
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.presets import PRESETS, weights_from_preset
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import (
    Scenario,
    ScenarioResult,
    resize,
    run_scenario,
    with_parts,
    with_variant,
    written,
)
from attnviz.scenarios.tokens import retoken
from attnviz.scenarios.variants import steps as steps_variant
from attnviz.teach.text import common as text
from attnviz.ui import state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.fitting import fit_vector
from attnviz.ui.page_end import end_page
from attnviz.ui.safe import md_escape


def dims(prefix: str, n: int) -> list[str]:
    """Column labels for n dimensions: ``d0, d1, ...`` (``prefix`` replaces ``d``)."""
    return [f"{prefix}{j}" for j in range(n)]


def writes(key: str, field: str, cast=None) -> dict:
    """Widget arguments (``key``, ``on_change``, ``args``) that store the widget's new value,
    passed through ``cast``, as the scenario's ``field`` in the change callback: before the
    script runs, so the whole run reads the scenario with it."""
    return dict(key=key, on_change=_store, args=(key, field, cast))


def _store(key: str, field: str, cast) -> None:
    """A widget's change callback (see :func:`writes`)."""
    value = st.session_state[key]
    state.update(**{field: cast(value) if cast else value})


def split_tokens(raw: str) -> tuple[str, ...] | None:
    """The tokens of a space-separated string, labels cut to ``limits.MAX_LABEL_CHARS``; None
    when there are none or too many (:func:`parse_tokens` says why)."""
    tokens = tuple(raw.split())
    if not tokens or len(tokens) > limits.MAX_TOKENS:
        return None
    return tuple(t[: limits.MAX_LABEL_CHARS] for t in tokens)


def parse_tokens(raw: str) -> tuple[str, ...] | None:
    """Split a space-separated token string; report empty input or over-long labels."""
    tokens = tuple(raw.split())
    if not tokens:
        st.error(text.NO_TOKENS)
        return None
    if len(tokens) > limits.MAX_TOKENS:
        st.error(text.TOO_MANY_TOKENS.format(limit=limits.MAX_TOKENS, n=len(tokens)))
        return None
    if any(len(t) > limits.MAX_LABEL_CHARS for t in tokens):
        st.warning(_LABELS_CUT)
    return split_tokens(raw)


_LABELS_CUT = text.LABELS_CUT.format(chars=limits.MAX_LABEL_CHARS)
_CUT_NOTE = "_tokens_cut_note"  # the token box whose labels were cut before a rerun
_VECTORS_NOTE = "_tokens_vectors_note"  # (box, new words, repeated words) of the last list


def token_controls(prefix: str, scenario: Scenario, *, source: bool = False) -> Scenario:
    """A text box of space-separated tokens; a different count resizes the sequence.

    The box is read only when the user changed its text (its change callback,
    :func:`_retoken`): labels that came from a file or a link are kept exactly as given, even
    with spaces in them ("New York") or empty. Its key is not tied to the editor generation (a
    second list typed while the first one's rerun runs would be sent to a box that no longer
    exists); it follows the scenario instead. Text that is no token list stays in the box,
    with the reason under it.
    """
    current = scenario.source_tokens if source else scenario.tokens
    label = text.SOURCE_TOKENS_LABEL if source else text.TOKENS_LABEL
    name = f"{prefix}_src_tokens" if source else f"{prefix}_tokens"
    shown = f"_shown_{name}"  # the tokens the box was last filled from
    joined = " ".join(current)
    if st.session_state.get(shown) != current or name not in st.session_state:
        st.session_state[name] = joined  # new box, or tokens replaced from outside
        st.session_state[shown] = current
    raw = st.text_input(label, key=name, on_change=_retoken, args=(name, source),
                        help=text.LIMITS_TOKENS_HELP.format(tokens=limits.MAX_TOKENS,
                                                            chars=limits.MAX_LABEL_CHARS))
    if st.session_state.get(_CUT_NOTE) == name:  # cut by the callback before this run
        del st.session_state[_CUT_NOTE]
        state.mark_one_time_message()
        st.warning(_LABELS_CUT)
    _vectors_note(name)
    if raw != joined and split_tokens(raw) is None:  # refused by the callback: say why
        parse_tokens(raw)
    return scenario


def _retoken(name: str, source: bool) -> None:
    """The token box's change callback: a new token list becomes the scenario's (the editors
    restart from it); over-long labels are cut and the box shows them cut."""
    scenario = state.get_scenario()
    current = scenario.source_tokens if source else scenario.tokens
    raw = st.session_state[name]
    tokens = split_tokens(raw)
    if raw == " ".join(current) or tokens is None or tokens == current:
        return
    shown = f"_shown_{name}"
    st.session_state[shown] = tokens  # the box keeps what the user typed
    if any(len(t) > limits.MAX_LABEL_CHARS for t in raw.split()):
        st.session_state[_CUT_NOTE] = name  # say so in the run
        st.session_state[shown] = None  # and show the cut labels in the box
    done = retoken(scenario, tokens, source=source)
    state.set_scenario(done.scenario, reset_editors=True)
    st.session_state[_VECTORS_NOTE] = (name, done.fresh, done.reused)


def _vectors_note(name: str) -> None:
    """Say which words of the list just typed got new vectors, and which reuse one."""
    note = st.session_state.get(_VECTORS_NOTE)
    if not note or note[0] != name:
        return
    del st.session_state[_VECTORS_NOTE]
    _, fresh, reused = note
    words = []
    if fresh:  # the words may come from anyone: escaped, the sentence around them is ours
        words.append(text.TOKENS_NEW_VECTORS.format(words=md_escape(", ".join(fresh))))
    if reused:
        words.append(text.TOKENS_REUSED_VECTORS.format(words=md_escape(", ".join(reused))))
    if words:  # on a projector a toast: the note takes no room from the charts
        state.mark_one_time_message()
        (st.toast if state.presenter() else st.info)(" ".join(words))


def size_controls(prefix: str, scenario: Scenario) -> Scenario:
    """Number inputs for d_model and the projection widths; values that still fit are kept
    (the change callback resizes the scenario: :func:`_resize`)."""
    c1, c2, c3 = st.columns(3)
    keys = tuple(state.vkey(f"{prefix}_{n}") for n in ("d_model", "d_k", "d_v"))
    change = dict(on_change=_resize, args=keys)
    wide = scenario.d_model > limits.MAX_D_MODEL  # a real model's head: its width is the model's
    c1.number_input(text.D_MODEL_LABEL, 1, max(limits.MAX_D_MODEL, scenario.d_model),
                    scenario.d_model, key=keys[0], disabled=wide,
                    help=text.D_MODEL_HELP.format(limit=limits.MAX_D_MODEL), **change)
    c2.number_input(text.QK_WIDTH_LABEL, 1, limits.MAX_WIDTH, int(scenario.w_q.shape[1]),
                    key=keys[1], help=text.QK_WIDTH_HELP.format(limit=limits.MAX_WIDTH),
                    **change)
    c3.number_input(text.V_WIDTH_LABEL, 1, limits.MAX_WIDTH, int(scenario.w_v.shape[1]),
                    key=keys[2], help=text.V_WIDTH_HELP.format(limit=limits.MAX_WIDTH),
                    **change)
    st.caption(limits_caption())
    return scenario


def _resize(d_model_key: str, d_k_key: str, d_v_key: str) -> None:
    """The sizes' change callback: the scenario resized to the three boxes' values (the
    editors restart from it)."""
    scenario = state.get_scenario()
    sizes = dict(d_model=int(st.session_state[d_model_key]),
                 d_k=int(st.session_state[d_k_key]), d_v=int(st.session_state[d_v_key]))
    if (sizes["d_model"], sizes["d_k"], sizes["d_v"]) != (
            scenario.d_model, scenario.w_q.shape[1], scenario.w_v.shape[1]):
        state.set_scenario(resize(scenario, **sizes), reset_editors=True)


def limits_caption() -> str:
    """The editing limits of :mod:`attnviz.scenarios.limits` as one sentence (shown under the
    sizes)."""
    return text.LIMITS_CAPTION.format(tokens=limits.MAX_TOKENS, d_model=limits.MAX_D_MODEL,
                                      width=limits.MAX_WIDTH, heads=limits.MAX_HEADS,
                                      chars=limits.MAX_LABEL_CHARS)


def masked_rows_warning(mask: np.ndarray) -> None:
    """Warn when the mask leaves a query (or every query) with no key to attend to."""
    mask = np.asarray(mask, dtype=bool)
    blocked = np.flatnonzero(~mask.any(axis=-1)) if mask.ndim == 2 else np.zeros(0, int)
    if mask.size and not mask.any():
        st.warning(text.MASKS_ALL_BLOCKED)
    elif blocked.size:
        st.warning(text.LIMITS_MASKED_ROWS.format(rows=", ".join(map(str, blocked))))


def embedding_editor(prefix: str, scenario: Scenario, *, source: bool = False) -> Scenario:
    """Edit X (or the source embeddings) cell by cell."""
    tokens = scenario.source_tokens if source else scenario.tokens
    matrix = scenario.source_x if source else scenario.x
    name = text.SOURCE_EMBEDDINGS_LABEL if source else text.EMBEDDINGS_LABEL
    field = "source_x" if source else "x"
    new = matrix_editor(name, matrix, key=f"{prefix}_{'src_x' if source else 'x'}",
                        row_labels=[f"{i}:{t}" for i, t in enumerate(tokens)],
                        col_labels=dims("d", matrix.shape[1]), field=field)
    if not np.array_equal(new, matrix):  # applied in this run (the editor wrote it): no callback
        scenario = state.get_scenario()
    return scenario


def weight_editors(prefix: str, scenario: Scenario, *, with_w_o: bool = False) -> Scenario:
    """Tabs with W_Q, W_K, W_V (and W_O), plus regeneration with an initialiser and a seed.

    Lazy: only the selected tab's editor runs (``st.session_state[f"{prefix}_weights"]`` holds
    its label); the others keep their values in the scenario.
    """
    names = ["w_q", "w_k", "w_v"] + (["w_o"] if with_w_o else [])
    tabs = st.tabs([n.upper() for n in names], key=f"{prefix}_weights", on_change="rerun")
    for tab, name in zip(tabs, names, strict=True):
        if not tab.open:
            continue
        with tab:
            matrix = getattr(scenario, name)
            rows = dims("v", matrix.shape[0]) if name == "w_o" else dims("d", matrix.shape[0])
            cols = dims(name[-1] if name != "w_o" else "o", matrix.shape[1])
            new = matrix_editor(name.upper(), matrix, key=f"{prefix}_{name}",
                                row_labels=rows, col_labels=cols, field=name)
            if not np.array_equal(new, matrix):  # the editor wrote it to the scenario
                scenario = state.get_scenario()
    _regenerate_controls(prefix)
    return scenario


@st.fragment
def _regenerate_controls(prefix: str) -> None:
    """Initialiser, seed and a Regenerate button.

    A fragment: picking an initialiser or a seed changes nothing yet, so it reruns only these
    three widgets, not the page; Regenerate then reruns the whole app with the new weights.
    """
    st.selectbox(text.INIT_LABEL, INIT_KINDS, format_func=text.INIT_KINDS.get,
                 key=f"{prefix}_init_kind")
    # the seed and the button share the next row: in a narrow column (the lecture view at
    # 1024 px) a third column cut the button's label to "Rege…"
    seed_col, button_col = st.columns(2, vertical_alignment="bottom")
    seed_col.number_input(text.SEED_LABEL, 0, limits.SEED_MAX, 42, key=f"{prefix}_init_seed")
    if button_col.button(text.REGENERATE, key=f"{prefix}_regenerate", help=text.REGENERATE_HELP,
                         on_click=_regenerate, args=(prefix,)):
        st.rerun(scope="app")  # the callback wrote the weights: every part of the page
    st.caption(weights_origin(state.get_scenario()))


def _regenerate(prefix: str) -> None:
    """Regenerate's click callback: new W_Q, W_K, W_V from the initialiser and the seed shown
    beside the button (the editors restart from them)."""
    kind = st.session_state[f"{prefix}_init_kind"]
    seed = int(st.session_state[f"{prefix}_init_seed"])
    scenario = state.get_scenario()
    shapes = [scenario.w_q.shape, scenario.w_k.shape, scenario.w_v.shape]
    w_q, w_k, w_v = init_weights(kind, shapes, seed=seed)
    state.set_scenario(state.update(w_q=w_q, w_k=w_k, w_v=w_v), reset_editors=True)
    st.session_state[WEIGHTS_MADE] = (kind, seed, _weights_print(state.get_scenario()))


WEIGHTS_MADE = "weights_made_by"  # session state: (initialiser, seed, weights' fingerprint)


def _weights_print(scenario: Scenario) -> str:
    return fingerprint((scenario.w_q, scenario.w_k, scenario.w_v))


def weights_origin(scenario: Scenario) -> str:
    """How the scenario's W_Q, W_K and W_V were made, in one sentence: the last Regenerate
    while they are still its result, the preset's own while they are still that, else edited
    (the initialiser widgets show a choice for the next Regenerate, not the current weights)."""
    made = st.session_state.get(WEIGHTS_MADE)
    if made is not None and made[2] == _weights_print(scenario):
        return text.WEIGHTS_FROM_INIT.format(kind=text.INIT_KINDS.get(made[0], made[0]),
                                             seed=made[1])
    if weights_from_preset(scenario) is not None:
        return text.WEIGHTS_FROM_PRESET.format(title=md_escape(scenario.title))
    return text.WEIGHTS_OTHER


def fill_parts(scenario: Scenario, parts) -> Scenario:
    """The scenario with the optional parts a page shows filled (see ``with_parts``), for the
    page to draw and edit. Not stored: opening a page never changes the scenario (its title,
    its link, "Edited from …"); the first edit of a filled part stores it
    (:func:`attnviz.ui.state.update`)."""
    return with_parts(scenario, parts)


def variant_picker(prefix: str, scenario: Scenario, *, compact: bool = False) -> Scenario:
    """Choose the attention variant from the registry; shows its description and formula.

    ``compact`` (the lecture view): the select box alone, its description in its help; the
    caller shows the formula where it has room.
    """
    keys = list(VARIANTS)
    if compact:
        pick = formula = None
        where = st
    else:
        pick, formula = st.columns([1, 2], vertical_alignment="center")
        where = pick
    widget = state.vkey(f"{prefix}_variant")
    where.selectbox(text.VARIANT_LABEL, keys, index=keys.index(scenario.variant),
                    format_func=lambda k: VARIANTS[k].name, key=widget,
                    on_change=_pick_variant, args=(widget,),
                    help=variant_about(scenario.variant) if compact else None)
    if not compact:
        pick.caption(variant_about(scenario.variant))
        formula.latex(variant_formula(scenario))
    return scenario


def _pick_variant(widget: str) -> None:
    """The variant box's change callback: the scenario with the picked variant and the parts
    it reads (a source, ...)."""
    key = st.session_state[widget]
    if key in VARIANTS and key != state.get_scenario().variant:
        state.set_scenario(with_variant(state.get_scenario(), key))


def variant_formula(scenario: Scenario) -> str:
    """The variant's formula for the scenario's settings: its scale, τ when it is not 1, M when
    the result masks a pair (the result is the one the page shows, computed once); it may
    wrap between its parts (:func:`breakable`)."""
    result, _ = _memo(scenario, None)
    return breakable(scenario.spec.written(written(scenario,
                                                   None if result is None else result.mask)))


_BREAKS = (r",\quad", r",\ ")  # the separators of a formula's parts (Q = XW_Q,\ K = XW_K)
_TOKEN = re.compile(r"\\(?:[A-Za-z]+|.)|.", re.DOTALL)  # a command, an escaped char, a char


def breakable(latex: str) -> str:
    r"""``latex`` with a line break allowed (KaTeX's ``\allowbreak``) after each of its
    top-level separators (``,\quad`` and ``,\ ``, outside braces, ``\left … \right`` and
    environments), each part between them grouped in braces so that it never breaks inside
    (not after its own ``=``). A display formula stays on one line unless the page's CSS lets
    it wrap (the Playground's: :data:`attnviz.ui.presenter.COMPACT_CSS`): a YaRN head's
    formula is wider than the Playground at 1366 px."""
    parts, start, depth, i = [], 0, 0, 0
    while i < len(latex):
        sep = next((b for b in _BREAKS if latex.startswith(b, i)), None) if depth == 0 else None
        if sep is not None and not (sep[-1].isalpha() and latex[i + len(sep):][:1].isalpha()):
            parts.append((latex[start:i], sep))
            i = start = i + len(sep)
            continue
        token = _TOKEN.match(latex, i).group(0)
        if token in ("{", r"\left", r"\begin"):
            depth += 1
        elif token in ("}", r"\right", r"\end"):
            depth -= 1
        i += len(token)
    if not parts:
        return latex
    written = "".join(f"{{{part}}}{sep}\\allowbreak " for part, sep in parts)
    return written + "{" + latex[start:] + "}"


def variant_about(key: str) -> str:
    """A variant's one-line description, and which variant computes the same thing if any."""
    spec = VARIANTS[key]
    same = (" " + text.VARIANT_SAME_AS.format(name=VARIANTS[spec.same_as].name)
            if spec.same_as else "")
    return spec.description + same


SETTINGS = ("scale", "temperature", "pe", "heads", "params")


def settings_controls(prefix: str, scenario: Scenario, *, compact: bool = False,
                      only: tuple[str, ...] = SETTINGS, param_boxes=None) -> Scenario:
    """Scale mode, custom scale, temperature, positional encoding, heads and the variant's own
    settings (``only`` some of them: the lecture view places them in two spots); ``compact``
    stacks the scale mode and the custom scale (a narrow column); ``param_boxes``: a container
    for each of the variant's own settings (see :func:`param_controls`). Each widget writes its
    setting in its change callback (:func:`writes`)."""
    if "scale" in only:
        c1, c2 = (st.container(), st.container()) if compact else st.columns(2)
        _scale_controls(prefix, scenario, c1, c2)
    if "temperature" in only:
        st.slider(text.TEMPERATURE_LABEL, limits.TEMPERATURE_MIN, limits.TEMPERATURE_MAX,
                  float(scenario.temperature), step=limits.TEMPERATURE_STEP,
                  help=text.TEMPERATURE_HELP,
                  **writes(state.vkey(f"{prefix}_temperature"), "temperature", float))
    if "pe" in only and not scenario.direct:
        st.toggle(text.PE_TOGGLE, scenario.use_pe, help=text.PE_TOGGLE_HELP,
                  **writes(state.vkey(f"{prefix}_use_pe"), "use_pe", bool))
    if "heads" in only and scenario.always_heads:
        _heads_control(prefix, scenario)
    if "params" in only:
        param_controls(prefix, scenario, boxes=param_boxes)
    return scenario


def _scale_controls(prefix: str, scenario: Scenario, c1, c2) -> None:
    """The scale mode (and the custom scale when chosen), each written by its callback."""
    fixed_scale = scenario.spec.scale_fixed is not None
    modes = list(text.SCALE_MODES)
    c1.radio(text.SCALE_LABEL, modes, index=modes.index(scenario.scale_mode),
             format_func=text.SCALE_MODES.get, horizontal=True, disabled=fixed_scale,
             help=text.SCALE_FIXED_HELP if fixed_scale else None,
             **writes(state.vkey(f"{prefix}_scale_mode"), "scale_mode"))
    if scenario.scale_mode == "custom":
        c2.number_input(
            text.CUSTOM_SCALE_LABEL, limits.CUSTOM_SCALE_MIN,
            max(limits.CUSTOM_SCALE_MAX, float(scenario.custom_scale)),  # a file may hold more
            float(scenario.custom_scale), step=limits.CUSTOM_SCALE_STEP,
            **writes(state.vkey(f"{prefix}_custom_scale"), "custom_scale", float))


_HEADS_NOTE = "_heads_replaced_note"  # (scenario's fingerprint, warning) of a replaced count


def _heads_control(prefix: str, scenario: Scenario) -> None:
    """The number of heads, among the counts that divide both widths. A count that does not
    (from a file or a link, or after a width change) is replaced and the run starts again from
    the scenario with the count shown; the warning stays until the scenario changes again."""
    choices = [h for h in valid_head_counts(scenario.w_q.shape[1], limits.MAX_HEADS)
               if scenario.w_v.shape[1] % h == 0]
    if scenario.n_heads not in choices:
        message = text.LIMITS_HEADS_REPLACED.format(
            n=scenario.n_heads, dk=scenario.w_q.shape[1], dv=scenario.w_v.shape[1],
            shown=text.count(choices[-1], "head"), choices=", ".join(map(str, choices)))
        st.session_state[_HEADS_NOTE] = (fingerprint(state.update(n_heads=choices[-1])), message)
        st.rerun()  # every part of the page from the count shown
    note = st.session_state.get(_HEADS_NOTE)
    if note is not None:  # said until the scenario changes again
        if note[0] == fingerprint(state.get_scenario()):
            st.warning(note[1])
        else:
            del st.session_state[_HEADS_NOTE]
    key = state.vkey(f"{prefix}_n_heads")
    st.select_slider(text.HEADS_SLIDER_LABEL, choices, value=scenario.n_heads, key=key,
                     help=text.HEADS_SLIDER_HELP, on_change=_store_heads, args=(key,))


def _store_heads(key: str) -> None:
    """The heads slider's change callback: the count, with a head mix (seed 004's weight per
    head) fitted to it (a mix of another length cannot be computed)."""
    scenario, n = state.get_scenario(), int(st.session_state[key])
    mix = None if scenario.head_mix is None else fit_vector(scenario.head_mix, n, 1.0 / n)
    state.update(n_heads=n, head_mix=mix)


def param_controls(prefix: str, scenario: Scenario, *, boxes=None) -> dict:
    """One widget per setting the variant declares (``Variant.params``), from the scenario's
    value (or the declared default); returns ``{name: value}`` as the widgets show them; each
    widget writes its setting in its change callback. ``boxes``: a container for each
    (presenter mode's row of columns), else one under another.

    A choice is a select box, a flag a toggle, a number a number box bounded by the setting's
    range (the ranges of RoPE's base or a soft cap span decades: a slider would hide most of
    them).
    """
    values = {}
    for i, p in enumerate(scenario.spec.params):
        with boxes[i] if boxes else nullcontext():
            values[p.name] = _param_control(p, scenario, state.vkey(f"{prefix}_param_{p.name}"))
    return values


def _param_control(p, scenario: Scenario, key: str):
    """The widget of one of the variant's settings; returns its value. A vector setting (a
    real model's RoPE frequencies) is shown, not edited; a setting a given vector replaces
    (``Param.overridden_by``) is disabled and says why."""
    value = scenario.param(p.name)
    if p.structured:  # a list of attention steps: shown in words, edited elsewhere
        st.caption(text.PARAM_STRUCTURED.format(label=p.label, value=p.describe(value)))
        return value
    if isinstance(p.default, tuple):
        return _vector_display(p, value, key)
    change = dict(key=key, on_change=_store_param, args=(key, p.name))
    by = None
    if p.overridden_by and scenario.param(p.overridden_by):
        by = scenario.spec.param(p.overridden_by).label
        change.update(disabled=True, help=text.PARAM_OVERRIDDEN_HELP.format(label=by))
    if p.choices:
        widget = st.selectbox(p.label, p.choices, index=p.choices.index(value), **change)
    elif isinstance(p.default, bool):
        widget = st.toggle(p.label, bool(value), **change)
    elif isinstance(p.default, int):
        widget = int(st.number_input(p.label, int(p.low), int(p.high), int(value), step=1,
                                     **change))
    else:
        widget = float(st.number_input(p.label, float(p.low), float(p.high), float(value),
                                       format="%g", **change))
    if by is not None:
        st.caption(text.PARAM_OVERRIDDEN.format(label=by), help=change["help"])
    return widget


_VECTOR_SHOWN = 4  # numbers of a vector setting written in its caption


def vector_caption(p, value: tuple) -> str:
    """What a vector setting's caption says: its label and first numbers, or that it is not
    given."""
    if not value:
        return text.PARAM_VECTOR_NONE.format(label=p.label)
    shown = ", ".join(f"{v:.4g}" for v in value[:_VECTOR_SHOWN])
    return text.PARAM_VECTOR_GIVEN.format(
        label=p.label, values=shown + (", …" if len(value) > _VECTOR_SHOWN else ""))


def _vector_display(p, value: tuple, key: str) -> tuple:
    """A vector setting, read-only: what it holds (or that it is not given, the default) and,
    when given, a button that drops it (back to the default)."""
    if not value:
        st.caption(vector_caption(p, value), help=text.PARAM_VECTOR_NONE_HELP)
        return value
    st.caption(vector_caption(p, value), help=text.PARAM_VECTOR_GIVEN_HELP.format(n=len(value)))
    st.button(text.PARAM_VECTOR_DROP, key=f"{key}_drop", help=text.PARAM_VECTOR_DROP_HELP,
              on_click=_drop_param, args=(p.name,))
    return value


def _drop_param(name: str) -> None:
    """A vector setting's drop button: the setting back to its default (not given)."""
    scenario = state.get_scenario()
    if name in scenario.params:
        state.update(params={k: v for k, v in scenario.params.items() if k != name})


def _store_param(key: str, name: str) -> None:
    """A variant setting's change callback: its value into the scenario's ``params``."""
    scenario = state.get_scenario()
    spec = next((p for p in scenario.spec.params if p.name == name), None)
    if spec is None:  # the variant changed in the same rerun: not its setting any more
        return
    value = st.session_state[key]
    if not spec.choices:
        value = type(spec.default)(value)
    if scenario.param(name) != value:
        state.update(params={**scenario.params, name: value})


# Results of the last few scenarios this session computed, keyed by content (see compute).
_MEMO = "_compute_memo"
_MEMO_ENTRIES = 4  # a page may compute two or three variants of the scenario
_MEMO_BYTES = 32 * 2**20  # per session; the newest result is always kept


def run(scenario: Scenario, *, heads: int | None = None) -> ScenarioResult:
    """``run_scenario(scenario, heads=heads)`` through this session's memo (see
    :func:`compute`); a scenario that cannot be computed raises its ValueError again."""
    result, error = _memo(scenario, heads)
    if error is not None:
        raise ValueError(error)
    return result


def compute(scenario: Scenario, *, heads: int | None = None,
            what: str = text.THIS_SCENARIO) -> ScenarioResult | None:
    """Run the scenario (``run_scenario(scenario, heads=heads)``); on bad input show the
    core's message ('Cannot compute <what>: ...') and return None.

    A rerun in which the scenario did not change (a page switch, a widget that does not touch
    it, presenter mode) reuses the result: results are kept per session, keyed by a hash of the
    scenario's content (:func:`attnviz.scenarios.fingerprint.fingerprint`: every array's bytes
    and every setting), so any edit computes afresh. Result arrays are read-only, so sharing one
    result between reruns is safe. (``st.cache_data`` would pickle the result on every hit: at 256
    tokens and 8 heads that costs more than computing it again — see benchmarks/RESULTS.md.)
    """
    result, error = _memo(scenario, heads)
    if error is not None:
        st.error(text.CANNOT_COMPUTE.format(what=what, reason=error))
    return result


def _memo(scenario: Scenario, heads: int | None) -> tuple[ScenarioResult | None, str | None]:
    """(result, None) or (None, the ValueError's message), from the memo or computed now."""
    def make() -> tuple[ScenarioResult | None, str | None]:
        try:
            return run_scenario(scenario, heads=heads), None
        except ValueError as exc:
            return None, str(exc)

    return state.session_memo(_MEMO, fingerprint((scenario, heads)), make,
                              entries=_MEMO_ENTRIES, fits=_fits)


def _fits(kept: list) -> bool:
    """True when the kept results hold at most the byte budget together."""
    return sum(_nbytes(r) for r, _ in kept) <= _MEMO_BYTES


def _nbytes(obj, seen: set | None = None) -> int:
    """Bytes held by the arrays of a (nested) result, each underlying buffer counted once."""
    seen = set() if seen is None else seen
    if isinstance(obj, np.ndarray):
        base = obj
        while isinstance(base.base, np.ndarray):
            base = base.base
        if id(base) in seen:
            return 0
        seen.add(id(base))
        return base.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(x, seen) for x in obj)
    if hasattr(obj, "__dataclass_fields__"):
        return sum(_nbytes(getattr(obj, f), seen) for f in obj.__dataclass_fields__)
    return 0


def require_projection(prefix: str, message: str, default_preset: str) -> None:
    """Stop the page, with ``message`` and a preset picker, when the scenario gives Q, K, V
    directly (the page needs embeddings and weight matrices)."""
    if not state.get_scenario().direct:
        return
    st.info(message)
    projected = [k for k, p in PRESETS.items() if not p.build().direct]
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    choice = c1.selectbox(text.PRESET_LABEL, projected, index=projected.index(default_preset),
                          format_func=lambda k: PRESETS[k].title, key=f"{prefix}_preset")
    if c2.button(text.PRESET_LOAD, key=f"{prefix}_load_preset"):
        state.load_preset(choice)
        st.rerun()
    end_page()


def head_picker(result, key: str, where=st) -> int | None:
    """The one head picker of every page: a select box over the heads of ``result`` (any core
    result: they share ``n_heads`` and ``head(h)``), drawn in ``where``; None, and nothing
    drawn, when the result has one head. A stored choice beyond the heads falls back to 0."""
    if result.n_heads == 1:
        return None
    if st.session_state.get(key) not in range(result.n_heads):
        st.session_state.pop(key, None)  # fewer heads than before: back to head 0
    return where.selectbox(text.HEAD_LABEL, range(result.n_heads), key=key,
                           format_func=lambda h: text.HEAD_NAME.format(h=h))


_STEPS_REFUSED = "_steps_menu_refused"  # the sentence a refused menu edit left for the next run


def steps_menu(prefix: str, scenario: Scenario) -> None:
    """A scenario of attention steps: a menu of the steps its list holds (mask parts, changes
    of the scores, of q and k, the normaliser). A step chosen joins with its defaults, one
    dropped leaves; an edit that makes no list (two normalisers) is refused in a sentence and
    the list stays as it was. Nothing for any other variant."""
    if scenario.variant not in steps_variant.KEYS:
        return
    offered = steps_variant.menu()
    key = state.vkey(f"{prefix}_steps_menu")
    chosen = list(dict.fromkeys(s.name for s in scenario.param("steps") if s.name in offered))
    if st.session_state.get(key) != chosen:  # the menu shows the list, in its order
        st.session_state[key] = chosen
    st.multiselect(text.STEPS_MENU_LABEL, list(offered), format_func=offered.get, key=key,
                   help=text.STEPS_MENU_HELP, on_change=_store_steps, args=(key,))
    refused = st.session_state.pop(_STEPS_REFUSED, None)
    if refused:
        st.warning(text.STEPS_MENU_REFUSED.format(reason=refused))


def _store_steps(key: str) -> None:
    """The menu's change callback: the list with exactly the chosen steps, or, refused, the
    sentence kept for the run (which shows the menu as the list stands)."""
    scenario = state.get_scenario()
    if scenario.variant not in steps_variant.KEYS:  # the variant changed in the same rerun
        return
    try:
        listed = steps_variant.with_names(scenario.param("steps"), list(st.session_state[key]))
    except ValueError as err:
        st.session_state[_STEPS_REFUSED] = str(err)
        return
    state.update(params={**scenario.params, "steps": listed})
