"""Sections that nothing else on their page depends on are st.fragments: a change inside one
reruns that section alone, on a server (checked here by rerunning the fragment the way the
server does, ``apptest_helpers.run_like_a_server``)."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import (
    chart_keys,
    chart_z_by_key,
    fragment_of,
    grid_state,
    open_page,
    run_like_a_server,
)

FRAGMENTS = {  # page: groups of widget keys, each group one fragment
    # (the base and d_model: the PE matrix's own sliders, see test_page_positional)
    "positional_encoding": [["positional_encoding_positions", "positional_encoding_dims"],
                            ["positional_encoding_perm_kind", "positional_encoding_perm_seed",
                             "positional_encoding_perm_case"]],
    "encoder_decoder": [["encoder_decoder_pool_w_v0", "encoder_decoder_pool_b_v0"]],
    "step_by_step": [["step_by_step_query"]],
}


@pytest.mark.parametrize("page", list(FRAGMENTS))
def test_independent_sections_are_fragments_of_their_own(page):
    at = open_page(page)
    ids = [{fragment_of(at, key) for key in group} for group in FRAGMENTS[page]]
    assert all(len(group) == 1 and None not in group for group in ids), ids
    assert len(set.union(*ids)) == len(ids)  # one fragment per section


def test_inputs_shared_by_the_whole_page_rerun_the_page():
    at = open_page("encoder_decoder")  # the lazy expanders opened: X is on the page
    assert fragment_of(at, "encoder_decoder_x_v0") is None
    assert fragment_of(at, "encoder_decoder_inputs") is None


def test_a_fragment_rerun_redraws_its_section_with_the_latest_scenario():
    """Edit the pooling's w: only that section reruns (its three charts are all that run
    draws), with the new w; a full run afterwards draws the same and every other chart."""
    at = open_page("encoder_decoder")
    sc = at.session_state["scenario"]
    keys = chart_keys(at)
    w = np.array([1.5, -0.5, 0.25])
    at.session_state["encoder_decoder_pool_w_v0"] = grid_state(
        {0: {f"d{j}": w[j] for j in range(3)}})
    run_like_a_server(at, "encoder_decoder_pool_w_v0")
    assert not at.exception
    e = np.tanh(sc.x @ w)  # independent: no PE in this preset, b = 0
    alpha = np.exp(e) / np.exp(e).sum()
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_weights")[0], alpha,
                               atol=1e-15)
    np.testing.assert_array_equal(at.session_state["scenario"].pool_w, w)
    assert chart_keys(at) == ["encoder_decoder_fig_pool_scores",
                              "encoder_decoder_fig_pool_context",
                              "encoder_decoder_fig_pool_weights"]
    at.run()
    assert chart_keys(at) == keys
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_weights")[0], alpha,
                               atol=1e-15)
