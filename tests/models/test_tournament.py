"""marginal_tournament: complementarity, the Monte Carlo average, weights; pairwise_logits."""

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.data import Comparisons
from ste_jax.models import BradleyTerryLogit, PairwiseLogit, marginal_tournament, pairwise_logits
from tests.models._helpers import ARCH, apply, marginal


@pytest.mark.parametrize("cls", [PairwiseLogit, BradleyTerryLogit])
def test_complementary_with_weighted_contexts(cls, rng):
  n, M = 5, 3
  model = cls(n, num_context_features=2, rngs=nnx.Rngs(1), **ARCH)
  contexts = jnp.asarray(rng.normal(size=(M, 2)), dtype=jnp.float32)
  weights = jnp.array([0.5, 0.3, 0.2])
  P = marginal(model, contexts, weights)
  assert P.shape == (n, n) and P.dtype == jnp.float32
  np.testing.assert_allclose(np.asarray(P + P.T), np.ones((n, n)), atol=1e-7)
  np.testing.assert_array_equal(np.diag(np.asarray(P)), np.full(n, 0.5, np.float32))
  assert float(P.min()) >= 0 and float(P.max()) <= 1
  # oracle: a Python loop over pairs and contexts, one model call each
  expected = np.full((n, n), 0.5)
  for i in range(n):
    for j in range(n):
      if i != j:
        ps = [
          float(jax.nn.sigmoid(apply(model, jnp.int32(i), jnp.int32(j), contexts[k])))
          for k in range(M)
        ]
        expected[i, j] = np.dot(np.asarray(weights), ps) / float(jnp.sum(weights))
  np.testing.assert_allclose(np.asarray(P), expected, atol=2e-6)


def test_uniform_weights_default_and_no_context():
  model = PairwiseLogit(5, num_context_features=2, rngs=nnx.Rngs(0), **ARCH)
  ctx = jnp.array([[0.0, 1.0], [1.0, 0.0]])
  P = marginal(model, ctx)
  P_w = marginal(model, ctx, jnp.array([2.0, 2.0]))
  np.testing.assert_allclose(np.asarray(P), np.asarray(P_w), atol=1e-7)
  plain = PairwiseLogit(5, rngs=nnx.Rngs(0), **ARCH)
  P0 = marginal(plain)
  np.testing.assert_allclose(np.asarray(P0 + P0.T), 1.0, atol=1e-7)
  np.testing.assert_allclose(
    np.asarray(P0), np.asarray(marginal_tournament(plain)), atol=1e-6
  )  # eager
  with pytest.raises(ValueError, match="weights"):
    marginal_tournament(model, contexts=ctx, weights=jnp.ones(3))
  with pytest.raises(ValueError, match="without contexts"):
    marginal_tournament(plain, weights=jnp.ones(2))
  with pytest.raises(ValueError, match=r"\(M, d\)"):
    marginal_tournament(model, contexts=jnp.ones(2))


def test_num_agents_required_for_modules_without_attribute():
  class Wrapper(nnx.Module):
    def __init__(self, *, rngs):
      self.inner = PairwiseLogit(5, rngs=rngs, **ARCH)

    def __call__(self, a, b, x=None):
      return self.inner(a, b, x)

  w = Wrapper(rngs=nnx.Rngs(0))
  with pytest.raises(ValueError, match="num_agents"):
    marginal_tournament(w)
  graphdef, state = nnx.split(w)
  P = jax.jit(lambda s: marginal_tournament(nnx.merge(graphdef, s), num_agents=5))(state)
  assert P.shape == (5, 5)


def test_pairwise_logits_gathers_context_features():
  model = PairwiseLogit(5, num_context_features=2, rngs=nnx.Rngs(0), **ARCH)
  ctx = jnp.eye(2)
  data = Comparisons.from_arrays(
    [0, 1, 3], [2, 0, 1], [1, 0, 1], agents=list("abcde"), context=[1, 0, 1], contexts=("x", "y")
  )
  graphdef, state = nnx.split(model)
  h = jax.jit(lambda s, d: pairwise_logits(nnx.merge(graphdef, s), d, context_features=ctx))(
    state, data
  )
  expected = apply(model, data.a, data.b, ctx[np.array([1, 0, 1])])
  np.testing.assert_allclose(np.asarray(h), np.asarray(expected), atol=1e-6)
