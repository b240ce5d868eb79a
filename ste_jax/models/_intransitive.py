"""Bradley-Terry strengths plus a low-rank skew-symmetric (intransitive) term.

The logit of ``a`` beating ``b`` is

.. math::

  h(a, b) = s_a - s_b + \\sum_{r=1}^{K} m_r\\,(U_{ar} V_{br} - U_{br} V_{ar}),

a strength difference (Bradley-Terry) plus a skew-symmetric bilinear form of rank ``2K`` (the
"blade-chest" / multidimensional-Elo family): exactly antisymmetric, ``h(a, b) = -h(b, a)``, and
able to represent cycles (``K = 1`` already gives a rock-paper-scissors). ``m`` is a 0/1 mask that
switches components off, so models of different ranks share one parameter shape and can be fitted
side by side under ``jax.vmap`` (the cross-validation in :mod:`ste_jax.evaluate`). It is the
structured matrix completion the paper suggests for sparse data (appendix "Handling Sparse Data"):
fitted on the observed pairs, it predicts every pair.

Pure functions on a :class:`IntransitiveParams` pytree, with no Flax import (the model estimator
and the CLI use them); :class:`~ste_jax.models.IntransitiveLogit` (in ``_pairwise``, with the other
NNX modules) wraps them as a Flax NNX module with the package's pairwise-model call protocol
``model(a, b, x=None) -> h``.
"""

import jax
import jax.numpy as jnp

from ste_jax._checks import default_float_dtype
from ste_jax._results import result_type


@result_type
class IntransitiveParams:
  """Parameters of the intransitive Bradley-Terry logit.

  Attributes:
    strength: ``(..., n)`` Bradley-Terry strengths ``s`` (logit scale).
    u: ``(..., n, K)`` first factor of the skew-symmetric term.
    v: ``(..., n, K)`` second factor.
    mask: ``(..., K)`` 0/1 weights of the ``K`` components (rank ``2 * sum(mask)``); not trained.
  """

  strength: jax.Array
  u: jax.Array
  v: jax.Array
  mask: jax.Array


def init_intransitive_params(
  key: jax.Array,
  num_agents: int,
  max_rank: int,
  *,
  rank: int | None = None,
  scale: float = 0.1,
  dtype: jax.typing.DTypeLike | None = None,
) -> IntransitiveParams:
  """Zero strengths and small random factors (zero factors are a saddle point of the fit).

  Args:
    key: PRNG key.
    num_agents: ``n``.
    max_rank: ``K``, the number of skew-symmetric components held (static shape).
    rank: components switched on (default all ``K``).
    scale: standard deviation of the initial factors.
    dtype: float dtype (default: float32, or float64 under x64).

  Returns:
    :class:`IntransitiveParams` with ``strength (n,)``, ``u, v (n, K)``, ``mask (K,)``.

  Examples:
    >>> import jax
    >>> from ste_jax.models import init_intransitive_params
    >>> params = init_intransitive_params(jax.random.key(0), 4, 2)
    >>> params.strength.shape, params.u.shape, params.mask.shape
    ((4,), (4, 2), (2,))
  """
  dtype = default_float_dtype() if dtype is None else jnp.dtype(dtype)
  rank = max_rank if rank is None else rank
  ku, kv = jax.random.split(key)
  shape = (num_agents, max_rank)
  return IntransitiveParams(
    strength=jnp.zeros((num_agents,), dtype),
    u=scale * jax.random.normal(ku, shape, dtype),
    v=scale * jax.random.normal(kv, shape, dtype),
    mask=(jnp.arange(max_rank) < rank).astype(dtype),
  )


def intransitive_logits(
  params: IntransitiveParams, a: jax.typing.ArrayLike, b: jax.typing.ArrayLike
) -> jax.Array:
  """Logits ``h(a, b)`` for index arrays ``a`` and ``b`` (same shape ``(...)``).

  Args:
    params: unbatched :class:`IntransitiveParams` (``strength (n,)``).
    a: integer array of first agents.
    b: integer array of second agents, same shape.

  Returns:
    ``(...)`` logits, exactly antisymmetric in ``(a, b)``.

  Examples:
    >>> import jax, jax.numpy as jnp
    >>> from ste_jax.models import init_intransitive_params, intransitive_logits
    >>> params = init_intransitive_params(jax.random.key(0), 4, 2)
    >>> h = intransitive_logits(params, jnp.array([0, 1]), jnp.array([1, 0]))
    >>> bool(h[0] == -h[1])  # antisymmetric
    True
  """
  s, u, v, m = params.strength, params.u, params.v, params.mask
  um = u * m[..., None, :]
  skew = jnp.sum(um[a] * v[b] - um[b] * v[a], axis=-1)
  return s[a] - s[b] + skew


def intransitive_tournament(params: IntransitiveParams) -> jax.Array:
  """The model's full tournament ``P[a, b] = sigmoid(h(a, b))`` (Eq. ``marginal_tournament``).

  Complementary to rounding: ``h`` is an exactly antisymmetric matrix (``H - H^T`` form).

  Args:
    params: :class:`IntransitiveParams` of ``n`` agents.

  Returns:
    ``(n, n)`` probabilistic tournament with diagonal ``1/2``.

  Examples:
    >>> import jax
    >>> from ste_jax.models import init_intransitive_params, intransitive_tournament
    >>> P = intransitive_tournament(init_intransitive_params(jax.random.key(0), 4, 2))
    >>> P.shape, float(P[2, 2]), bool(abs(P[0, 1] + P[1, 0] - 1) < 1e-6)
    ((4, 4), 0.5, True)
  """
  s, u, v, m = params.strength, params.u, params.v, params.mask
  um = u * m[..., None, :]
  bilinear = um @ v.T
  H = (s[:, None] - s[None, :]) + (bilinear - bilinear.T)
  return jax.nn.sigmoid(H)
