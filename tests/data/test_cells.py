"""merge_into_cells: identical rows merged, every weighted-sum statistic unchanged."""

import jax
import numpy as np
import pytest

from ste_jax.data import Comparisons, merge_into_cells, pair_counts
from ste_jax.evaluate._model_estimator import observed_pairs, pair_wins


def _random_rows(seed: int, n: int = 6, m: int = 400, weights: bool = False) -> Comparisons:
  rng = np.random.default_rng(seed)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  outcome = rng.choice([0.0, 0.5, 1.0, 0.25], m)
  context = rng.integers(0, 2, m)
  weight = rng.choice([0.0, 1.0, 2.0, 0.5], m) if weights else None
  return Comparisons.from_arrays(a, b, outcome, context=context, contexts=("x", "y"), weight=weight)


@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("by_outcome", [True, False])
def test_counts_and_pair_wins_are_unchanged(weights, by_outcome):
  c = _random_rows(0, weights=weights)
  cells = merge_into_cells(c, by_outcome=by_outcome)
  assert cells.num_comparisons < c.num_comparisons
  assert (cells.agents, cells.contexts) == (c.agents, c.contexts)
  for policy in ("half", "drop"):
    if policy == "drop" and not by_outcome:
      continue  # the merged outcome of a pair mixes ties with wins: only "half" sums linearly
    before, after = pair_counts(c, tie_policy=policy), pair_counts(cells, tie_policy=policy)
    np.testing.assert_allclose(after.wins, before.wins, rtol=1e-6, atol=1e-5)
  pairs_rows, pairs_cells = observed_pairs(c), observed_pairs(cells)
  np.testing.assert_array_equal(pairs_cells.i, pairs_rows.i)
  np.testing.assert_array_equal(pairs_cells.j, pairs_rows.j)
  for x, y in zip(
    pair_wins(pairs_rows, c.outcome, c.weight), pair_wins(pairs_cells, cells.outcome, cells.weight)
  ):
    np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-5)


def test_cells_are_distinct_and_keep_order_and_zero_weights():
  c = Comparisons.from_arrays(
    [0, 0, 1, 0, 2], [1, 1, 0, 1, 0], [1.0, 1.0, 0.0, 0.5, 1.0], weight=[1, 2, 1, 1, 0]
  )
  cells = merge_into_cells(c)
  rows = list(
    zip(
      np.asarray(cells.a).tolist(),
      np.asarray(cells.b).tolist(),
      np.asarray(cells.outcome).tolist(),
      np.asarray(cells.weight).tolist(),
    )
  )
  # (0, 1) and (1, 0) stay apart; the zero-weight row (2, 0) is kept.
  assert rows == [(0, 1, 0.5, 1.0), (0, 1, 1.0, 3.0), (1, 0, 0.0, 1.0), (2, 0, 1.0, 0.0)]
  by_pair = merge_into_cells(c, by_outcome=False)
  assert np.asarray(by_pair.weight).tolist() == [4.0, 1.0, 0.0]
  np.testing.assert_allclose(np.asarray(by_pair.outcome), [3.5 / 4, 0.0, 1.0])


def test_dtype_and_jit():
  c = _random_rows(1)
  cells = merge_into_cells(c)
  assert cells.outcome.dtype == c.outcome.dtype and cells.weight.dtype == c.weight.dtype
  assert cells.a.dtype == c.a.dtype
  wins = jax.jit(lambda x: pair_counts(x).wins)(cells)
  np.testing.assert_allclose(wins, pair_counts(c).wins, rtol=1e-6)
