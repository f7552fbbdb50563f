"""Guided lectures: ordered paths through the dashboard, one step per screen a lecturer shows.

A :class:`Lecture` is a key (used in links: ``?lecture=<key>&step=<n>``), a title and its
:class:`Step` s. A step names the page it opens (a path of app.py's ``st.navigation``), the
preset it loads, the Playground's focus (Playground steps only), the settings it changes on
top of the preset (scenario fields such as ``temperature`` or ``use_pe``, the ``variant``, or
one of the variant's own settings such as ``rope_offset``) and the key of its talking point in
:mod:`attnviz.teach.text.lectures`. The bar that walks a lecture is
:mod:`attnviz.ui.lecture_bar`.

Data only (no numpy): every step is checked against the presets, the variant registry and
app.py's pages by tests/teach/test_lectures.py, which also checks the fact each talking point
states about the numbers on screen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from attnviz.scenarios.scenario import Scenario, with_variant
from attnviz.teach.text import lectures as text

# Scenario fields a step may set (each checked against its range by the tests); any other
# setting name must be one of the step's variant's own settings (``Variant.params``).
SCENARIO_SETTINGS = ("variant", "temperature", "scale_mode", "use_pe", "n_heads", "mask_kind",
                     "window")


@dataclass(frozen=True)
class Step:
    """One screen of a lecture.

    Attributes
    ----------
    page : str
        The page's path as app.py names it (``"pages/playground.py"``).
    preset : str
        A key of :data:`attnviz.scenarios.presets.PRESETS`, loaded as the whole scenario.
    talk : str
        The key of the talking point in ``attnviz.teach.text.lectures.TALK``.
    focus : str or None
        The Playground's focus (a key of ``attnviz.teach.text.playground.FOCUS``); None on
        other pages.
    settings : mapping of str to number, bool or text
        Changes on top of the preset: scenario fields of :data:`SCENARIO_SETTINGS` or settings
        of the (new) variant.
    show : str or None
        The key of the chart the talking point is about, on a page whose title and controls
        fill the first screen: the browser scrolls it up under the lecture bar when the step
        opens (``attnviz/ui/lecture_keys.js``). None: the page's top.
    """

    page: str
    preset: str
    talk: str
    focus: str | None = None
    settings: Mapping[str, object] = field(default_factory=dict)
    show: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))


@dataclass(frozen=True)
class Lecture:
    """An ordered path of steps; ``key`` is what a link names (``?lecture=<key>``)."""

    key: str
    title: str
    steps: tuple[Step, ...]


PLAYGROUND = "pages/playground.py"

SCRATCH = Lecture("scratch", text.LECTURE_TITLES["scratch"], (
    Step(PLAYGROUND, "seed_000", "scratch_projections", focus="projections"),
    Step(PLAYGROUND, "seed_000", "scratch_scores", focus="scores"),
    Step(PLAYGROUND, "seed_000", "scratch_weights", focus="weights"),
    Step("pages/step_by_step.py", "seed_002", "scratch_one_query"),
    Step(PLAYGROUND, "cat_sat", "scratch_decoder", focus="weights"),
    Step(PLAYGROUND, "cat_sat", "scratch_cold", focus="weights", settings={"temperature": 0.3}),
    Step(PLAYGROUND, "cat_sat", "scratch_hot", focus="weights", settings={"temperature": 3.0}),
    Step("pages/masks.py", "seed_000", "scratch_mask", settings={"mask_kind": "causal"},
         show="masks_fig_weights"),
    Step(PLAYGROUND, "cat_sat", "scratch_no_pe", focus="weights", settings={"use_pe": False}),
    Step("pages/multi_head.py", "seed_004_two_heads", "scratch_heads",
         show="multi_head_fig_head_0"),
    Step("pages/trace.py", "seed_000", "scratch_trace"),
))

MODERN = Lecture("modern", text.LECTURE_TITLES["modern"], (
    Step(PLAYGROUND, "cat_sat", "modern_baseline", focus="weights"),
    Step("pages/inference.py", "kv_decoding", "modern_kv_cache", show="inference_fig_call_weights"),
    Step(PLAYGROUND, "online_tiles", "modern_online", focus="weights"),
    Step("pages/modern.py", "rope_shift", "modern_rope", show="modern_fig_rope_scores"),
    Step("pages/modern.py", "rope_shift", "modern_rope_shift", settings={"rope_offset": 5},
         show="modern_fig_rope_scores"),
    Step(PLAYGROUND, "alibi_local", "modern_alibi", focus="heads"),
    Step(PLAYGROUND, "gqa_8_2", "modern_gqa", focus="heads",
         show="playground_fig_lecture_head_0"),
    Step(PLAYGROUND, "qk_norm_tamed", "modern_qk_norm", focus="weights"),
    Step(PLAYGROUND, "capped_at_2", "modern_capping", focus="scores"),
    # (8 and 10 tokens: the weights brought up under the bar, the row the talk names on screen
    # at 1024x768, where the controls and the bar leave the charts too little room)
    Step(PLAYGROUND, "ssmax_long", "modern_ssmax", focus="weights",
         show="playground_fig_weights_slot_1"),
    Step(PLAYGROUND, "sinks_streaming", "modern_sinks", focus="weights",
         show="playground_fig_weights_slot_1"),
))

BACKPROP = Lecture("backprop", text.LECTURE_TITLES["backprop"], (
    Step("pages/why_sqrt_dk.py", "seed_002", "backprop_variance", show="why_sqrt_dk_fig_variance"),
    Step(PLAYGROUND, "seed_002", "backprop_scaled", focus="weights"),
    Step(PLAYGROUND, "seed_002", "backprop_unscaled", focus="weights",
         settings={"scale_mode": "none"}),
    Step("pages/gradients.py", "seed_002", "backprop_gradients", show="gradients_scaled_fwd"),
    Step("pages/gradients.py", "seed_002", "backprop_saturated", settings={"scale_mode": "none"},
         show="gradients_scaled_fwd"),
    Step("pages/compare.py", "seed_002", "backprop_compare"),
    Step("pages/learn.py", "cat_sat", "backprop_learn", show="learn_fig_target"),
    Step("pages/induction.py", "seed_000", "backprop_induction"),
    Step("pages/quiz.py", "seed_000", "backprop_quiz"),
))

LECTURES: dict[str, Lecture] = {lec.key: lec for lec in (SCRATCH, MODERN, BACKPROP)}


def step_problem(lecture_key, step_text) -> str | None:
    """What is wrong with a link's ``?lecture=<lecture_key>&step=<step_text>``: ``"lecture"``
    (no such lecture), ``"step"`` (not a whole number from 1 to the lecture's number of steps,
    written in ASCII digits) or None (a step; ``step_text`` None means the first). Any value
    is refused without raising: links come from anyone."""
    if not isinstance(lecture_key, str) or lecture_key not in LECTURES:
        return "lecture"
    if step_text is None:
        return None
    if not isinstance(step_text, str) or not step_text.isascii() or not step_text.isdigit():
        return "step"
    if len(step_text) > 6 or not 1 <= int(step_text) <= len(LECTURES[lecture_key].steps):
        return "step"
    return None


def with_settings(scenario: Scenario, settings: Mapping[str, object]) -> Scenario:
    """The scenario with a step's settings on top: ``variant`` first (with the parts it reads;
    settings the new variant does not have are dropped by ``with_variant``), then the other
    scenario fields of ``SCENARIO_SETTINGS``, then the variant's own settings (any other
    name). Its title names the settings that have words (``text.SETTING_WORDS``: every
    lecture step's do), its description (the preset's claims) is dropped: the caption says
    what the step changed instead of "Edited from" the preset."""
    named = [text.SETTING_WORDS[item] for item in settings.items() if item in text.SETTING_WORDS]
    if named:
        scenario = replace(scenario, description="", title=text.STEP_TITLE.format(
            title=scenario.title, settings=", ".join(named)))
    variant = settings.get("variant", scenario.variant)
    if variant != scenario.variant:
        scenario = with_variant(scenario, variant)
    fields = {k: v for k, v in settings.items() if k in SCENARIO_SETTINGS and k != "variant"}
    params = {k: v for k, v in settings.items() if k not in SCENARIO_SETTINGS}
    if params:
        fields["params"] = {**scenario.params, **params}
    return replace(scenario, **fields)
