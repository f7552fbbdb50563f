"""Why √d_k: random q and k for growing d_k; score variance and softmax entropy, scaled or not.

The chart words (series names, axis titles) are used by ``attnviz.figures.charts``.

Templates: ``FIELDS`` names the ``str.format`` fields of every template of this module (a
comment above each template says what its fields are); ``tests/teach/test_text.py`` checks them.
"""

from __future__ import annotations

FIELDS: dict[str, tuple[str, ...]] = {
    "UNIFORM": ("t_k", "value"),
    "KEY_NAME": ("j",),
}

INTRO = (
    "If the entries of q and k are independent with mean 0 and variance 1, their dot product "
    "q·k = Σ q_m k_m is a sum of d_k such terms: its variance is d_k. For large d_k the scores "
    "are spread so widely that the softmax gives almost all the weight to one key (it "
    "saturates, and its gradients vanish). Dividing by √d_k brings the variance back to 1 "
    "whatever d_k is (Vaswani et al. 2017, §3.2.1). Below: random q and k, measured."
)

FORMULA = (
    r"\operatorname{Var}(q\cdot k) = \sum_{m=1}^{d_k} \operatorname{Var}(q_m k_m) = d_k,"
    r"\qquad \operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = 1"
)

VARIANCE = (
    "Variance of the scores over all random pairs: unscaled it follows the line d_k (log-log "
    "axes), scaled it stays at 1."
)

ENTROPY = (
    "Mean entropy of the softmax weights of a query (nats). ln t_k (dashed) means uniform "
    "weights, 0 means all the weight on one key. Unscaled, the entropy collapses as d_k grows; "
    "scaled, it hardly changes with d_k."
)

EXAMPLE = "One random query's weights over the keys at the chosen d_k."

MAX_WEIGHT = "Mean largest weight of a row (1 = one-hot, 1/t_k = uniform)."

# Chart words (attnviz.figures.charts): series names and axis titles
UNSCALED = "unscaled q·k"
SCALED = "scaled q·k/√d_k"
THEORY_DK = "theory: d_k"
THEORY_ONE = "theory: 1"
# {t_k}: the number of keys per query; {value}: ln t_k, the entropy of uniform weights (written
# as a number: "ln" reads as "In" in the chart's font)
UNIFORM = "uniform over {t_k} keys: {value}"
AXIS_DK = "d_k"
AXIS_VARIANCE = "variance of the scores"
AXIS_ENTROPY = "mean entropy (nats)"
AXIS_MAX_WEIGHT = "mean max weight"

TITLE = "Why divide by √d_k?"
MAX_DK_LABEL = "Largest d_k"
T_K_LABEL = "Keys per query t_k"
N_QUERIES_LABEL = "Random queries per d_k"
VARIANCE_TITLE = "Variance of the scores"
ENTROPY_TITLE = "Entropy of the softmax"
MAX_WEIGHT_TITLE = "Largest weight of a row"
EXAMPLE_TITLE = "One query's weights"
# {j}: a key's index
KEY_NAME = "k{j}"
AXIS_WEIGHT = "weight"
# Columns of the summary table: the experiment result's field -> the column's title
COLUMNS = {"d_ks": "d_k", "var_unscaled": "Var(q·k)", "var_scaled": "Var(q·k/√d_k)",
           "entropy_unscaled": "entropy unscaled", "entropy_scaled": "entropy scaled"}
DK_PREFIX = "drag d_k: "
