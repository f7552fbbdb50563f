"""Every layout number of the dashboard, named once: column ratios and chart heights.

A page or a ``attnviz.ui`` helper writes ``st.columns(layout.LECTURE_INPUTS)``, never a ratio of
its own, so a layout can be tuned (or checked against a screen size) in this one file. Ratios are
relative widths as ``st.columns`` takes them; heights are CSS pixels.
"""

from __future__ import annotations

# --- Playground: the row above the charts ----------------------------------------------------
# every choice and the variant's name stay whole: the variant box gets 9/24 (every variant's name
# fits it with the sidebar open at 1024 px: tests/browser/test_lecture.py)
PICK_SCALE = [9, 15]  # variant | scale (the focus tabs are under the controls)

# --- Playground: the lecture view -------------------------------------------------------------
LECTURE_INPUTS = [3, 2]  # the editor | tokens and settings
# the three charts when only the first draws the row labels, beside the sidebar: the first gets
# their room (presenter mode keeps equal thirds: its numbers need them)
LABELLED_FIRST = [1.3, 1, 1]
EQUAL_THIRDS = 3
# presenter mode: the charts' heights follow the screen (plotly_fit.js), each row between these
PRESENTER_MIN_ROW_PX = 20  # room for 14 px numbers
PRESENTER_MAX_ROW_PX = 160
# presenter mode: the weights' chart gets the width its numbers need at 14 px on the narrowest
# classroom screen (1024 px: ~944 px for the three charts), at least a third, at most WEIGHTS_MOST
PRESENTER_ROW_WIDTH_PX = 944
WEIGHTS_COLUMN_PX = 42  # one column of the weights' cells ("0.000" at 14 px: 40 px, with room)
WEIGHTS_FRAME_PX = 100  # the weights' chart beyond its cells (colour bar, margins, turned labels)
WEIGHTS_MOST = 0.6
OTHERS_LEAST = 0.16  # ... the two others share the rest by their columns, at least this each
PRESENTER_TOKENS = 1.5  # presenter mode, above the charts: the tokens' width beside each
# setting's 1 (τ, positional encoding, heads, the variant's own), at least; as wide as the
# sentence needs (up to PRESENTER_TOKENS_MOST), and a number box as wide as its number needs:
# widths in units of PRESENTER_UNIT_PX, measured at 1024 px (ui/lecture.py param_width)
PRESENTER_TOKENS_MOST = 4
PRESENTER_UNIT_PX = 90  # a width of 1 (the row's unit)
PRESENTER_TEXT_CHAR_PX = 9  # a character of the tokens (presenter mode's 1.2rem)
PRESENTER_DIGIT_PX = 10.5  # a digit of a number box
PRESENTER_BOX_PX = 40  # a box's padding and border
PRESENTER_STEPPERS_PX = 64  # a number box's − and + buttons
PRESENTER_CAPTION_CHAR_PX = 8  # a character of a caption (1rem) ...
PRESENTER_CAPTION_LINES = 3  # ... on at most this many lines, beside the button under it
PRESENTER_DROP = 2.0  # the column of a model's frequencies at least ("Use the base")
PRESENTER_OWN_MOST = 4  # a variant with more settings of its own keeps the unused ones ...
PRESENTER_MORE = 1.5  # ... behind a "More" button of this width (ui/lecture.py folded_params)
PRESENTER_HEAD_SWITCH = 2.5  # ... and the head switch's (up to HEADS_IN_ROW heads; more: a
HEADS_IN_ROW = 4  # select box of this width, so the row stays one row)
PRESENTER_HEAD_SELECT = 1.2
HEADS_PER_ROW = 4  # the heads focus: thumbnails per row
# presenter mode: every head of the heads focus on the first screen (the heights follow it)
PRESENTER_HEADS_MIN_ROW_PX = 8  # a thumbnail's row at least (no number below 14 px: hover)
HEAD_TITLE_PX = 56  # a grid row of heads above its chart: the head's name and the gaps

# --- Playground: every matrix ------------------------------------------------------------------
FULL_INPUTS = [4, 8]  # inputs | every matrix

# --- Other pages ---------------------------------------------------------------------------------
NARROW_LEFT = [2, 3]  # a narrower column beside a wider one (a vector | a longer one)
WIDE_LEFT = [3, 2]  # a wider column beside a narrower one (a chart | its controls)
PICK_BESIDE_FIGURE = [1, 2]  # Step by step: the query picker | its figure
LABEL_BESIDE_CONTROL = [1, 3]  # Multi-head: the head count | the widths it gives
LOSS_HEAD_PATTERN = [3, 2, 3]  # Gradients: the loss | the head | the target pattern
SINK_COLUMNS = [4, 4, 3]  # Inference, sinks: the mask | the weights | each row's shares
TRACE_COLUMNS = [5, 7]  # Trace: the inputs | the traced cell
TRACE_COLUMNS_PRESENTER = [2, 1]  # ... in presenter mode (the weights' numbers need the room)
TWO_BUTTONS = [1, 1, 4]  # Quiz: two buttons side by side, the rest of the row empty
TASK_FIELDS_HEAD = [3, 3, 2]  # Learn: the task | the trained fields | the head
TRAINING_SETTINGS = [2, 3, 2, 3, 2]  # Learn: optimizer | rate | steps | start | seed
TRAIN_BUTTONS = [1, 2, 6]  # Learn: Train | Continue, the rest of the row empty

# --- Chart and table heights (px) ------------------------------------------------------------
LINE_CHART_PX = 340  # Positional encoding: the curves beside them
WRITTEN_LINES_PX = 420  # Step by step: written arithmetic beyond WRITTEN_LINES_FIT lines
WRITTEN_LINES_FIT = 16  # ... up to this many lines it takes the room it needs
TABLE_HEADER_PX = 38  # a table's header row (st.dataframe) ...
TABLE_ROW_PX = 35  # ... each of its rows ...
TABLE_MAX_PX = 400  # ... and the most it takes before it scrolls
