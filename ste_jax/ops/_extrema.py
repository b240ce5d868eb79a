"""Normalized log-sum-exp extrema (paper §3.3, Eqs. ``normalized_softmin``, ``normalized_smax``)."""

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, as_temperature, is_static_zero, split_temperature


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
  hard = jnp.max(jnp.where(mask, z, jnp.where(nonempty, zmax, 0)), axis=axis, keepdims=True)

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
    out = jnp.where(positive, soft, hard)
  out = jnp.where(nonempty, out, jnp.asarray(empty_value, dtype=z.dtype))
  return jnp.squeeze(out, axis=axis)


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
