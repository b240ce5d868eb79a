"""Tie models (Davidson, Rao-Kupper): SciPy parity, recovery, reduction to Bradley-Terry, CV."""

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.data import Comparisons
from ste_jax.evaluate._model_estimator import fit_model_tournament, observed_pairs
from ste_jax.evaluate._tie_choice import choose_tie_model
from ste_jax.evaluate._ties import (
  fit_tie_model,
  fit_tie_tournament,
  pair_outcome_counts,
)
from ste_jax.models import init_intransitive_params


def _davidson_battles(seed, strength, nu, m):
  rng = np.random.default_rng(seed)
  n = len(strength)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  h = strength[a] - strength[b]
  p = np.stack([np.exp(h / 2), np.exp(-h / 2), np.full(m, nu)], axis=1)
  p /= p.sum(axis=1, keepdims=True)
  u = rng.random(m)
  y = np.where(u < p[:, 0], 1.0, np.where(u < p[:, 0] + p[:, 1], 0.0, 0.5))
  return Comparisons.from_arrays(a, b, y), a, b, y


def _fit(c, model, *, num_steps=300):
  pairs = observed_pairs(c)
  params0 = init_intransitive_params(jax.random.key(0), c.num_agents, 1, rank=0, dtype=jnp.float64)
  counts = pair_outcome_counts(pairs, c.outcome, c.weight)
  return jax.jit(fit_tie_model, static_argnames=("model", "num_steps"))(
    params0, 0.0, pairs, counts, 0.0, 1.0, model=model, num_steps=num_steps
  )


def test_davidson_fit_equals_a_direct_scipy_maximization(x64):
  from scipy.optimize import minimize

  strength = np.array([0.8, 0.2, 0.0, -0.5, -0.9])
  c, a, b, y = _davidson_battles(0, strength, 0.6, 2000)
  params, theta = _fit(c, "davidson")

  def nll(x):  # Davidson (1970) in its own parametrization: pi = e^s, tie weight nu sqrt(pi pi)
    pi, nu = np.exp(x[:-1]), np.exp(x[-1])
    z = pi[a] + pi[b] + nu * np.sqrt(pi[a] * pi[b])
    p = np.where(y == 1, pi[a], np.where(y == 0, pi[b], nu * np.sqrt(pi[a] * pi[b]))) / z
    return -np.sum(np.log(p))

  ref = minimize(nll, np.zeros(6), method="BFGS", options={"gtol": 1e-9}).x
  s, s_ref = np.asarray(params.strength), ref[:-1]
  np.testing.assert_allclose(s - s.mean(), s_ref - s_ref.mean(), atol=1e-4)
  np.testing.assert_allclose(float(theta), ref[-1], atol=1e-4)


def test_davidson_recovers_the_planted_tie_parameter_and_strengths():
  strength = np.array([0.8, 0.2, 0.0, -0.5, -0.9])
  c, *_ = _davidson_battles(1, strength, 0.6, 6000)
  fit = fit_tie_tournament(None, c, model="davidson", ranks=(0,), strength_l2=(0.1,))
  assert abs(fit.tie_parameter - 0.6) < 0.08
  s = np.asarray(fit.params.strength, dtype=np.float64)
  np.testing.assert_allclose(s - s.mean(), strength - strength.mean(), atol=0.1)
  # The edge is P(a wins | decisive) = sigmoid(s_a - s_b) under Davidson.
  P = np.asarray(fit.P, dtype=np.float64)
  assert abs(P[0, 4] - 1 / (1 + np.exp(-(s[0] - s[4])))) < 1e-5


def test_without_ties_both_tie_models_reduce_to_bradley_terry(x64):
  from sklearn.linear_model import LogisticRegression

  strength = np.array([0.8, 0.2, 0.0, -0.5, -0.9])
  c, a, b, y = _davidson_battles(2, strength, 0.0, 1500)
  assert not np.any(y == 0.5)
  X = np.zeros((len(a), 5))
  X[np.arange(len(a)), a], X[np.arange(len(a)), b] = 1.0, -1.0
  lr = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
  bt = lr.coef_[0] - lr.coef_[0].mean()
  for model in ("davidson", "rao-kupper"):
    params, _ = _fit(c, model)
    s = np.asarray(params.strength)
    np.testing.assert_allclose(s - s.mean(), bt, atol=1e-3, err_msg=model)


def test_rao_kupper_recovers_its_planted_threshold():
  rng = np.random.default_rng(3)
  strength = np.array([0.6, 0.0, -0.6])
  m, eta = 6000, 0.4
  a = rng.integers(0, 3, m)
  b = (a + rng.integers(1, 3, m)) % 3
  h = strength[a] - strength[b]
  pa, pb = 1 / (1 + np.exp(-(h - eta))), 1 / (1 + np.exp(-(-h - eta)))
  u = rng.random(m)
  y = np.where(u < pa, 1.0, np.where(u < pa + pb, 0.0, 0.5))
  c = Comparisons.from_arrays(a, b, y)
  fit = fit_tie_tournament(None, c, model="rao-kupper", ranks=(0,), strength_l2=(0.1,))
  assert abs(np.log(fit.tie_parameter) - eta) < 0.05
  assert "rao-kupper tie model" in fit.describe()


def test_model_estimator_with_a_tie_model_fits_and_resamples_cells():
  from ste_jax.evaluate import ModelEstimator, bootstrap_hard_memberships

  strength = np.array([0.8, 0.2, 0.0, -0.5, -0.9])
  c, *_ = _davidson_battles(4, strength, 0.6, 2000)
  est = ModelEstimator(tie_model="davidson", ranks=(0,), record_tolerance=None)
  assert est.resolve_resampling("auto") == "parametric"  # wins, ties, losses redrawn
  fitted = est.fit(jax.random.key(0), c)
  assert "davidson tie model (Davidson nu = 0." in fitted.model.describe()
  assert np.flatnonzero(np.asarray(est.hard_memberships(fitted.edges)[0])).tolist() == [0]
  boot = bootstrap_hard_memberships(jax.random.key(1), c, est, fitted, num_replicas=4)
  assert np.asarray(boot.top_cycle)[:, 0].all()


def test_cross_validation_chooses_davidson_on_davidson_battles():
  from ste_jax.evaluate import ModelEstimator, bootstrap_hard_memberships

  strength = np.array([1.5, 0.8, 0.2, -0.4, -1.0, -1.6])
  c, *_ = _davidson_battles(5, strength, 0.8, 6000)
  est = ModelEstimator(tie_model="auto", ranks=(0,), record_tolerance=None)
  fitted = est.fit(jax.random.key(0), c)
  assert fitted.model.model == "davidson"
  line = fitted.model.describe()
  assert "tie model davidson chosen by 5-fold CV on the win/tie/loss likelihood" in line
  half = fit_model_tournament(jax.random.key(0), c, ranks=(0,), record_tolerance=None)
  model, table = choose_tie_model(jax.random.key(1), c, half)
  assert model == "davidson"
  assert table["half"] > table["davidson"] + 5e-3  # half wins with a constant tie rate lose
  # The chosen model's replicas redraw ties from it (the state carries the choice).
  boot = bootstrap_hard_memberships(jax.random.key(1), c, est, fitted, num_replicas=2)
  assert np.asarray(boot.top_cycle)[:, 0].all()


def test_without_ties_the_choice_of_tie_model_does_not_change_the_tournament():
  from ste_jax.evaluate import ModelEstimator

  strength = np.array([0.8, 0.2, 0.0, -0.5, -0.9])
  c, _, _, y = _davidson_battles(6, strength, 0.0, 1500)
  assert not np.any(y == 0.5)
  settings = dict(ranks=(0,), record_tolerance=None, num_steps=200)
  half = ModelEstimator(**settings).fit(jax.random.key(0), c)
  for tie_model in ("auto", "davidson", "rao-kupper"):
    fitted = ModelEstimator(tie_model=tie_model, **settings).fit(jax.random.key(0), c)
    np.testing.assert_allclose(
      np.asarray(fitted.edges), np.asarray(half.edges), atol=2e-3, err_msg=tie_model
    )
