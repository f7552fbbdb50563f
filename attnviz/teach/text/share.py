"""Save & share: the page's own words (the shared download and link widgets are in ``common``).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "CURRENT": ("title", "summary"),
}

INTRO = (
    "Keep or hand on the exact scenario (tokens, embeddings, every weight matrix, variant, "
    "settings and masks): as a file, or as a link that opens it on any machine running "
    "attnviz. Download the matrices behind the figures, and choose how charts save images."
)

MATRICES = (
    "Every matrix of the current scenario, computed as on the Playground: CSV for one matrix "
    "(row and column labels included), or all of them as .npz (np.load(f, allow_pickle=False)) "
    "or JSON. Masked scores are −∞: -inf in CSV, the string \"-inf\" in JSON."
)

TITLE = "Save & share"
# {title}: the scenario's title as the sidebar shows it ("Edited from ..." once edited), or
# UNTITLED; {summary}: the sidebar's line of its variant, tokens and width (sidebar.summary)
CURRENT = "Current scenario: {title}\n{summary}"
UNTITLED = "your edited scenario"
FILE_TITLE = "Scenario file"
LINK_TITLE = "Link"
MATRICES_TITLE = "Matrices"
IMAGES_TITLE = "Images"
