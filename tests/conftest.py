"""Shared test configuration: strict numerics, keys, x64 scoping and tolerances."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _strict_jax():
  """Strict dtype promotion, no implicit rank promotion, typed keys that must not be reused."""
  with jax.numpy_dtype_promotion("strict"), jax.numpy_rank_promotion("raise"), jax.debug_key_reuse(True):
    yield


@pytest.fixture
def x64():
  """Runs the test with float64 enabled, restoring the previous setting afterwards."""
  with jax.enable_x64(True):
    yield


@pytest.fixture
def key():
  return jax.random.key(0)


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def tol(dtype) -> float:
  """A comparison tolerance for values computed in ``dtype``."""
  return 1e-10 if jnp.dtype(dtype) == jnp.float64 else 2e-5
