"""Words of the Learn page (pages/learn.py, keys ``learn_``).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "STEPS_HELP": ("limit", "budget"),
    "STOPPED": ("reason",),
    "DONE": ("steps", "seconds", "first", "last"),
    "PROGRESS": ("step", "steps", "loss"),
    "PROGRESS_FIT": ("fit", "steps", "budget"),
    "BUDGET_OUT": ("budget", "done", "steps"),
    "PAUSED": ("done", "steps"),
}

HEADER = "Learn: watch attention being trained"
INTRO = (
    "W_Q, W_K and W_V are not given: they are learned. Pick what the head should do and which "
    "matrices may change, press Train, and step through the recorded training: the loss, "
    "the attention weights and the trained matrices move together. Training starts from the "
    "current scenario (or from random weights drawn with the seed); when it looks right, load "
    "the trained weights into the scenario and explore them on every other page."
)
TASK_LABEL = "Task"
TASKS = {
    "previous": "attend to the previous token",
    "first": "attend to the first token",
    "self": "attend to itself (diagonal)",
    "same_word": "attend to the same word earlier (a first occurrence: itself)",
    "uniform": "attend uniformly",
    "custom": "a pattern you draw",
    "copy_previous": "copy the previous token's value (loss on the output)",
}
TASK_HELP = (
    "The pattern tasks minimise the cross-entropy between the weights and the target pattern "
    "(mean over the heads). 'Copy the previous token's value' minimises ½‖O − T‖² where T is "
    "what the output would be if every head attended to the previous token (with the current "
    "values and W_O)."
)
CUSTOM_TITLE = "Target pattern (rows are normalised; a row of zeros asks nothing)"
TRAIN_LABEL = "Train"
FIELD_NAMES = {"w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O", "x": "X (embeddings)"}
OPTIMIZER_LABEL = "Optimiser"
OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "plain gradient descent"}
LR_LABEL = "Learning rate"
STEPS_LABEL = "Steps"
# {limit}: the largest number of steps; {budget}: seconds one click may train
STEPS_HELP = ("At most {limit} steps per run; each step is one full forward and backward pass. "
              "One click trains for at most {budget} s (Continue goes on from there), so the "
              "server stays responsive for everyone.")
START_LABEL = "Start from"
START_NAMES = {"scenario": "the scenario's weights", "random": "random weights (seed)"}
SEED_LABEL = "Seed"
TRAIN_BUTTON = "Train"
# {step}, {steps}: steps done and asked for; {loss}: the current loss
PROGRESS = "step {step} of {steps}: loss {loss}"
# {fit}: steps projected to be done when the budget ends; {steps}: steps asked for;
# {budget}: seconds one click may train
PROGRESS_FIT = " — at this pace about {fit} of the {steps} steps fit in this click's {budget} s"
STOP_BUTTON = "Stop"
CONTINUE_BUTTON = "Continue training"
# {budget}: seconds one click may train; {done}, {steps}: steps taken and asked for
BUDGET_OUT = ("One click trains for at most {budget} s, so that every session on the server "
              "stays responsive: this run reached step {done} of {steps}. The result so far is "
              "below; press Continue training to go on from there.")
# {done}, {steps}: steps taken and asked for
PAUSED = ("Training was stopped at step {done} of {steps} (by Stop, another control or leaving "
          "the page). The result so far is below; press Continue training to go on from there.")
# {steps}: steps taken ("1 step", "200 steps"); {first}, {last}: the loss before and after;
# {seconds}: time taken
DONE = "Trained {steps} in {seconds} s: loss {first} → {last}."
# {reason}: why training stopped early
STOPPED = ("Training stopped early — {reason}. The weights of the last finite step are kept; "
           "lower the learning rate.")
STALE = ("The scenario or the settings changed since this run: press Train to train on them "
         "(the playback below is of the previous run).")
NO_RUN = "Press Train to start."
TARGET_PATTERN = "Target pattern"
WEIGHTS_NOW = "The weights now (before training)"
TARGET_OUTPUT = "Target output"
OUTPUT_NOW = "The output now (before training)"
LOAD_BUTTON = "Load the trained weights into the scenario"
LOADED = "The trained weights are now the scenario's: every page shows them."
LOSS_AXIS = "loss"
STEP_AXIS = "step"
STEP_PREFIX = "step "
PLAY, PAUSE = "Play", "Pause"
WEIGHTS_PANEL = "Weights P"
PLAYBACK = (
    "Drag the slider or press Play: the red dot on the loss curve, the weights and the "
    "matrices show the same recorded step (up to 51 steps of the run are recorded)."
)
POSITIONS_HINT = (
    "Without positional information, the scores X W_Q W_Kᵀ Xᵀ only see what the tokens are, "
    "not where they are: 'previous token' cannot be learned from content alone (the loss "
    "stops falling). Switch on the positional encoding, or train X as well."
)
PE_BUTTON = "Switch on the positional encoding"
W_V_ONLY = (
    "Only W_V is trained: the weights P = softmax(X W_Q (X W_K)ᵀ) do not depend on W_V, so "
    "its gradient from a loss on the weights is exactly 0 and the head cannot change where it "
    "looks."
)
NO_PROJECTIONS = (
    "Learn trains W_Q, W_K, W_V, W_O and the embeddings X. This scenario has none to train "
    "(Q, K and V are given directly, or the variant is additive): switch off 'Q, K, V given "
    "directly' or pick a dot-product variant.")
NO_BACKWARD = "Training needs gradients, and this variant has none yet."
CANNOT = "Cannot train"
EXPERIMENTS_LABEL = "Classroom experiments"
EXPERIMENTS = {
    "": "—",
    "learn_previous": "Learn 'previous token' (positions on)",
    "saturated": "A saturated softmax barely learns (huge scale)",
    "diverge": "A learning rate that diverges",
    "w_v_only": "Training W_V alone cannot change where a head looks",
}
EXPERIMENT_NOTES = {
    "learn_previous": ("Positional encoding on, Adam, lr 0.05, 200 steps: the loss falls below "
                       "0.3 for every seed we tried."),
    "saturated": ("The scale is 20 × 1/√d_k, plain gradient descent: the softmax is saturated "
                  "and dS̃ ≈ 0, so the loss on the output hardly moves. Set the scale back "
                  "(sidebar 'scale' on the Playground) and train again."),
    "diverge": ("Plain gradient descent with learning rate 1000: the first steps overshoot, "
                "the loss runs off and training stops with the last finite weights."),
    "w_v_only": ("Only W_V is trained on the 'previous token' pattern: the loss is flat — the "
                 "weights do not depend on W_V."),
}
