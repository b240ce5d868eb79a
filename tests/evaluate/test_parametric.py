"""Parametric replicas of the model estimator with covariates and tie outcomes."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.data import Comparisons, merge_into_cells
from ste_jax.evaluate import ModelEstimator, bootstrap_hard_memberships, normalize_differences
from ste_jax.evaluate._replicas import resample_unit_weights

STRENGTH = np.array([0.8, 0.2, 0.0, -0.5, -0.9])


def _davidson_battles(seed, m, nu=0.6):
  rng = np.random.default_rng(seed)
  n = len(STRENGTH)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  h = STRENGTH[a] - STRENGTH[b]
  p = np.stack([np.exp(h / 2), np.exp(-h / 2), np.full(m, nu)], axis=1)
  p /= p.sum(axis=1, keepdims=True)
  u = rng.random(m)
  y = np.where(u < p[:, 0], 1.0, np.where(u < p[:, 0] + p[:, 1], 0.0, 0.5))
  return Comparisons.from_arrays(a, b, y)


def _style_battles(seed, m, beta=1.0):
  rng = np.random.default_rng(seed)
  n = len(STRENGTH)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  r = rng.normal(size=m)
  h = STRENGTH[a] - STRENGTH[b] + beta * (r - r.mean()) / r.std()
  y = (rng.random(m) < 1 / (1 + np.exp(-h))).astype(np.float64)
  return Comparisons.from_arrays(a, b, y), normalize_differences({"length": r})


def _davidson_probabilities(s, nu, a, b):
  """Davidson (1970) in its own parametrization: ``pi = e^s``, tie weight ``nu sqrt(pi_a pi_b)``."""
  pa, pb = np.exp(s[a]), np.exp(s[b])
  tie = nu * np.sqrt(pa * pb)
  z = pa + pb + tie
  return np.stack([pa / z, tie / z, pb / z], axis=1)


def test_tie_replicas_redraw_wins_ties_and_losses_at_the_davidson_probabilities():
  c = _davidson_battles(0, 2000)
  est = ModelEstimator(tie_model="davidson", ranks=(0,), record_tolerance=None)
  assert est.resolve_resampling("auto") == "parametric"
  fitted = est.fit(jax.random.key(0), c)
  design = est.parametric_design(fitted, c)
  assert design.field == "weight"
  u = design.comparisons.num_comparisons // 3
  assert u == 20  # one unit per ordered pair: the rows merged
  a, b = np.asarray(design.comparisons.a)[:u], np.asarray(design.comparisons.b)[:u]
  games = np.asarray(design.comparisons.weight)[:u].astype(np.float64)
  np.testing.assert_array_equal(np.asarray(design.comparisons.outcome)[[0, u, 2 * u]], [1, 0.5, 0])
  R = 2000
  w = design.draw(jax.random.key(1), R).astype(np.float64).reshape(R, 3, u)
  np.testing.assert_allclose(w.sum(axis=1), np.broadcast_to(games, (R, u)))  # g battles each
  s = np.asarray(fitted.model.params.strength, dtype=np.float64)
  p = _davidson_probabilities(s, fitted.model.tie_parameter, a, b).T  # (3, u)
  freq = w.mean(axis=0) / games
  se = np.sqrt(p * (1 - p) / (games * R))
  z = (freq - p) / se
  assert np.abs(z).max() < 4.5, np.abs(z).max()
  assert 0.6 < z.std() < 1.4
  # A different key, other draws; the same key, the same draws.
  np.testing.assert_array_equal(
    design.draw(jax.random.key(1), 3), design.draw(jax.random.key(1), 3)
  )
  assert not np.array_equal(design.draw(jax.random.key(1), 3), design.draw(jax.random.key(2), 3))


def test_covariate_replicas_redraw_each_battle_with_its_covariate_term():
  c, cov = _style_battles(1, 1500)
  est = ModelEstimator(covariates=cov, ranks=(0,), record_tolerance=None)
  assert est.resolve_resampling("auto") == "parametric"
  fitted = est.fit(jax.random.key(0), c)
  design = est.parametric_design(fitted, c)
  assert design.field == "outcome"
  rows = design.comparisons
  assert rows.num_comparisons == c.num_comparisons  # continuous features: no two units alike
  a, b = np.asarray(rows.a), np.asarray(rows.b)
  x = np.asarray(design.state["diff"], dtype=np.float64)[:, 0]
  s = np.asarray(fitted.model.params.strength, dtype=np.float64)
  beta = float(fitted.model.beta[0])
  assert 0.8 < beta < 1.2
  p = 1 / (1 + np.exp(-(s[a] - s[b] + beta * x)))
  R = 400
  y = design.draw(jax.random.key(2), R).astype(np.float64)
  z = (y.mean(axis=0) - p) / np.sqrt(p * (1 - p) / R)
  assert abs(z.mean()) < 4 / np.sqrt(z.size)
  assert 0.9 < z.std() < 1.1
  # The covariate term matters: the edges alone (zero difference) predict these draws worse.
  p0 = 1 / (1 + np.exp(-(s[a] - s[b])))
  z0 = (y.mean(axis=0) - p0) / np.sqrt(p0 * (1 - p0) / R)
  assert z0.std() > 3


def test_a_position_control_alone_redraws_one_unit_per_ordered_pair():
  c, _ = _style_battles(2, 1000)
  est = ModelEstimator(
    covariates=normalize_differences({"position": np.ones(1000)}), ranks=(0,), record_tolerance=None
  )
  fitted = est.fit(jax.random.key(0), c)
  design = est.parametric_design(fitted, c)
  assert design.comparisons.num_comparisons == 20
  np.testing.assert_allclose(float(jnp.sum(design.comparisons.weight)), 1000)


def _replica_logits(est, state, rows, field, draws):
  def one(d):
    return est.replica_edges(state, dataclasses.replace(rows, **{field: d}))

  P = np.asarray(jax.jit(lambda ds: jax.lax.map(one, ds))(jnp.asarray(draws)), dtype=np.float64)
  i, j = np.triu_indices(P.shape[-1], 1)
  return np.log(P[:, i, j] / P[:, j, i])


@pytest.mark.parametrize(
  "kind", ["ties", pytest.param("covariates", marks=pytest.mark.slow)]
)  # each ~30 s on the shared machine; the covariate case runs with -m slow
def test_poisson_and_parametric_replicas_spread_alike_on_a_planted_arena(kind):
  """Both bootstraps estimate the same sampling spread of the fitted edges: same order."""
  R = 40
  settings = dict(ranks=(0,), record_tolerance=None, refit_steps=30)
  if kind == "ties":
    cases = [(_davidson_battles(3, 3000), ModelEstimator(tie_model="davidson", **settings))]
  else:
    c_cov, cov = _style_battles(4, 3000)
    cases = [(c_cov, ModelEstimator(covariates=cov, **settings))]
  for c, est in cases:
    fitted = est.fit(jax.random.key(0), c)
    cells = merge_into_cells(c)
    state = est.replica_state(fitted.state, cells)
    weights = resample_unit_weights(jax.random.key(5), cells.weight, R)
    poisson = _replica_logits(est, state, cells, "weight", weights).std(axis=0)
    design = est.parametric_design(fitted, c)
    draws = design.draw(jax.random.key(6), R)
    parametric = _replica_logits(est, design.state, design.comparisons, design.field, draws)
    parametric = parametric.std(axis=0)
    ratio = np.median(parametric / poisson)
    assert 0.7 < ratio < 1.4, (est.tie_model, ratio)
    # The replicas are centred on the fit: their mean logit is within a few spreads of it.
    P = np.asarray(fitted.edges, dtype=np.float64)
    i, j = np.triu_indices(5, 1)
    centre = np.log(P[i, j] / P[j, i])
    mean = _replica_logits(est, design.state, design.comparisons, design.field, draws).mean(0)
    assert np.all(np.abs(mean - centre) < 4 * parametric / np.sqrt(R) + 1e-3)


def test_parametric_memberships_are_a_function_of_the_key():
  c = _davidson_battles(5, 800)
  est = ModelEstimator(tie_model="rao-kupper", ranks=(0,), record_tolerance=None)
  fitted = est.fit(jax.random.key(0), c)
  one, two = (
    bootstrap_hard_memberships(jax.random.key(7), c, est, fitted, num_replicas=3) for _ in "ab"
  )
  np.testing.assert_array_equal(one.top_cycle, two.top_cycle)
  np.testing.assert_array_equal(one.beats, two.beats)
  assert np.asarray(one.top_cycle)[:, 0].all()
