"""The model-based tournament estimator: fit, model selection, refits, consistency."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import exact
from ste_jax.data import Comparisons
from ste_jax.evaluate import (
  Candidate,
  ModelEstimator,
  PosteriorEdgeEstimator,
  fit_model_tournament,
)
from ste_jax.evaluate._model_estimator import observed_pairs, pair_wins
from ste_jax.stats import bradley_terry, planted_core_tournament, sample_comparisons
from tests.evaluate._data import from_wins, rps_above_transitive


def test_rps_above_transitive_rest_is_recovered_by_the_model():
  c, P_true = rps_above_transitive(0)
  true_core = np.asarray(exact.top_cycle(jnp.asarray(P_true))).tolist()
  assert np.flatnonzero(true_core).tolist() == [0, 1, 2]
  # Default estimator: the core pairs' 30-game records keep their orientation (record bands).
  fit = fit_model_tournament(None, c)
  assert np.asarray(exact.top_cycle(fit.P)).tolist() == true_core
  # The model alone (no record bands): cross-validation picks the intransitive term, which finds
  # the cycle.
  model_only = fit_model_tournament(None, c, record_tolerance=None)
  assert model_only.chosen.rank >= 1
  assert model_only.cv_log_loss < model_only.bt_cv_log_loss
  assert np.asarray(exact.top_cycle(model_only.P)).tolist() == true_core


@pytest.mark.slow  # two more fits with cross-validation, about 4 s
def test_rps_above_transitive_bradley_terry_alone_needs_the_record_bands():
  c, P_true = rps_above_transitive(0)
  true_core = np.asarray(exact.top_cycle(jnp.asarray(P_true))).tolist()
  # Bradley-Terry alone is transitive: a singleton core ...
  bt_only = fit_model_tournament(None, c, ranks=(0,), record_tolerance=None)
  assert bt_only.chosen.rank == 0
  assert int(np.asarray(exact.top_cycle(bt_only.P)).sum()) == 1
  # ... unless the pairs' own records bound it.
  bt_banded = fit_model_tournament(None, c, ranks=(0,))
  assert np.asarray(exact.top_cycle(bt_banded.P)).tolist() == true_core


def test_record_band_profile_is_the_minimum_over_the_pair_effect():
  """Closed-form profile = numerical min over d of logistic loss + lambda |d| (SciPy, float64)."""
  from scipy.optimize import minimize_scalar

  from ste_jax.evaluate._model_estimator import banded_pair_nll, record_band

  with jax.enable_x64(True):
    w_ij = jnp.asarray([10.0, 0.0, 3.0, 1.0, 250.5, 7.0, 0.0])
    w_ji = jnp.asarray([0.0, 10.0, 2.0, 0.0, 249.5, 13.0, 0.0])
    h = jnp.asarray([-0.2, 1.5, 0.1, -3.0, 0.4, 2.0, 0.7])
    band = record_band(w_ij, w_ji, 2.0)
    got = np.asarray(banded_pair_nll(h, w_ij, w_ji, band))
    grad = np.asarray(jax.grad(lambda x: jnp.sum(banded_pair_nll(x, w_ij, w_ji, band)))(h))
    for q in range(h.shape[0]):
      wi, wj, hq = float(w_ij[q]), float(w_ji[q]), float(h[q])
      lam = np.sqrt(wi + wj)  # (c / 2) sqrt(n) with c = 2

      def f(d):
        return wi * np.logaddexp(0, -(hq + d)) + wj * np.logaddexp(0, hq + d) + lam * abs(d)

      best = minimize_scalar(f, bounds=(-40, 40), method="bounded", options={"xatol": 1e-10}).fun
      np.testing.assert_allclose(got[q], best, rtol=1e-7, atol=1e-7)
      # Gradient in h: the logistic gradient clipped to [-lambda, lambda].
      logistic = (wi + wj) / (1 + np.exp(-hq)) - wi
      np.testing.assert_allclose(grad[q], np.clip(logistic, -lam, lam), rtol=1e-9, atol=1e-9)
    # A pair never played has an unbounded band and no slack: no NaN, zero loss.
    assert np.isneginf(band.lo[-1]) and np.isposinf(band.hi[-1]) and float(band.slack[-1]) == 0.0
    off = record_band(w_ij, w_ji, jnp.inf)
    assert (
      np.all(np.isneginf(off.lo))
      and np.all(np.isposinf(off.hi))
      and np.all(np.asarray(off.slack) == 0)
    )


def test_table_keeps_observed_pairs_within_their_record_bands():
  c, _ = rps_above_transitive(1, games=12)
  fit = fit_model_tournament(None, c)
  pairs = observed_pairs(c)
  w_ij, w_ji = (np.asarray(w, np.float64) for w in pair_wins(pairs, c.outcome, c.weight))
  games = w_ij + w_ji
  P = np.asarray(fit.P, np.float64)[np.asarray(pairs.i), np.asarray(pairs.j)]
  assert np.all(np.abs(games * P - w_ij) <= np.sqrt(games) * (1 + 1e-5) + 1e-4)
  np.testing.assert_allclose(np.asarray(fit.P) + np.asarray(fit.P).T, 1.0, atol=1e-6)


def test_many_games_per_pair_give_the_pairs_own_win_rates():
  """Consistency: with 20,000 games per observed pair the table's P is each pair's win rate."""
  rng = np.random.default_rng(3)
  n = 6
  P_true = rng.uniform(0.2, 0.8, size=(n, n))
  P_true = np.triu(P_true, 1) + np.tril(1 - P_true.T, -1)
  wins = np.triu(rng.binomial(20000, P_true), 1).astype(np.float64)
  wins = wins + np.tril(20000 - wins.T, -1)
  c = from_wins(wins)
  fit = fit_model_tournament(None, c)
  rate = wins / np.maximum(wins + wins.T, 1)
  off = ~np.eye(n, dtype=bool)
  np.testing.assert_allclose(
    np.asarray(fit.P)[off], rate[off], atol=2 * 0.5 / np.sqrt(20000) + 1e-4
  )


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_record_tolerance_must_be_finite_and_positive(bad):
  c, _ = rps_above_transitive(0, n=5, games=2)
  with pytest.raises(ValueError, match="record_tolerance"):
    fit_model_tournament(None, c, record_tolerance=bad)


@pytest.mark.slow  # statistical: three planted-core fits, about 11 s on 2 cores
def test_model_core_equals_posterior_core_on_dense_data():
  """Planted core, every pair observed, 50 games a pair: both estimators find the same hard core."""
  for seed in range(3):
    k1, k2 = jax.random.split(jax.random.key(seed))
    planted = planted_core_tournament(k1, n=15, core_size=5)
    wins = sample_comparisons(k2, planted.P, per_pair=50, missing_rate=0.0).wins
    c = from_wins(wins)
    fit = fit_model_tournament(jax.random.key(seed), c)
    post = PosteriorEdgeEstimator().fit(jax.random.key(0), c)
    tc_model, uc_model = ModelEstimator().hard_memberships(fit.P)
    tc_post, uc_post = PosteriorEdgeEstimator().hard_memberships(post.edges)
    assert (
      np.asarray(tc_model).tolist()
      == np.asarray(tc_post).tolist()
      == np.asarray(planted.core_mask).tolist()
    )


def test_bradley_terry_fit_matches_newton_map_estimate():
  """Rank 0, one strength ridge, no record bands = ridge-regularized BT MAP, solved by Newton."""
  rng = np.random.default_rng(1)
  n = 8
  wins = rng.integers(0, 6, size=(n, n)).astype(np.float64) * (rng.random((n, n)) < 0.6)
  np.fill_diagonal(wins, 0)
  c = from_wins(wins)
  lam = 0.5
  fit = fit_model_tournament(
    None, c, ranks=(0,), strength_l2=(lam,), num_steps=200, record_tolerance=None
  )
  ref = bradley_terry(
    jnp.asarray(wins, jnp.float32), prior="always", prior_strength=lam, max_iter=200
  )
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
  fit = fit_model_tournament(None, c, ranks=(0, 1), skew_l2=(1.0,))
  P_again = jax.jit(lambda w: fit.refit(c.outcome, w))(c.weight)
  np.testing.assert_allclose(np.asarray(P_again), np.asarray(fit.P), atol=2e-2)
  W = jnp.stack([c.weight, 2 * c.weight, c.weight])
  Ps = jax.jit(jax.vmap(lambda w: fit.refit(c.outcome, w)))(W)
  assert Ps.shape == (3, 8, 8)
  np.testing.assert_allclose(np.asarray(Ps[0]), np.asarray(Ps[2]))
  np.testing.assert_allclose(np.asarray(Ps + jnp.swapaxes(Ps, -1, -2)), 1.0, atol=1e-6)


def test_cross_validation_table_equals_each_fold_and_candidate_fitted_alone():
  """The stage's one compiled map over (fold, candidate) returns, at [f, c], fold f's held-out
  log-loss of candidate c fitted on fold f's training counts (checked fit by fit, unmapped)."""
  from ste_jax.evaluate import _model_estimator as me
  from ste_jax.models._intransitive import init_intransitive_params

  c, _ = rps_above_transitive(1, n=8)
  pairs = observed_pairs(c)
  held = jnp.asarray(me._fold_weights(jax.random.key(5), c.weight, 3), c.weight.dtype)
  train, test = me._fold_wins(pairs, c.outcome, held)
  params0 = init_intransitive_params(jax.random.key(6), 8, 2)
  grid = [me.Candidate(0, 0.3, 1.0), me.Candidate(1, 0.3, 10.0), me.Candidate(2, 1.0, 1.0)]
  table = me._cv_stage(params0, pairs, train, test, grid, 2.0, 20, 4)  # padded to 4 candidates
  assert table.shape == (3, 3)
  for f in range(3):
    for k, cand in enumerate(grid):
      mask = (jnp.arange(2) < cand.rank).astype(params0.u.dtype)
      p = me.fit_intransitive(
        dataclasses.replace(params0, mask=mask),
        pairs,
        train[0][f],
        train[1][f],
        cand.l2_strength,
        cand.l2_skew,
        2.0,
        num_steps=20,
      )
      expected = me._heldout_nll(p, pairs, test[0][f], test[1][f]) / jnp.sum(
        test[0][f] + test[1][f]
      )
      np.testing.assert_allclose(table[f, k], float(expected), rtol=2e-4)


def test_masked_out_components_are_dropped_without_changing_the_fits():
  """The Bradley-Terry CV stage and the refits carry only the components in use: the same
  held-out losses and refitted tournaments as fits that carry every component masked out."""
  from ste_jax.evaluate import _model_estimator as me
  from ste_jax.models._intransitive import init_intransitive_params

  c, _ = rps_above_transitive(1, n=8)
  pairs = observed_pairs(c)
  held = jnp.asarray(me._fold_weights(jax.random.key(5), c.weight, 3), c.weight.dtype)
  train, test = me._fold_wins(pairs, c.outcome, held)
  params0 = init_intransitive_params(jax.random.key(6), 8, 2)
  grid = [me.Candidate(0, 0.3, 1.0), me.Candidate(0, 3.0, 1.0)]
  table = me._cv_stage(params0, pairs, train, test, grid, 2.0, 20, 2)
  zero = dataclasses.replace(params0, mask=jnp.zeros(2, params0.u.dtype))
  for f in range(3):
    for k, cand in enumerate(grid):
      args = (pairs, train[0][f], train[1][f], cand.l2_strength, cand.l2_skew, 2.0)
      p = me.fit_intransitive(zero, *args, num_steps=20)
      expected = me._heldout_nll(p, pairs, test[0][f], test[1][f]) / jnp.sum(
        test[0][f] + test[1][f]
      )
      np.testing.assert_allclose(table[f, k], float(expected), rtol=1e-5)

  fit = fit_model_tournament(None, c, ranks=(0,), strength_l2=(1.0,))
  state = fit.refit_state()
  assert state[0].u.shape == (8, 0) and fit.params.u.shape[1] > 0
  full = (fit.params, fit.pairs, state[2])
  w = 2 * c.weight
  np.testing.assert_allclose(
    np.asarray(me.refit_tournament(state, c.outcome, w, num_steps=12)),
    np.asarray(me.refit_tournament(full, c.outcome, w, num_steps=12)),
    atol=1e-5,
  )


def test_deterministic_given_key():
  c, _ = rps_above_transitive(1, n=8)  # the shapes of the refit test: its compiled fits are reused
  f1 = fit_model_tournament(jax.random.key(3), c, ranks=(0, 1), skew_l2=(1.0,))
  f2 = fit_model_tournament(jax.random.key(3), c, ranks=(0, 1), skew_l2=(1.0,))
  assert np.array_equal(np.asarray(f1.P), np.asarray(f2.P)) and f1.chosen == f2.chosen


def test_the_fit_depends_on_the_data_only_through_the_pair_counts():
  """Rows shuffled and turned round (``(b, a, 1 - o)``), or aggregated into count rows: the same
  folds, the same cross-validation table and the same tournament (the folds are drawn on
  :func:`pair_cells`)."""
  from ste_jax.data import merge_into_cells

  c, _ = rps_above_transitive(1, n=8)
  rng = np.random.default_rng(0)
  order = rng.permutation(c.num_comparisons)
  turn = rng.random(c.num_comparisons) < 0.5
  a, b, o = (np.asarray(x)[order] for x in (c.a, c.b, c.outcome))
  shuffled = Comparisons.from_arrays(
    np.where(turn, b, a), np.where(turn, a, b), np.where(turn, 1 - o, o), agents=c.agents
  )
  counts = merge_into_cells(shuffled)
  assert counts.num_comparisons < c.num_comparisons
  fits = [
    fit_model_tournament(jax.random.key(3), d, ranks=(0, 1), skew_l2=(1.0,))
    for d in (c, shuffled, counts)
  ]
  for f in fits[1:]:
    assert f.chosen == fits[0].chosen and f.cv_table == fits[0].cv_table
    np.testing.assert_allclose(np.asarray(f.P), np.asarray(fits[0].P), atol=1e-6)


@pytest.mark.parametrize(
  "kwargs, match",
  [
    ({"ranks": ()}, "ranks"),
    ({"ranks": (-1,)}, "ranks"),
    ({"strength_l2": (0.0,)}, "strength_l2"),
    ({"skew_l2": (float("nan"),)}, "skew_l2"),
    ({"num_folds": 1}, "num_folds"),
    ({"num_steps": 0}, "num_steps"),
  ],
)
def test_bad_arguments(kwargs, match):
  c, _ = rps_above_transitive(0, n=4)
  with pytest.raises(ValueError, match=match):
    fit_model_tournament(None, c, **kwargs)


@pytest.mark.parametrize("m", [4, 6])
def test_too_few_comparisons_for_the_folds_fall_back_and_say_so(m):
  """Fewer comparisons than folds (4 < 5), or a split that leaves a fold empty (6 rows in 5 folds,
  checked on the split itself): no CV (a fold with nothing held out has no log-loss), the first
  candidate of the grid, finite probabilities, no NumPy warning, and the description says why."""
  import warnings

  from ste_jax.evaluate import LeaderboardSettings, core_table
  from ste_jax.evaluate._model_estimator import _fold_weights

  c = Comparisons.from_arrays([0, 1, 2, 0, 1, 2][:m], [1, 2, 0, 2, 0, 1][:m], [1.0] * m)
  if m >= 5:
    k_fold, _ = jax.random.split(jax.random.key(0))  # the fit's fold key
    held = _fold_weights(k_fold, c.weight, 5)
    assert (held.sum(axis=1) == 0).any()  # the case under test: some fold holds no comparison
  with warnings.catch_warnings():
    warnings.simplefilter("error")  # the NumPy RuntimeWarning of an empty fold fails the test
    fit = fit_model_tournament(jax.random.key(0), c)
    table = core_table(jax.random.key(0), c, "model", LeaderboardSettings(num_replicas=0))
  assert fit.num_folds == 0 and fit.chosen == Candidate(0, 0.1, 1.0)  # the grids' first values
  assert np.isfinite(np.asarray(fit.P)).all()
  assert np.isnan(fit.cv_log_loss) and np.isnan(fit.bt_cv_log_loss)
  text = fit.describe()
  assert "too few comparisons for cross-validation" in text and "nan" not in text
  assert "too few comparisons" in table.conventions() and "nan" not in table.conventions()
