"""PairwiseLogit / BradleyTerryLogit: exact antisymmetry, shapes, dtypes, validation."""

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.models import BradleyTerryLogit, PairwiseLogit
from tests.models._helpers import ARCH, apply

MODELS = [PairwiseLogit, BradleyTerryLogit]


def _pairs(rng, n, shape):
  a = jnp.asarray(rng.integers(0, n, shape), dtype=jnp.int32)
  b = jnp.asarray(rng.integers(0, n, shape), dtype=jnp.int32)
  return a, b


@pytest.mark.parametrize("cls", MODELS)
def test_exact_antisymmetry_random_params(cls, rng):
  for seed in (0, 1):
    model = cls(5, num_context_features=2, rngs=nnx.Rngs(seed), **ARCH)
    a, b = _pairs(rng, 5, (64,))
    x = jnp.asarray(rng.normal(size=(64, 2)), dtype=jnp.float32)
    h_ab, h_ba, h_aa = apply(model, a, b, x), apply(model, b, a, x), apply(model, a, a, x)
    assert h_ab.shape == (64,) and h_ab.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(h_ab), -np.asarray(h_ba))  # bit for bit
    np.testing.assert_array_equal(np.asarray(h_aa), np.zeros(64, np.float32))
    p = jax.nn.sigmoid(h_ab) + jax.nn.sigmoid(h_ba)
    np.testing.assert_allclose(np.asarray(p), 1.0, atol=1e-6)
    assert float(jnp.std(h_ab)) > 0  # not trivially zero


def test_batch_shapes_and_jit_equals_eager(rng):
  model = PairwiseLogit(5, rngs=nnx.Rngs(0), **ARCH)
  a, b = _pairs(rng, 5, (4, 6))
  out = apply(model, a, b)
  assert out.shape == (4, 6)
  np.testing.assert_array_equal(np.asarray(out), -np.asarray(apply(model, b, a)))
  np.testing.assert_allclose(np.asarray(out), np.asarray(model(a, b)), atol=1e-6)  # eager
  # a single context vector broadcasts over the pairs
  ctx_model = PairwiseLogit(5, num_context_features=2, rngs=nnx.Rngs(0), **ARCH)
  x = jnp.array([0.5, -1.0])
  np.testing.assert_array_equal(
    np.asarray(apply(ctx_model, a[0], b[0], x)),
    np.asarray(apply(ctx_model, a[0], b[0], jnp.broadcast_to(x, (6, 2)))),
  )


def test_param_dtype_follows_x64(x64):
  for cls in MODELS:
    model = cls(5, num_context_features=2, rngs=nnx.Rngs(0), **ARCH)
    assert {p.dtype for p in jax.tree.leaves(nnx.state(model, nnx.Param))} == {
      jnp.dtype(jnp.float64)
    }
  h = apply(model, jnp.array([0, 1]), jnp.array([2, 3]), jnp.ones((2, 2)))
  assert h.dtype == jnp.float64


def test_param_dtype_default_and_explicit():
  model = PairwiseLogit(5, rngs=nnx.Rngs(0), **ARCH)
  assert {p.dtype for p in jax.tree.leaves(nnx.state(model, nnx.Param))} == {jnp.dtype(jnp.float32)}
  with pytest.raises(ValueError, match="param_dtype"):
    PairwiseLogit(5, param_dtype=jnp.int32, rngs=nnx.Rngs(0))


def test_bradley_terry_is_a_difference_of_strengths():
  model = BradleyTerryLogit(5, num_context_features=2, rngs=nnx.Rngs(0), **ARCH)
  a, b = jnp.array([0, 2, 3, 0]), jnp.array([1, 1, 0, 2])
  x = jnp.zeros((4, 2))
  h = apply(model, a, b, x)
  expected = jax.jit(lambda: model.strength(a, x) - model.strength(b, x))()
  np.testing.assert_allclose(np.asarray(h), np.asarray(expected), atol=1e-6)
  # transitive within a context: h(0, 1) + h(1, 2) = h(0, 2)
  np.testing.assert_allclose(float(h[0] - h[1]), float(h[3]), atol=1e-5)


def test_validation_errors():
  with pytest.raises(TypeError):
    PairwiseLogit(5, nnx.Rngs(0))  # rngs is keyword-only
  with pytest.raises(ValueError, match="num_agents"):
    PairwiseLogit(0, rngs=nnx.Rngs(0))
  with pytest.raises(ValueError, match="hidden_features"):
    PairwiseLogit(5, hidden_features=(0,), rngs=nnx.Rngs(0))
  model = PairwiseLogit(5, num_context_features=2, rngs=nnx.Rngs(0), **ARCH)
  a, b = jnp.array([0]), jnp.array([1])
  with pytest.raises(ValueError, match="context features"):
    model(a, b)
  with pytest.raises(ValueError, match=r"\(\.\.\., 2\)"):
    model(a, b, jnp.ones((1, 3)))
  with pytest.raises(ValueError, match="integer"):
    model(jnp.array([0.0]), b, jnp.ones((1, 2)))
  plain = PairwiseLogit(5, rngs=nnx.Rngs(0), **ARCH)
  with pytest.raises(ValueError, match="x=None"):
    plain(a, b, jnp.ones((1, 2)))
