"""Presenter mode's row of controls above the Playground's charts:
RoPE's seven settings of its own had a column each and cut each other's values at 1024 px
(the base box read "1000…"). A variant with more settings than ``layout.PRESENTER_OWN_MOST``
keeps those at their defaults that its presets do not set, and those not used, behind one
"More" button (a popover: every setting still one click away); the preset's own settings and
a real head's frequencies and attention scaling keep their columns, the frequencies with
their "Use the base" button. The browser side (every value whole at 1024×768 and 1366×768):
tests/browser/test_presenter_row_browser.py.
"""

from __future__ import annotations

from dataclasses import replace

from apptest_helpers import open_page, switch_to

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.teach.text import common
from attnviz.teach.text import playground as text
from attnviz.ui import layout, state
from attnviz.ui.lecture import folded_params, param_width, preset_params, tokens_width

FREQ = (1.0, 0.0025)  # a scaled-RoPE head's θ_i (two pairs: the rope_shift preset's d_k = 4)
SCALING = 1.138629436111989  # YaRN's a for factor 4: 0.1·ln 4 + 1


def _real_head():
    """The rope_shift preset as a scaled-RoPE head opens (tests/pages/test_rope_scaled_pages.py
    builds one from a model): the model's frequencies and attention scaling given."""
    sc = PRESETS["rope_shift"].build()
    return replace(sc, params={**sc.params, "rope_inv_freq": FREQ,
                               "rope_attention_scaling": SCALING})


def _presenter(scenario, focus: str = "weights"):
    at = open_page(None)
    at.session_state[state.SCENARIO] = scenario
    at.session_state[state.PRESENTER] = True
    switch_to(at, "playground", focus=focus)
    assert not at.exception, [e.message[:300] for e in at.exception]
    return at


def _row(at):
    """The presenter row's widgets and captions, split into those in a column of the row and
    those behind the "More" button: ({key or caption: label}, {...}, the popovers' labels)."""
    row = _find_keyed(at.main, "playground_presenter_controls")
    assert row is not None
    shown, folded, popovers = {}, {}, []

    def walk(node, inside: bool) -> None:
        kind = getattr(node, "type", None)
        if kind == "popover":
            popovers.append(node.proto.popover.label)
            inside = True
        key = getattr(node, "key", None)
        where = folded if inside else shown
        if kind == "caption":
            where[node.value] = "caption"
        elif key and kind not in ("popover",) and hasattr(node, "label"):
            where[key] = node.label
        for child in getattr(node, "children", {}).values():
            walk(child, inside)

    walk(row, False)
    return shown, folded, popovers


def _find_keyed(node, key):
    if getattr(node, "key", None) == key:
        return node
    for child in getattr(node, "children", {}).values():
        found = _find_keyed(child, key)
        if found is not None:
            return found
    return None


def _param(name: str) -> str:
    return f"playground_param_{name}_v0"


def test_the_rope_preset_keeps_its_own_settings_in_the_row_the_rest_behind_more():
    at = _presenter(PRESETS["rope_shift"].build())
    shown, folded, popovers = _row(at)
    assert len(popovers) == 1
    # the preset sets the base and the offset: its lesson; each has a column
    assert shown[_param("rope_base")] == "RoPE base"
    assert shown[_param("rope_offset")] == "Position offset"
    # the settings at their defaults that the preset does not set: one click away
    for name in ("rope_layout", "rope_fraction", "rope_softcap", "rope_attention_scaling"):
        assert _param(name) in folded and _param(name) not in shown, name
    none = common.PARAM_VECTOR_NONE.format(label="θ_i from the model")
    assert none in folded and none not in shown
    assert popovers == [text.PRESENTER_MORE_SETTINGS]


def test_a_real_heads_frequencies_and_scaling_keep_their_columns_the_unused_base_folds():
    at = _presenter(_real_head())
    shown, folded, _ = _row(at)
    said = common.PARAM_VECTOR_GIVEN.format(label="θ_i from the model", values="1, 0.0025")
    assert said in shown  # the model's frequencies, said in the row
    assert _param("rope_inv_freq") + "_drop" in shown  # with "Use the base" beside them
    assert shown[_param("rope_attention_scaling")] == "Attention scaling a"
    # the base the frequencies replace is not used: behind "More", still saying why
    assert _param("rope_base") in folded and _param("rope_base") not in shown
    assert common.PARAM_OVERRIDDEN.format(label="θ_i from the model") in folded
    # the offset the preset sets keeps its column; the defaults fold
    assert _param("rope_offset") in shown
    assert _param("rope_layout") in folded and _param("rope_softcap") in folded


def test_the_folded_setting_still_works_from_behind_more():
    at = _presenter(PRESETS["rope_shift"].build())
    at.number_input(key=_param("rope_softcap")).set_value(2.0).run()
    assert not at.exception
    assert at.session_state[state.SCENARIO].param("rope_softcap") == 2.0
    # a setting moved off its default is no longer folded: its column comes back
    shown, folded, _ = _row(at)
    assert _param("rope_softcap") in shown and _param("rope_softcap") not in folded


def test_a_variant_with_few_settings_keeps_every_one_in_a_column():
    at = _presenter(PRESETS["sinks_streaming"].build())
    shown, folded, popovers = _row(at)
    assert popovers == [] and folded == {}
    for p in VARIANTS["sinks"].params:
        assert _param(p.name) in shown, p.name


def test_outside_presenter_mode_every_rope_setting_is_written_out():
    at = open_page(None)
    at.session_state[state.SCENARIO] = PRESETS["rope_shift"].build()
    switch_to(at, "playground", focus="weights")
    assert not at.get("popover")
    keys = {w.key for kind in ("number_input", "selectbox") for w in at.get(kind)}
    for name in ("rope_base", "rope_layout", "rope_fraction", "rope_offset", "rope_softcap",
                 "rope_attention_scaling"):
        assert _param(name) in keys, name


def test_folded_params_rule():
    assert preset_params("rope") == {"rope_base", "rope_offset"}
    assert folded_params(PRESETS["rope_shift"].build()) == (
        "rope_layout", "rope_fraction", "rope_softcap", "rope_inv_freq",
        "rope_attention_scaling")
    assert folded_params(_real_head()) == ("rope_base", "rope_layout", "rope_fraction",
                                           "rope_softcap")
    assert len(VARIANTS["sinks"].params) <= layout.PRESENTER_OWN_MOST
    assert folded_params(PRESETS["sinks_streaming"].build()) == ()


def test_a_settings_column_is_as_wide_as_its_value():
    rope = VARIANTS["rope"]

    def px(name, value):
        return param_width(rope.param(name), value) * layout.PRESENTER_UNIT_PX

    # a real head's a = 1.138629436111989: room for its 17 characters and the − + buttons
    assert px("rope_attention_scaling", SCALING) >= 17 * layout.PRESENTER_DIGIT_PX \
        + layout.PRESENTER_STEPPERS_PX
    assert px("rope_base", 10000.0) < px("rope_attention_scaling", SCALING)
    assert px("rope_base", 10000.0) == px("rope_base", 10000)  # written "10000" either way
    # a choice, and frequencies not given: the plain width; given: room for "Use the base"
    assert param_width(rope.param("rope_layout"), "split_half") == 1.0
    assert param_width(rope.param("rope_inv_freq"), ()) == 1.0
    assert param_width(rope.param("rope_inv_freq"), FREQ) >= layout.PRESENTER_DROP


def test_the_tokens_column_is_as_wide_as_the_sentence_within_bounds():
    sc = PRESETS["rope_shift"].build()
    six = tokens_width(sc)
    assert layout.PRESENTER_TOKENS < six < layout.PRESENTER_TOKENS_MOST
    assert six * layout.PRESENTER_UNIT_PX >= len("the cat the cat the cat") \
        * layout.PRESENTER_TEXT_CHAR_PX
    short = replace(sc, tokens=("a", "b", "c"), x=sc.x[:3])
    assert tokens_width(short) == layout.PRESENTER_TOKENS
    long = replace(sc, tokens=("extraordinary",) * 6)
    assert tokens_width(long) == layout.PRESENTER_TOKENS_MOST
