"""The intransitive Bradley-Terry logit: antisymmetry, cycles, NNX protocol."""

import dataclasses

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import exact
from ste_jax.models import IntransitiveLogit, marginal_tournament
from ste_jax.models._intransitive import (
  IntransitiveParams,
  init_intransitive_params,
  intransitive_logits,
  intransitive_tournament,
)


def test_exactly_antisymmetric_and_tournament_matches_logits():
  p = init_intransitive_params(jax.random.key(0), 6, 2, scale=1.0)
  p = dataclasses.replace(p, strength=jnp.arange(6, dtype=p.strength.dtype) * 0.3)
  a, b = jnp.meshgrid(jnp.arange(6), jnp.arange(6), indexing="ij")
  h = intransitive_logits(p, a, b)
  np.testing.assert_array_equal(np.asarray(h), -np.asarray(h.T))
  np.testing.assert_allclose(
    np.asarray(intransitive_tournament(p)), np.asarray(jax.nn.sigmoid(h)), rtol=1e-6
  )


def test_one_component_represents_rock_paper_scissors():
  # u, v on three agents placed at 120 degrees: h(a, b) = sin(angle_b - angle_a) up to scale.
  ang = 2 * np.pi * np.arange(3) / 3
  u = jnp.asarray(np.cos(ang)[:, None] * 3, jnp.float32)
  v = jnp.asarray(np.sin(ang)[:, None] * 3, jnp.float32)
  p = IntransitiveParams(jnp.zeros(3), u, v, jnp.ones(1))
  P = intransitive_tournament(p)
  assert bool(exact.top_cycle(P).all())  # a 3-cycle
  masked = intransitive_tournament(dataclasses.replace(p, mask=jnp.zeros(1)))
  np.testing.assert_allclose(np.asarray(masked), 0.5)


def test_nnx_module_follows_the_pairwise_protocol():
  model = IntransitiveLogit(5, rank=2, rngs=nnx.Rngs(0))
  P = marginal_tournament(model)
  np.testing.assert_allclose(
    np.asarray(P), np.asarray(intransitive_tournament(model.params())), atol=1e-6
  )
  grads = nnx.grad(lambda m: jnp.sum(m(jnp.array([0, 1]), jnp.array([2, 3]))))(model)
  assert np.isfinite(np.asarray(grads.u[...])).all()


def test_pure_functions_import_without_flax():
  """The model estimator's pure functions load without Flax (the CLI's import time); the NNX
  modules are loaded on first access (a fresh interpreter, so other tests' imports do not count)."""
  import subprocess
  import sys

  code = (
    "import sys; import ste_jax._cli, ste_jax.evaluate; "
    "assert 'flax' not in sys.modules, 'flax imported'; "
    "from ste_jax.models import IntransitiveLogit; assert 'flax' in sys.modules"
  )
  subprocess.run([sys.executable, "-c", code], check=True)
