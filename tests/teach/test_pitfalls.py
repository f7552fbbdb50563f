"""Golden numbers for every pitfall's wrong and right panels, plus independent explicit checks.

The wrong panels must come from running the buggy code (attnviz.teach.pitfalls.wrong_*), so besides
the golden numbers each test recomputes the symptom by hand (loops, scalar arithmetic).
"""

import math
import warnings

import numpy as np
import pytest

from attnviz.teach import pitfalls
from attnviz.teach.pitfalls import PITFALLS

NAN = float("nan")
ATOL = 1e-9


def panel(key, side, name):
    return PITFALLS[key]().panel(side, name).z


def close(a, b, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=1e-9, atol=atol, equal_nan=True)


def softmax_row(row):
    """Explicit softmax of a list of finite or -inf numbers (-inf -> 0; all -inf -> zeros)."""
    finite = [s for s in row if s != -math.inf]
    if not finite:
        return [0.0] * len(row)
    m = max(finite)
    e = [0.0 if s == -math.inf else math.exp(s - m) for s in row]
    z = sum(e)
    return [x / z for x in e]


def test_the_gallery_has_the_pitfalls_of_the_issues():
    assert list(PITFALLS) == ["softmax_over_queries", "softmax_length_one", "sum_broadcast",
                              "scale_by_length", "naive_overflow", "mask_after_softmax",
                              "fully_masked_row", "pe_base_typo", "seed001_wrong_triangle",
                              "seed004_dropped_tanh", "seed003_glorot_limit", "gradients_vanish",
                              "gqa_tiled_heads", "decode_top_left", "window_off_by_one",
                              "alibi_twelve_heads", "rope_mixed_layouts"]
    for key, build in PITFALLS.items():
        case = build()
        assert case.key == key
        assert [p.name for p in case.wrong] == [p.name for p in case.right]
        assert case.wrong_function.__name__.startswith("wrong_")
        assert case.right_function.__name__.startswith("right_")
        for w, r in zip(case.wrong, case.right, strict=True):
            assert w.z.shape == r.z.shape
            assert w.z.shape == (len(w.y_labels), len(w.x_labels))


@pytest.mark.parametrize("key", list(PITFALLS))
def test_building_a_pitfall_emits_no_warning(key):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PITFALLS[key]()


@pytest.mark.parametrize("key", list(PITFALLS))
def test_wrong_and_right_differ(key):
    case = PITFALLS[key]()
    assert any(not np.allclose(w.z, r.z, equal_nan=False) for w, r in
               zip(case.wrong, case.right, strict=True))


# 1) softmax over the queries (seed 001) ---------------------------------------------------

def test_seed001_wrong_output_is_what_the_notebook_prints():
    close(panel("softmax_over_queries", "wrong", "output"),
          [[0, 0.35954252, 0], [1, 0.64045748, 1]], atol=1e-8)
    close(panel("softmax_over_queries", "wrong", "weights"),
          [[0.3595425243, 0], [0.6404574757, 1]])


def test_seed001_right_output():
    close(panel("softmax_over_queries", "right", "output"),
          [[0, 1, 0], [0.8496745531, 0.1503254469, 0.8496745531]])
    close(panel("softmax_over_queries", "right", "weights"), [[1, 0], [0.1503254469,
                                                                        0.8496745531]])


def test_seed001_by_hand():
    """Scores q·k/√3 = [[1, 4], [2, 5]]/√3; key 1 is masked for query 0."""
    s = [[1 / math.sqrt(3), 4 / math.sqrt(3)], [2 / math.sqrt(3), 5 / math.sqrt(3)]]
    right = [softmax_row([s[0][0], -math.inf]), softmax_row(s[1])]
    close(panel("softmax_over_queries", "right", "weights"), right)
    # the bug normalises each column over the queries: column 0 over both, column 1 sees -1e9
    col0 = softmax_row([s[0][0], s[1][0]])
    close(panel("softmax_over_queries", "wrong", "weights"), [[col0[0], 0], [col0[1], 1]])
    # its columns, not its rows, sum to 1
    np.testing.assert_allclose(panel("softmax_over_queries", "wrong", "weights").sum(0), 1)


def test_seed001_wrong_function_keeps_the_batch_axis_bug():
    w, out = pitfalls.wrong_seed001_attention(pitfalls.SEED001_Q, pitfalls.SEED001_K,
                                              pitfalls.SEED001_V)
    assert w.shape == (2, 2) and out.shape == (2, 3)


# 2) softmax over an axis of length one (seed 004, Keras) -------------------------------------

def test_length_one_axis_golden():
    close(panel("softmax_length_one", "wrong", "weights"), [[1, 1, 1, 1, 1, 1]])
    close(panel("softmax_length_one", "wrong", "context"), [[3, 4, 1]])
    close(panel("softmax_length_one", "right", "weights"),
          [[0.1278086364, 0.3294221735, 0.06579194058, 0.2616040203, 0.05967659867,
            0.1556966305]])
    close(panel("softmax_length_one", "right", "context"),
          [[1.128491131, 1.030413381, 0.6151389432]])


def test_length_one_axis_by_hand():
    x = pitfalls.SLEEPY_EMBEDDINGS.astype(float)
    scores = [math.tanh(sum(x[t, d] * pitfalls.POOL_W[d, 0] for d in range(3)))
              for t in range(6)]
    a = softmax_row(scores)
    close(panel("softmax_length_one", "right", "weights")[0], a)
    close(panel("softmax_length_one", "right", "context")[0],
          [sum(a[t] * x[t, d] for t in range(6)) for d in range(3)])
    close(panel("softmax_length_one", "wrong", "context")[0], x.sum(axis=0))


# 3) a sum that broadcasts along the wrong axis (seed 004) ---------------------------------

SUM_BROADCAST_WRONG = [
    [0.2360898634, 0.1433393791, 0.0754079859, 0.0008873229738],
    [0.02344861503, 0.04517367748, 0.002360353906, 0.0002796415199],
    [2.377045446, 0.1433393791, 0.7592372113, 0.0008873229738],
    [0.7491303855, 0.4548263225, 0.7592372113, 0.001580599216]]
SUM_BROADCAST_RIGHT = [
    [0.2360898634, 0.007389875549, 0.7491303855, 0.007389875549],
    [0.4548263225, 0.04517367748, 0.4548263225, 0.04517367748],
    [0.2392750487, 0.0007438700151, 0.7592372113, 0.0007438700151],
    [0.08995017535, 0.002815540625, 0.9056536848, 0.001580599216]]


def test_sum_broadcast_golden():
    close(panel("sum_broadcast", "wrong", "weights"), SUM_BROADCAST_WRONG)
    close(panel("sum_broadcast", "wrong", "row sums"),
          [[0.4557245513, 0.07126228794, 3.280509359, 1.964774519]])
    close(panel("sum_broadcast", "right", "weights"), SUM_BROADCAST_RIGHT)
    close(panel("sum_broadcast", "right", "row sums"), [[1, 1, 1, 1]])


def test_sum_broadcast_divides_column_j_by_row_sum_j():
    s = pitfalls.four_words_scaled_scores()
    e = np.exp(s)
    row_sum = [sum(e[i]) for i in range(4)]
    expected = [[e[i, j] / row_sum[j] for j in range(4)] for i in range(4)]
    close(panel("sum_broadcast", "wrong", "weights"), expected)
    close(panel("sum_broadcast", "right", "weights"), [softmax_row(list(r)) for r in s])
    # the diagonal is the same on both sides: that is why the bug hides
    close(np.diag(panel("sum_broadcast", "wrong", "weights")),
          np.diag(panel("sum_broadcast", "right", "weights")))


def test_four_words_scores_are_seed000s():
    """Seed 000 prints the first word's scores [8, 2, 10, 2] and weights
    [0.23608986 0.00738988 0.74913039 0.00738988]: the right panel's first row."""
    s = pitfalls.four_words_scaled_scores() * np.sqrt(3.0)
    close(s[0], [8, 2, 10, 2])
    close(panel("sum_broadcast", "right", "weights")[0],
          [0.23608986, 0.00738988, 0.74913039, 0.00738988], atol=1e-8)


# 4) √(sequence length) instead of √d_k (seed 004) --------------------------------------------

SCALE_WRONG = [
    [1 / 6] * 6,
    [0.05235643241, 0.4031530454, 0.05235643241, 0.4031530454, 0.01022751504, 0.07875352931],
    [0.06890094411, 0.06890094411, 0.7980407197, 0.0202453474, 0.03045265857, 0.01345938616],
    [0.003029017238, 0.02332392541, 0.0008900241797, 0.9193935698, 0.0005917003493,
     0.05277176301],
    [0.1257570621, 0.02456588779, 0.05558177647, 0.02456588779, 0.6437723238, 0.1257570621],
    [0.03469600575, 0.05218905834, 0.006777656616, 0.6044763859, 0.03469600575, 0.2671648876]]
SCALE_RIGHT = [
    [1 / 6] * 6,
    [0.02515689493, 0.451187663, 0.02515689493, 0.451187663, 0.002498600898, 0.0448122832],
    [0.02895266122, 0.02895266122, 0.9249722525, 0.00512233975, 0.009124486156,
     0.002875599137],
    [0.0003016824307, 0.005410659433, 5.337401956e-05, 0.9770359031, 2.996331599e-05,
     0.01716841769],
    [0.07947744539, 0.007893757039, 0.02504746782, 0.007893757039, 0.8002101273,
     0.07947744539],
    [0.0127025273, 0.02262716652, 0.001261624148, 0.7228869575, 0.0127025273, 0.2278191972]]


def test_scale_by_length_golden():
    close(panel("scale_by_length", "wrong", "weights"), SCALE_WRONG)
    close(panel("scale_by_length", "right", "weights"), SCALE_RIGHT)
    close(panel("scale_by_length", "wrong", "output"),
          [[0.5, 0.6666666667, 0.1666666667], [1.644513584, 1.314609762, 0.7803467553],
           [0.9154279855, -0.7103859051, -1.493475762], [1.885141614, 2.862834211,
                                                          0.9937092099],
           [-1.13369932, 0.2696300111, 0.06372528472], [1.250716534, 2.340981276,
                                                         0.9102750187]])
    close(panel("scale_by_length", "right", "output"),
          [[0.5, 0.6666666667, 0.1666666667], [1.824910345, 1.418030661, 0.8968738194],
           [0.9748732821, -0.903854035, -1.812993905], [1.964886572, 2.965391171,
                                                         0.9995082322],
           [-1.543797759, 0.1575886941, 0.04517002383], [1.466884818, 2.623037643,
                                                          0.970810073]])


def test_scale_by_length_by_hand():
    x = pitfalls.SLEEPY_EMBEDDINGS.astype(float)
    t, d = x.shape  # 6 tokens, width 3
    dots = [[sum(x[i, m] * x[j, m] for m in range(d)) for j in range(t)] for i in range(t)]
    close(panel("scale_by_length", "wrong", "weights"),
          [softmax_row([s / math.sqrt(t) for s in row]) for row in dots])
    close(panel("scale_by_length", "right", "weights"),
          [softmax_row([s / math.sqrt(d) for s in row]) for row in dots])


# 5) naive exp overflow -----------------------------------------------------------------------

def test_naive_overflow_golden():
    close(panel("naive_overflow", "wrong", "weights"),
          [[0.09003057317, 0.2447284711, 0.6652409558], [0, NAN, 0], [NAN, NAN, NAN]])
    close(panel("naive_overflow", "wrong", "row sums"), [[1, NAN, NAN]])
    close(panel("naive_overflow", "right", "weights"),
          [[0.09003057317, 0.2447284711, 0.6652409558],
           [4.509404124e-05, 0.9932623568, 0.006692549117],
           [0.006692848891, 0.9933068473, 3.038548695e-07]])
    close(panel("naive_overflow", "right", "row sums"), [[1, 1, 1]])


def test_naive_overflow_by_hand():
    for row, got in zip(pitfalls.LARGE_SCORES, panel("naive_overflow", "right", "weights"),
                        strict=True):
        close(got, softmax_row(list(row)))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float64(710.0)))  # why row 1 breaks
        assert np.isfinite(np.exp(np.float64(705.0)))


# 6) the mask after the softmax ---------------------------------------------------------------

def test_mask_after_softmax_golden():
    close(panel("mask_after_softmax", "wrong", "weights"),
          [[0.2360898634, 0, 0, 0], [0.4548263225, 0.04517367748, 0, 0],
           [0.2392750487, 0.0007438700151, 0.7592372113, 0],
           [0.08995017535, 0.002815540625, 0.9056536848, 0.001580599216]])
    close(panel("mask_after_softmax", "wrong", "row sums"),
          [[0.2360898634, 0.5, 0.99925613, 1]])
    close(panel("mask_after_softmax", "right", "weights"),
          [[1, 0, 0, 0], [0.909652645, 0.09034735496, 0, 0],
           [0.2394531707, 0.0007444237696, 0.7598024055, 0],
           [0.08995017535, 0.002815540625, 0.9056536848, 0.001580599216]])
    close(panel("mask_after_softmax", "right", "row sums"), [[1, 1, 1, 1]])


def test_mask_after_softmax_by_hand():
    s = pitfalls.four_words_scaled_scores()
    right = [softmax_row([s[i, j] if j <= i else -math.inf for j in range(4)])
             for i in range(4)]
    close(panel("mask_after_softmax", "right", "weights"), right)
    full = [softmax_row(list(r)) for r in s]
    close(panel("mask_after_softmax", "wrong", "weights"),
          [[full[i][j] if j <= i else 0.0 for j in range(4)] for i in range(4)])


# 7) −1e9 vs −∞ and a fully masked row --------------------------------------------------------

def test_fully_masked_row_golden():
    close(panel("fully_masked_row", "wrong", "weights"),
          [[1 / 3, 1 / 3, 1 / 3], [0, 1, 0], [0, 0.7310585786, 0.2689414214]])
    close(panel("fully_masked_row", "wrong", "output"),
          [[2 / 3, 2 / 3], [0, 1], [0.2689414214, 1]])
    close(panel("fully_masked_row", "right", "weights"),
          [[0, 0, 0], [0, 1, 0], [0, 0.7310585786, 0.2689414214]])
    close(panel("fully_masked_row", "right", "output"), [[0, 0], [0, 1], [0.2689414214, 1]])


def test_fully_masked_row_mask_and_agreement():
    mask = pitfalls.padded_causal_mask()
    np.testing.assert_array_equal(mask, [[False, False, False], [False, True, False],
                                         [False, True, True]])
    w = panel("fully_masked_row", "wrong", "weights")
    r = panel("fully_masked_row", "right", "weights")
    np.testing.assert_array_equal(w[1:], r[1:])  # rows with an allowed key agree exactly
    close(r[2], softmax_row([-math.inf, 2.0, 1.0]))


# 8) the PE base typo (seed 002) --------------------------------------------------------------

def test_pe_base_typo_golden():
    wrong = panel("pe_base_typo", "wrong", "PE")
    right = panel("pe_base_typo", "right", "PE")
    assert wrong.shape == right.shape == (16, 8)
    # columns d0, d1 have frequency 1 in both
    np.testing.assert_array_equal(wrong[:, :2], right[:, :2])
    close(wrong[15, 2], 0.4566033249)
    close(right[15, 2], 0.9974949866)
    close(wrong[1, 2], 0.1768921862)
    close(right[1, 2], 0.09983341665)
    close(wrong[1, 6], 0.005623383563)
    close(right[1, 6], 0.0009999998333)


def test_pe_base_typo_by_hand():
    wrong = panel("pe_base_typo", "wrong", "PE")
    right = panel("pe_base_typo", "right", "PE")
    d = 8
    for t in (0, 3, 15):
        for i in range(d):
            k = i // 2
            trig = math.sin if i % 2 == 0 else math.cos
            close(wrong[t, i], trig(t / 1000 ** (2 * k / d)))
            close(right[t, i], trig(t / 10000 ** (2 * k / d)))
    close(panel("pe_base_typo", "right", "similarity PE·PEᵀ"), right @ right.T)
    close(np.diag(panel("pe_base_typo", "wrong", "similarity PE·PEᵀ")), np.full(16, 4.0))



def test_seed001_wrong_triangle_lets_query_0_see_the_future():
    case = PITFALLS["seed001_wrong_triangle"]()
    wrong = case.panel("wrong", "weights").z
    right = case.panel("right", "weights").z
    assert wrong[0, 1] > 0.8 and wrong[1, 0] == 0  # the future seen, the past hidden
    w1 = 1 / (1 + math.exp(math.sqrt(3)))  # softmax([2, 5] / √3)[0], written out
    np.testing.assert_allclose(right, [[1, 0], [w1, 1 - w1]], rtol=1e-12)


def test_seed004_pooling_without_tanh_concentrates_the_weights():
    from attnviz.core.additive import attention_pooling
    from attnviz.scenarios.presets import SLEEPY_EMBEDDINGS

    case = PITFALLS["seed004_dropped_tanh"]()
    x = np.asarray(SLEEPY_EMBEDDINGS, dtype=float)
    w = case.panel("inputs", "scoring weights w").z.T
    core = attention_pooling(x, w[:, 0], 0.0)  # the core's pooling applies the tanh
    np.testing.assert_allclose(case.panel("right", "weights").z[0], core.weights, rtol=1e-12)
    np.testing.assert_allclose(case.panel("right", "context").z[0], core.output, rtol=1e-12)
    assert case.panel("wrong", "weights").z.max() > 0.9 > core.weights.max()


def test_seed003_limit_for_w_v_follows_glorot():
    case = PITFALLS["seed003_glorot_limit"]()
    d_l, d_k, d_v = (int(v) for v in case.panel("inputs", "sizes").z[0])
    assert case.panel("wrong", "limits").z[0, 0] == pytest.approx(math.sqrt(6 / (d_l + d_k)))
    assert case.panel("right", "limits").z[0, 0] == pytest.approx(math.sqrt(6 / (d_l + d_v)))
    # uniform on ±a has variance a²/3; d_L unit inputs add up
    assert case.panel("right", "variance of x·W_V").z[0, 0] == pytest.approx(
        d_l * (6 / (d_l + d_v)) / 3)


def test_without_the_scale_the_gradient_of_the_scores_vanishes():
    case = PITFALLS["gradients_vanish"]()
    wrong = np.linalg.norm(case.panel("wrong", "dS̃ (gradient)").z)
    right = np.linalg.norm(case.panel("right", "dS̃ (gradient)").z)
    assert wrong == pytest.approx(0.0245, abs=5e-4) and right == pytest.approx(1.29, abs=5e-3)
    assert case.panel("wrong", "weights").z.max(axis=1).min() > 0.99


def test_the_modern_attention_pitfalls_show_what_their_text_says():
    gqa = PITFALLS["gqa_tiled_heads"]()
    assert gqa.panel("wrong", "key/value head of each query head").z.argmax(axis=1).tolist() \
        == [0, 1, 0, 1]
    assert gqa.panel("right", "key/value head of each query head").z.argmax(axis=1).tolist() \
        == [0, 0, 1, 1]
    decode = PITFALLS["decode_top_left"]()
    wrong = decode.panel("wrong", "weights of the decoding calls").z
    assert (wrong[:, 0] == 1).all() and (wrong[:, 1:] == 0).all()
    from attnviz.core.attention import scaled_dot_product_attention as sdpa
    from attnviz.core.masks import causal_mask
    q, k = decode.panel("inputs", "q").z, decode.panel("inputs", "k").z
    right = decode.panel("right", "weights of the decoding calls").z
    np.testing.assert_allclose(right, sdpa(q, k, k, mask=causal_mask(5)).weights, rtol=1e-12)
    window = PITFALLS["window_off_by_one"]()
    assert window.panel("wrong", "keys seen").z[3:, 0].tolist() == [4, 4, 4]
    assert window.panel("right", "keys seen").z[3:, 0].tolist() == [3, 3, 3]
    alibi = PITFALLS["alibi_twelve_heads"]()
    assert alibi.panel("wrong", "slopes").z[0, 0] == pytest.approx(0.63, abs=0.005)
    assert alibi.panel("right", "slopes").z[0, :9].tolist()[:1] == [0.5]
    assert alibi.panel("right", "slopes").z[0, 8] == pytest.approx(2 ** -0.5)
