"""Temperature scaling and reliability-diagram data."""

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.models import PairwiseLogit
from ste_jax.training import calibrate_temperature, fit_temperature, reliability_diagram
from tests.training._data import cycle_comparisons


def test_fit_temperature_recovers_the_true_temperature(key):
  k1, k2 = jax.random.split(key)
  h = 3.0 * jax.random.normal(k1, (20000,))
  y = (jax.random.uniform(k2, (20000,)) < jax.nn.sigmoid(h / 2.0)).astype(jnp.float32)
  T = fit_temperature(h, y)
  assert float(T) == pytest.approx(2.0, rel=0.08)
  np.testing.assert_allclose(float(fit_temperature(h, y, jnp.ones(20000))), float(T), rtol=1e-5)


def test_reliability_diagram_on_a_small_example():
  p = jnp.array([0.05, 0.15, 0.12, 0.95, 0.55])
  y = jnp.array([0.0, 1.0, 0.0, 1.0, 0.5])
  d = reliability_diagram(p, y, num_bins=10)
  assert d.bin_edges.shape == (11,) and d.weight.shape == (10,)
  np.testing.assert_allclose(float(jnp.sum(d.weight)), 5.0)
  np.testing.assert_allclose(float(d.confidence[1]), (0.15 + 0.12) / 2, rtol=1e-6)
  np.testing.assert_allclose(float(d.accuracy[1]), 0.5, rtol=1e-6)
  assert bool(jnp.isnan(d.confidence[3])) and float(d.weight[3]) == 0.0
  expected_ece = (0.05 + abs(1.0 - 0.27) + 0.05 + 0.05) / 5
  np.testing.assert_allclose(float(d.ece), expected_ece, rtol=1e-5)


def test_calibrate_temperature_never_increases_heldout_log_loss(rng):
  data = cycle_comparisons(rng, 400)
  model = PairwiseLogit(4, embedding_dim=4, hidden_features=(16,), rngs=nnx.Rngs(0))
  out = calibrate_temperature(model, data)
  assert float(out.temperature) > 0
  assert float(out.log_loss_after) <= float(out.log_loss_before) + 1e-6
  np.testing.assert_allclose(float(jnp.sum(out.after.weight)), 400.0)
