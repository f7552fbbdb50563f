"""Words of the Induction page (pages/induction.py, keys ``induction_``).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "SHIPPED_SOURCE": ("steps", "seed"),
    "RUN_SOURCE": ("steps", "seconds", "mb"),
    "HEAD_NAME": ("layer", "head"),
    "FORMED": ("previous", "induction", "threshold"),
    "NAMED_HEAD": ("head", "score"),
    "NOT_FORMED": ("previous_score", "previous", "induction_score", "induction"),
    "PHASE": ("step", "before", "after"),
    "PROGRESS": ("step", "steps", "loss"),
    "BUDGET_OUT": ("budget", "done", "steps"),
    "PAUSED": ("done", "steps"),
    "STOPPED": ("reason",),
    "STEPS_HELP": ("limit", "budget"),
    "LR_HELP": ("limit",),
    "LR_MISSING": ("limit",),
    "STEPS_MISSING": ("limit",),
    "ABLATED_LOSS": ("heads",),
    "OPENED": ("head",),
    "HEAD_TITLE": ("head",),
    "HEAD_DESCRIPTION": ("head", "role", "layer"),
    "ROLE_TITLE": ("head", "role"),
    "BEFORE": ("step",),
    "AFTER": ("step",),
}

HEADER = "Induction heads"
INTRO = (
    "A two-layer transformer learns to copy a repeated segment (“A B … A → B”): press Play "
    "and watch a previous-token head and an induction head form (Olsson et al. 2022)."
)
ABOUT_TITLE = "The model and the circuit"
ABOUT = (
    "A small attention-only transformer (token embedding, positions, layers of heads adding "
    "into a residual stream, unembedding) is trained to predict the next token of random "
    "sequences in which a segment repeats at a random place and distance (every gap between "
    "the two copies equally likely): “A B … A → B”. Nothing tells it "
    "how. It discovers a circuit of two heads (Olsson et al. 2022): a previous-token head in an "
    "early layer writes “the token before me was A” into every position, and an induction head "
    "in a later layer looks for the position whose previous token matches its own token and "
    "copies what stands there. The page opens on a model trained with the defaults and shipped "
    "with attnviz (its recorded training is replayed from its file); train it again below the "
    "grid, live."
)
# {steps}: training steps; {seed}: the seed
SHIPPED_SOURCE = ("Showing the shipped model: the defaults, {steps} steps, seed {seed} (made by "
                  "attnviz/io/examples/make_induction_model.py).")
# {steps}: steps taken; {seconds}: training time; {mb}: the run's memory in MB
RUN_SOURCE = ("Showing your run: {steps} steps trained in {seconds} s. It holds {mb} MB in "
              "this session (one run per session: a new Train replaces it).")
BACK_TO_SHIPPED = "Back to the shipped model"

# {layer}, {head}: indices from 0
HEAD_NAME = "L{layer} H{head}"
ROLE_NAMES = {"previous": "previous-token head", "induction": "induction head", "": "head"}
GRID_ROLES = {"previous": "previous-token", "induction": "induction"}  # a grid title: one line
# {previous}, {induction}: the named heads (NAMED_HEAD), highest score first; {threshold}: the
# score a head is named at
FORMED = ("The circuit formed. Previous-token heads: {previous}. Induction heads: {induction} "
          "(prefix-matching score). Every head scoring {threshold} or more is named, by its "
          "scores, not by its place.")
# {head}: a head's name; {score}: its score
NAMED_HEAD = "{head} ({score})"
# {previous}, {induction}: head names; {previous_score}, {induction_score}: their scores
NOT_FORMED = ("No induction circuit: the best previous-token score is {previous_score} "
              "({previous}) and the best prefix-matching score {induction_score} "
              "({induction}); both must reach 0.5, the induction head in a later layer.")
# {step}: the step of the steepest fall; {before}, {after}: the smoothed loss around it
PHASE = ("Phase change around step {step}: the smoothed training loss falls from {before} to "
         "{after} — the moment the two heads start working together.")
NO_PHASE = "No phase change in this loss curve (no abrupt fall)."

WATCH_TITLE = "Watch it form"
WATCH_CAPTION = (
    "Every head's attention on one held-out sequence whose segment repeats (rows: queries, "
    "columns: keys, both labelled position:token). Drag the slider or press Play: the "
    "previous-token head's pattern becomes the line just below the diagonal; the induction "
    "head's becomes a line in the second copy pointing one past the first copy's matching "
    "token. The red dot follows the step on the loss curve; the shaded band is the phase change."
)
LOSS_AXIS = "training loss"
STEP_AXIS = "step"
STEP_PREFIX = "step "
PLAY = "▶ Play"
PAUSE = "❚❚ Pause"
QUERY_AXIS = "query"
KEY_AXIS = "key"

SCORES_TITLE = "Scores of every head over training"
SCORES_CAPTION = (
    "Previous-token score: mean attention from each position to the one before it. "
    "Prefix-matching score: mean attention from a repeated token to the position right after "
    "its earlier occurrence. Copying score: Σλ/Σ|λ| over the eigenvalues of the head's OV "
    "circuit — 1 when attending to a token raises that token's own logit. Uniform causal "
    "attention scores 0.12 and 0.05 on this sequence; a head counts as formed at 0.5."
)
SCORE_NAMES = {"previous": "previous-token", "prefix": "prefix-matching", "copying": "copying"}
SCORE_AXIS = "score"

POSITION_TITLE = "In-context loss by position"
POSITION_CAPTION = (
    "The next-token loss of the held-out sequence at every position, before and after "
    "training. Shaded: the positions whose next token the repeat makes predictable (inside "
    "the second copy of the segment), the only predictions the task trains. There the loss "
    "falls to nearly 0 — late tokens are predicted from context, early ones cannot be. "
    "Elsewhere the next token is random (ln(vocabulary) at best) and untrained: the trained "
    "model is no better there, often worse — confident in a wrong token."
)
POSITION_AXIS = "position (predicting the next token)"
NLL_AXIS = "next-token loss (nats)"
BEFORE = "before training (step {step})"  # {step}: the first recorded step
AFTER = "after training (step {step})"  # {step}: the last recorded step
ABLATED_LINE = "with the ablated heads zeroed"

ABLATION_TITLE = "Ablation: zero a head"
ABLATION_LABEL = "Heads to zero (their output is not added to the residual stream)"
ABLATION_HELP = ("Zero the induction head and the loss on the repeat goes back up; zero "
                 "the previous-token head and the induction head has nothing to match.")
LOSS_ALL = "Loss on the repeat, every head on"
# {heads}: the zeroed heads' names
ABLATED_LOSS = "Loss with {heads} zeroed"
NOTHING_ABLATED = "Tick a head to zero it."
LOSS_NOTE = ("The task loss of a fixed batch of 32 repeated sequences, counted on the "
             "predictions a repeat makes possible. Chance is ln(vocabulary).")

RESIDUAL_TITLE = "Residual stream: what each layer adds"
RESIDUAL_CAPTION = (
    "The length ‖·‖ of what is written into the residual stream at each position: the "
    "embedding (token + position), then each head's output (zero for an ablated head). "
    "Every layer reads the sum of everything above it."
)
RESIDUAL_ROWS = {"embed": "embedding"}
RESIDUAL_AXIS = "position:token"

OPEN_TITLE = "Open a head on every page"
OPEN_CAPTION = (
    "Makes one head the current scenario: its input x (the residual stream entering its layer "
    "on the held-out sequence), its W_Q, W_K, W_V and W_O, causal, scale 1/√d_k. Step by "
    "step, Trace a cell, Gradients and Compare then show that head."
)
OPEN_LAYER = "Layer"
OPEN_HEAD = "Head"
OPEN_BUTTON = "Open this head"
# {head}: the head's name
OPENED = "{head} is now the current scenario. Open it on:"
OPEN_PAGES = {"pages/step_by_step.py": "Step by step", "pages/trace.py": "Trace a cell",
              "pages/gradients.py": "Gradients", "pages/compare.py": "Compare"}  # app.py's titles
CANNOT_OPEN = "This head cannot be opened"
# {head}: the head's name
HEAD_TITLE = "Induction model, {head}"
# {head}: the head's name; {role}: what its scores say it is; {layer}: its layer
HEAD_DESCRIPTION = ("{head} ({role}) of the trained induction model, on the held-out repeated "
                    "sequence; x is the residual stream entering layer {layer}.")
# {head}: the head's name; {role}: what its scores say it is (GRID_ROLES)
ROLE_TITLE = "{head} · {role}"

TRAIN_TITLE = "Train it again, live"
TRAIN_CAPTION = (
    "A fresh model from random weights (vocabulary 16, 24 tokens, width 32, Adam, batch 32). "
    "The defaults form both heads in a few seconds; the grid above then replays your run."
)
LAYERS_LABEL = "Layers"
HEADS_LABEL = "Heads per layer"
POSITIONAL_LABEL = "Positional information"
POSITIONAL_HELP = ("Learned and sinusoidal add a position vector to each token's embedding. RoPE "
                   "turns every head's queries and keys by their positions, so a score depends "
                   "on the distance between two tokens. ALiBi subtracts each head's slope times "
                   "that distance from the scores. None leaves the causal mask as the only clue "
                   "to order.")
POSITIONAL_NAMES = {"learned": "learned", "sinusoidal": "sinusoidal", "rope": "RoPE",
                    "alibi": "ALiBi", "none": "none"}
LR_LABEL = "Learning rate"
# {limit}: the largest learning rate
LR_HELP = "Adam's learning rate, above 0 and at most {limit}."
STEPS_LABEL = "Steps"
# {limit}: the largest number of steps; {budget}: seconds one click may train
STEPS_HELP = ("At most {limit} steps. One click trains for at most {budget} s (Continue goes on "
              "from there), so the server stays responsive for everyone.")
# {limit}: the largest learning rate
LR_MISSING = (
    "the learning rate box holds no number: it is empty, or what was sent is not a finite "
    "number (NaN or infinity); type a number above 0 and at most {limit}"
)
# {limit}: the largest number of steps
STEPS_MISSING = (
    "the steps box holds no number: it is empty, or what was sent is not a finite number (NaN "
    "or infinity); type a whole number from 1 to {limit}"
)
SEED_LABEL = "Seed"
TRAIN_BUTTON = "Train"
STOP_BUTTON = "Stop"
CONTINUE_BUTTON = "Continue training"
# {step}, {steps}: steps done and asked for; {loss}: the current training loss
PROGRESS = "step {step} of {steps}: loss {loss}"
# {budget}: seconds one click may train; {done}, {steps}: steps taken and asked for
BUDGET_OUT = ("One click trains for at most {budget} s so that every session stays responsive: "
              "this run reached step {done} of {steps}. Press Continue training to go on.")
# {done}, {steps}: steps taken and asked for
PAUSED = ("Training was stopped at step {done} of {steps} (by Stop, another control or leaving "
          "the page). Press Continue training to go on.")
# {reason}: why training ended early
STOPPED = "Training ended early — {reason}. The last finite weights are kept."
CANNOT = "Cannot train with these settings"
STALE = ("The settings changed since this run: press Train to train on them (the figures "
         "below are of the previous run).")

EXPERIMENTS_TITLE = "Experiments for a class"
EXPERIMENTS_CAPTION = ("Each button sets the settings (the rest at their defaults); then press "
                       "Train.")
EXPERIMENTS = {  # short: each button is as wide as its label
    "defaults": "The defaults",
    "one_layer": "One layer",
    "no_positions": "No positions",
    "one_head": "One head per layer",
    "high_lr": "Learning rate × 10",
}
EXPERIMENT_NOTES = {
    "defaults": "2 layers × 2 heads, learned positions, Adam 0.01, 300 steps: both heads form, "
                "with a phase change in the loss.",
    "one_layer": "No induction head can form: the only layer's heads see the tokens, never "
                 "“the token before” (no earlier layer wrote it), so the loss on the repeat "
                 "falls only a little, with no phase change.",
    "no_positions": "Without positions a head can match content but not place, so none "
                    "learns “attend to the token before me”: no previous-token head, no "
                    "circuit.",
    "one_head": "Still forms: the circuit needs one head in each of two layers — depth "
                "matters, not width.",
    "high_lr": "Ten times the default rate: Adam's steps overshoot, the loss ends above where "
               "it started and neither head forms.",
}
