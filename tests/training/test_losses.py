"""Losses and temperature schedules: values against naive formulas, stability, gradients, dtypes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.stats import expected_calibration_error
from ste_jax.training import (
  calibration_regularizer,
  constant_temperature,
  exponential_anneal,
  pairwise_cross_entropy,
  sharpness_regularizer,
  ste_objective,
  temperature_schedule,
)


def test_cross_entropy_matches_naive_with_ties_and_weights(rng):
  h = rng.normal(size=20).astype(np.float32)
  y = rng.choice([0.0, 0.5, 1.0], size=20).astype(np.float32)
  w = rng.uniform(0, 2, size=20).astype(np.float32)
  p = 1 / (1 + np.exp(-h.astype(np.float64)))
  naive = -(y * np.log(p) + (1 - y) * np.log(1 - p))
  np.testing.assert_allclose(
    float(pairwise_cross_entropy(h, y, w)), np.sum(w * naive) / np.sum(w), rtol=1e-5
  )
  np.testing.assert_allclose(float(pairwise_cross_entropy(h, y)), np.mean(naive), rtol=1e-5)


def test_cross_entropy_stable_at_extreme_logits():
  h = jnp.array([-200.0, 200.0, 0.0])
  y = jnp.array([1.0, 1.0, 0.5])
  loss = pairwise_cross_entropy(h, y)
  np.testing.assert_allclose(float(loss), (200.0 + 0.0 + np.log(2.0)) / 3, rtol=1e-5)
  g = jax.grad(pairwise_cross_entropy)(h, y)
  assert bool(jnp.all(jnp.isfinite(g)))
  zero_w = pairwise_cross_entropy(h, y, jnp.zeros(3))
  assert float(zero_w) == 0.0
  assert bool(jnp.all(jnp.isfinite(jax.grad(pairwise_cross_entropy)(h, y, jnp.zeros(3)))))
  with pytest.raises(ValueError, match="outcome"):
    pairwise_cross_entropy(h, jnp.ones(2))


def test_sharpness_regularizer_values_and_gradients():
  s = jnp.array([[0.0, 1.0, 0.5, 0.25]])
  r = sharpness_regularizer(s)
  assert r.shape == (1,)
  ent = lambda q: -(q * np.log(q) + (1 - q) * np.log(1 - q))
  np.testing.assert_allclose(float(r[0]), (np.log(2) + ent(0.25)) / 4, rtol=1e-5)
  g = jax.grad(lambda s: jnp.sum(sharpness_regularizer(s)))(s)
  assert bool(jnp.all(jnp.isfinite(g)))
  assert float(g[0, 2]) == pytest.approx(0.0, abs=1e-6)  # maximum at 1/2
  assert float(g[0, 3]) > 0  # pushes 0.25 towards 0


def test_calibration_regularizer_equals_ece_and_has_gradient(rng):
  s = jnp.asarray(rng.uniform(size=50), dtype=jnp.float32)
  y = jnp.asarray(rng.uniform(size=50) < 0.5)
  np.testing.assert_allclose(
    float(calibration_regularizer(s, y)), float(expected_calibration_error(s, y)), atol=1e-6
  )
  g = jax.grad(lambda s: calibration_regularizer(s, y))(s)
  assert bool(jnp.all(jnp.isfinite(g))) and float(jnp.sum(jnp.abs(g))) > 0
  assert float(calibration_regularizer(s, y, jnp.zeros(50))) == 0.0


def test_full_objective_combines_terms():
  h, y = jnp.array([0.3, -1.0]), jnp.array([1.0, 0.5])
  s, labels = jnp.array([0.9, 0.2, 0.6]), jnp.array([1.0, 0.0, 1.0])
  terms = ste_objective(
    h, y, scores=s, membership=labels, sharpness_weight=0.5, calibration_weight=2.0
  )
  expected = (
    pairwise_cross_entropy(h, y)
    + 0.5 * sharpness_regularizer(s)
    + 2.0 * calibration_regularizer(s, labels)
  )
  np.testing.assert_allclose(float(terms.total), float(expected), rtol=1e-6)
  plain = ste_objective(h, y)
  assert float(plain.total) == float(plain.cross_entropy) and float(plain.sharpness) == 0.0
  with pytest.raises(ValueError, match="no scores"):
    ste_objective(h, y, sharpness_weight=0.1)
  with pytest.raises(ValueError, match="membership"):
    ste_objective(h, y, scores=s, calibration_weight=0.1)


def test_exponential_anneal_endpoints_traced_and_dtype(x64):
  sched = exponential_anneal(1.0, 0.01, 100)
  vals = jax.jit(jax.vmap(sched))(jnp.array([0, 25, 50, 100, 250]))
  assert vals.dtype == jnp.float64
  np.testing.assert_allclose(np.asarray(vals), [1.0, 0.01**0.25, 0.1, 0.01, 0.01], rtol=1e-12)
  temps = temperature_schedule(sched, gamma=0.5)(jnp.int32(50))
  np.testing.assert_allclose(
    [float(temps.tau), float(temps.gamma), float(temps.gamma_c)], [0.1, 0.5, 0.5]
  )
  assert float(constant_temperature(0.2)(7)) == pytest.approx(0.2)


def test_schedule_validation():
  with pytest.raises(ValueError, match="z_min"):
    exponential_anneal(1.0, 0.0, 10)
  with pytest.raises(ValueError, match="total_steps"):
    exponential_anneal(1.0, 0.1, 0)
  with pytest.raises(ValueError, match="gamma"):
    temperature_schedule(0.1, gamma=-1.0)
  assert exponential_anneal(1.0, 0.1, 10)(0).dtype == jnp.float32
