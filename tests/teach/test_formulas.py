"""Every formula shown agrees with the code: each registry formula (and the matrix, trace,
diagnostics and √d_k formulas of attnviz.teach.text) is evaluated by an explicit computation written
from the formula itself, and compared with what the variant computes through the one run path
(run_scenario on a scenario holding the same matrices)."""

import math

import numpy as np
import pytest

from attnviz.core.diagnostics import row_diagnostics
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import Scenario, run_scenario
from attnviz.teach.sqrt_dk import sqrt_dk_experiment
from attnviz.teach.text import common, why_sqrt_dk

RNG = np.random.default_rng(2024)
X = RNG.standard_normal((4, 3))  # target / main tokens
X_SRC = RNG.standard_normal((5, 3))  # source tokens
W_Q = RNG.standard_normal((3, 4))
W_K = RNG.standard_normal((3, 4))
W_V = RNG.standard_normal((3, 2))
W_O = RNG.standard_normal((2, 3))
TAU = 0.8
NEG_INF = -math.inf


def softmax_j(row):
    """softmax over the keys of one row, written out; exp(−∞) = 0."""
    m = max(s for s in row if s != NEG_INF)
    e = [0.0 if s == NEG_INF else math.exp(s - m) for s in row]
    return [x / sum(e) for x in e]


def matmul(a, b):
    return [[sum(a[i][m] * b[m][j] for m in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def attention_formula(q, k, v, *, divisor, causal=False):
    """softmax(q kᵀ / divisor + M) v with M_ij = −∞ for j > i when causal, else 0."""
    q, k, v = q.tolist(), k.tolist(), v.tolist()
    out, weights = [], []
    for i, qi in enumerate(q):
        row = [sum(a * b for a, b in zip(qi, kj, strict=True)) / divisor
               + (NEG_INF if causal and j > i else 0.0) for j, kj in enumerate(k)]
        a = softmax_j(row)
        weights.append(a)
        out.append([sum(a[j] * v[j][c] for j in range(len(v))) for c in range(len(v[0]))])
    return np.array(weights), np.array(out)


def run(key, *, source=None, **fields):
    """The variant's result on X with W_Q, W_K, W_V (W_O, a source, ... as given)."""
    fields.setdefault("w_o", W_O)
    if source is not None:
        fields.update(source_tokens=tuple(f"s{j}" for j in range(len(source))), source_x=source)
    scenario = Scenario(tokens=tuple(f"t{i}" for i in range(len(X))), x=X, w_q=W_Q, w_k=W_K,
                        w_v=W_V, variant=key, **fields)
    return run_scenario(scenario).attention


@pytest.mark.parametrize("key, params, causal", [("online_softmax", {"tile": 3}, False),
                                                 ("kv_cache", {"prefill": 2}, True)])
def test_the_inference_variants_compute_the_plain_formula(key, params, causal):
    """Online softmax is scaled dot-product attention; KV-cache decoding is causal attention."""
    formula = VARIANTS[key].written()
    assert (r"\ell" in formula) == (key == "online_softmax")
    assert (r"K_{\text{cache}}" in formula) == (key == "kv_cache")
    q, k, v = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)
    weights, out = attention_formula(np.array(q), np.array(k), np.array(v),
                                     divisor=math.sqrt(W_Q.shape[1]) * TAU, causal=causal)
    res = run(key, temperature=TAU, params=params)
    np.testing.assert_allclose(res.weights, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.output, out, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("key, divisor_has_sqrt, causal", [
    ("dot_product", False, False),
    ("scaled_dot_product", True, False),
    ("causal", True, True),
    ("bidirectional", True, False),
])
def test_single_head_self_attention_formulas(key, divisor_has_sqrt, causal):
    formula = VARIANTS[key].written()
    assert (r"\sqrt{d_k}" in formula) == divisor_has_sqrt
    assert r"\tau" in formula and r"\frac{QK^\top}" in formula
    if causal:
        assert r"M_{ij} = (j \le i)" in formula  # M boolean: True where i may attend to j
    q, k, v = matmul(X, W_Q), matmul(X, W_K), matmul(X, W_V)  # Q = XW_Q, ...
    d_k = W_Q.shape[1]
    divisor = (math.sqrt(d_k) if divisor_has_sqrt else 1.0) * TAU
    weights, out = attention_formula(np.array(q), np.array(k), np.array(v), divisor=divisor,
                                     causal=causal)
    res = run(key, temperature=TAU)
    np.testing.assert_allclose(res.weights, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.output, out, rtol=1e-12, atol=1e-15)


def test_cross_attention_formula():
    formula = VARIANTS["cross"].written()
    assert r"Q = X_{\text{tgt}}W_Q" in formula and r"K = X_{\text{src}}W_K" in formula
    q, k, v = (np.array(matmul(a, w)) for a, w in ((X, W_Q), (X_SRC, W_K), (X_SRC, W_V)))
    weights, out = attention_formula(q, k, v, divisor=math.sqrt(4) * TAU)
    res = run("cross", source=X_SRC, temperature=TAU)
    assert res.weights.shape == (4, 5)
    np.testing.assert_allclose(res.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(res.output, out, rtol=1e-12)


def test_multi_head_formula():
    """Concat(head_1..head_h) W_O, head_i on the i-th column block, d_k of one head."""
    formula = VARIANTS["multi_head"].written()
    assert r"\mathrm{Concat}" in formula and "W_O" in formula
    h = 2
    q, k, v = (np.array(matmul(X, w)) for w in (W_Q, W_K, W_V))
    heads = []
    for i in range(h):
        qb, kb = q[:, 2 * i:2 * i + 2], k[:, 2 * i:2 * i + 2]  # d_k = 4 / 2 = 2 per head
        vb = v[:, i:i + 1]  # d_v = 2 / 2 = 1 per head
        heads.append(attention_formula(qb, kb, vb, divisor=math.sqrt(2) * TAU)[1])
    concat = np.hstack(heads)
    res = run("multi_head", n_heads=h, temperature=TAU)
    np.testing.assert_allclose(res.concat, concat, rtol=1e-12)
    np.testing.assert_allclose(res.output, np.array(matmul(concat.tolist(), W_O.tolist())),
                               rtol=1e-12)


def test_rope_formula():
    """(R_m q_m)ᵀ(R_n k_n) with θ_i = b^(−2i/d): one head of width 4, pairs (0, 2) and (1, 3)."""
    formula = VARIANTS["rope"].written()
    assert r"R_{\Theta,m}" in formula and r"\theta_i = b^{-2i/d}" in formula
    b, d = 10000.0, 4

    def rotate(rows):
        out = []
        for m, r in enumerate(rows):
            r = list(r)
            for i, (a, c) in enumerate([(0, 2), (1, 3)]):
                angle = m * b ** (-2 * i / d)
                r[a], r[c] = (r[a] * math.cos(angle) - r[c] * math.sin(angle),
                              r[a] * math.sin(angle) + r[c] * math.cos(angle))
            out.append(r)
        return np.array(out)

    q, k = rotate(matmul(X, W_Q)), rotate(matmul(X, W_K))
    weights, out = attention_formula(q, k, np.array(matmul(X, W_V)), divisor=math.sqrt(d) * TAU)
    res = run("rope", temperature=TAU)
    np.testing.assert_allclose(res.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(res.output, out, rtol=1e-12, atol=1e-15)


def test_gqa_formula():
    """head_h uses K_g(h), V_g(h) with g(h) = ⌊h / (n_heads / n_kv)⌋: 2 heads on 1 KV head."""
    assert r"g(h) = \left\lfloor" in VARIANTS["gqa"].written()
    res = run("gqa", n_heads=2, w_o=np.eye(2), temperature=TAU)
    q, k, v = (np.array(matmul(X, w)) for w in (W_Q, W_K, W_V))
    for h in range(2):  # key/value head 0 = the first column block of W_K and W_V
        weights, out = attention_formula(q[:, 2 * h:2 * h + 2], k[:, :2], v[:, :1],
                                         divisor=math.sqrt(2) * TAU)
        np.testing.assert_allclose(res.weights[h], weights, rtol=1e-12)
        np.testing.assert_allclose(res.head_outputs[h], out, rtol=1e-12, atol=1e-15)


def test_alibi_formula():
    """softmax(QKᵀ/(√d_k τ) − m_h (i − j) + M) with m = 2^(−8(h+1)/n): 2 heads, m = 1/16, 1/256."""
    assert r"m_h\,(i - j)" in VARIANTS["alibi"].written()
    res = run("alibi", n_heads=2, w_o=np.eye(2), temperature=TAU)
    q, k = np.array(matmul(X, W_Q)), np.array(matmul(X, W_K))
    for h, m in enumerate([2 ** -4, 2 ** -8]):
        for i in range(len(X)):
            row = [sum(a * c for a, c in zip(q[i, 2 * h:2 * h + 2], k[j, 2 * h:2 * h + 2],
                                             strict=True)) / (math.sqrt(2) * TAU) - m * (i - j)
                   + (NEG_INF if j > i else 0.0) for j in range(len(X))]
            np.testing.assert_allclose(res.weights[h, i], softmax_j(row), rtol=1e-12)


def test_softcap_formula():
    """softmax(c·tanh(QKᵀ/(√d_k τ c)) + M) V with c = 0.5 (every score bent)."""
    assert r"c\,\tanh" in VARIANTS["softcap"].written()
    res = run("softcap", temperature=TAU, params={"softcap": 0.5})
    q, k = np.array(matmul(X, W_Q)), np.array(matmul(X, W_K))
    for i in range(len(X)):
        row = [0.5 * math.tanh(sum(a * c for a, c in zip(q[i], k[j], strict=True))
                               / (2 * TAU * 0.5)) for j in range(len(X))]
        np.testing.assert_allclose(res.weights[i], softmax_j(row), rtol=1e-12)


def test_qk_norm_formula():
    """q̂ = q / sqrt(mean(q²) + ε) · g, likewise k̂, then softmax(Q̂K̂ᵀ/(√d_k τ)) V; g = 1.5."""
    assert r"\mathrm{mean}(q^2) + \epsilon" in VARIANTS["qk_norm"].written()
    res = run("qk_norm", temperature=TAU, params={"qk_gain": 1.5})

    def norm(rows):
        return np.array([[x / math.sqrt(sum(y * y for y in r) / len(r) + 1e-6) * 1.5 for x in r]
                         for r in rows])

    q, k = norm(matmul(X, W_Q)), norm(matmul(X, W_K))
    weights, out = attention_formula(q, k, np.array(matmul(X, W_V)), divisor=2 * TAU)
    np.testing.assert_allclose(res.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(res.output, out, rtol=1e-12, atol=1e-15)


def test_additive_formula():
    formula = VARIANTS["additive"].written()
    assert r"v_a^\top \tanh" in formula
    w_q, w_k = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    v_a = RNG.standard_normal(3)
    e = [[sum(v_a[m] * math.tanh(sum(X[i, d] * w_q[d, m] for d in range(3))
                                 + sum(X_SRC[j, d] * w_k[d, m] for d in range(3)))
              for m in range(3)) for j in range(5)] for i in range(4)]
    alpha = [softmax_j(row) for row in e]
    c = [[sum(alpha[i][j] * X_SRC[j, d] for j in range(5)) for d in range(3)]
         for i in range(4)]
    res = run("additive", source=X_SRC, w_a_q=w_q, w_a_k=w_k, v_a=v_a)
    np.testing.assert_allclose(res.scores, e, rtol=1e-12)
    np.testing.assert_allclose(res.weights, alpha, rtol=1e-12)
    np.testing.assert_allclose(res.output, c, rtol=1e-12)


def test_matrix_formulas_of_the_playground():
    """S = QKᵀ, S' = S·scale/τ, S'' = −∞ where masked, A = softmax(S''), O = AV."""
    assert common.MATRICES["scores"][1] == r"S = Q K^\top"
    assert common.MATRICES["output"][1] == r"O = A V"
    res = run("causal", temperature=TAU)
    q, k, v = res.q, res.k, res.v
    s = q @ k.T
    np.testing.assert_allclose(res.scores, s, rtol=1e-12)
    np.testing.assert_allclose(res.scaled, s * res.scale / TAU, rtol=1e-12)
    assert res.scale == pytest.approx(1 / math.sqrt(4))
    masked = np.where(np.tri(4, dtype=bool), res.scaled, -np.inf)
    np.testing.assert_array_equal(res.masked, masked)
    np.testing.assert_allclose(res.weights, [softmax_j(r) for r in masked.tolist()], rtol=1e-12)
    np.testing.assert_allclose(res.output, res.weights @ v, rtol=1e-12)


def test_trace_formulas_name_the_steps_the_code_takes():
    from attnviz.teach.explain import Settings, formulas
    from attnviz.teach.text import trace as trace_text
    steps = formulas(Settings(tempered=True, masked=True, multi_head=True))
    assert [name for name in trace_text.TITLES if name in steps] == [
        "query_key", "score", "scale", "temperature", "mask", "max", "exp", "sum", "weight",
        "term", "w_o"]
    assert r"\exp(s''_{ij} - m_i)" in steps["exp"]
    assert r"\frac{e_{ij}}{Z_i}" in steps["weight"]
    assert r"\div \tau" in steps["temperature"]


def test_diagnostics_formula():
    assert r"N_i = e^{H_i}" in common.DIAGNOSTICS_FORMULA
    w = np.array([[0.5, 0.25, 0.25]])
    h = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    d = row_diagnostics(w)
    assert d.entropy[0] == pytest.approx(h)
    assert d.effective[0] == pytest.approx(math.exp(h))


def test_sqrt_dk_formula():
    """Var(q·k) = d_k and Var(q·k/√d_k) = 1 for unit-variance q, k."""
    assert r"= d_k" in why_sqrt_dk.FORMULA and r"\right) = 1" in why_sqrt_dk.FORMULA
    res = sqrt_dk_experiment((8, 64), t_k=32, n_queries=800, seed=3)
    np.testing.assert_allclose(res.var_unscaled, [8, 64], rtol=0.08)
    np.testing.assert_allclose(res.var_scaled, [1, 1], rtol=0.08)


def test_pattern_descriptions_match_the_constructions():
    from attnviz.scenarios.patterns import GAIN, PATTERN_PRESETS, PATTERN_TOKENS
    from attnviz.scenarios.presets import PRESETS
    from attnviz.scenarios.scenario import run_scenario
    t = len(PATTERN_TOKENS)
    assert "20·I" in PATTERN_PRESETS["pattern_self"][1] and GAIN == 20
    assert "exactly 1/6" in PATTERN_PRESETS["pattern_uniform"][1] and t == 6
    w = run_scenario(PRESETS["pattern_self"].build()).attention.weights
    assert w[0, 0] == pytest.approx(1 / (1 + 5 * math.exp(-20)), rel=1e-15)
    s = run_scenario(PRESETS["pattern_same_word"].build()).attention.scores
    assert (s[4, 0], s[4, 4], s[0, 4]) == (40, 20, -40)  # "scores 40 ... and 20 against itself"
