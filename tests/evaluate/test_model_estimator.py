"""The model-based tournament estimator: fit, model selection, refits, consistency."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import exact
from ste_jax.evaluate import fit_model_tournament
from ste_jax.evaluate import _estimators
from ste_jax.evaluate._model_estimator import observed_pairs, pair_wins
from ste_jax.stats import bradley_terry, planted_core_tournament, sample_comparisons
from tests.evaluate._data import from_wins, rps_above_transitive


def test_rps_above_transitive_rest_is_recovered_by_the_model_not_by_bradley_terry():
  c, P_true = rps_above_transitive(0)
  fit = fit_model_tournament(c)
  assert fit.chosen.rank >= 1
  assert fit.cv_log_loss < fit.bt_cv_log_loss
  assert np.asarray(exact.top_cycle(fit.P)).tolist() == np.asarray(exact.top_cycle(jnp.asarray(P_true))).tolist()
  assert np.flatnonzero(np.asarray(exact.top_cycle(fit.P))).tolist() == [0, 1, 2]
  bt_only = fit_model_tournament(c, ranks=(0,))
  assert bt_only.chosen.rank == 0
  assert int(np.asarray(exact.top_cycle(bt_only.P)).sum()) == 1  # a transitive model has a singleton core


@pytest.mark.slow  # statistical: three planted-core fits, about 11 s on 2 cores
def test_model_core_equals_posterior_core_on_dense_data():
  """Planted core, every pair observed, m = 50 games per pair: both estimators find the same hard core."""
  for seed in range(3):
    k1, k2 = jax.random.split(jax.random.key(seed))
    planted = planted_core_tournament(k1, n=15, core_size=5)
    wins = sample_comparisons(k2, planted.P, per_pair=50, missing_rate=0.0).wins
    c = from_wins(wins)
    fit = fit_model_tournament(c, key=jax.random.key(seed))
    post = _estimators.build_estimator("posterior", c)
    tc_model, uc_model = _estimators.hard_memberships(fit.P, "model")
    tc_post, uc_post = _estimators.hard_memberships(post.edges, "posterior")
    assert np.asarray(tc_model).tolist() == np.asarray(tc_post).tolist() == np.asarray(planted.core_mask).tolist()


def test_bradley_terry_fit_matches_newton_map_estimate():
  """Rank 0 with one strength ridge = ridge-regularized BT MAP, solved independently by Newton."""
  rng = np.random.default_rng(1)
  n = 8
  wins = rng.integers(0, 6, size=(n, n)).astype(np.float64) * (rng.random((n, n)) < 0.6)
  np.fill_diagonal(wins, 0)
  c = from_wins(wins)
  lam = 0.5
  fit = fit_model_tournament(c, ranks=(0,), strength_l2=(lam,), num_steps=200)
  ref = bradley_terry(jnp.asarray(wins, jnp.float32), prior="always", prior_strength=lam, max_iter=200)
  np.testing.assert_allclose(np.asarray(fit.params.strength), np.asarray(ref.scores), atol=2e-3)


def test_pair_wins_count_ties_half():
  from ste_jax.data import Comparisons

  c = Comparisons.from_arrays([0, 1, 0, 2], [1, 0, 1, 0], [1.0, 1.0, 0.5, 0.0])
  pairs = observed_pairs(c)
  assert np.asarray(pairs.i).tolist() == [0, 0] and np.asarray(pairs.j).tolist() == [1, 2]
  w_ij, w_ji = pair_wins(pairs, c.outcome, c.weight)
  assert np.asarray(w_ij).tolist() == [1.5, 1.0] and np.asarray(w_ji).tolist() == [1.5, 0.0]


def test_refit_is_pure_and_vmaps_over_replicas():
  c, _ = rps_above_transitive(1, n=8)
  fit = fit_model_tournament(c, ranks=(0, 1), skew_l2=(1.0,))
  P_again = jax.jit(lambda w: fit.refit(c.outcome, w))(c.weight)
  np.testing.assert_allclose(np.asarray(P_again), np.asarray(fit.P), atol=2e-2)
  W = jnp.stack([c.weight, 2 * c.weight, c.weight])
  Ps = jax.jit(jax.vmap(lambda w: fit.refit(c.outcome, w)))(W)
  assert Ps.shape == (3, 8, 8)
  np.testing.assert_allclose(np.asarray(Ps[0]), np.asarray(Ps[2]))
  np.testing.assert_allclose(np.asarray(Ps + jnp.swapaxes(Ps, -1, -2)), 1.0, atol=1e-6)


def test_deterministic_given_key():
  c, _ = rps_above_transitive(2, n=6)
  f1 = fit_model_tournament(c, key=jax.random.key(3), ranks=(0, 1), skew_l2=(1.0,))
  f2 = fit_model_tournament(c, key=jax.random.key(3), ranks=(0, 1), skew_l2=(1.0,))
  assert np.array_equal(np.asarray(f1.P), np.asarray(f2.P)) and f1.chosen == f2.chosen


@pytest.mark.parametrize("kwargs, match", [
    ({"ranks": ()}, "ranks"), ({"ranks": (-1,)}, "ranks"), ({"strength_l2": (0.0,)}, "strength_l2"),
    ({"skew_l2": (float("nan"),)}, "skew_l2"), ({"num_folds": 1}, "num_folds"), ({"num_steps": 0}, "num_steps"),
])
def test_bad_arguments(kwargs, match):
  c, _ = rps_above_transitive(0, n=4)
  with pytest.raises(ValueError, match=match):
    fit_model_tournament(c, **kwargs)
