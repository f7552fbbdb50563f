"""Generate: a causal model of the models folder writes a few tokens; a slider steps through
each new token's attention in every layer and head, the KV cache and the likeliest next tokens."""

import streamlit as st

from attnviz.teach.text import generate as text
from attnviz.ui import generate_view as gv
from attnviz.ui import presenter, state

state.init_state()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)

key = gv.pick_model()
if key is not None:
    prompt = st.text_input(text.PROMPT_LABEL, value=text.DEFAULT_PROMPT, key="generate_prompt",
                           max_chars=gv.MAX_PROMPT_CHARS)
    c1, c2, c3, c4 = st.columns(4)
    n = c1.number_input(text.N_LABEL, 1, gv.MAX_NEW_TOKENS, gv.DEFAULT_N, key="generate_n",
                        help=text.N_HELP.format(limit=gv.MAX_NEW_TOKENS,
                                                total=gv.MAX_SEQUENCE_TOKENS))
    mode = c2.radio(text.MODE_LABEL, list(text.MODES), format_func=text.MODES.get,
                    key="generate_mode")
    sampled = mode == "sample"
    temperature = c3.number_input(text.TEMPERATURE_LABEL, gv.MIN_TEMPERATURE,
                                  gv.MAX_TEMPERATURE, 1.0, step=gv.TEMPERATURE_STEP,
                                  key="generate_temperature", disabled=not sampled,
                                  help=text.TEMPERATURE_HELP)
    seed = c4.number_input(text.SEED_LABEL, 0, gv.SEED_MAX, 0, key="generate_seed",
                           disabled=not sampled, help=text.SEED_HELP)
    chosen = gv.settings(n, temperature if sampled else 0.0, seed)
    gv.panel(key, prompt, chosen)

record = gv.current()
if record is not None:
    gv.show(record)
elif key is not None:
    st.caption(text.NO_GENERATION)
