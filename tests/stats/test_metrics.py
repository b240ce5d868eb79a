"""Metrics against hand computations and scikit-learn (test-only oracle), ties included."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score, jaccard_score, roc_auc_score

from ste_jax import stats


def _tie_orders(scores):
  """All decreasing orders of ``scores`` consistent with exact ties (each equally likely)."""
  values = sorted(set(scores.tolist()), reverse=True)
  groups = [[i for i in range(len(scores)) if scores[i] == v] for v in values]
  for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
    yield [i for p in perms for i in p]


def _strict_scores(order):
  """Strictly decreasing scores realizing ``order`` (for sklearn)."""
  s = np.empty(len(order))
  s[np.asarray(order)] = np.arange(len(order), 0, -1, dtype=np.float64)
  return s


def _oracle_expectation(scores, labels, metric):
  values = [metric(labels, _strict_scores(order)) for order in _tie_orders(scores)]
  return float(np.mean(values))


def _topk_f1_sklearn(k):
  def metric(labels, strict_scores):
    pred = np.zeros(len(labels), dtype=int)
    pred[np.argsort(-strict_scores)[:k]] = 1
    return f1_score(labels, pred, zero_division=0)

  return metric


TIE_CASES = [
  # scores with tie groups of size <= 3 (few consistent orders), labels
  (np.array([0.9, 0.5, 0.5, 0.1]), np.array([1, 1, 0, 0])),
  (np.array([0.7, 0.7, 0.7, 0.2, 0.2, 0.0]), np.array([1, 0, 0, 1, 0, 1])),
  (np.array([1.0, 1.0, 0.5, 0.5, 0.5, 0.3, 0.3]), np.array([0, 1, 1, 0, 1, 0, 0])),
  (np.array([0.3, 0.3, 0.3, 0.3, 0.3]), np.array([1, 0, 0, 1, 0])),
  (np.array([0.1, 0.4, 0.35, 0.8, 0.6, 0.2]), np.array([0, 1, 0, 1, 1, 0])),  # no ties
]


# ----------------------------------------------------------------------------- top-k F1


def test_top_k_f1_hand_value():
  # the tied pair shares one slot: E[TP] = 1 + 1/2, F1 = 2 * 1.5 / (2 + 2).
  assert float(stats.top_k_f1(jnp.array([0.9, 0.5, 0.5, 0.1]), jnp.array([1, 1, 0, 0]))) == 0.75
  # a constant score vector: E[TP] = k |C| / n = 2 * 2 / 5.
  got = stats.top_k_f1(jnp.full((5,), 0.5), jnp.array([1, 1, 0, 0, 0]))
  np.testing.assert_allclose(float(got), 0.4, rtol=1e-6)


@pytest.mark.parametrize("case", range(len(TIE_CASES)))
@pytest.mark.parametrize("k", [None, 1, 3])
def test_top_k_f1_matches_enumerated_tie_breaks(case, k):
  scores, labels = TIE_CASES[case]
  kk = int(labels.sum()) if k is None else k
  expected = _oracle_expectation(scores, labels, _topk_f1_sklearn(kk))
  got = stats.top_k_f1(jnp.asarray(scores, jnp.float32), jnp.asarray(labels), k=k)
  np.testing.assert_allclose(float(got), expected, atol=1e-6)


def test_top_k_f1_tie_tolerance(x64):
  scores = jnp.array([0.9, 0.5 + 1e-13, 0.5, 0.1], dtype=jnp.float64)
  labels = jnp.array([1, 0, 1, 0])
  # within 1e-12 the two middle agents are tied: E[TP] = 1 + 1/2, F1 = 3 / 4.
  assert float(stats.top_k_f1(scores, labels)) == pytest.approx(0.75, abs=1e-12)
  # with exact ties only, the negative agent at 0.5 + 1e-13 is always picked: F1 = 1/2.
  assert float(stats.top_k_f1(scores, labels, tie_tol=0.0)) == pytest.approx(0.5, abs=1e-12)


def test_top_k_selection_probability_properties():
  scores = jnp.array([0.2, 0.9, 0.5, 0.5, 0.5, 0.1])
  prob = np.asarray(stats.top_k_selection_probability(scores, k=3))
  np.testing.assert_allclose(prob, [0, 1, 2 / 3, 2 / 3, 2 / 3, 0], atol=1e-6)
  for k in range(7):
    assert float(jnp.sum(stats.top_k_selection_probability(scores, k=k))) == pytest.approx(
      k, abs=1e-5
    )


def test_top_k_f1_jit_and_vmap_agree_with_loop():
  rng = np.random.default_rng(0)
  scores = jnp.asarray(rng.integers(0, 4, size=(6, 9)).astype(np.float32))
  labels = jnp.asarray(rng.random((6, 9)) < 0.4)
  batched = jax.jit(jax.vmap(stats.top_k_f1))(scores, labels)
  looped = [float(stats.top_k_f1(s, l)) for s, l in zip(scores, labels)]
  np.testing.assert_allclose(np.asarray(batched), looped, atol=1e-6)


def test_jittered_top_k_f1_converges_to_exact(key):
  scores, labels = TIE_CASES[2]
  exact = float(stats.top_k_f1(jnp.asarray(scores, jnp.float32), jnp.asarray(labels)))
  mc = stats.jittered_top_k_f1(
    key, jnp.asarray(scores, jnp.float32), jnp.asarray(labels), num_repeats=4000
  )
  mc = float(mc)
  # MC standard error <= 0.5 / sqrt(4000) ~ 0.008
  assert abs(mc - exact) < 0.03
  # without ties every repeat selects the same set: exact equality.
  s, l = TIE_CASES[4]
  k1, k2 = jax.random.split(jax.random.key(1))
  got = float(
    stats.jittered_top_k_f1(k1, jnp.asarray(s, jnp.float32), jnp.asarray(l), num_repeats=16)
  )
  assert got == pytest.approx(f1_score(l, (s >= np.sort(s)[-3]).astype(int)), abs=1e-6)
  # a jitter larger than all score gaps randomizes the whole order: mean F1 near |C|/n.
  wide = stats.jittered_top_k_f1(
    k2, jnp.asarray(s, jnp.float32), jnp.asarray(l), num_repeats=4000, jitter=1e3
  )
  wide = float(wide)
  assert abs(wide - 0.5) < 0.03


# ----------------------------------------------------------------------------- AUROC / AP


def test_auroc_hand_value():
  # pairs (pos, neg): (0.9, 0.5) 1, (0.9, 0.1) 1, (0.5, 0.5) 1/2, (0.5, 0.1) 1 -> 3.5 / 4.
  assert float(stats.auroc(jnp.array([0.9, 0.5, 0.5, 0.1]), jnp.array([1, 1, 0, 0]))) == 0.875


@pytest.mark.parametrize("seed", range(6))
def test_auroc_matches_sklearn_with_ties(seed):
  rng = np.random.default_rng(seed)
  n = 40
  scores = rng.integers(0, 5, size=n).astype(np.float32) / 4  # heavy ties
  labels = rng.random(n) < 0.3
  labels[:2] = [True, False]
  got = float(stats.auroc(jnp.asarray(scores), jnp.asarray(labels)))
  np.testing.assert_allclose(got, roc_auc_score(labels, scores), atol=1e-6)


def test_auroc_undefined_is_nan():
  assert np.isnan(float(stats.auroc(jnp.array([0.1, 0.2]), jnp.array([1, 1]))))


def test_average_precision_hand_value():
  # order: 0.9 (pos), 0.5 (neg), 0.1 (pos): AP = (1/1 + 2/3) / 2.
  got = float(stats.average_precision(jnp.array([0.9, 0.1, 0.5]), jnp.array([1, 1, 0])))
  assert got == pytest.approx(5 / 6, abs=1e-6)
  # one positive tied with one negative at the top: precision 1 or 1/2, each w.p. 1/2.
  got = float(stats.average_precision(jnp.array([0.5, 0.5, 0.1]), jnp.array([1, 0, 0])))
  assert got == pytest.approx(0.75, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_average_precision_matches_sklearn_without_ties(seed):
  rng = np.random.default_rng(seed)
  scores = rng.random(30).astype(np.float32)
  labels = rng.random(30) < 0.3
  labels[0] = True
  got = float(stats.average_precision(jnp.asarray(scores), jnp.asarray(labels)))
  np.testing.assert_allclose(got, average_precision_score(labels, scores), atol=1e-6)


@pytest.mark.parametrize("case", range(len(TIE_CASES)))
def test_average_precision_is_expectation_over_tie_orders(case):
  scores, labels = TIE_CASES[case]
  expected = _oracle_expectation(scores, labels, average_precision_score)
  got = float(stats.average_precision(jnp.asarray(scores, jnp.float32), jnp.asarray(labels)))
  np.testing.assert_allclose(got, expected, atol=1e-6)


def test_metrics_float64(x64):
  scores, labels = TIE_CASES[1]
  s = jnp.asarray(scores)
  assert s.dtype == jnp.float64
  for fn in (stats.top_k_f1, stats.auroc, stats.average_precision, stats.threshold_f1):
    assert fn(s, jnp.asarray(labels)).dtype == jnp.float64
  np.testing.assert_allclose(
    float(stats.average_precision(s, jnp.asarray(labels))),
    _oracle_expectation(scores, labels, average_precision_score),
    atol=1e-12,
  )


# ----------------------------------------------------------------------------- threshold F1, ECE,
# Jaccard


@pytest.mark.parametrize("seed", range(4))
def test_threshold_f1_matches_sklearn(seed):
  rng = np.random.default_rng(seed)
  scores = rng.integers(0, 5, size=25).astype(np.float32) / 4  # includes exactly 0.5
  labels = rng.random(25) < 0.4
  got = float(stats.threshold_f1(jnp.asarray(scores), jnp.asarray(labels)))
  np.testing.assert_allclose(got, f1_score(labels, scores > 0.5, zero_division=0), atol=1e-6)


def test_threshold_f1_hand_values():
  # predicted {0, 2} (0.5 is not > 0.5), true {0, 1}: TP 1, F1 = 2 / 4.
  assert float(stats.threshold_f1(jnp.array([0.9, 0.5, 0.6]), jnp.array([1, 1, 0]))) == 0.5
  assert float(stats.threshold_f1(jnp.array([0.1, 0.2]), jnp.array([0, 0]))) == 0.0


def test_expected_calibration_error_hand_values():
  probs = jnp.array([0.05, 0.15, 0.95, 0.85, 0.55])
  labels = jnp.array([0, 0, 1, 0, 1])
  # one item per bin: (0.05 + 0.15 + 0.05 + 0.85 + 0.45) / 5
  assert float(stats.expected_calibration_error(probs, labels)) == pytest.approx(0.31, abs=1e-6)
  # one bin with two items: |mean label 1/2 - mean prob 0.11| * 2/2, and p = 1.0 in the last bin.
  got = stats.expected_calibration_error(jnp.array([0.10, 0.12]), jnp.array([1, 0]))
  assert float(got) == pytest.approx(0.39, abs=1e-6)
  assert float(stats.expected_calibration_error(jnp.array([1.0, 0.0]), jnp.array([1, 0]))) == 0.0
  # two bins: bin [0, 0.5) has p 0.2, 0.3 / labels 0, 1; bin [0.5, 1] has p 0.9 / label 0.
  got = stats.expected_calibration_error(
    jnp.array([0.2, 0.3, 0.9]), jnp.array([0, 1, 0]), num_bins=2
  )
  assert float(got) == pytest.approx((2 / 3) * abs(0.5 - 0.25) + (1 / 3) * 0.9, abs=1e-6)


def test_jaccard_hand_and_sklearn():
  a = np.array([1, 1, 0, 1, 0, 0], dtype=bool)
  b = np.array([0, 1, 1, 1, 0, 0], dtype=bool)
  got = float(stats.jaccard(jnp.asarray(a), jnp.asarray(b)))
  assert got == pytest.approx(2 / 4)
  assert got == pytest.approx(jaccard_score(a, b))
  assert float(stats.jaccard(jnp.zeros(3, bool), jnp.zeros(3, bool))) == 1.0


def test_score_gap_hand_value():
  got = stats.score_gap(jnp.array([0.9, 0.7, 0.2, 0.0, 0.1]), jnp.array([1, 1, 0, 0, 0]))
  assert float(got) == pytest.approx(0.8 - 0.1, abs=1e-6)


def test_shape_errors():
  with pytest.raises(ValueError, match="labels"):
    stats.top_k_f1(jnp.zeros(3), jnp.zeros(4))
  with pytest.raises(ValueError, match="scores"):
    stats.auroc(jnp.zeros((2, 2)), jnp.zeros((2, 2)))
