"""soft_maximal_lottery (IFT derivatives in every mode, tau -> 0), nash_average and alpha_rank."""

import math

import chex
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import ste_jax
from tests import oracles


def margins(rng, n, tie_prob=0.0):
  P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
  return P - P.T


def unrolled_soft_ml(M, tau, steps=3000):
  """Reference: the same predictive update unrolled in lax.scan, differentiated by autodiff."""
  K = 0.5 * (M - M.T)
  n = K.shape[0]
  eta = 1.0 / (tau + 2.0 * jnp.max(jnp.abs(K)))

  def step(z, _):
    zm = jax.nn.log_softmax((1 - eta * tau) * z + eta * K @ jnp.exp(z))
    return jax.nn.log_softmax((1 - eta * tau) * z + eta * K @ jnp.exp(zm)), None

  z, _ = jax.lax.scan(step, jnp.full((n,), -math.log(n)), None, length=steps)
  return jnp.exp(z)


def test_fixed_point_and_simplex(x64):
  M = margins(np.random.default_rng(0), 8)
  p = ste_jax.ops.soft_maximal_lottery(M, temperature=0.1)
  np.testing.assert_allclose(p, jax.nn.softmax(M @ p / 0.1), atol=1e-12)
  assert float(jnp.min(p)) > 0 and abs(float(p.sum()) - 1) < 1e-12


def test_temperature_to_zero_gives_maximal_lottery(x64):
  rng = np.random.default_rng(1)
  for majority in (True, False):
    P = oracles.random_tournament(rng, 7)
    M = np.asarray(ste_jax.exact.margin_matrix(P, majority=majority))
    ml = np.asarray(ste_jax.exact.maximal_lottery(M))
    errors = [
      float(jnp.max(jnp.abs(ste_jax.ops.soft_maximal_lottery(M, temperature=t) - ml)))
      for t in (0.1, 0.01, 0.001)
    ]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-2, errors


def test_gradients_match_finite_differences_and_unrolled(x64):
  M = jnp.asarray(margins(np.random.default_rng(2), 4))
  tau = 0.3
  w = jnp.arange(1.0, 5.0)

  def loss(M, tau):
    return jnp.dot(w, ste_jax.ops.soft_maximal_lottery(M, temperature=tau))

  check_grads(jax.jit(loss), (M, tau), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
  unrolled = lambda M, t: jnp.dot(w, unrolled_soft_ml(M, t))
  gM, gt = jax.grad(loss, argnums=(0, 1))(M, tau)
  rM, rt = jax.grad(unrolled, argnums=(0, 1))(M, tau)
  np.testing.assert_allclose(gM, rM, atol=1e-9)
  np.testing.assert_allclose(gt, rt, atol=1e-9)
  # Forward mode and second order (the custom JVP rule, applied again) against the unrolled solver.
  dM = jnp.asarray(np.random.default_rng(3).normal(size=M.shape))
  tangent = jax.jit(lambda M, dM: jax.jvp(loss, (M, tau), (dM, 0.5))[1])(M, dM)
  expect = jax.jit(lambda M, dM: jax.jvp(unrolled, (M, tau), (dM, 0.5))[1])(M, dM)
  np.testing.assert_allclose(tangent, expect, atol=1e-9)


@pytest.mark.slow  # 10-20 s: second-order finite differences, and the unrolled solver's Hessian
def test_second_order_matches_finite_differences_and_the_unrolled_solver(x64):
  M = jnp.asarray(margins(np.random.default_rng(2), 4))
  w = jnp.arange(1.0, 5.0)
  loss = lambda M, t: jnp.dot(w, ste_jax.ops.soft_maximal_lottery(M, temperature=t))
  check_grads(jax.jit(loss), (M, 0.3), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
  unrolled = lambda M, t: jnp.dot(w, unrolled_soft_ml(M, t))
  hessian = jax.jit(jax.hessian(loss, argnums=(0, 1)))(M, 0.3)
  expect = jax.jit(jax.hessian(unrolled, argnums=(0, 1)))(M, 0.3)
  chex.assert_trees_all_close(hessian, expect, atol=1e-7)


def test_finite_at_ties(x64):
  M = jnp.zeros((5, 5))
  p = ste_jax.ops.soft_maximal_lottery(M, temperature=1e-3)
  np.testing.assert_allclose(p, np.full(5, 0.2), atol=1e-12)
  g = jax.grad(lambda M: ste_jax.ops.soft_maximal_lottery(M, temperature=1e-3)[0])(M)
  assert bool(jnp.all(jnp.isfinite(g)))


def test_equivariance_vmap_jit(x64):
  rng = np.random.default_rng(4)
  Ms = np.stack([margins(rng, 6, tie_prob=0.2) for _ in range(3)])
  perm = rng.permutation(6)
  f = lambda M: ste_jax.ops.soft_maximal_lottery(M, temperature=0.2)  # noqa: E731
  batched = np.asarray(f(Ms))
  np.testing.assert_allclose(batched, np.stack([np.asarray(f(M)) for M in Ms]), atol=1e-12)
  np.testing.assert_allclose(np.asarray(jax.jit(f)(Ms)), batched, atol=1e-12)
  np.testing.assert_allclose(np.asarray(jax.vmap(f)(Ms)), batched, atol=1e-12)
  np.testing.assert_allclose(np.asarray(f(Ms[0][np.ix_(perm, perm)])), batched[0][perm], atol=1e-10)


def test_float32_default_and_errors():
  p = ste_jax.ops.soft_maximal_lottery(np.zeros((3, 3), np.float32), temperature=0.5)
  assert p.dtype == jnp.float32
  with pytest.raises(ValueError, match="temperature"):
    ste_jax.ops.soft_maximal_lottery(np.zeros((3, 3)), temperature=-1.0)
  with pytest.raises(ValueError, match="M must be a square"):
    ste_jax.ops.soft_maximal_lottery(np.zeros((3, 4)), temperature=1.0)


# ----------------------------------------------------------------------------- Nash averaging
def test_nash_average_biased_rps_and_clone_invariance(x64):
  a, b, c = 0.5, 1.0, 0.1
  A = np.array([[0, -a, b], [a, 0, -c], [-b, c, 0]])  # Nash: p ∝ (c, b, a) (A p = 0)
  out = ste_jax.ops.nash_average(A)
  np.testing.assert_allclose(out.distribution, np.array([c, b, a]) / (a + b + c), atol=1e-10)
  np.testing.assert_allclose(out.skill, np.zeros(3), atol=1e-10)
  # Balduzzi et al.: a redundant copy of agent 0 shares its mass; the skills do not change.
  A4 = A[np.ix_([0, 1, 2, 0], [0, 1, 2, 0])]
  out4 = ste_jax.ops.nash_average(A4)
  np.testing.assert_allclose(
    np.asarray(out4.distribution)[[0, 3]], np.full(2, c / (a + b + c) / 2), atol=1e-8
  )
  np.testing.assert_allclose(out4.skill, np.zeros(4), atol=1e-8)
  # Transitive: the top agent gets everything; skills are minus the margins against it.
  T = np.array([[0, 1, 2], [-1, 0, 1], [-2, -1, 0.0]])
  out = ste_jax.ops.nash_average(T)
  np.testing.assert_allclose(out.distribution, [1, 0, 0], atol=1e-8)
  np.testing.assert_allclose(out.skill, [0, -1, -2], atol=1e-8)


# ----------------------------------------------------------------------------- alpha-Rank
def literal_alpha_rank(pi, alpha, m):
  """OpenSpiel's single-population alpha-Rank (finite alpha) transcribed with loops and an
  eigenvector."""
  n = pi.shape[0]
  C = np.zeros((n, n))
  for s in range(n):
    for r in range(n):
      if r == s:
        continue
      total = 0.0
      for l in range(1, m):
        prod = 1.0
        for k in range(1, l + 1):
          f_r = ((k - 1) * pi[r, r] + (m - k) * pi[r, s]) / (m - 1)
          f_s = (k * pi[s, r] + (m - k - 1) * pi[s, s]) / (m - 1)
          prod *= math.exp(-alpha * (f_r - f_s))
        total += prod
      C[s, r] = 1.0 / (1.0 + total) / (n - 1)
    C[s, s] = 1.0 - C[s].sum()
  vals, vecs = np.linalg.eig(C.T)
  v = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
  return v / v.sum()


def test_alpha_rank_rps_and_literal_oracle(x64):
  rps = np.array([[0.0, -1, 1], [1, 0, -1], [-1, 1, 0]])
  np.testing.assert_allclose(ste_jax.ops.alpha_rank(rps, alpha=5.0), np.full(3, 1 / 3), atol=1e-12)
  biased = np.array([[0.0, -0.5, 1], [0.5, 0, -0.1], [-1, 0.1, 0]])
  rng = np.random.default_rng(0)
  general = rng.normal(size=(4, 4))  # not constant-sum: exercises the k-dependent fitness terms
  for pi, alpha, m in [
    (biased, 2.0, 20),
    (general, 1.5, 10),
    (oracles.random_tournament(rng, 5), 3.0, 50),
  ]:
    np.testing.assert_allclose(
      ste_jax.ops.alpha_rank(pi, alpha=alpha, population_size=m),
      literal_alpha_rank(pi, alpha, m),
      atol=1e-9,
    )


def test_alpha_rank_batched_and_differentiable(x64):
  rng = np.random.default_rng(1)
  Ps = np.stack([oracles.random_tournament(rng, 4) for _ in range(3)])
  batched = np.asarray(ste_jax.ops.alpha_rank(Ps, alpha=2.0))
  np.testing.assert_allclose(
    batched, np.stack([np.asarray(ste_jax.ops.alpha_rank(P, alpha=2.0)) for P in Ps]), atol=1e-12
  )
  check_grads(
    jax.jit(lambda P, a: ste_jax.ops.alpha_rank(P, alpha=a, population_size=8)[0]),
    (jnp.asarray(Ps[0]), 2.0),
    order=1,
    atol=1e-6,
    rtol=1e-6,
  )
  with pytest.raises(ValueError, match="population_size"):
    ste_jax.ops.alpha_rank(Ps, alpha=1.0, population_size=1)
