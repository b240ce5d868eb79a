"""Jitted application of NNX models for the tests.

The graph definition is a static argument, so every model of the same architecture shares one
compilation (eager NNX calls compile each primitive separately and are much slower).
"""

import functools

from flax import nnx
import jax

from ste_jax.models import marginal_tournament

ARCH = dict(embedding_dim=4, hidden_features=(8,))


@functools.partial(jax.jit, static_argnums=0)
def _apply(graphdef, state, a, b, x):
  return nnx.merge(graphdef, state)(a, b, x)


def apply(model, a, b, x=None):
  graphdef, state = nnx.split(model)
  return _apply(graphdef, state, a, b, x)


@functools.partial(jax.jit, static_argnums=0)
def _marginal(graphdef, state, contexts, weights):
  return marginal_tournament(nnx.merge(graphdef, state), contexts=contexts, weights=weights)


def marginal(model, contexts=None, weights=None):
  graphdef, state = nnx.split(model)
  return _marginal(graphdef, state, contexts, weights)
