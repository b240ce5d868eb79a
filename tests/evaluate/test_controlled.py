"""The controlled model tournament: parity with logistic regression, planted style biases."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.data import Comparisons
from ste_jax.evaluate import (
  ModelEstimator,
  bootstrap_hard_memberships,
  fit_controlled_tournament,
  normalize_differences,
)
from ste_jax.evaluate._controlled import fit_covariate_model, penalized_hessian
from ste_jax.evaluate._model_estimator import observed_pairs
from ste_jax.models import init_intransitive_params


def _style_battles(seed, strength, verbose, beta, m, *, cycle=None):
  """Battles whose logit is ``s_a - s_b (+ cycle) + beta * z``, ``z`` the normalized length ratio.

  Agents in ``verbose`` write answers three times as long on average.
  """
  rng = np.random.default_rng(seed)
  n = len(strength)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  mean_len = np.where(np.isin(np.arange(n), verbose), 900.0, 300.0)
  la = rng.gamma(4.0, mean_len[a] / 4.0)
  lb = rng.gamma(4.0, mean_len[b] / 4.0)
  r = (la - lb) / (la + lb + 1.0)
  z = (r - r.mean()) / r.std()
  h = np.asarray(strength)[a] - np.asarray(strength)[b] + beta * z
  if cycle is not None:
    h = h + cycle[a, b]
  won = rng.random(m) < 1.0 / (1.0 + np.exp(-h))
  c = Comparisons.from_arrays(a, b, won.astype(np.float64))
  return c, {"length": r}


def _cores(P):
  tc, uc = ModelEstimator().hard_memberships(jnp.asarray(P))
  return np.flatnonzero(np.asarray(tc)).tolist(), np.flatnonzero(np.asarray(uc)).tolist()


def test_bradley_terry_with_style_equals_unpenalized_logistic_regression(x64):
  """No intransitive term, no ridge: coefficients = scikit-learn's unpenalized logistic fit."""
  from sklearn.linear_model import LogisticRegression

  rng = np.random.default_rng(3)
  n, m = 7, 1500
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  raw = {k: rng.normal(size=m) for k in ("length", "header", "bold")}
  raw["position"] = np.ones(m)
  cov = normalize_differences(raw, dtype=jnp.float64)
  x = np.asarray(cov.diff)
  s_true = rng.normal(size=n)
  h = s_true[a] - s_true[b] + x @ np.array([0.8, -0.4, 0.2, 0.3])
  y = (rng.random(m) < 1 / (1 + np.exp(-h))).astype(np.float64)
  y[:100] = 0.5  # ties: half a win each way
  c = Comparisons.from_arrays(a, b, y)
  pairs = observed_pairs(c)
  params0 = init_intransitive_params(jax.random.key(0), n, 1, rank=0, dtype=jnp.float64)
  params, beta = jax.jit(fit_covariate_model, static_argnames="num_steps")(
    params0, jnp.zeros(4), pairs, c.outcome, c.weight, cov.diff, 0.0, 1.0, num_steps=300
  )
  # The same design as a logistic regression: a tie is a win and a loss of weight 1/2 each.
  design = np.zeros((m, n + 4))
  design[np.arange(m), a] = 1.0
  design[np.arange(m), b] = -1.0
  design[:, n:] = x
  X = np.concatenate([design, design])
  Y = np.concatenate([np.ones(m), np.zeros(m)])
  W = np.concatenate([y, 1 - y])
  lr = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000)
  lr.fit(X, Y, sample_weight=W)
  coef = lr.coef_[0]
  s_ref = coef[:n] - coef[:n].mean()
  s_fit = np.asarray(params.strength) - float(np.mean(params.strength))
  np.testing.assert_allclose(s_fit, s_ref, atol=1e-4)
  np.testing.assert_allclose(np.asarray(beta), coef[n:], atol=1e-4)
  # The penalized Hessian (here unpenalized) is the logistic-regression information X' W X.
  H = np.asarray(penalized_hessian(params, beta, pairs, c.outcome, c.weight, cov.diff, 0.0, 1.0))
  p = 1 / (1 + np.exp(-design @ np.concatenate([np.asarray(params.strength), np.asarray(beta)])))
  info = design.T @ (design * (p * (1 - p))[:, None])
  keep = np.r_[0:n, H.shape[0] - 4 : H.shape[0]]  # strengths and beta (rank-0 factors unused)
  np.testing.assert_allclose(H[np.ix_(keep, keep)], info, rtol=1e-8, atol=1e-8)


def test_planted_length_bias_moves_a_verbose_weak_agent_out_of_the_core():
  # Agent 0 is the strongest; agent 4 is weaker but three times as verbose, and length pays.
  strength = np.array([0.6, 0.3, 0.0, -0.2, 0.0])
  c, raw = _style_battles(0, strength, verbose=[4], beta=1.0, m=6000)
  fit = fit_controlled_tournament(
    jax.random.key(1), c, normalize_differences(raw), ranks=(0,), record_tolerance=None
  )
  assert 4 in _cores(fit.uncontrolled.P)[0]  # the verbose agent tops the uncontrolled table
  assert _cores(fit.P) == ([0], [0])  # controlled: the truly strongest alone
  lo, hi = fit.beta_intervals()
  assert lo[0] < 1.0 < hi[0]
  assert 0 < hi[0] - lo[0] < 0.3
  # The controlled strengths recover the truth (up to a common shift).
  s = np.asarray(fit.params.strength, dtype=np.float64)
  np.testing.assert_allclose(s - s.mean(), strength - strength.mean(), atol=0.12)


def test_without_bias_the_control_changes_nothing_beyond_noise():
  strength = np.array([0.6, 0.3, 0.0, -0.2, 0.0])
  c, raw = _style_battles(2, strength, verbose=[4], beta=0.0, m=6000)
  fit = fit_controlled_tournament(
    jax.random.key(1), c, normalize_differences(raw), ranks=(0,), record_tolerance=None
  )
  lo, hi = fit.beta_intervals()
  assert lo[0] < 0.0 < hi[0]
  assert _cores(fit.P) == _cores(fit.uncontrolled.P)
  gap = np.abs(np.asarray(fit.P) - np.asarray(fit.uncontrolled.P)).max()
  assert gap < 0.02, gap


def test_planted_rock_paper_scissors_survives_style_control():
  n = 6
  strength = np.array([1.0, 1.0, 1.0, -0.5, -0.6, -0.7])
  cycle = np.zeros((n, n))
  for i, j in ((0, 1), (1, 2), (2, 0)):
    cycle[i, j], cycle[j, i] = 1.5, -1.5
  c, raw = _style_battles(4, strength, verbose=[5], beta=0.8, m=6000, cycle=cycle)
  fit = fit_controlled_tournament(
    jax.random.key(2), c, normalize_differences(raw), ranks=(0, 1), record_tolerance=None
  )
  assert fit.chosen.rank == 1
  P = np.asarray(fit.P)
  assert P[0, 1] > 0.6 and P[1, 2] > 0.6 and P[2, 0] > 0.6
  assert _cores(fit.P)[0] == [0, 1, 2]
  lo, hi = fit.beta_intervals()
  assert lo[0] < 0.8 < hi[0]


def test_covariates_of_the_wrong_shape_are_refused():
  from ste_jax._errors import InputError

  c = Comparisons.from_arrays([0, 1, 2] * 10, [1, 2, 0] * 10, [1.0] * 30)
  cov = normalize_differences({"length": np.arange(29.0)})
  with pytest.raises(InputError, match="one row per comparison"):
    fit_controlled_tournament(None, c, cov, ranks=(0,))


def test_model_estimator_with_covariates_reports_the_verdict_changes_and_resamples_cells():
  from ste_jax.data import merge_into_cells
  from ste_jax.evaluate import bootstrap_hard_memberships
  from ste_jax.evaluate._controlled import controlled_replica_edges

  strength = np.array([0.6, 0.3, 0.0, -0.2, 0.0])
  c, raw = _style_battles(0, strength, verbose=[4], beta=1.0, m=3000)
  est = ModelEstimator(
    covariates=normalize_differences(raw), ranks=(0,), record_tolerance=None, refit_steps=30
  )
  fitted = est.fit(jax.random.key(1), c)
  assert "Top Cycle leaves 4, enters 0" in fitted.model.describe()
  assert "length +" in fitted.model.describe()
  assert est.resolve_resampling("auto") == "parametric"  # redrawn with the covariate term
  # A replica whose cells keep their weights is the data itself: the refit stays at the fit,
  # which holds only if every row was mapped to its own cell with its share of the weight.
  cells = merge_into_cells(c)
  assert cells.num_comparisons < c.num_comparisons
  state = est.replica_state(fitted.state, cells)
  P = controlled_replica_edges(state, cells, num_steps=30)
  np.testing.assert_allclose(np.asarray(P), np.asarray(fitted.edges), atol=2e-3)
  for resampling in ("poisson", "parametric"):
    boot = bootstrap_hard_memberships(
      jax.random.key(3), c, est, fitted, num_replicas=4, batch_size=2, resampling=resampling
    )
    assert np.asarray(boot.top_cycle).shape == (4, 5)
    assert np.asarray(boot.top_cycle)[:, 0].mean() >= 0.5


def _davidson_style_battles(seed, strength, beta, nu, m):
  rng = np.random.default_rng(seed)
  n = len(strength)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  raw = {"length": rng.normal(size=m), "position": np.ones(m)}
  x = np.column_stack(
    [(raw["length"] - raw["length"].mean()) / raw["length"].std(), raw["position"]]
  )
  h = strength[a] - strength[b] + x @ beta
  p = np.stack([np.exp(h / 2), np.exp(-h / 2), np.full(m, nu)], axis=1)
  p /= p.sum(axis=1, keepdims=True)
  u = rng.random(m)
  y = np.where(u < p[:, 0], 1.0, np.where(u < p[:, 0] + p[:, 1], 0.0, 0.5))
  return Comparisons.from_arrays(a, b, y), raw, a, b, x, y


def test_davidson_with_covariates_equals_a_direct_scipy_maximization(x64):
  """One likelihood with ties and covariates: estimates and Wald errors match SciPy's."""
  from scipy.optimize import minimize

  from ste_jax.evaluate._controlled import fit_covariate_tie_model, penalized_tie_hessian

  strength = np.array([0.7, 0.2, 0.0, -0.4, -0.8])
  c, raw, a, b, x, y = _davidson_style_battles(7, strength, np.array([0.6, 0.3]), 0.7, 2500)
  cov = normalize_differences(raw, dtype=jnp.float64)
  pairs = observed_pairs(c)
  params0 = init_intransitive_params(jax.random.key(0), 5, 1, rank=0, dtype=jnp.float64)
  args = (pairs, c.outcome, c.weight, cov.diff, 0.0, 1.0)
  fit = jax.jit(fit_covariate_tie_model, static_argnames=("model", "num_steps"))
  params, theta, beta = fit(params0, 0.0, jnp.zeros(2), *args, model="davidson", num_steps=400)

  def nll(z):  # Davidson (1970) with a covariate term; s_0 = 0 pins the common shift
    s, t, bb = np.concatenate([[0.0], z[:4]]), z[4], z[5:]
    h = s[a] - s[b] + x @ bb
    log_z = np.logaddexp(np.logaddexp(h / 2, -h / 2), t)
    lp = np.where(y == 1, h / 2, np.where(y == 0, -h / 2, t)) - log_z
    return -np.sum(lp)

  ref = minimize(nll, np.zeros(7), method="BFGS", options={"gtol": 1e-8}).x
  s = np.asarray(params.strength)
  np.testing.assert_allclose(s[1:] - s[0], ref[:4], atol=1e-4)
  np.testing.assert_allclose(float(theta), ref[4], atol=1e-4)
  np.testing.assert_allclose(np.asarray(beta), ref[5:], atol=1e-4)
  # Wald standard errors of beta: inverse of a central finite-difference Hessian of SciPy's NLL.
  eps, k = 1e-4, ref.size
  H = np.zeros((k, k))
  for i in range(k):
    for j in range(k):
      e_i, e_j = np.eye(k)[i] * eps, np.eye(k)[j] * eps
      H[i, j] = (
        nll(ref + e_i + e_j) - nll(ref + e_i - e_j) - nll(ref - e_i + e_j) + nll(ref - e_i - e_j)
      ) / (4 * eps**2)
  se_ref = np.sqrt(np.diag(np.linalg.inv(H))[5:])
  ours = penalized_tie_hessian(params, theta, beta, *args, model="davidson")
  from ste_jax.evaluate._controlled import beta_standard_errors

  se = beta_standard_errors(np.asarray(ours), 2)
  np.testing.assert_allclose(se, se_ref, rtol=1e-3)


def test_model_estimator_with_covariates_and_ties_fits_and_redraws_ties():
  strength = np.array([0.7, 0.2, 0.0, -0.4, -0.8])
  beta = np.array([0.8, 0.3])
  c, raw, *_ = _davidson_style_battles(8, strength, beta, 0.7, 3000)
  est = ModelEstimator(
    covariates=normalize_differences(raw), tie_model="davidson", ranks=(0,), record_tolerance=None
  )
  fitted = est.fit(jax.random.key(0), c)
  assert "ties by the davidson tie model (Davidson nu = 0." in fitted.model.describe()
  lo, hi = fitted.model.beta_intervals()
  assert np.all((lo < beta) & (beta < hi))
  design = est.parametric_design(fitted, c)
  assert design.field == "weight" and design.comparisons.num_comparisons == 3 * 3000
  w = design.draw(jax.random.key(1), 200).reshape(200, 3, 3000)
  assert abs(w[:, 1].mean() - np.mean(c.outcome == 0.5)) < 0.02  # ties redrawn at the data's rate
  for resampling in ("parametric", "poisson"):
    boot = bootstrap_hard_memberships(
      jax.random.key(2), c, est, fitted, num_replicas=2, resampling=resampling
    )
    assert np.asarray(boot.top_cycle)[:, 0].all()


def test_judge_specific_position_biases_are_recovered_within_their_intervals():
  """One judge favours the answer shown first by 0.8 logits, the other does not."""
  from ste_jax.data import judge_position_differences

  rng = np.random.default_rng(9)
  strength = np.array([0.6, 0.3, 0.0, -0.3, -0.6])
  m = 4000
  a = rng.integers(0, 5, m)
  b = (a + rng.integers(1, 5, m)) % 5
  judges = np.where(rng.random(m) < 0.5, "biased", "fair")
  h = strength[a] - strength[b] + np.where(judges == "biased", 0.8, 0.0)  # a is shown first
  y = (rng.random(m) < 1 / (1 + np.exp(-h))).astype(np.float64)
  c = Comparisons.from_arrays(a, b, y)
  cov = normalize_differences(judge_position_differences(judges))
  assert cov.names == ("position:biased", "position:fair")
  fitted = ModelEstimator(covariates=cov, ranks=(0,), record_tolerance=None).fit(
    jax.random.key(0), c
  )
  lo, hi = fitted.model.beta_intervals()
  assert lo[0] < 0.8 < hi[0] and lo[0] > 0.4  # the biased judge's advantage, clearly above 0
  assert lo[1] < 0.0 < hi[1]  # the fair judge's interval covers 0
  assert "position:biased +0." in fitted.model.describe()


@pytest.mark.slow
def test_auto_tie_model_with_covariates_chooses_davidson_and_recovers_beta():
  """Davidson battles with a planted style effect: CV with the covariates in every logit picks
  Davidson, the fitted beta covers the truth, and the replicas refit the chosen model."""
  strength = np.array([1.5, 0.8, 0.2, -0.4, -1.0, -1.6])
  beta = np.array([0.8, 0.3])
  c, raw, *_ = _davidson_style_battles(7, strength, beta, 0.7, 4000)
  est = ModelEstimator(
    covariates=normalize_differences(raw), tie_model="auto", ranks=(0,), record_tolerance=None
  )
  fitted = est.fit(jax.random.key(0), c)
  assert fitted.model.tie_model == "davidson"
  line = " ".join(fitted.model.describe().split())
  assert "tie model davidson chosen by 5-fold CV" in line
  assert "each with the covariates length, position" in line
  lo, hi = fitted.model.beta_intervals()
  assert np.all((lo < beta) & (beta < hi))
  boot = bootstrap_hard_memberships(jax.random.key(2), c, est, fitted, num_replicas=2)
  assert np.asarray(boot.top_cycle)[:, 0].all()


@pytest.mark.slow
def test_auto_tie_model_with_covariates_without_ties_scores_the_three_alike():
  """No ties: the three tie models reduce to Bradley-Terry with the covariates, so their held-out
  log-losses and the chosen controlled tournament agree with the half-win fit's."""
  from ste_jax.evaluate import fit_model_tournament
  from ste_jax.evaluate._tie_choice import choose_tie_model

  strength = np.array([0.6, 0.3, 0.0, -0.2, 0.0])
  c, raw = _style_battles(3, strength, verbose=[4], beta=1.0, m=3000)
  assert not np.any(np.asarray(c.outcome) == 0.5)
  cov = normalize_differences(raw)
  settings = dict(ranks=(0,), record_tolerance=None, num_steps=200)
  half = fit_model_tournament(jax.random.key(0), c, **settings)
  _, table = choose_tie_model(jax.random.key(1), c, half, covariates=cov, num_steps=200)
  losses = np.array([table[m] for m in ("half", "davidson", "rao-kupper")])
  assert 0.5 < losses.min() < np.log(2)  # a real log-loss, below a coin's
  assert np.ptp(losses) < 2e-3, table
  plain = ModelEstimator(covariates=cov, **settings).fit(jax.random.key(0), c)
  auto = ModelEstimator(covariates=cov, tie_model="auto", **settings).fit(jax.random.key(0), c)
  np.testing.assert_allclose(np.asarray(auto.edges), np.asarray(plain.edges), atol=3e-3)
  np.testing.assert_allclose(np.asarray(auto.model.beta), np.asarray(plain.model.beta), atol=3e-3)
