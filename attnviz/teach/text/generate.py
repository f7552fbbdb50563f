"""Words of the Generate page (pages/generate.py, keys ``generate_``): a causal model of the
models folder writes a few tokens, and a slider steps through what it attended to and predicted.

The models folder's messages (loading off, nothing installed, an empty folder) and the words of
opening a head on every page are the Model view's (:mod:`attnviz.teach.text.model_view`).

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "N_HELP": ("limit", "total"),
    "MODEL_CAPTION": ("path",),
    "PROGRESS": ("done", "n"),
    "BUDGET_OUT": ("budget", "done", "n"),
    "STOPPED": ("done", "n"),
    "FINISHED_EOS": ("done", "n"),
    "CANNOT_GENERATE": ("reason",),
    "SOURCE": ("name", "prompt", "new", "how", "kib"),
    "SAMPLED": ("t", "seed"),
    "STEP_PROMPT": ("t",),
    "STEP_NEW": ("k", "n", "position"),
    "CACHE": ("tokens", "layers", "kib"),
    "CACHE_WINDOW": ("tokens", "t"),
    "CHOSEN": ("p", "token"),
    "ROW_HOVER": ("layer", "h", "key", "weight", "self"),
    "ROW_TITLE": ("layer", "h"),
    "CANDIDATE_TEXT": ("p",),
    "SAMPLED_NAME": ("t",),
}

TITLE = "Generate"
INTRO = (
    "A causal language model of the models folder writes a few tokens after your prompt, one "
    "at a time, as it does when it generates: each new token is run alone, its query attending "
    "over the keys and values the KV cache keeps of every token before it. Step through the "
    "generation with the slider: the new token's attention row in every layer and head, the "
    "cache's size, and the five tokens the model thinks likeliest next, with their "
    "probabilities."
)

# {path}: the models folder
MODEL_CAPTION = (
    "The models folder {path}: a causal language model saved with its language-model head "
    "(AutoModelForCausalLM.save_pretrained, and its tokenizer) generates here. Nothing outside "
    "the folder is read."
)
PROMPT_LABEL = "Prompt"
DEFAULT_PROMPT = "the cat sat on a mat"
N_LABEL = "New tokens"
# {limit}: the most new tokens; {total}: the most tokens, prompt and new together
N_HELP = "At most {limit} new tokens, and {total} tokens with the prompt."
MODE_LABEL = "Next token"
# The choices of the decoding radio
MODES = {"greedy": "the most probable (greedy)", "sample": "drawn at a temperature"}
TEMPERATURE_LABEL = "Temperature"
TEMPERATURE_HELP = (
    "The next token is drawn from softmax(logits / temperature): below 1 the likeliest tokens "
    "gain, above 1 the distribution flattens."
)
SEED_LABEL = "Seed"
SEED_HELP = "The same seed, prompt and temperature draw the same tokens."
GENERATE_BUTTON = "Generate"
STOP_BUTTON = "Stop"
CONTINUE_BUTTON = "Continue generating"
LOADING = "Loading the model…"
# {done}, {n}: tokens generated so far and asked for
PROGRESS = "token {done} of {n}"
# {budget}: seconds one click may compute; {done}, {n}: tokens generated and asked for
BUDGET_OUT = (
    "One click generates for at most {budget} s so that every session stays responsive: "
    "{done} of {n} tokens so far. Press Continue generating to go on."
)
# {done}, {n}: tokens generated and asked for
STOPPED = (
    "Generation was stopped after {done} of {n} tokens (by Stop, another control or leaving "
    "the page). Press Continue generating to go on."
)
# {done}, {n}: tokens generated and asked for
FINISHED_EOS = (
    "The model ended its text (its end-of-sequence token) after {done} of the {n} tokens asked "
    "for."
)
# {reason}: why (a sentence without its final full stop)
CANNOT_GENERATE = "Cannot generate: {reason}. The last generation is kept."
# {name}: the model; {prompt}: the prompt's tokens; {new}: tokens generated; {how}: GREEDY or
# SAMPLED; {kib}: the session's memory for this generation, in KiB
SOURCE = (
    "{name}: a prompt of {prompt} tokens and {new} new ones, {how}. This generation holds {kib} "
    "KiB in this session (a new Generate replaces it)."
)
GREEDY = "greedy"
# {t}: the temperature; {seed}: the seed
SAMPLED = "drawn at temperature {t} with seed {seed}"
STEP_LABEL = "Step"
STEP_HELP = "Step 0 is the prompt (its last token's row); step k adds the k-th new token."
# {t}: the prompt's tokens
STEP_PROMPT = "Step 0: the prompt ({t} tokens) is run at once and fills the cache."
# {k}, {n}: this step and the last; {position}: the new token's position
STEP_NEW = "Step {k} of {n}: the new token, at position {position}, is run alone against the cache."
# {tokens}: tokens whose keys and values the cache holds; {kib}: its size in KiB; {layers}: the
# model's layers
CACHE = "KV cache: keys and values of {tokens} tokens in each of {layers} layers, {kib} KiB."
# {tokens}: tokens the cache keeps; {t}: tokens so far
CACHE_WINDOW = (
    "A sliding window: the cache keeps the last {tokens} of the {t} tokens in its longest layer; "
    "the new token does not see the older ones (their weights are 0)."
)
GRID_TITLE = "The new token's attention, every layer and head"
GRID_CAPTION = (
    "One strip per head: the new token's row of weights over the tokens so far (the first key "
    "at the left, itself at the right; the same 0–1 colour scale). Hover a strip for the key "
    "it looks at most, click it to show it below and to open it."
)
# {layer}, {h}: the head shown
ROW_TITLE = "Layer {layer}, head {h}: the new token's weights"
# {layer}, {h}: the head; {key}: the key with the largest weight; {weight}: that weight;
# {self}: the weight on the new token itself
ROW_HOVER = "L{layer} H{h}<br>most at {key}: {weight}<br>on itself: {self}"
LAYER_LABEL = "Layer"
HEAD_LABEL = "Head"
CANDIDATES_TITLE = "The five likeliest next tokens"
CANDIDATES_CAPTION = (
    "Softmax of the model's logits after the new token, computed in float64 (temperature 1: the "
    "model's own distribution; nothing of its generation settings, such as top-p, is applied). "
    "The orange bar is the token the next step adds."
)
# {t}: the temperature the next token was drawn at
SAMPLED_NAME = "drawn from (temperature {t})"
MODEL_NAME = "the model (temperature 1)"
PROBABILITY_AXIS = "probability"
# {p}: a probability
CANDIDATE_TEXT = "{p}"
# {token}: the token the step added; {p}: the probability the step before gave it
CHOSEN = "The model gave this token probability {p} at the step before ({token})."
OPEN_CAPTION = (
    "Opens the chosen head on the sequence up to this step (the new token is the last query): "
    "the model is loaded again for this and run once on those tokens."
)
NO_GENERATION = "Pick a model, type a prompt and press Generate."
