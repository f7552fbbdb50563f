"""AppTest: the text around the numbers follows them at once.

The sidebar's "Current scenario" is written after the page ran, so it shows the page's own
change in the same run; counts read "1 token", "2 heads".
"""

from __future__ import annotations

from apptest_helpers import edit_cells, open_page

from attnviz.scenarios.registry import VARIANTS
from attnviz.teach.text import common


def sidebar_texts(at) -> list[str]:
    return [t.value for t in at.sidebar.text]


def summary(at) -> str:
    """The sidebar's line naming the variant and the sizes."""
    return next(t for t in sidebar_texts(at) if "d_model" in t)


def test_the_summary_shows_a_variant_picked_on_the_page_in_the_same_run():
    at = open_page("playground")
    assert summary(at).startswith(VARIANTS["scaled_dot_product"].name)
    at.selectbox(key="playground_variant_v0").set_value("causal").run()
    assert summary(at).startswith(VARIANTS["causal"].name)


def test_the_summary_counts_heads_and_tokens_in_words():
    at = open_page("playground")
    at.number_input(key="playground_d_k_v0").set_value(4).run()
    at.number_input(key="playground_d_v_v1").set_value(4).run()
    at.selectbox(key="playground_variant_v2").set_value("multi_head").run()
    at.select_slider(key="playground_n_heads_v2").set_value(2).run()
    assert summary(at).endswith("· 2 heads")
    at.select_slider(key="playground_n_heads_v2").set_value(1).run()
    assert summary(at).endswith("· 1 head")
    at.text_input(key="playground_tokens").input("solo").run()
    assert "\n1 token · d_model" in summary(at)


def test_the_summary_follows_a_cell_edit_that_changes_nothing_it_shows():
    """A cell edit keeps the variant and sizes: the summary stays, and no exception."""
    at = open_page("playground")
    before = summary(at)
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "2"}})
    assert not at.exception and summary(at) == before


def test_count_words():
    assert common.count(1, "token") == "1 token"
    assert common.count(0, "head") == "0 heads"
    assert common.count(3, "token") == "3 tokens"


def test_a_typed_sentence_gets_real_vectors_and_says_which_are_new():
    """No silent zero rows; the message names the new and repeated words."""
    import numpy as np

    from attnviz.scenarios.presets import PRESETS
    from attnviz.scenarios.tokens import spread, word_vector

    at = open_page("playground")
    at.text_input(key="playground_tokens").input("the cat sat on the mat").run()
    assert not at.exception
    sc = at.session_state["scenario"]
    old = PRESETS["seed_000"].build().x
    np.testing.assert_array_equal(sc.x[4], sc.x[0])
    np.testing.assert_array_equal(sc.x[5], word_vector("mat", 3, spread(old)))
    said = " ".join(i.value for i in at.info)
    assert common.TOKENS_NEW_VECTORS.format(words="mat") in said
    assert common.TOKENS_REUSED_VECTORS.format(words="the") in said
    at.run()  # said once: gone on the next run
    assert common.TOKENS_NEW_VECTORS.format(words="mat") not in " ".join(i.value for i in at.info)


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_a_preset_caption_holds_only_while_the_scenario_is_that_preset():
    """After an edit the page, the sidebar, the link and the file say
    "Edited from <preset>" and drop the preset's claims about the notebook's numbers."""
    import json

    from attnviz.io import scenario_io
    from attnviz.scenarios.presets import EDITED_FROM, PRESETS, with_true_title
    from attnviz.ui.safe import md_escape

    seed = PRESETS["seed_002"].build()
    at = open_page("playground")  # the full view: title and description
    at.selectbox(key="sidebar_preset").set_value("seed_002").run()
    at.button(key="sidebar_load_preset").click().run()
    claim = md_escape(seed.description)[:30]  # the notebook's scores
    assert md_escape(seed.title) in captions(at) and claim in captions(at)
    version = at.session_state["editor_version"]
    # in a browser the editor's change callback stores the edit before the run draws the
    # caption; AppTest cannot deliver a grid edit that way, so look at the next run
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "9"}}).run()
    edited = EDITED_FROM.format(title=seed.title)
    assert md_escape(edited) in captions(at)
    assert claim not in captions(at)
    assert any(edited in t for t in sidebar_texts(at))
    saved = json.loads(scenario_io.to_json(with_true_title(at.session_state["scenario"])))
    assert saved["title"] == edited and saved["description"] == ""
    # editing the cell back makes it the preset again
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": repr(float(seed.x[0, 0]))}}).run()
    assert any(seed.title == t for t in sidebar_texts(at))


def test_a_seed_preset_says_where_it_differs_from_its_notebook_while_it_is_that_preset():
    """The note (with the notebook's printed value) is beside the numbers."""
    from attnviz.scenarios.presets import PRESETS
    from attnviz.ui.safe import md_escape

    at = open_page("playground")
    at.selectbox(key="sidebar_preset").set_value("seed_004_sleepy").run()
    at.button(key="sidebar_load_preset").click().run()
    note = md_escape(PRESETS["seed_004_sleepy"].fidelity)
    assert note in captions(at) and "0.1116" in PRESETS["seed_004_sleepy"].fidelity
    at.slider(key=f"playground_temperature_v{at.session_state['editor_version']}") \
        .set_value(2.0).run()
    assert note not in captions(at)  # edited: the note no longer describes these numbers
    for key in ("seed_000", "seed_001_causal", "seed_002", "seed_003_glorot",
                "seed_004_two_heads"):
        assert PRESETS[key].fidelity, key


def test_save_and_share_names_the_scenario_as_the_sidebar_does():
    """Save & share's "Current scenario" says "Edited from <preset>" once the preset's numbers
    are edited, with the sidebar's own line of variant and sizes (it repeated the preset's
    title beside other numbers)."""
    from apptest_helpers import switch_to

    from attnviz.scenarios.presets import EDITED_FROM, PRESETS
    from attnviz.teach.text import share as share_text

    seed = PRESETS["seed_000"].build()
    at = open_page("playground")
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "7"}}).run()
    at = switch_to(at, "share")
    edited = EDITED_FROM.format(title=seed.title)
    current = next(t.value for t in at.text if t.value.startswith("Current scenario"))
    assert current == share_text.CURRENT.format(title=edited, summary=summary(at))
    assert any(edited == t for t in sidebar_texts(at))


def test_a_scenario_opened_from_a_link_reads_edited_from_once_edited():
    """A scenario opened whole from elsewhere (here a link; a real model's head and a trained
    induction head the same way) keeps its title while its numbers are the ones opened, and
    reads "Edited from <title>" in the sidebar, the captions and the saved file once edited."""
    import json
    from dataclasses import replace

    from apptest_helpers import APP, set_focus
    from streamlit.testing.v1 import AppTest

    from attnviz.io import scenario_io
    from attnviz.scenarios.presets import EDITED_FROM, PRESETS, with_true_title
    from attnviz.ui import state
    from attnviz.ui.safe import md_escape

    sc = replace(PRESETS["seed_002"].build(), title="gpt2 layer 1, head 2",
                 description="x is the hidden state")
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params[scenario_io.LINK_PARAM] = scenario_io.to_link_param(sc)
    at.switch_page("pages/playground.py")
    set_focus(at, "all")
    at.run()
    assert not at.exception
    assert any(sc.title == t for t in sidebar_texts(at))
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "9"}}).run()
    edited = EDITED_FROM.format(title=sc.title)
    assert any(edited == t for t in sidebar_texts(at))
    assert md_escape(edited) in captions(at)
    assert sc.description not in captions(at)
    assert state.ORIGINS in at.session_state
    saved = json.loads(scenario_io.to_json(with_true_title(at.session_state["scenario"],
                                                           at.session_state[state.ORIGINS])))
    assert saved["title"] == edited


def test_with_true_title_wraps_an_opened_title_once_and_only_after_an_edit():
    from dataclasses import replace

    from attnviz.scenarios.fingerprint import fingerprint
    from attnviz.scenarios.presets import EDITED_FROM, PRESETS, with_true_title

    sc = replace(PRESETS["seed_002"].build(), title="bert layer 0, head 3")
    origins = {sc.title: fingerprint(sc)}
    assert with_true_title(sc, origins).title == sc.title
    assert with_true_title(sc).title == sc.title  # no origins: as it is
    x = sc.x.copy()
    x[0, 0] += 1
    edited = with_true_title(replace(sc, x=x), origins)
    assert edited.title == EDITED_FROM.format(title=sc.title) and edited.description == ""
    # a link keeps the edited title; reopened and edited again, it is not wrapped twice
    again = replace(edited, x=x + 1)
    assert with_true_title(again, {edited.title: fingerprint(edited)}).title == edited.title
