"""minimize_lbfgs (optax.lbfgs, fixed steps): known minima, descent, vmaps, SciPy oracle."""

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.evaluate._lbfgs import minimize_lbfgs


def test_ill_conditioned_quadratic_and_rosenbrock():
  A = jnp.diag(jnp.array([1.0, 10.0, 100.0, 1000.0]))
  target = jnp.array([1.0, -2.0, 3.0, 0.5])
  quad = lambda x: 0.5 * (x - target) @ A @ (x - target)
  x = jax.jit(lambda x0: minimize_lbfgs(quad, x0, num_steps=60))(jnp.zeros(4))
  np.testing.assert_allclose(np.asarray(x), np.asarray(target), atol=1e-3)
  rosen = lambda x: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
  x = minimize_lbfgs(rosen, jnp.array([-1.2, 1.0]), num_steps=200)
  np.testing.assert_allclose(np.asarray(x), [1.0, 1.0], atol=1e-2)


def test_never_increases_the_objective_and_vmaps():
  f = lambda x, c: jnp.sum(jnp.cosh(x - c)) + 0.1 * jnp.sum(x**4)
  cs = jnp.linspace(-2.0, 2.0, 5)[:, None] * jnp.ones((5, 3))
  xs = jax.vmap(lambda c: minimize_lbfgs(lambda x: f(x, c), jnp.zeros(3), num_steps=30))(cs)
  for c, x in zip(cs, xs):
    assert float(f(x, c)) <= float(f(jnp.zeros(3), c))
    loop = minimize_lbfgs(lambda x: f(x, c), jnp.zeros(3), num_steps=30)
    np.testing.assert_allclose(np.asarray(x), np.asarray(loop), atol=1e-5)
    g = jax.grad(f)(x, c)
    assert float(jnp.max(jnp.abs(g))) < 1e-3


def test_fit_reaches_scipys_minimum_of_the_model_estimators_objective():
  """The estimator's fit (its objective and 50 steps) ends at the minimum SciPy's L-BFGS-B finds.

  The objective is the model estimator's (rank 1, record bands, both ridges) on a sparse league;
  SciPy's Fortran L-BFGS-B, run to convergence in float64, is the independent solver.
  """
  from scipy.optimize import minimize

  from ste_jax.evaluate import _model_estimator as me
  from ste_jax.models._intransitive import init_intransitive_params
  from ste_jax.stats import sparse_league

  with jax.enable_x64(True):
    n = 20
    c = sparse_league(
      jax.random.key(0), num_agents=n, num_comparisons=300, dtype=jnp.float64
    ).comparisons
    pairs = me.observed_pairs(c)
    w_ij, w_ji = me.pair_wins(pairs, c.outcome, c.weight)
    params0 = init_intransitive_params(jax.random.key(1), n, 1, dtype=jnp.float64)
    l2s, l2k, tol = 0.3, 1.0, 2.0
    fitted = me.fit_intransitive(params0, pairs, w_ij, w_ji, l2s, l2k, tol, num_steps=50)
    band = me.record_band(w_ij, w_ji, tol)

    def objective(x):
      theta = (x[:n], x[n : 2 * n].reshape(n, 1), x[2 * n :].reshape(n, 1))
      return me._penalized_nll(theta, params0.mask, pairs, w_ij, w_ji, band, l2s, l2k)

    value_and_grad = jax.jit(jax.value_and_grad(objective))
    x0 = np.concatenate(
      [np.asarray(params0.strength), np.asarray(params0.u).ravel(), np.asarray(params0.v).ravel()]
    )
    oracle = minimize(
      lambda x: tuple(np.asarray(t, np.float64) for t in value_and_grad(jnp.asarray(x))),
      x0,
      jac=True,
      method="L-BFGS-B",
      options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10},
    )
    got = np.concatenate(
      [np.asarray(fitted.strength), np.asarray(fitted.u).ravel(), np.asarray(fitted.v).ravel()]
    )
    got_value = float(objective(jnp.asarray(got)))
    assert oracle.success
    assert abs(got_value - oracle.fun) <= 1e-9 * abs(oracle.fun)
    assert float(jnp.linalg.norm(value_and_grad(jnp.asarray(got))[1])) < 1e-5


def test_tolerance_stops_early_at_a_small_gradient_and_vmaps(x64):
  """With ``tolerance`` the loop stops at the first iterate whose gradient is below it (plus that
  step), long before ``num_steps``; under vmap each member stops at its own point."""
  A = jnp.diag(jnp.array([1.0, 10.0, 100.0]))

  def f(x, c):
    return 0.5 * (x - c) @ A @ (x - c) + jnp.sum(jnp.log(jnp.cosh(x)))

  count = []

  def counted(x, c):
    jax.debug.callback(lambda: count.append(1))
    return f(x, c)

  c = jnp.array([1.0, -2.0, 3.0])
  x = jax.jit(
    lambda c: minimize_lbfgs(lambda x: counted(x, c), jnp.zeros(3), num_steps=500, tolerance=1e-8)
  )(c)
  assert float(jnp.max(jnp.abs(jax.grad(f)(x, c)))) <= 1e-8
  assert len(count) < 150  # stopped: 500 steps take at least 500 evaluations
  cs = jnp.array([[1.0, -2.0, 3.0], [0.0, 0.5, -0.5]])
  xs = jax.vmap(
    lambda c: minimize_lbfgs(lambda x: f(x, c), jnp.zeros(3), num_steps=500, tolerance=1e-8)
  )(cs)
  for c, x in zip(cs, xs):
    alone = minimize_lbfgs(lambda x: f(x, c), jnp.zeros(3), num_steps=500, tolerance=1e-8)
    np.testing.assert_allclose(np.asarray(x), np.asarray(alone), atol=1e-12)
