"""Normalized log-sum-exp extrema (paper §3.3, Eqs. ``normalized_softmin``, ``normalized_smax``)."""

import functools

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, as_temperature, is_static_zero, split_temperature

# Temperatures above which the normalized log-sum-exp is computed in its ``expm1`` form
# (:func:`lse_large`). Below, ``g (log sum_i e^{x_i/g} - log m)`` loses ``g`` ulps to the
# cancellation of two logarithms near ``log m`` (float32: wrong in the third digit from
# ``g ~ 1e5``, and ``inf * 0`` once ``g`` overflows); at and below ``1`` it keeps its values.
LARGE_TEMPERATURE = 1.0


def _series_cutoff(dtype, order: int, coefficient: float) -> float:
  """``|y|`` below which a series truncated after ``y^(order-1)`` is exact to the dtype's eps."""
  return float((jnp.finfo(dtype).eps / coefficient) ** (1.0 / order))


def exprel(y: jax.Array) -> jax.Array:
  """``expm1(y) / y``, ``1`` at ``y = 0``; with finite, accurate values and gradients near 0."""
  small = jnp.abs(y) < _series_cutoff(y.dtype, 3, 1.0 / 24.0)
  y_safe = jnp.where(small, jnp.ones_like(y), y)
  return jnp.where(small, 1.0 + y * (0.5 + y / 6.0), jnp.expm1(y_safe) / y_safe)


def log1p_ratio(s: jax.Array) -> jax.Array:
  """``log1p(s) / s``, ``1`` at ``s = 0``; with finite, accurate values and gradients near 0."""
  small = jnp.abs(s) < _series_cutoff(s.dtype, 3, 1.0 / 4.0)
  s_safe = jnp.where(small, jnp.ones_like(s), s)
  return jnp.where(small, 1.0 + s * (-0.5 + s / 3.0), jnp.log1p(s_safe) / s_safe)


def lse_large(x: jax.Array, g: jax.Array, count: jax.Array, axis, where=None) -> jax.Array:
  """``g log(mean exp(x / g))`` over ``axis`` for a large ``g``, in a form without cancellation.

  With ``s = mean(expm1(x / g))``, the value is ``g log1p(s) = (g s) (log1p(s) / s)`` and
  ``g s = mean(x exprel(x / g))``: no product by ``g``, so it is exact to rounding for every
  ``g >= max |x|`` up to ``inf`` (where it is ``mean(x)``, the ``g -> inf`` limit). Keeps the
  reduced axis. ``count``: the number of entries (``where``: those selected) along ``axis``.
  """
  terms = x * exprel(x / g)
  if where is not None:
    terms = jnp.where(where, terms, jnp.zeros_like(terms))
  gs = jnp.sum(terms, axis=axis, keepdims=True) / count
  return gs * log1p_ratio(gs / g)


def _masked_normalized_lse_max(z, gamma, axis, where, empty_value):
  """``gamma * log(mean_{where} exp(z / gamma))`` along ``axis``; ``max`` when ``gamma == 0``.

  The shared kernel behind both extrema. Stable: it subtracts a stop-gradient maximum, fills
  masked entries with that finite maximum *before* the exponential (double-``where``), and guards
  ``log`` of the count and of the sum so that empty sets give ``empty_value`` with zero, finite
  gradients.
  """
  z = as_float_array(z, "z")
  if where is None:
    mask = jnp.ones(z.shape, dtype=bool)
  else:
    mask = jnp.broadcast_to(jnp.asarray(where, dtype=bool), z.shape)
  count = jnp.sum(mask, axis=axis, keepdims=True).astype(z.dtype)
  nonempty = count > 0
  neg_inf = jnp.asarray(-jnp.inf, dtype=z.dtype)
  zmax = jnp.max(jnp.where(mask, z, neg_inf), axis=axis, keepdims=True)
  zmax = lax.stop_gradient(jnp.where(nonempty, zmax, jnp.zeros_like(zmax)))
  # Masked entries are -inf (0 on an empty set), not zmax: a filler equal to the maximum would
  # tie with it, and jnp.max would split the maximum's gradient with the filler.
  hard = jnp.max(jnp.where(mask, z, jnp.where(nonempty, neg_inf, 0)), axis=axis, keepdims=True)

  if is_static_zero(gamma):
    out = hard
  else:
    g = as_temperature(gamma, z, "gamma", allow_zero=True)
    positive, g_safe = split_temperature(g)
    shifted = jnp.where(mask, z - zmax, jnp.zeros_like(z)) / g_safe
    total = jnp.sum(jnp.where(mask, jnp.exp(shifted), jnp.zeros_like(z)), axis=axis, keepdims=True)
    total = jnp.where(nonempty, total, jnp.ones_like(total))
    count_safe = jnp.where(nonempty, count, jnp.ones_like(count))
    soft = zmax + g_safe * (jnp.log(total) - jnp.log(count_safe))
    # No clamp to [max - gamma log m, max]: bounds hold up to rounding (an ulp), and a clamp would
    # replace the softmax gradient by the hard one whenever rounding crosses the bound.
    # Slices of width max - min <= g above LARGE_TEMPERATURE take the expm1 form (lse_large);
    # wider ones keep soft, whose error of g ulps is then below their width's ulp.
    zmin = jnp.min(jnp.where(mask, z, zmax), axis=axis, keepdims=True)
    use = (zmax - zmin <= g) & (g > LARGE_TEMPERATURE)  # zmax, zmin: no gradient (masks)
    soft = lax.cond(
      g > LARGE_TEMPERATURE,
      functools.partial(_large_branch, axis=axis),
      lambda z, mask, use, zmax, count_safe, g, soft: soft,
      z,
      mask,
      lax.stop_gradient(use),
      zmax,
      count_safe,
      g,
      soft,
    )
    out = jnp.where(positive, soft, hard)
  out = jnp.where(nonempty, out, jnp.asarray(empty_value, dtype=z.dtype))
  return jnp.squeeze(out, axis=axis)


def _large_branch(z, mask, use, zmax, count_safe, g, soft, *, axis):
  """``soft`` with the slices selected by ``use`` in the form of :func:`lse_large`.

  The ``expm1`` form needs ``|x / g| <= 1`` (``x = z - max``; else ``1 + s`` cancels).
  """
  g_large = jnp.where(use, g, jnp.full_like(zmax, 2.0 * LARGE_TEMPERATURE))  # double where
  x = jnp.where(mask, z - zmax, jnp.zeros_like(z))
  return jnp.where(use, zmax + lse_large(x, g_large, count_safe, axis, where=mask), soft)


def normalized_smax(
  z: jax.typing.ArrayLike,
  *,
  gamma: jax.typing.ArrayLike,
  axis: int = -1,
  where: jax.typing.ArrayLike | None = None,
) -> jax.Array:
  r"""Normalized soft maximum (paper §3.3, Eq. ``normalized_smax``).

  .. math::
    \mathrm{smax}_\gamma(z_1, \dots, z_m)
      = \gamma \log\Big(\frac{1}{m}\sum_{i=1}^m e^{z_i/\gamma}\Big)

  with ``m`` the number of entries selected by ``where``. It lies in
  ``[max(z) - gamma log m, max(z)]``, so values in ``[0, 1]`` stay in ``[0, 1]``, and it tends to
  the maximum as ``gamma -> 0``.

  Args:
    z: array of shape ``(..., m, ...)``.
    gamma: temperature ``gamma >= 0`` (scalar; traced, so a new value does not recompile).
      ``gamma = 0`` gives the exact maximum, traced or not (a literal ``0`` skips the soft
      computation), with finite gradients. A concrete negative or non-finite value raises
      ``ValueError``; traced values cannot be checked (a traced ``gamma < 0`` gives the maximum).
    axis: the axis to reduce (static).
    where: optional boolean mask broadcastable to ``z``; only ``True`` entries are aggregated and
      ``m`` counts them.

  Returns:
    Array of ``z``'s shape without ``axis``. The maximum over an empty set is ``0`` (the paper's
    convention for Eq. ``soft_cover_violation``; it makes ``n = 1`` and ``n = 2`` come out right),
    with zero gradient.

  Examples:
    >>> import jax.numpy as jnp
    >>> round(float(normalized_smax(jnp.array([0.0, 1.0]), gamma=0.0)), 6)
    1.0
    >>> round(float(normalized_smax(jnp.array([1.0, 1.0]), gamma=0.1)), 6)
    1.0
  """
  return _masked_normalized_lse_max(z, gamma, axis, where, empty_value=0.0)


def normalized_softmin(
  z: jax.typing.ArrayLike,
  *,
  gamma: jax.typing.ArrayLike,
  axis: int = -1,
  where: jax.typing.ArrayLike | None = None,
) -> jax.Array:
  r"""Normalized soft minimum (paper §3.3, Eq. ``normalized_softmin``).

  .. math::
    \mathrm{smin}_\gamma(z_1, \dots, z_m)
      = -\gamma \log\Big(\frac{1}{m}\sum_{i=1}^m e^{-z_i/\gamma}\Big)

  It lies in ``[min(z), min(z) + gamma log m]`` and tends to the minimum as ``gamma -> 0``.

  Args:
    z: array of shape ``(..., m, ...)``.
    gamma: temperature ``gamma >= 0`` (traced); ``0`` gives the exact minimum, traced or not
      (checks as in :func:`normalized_smax`).
    axis: the axis to reduce (static).
    where: optional boolean mask broadcastable to ``z``.

  Returns:
    Array of ``z``'s shape without ``axis``. The minimum over an empty set is ``1`` (a universal
    quantifier over nothing is true: with one agent, ``t(a) = 1``), with zero gradient.

  Examples:
    >>> import jax.numpy as jnp
    >>> round(float(normalized_softmin(jnp.array([0.2, 0.9]), gamma=0.0)), 6)
    0.2
  """
  z = as_float_array(z, "z")
  return -_masked_normalized_lse_max(-z, gamma, axis, where, empty_value=-1.0)
