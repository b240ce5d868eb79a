"""Temperatures at the ends of the dtype's range: the operators' limits, never NaN.

As ``gamma -> inf`` a normalized soft maximum or minimum tends to the mean of its entries, so the
pipeline tends to means (oracle: :func:`_mean_limit_scores`, written from the equations with every
soft extremum replaced by a mean); as ``tau -> inf`` the soft edges tend to ``1/2``. Large finite
temperatures are compared with the naive equations in float64 (``tests/oracles.py``), whose error
``gamma * 1e-16`` is negligible there.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ste_jax
from ste_jax.ops import (
  max_min_product,
  native_kernels,
  normalized_smax,
  normalized_softmin,
  soft_cover_scores,
  soft_reachability,
  ste_scores,
)
from tests import oracles

_N = 7


def _tournament(seed=3, n=_N):
  return oracles.random_tournament(np.random.default_rng(seed), n, margin=0.02)


def _finite(tree) -> bool:
  return all(bool(np.all(np.isfinite(np.asarray(x)))) for x in jax.tree.leaves(tree))


def _closure(D):
  """Max-min closure of ``D`` (diagonal ignored) by Floyd--Warshall in NumPy."""
  R = np.array(D, np.float64)
  np.fill_diagonal(R, 0.0)
  for k in range(R.shape[0]):
    R = np.maximum(R, np.minimum(R[:, k : k + 1], R[k : k + 1, :]))
  return R


def _mean_limit_scores(P, tau, *, smooth_reachability):
  """``(t, u)`` in the limit ``gamma, gamma_c (, reach_gamma) -> inf`` at a fixed ``tau``."""
  n = P.shape[0]
  off = ~np.eye(n, dtype=bool)
  D = np.where(off, 1.0 / (1.0 + np.exp(-(P - 0.5) / tau)), 0.0)
  if smooth_reachability:  # smax_c smin(X_ac, Y_cb) -> mean_c (X_ac + Y_cb) / 2, R = mean_k Q_k
    Qs = [D]
    for _ in range(n - 2):
      Qs.append((Qs[-1].mean(axis=1)[:, None] + D.mean(axis=0)[None, :]) / 2.0)
    R = np.mean(Qs, axis=0)
  else:
    R = _closure(D)
  t = np.array([R[a][off[a]].mean() for a in range(n)])
  cover = np.zeros((n, n))
  for c in range(n):
    for a in range(n):
      if c != a:
        witnesses = [b for b in range(n) if b not in (a, c)]
        v = np.mean([D[a, b] * (1.0 - D[c, b]) for b in witnesses])
        cover[c, a] = D[c, a] * (1.0 - v)
  u = 1.0 - np.array([cover[:, a][off[:, a]].mean() for a in range(n)])
  return t, u


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.float32, jnp.bfloat16])
@pytest.mark.parametrize("tau", [1e5, 1e30, 1e300])
def test_huge_tau_gives_the_limit_of_half_edges(dtype, tau):
  """``tau -> inf``: ``D = 1/2`` off the diagonal, so ``t = 1/2`` and (``v = 1/4``, cover
  ``3/8``) ``u = 5/8``; ``1e300`` overflows every one of these dtypes."""
  s = ste_scores(jnp.asarray(_tournament(), dtype), tau=tau)
  assert s.top_cycle.dtype == dtype
  tol = 4 * float(jnp.finfo(dtype).eps) + 1 / tau  # sigma(x / tau) - 1/2 <= x / (4 tau)
  np.testing.assert_allclose(np.asarray(s.top_cycle, np.float64), 0.5, atol=tol)
  np.testing.assert_allclose(np.asarray(s.uncovered, np.float64), 0.625, atol=tol)


def test_a_temperature_beyond_the_traced_range_is_inf_without_a_warning():
  """``1e300`` is ``inf`` in float32; the first call of a signature (a shape no other test uses)
  must not warn of the overflow when later calls do not (warnings are errors in the suite)."""
  P = jnp.full((11, 11), 0.5, jnp.bfloat16)
  for tau in (1e300, 3e38 * 10):
    s = ste_scores(P, tau=tau)
    np.testing.assert_allclose(np.asarray(s.top_cycle, np.float64), 0.5, atol=1e-2)


def test_huge_tau_in_float64():
  with jax.enable_x64(True):
    for tau in (1e30, 1e300, float(np.finfo(np.float64).max)):
      s = ste_scores(jnp.asarray(_tournament(), jnp.float64), tau=tau)
      np.testing.assert_allclose(np.asarray(s.top_cycle), 0.5, atol=1e-14)
      np.testing.assert_allclose(np.asarray(s.uncovered), 0.625, atol=1e-14)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("gamma", [3.0, 1e3, 1e5, 1e7])
def test_large_finite_temperatures_match_the_float64_equations(gamma, native):
  """float32 at ``gamma = gamma_c`` up to ``1e7`` against the naive equations in float64
  (before, the float32 Uncovered scores were wrong in the third digit from ``1e5``)."""
  P = _tournament()
  with jax.enable_x64(True):
    t64, u64 = (
      np.asarray(x)
      for x in oracles.naive_ste_scores(jnp.asarray(P), 0.1, gamma, gamma, _N - 1, reach_gamma=0.0)
    )
  with native_kernels(native):
    s = ste_scores(jnp.asarray(P, jnp.float32), tau=0.1, gamma=gamma)
  np.testing.assert_allclose(np.asarray(s.top_cycle), t64, atol=2e-6)
  np.testing.assert_allclose(np.asarray(s.uncovered), u64, atol=2e-6)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("gamma", [1e30, 1e300])
def test_huge_aggregation_temperatures_give_the_means(dtype, gamma):
  if dtype == jnp.float64:
    ctx = jax.enable_x64(True)
  else:
    ctx = jax.enable_x64(False)
  P = _tournament()
  with ctx:
    s = ste_scores(jnp.asarray(P, dtype), tau=0.1, gamma=gamma)
    r = ste_scores(jnp.asarray(P, dtype), tau=0.1, gamma=gamma, reach_gamma=gamma)
  tol = 2e-6 if dtype == jnp.float32 else 1e-12
  for got, smooth in ((s, False), (r, True)):
    t, u = _mean_limit_scores(P, 0.1, smooth_reachability=smooth)
    np.testing.assert_allclose(np.asarray(got.top_cycle, np.float64), t, atol=tol)
    np.testing.assert_allclose(np.asarray(got.uncovered, np.float64), u, atol=tol)


def test_native_and_jax_cover_kernels_agree_at_large_temperatures():
  D = jnp.asarray(
    np.asarray(ste_jax.ops.soft_majority_edges(jnp.asarray(_tournament(n=12)), tau=0.2)),
    jnp.float32,
  )

  def f(D, g):
    return jnp.sum(soft_cover_scores(D, gamma_c=g) ** 2)

  for g in (0.5, 1.0, 3.0, 1e6, 1e38, 1e300):
    outs = []
    for native in (True, False):
      with native_kernels(native):
        outs.append((soft_cover_scores(D, gamma_c=g), jax.grad(f)(D, g)))
    assert _finite(outs), g
    np.testing.assert_allclose(outs[0][0], outs[1][0], atol=2e-7)
    np.testing.assert_allclose(outs[0][1], outs[1][1], atol=2e-6)


@pytest.mark.parametrize("gamma", [3.0, 1e4, 1e8])
def test_extrema_and_products_at_large_gamma_match_float64(gamma):
  rng = np.random.default_rng(5)
  z = rng.uniform(size=(4, 9))
  mask = rng.uniform(size=(4, 9)) < 0.7
  mask[:, 0] = True
  X, Y = rng.uniform(size=(5, 6)), rng.uniform(size=(6, 4))
  with jax.enable_x64(True):  # the naive oracle in float64, exact to gamma * 1e-16
    smax64 = np.asarray(oracles._nsmax(jnp.asarray(z), gamma, axis=-1, mask=jnp.asarray(mask)))
    smin64 = np.asarray(oracles._nsmin(jnp.asarray(z), gamma, axis=-1, mask=jnp.asarray(mask)))
    inner = oracles._nsmin(
      jnp.stack(jnp.broadcast_arrays(jnp.asarray(X)[:, :, None], jnp.asarray(Y)[None, :, :])),
      gamma,
      axis=0,
    )
    prod64 = np.asarray(oracles._nsmax(inner, gamma, axis=1))
    D = jnp.asarray(rng.uniform(size=(6, 6)))
    R64 = np.asarray(oracles.naive_reachability(D, 5, gamma))
  z32 = jnp.asarray(z, jnp.float32)
  np.testing.assert_allclose(normalized_smax(z32, gamma=gamma, where=mask), smax64, atol=1e-6)
  np.testing.assert_allclose(normalized_softmin(z32, gamma=gamma, where=mask), smin64, atol=1e-6)
  got = max_min_product(jnp.asarray(X, jnp.float32), jnp.asarray(Y, jnp.float32), gamma=gamma)
  np.testing.assert_allclose(got, prod64, atol=1e-6)
  got = soft_reachability(jnp.asarray(D, jnp.float32), max_path_length=5, gamma=gamma)
  np.testing.assert_allclose(got, R64, atol=2e-6)


def test_wide_slices_at_large_gamma_keep_the_log_sum_exp():
  """Entries spread wider than ``gamma``: the ``expm1`` form would cancel; the result still
  matches float64 (relative to the spread)."""
  z = np.array([[-500.0, -3.0, 0.0, 2.0], [10.0, 10.5, 11.0, 9.0]])
  for gamma in (2.0, 50.0):
    with jax.enable_x64(True):
      expect = np.asarray(oracles._nsmax(jnp.asarray(z), gamma, axis=-1))
    got = normalized_smax(jnp.asarray(z, jnp.float32), gamma=gamma)
    np.testing.assert_allclose(got, expect, rtol=2e-6, atol=2e-5)


def test_the_limit_of_a_huge_gamma_is_the_mean_and_its_gradient_the_uniform_weights():
  z = jnp.asarray([0.1, 0.7, 0.4, 0.9], jnp.float32)
  for gamma in (1e20, 1e38, 1e300):
    assert float(normalized_smax(z, gamma=gamma)) == pytest.approx(0.525, abs=1e-7)
    assert float(normalized_softmin(z, gamma=gamma)) == pytest.approx(0.525, abs=1e-7)
    grad = jax.grad(lambda z: normalized_smax(z, gamma=gamma))(z)
    np.testing.assert_allclose(grad, 0.25, atol=1e-7)


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16, jnp.float32])
@pytest.mark.parametrize("tau", [0.02, 0.05, 0.3])
def test_low_precision_tournaments_at_ordinary_temperatures(dtype, tau):
  """float16 at ``tau = 0.05`` gave NaN Uncovered scores: every term of a pair underflowed with
  the shift by one. Now within the dtype's precision of float32."""
  P = _tournament(n=9)
  expect = ste_scores(jnp.asarray(P, jnp.float32), tau=tau)
  got = ste_scores(jnp.asarray(P, dtype), tau=tau)
  assert _finite(got)
  tol = 30 * float(jnp.finfo(dtype).eps)
  np.testing.assert_allclose(np.asarray(got.top_cycle, np.float32), expect.top_cycle, atol=tol)
  np.testing.assert_allclose(np.asarray(got.uncovered, np.float32), expect.uncovered, atol=tol)


@pytest.mark.parametrize("tau", [1e-20, 1e-30, 1e-39, 1e-45, 1e-300])
def test_temperatures_below_the_square_root_of_tiny_give_the_hard_limit(tau):
  P = jnp.asarray(_tournament(), jnp.float32)
  hard = ste_scores(P, tau=0)
  for reach_gamma in (0.0, tau):
    s = ste_scores(P, tau=tau, reach_gamma=reach_gamma)
    np.testing.assert_allclose(s.top_cycle, hard.top_cycle, atol=1e-6)
    np.testing.assert_allclose(s.uncovered, hard.uncovered, atol=1e-6)
  traced = jax.jit(lambda t: ste_scores(P, tau=t, gamma=t, gamma_c=t))(jnp.float32(tau))
  np.testing.assert_allclose(traced.uncovered, hard.uncovered, atol=1e-6)


@pytest.mark.parametrize("tau", [1e4, 1e30, 1e300])
def test_gradients_are_finite_at_huge_temperatures(tau):
  P = jnp.asarray(_tournament(), jnp.float32)

  def loss(P, t):
    s = ste_scores(P, tau=t, reach_gamma=t)
    return jnp.sum(s.top_cycle) + jnp.sum(s.uncovered**2)

  t = jnp.float32(min(tau, float(jnp.finfo(jnp.float32).max)))
  assert _finite(jax.grad(loss, argnums=(0, 1))(P, t))
  assert _finite(jax.jvp(lambda t: loss(P, t), (t,), (jnp.float32(1.0),)))
  # A vmap over temperatures runs every branch (small, large) for every value: still finite.
  ts = jnp.asarray([0.0, 0.05, 3.0, t], jnp.float32)
  assert _finite(jax.vmap(lambda t: ste_scores(P, tau=0.1, gamma=t, reach_gamma=t))(ts))
  assert _finite(jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, 0))(P, ts))


_CODEGEN_NAN = pytest.mark.xfail(
  os.environ.get("STE_JAX_TEST_FAST_COMPILE") != "1",
  reason="open: NaN gradients between sqrt(tiny) and 1e-10 under XLA's default code generation "
  "(make test-codegen); the fast-compile build is finite",
  strict=False,
)


@pytest.mark.parametrize(
  "tau",
  [
    pytest.param(1e-10, marks=_CODEGEN_NAN),
    pytest.param(1.1e-19, marks=_CODEGEN_NAN),
    1e-20,
    1e-30,
  ],
)
def test_gradients_are_finite_at_tiny_temperatures(tau):
  """Before, the temperature gradients were NaN from about ``1e-20`` in float32 (``t^2``
  underflowed in ``-x / t^2``); below ``sqrt(tiny)`` the hard limit's zero gradient holds."""
  rng = np.random.default_rng(9)
  P = jnp.asarray(oracles.random_tournament(rng, 6, margin=0.02, tie_prob=0.3), jnp.float32)

  def loss(P, t):
    s = ste_scores(P, tau=t, reach_gamma=t)
    return jnp.sum(s.top_cycle) + jnp.sum(s.uncovered**2)

  grads = jax.grad(loss, argnums=(0, 1))(P, jnp.float32(tau))
  assert _finite(grads)
  if tau < 1e-19:
    assert float(grads[1]) == 0.0


def test_native_and_jax_cover_kernels_agree_at_subnormal_temperatures():
  """A subnormal ``gamma_c`` (traced: no clamp) divides by the smallest normal number in both."""
  rng = np.random.default_rng(13)
  D = rng.uniform(size=(9, 9))
  np.fill_diagonal(D, 0.0)
  D = jnp.asarray(D, jnp.float32)
  value = jax.jit(lambda D, g: soft_cover_scores(D, gamma_c=g))
  grad = jax.jit(jax.grad(lambda D, g: jnp.sum(soft_cover_scores(D, gamma_c=g) ** 2)))
  hard = soft_cover_scores(D, gamma_c=0.0)
  for g in (1e-39, 1e-44, 2e-38):
    outs = []
    for native in (True, False):
      with native_kernels(native):
        outs.append((value(D, jnp.float32(g)), grad(D, jnp.float32(g))))
    assert _finite(outs), g
    np.testing.assert_allclose(outs[0][0], hard, atol=1e-7)
    np.testing.assert_allclose(outs[0][0], outs[1][0], atol=1e-7)
    np.testing.assert_allclose(outs[0][1], outs[1][1], atol=1e-6)
