"""Pairwise logit models (paper §4.1, Eq. ``pairwise_logit``; appendix "Implementation Details").

The NNX modules compute a logit ``h(a, b, x)`` with ``P(a > b | x) = sigmoid(h(a, b, x))`` and are
exactly antisymmetric, ``h(a, b, x) = -h(b, a, x)`` bit for bit, for every parameter value:

* :class:`PairwiseLogit`: ``h = g(a, b, x) - g(b, a, x)`` with ``g`` an MLP of the two agent
  embeddings and the context features (the paper's main specification; can represent cycles);
* :class:`BradleyTerryLogit`: ``h = s(a, x) - s(b, x)`` (contextual Bradley-Terry-Luce, the scalar
  special case; cannot represent a cycle within one context);
* :class:`IntransitiveLogit`: Bradley-Terry strengths plus a low-rank skew-symmetric term, a thin
  module over the pure functions of :mod:`ste_jax.models._intransitive`.

All follow the call protocol ``model(a, b, x=None) -> h`` used by
:func:`~ste_jax.models.marginal_tournament`, :func:`~ste_jax.models.pairwise_logits` and the
training code, so a user's own module that follows it (for example one that wraps a
``PairwiseLogit``) works everywhere these do.
"""

from collections.abc import Callable, Sequence

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._checks import default_float_dtype
from ste_jax._validation import validate_int
from ste_jax.models._intransitive import (
  IntransitiveParams,
  init_intransitive_params,
  intransitive_logits,
)


def _param_dtype(param_dtype) -> np.dtype:
  dtype = default_float_dtype() if param_dtype is None else jnp.dtype(param_dtype)
  if not jnp.issubdtype(dtype, jnp.floating):
    raise ValueError(f"param_dtype must be a floating dtype, got {dtype}.")
  return dtype


def _init_agent_embedding(
  module, num_agents, num_context_features, embedding_dim, param_dtype, rngs
) -> int:
  """Validates the shared constructor arguments, sets ``num_agents``, ``num_context_features``,
  ``param_dtype`` and the agent ``embedding`` on ``module``; returns the embedding size."""
  module.num_agents = validate_int(num_agents, "num_agents")
  module.num_context_features = validate_int(
    num_context_features, "num_context_features", minimum=0
  )
  embedding_dim = validate_int(embedding_dim, "embedding_dim")
  module.param_dtype = _param_dtype(param_dtype)
  module.embedding = nnx.Embed(
    module.num_agents, embedding_dim, param_dtype=module.param_dtype, rngs=rngs
  )
  return embedding_dim


def _mlp(
  in_features: int, hidden_features: Sequence[int], activation, dtype, rngs
) -> nnx.Sequential:
  """``in_features -> hidden... -> 1`` MLP (Linear layers with ``activation`` in between)."""
  layers = []
  width = in_features
  for i, h in enumerate(hidden_features):
    h = validate_int(h, f"hidden_features[{i}]")
    layers += [nnx.Linear(width, h, param_dtype=dtype, rngs=rngs), activation]
    width = h
  layers.append(nnx.Linear(width, 1, param_dtype=dtype, rngs=rngs))
  return nnx.Sequential(*layers)


def _prepare(a, b, x, num_context_features: int, dtype):
  """Broadcasts ``a``/``b`` to a common shape, checks and broadcasts ``x`` to ``shape + (d,)``."""
  a = jnp.asarray(a)
  b = jnp.asarray(b)
  for name, v in (("a", a), ("b", b)):
    if not jnp.issubdtype(v.dtype, jnp.integer):
      raise ValueError(f"{name} must be an integer array of agent indices, got dtype {v.dtype}.")
  shape = jnp.broadcast_shapes(a.shape, b.shape)
  a = jnp.broadcast_to(a, shape)
  b = jnp.broadcast_to(b, shape)
  d = num_context_features
  if d == 0:
    if x is not None:
      raise ValueError("this model was built with num_context_features=0; pass x=None.")
    return a, b, None
  if x is None:
    raise ValueError(f"this model needs context features x of shape (..., {d}); got x=None.")
  x = jnp.asarray(x)
  if not jnp.issubdtype(x.dtype, jnp.floating):
    raise ValueError(f"x must be a floating array, got dtype {x.dtype}.")
  if x.ndim < 1 or x.shape[-1] != d:
    raise ValueError(
      f"x must have shape (..., {d}) (num_context_features={d}); got {tuple(x.shape)}."
    )
  try:
    x = jnp.broadcast_to(x, shape + (d,))
  except ValueError as e:
    raise ValueError(f"x of shape {tuple(x.shape)} does not broadcast to {shape + (d,)}.") from e
  return a, b, x.astype(dtype)  # explicit cast to the parameter dtype (like Flax's ``dtype``)


def _canonical_pair(a, b, dtype):
  """``(lo, hi, sign)`` with ``(lo, hi)`` the pair sorted by index and ``sign = -1`` when swapped.

  Evaluating ``sign * (f(lo, hi) - f(hi, lo))`` makes ``h(b, a)`` run the *same* floating-point
  computation as ``h(a, b)`` and flip the sign, so antisymmetry holds bit for bit (not merely up to
  rounding, which could differ between positions of a batched matmul).
  """
  swap = a > b
  lo = jnp.where(swap, b, a)
  hi = jnp.where(swap, a, b)
  sign = jnp.where(swap, -1.0, 1.0).astype(dtype)
  return lo, hi, sign


class PairwiseLogit(nnx.Module):
  r"""Antisymmetric neural pairwise logit (paper Eq. ``pairwise_logit``).

  .. math::
    h_\theta(a, b, x) = g_\theta(a, b, x) - g_\theta(b, a, x), \qquad
    g_\theta(a, b, x) = \mathrm{MLP}\big([e_a;\, e_b;\, x]\big),

  with learned agent embeddings ``e`` and optional context features ``x``. ``h`` is exactly
  antisymmetric for every parameter value, so ``P(a > b | x) + P(b > a | x) = 1`` and ``h(a, a, x)
  = 0``. Unlike Bradley-Terry, ``g`` sees both agents at once and can represent cyclic (and
  context-dependent cyclic) tournaments.

  Example usage::

    >>> import jax.numpy as jnp
    >>> from flax import nnx
    >>> model = PairwiseLogit(5, num_context_features=2, hidden_features=(8,), rngs=nnx.Rngs(0))
    >>> h = model(jnp.array([0, 1]), jnp.array([1, 0]), jnp.ones((2, 2)))
    >>> bool(h[0] == -h[1])
    True

  Args:
    num_agents: number of agents ``n``; agent indices are in ``[0, n)``.
    num_context_features: dimension ``d`` of the context features ``x`` (``0``: no context).
    embedding_dim: size of each agent embedding.
    hidden_features: widths of the hidden layers of ``g``.
    activation: elementwise nonlinearity between the layers.
    param_dtype: parameter dtype; ``None`` follows x64 (float64 under ``jax_enable_x64``, else
      float32), unlike Flax's float32 default.
    rngs: :class:`flax.nnx.Rngs` for initialization (keyword-only).
  """

  def __init__(
    self,
    num_agents: int,
    *,
    num_context_features: int = 0,
    embedding_dim: int = 16,
    hidden_features: Sequence[int] = (64, 64),
    activation: Callable[[jax.Array], jax.Array] = jax.nn.silu,
    param_dtype: jax.typing.DTypeLike | None = None,
    rngs: nnx.Rngs,
  ) -> None:
    embedding_dim = _init_agent_embedding(
      self, num_agents, num_context_features, embedding_dim, param_dtype, rngs
    )
    self.g = _mlp(
      2 * embedding_dim + self.num_context_features,
      tuple(hidden_features),
      activation,
      self.param_dtype,
      rngs,
    )

  def __call__(
    self, a: jax.typing.ArrayLike, b: jax.typing.ArrayLike, x: jax.typing.ArrayLike | None = None
  ) -> jax.Array:
    """Logits ``h(a, b, x)``.

    Args:
      a: integer array of shape ``(...)``: first agents.
      b: integer array broadcastable with ``a``: second agents.
      x: context features of shape ``(..., d)`` (broadcast to ``a``'s shape), or ``None`` when the
        model has no context features. Cast to ``param_dtype``.

    Returns:
      ``h`` of shape ``(...)`` (the broadcast shape of ``a`` and ``b``), dtype ``param_dtype``;
      ``P(a > b | x) = sigmoid(h)``.
    """
    dtype = self.param_dtype
    a, b, x = _prepare(a, b, x, self.num_context_features, dtype)
    lo, hi, sign = _canonical_pair(a, b, dtype)
    e_lo, e_hi = self.embedding(lo), self.embedding(hi)
    first = jnp.concatenate([e_lo, e_hi], axis=-1)
    second = jnp.concatenate([e_hi, e_lo], axis=-1)
    if x is not None:
      first = jnp.concatenate([first, x], axis=-1)
      second = jnp.concatenate([second, x], axis=-1)
    g = self.g(jnp.stack([first, second]))[..., 0]  # (2, ...): g(lo, hi, x), g(hi, lo, x)
    return sign * (g[0] - g[1])


class BradleyTerryLogit(nnx.Module):
  r"""Contextual Bradley-Terry-Luce logit, the scalar special case of Eq. ``pairwise_logit``.

  .. math::
    h_\theta(a, b, x) = s_\theta(a, x) - s_\theta(b, x), \qquad
    s_\theta(a, x) = \mathrm{MLP}\big([e_a;\, x]\big).

  Exactly antisymmetric like :class:`PairwiseLogit`, but within one context it induces a linear
  order, so it cannot represent a cycle (paper appendix "Implementation Details"). With
  ``num_context_features = 0`` and ``hidden_features = ()`` it is the classical BTL model with a
  linear read-out of the agent embedding.

  Args:
    num_agents: number of agents ``n``.
    num_context_features: dimension ``d`` of the context features (``0``: no context).
    embedding_dim: size of each agent embedding.
    hidden_features: widths of the hidden layers of ``s``.
    activation: elementwise nonlinearity.
    param_dtype: parameter dtype; ``None`` follows x64.
    rngs: :class:`flax.nnx.Rngs` (keyword-only).

  Examples:
    >>> import jax.numpy as jnp
    >>> from flax import nnx
    >>> from ste_jax.models import BradleyTerryLogit
    >>> model = BradleyTerryLogit(3, rngs=nnx.Rngs(0))
    >>> h = model(jnp.array([0, 1]), jnp.array([1, 0]))
    >>> h.shape, bool(h[0] == -h[1])
    ((2,), True)
  """

  def __init__(
    self,
    num_agents: int,
    *,
    num_context_features: int = 0,
    embedding_dim: int = 16,
    hidden_features: Sequence[int] = (64,),
    activation: Callable[[jax.Array], jax.Array] = jax.nn.silu,
    param_dtype: jax.typing.DTypeLike | None = None,
    rngs: nnx.Rngs,
  ) -> None:
    embedding_dim = _init_agent_embedding(
      self, num_agents, num_context_features, embedding_dim, param_dtype, rngs
    )
    self.s = _mlp(
      embedding_dim + self.num_context_features,
      tuple(hidden_features),
      activation,
      self.param_dtype,
      rngs,
    )

  def strength(self, a: jax.typing.ArrayLike, x: jax.typing.ArrayLike | None = None) -> jax.Array:
    """Contextual strengths ``s(a, x)`` of shape ``a.shape`` (``x``: ``(..., d)`` or ``None``)."""
    a, _, x = _prepare(a, a, x, self.num_context_features, self.param_dtype)
    z = self.embedding(a)
    if x is not None:
      z = jnp.concatenate([z, x], axis=-1)
    return self.s(z)[..., 0]

  def __call__(
    self, a: jax.typing.ArrayLike, b: jax.typing.ArrayLike, x: jax.typing.ArrayLike | None = None
  ) -> jax.Array:
    """Logits ``h(a, b, x) = s(a, x) - s(b, x)``; same shapes as :meth:`PairwiseLogit.__call__`."""
    dtype = self.param_dtype
    a, b, x = _prepare(a, b, x, self.num_context_features, dtype)
    lo, hi, sign = _canonical_pair(a, b, dtype)
    z = self.embedding(jnp.stack([lo, hi]))  # (2, ..., e)
    if x is not None:
      z = jnp.concatenate([z, jnp.broadcast_to(x, z.shape[:-1] + x.shape[-1:])], axis=-1)
    s = self.s(z)[..., 0]
    return sign * (s[0] - s[1])


class IntransitiveLogit(nnx.Module):
  r"""Flax NNX module: Bradley-Terry strengths plus a rank-``2K`` skew-symmetric term.

  .. math::
    h(a, b) = s_a - s_b + \sum_r (U_{ar} V_{br} - U_{br} V_{ar}).

  Follows the pairwise-model call protocol of :class:`~ste_jax.models.PairwiseLogit`
  (``model(a, b, x=None) -> h``), so :func:`~ste_jax.models.marginal_tournament` and
  :func:`~ste_jax.training.fit` accept it. It has no context features.

  Example usage::

    >>> model = IntransitiveLogit(4, rank=1, rngs=nnx.Rngs(0))
    >>> h = model(jnp.array([0, 1]), jnp.array([1, 0]))
    >>> bool(h[0] == -h[1])
    True

  Args:
    num_agents: ``n``.
    rank: number of skew-symmetric components ``K`` (``0`` = plain Bradley-Terry).
    param_dtype: parameter dtype (default follows x64).
    rngs: :class:`flax.nnx.Rngs`.
  """

  def __init__(
    self,
    num_agents: int,
    *,
    rank: int = 1,
    param_dtype: jax.typing.DTypeLike | None = None,
    rngs: nnx.Rngs,
  ) -> None:
    num_agents = validate_int(num_agents, "num_agents")
    rank = validate_int(rank, "rank", minimum=0)
    self.num_agents = num_agents
    self.num_context_features = 0
    p = init_intransitive_params(rngs.params(), num_agents, rank, dtype=param_dtype)
    self.strength = nnx.Param(p.strength)
    self.u = nnx.Param(p.u)
    self.v = nnx.Param(p.v)

  def params(self) -> IntransitiveParams:
    """The current parameters as an :class:`IntransitiveParams` (all components on)."""
    u = self.u[...]
    return IntransitiveParams(self.strength[...], u, self.v[...], jnp.ones(u.shape[-1:], u.dtype))

  def __call__(
    self, a: jax.typing.ArrayLike, b: jax.typing.ArrayLike, x: jax.typing.ArrayLike | None = None
  ) -> jax.Array:
    """Logits ``h(a, b)`` of shape ``broadcast(a, b).shape``; ``x`` must be ``None``."""
    if x is not None:
      raise ValueError("IntransitiveLogit has no context features; pass x=None.")
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    return intransitive_logits(self.params(), a, b)
