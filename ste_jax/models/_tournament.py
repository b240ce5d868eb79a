"""Model to tournament: batch logits and the marginal tournament (Eq. ``marginal_tournament``)."""

from collections.abc import Callable

import jax
import jax.numpy as jnp

from ste_jax._checks import as_float_array
from ste_jax.data import Comparisons


def _num_agents(model, num_agents) -> int:
  if num_agents is None:
    num_agents = getattr(model, "num_agents", None)
    if num_agents is None:
      raise ValueError(
        "cannot infer the number of agents: the model has no `num_agents` attribute; "
        "pass num_agents=."
      )
  if isinstance(num_agents, bool) or not isinstance(num_agents, int) or num_agents < 1:
    raise ValueError(f"num_agents must be an integer >= 1, got {num_agents!r}.")
  return num_agents


def pairwise_logits(
  model: Callable[..., jax.Array],
  comparisons: Comparisons,
  *,
  context_features: jax.typing.ArrayLike | None = None,
) -> jax.Array:
  """Logits ``h(a_i, b_i, x_i)`` of every row of a :class:`~ste_jax.data.Comparisons`.

  Args:
    model: a pairwise model following the call protocol ``model(a, b, x) -> h``
      (:class:`PairwiseLogit`, :class:`BradleyTerryLogit` or a user module).
    comparisons: :class:`~ste_jax.data.Comparisons` with ``m`` rows (or a minibatch of it).
    context_features: ``(num_contexts, d)`` table of context features; row ``c`` is the feature
      vector of context index ``c``. ``None`` for a model without context features.

  Returns:
    ``(m,)`` logits; ``sigmoid`` of them is the probability that ``a`` beats ``b``.

  Examples:
    >>> import numpy as np
    >>> from flax import nnx
    >>> from ste_jax.data import Comparisons
    >>> from ste_jax.models import BradleyTerryLogit
    >>> c = Comparisons.from_arrays(
    ...   np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 1.0, 0.0])
    ... )
    >>> model = BradleyTerryLogit(3, rngs=nnx.Rngs(0))
    >>> from ste_jax.models import pairwise_logits
    >>> pairwise_logits(model, c).shape
    (3,)
  """
  x = None
  if context_features is not None:
    table = as_float_array(context_features, "context_features")
    if table.ndim != 2:
      raise ValueError(
        f"context_features must have shape (num_contexts, d); got {tuple(table.shape)}."
      )
    x = jnp.take(table, comparisons.context, axis=0)
  return model(comparisons.a, comparisons.b, x)


def marginal_tournament(
  model: Callable[..., jax.Array],
  *,
  contexts: jax.typing.ArrayLike | None = None,
  weights: jax.typing.ArrayLike | None = None,
  num_agents: int | None = None,
) -> jax.Array:
  r"""Marginal probabilistic tournament of a pairwise model (paper Eq. ``marginal_tournament``).

  .. math::
    P_{ab} = \mathbb{E}_{x \sim Q}\big[\sigma(h_\theta(a, b, x))\big]
      \approx \frac{\sum_{m} w_m\, \sigma(h_\theta(a, b, x_m))}{\sum_m w_m},

  a Monte Carlo (or exact, for a finite context set) average over the given contexts ``x_m`` with
  weights ``w_m``. All ``n^2`` pairs and ``M`` contexts are evaluated in one batched call of the
  model (no Python loop), so the cost is one forward pass over ``M n^2`` pairs.

  Complementary by construction: the upper triangle is computed and the lower triangle is set to
  ``P_ba = 1 - P_ab``; the diagonal is ``1/2`` (paper convention). The choice of ``Q`` (the
  contexts and their weights) is part of the evaluation design: changing it can change the core.

  Args:
    model: a pairwise model following ``model(a, b, x) -> h``.
    contexts: ``(M, d)`` context features ``x_m`` (given, or sampled by the caller), or ``None``
      for a model without context features.
    weights: ``(M,)`` non-negative weights with a positive sum (not checked under ``jit``);
      ``None`` means uniform. Only with ``contexts``.
    num_agents: ``n`` (static); default ``model.num_agents``.

  Returns:
    ``P`` of shape ``(n, n)`` in ``[0, 1]``, dtype of the model's logits, with ``P + P^T = 1``
    and diagonal ``1/2``. Differentiable w.r.t. the model parameters.

  Examples:
    >>> from flax import nnx
    >>> from ste_jax.models import PairwiseLogit
    >>> P = marginal_tournament(PairwiseLogit(4, hidden_features=(8,), rngs=nnx.Rngs(0)))
    >>> P.shape, float(P[1, 1])
    ((4, 4), 0.5)
  """
  n = _num_agents(model, num_agents)
  idx = jnp.arange(n, dtype=jnp.int32)
  a = jnp.broadcast_to(idx[:, None], (n, n))
  b = jnp.broadcast_to(idx[None, :], (n, n))
  if contexts is None:
    if weights is not None:
      raise ValueError("weights were given without contexts.")
    p = jax.nn.sigmoid(model(a, b, None))
  else:
    contexts = as_float_array(contexts, "contexts")
    if contexts.ndim != 2:
      raise ValueError(f"contexts must have shape (M, d); got {tuple(contexts.shape)}.")
    M, d = contexts.shape
    x = jnp.broadcast_to(contexts[:, None, None, :], (M, n, n, d))
    p = jax.nn.sigmoid(model(jnp.broadcast_to(a, (M, n, n)), jnp.broadcast_to(b, (M, n, n)), x))
    if weights is None:
      p = jnp.mean(p, axis=0)
    else:
      w = jnp.asarray(weights)
      if w.shape != (M,):
        raise ValueError(f"weights must have shape ({M},) to match contexts; got {tuple(w.shape)}.")
      w = w.astype(p.dtype)
      p = jnp.tensordot(w, p, axes=1) / jnp.sum(w)
  upper = jnp.triu(jnp.ones((n, n), dtype=bool), 1)
  P = jnp.where(upper, p, 1.0 - p.T)
  return jnp.where(jnp.eye(n, dtype=bool), 0.5, P)
