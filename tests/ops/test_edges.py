"""Soft majority edges (Eq. soft_majority_edge)."""

import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

from ste_jax.ops import soft_majority_edges
from tests import oracles


def test_values_diagonal_and_ties(rng):
  P = oracles.random_tournament(rng, 6, tie_prob=0.3).astype(np.float32)
  D = np.asarray(soft_majority_edges(P, tau=0.07))
  expect = 1.0 / (1.0 + np.exp(-(P.astype(np.float64) - 0.5) / 0.07))
  np.fill_diagonal(expect, 0.0)
  np.testing.assert_allclose(D, expect, rtol=1e-5, atol=1e-7)
  assert np.all(np.diag(D) == 0)
  ties = (P == 0.5) & ~np.eye(6, dtype=bool)
  assert np.all(D[ties] == 0.5)
  off = ~np.eye(6, dtype=bool)
  np.testing.assert_allclose((D + D.T)[off], 1.0, atol=1e-6)


def test_hard_limit_and_batch(rng):
  P = np.stack([oracles.random_tournament(rng, 5) for _ in range(3)]).astype(np.float32)
  D = np.asarray(soft_majority_edges(P, tau=1e-4))
  A = (P > 0.5) & ~np.eye(5, dtype=bool)
  np.testing.assert_array_equal(D, A.astype(np.float32))


def test_gradients(x64):
  rng = np.random.default_rng(1)
  P = jnp.asarray(oracles.random_tournament(rng, 4, tie_prob=0.3))
  check_grads(jax.jit(lambda P, t: soft_majority_edges(P, tau=t)), (P, jnp.float64(0.2)), order=2)


def test_non_square_raises():
  with pytest.raises(ValueError, match="P must be a square"):
    soft_majority_edges(jnp.zeros((2, 3)), tau=0.1)
  with pytest.raises(ValueError, match="tau must be a scalar"):
    soft_majority_edges(jnp.zeros((2, 2)), tau=jnp.ones(2))
