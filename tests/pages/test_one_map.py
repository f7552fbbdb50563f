"""AppTest: presenter mode shows one map large at a time where a page draws several side by
side (attnviz/ui/one_map.py): Masks' four maps, Compare's A / B / A − B, Multi-head's heads
when they would not keep a number in every cell side by side. The map shown has its height
fitted to the screen (the chart component's ``fit``); outside presenter mode every map is
drawn as before. Whether the numbers are then written at a projector's sizes is measured in
the browser: tests/browser/readable_walk.py."""

from __future__ import annotations

from apptest_helpers import chart_keys, open_page, spec_by_key, switch_to

from attnviz.teach.text import compare as ctext
from attnviz.ui import layout, one_map

EIGHT = "the teacher wrote eight words on the board"


def presenter(at):
    at.toggle(key="presenter_mode").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def fitted(at, key: str) -> dict:
    spec = spec_by_key(at, key)  # the figure's own intent, or the view it is shown with
    return (spec["layout"].get("meta", {}).get("attnviz", {}).get("fit")
            or spec.get("view", {}).get("fit"))


def test_masks_shows_one_map_in_presenter_mode_picked_above_it():
    at = open_page("masks")
    maps = ["masks_fig_mask", "masks_fig_masked", "masks_fig_weights", "masks_fig_nomask"]
    assert [k for k in chart_keys(at) if k in maps] == maps
    presenter(at)
    assert [k for k in chart_keys(at) if k in maps] == ["masks_fig_weights"]
    assert fitted(at, "masks_fig_weights")["rows"] == 4
    at.segmented_control(key="masks_map").set_value("masked").run()
    assert [k for k in chart_keys(at) if k in maps] == ["masks_fig_masked"]


def test_compare_shows_one_side_in_presenter_mode():
    at = open_page("compare")
    sides = [k for k in chart_keys(at) if k.startswith("compare_fig_")]
    assert len(sides) == 6
    presenter(at)
    assert [k for k in chart_keys(at) if k.startswith("compare_fig_")] == \
        ["compare_fig_weights_a", "compare_fig_output_a"]
    assert fitted(at, "compare_fig_weights_a") and not fitted(at, "compare_fig_output_a")
    # the caption names the colour scale of the map shown: A's is not centred at 0
    assert not any(ctext.DIFF in c.value for c in at.caption)
    at.segmented_control(key="compare_side").set_value("diff").run()
    assert [k for k in chart_keys(at) if k.startswith("compare_fig_")] == \
        ["compare_fig_weights_diff", "compare_fig_output_diff"]
    assert any(ctext.DIFF in c.value for c in at.caption)


def test_multi_head_shows_one_head_when_the_heads_side_by_side_are_too_narrow():
    at = open_page("multi_head")
    heads = [k for k in chart_keys(at) if k.startswith("multi_head_fig_head_")]
    presenter(at)  # four tokens: the heads side by side keep their numbers
    assert [k for k in chart_keys(at) if k.startswith("multi_head_fig_head_")] == heads
    assert len(heads) == 3 and "multi_head_map" not in [s.key for s in at.segmented_control]
    at.text_input(key="multi_head_tokens").set_value(EIGHT).run()
    assert not at.exception, [e.message for e in at.exception]
    assert [k for k in chart_keys(at) if k.startswith("multi_head_fig_head_")] == \
        ["multi_head_fig_head_0"]
    at.segmented_control(key="multi_head_map").set_value(2).run()
    assert [k for k in chart_keys(at) if k.startswith("multi_head_fig_")][:2] == \
        ["multi_head_fig_head_2", "multi_head_fig_out_2"]
    switch_to(at, "masks")  # the other pages keep the sentence
    assert fitted(at, "masks_fig_weights")["rows"] == 8


def test_side_by_side_counts_the_columns_a_number_needs():
    one = layout.WEIGHTS_COLUMN_PX
    frame = layout.WEIGHTS_FRAME_PX
    room = layout.PRESENTER_ROW_WIDTH_PX
    assert one_map.side_by_side(3, 4) and one_map.side_by_side(2, 8)
    assert not one_map.side_by_side(3, 8) and not one_map.side_by_side(2, 10)
    assert one_map.side_by_side(1, (room - frame) // one)
