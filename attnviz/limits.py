"""Sizes the dashboard accepts, chosen so a page stays responsive on a 2-core machine.

Shown on screen next to the controls they bound (see the Speed benchmarks in the README).
"""

MAX_TOKENS = 256  # tokens of an edited sequence
MAX_D_MODEL = 64  # embedding width for editing
MAX_WIDTH = 128  # total projection width (n_heads·d_k, n_heads·d_v)
MAX_HEADS = 16
MAX_LABEL_CHARS = 40  # longer token labels are cut (with a message)
