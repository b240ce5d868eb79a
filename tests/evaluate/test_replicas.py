"""Bootstrap replicas on count cells vs on rows: the same distribution, deterministic per key."""

import dataclasses

import jax
import numpy as np
import pytest
from scipy import stats as scipy_stats

from ste_jax.data import Comparisons, merge_into_cells, pair_counts
from ste_jax.evaluate import ModelEstimator, PosteriorEdgeEstimator, WinRateEstimator
from ste_jax.evaluate._replicas import (
  bootstrap_hard_memberships,
  resample_model_outcomes,
  resample_unit_weights,
)


def _battles(seed: int = 0, n: int = 5, m: int = 240) -> Comparisons:
  """Unit rows with many repeats per (pair, outcome): a rock-paper-scissors core plus two."""
  rng = np.random.default_rng(seed)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  strength = np.array([1.0, 1.0, 1.0, -0.5, -1.0])
  logit = strength[a] - strength[b]
  cyc = (a < 3) & (b < 3)
  logit = np.where(cyc, np.where((b - a) % 3 == 1, 0.8, -0.8), logit)
  outcome = np.where(rng.random(m) < 0.15, 0.5, (rng.random(m) < 1 / (1 + np.exp(-logit))) * 1.0)
  return Comparisons.from_arrays(a, b, outcome)


def _replica_wins(comparisons: Comparisons, draws: np.ndarray, field: str = "weight") -> np.ndarray:
  """``(R, n, n)`` wins (ties half) of each replica's weights (or outcomes)."""

  def wins(x):
    return pair_counts(dataclasses.replace(comparisons, **{field: x})).wins

  return np.asarray(jax.jit(jax.vmap(wins))(draws), np.float64)


def test_poisson_on_cells_matches_poisson_on_rows_in_distribution():
  rows = _battles()
  cells = merge_into_cells(rows)
  assert cells.num_comparisons < rows.num_comparisons / 4
  R = 1500
  on_rows = _replica_wins(rows, resample_unit_weights(jax.random.key(1), rows.weight, R))
  on_cells = _replica_wins(cells, resample_unit_weights(jax.random.key(2), cells.weight, R))
  point = np.asarray(pair_counts(rows).wins, np.float64)
  off = ~np.eye(rows.num_agents, dtype=bool)
  for x in (on_rows, on_cells):  # Poisson bootstrap: mean = the data's wins
    se = np.sqrt(np.maximum(x.var(axis=0), 1e-12) / R)
    assert np.all(np.abs(x.mean(axis=0) - point)[off] < 5 * se[off] + 1e-9)
  np.testing.assert_allclose(on_cells.var(axis=0)[off], on_rows.var(axis=0)[off], rtol=0.25)
  # A two-sample test per pair with a Bonferroni level: no pair's distribution differs.
  pvalues = [
    scipy_stats.ks_2samp(on_rows[:, i, j], on_cells[:, i, j]).pvalue
    for i in range(rows.num_agents)
    for j in range(rows.num_agents)
    if i != j and point[i, j] > 0
  ]
  assert min(pvalues) > 0.001 / len(pvalues)


def test_binomial_on_cells_matches_binomial_on_rows_in_distribution():
  rows = _battles(seed=3)
  cells = merge_into_cells(rows, by_outcome=False)
  P = np.full((5, 5), 0.5)
  P[np.triu_indices(5, 1)] = np.linspace(0.2, 0.9, 10)
  P = np.triu(P, 1) + np.tril(1 - P.T, -1) + np.diag(np.full(5, 0.5))
  R = 1500

  def wins(c, key):
    p = P[np.asarray(c.a), np.asarray(c.b)]
    return _replica_wins(c, resample_model_outcomes(key, p, c.weight, R), "outcome")

  on_rows, on_cells = wins(rows, jax.random.key(4)), wins(cells, jax.random.key(5))
  off = ~np.eye(5, dtype=bool)
  se = np.sqrt((on_rows.var(axis=0) + on_cells.var(axis=0)) / R)
  assert np.all(np.abs(on_rows.mean(axis=0) - on_cells.mean(axis=0))[off] < 5 * se[off] + 1e-9)
  np.testing.assert_allclose(on_cells.var(axis=0)[off], on_rows.var(axis=0)[off], rtol=0.25)


@pytest.mark.parametrize("estimator", [WinRateEstimator(), PosteriorEdgeEstimator()])
def test_memberships_on_cells_match_rows_and_are_deterministic(estimator):
  rows = _battles(seed=5, m=150)
  fitted = estimator.fit(jax.random.key(0), rows)
  R = 1000

  def boot(key, merge):
    return bootstrap_hard_memberships(
      key, rows, estimator, fitted, num_replicas=R, merge_rows=merge
    )

  cells_a, cells_b = boot(jax.random.key(7), True), boot(jax.random.key(7), True)
  np.testing.assert_array_equal(cells_a.top_cycle, cells_b.top_cycle)
  np.testing.assert_array_equal(cells_a.beats, cells_b.beats)
  plain = boot(jax.random.key(8), False)
  for field in ("top_cycle", "uncovered"):
    p, q = getattr(cells_a, field).mean(axis=0), getattr(plain, field).mean(axis=0)
    se = np.sqrt((p * (1 - p) + q * (1 - q)) / R)
    assert np.all(np.abs(p - q) <= 5 * se + 1e-9), (field, p, q)
  se = np.sqrt((cells_a.beats * (1 - cells_a.beats) + plain.beats * (1 - plain.beats)) / R)
  assert np.all(np.abs(cells_a.beats - plain.beats) <= 5 * se + 1e-9)


def test_model_replicas_on_cells_use_the_cells_pair_index():
  rows = _battles(seed=6, m=200)
  estimator = ModelEstimator(ranks=(0,), strength_l2=(1.0,), skew_l2=(1.0,), num_folds=2)
  fitted = estimator.fit(jax.random.key(0), rows)
  R = 200
  cells = bootstrap_hard_memberships(jax.random.key(1), rows, estimator, fitted, num_replicas=R)
  plain = bootstrap_hard_memberships(
    jax.random.key(2), rows, estimator, fitted, num_replicas=R, merge_rows=False
  )
  se = np.sqrt((cells.beats * (1 - cells.beats) + plain.beats * (1 - plain.beats)) / R)
  assert np.all(np.abs(cells.beats - plain.beats) <= 5 * se + 1e-9)
