"""Normalized soft extrema vs a direct NumPy transcription, bounds, masks and edge cases."""

import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest
from scipy.special import logsumexp

from ste_jax.ops import normalized_smax, normalized_softmin


def np_smax(z, gamma, axis=-1):
  m = z.shape[axis]
  return gamma * (logsumexp(z / gamma, axis=axis) - np.log(m))


@pytest.mark.parametrize("gamma", [1.0, 0.1, 0.01])
def test_matches_formula_and_bounds(rng, gamma):
  z = rng.uniform(size=(3, 7)).astype(np.float32)
  got = np.asarray(normalized_smax(z, gamma=gamma))
  np.testing.assert_allclose(got, np_smax(z.astype(np.float64), gamma), rtol=1e-5, atol=1e-6)
  got_min = np.asarray(normalized_softmin(z, gamma=gamma))
  np.testing.assert_allclose(got_min, -np_smax(-z.astype(np.float64), gamma), rtol=1e-5, atol=1e-6)
  mx, mn = z.max(-1), z.min(-1)
  assert np.all(got <= mx + 1e-6) and np.all(got >= mx - gamma * np.log(7) - 1e-6)
  assert np.all(got_min >= mn - 1e-6) and np.all(got_min <= mn + gamma * np.log(7) + 1e-6)
  assert np.all((got >= 0) & (got <= 1)) and np.all((got_min >= 0) & (got_min <= 1))


def test_zero_temperature_is_exact_static_and_traced(rng):
  z = rng.uniform(size=(4, 5)).astype(np.float32)
  np.testing.assert_array_equal(normalized_smax(z, gamma=0.0), z.max(-1))
  np.testing.assert_array_equal(normalized_softmin(z, gamma=0), z.min(-1))
  traced = jax.jit(lambda z, g: normalized_smax(z, gamma=g, axis=0))(z, jnp.float32(0.0))
  np.testing.assert_array_equal(traced, z.max(0))


def test_where_mask_counts_only_selected(rng):
  z = rng.uniform(size=(6,)).astype(np.float32)
  mask = np.array([True, False, True, True, False, True])
  got = normalized_smax(z, gamma=0.2, where=mask)
  np.testing.assert_allclose(got, np_smax(z[mask].astype(np.float64), 0.2), rtol=1e-5)
  got = normalized_softmin(z, gamma=0.2, where=mask)
  np.testing.assert_allclose(got, -np_smax(-z[mask].astype(np.float64), 0.2), rtol=1e-5)


def test_empty_set_conventions_and_finite_gradients():
  z = jnp.array([0.3, 0.8], jnp.float32)
  empty = jnp.zeros(2, bool)
  assert float(normalized_smax(z, gamma=0.1, where=empty)) == 0.0
  assert float(normalized_softmin(z, gamma=0.1, where=empty)) == 1.0
  for fn in (normalized_smax, normalized_softmin):
    g = jax.grad(lambda z, g: fn(z, gamma=g, where=empty), argnums=(0, 1))(z, jnp.float32(0.1))
    assert all(np.all(np.asarray(x) == 0) for x in g)


# At a moderate temperature the extrema are checked to second order by default through
# soft_top_cycle_score (tests/ops/test_forward_mode.py); here, with a mask, 0.5 in `make test-slow`.
@pytest.mark.parametrize("gamma", [pytest.param(0.5, marks=pytest.mark.slow), 1e-4])
def test_gradients_finite_difference(x64, gamma):
  rng = np.random.default_rng(3)
  z = jnp.asarray(rng.uniform(size=(3, 4)))
  mask = jnp.asarray(rng.uniform(size=(3, 4)) > 0.3)
  for fn in (normalized_smax, normalized_softmin):
    f = jax.jit(lambda z, g, fn=fn: fn(z, gamma=g, axis=-1, where=mask))  # compiled, not op by op
    check_grads(f, (z, jnp.float64(gamma)), order=2, eps=gamma * 1e-3)


def test_tiny_temperature_no_nan_in_gradients():
  z = jnp.array([[0.0, 1.0, 1.0, 0.5]], jnp.float32)
  for g in [1e-4, 1e-6]:
    grads = jax.grad(
      lambda z, g: normalized_smax(z, gamma=g).sum() + normalized_softmin(z, gamma=g).sum(),
      argnums=(0, 1),
    )(z, jnp.float32(g))
    assert all(np.all(np.isfinite(np.asarray(x))) for x in grads)


def test_dtype_follows_input(x64):
  z64 = jnp.ones((3,), jnp.float64)
  assert normalized_smax(z64, gamma=0.1).dtype == jnp.float64
  z32 = jnp.ones((3,), jnp.float32)
  assert normalized_softmin(z32, gamma=0.1).dtype == jnp.float32


@pytest.mark.parametrize("traced", [False, True])
def test_exact_masked_maximum_gives_its_whole_gradient_to_the_maximum(traced):
  """At gamma = 0 the gradient of a masked maximum is one-hot at the selected maximum (a filler
  equal to the maximum used to take half of it)."""
  where = jnp.array([True, True, False, True])
  z = jnp.array([0.2, 0.9, 0.95, 0.5])

  def f(z, g):
    return normalized_smax(z, gamma=g if traced else 0.0, where=where)

  grad = jax.jit(jax.grad(f))(z, 0.0)
  np.testing.assert_array_equal(np.asarray(grad), [0.0, 1.0, 0.0, 0.0])
  empty = jax.grad(lambda z: normalized_smax(z, gamma=0.0, where=jnp.zeros(4, bool)))(z)
  np.testing.assert_array_equal(np.asarray(empty), np.zeros(4))
