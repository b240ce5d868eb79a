"""Soft reachability (paper §3.3).

Eqs. ``soft_boolean_product``, ``soft_path_length_k`` and ``soft_reachability``.

Derivatives, all modes (``jax.grad``, ``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``,
``jax.hessian``): the exact closure (``gamma = 0``) through the custom JVP rule of
:func:`ste_jax.ops._maxmin.bottleneck_closure` (the tangent of each output is the tangent of its
bottleneck edge, a gather; reverse mode is its transpose, a scatter-add; ``O(n^2)`` memory); the
smooth products (``gamma > 0``) by plain autodiff of the ``lax.scan`` below, whose steps are
rematerialized (``jax.checkpoint``) in reverse mode.
"""

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import (
  as_float_array,
  as_temperature,
  check_square,
  eye_mask,
  is_static_zero,
  split_temperature,
  static_path_length,
)
from ste_jax.ops._batching import flatten_batch, unflatten_batch
from ste_jax.ops._compiled import compiled_entry
from ste_jax.ops._edges import tempered_sigmoid
from ste_jax.ops._extrema import LARGE_TEMPERATURE, exprel, log1p_ratio, normalized_smax
from ste_jax.ops._maxmin import bottleneck_closure, maxmin_matmul


def _pair_softmin(x: jax.Array, y: jax.Array, gamma: jax.Array) -> jax.Array:
  """``smin_gamma(x, y)`` of Eq. ``normalized_softmin`` with ``m = 2``, in a stable closed form.

  ``-g log((e^{-x/g} + e^{-y/g}) / 2) = min(x, y) - g (log1p(e^{-|x - y|/g}) - log 2)``, and
  above ``LARGE_TEMPERATURE`` the same in ``expm1`` form (:func:`~ste_jax.ops._extrema.lse_large`;
  ``(x + y) / 2`` as ``gamma -> inf``); for a traced ``gamma == 0`` it returns ``min(x, y)``.
  """
  low = jnp.minimum(x, y)
  positive, g = split_temperature(gamma)

  def small(low, d, g):
    return low - g * (jnp.log1p(jnp.exp(-d / g)) - jnp.log(2.0).astype(low.dtype))

  def large(low, d, g):  # -g log1p(s), s = expm1(-d / g) / 2 in (-1/2, 0]: no cancellation
    g = jnp.where(g > LARGE_TEMPERATURE, g, jnp.full_like(g, 2.0 * LARGE_TEMPERATURE))  # vmap
    gs = -0.5 * d * exprel(-d / g)
    return low - gs * log1p_ratio(gs / g)

  soft = lax.cond(g > LARGE_TEMPERATURE, large, small, low, jnp.abs(x - y), g)
  return jnp.where(positive, soft, low)


def max_min_product(
  X: jax.typing.ArrayLike, Y: jax.typing.ArrayLike, *, gamma: jax.typing.ArrayLike = 0.0
) -> jax.Array:
  r"""Smooth max-min Boolean product (Eq. ``soft_boolean_product``); exact when ``gamma = 0``.

  .. math::
    (X \otimes_\gamma Y)_{ab}
      = \mathrm{smax}_\gamma\big(\{\mathrm{smin}_\gamma(X_{ac}, Y_{cb}) : c\}\big)

  and, at ``gamma = 0``, :math:`\max_c \min(X_{ac}, Y_{cb})` (Eq. ``maxmin_boolean_product``).

  Note: the paper's appendix code takes a *hard* minimum inside the smooth product; this function
  follows the equation, which uses the normalized soft minimum of the pair (``m = 2``).

  Args:
    X: array of shape ``(..., n, m)``.
    Y: array of shape ``(..., m, p)`` with the same dtype.
    gamma: temperature ``>= 0`` (traced); ``0`` is the exact product, traced or not (a literal ``0``
      runs the exact product only). A concrete negative or non-finite value raises ``ValueError``;
      traced values cannot be checked (a traced ``gamma < 0`` gives the exact product).

  Returns:
    Array of shape ``(..., n, p)``. Memory: the ``(..., n, m, p)`` intermediate is materialized.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.ops import max_min_product
    >>> X = jnp.array([[0.2, 0.9], [0.6, 0.4]])
    >>> Y = jnp.array([[0.5, 0.1], [0.8, 0.7]])
    >>> [[round(float(x), 1) for x in row] for row in max_min_product(X, Y)]
    [[0.8, 0.7], [0.5, 0.4]]
  """
  X = as_float_array(X, "X")
  Y = as_float_array(Y, "Y")
  if X.ndim < 2 or Y.ndim < 2 or X.shape[-1] != Y.shape[-2]:
    raise ValueError(
      f"X and Y must have shapes (..., n, m) and (..., m, p); got {tuple(X.shape)} and "
      f"{tuple(Y.shape)}."
    )
  if X.dtype != Y.dtype:
    raise ValueError(f"X and Y must have the same dtype; got {X.dtype} and {Y.dtype}.")
  if is_static_zero(gamma):
    return maxmin_matmul(X, Y)
  g = as_temperature(gamma, X, "gamma", allow_zero=True)
  inner = _pair_softmin(X[..., :, :, None], Y[..., None, :, :], g)
  return normalized_smax(inner, gamma=g, axis=-2)


def bottleneck_reachability(W: jax.Array, K: int) -> jax.Array:
  """Exact max-min reachability of ``(..., n, n)`` weights ``W`` (diagonal ignored).

  The diagonal of the result is unspecified.
  """
  if W.ndim == 2:
    return bottleneck_closure(W, K)
  flat, batch = flatten_batch(W, 2)
  closure = jax.vmap(
    bottleneck_closure, in_axes=(0, None)
  )  # a loop over items on CPU (vmap_by_platform)
  return unflatten_batch(closure(flat, K), batch)


def _soft_path_scan(D: jax.Array, g: jax.Array, K: int, rows: jax.Array | None = None) -> jax.Array:
  """Eqs. ``soft_path_length_k`` and ``soft_reachability`` for ``gamma > 0``, streamed over k.

  ``rows``: ``(r, n)`` rows of ``D`` (default all of ``D``): ``R`` of those rows only, ``(r, n)``.
  Row ``a`` of ``Q^(k) = Q^(k-1) (x) D`` needs row ``a`` of ``Q^(k-1)`` and all of ``D``, so rows
  are computed independently (:func:`~ste_jax.ops.sharded_ste_scores` splits them over devices).
  """
  D0 = D if rows is None else rows
  positive, g_safe = split_temperature(g)

  # Above LARGE_TEMPERATURE the soft maximum over k is accumulated in the expm1 form of
  # lse_large (``Q`` in [0, 1] <= g): ``sum_k Q exprel(Q / g)``; double where on both temperatures.
  large = g_safe > LARGE_TEMPERATURE
  g_small = jnp.where(large, jnp.ones_like(g_safe), g_safe)
  g_large = jnp.where(large, g_safe, jnp.full_like(g_safe, 2.0 * LARGE_TEMPERATURE))

  def expm1_term(Q):
    return Q * exprel(Q / g_large)

  @jax.checkpoint
  def step(carry, _):
    Q, lse, acc, running_max = carry
    Q = max_min_product(Q, D, gamma=g)
    lse = jnp.logaddexp(lse, Q / g_small)
    return (Q, lse, acc + expm1_term(Q), jnp.maximum(running_max, Q)), None

  init = (D0, D0 / g_small, expm1_term(D0), D0)
  (_, lse, acc, running_max), _ = lax.scan(step, init, None, length=K - 1)
  soft = g_small * (lse - jnp.log(jnp.asarray(K, D.dtype)))
  gs = acc / K
  soft = jnp.where(large, gs * log1p_ratio(gs / g_large), soft)
  return jnp.where(positive, soft, running_max)


@compiled_entry(temperatures=("gamma",), static=("max_path_length",))
def soft_reachability(
  D: jax.typing.ArrayLike, *, max_path_length: int | None = None, gamma: jax.typing.ArrayLike = 0.0
) -> jax.Array:
  r"""Bounded soft reachability (Eqs. ``soft_path_length_k`` and ``soft_reachability``).

  .. math::
    Q^{(1)} = D, \quad Q^{(k)} = Q^{(k-1)} \otimes_\gamma D, \qquad
    R(a, b) = \mathrm{smax}_\gamma\big(\{Q^{(k)}(a, b) : k = 1, \dots, K\}\big).

  ``gamma = 0`` (the default, and what the paper's experiments use) is the exact max-min closure:
  ``R[a, b]`` is the best bottleneck over walks ``a -> b`` of at most ``K`` edges. It is *not*
  computed as ``K`` dense products: ``K >= n - 1`` runs Floyd--Warshall in the max-min semiring
  (``O(n^3)`` time, ``O(n^2)`` memory), smaller ``K`` uses repeated squaring (``O(n^3 log K)``), and
  derivatives of every mode and order come from a custom JVP rule with ``O(n^2)`` memory (each
  ``R[a, b]`` equals ``D`` at one bottleneck edge, found from a closure over the entries' ranks;
  its tangent is that edge's tangent, and reverse mode is the transposed gather, a scatter-add).

  ``gamma > 0`` follows the equations literally: one smooth product per path length inside a
  ``lax.scan`` with a streaming log-sum-exp over ``k`` (one joint normalized soft maximum over all
  ``K`` lengths, as Eq. ``soft_reachability`` writes it; the paper's appendix code instead folds
  pairwise soft maxima, which is a different quantity). Each step materializes an ``(n, n, n)``
  tensor and is rematerialized in the backward pass (``jax.checkpoint``), so memory is ``O(n^3)``;
  forward mode and second order are plain autodiff of the same scan.

  Conventions: the diagonal of ``D`` is treated as zero (no self-loops, Eq. ``soft_majority_edge``),
  and the diagonal of the returned ``R`` is set to ``0``: it is unused by Eq.
  ``soft_top_cycle_score`` (``b != a``), as in the paper's appendix code.

  Args:
    D: soft adjacency of shape ``(..., n, n)`` with entries in ``[0, 1]``.
    max_path_length: ``K`` (static: changing it recompiles); ``None`` means ``K = n - 1``.
    gamma: aggregation temperature ``>= 0`` of the smooth products and of the soft maximum over
      path lengths (traced). A traced ``0`` gives the exact values (through the dense smooth path,
      with finite gradients); a literal ``0`` runs the closure. A concrete negative or non-finite
      value raises ``ValueError``; traced values cannot be checked.

  Returns:
    ``R`` of shape ``(..., n, n)``, entries in ``[0, 1]``, zero diagonal.

  Examples:
    >>> import jax.numpy as jnp
    >>> D = jnp.array([[0.0, 0.9, 0.1], [0.1, 0.0, 0.8], [0.9, 0.2, 0.0]])
    >>> R = soft_reachability(D)
    >>> [round(float(x), 3) for x in R[0]]
    [0.0, 0.9, 0.8]
  """
  D = as_float_array(D, "D")
  n = check_square(D, "D")
  K = static_path_length(max_path_length, n)
  eye = eye_mask(D)
  D = jnp.where(eye, jnp.zeros_like(D), D)
  if is_static_zero(gamma):
    R = bottleneck_reachability(D, K)
  else:
    g = as_temperature(gamma, D, "gamma", allow_zero=True)
    R = _soft_path_scan(D, g, K)
  return jnp.where(eye, jnp.zeros_like(R), R)


def tournament_reachability(P: jax.Array, tau: jax.Array, K: int) -> jax.Array:
  """Exact max-min reachability of ``D_tau(P)``, computed on ``P`` and mapped through the sigmoid.

  The sigmoid is strictly increasing, so the bottleneck closure commutes with it:
  ``closure(sigma((P - 1/2) / tau)) = sigma((closure(P) - 1/2) / tau)`` off the diagonal. Running
  the closure on ``P`` gives the same values as :func:`soft_reachability` on
  ``soft_majority_edges(P, tau=tau)``, does not depend on ``tau`` (no recompute per temperature),
  and selects bottleneck edges among unsaturated inputs: on float32 ``D`` many saturated entries
  round to equal values and the chosen edge (hence the gradient) would drift from float64.

  Args:
    P: ``(..., n, n)`` tournament; ``tau``: scalar temperature ``>= 0`` of ``P``'s dtype (``0``:
      the step function, as :func:`~ste_jax.ops.soft_majority_edges`); ``K``: static.

  Returns:
    ``R`` of shape ``(..., n, n)`` with zero diagonal.
  """
  eye = eye_mask(P)
  C = bottleneck_reachability(P, K)
  C = jnp.where(eye, jnp.full_like(C, 0.5), C)  # finite fill before the sigmoid (double where)
  R = tempered_sigmoid(C - 0.5, tau)
  return jnp.where(eye, jnp.zeros_like(R), R)
