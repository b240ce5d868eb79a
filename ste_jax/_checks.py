"""Trace-time shape and dtype checks shared by the operators.

Everything here runs while JAX traces a function: it looks only at shapes and dtypes (static
information), so it costs nothing under ``jit`` and never syncs with the device. Value checks
(NaN, range, complementarity) live in :mod:`ste_jax.validation` and run in eager entry points.
"""

import jax
import jax.numpy as jnp
import numpy as np


def default_float_dtype() -> np.dtype:
  """The float dtype JAX uses by default: float64 under ``jax_enable_x64``, else float32."""
  return jnp.zeros((), dtype=float).dtype


def as_float_array(x, name: str) -> jax.Array:
  """Converts ``x`` to a JAX array with a floating dtype.

  Floating inputs keep their dtype (no silent float32/float64 mixing); integer or boolean inputs
  are promoted to the default float dtype. Anything else raises.

  Args:
    x: array-like input.
    name: the argument's name, used in the error message.

  Returns:
    A floating JAX array.
  """
  x = jnp.asarray(x)
  if jnp.issubdtype(x.dtype, jnp.floating):
    return x
  if jnp.issubdtype(x.dtype, jnp.integer) or jnp.issubdtype(x.dtype, jnp.bool_):
    return x.astype(default_float_dtype())
  raise TypeError(f"{name} must be a real floating array, got dtype {x.dtype}.")


def check_square(x: jax.Array, name: str) -> int:
  """Checks that ``x`` has shape ``(..., n, n)`` and returns ``n``.

  Raises:
    ValueError: at trace time, naming the argument, if ``x`` has rank < 2 or is not square in its
      last two axes.
  """
  if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
    raise ValueError(
        f"{name} must be a square matrix (or a batch of them) of shape (..., n, n); "
        f"got shape {tuple(x.shape)}."
    )
  return x.shape[-1]


def as_temperature(t, like: jax.Array, name: str) -> jax.Array:
  """Converts a temperature to a scalar array of ``like``'s dtype (traced, never static).

  Raises:
    ValueError: if ``t`` is not a scalar.
  """
  t = jnp.asarray(t)
  if t.ndim != 0:
    raise ValueError(f"{name} must be a scalar temperature; got shape {tuple(t.shape)}.")
  return t.astype(like.dtype)


def is_static_zero(t) -> bool:
  """True when ``t`` is a Python or NumPy number equal to zero (not a traced value).

  Operators use this to pick the exact (hard) algorithm at trace time when a temperature is a
  literal ``0``; a traced temperature that happens to be zero is handled by ``jnp.where`` instead.
  """
  if isinstance(t, (int, float, np.number)):
    return float(t) == 0.0
  if isinstance(t, np.ndarray) and t.ndim == 0:
    return float(t) == 0.0
  return False


def eye_mask(x: jax.Array) -> jax.Array:
  """Boolean identity of ``x``'s last two axes, reshaped to ``x.ndim`` dims (explicit broadcasting).

  Library code never relies on implicit rank promotion, so it runs under
  ``jax.numpy_rank_promotion("raise")``.
  """
  n = x.shape[-1]
  return jnp.eye(n, dtype=bool).reshape((1,) * (x.ndim - 2) + (n, n))
