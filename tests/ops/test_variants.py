"""Every public soft operator with and without ``jax.jit`` (chex variants), float32 and float64.

Values and reverse-mode gradients against the literal transcription of the equations in
``tests/oracles.py``, with a tolerance keyed by dtype (``tests.conftest.tol``). The forward-mode and
second-order variants are in ``test_forward_mode.py`` (marked slow).
"""

from absl.testing import parameterized
import chex
import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.ops import soft_cover_scores, soft_majority_edges, soft_reachability, ste_scores
from tests import oracles
from tests.conftest import tol

N = 5
TAU, GAMMA, GAMMA_C = 0.1, 0.1, 0.1


def _operators():
  """``name -> (ours, oracle)``, each a function of the tournament ``P`` returning an array."""

  def edges(P):
    return soft_majority_edges(P, tau=TAU)

  return {
    "edges": (edges, lambda P: oracles.naive_edges(P, TAU)),
    "reachability": (
      lambda P: soft_reachability(edges(P)),
      lambda P: oracles.naive_reachability(oracles.naive_edges(P, TAU), N - 1, 0.0),
    ),
    "smooth_reachability": (
      lambda P: soft_reachability(edges(P), gamma=GAMMA),
      lambda P: oracles.naive_reachability(oracles.naive_edges(P, TAU), N - 1, GAMMA),
    ),
    "cover": (
      lambda P: soft_cover_scores(edges(P), gamma_c=GAMMA_C),
      lambda P: oracles.naive_cover(oracles.naive_edges(P, TAU), GAMMA_C),
    ),
    "ste_scores": (
      lambda P: jnp.stack(jax.tree.leaves(ste_scores(P, tau=TAU, gamma=GAMMA, gamma_c=GAMMA_C))),
      lambda P: jnp.stack(oracles.naive_ste_scores(P, TAU, GAMMA, GAMMA_C, N - 1)),
    ),
  }


class OperatorVariantsTest(chex.TestCase):
  @chex.variants(with_jit=True, without_jit=True)
  @parameterized.parameters(np.float32, np.float64)
  def test_values_and_gradients_match_the_equations(self, dtype):
    with jax.enable_x64(dtype == np.float64):
      P = jnp.asarray(
        oracles.random_tournament(np.random.default_rng(0), N, margin=0.05), dtype=dtype
      )
      for name, (ours, oracle) in _operators().items():

        def loss(f):
          return lambda P: jnp.sum(jnp.sin(3.0 * f(P)))  # every output weighted differently

        value, grad = self.variant(lambda P: (ours(P), jax.grad(loss(ours))(P)))(P)
        chex.assert_type([value, grad], dtype)
        expect_value, expect_grad = jax.jit(lambda P: (oracle(P), jax.grad(loss(oracle))(P)))(P)
        t = tol(dtype)
        chex.assert_trees_all_close(value, expect_value, atol=t, rtol=t, custom_message=name)
        chex.assert_trees_all_close(
          grad, expect_grad, atol=10 * t, rtol=10 * t, custom_message=name
        )
