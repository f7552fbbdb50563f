"""The lecture view's chart widths in presenter mode (``lecture.presenter_widths``): a real
model's head (d_v = 64 output columns beside 8 tokens) had left the scaled scores, which carry
the row labels and a colour bar, two pixels for their cells at 1024×768, the output taking
the rest for 64 columns too narrow for any number."""

from __future__ import annotations

import pytest

from attnviz.ui import layout
from attnviz.ui.lecture import presenter_widths


@pytest.mark.parametrize("t", [4, 6, 8, 10])
@pytest.mark.parametrize("d_v", [2, 3, 8, 16, 64, 768])
def test_the_output_is_never_wider_than_the_scaled_scores(t, d_v):
    scaled, weights, output = presenter_widths("weights", t, d_v)
    assert scaled + weights + output == pytest.approx(1)
    assert output <= scaled + 1e-12
    assert min(scaled, output) >= layout.OTHERS_LEAST - 1e-12


def test_a_real_heads_scaled_scores_keep_half_of_what_the_weights_leave():
    scaled, weights, output = presenter_widths("weights", 8, 64)
    assert scaled == pytest.approx((1 - weights) / 2)


def test_a_narrow_output_keeps_its_share_by_columns():
    # d_v = 3 (a typed sentence on the default scenario): unchanged, the scores take the rest
    assert presenter_widths("weights", 8, 3)[2] == pytest.approx(layout.OTHERS_LEAST)
    assert presenter_widths("scores", 8, 64) == layout.EQUAL_THIRDS
