"""Attention as a list of steps (attnviz.core.steps): against an explicit-loop reference
written here from the formulas, the backward pass against finite differences, the list's
dictionaries, and properties (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.core import steps as S
from attnviz.core.attention import attend_heads

TOL = 1e-12


# ------------------------------------------------------------------ an explicit-loop reference

def loop_rms(row, gain, eps):
    ms = sum(float(a) * float(a) for a in row) / len(row)
    g = list(gain) * (len(row) if len(gain) == 1 else 1)
    return [float(a) / math.sqrt(ms + eps) * g[n] for n, a in enumerate(row)]


def loop_rope(row, p, d_rot, base, layout, inv_freq, a):
    out = [float(x) for x in row]
    for i in range(d_rot // 2):
        u, w = (i, i + d_rot // 2) if layout == "split_half" else (2 * i, 2 * i + 1)
        theta = inv_freq[i] if inv_freq else base ** (-2 * i / d_rot)
        c, s = math.cos(p * theta), math.sin(p * theta)
        out[u] = a * (row[u] * c - row[w] * s)
        out[w] = a * (row[u] * s + row[w] * c)
    return out


def loop_head(cfg, q, k, v, head, n_heads):
    """One head, one query, one key, one dimension at a time."""
    t_q, t_k, d = len(q), len(k), len(q[0])
    q, k = [list(r) for r in q], [list(r) for r in k]
    if cfg.get("norm"):
        gq, gk, eps = cfg["norm"]
        q = [loop_rms(r, gq, eps) for r in q]
        k = [loop_rms(r, gk, eps) for r in k]
    if cfg.get("rope"):
        base, layout, inv_freq, a, off, fraction = cfg["rope"]
        d_rot = 2 * len(inv_freq) if inv_freq else 2 * (int(d * fraction) // 2)
        q = [loop_rope(r, i + off, d_rot, base, layout, inv_freq, a) for i, r in enumerate(q)]
        k = [loop_rope(r, j + off, d_rot, base, layout, inv_freq, a) for j, r in enumerate(k)]
    ok = [[True] * t_k for _ in range(t_q)]
    for i in range(t_q):
        for j in range(t_k):
            if cfg.get("causal") and j > i:
                ok[i][j] = False
            if cfg.get("window") and not (i - cfg["window"] < j <= i):
                ok[i][j] = False
    weights, out = [], []
    for i in range(t_q):
        n_i = max(sum(ok[i]), 1)
        logits = {}
        for j in range(t_k):
            if not ok[i][j]:
                continue
            s = sum(q[i][m] * k[j][m] for m in range(d))
            s = s * (cfg["scale"] or 1 / math.sqrt(d)) / cfg.get("tau", 1.0)
            if cfg.get("alibi"):
                slopes, form = cfg["alibi"]
                s += slopes[head] * (j if form == "key" else -(i - j))
            if cfg.get("ssmax"):
                s *= cfg["ssmax"] * math.log(n_i)
            if cfg.get("cap"):
                s = cfg["cap"] * math.tanh(s / cfg["cap"])
            logits[j] = s
        sink = cfg["sinks"][head] if cfg.get("sinks") else None
        top = max([*logits.values(), *([sink] if sink is not None else [])], default=0.0)
        e = {j: math.exp(s - top) for j, s in logits.items()}
        total = math.fsum([*e.values(), *([math.exp(sink - top)] if sink is not None else [])])
        row = [e[j] / total if j in e else 0.0 for j in range(t_k)]
        weights.append(row)
        out.append([sum(row[j] * v[j][c] for j in range(t_k)) for c in range(len(v[0]))])
    return np.array(weights), np.array(out)


def steps_of(cfg, n_heads=1, n_kv=1):
    out: list = [S.Heads(n_heads, n_kv)]
    if cfg.get("norm"):
        gq, gk, eps = cfg["norm"]
        out.append(S.QKNorm(gq, gk, eps))
    if cfg.get("rope"):
        base, layout, inv_freq, a, off, fraction = cfg["rope"]
        out.append(S.RoPE(base=base, inv_freq=inv_freq, fraction=fraction, layout=layout,
                          attention_scaling=a, offset=off))
    out.append(S.Scale(cfg["scale"], cfg.get("tau", 1.0)))
    if cfg.get("alibi"):
        out.append(S.ALiBi(*cfg["alibi"]))
    if cfg.get("ssmax"):
        out.append(S.SSMax(cfg["ssmax"]))
    if cfg.get("cap"):
        out.append(S.SoftCap(cfg["cap"]))
    if cfg.get("causal"):
        out.append(S.Causal())
    if cfg.get("window"):
        out.append(S.Window(cfg["window"]))
    if cfg.get("sinks"):
        out.append(S.SinkSoftmax(cfg["sinks"]))
    return out


CONFIGS = {
    "plain": dict(scale=None),
    "qwen3": dict(scale=None, norm=((0.5, 1.0, 1.5, 2.0), (1.2, 0.8, 1.0, 0.3), 1e-6),
                  rope=(100.0, "split_half", (), 1.0, 0, 1.0), causal=True),
    "gpt_oss": dict(scale=None, rope=(50.0, "split_half", (), 1.3, 0, 1.0), causal=True,
                    window=3, sinks=(0.4, -1.0)),
    "gemma3": dict(scale=0.3, norm=((1.5,), (0.5,), 1e-6), causal=True, window=2,
                   rope=(10000.0, "interleaved", (1.0, 0.1), 1.0, 3, 1.0), cap=2.0, tau=0.7),
    "softcap_no_rope": dict(scale=None, cap=1.5, causal=True),
    "alibi_any_slope": dict(scale=None, alibi=((0.3, 0.07), "key"), causal=True),
    "alibi_distance": dict(scale=1.0, alibi=((0.5, 0.125), "distance"), causal=True),
    "ssmax": dict(scale=None, ssmax=1.2, causal=True),
    "partial_rope": dict(scale=None, rope=(10.0, "split_half", (), 1.0, 0, 0.5)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_attend_steps_matches_the_explicit_loops(name):
    cfg = CONFIGS[name]
    rng = np.random.default_rng(len(name))
    q_h, k_h, v_h = rng.normal(size=(2, 6, 4)), rng.normal(size=(1, 6, 4)), \
        rng.normal(size=(1, 6, 3))
    result = S.attend_steps(steps_of(cfg, 2, 1), q_h, k_h, v_h)
    for h in range(2):
        weights, out = loop_head(cfg, q_h[h], k_h[0], v_h[0], h, 2)
        np.testing.assert_allclose(result.head(h).weights, weights, rtol=0, atol=TOL)
        np.testing.assert_allclose(result.head(h).output, out, rtol=0, atol=TOL)


def test_a_plain_list_is_the_engines_attend_heads():
    rng = np.random.default_rng(1)
    q_h, k_h, v_h = rng.normal(size=(4, 5, 3)), rng.normal(size=(2, 5, 3)), \
        rng.normal(size=(2, 5, 2))
    w_o = rng.normal(size=(8, 3))
    mask = np.tri(5, dtype=bool)
    ours = S.attend_steps([S.Heads(4, 2), S.Scale(), S.SoftCap(2.0), S.Causal()], q_h, k_h,
                          v_h, w_o=w_o)
    theirs = attend_heads(q_h, k_h, v_h, mask=mask, softcap=2.0, w_o=w_o)
    for name in ("scores", "scaled", "weights", "output", "q", "k", "v"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=0,
                                   atol=1e-15)


def test_sinks_take_a_share_of_every_row():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(3, 4, 4))
    trace = S.run_head([S.Scale(), S.Causal(), S.SinkSoftmax((1.0,))], q, k, v)
    np.testing.assert_allclose(trace.weights.sum(axis=1) + trace.rest, 1.0, atol=1e-15)
    assert (trace.rest > 0).all()


# ------------------------------------------------------------------ backward

def loss_of(steps, q, k, v, d_out, d_w):
    tr = S.run_head(steps, q, k, v)
    return float(np.sum(tr.output * d_out) + np.sum(tr.weights * d_w))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_head_backward_matches_finite_differences(name):
    cfg = CONFIGS[name]
    rng = np.random.default_rng(7 + len(name))
    q, k, v = rng.normal(size=(3, 5, 4))
    steps = [s for s in steps_of(cfg) if s.kind != "heads"]
    if cfg.get("alibi") or cfg.get("sinks"):
        steps = [S.ALiBi((cfg["alibi"][0][0],), cfg["alibi"][1]) if isinstance(s, S.ALiBi)
                 else S.SinkSoftmax((cfg["sinks"][0],)) if isinstance(s, S.SinkSoftmax) else s
                 for s in steps]
    d_out, d_w = rng.normal(size=(5, 4)), rng.normal(size=(5, 5))
    tr = S.run_head(steps, q, k, v)
    g = S.head_backward(steps, tr, d_out, d_weights=d_w)
    eps = 1e-6
    for which, grad in (("q", g.d_q_in), ("k", g.d_k_in), ("v", g.d_v)):
        arrays = dict(q=q, k=k, v=v)
        num = np.zeros_like(arrays[which])
        for idx in np.ndindex(num.shape):
            plus, minus = (dict(arrays) for _ in range(2))
            plus[which] = arrays[which].copy()
            minus[which] = arrays[which].copy()
            plus[which][idx] += eps
            minus[which][idx] -= eps
            up = loss_of(steps, plus["q"], plus["k"], plus["v"], d_out, d_w)
            down = loss_of(steps, minus["q"], minus["k"], minus["v"], d_out, d_w)
            num[idx] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", [*sorted(CONFIGS), "qk_layernorm_per_head",
                                  "qk_norm_across_per_head"])
def test_a_batch_of_heads_runs_as_one_head_at_a_time(name):
    """q of shape (batch, n_heads, t, d) with head = arange(n_heads): every intermediate and
    gradient of each (sequence, head) slice is that slice run on its own (per-head settings:
    ALiBi's slopes, the sink logits, QK-LayerNorm's and QK-norm across heads' rows)."""
    if name == "qk_layernorm_per_head":
        steps = [S.QKLayerNorm(((1.5, 0.5, 1.0, 2.0), (0.7, 1.1, 0.9, 1.3)), ((0.8,), (1.2,)),
                               ((0.1,), (-0.2,)), ((0.0, 0.3, -0.1, 0.2), (0.4,) * 4)),
                 S.RoPE(base=20.0), S.Scale(), S.Causal(), S.SinkSoftmax((0.4, -1.0))]
    elif name == "qk_norm_across_per_head":
        steps = [S.QKNormAcross(((1.5, 0.5, 1.0, 2.0), (0.7, 1.1, 0.9, 1.3)), ((0.8,), (1.2,)),
                                ((0.3, 0.1, 0.0, 0.2, 0.5), (1.0, 0.4, 0.2, 0.0, 0.7)),
                                ((0.4,), (0.0,)),
                                q_width=12, k_width=8),
                 S.RoPE(base=20.0), S.Scale(), S.Causal()]
    else:
        steps = [s for s in steps_of(CONFIGS[name]) if s.kind != "heads"]
    rng = np.random.default_rng(len(name))
    batch, n, t, d = 3, 2, 5, 4
    q, k, v = rng.normal(size=(3, batch, n, t, d))
    d_out, d_w = rng.normal(size=(batch, n, t, d)), rng.normal(size=(batch, n, t, t))
    many = S.run_head(steps, q, k, v, head=np.arange(n), n_heads=n)
    g_many = S.head_backward(steps, many, d_out, d_weights=d_w)
    for b in range(batch):
        for h in range(n):
            one = S.run_head(steps, q[b, h], k[b, h], v[b, h], head=h, n_heads=n)
            g_one = S.head_backward(steps, one, d_out[b, h], d_weights=d_w[b, h])
            for field in ("q", "k", "scores", "scaled", "masked", "weights", "rest", "output"):
                np.testing.assert_allclose(getattr(many, field)[b, h], getattr(one, field),
                                           rtol=TOL, atol=TOL, err_msg=field)
            for field in ("d_weights", "d_scaled", "d_scores", "d_q_in", "d_k_in", "d_v"):
                np.testing.assert_allclose(getattr(g_many, field)[b, h], getattr(g_one, field),
                                           rtol=TOL, atol=TOL, err_msg=field)


# ------------------------------------------------------------------ a list as dictionaries

def test_a_list_reads_back_from_its_dictionaries():
    steps = steps_of(CONFIGS["gemma3"], 2, 1) + [S.Padding((True,) * 5 + (False,)),
                                                 S.CustomMask(np.tri(6, dtype=bool)),
                                                 S.AddBias(np.zeros((6, 6)))]
    again = S.from_dicts(S.to_dicts(steps))
    assert S.to_dicts(again) == S.to_dicts(steps)
    rng = np.random.default_rng(3)
    q_h, k_h, v_h = rng.normal(size=(2, 6, 4)), rng.normal(size=(1, 6, 4)), \
        rng.normal(size=(1, 6, 3))
    np.testing.assert_array_equal(S.attend_steps(steps, q_h, k_h, v_h).weights,
                                  S.attend_steps(again, q_h, k_h, v_h).weights)


@pytest.mark.parametrize("items, words", [
    ([{"step": "warp"}], "not a step"),
    ([{"step": "rope", "speed": 1}], "no setting speed"),
    ([{"step": "rope", "layout": "diagonal"}], "pair layout"),
    ([{"step": "softcap", "cap": -1}], "must be > 0"),
    ([{"step": "heads", "n_heads": 4, "n_kv_heads": 3}], "must divide"),
    ([{"step": "softmax"}, {"step": "sink_softmax"}], "at most one normaliser"),
    ("rope", "a list of objects"),
])
def test_a_bad_list_is_refused_in_a_sentence(items, words):
    with pytest.raises(ValueError, match=words):
        S.from_dicts(items)


def test_every_step_writes_its_formula():
    for cls in S.STEP_TYPES.values():
        table = {S.CustomMask: (np.ones((1, 1), dtype=bool),), S.AddBias: (np.zeros((1, 1)),),
                 S.Disentangled: (np.zeros((1, 1, 1)), (), np.zeros((1, 1), dtype=int))}
        step = cls(*table.get(cls, ()))
        assert step.written()


# ------------------------------------------------------------------ properties

@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), t=st.integers(1, 7), offset=st.integers(0, 50),
       layout=st.sampled_from(["split_half", "interleaved"]))
def test_rope_weights_depend_on_distances_only(seed, t, offset, layout):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(3, t, 4))
    base = [S.QKNorm((1.0, 2.0, 0.5, 1.0)), S.RoPE(base=30.0, layout=layout), S.Scale(),
            S.Causal()]
    shifted = [*base[:1], S.RoPE(base=30.0, layout=layout, offset=float(offset)), *base[2:]]
    np.testing.assert_allclose(S.run_head(base, q, k, v).weights,
                               S.run_head(shifted, q, k, v).weights, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), t=st.integers(1, 7), width=st.integers(1, 4),
       sink=st.floats(-5, 5))
def test_rows_sum_to_one_or_less_and_masked_keys_get_nothing(seed, t, width, sink):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(3, t, 2))
    for normaliser, total in ((S.Softmax(), 1.0), (S.SinkSoftmax((sink,)), None)):
        tr = S.run_head([S.Scale(), S.Causal(), S.Window(width), normaliser], q, k, v)
        rows = tr.weights.sum(axis=1)
        if total is None:
            assert (rows < 1).all()
            np.testing.assert_allclose(rows + tr.rest, 1.0, atol=1e-12)
        else:
            np.testing.assert_allclose(rows, 1.0, atol=1e-12)
        assert (tr.weights[~tr.mask] == 0).all()


def test_the_mask_parts_combine_in_one_place():
    m = S.combine([S.Causal(), S.Window(2), S.Padding((True, False, True, True)), None], 4, 4)
    expected = np.array([[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(m, expected)
    with pytest.raises(ValueError, match="shape"):
        S.combine([np.ones((2, 3), dtype=bool)], 4, 4)
