"""Words of the circuits section of the Model view (attnviz/ui/circuits_view.py, keys
``model_view_circuits_``): which heads are previous-token, induction, duplicate-token and
first-token heads, and the figures that rank and colour them.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "HEAD": ("layer", "head"),
    "NAMED": ("kind", "heads"),
    "NONE_NAMED": ("kind", "threshold"),
    "ON_TEXT": ("t",),
    "ON_TEXT_SEQ2SEQ": ("t",),
    "PROBE_DONE": ("batch", "length", "first", "t"),
    "PROBE_FIRST": ("token",),
    "CANNOT_PROBE": ("reason",),
    "THRESHOLD_NOTE": ("threshold",),
    "NO_REPEAT": ("kinds",),
    "GRID_TITLE": ("kind",),
    "HEAD_TICK": ("head",),
    "LAYER_TICK": ("layer",),
    "SEQ2SEQ_STACK": ("stack",),
}

TITLE = "Circuits: what each head does"
CAPTION = (
    "Every head scored by where its attention goes (Olsson et al. 2022): a previous-token head "
    "looks at the token just before; an induction head looks at the token right after an "
    "earlier copy of its own token (“A B … A → B”); a duplicate-token head looks at earlier "
    "copies of its own token; a first-token head (an attention sink) parks its attention on "
    "the first token. Each score is the share of a head's attention on those keys."
)
# {threshold}: the score at or above which a head is named
THRESHOLD_NOTE = ("A head is named for a score of {threshold} or more — most of its attention "
                  "on the keys the mechanism names. Every such head is named, not only the "
                  "top one.")
KIND_LABEL = "Rank and colour by"
KINDS = {
    "previous_token": "previous-token",
    "induction": "induction (prefix-matching)",
    "duplicate_token": "duplicate-token",
    "first_token": "first-token (sink)",
    "copying": "copying (OV eigenvalues)",
}
ROLES = {  # a head's role in the table's last column
    "previous_token": "previous-token",
    "induction": "induction",
    "duplicate_token": "duplicate-token",
    "first_token": "sink",
}
# {layer}, {head}: indices from 0
HEAD = "L{layer} H{head}"
# {kind}: a score's name (KINDS); {heads}: the named heads, highest first
NAMED = "**{kind} heads:** {heads}."
# {kind}: a score's name (KINDS); {threshold}: the naming threshold
NONE_NAMED = "**{kind} heads:** none reaches {threshold}."
COPYING_NOTE = ("The copying score (Σλ/Σ|λ| over the eigenvalues of the head's OV circuit "
                "W_E W_V W_O W_U, norms and biases left out) says whether attending to a "
                "token raises that token's own logit: 1 a pure copier, −1 the opposite. It "
                "names no head by itself.")

# {t}: tokens of the text
ON_TEXT = ("Scores on the text shown above ({t} tokens). An induction or duplicate-token "
           "head shows only where a token repeats; the probe below repeats every token.")
# {t}: the tokens of the encoder–decoder model's text scored (its source or its target)
ON_TEXT_SEQ2SEQ = ("Scores on the text shown above ({t} tokens). An induction or "
                   "duplicate-token head shows only where a token repeats: capture a text "
                   "that repeats some words.")
# {kinds}: the scores that need a repeated token
NO_REPEAT = "No token of this text repeats: the {kinds} scores need one."
PROBE_TITLE = "Probe the model with repeated random tokens"
PROBE_CAPTION = (
    "Olsson et al.'s test: random tokens, then the same tokens again. Only copying from "
    "context can predict the second copy, and every score names its keys exactly. The model "
    "is loaded again from its folder and run once on a batch of such sequences."
)
PROBE_BUTTON = "Find the circuits"
PROBING = "Running the model on repeated random tokens…"
# {batch}: sequences; {length}: random tokens in one copy; {first}: PROBE_FIRST or ""; {t}: tokens
PROBE_DONE = ("Scores on {batch} sequences of {length} random tokens repeated once{first} "
              "({t} tokens each); each score is the mean over them.")
# {token}: the id of the token put first
PROBE_FIRST = ", after the model's first token (id {token})"
# {reason}: why the probe failed
CANNOT_PROBE = "The probe could not run: {reason}."
NO_MODEL = ("These weights come from a file, not a model folder: the scores below are on its "
            "text alone. Load a model folder to probe it with repeated random tokens.")
# {stack}: the self-attention scored (model_view.KIND_NAMES: encoder or decoder self-attention)
SEQ2SEQ_STACK = (
    "An encoder–decoder model: these scores are of its {stack}, the one the Attention choice "
    "above shows (the cross-attention picked: the decoder's, whose causal self-attention is "
    "where induction heads copy; a query and its keys in one sequence is what the scores "
    "measure, which cross-attention has not). The repeated-token probe runs one-stack models "
    "only."
)

TABLE_RANK = "rank"
TABLE_HEAD = "head"
TABLE_NAMED = "named"
NO_SCORE = "—"  # a score with no query (no repeated token)
# {kind}: the score the grid is coloured by
GRID_TITLE = "{kind} score of every head"
GRID_LAYER = "layer"
HEAD_TICK = "H{head}"  # {head}: index from 0
LAYER_TICK = "L{layer}"  # {layer}: index from 0
