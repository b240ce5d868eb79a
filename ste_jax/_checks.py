"""Trace-time shape, dtype and static-argument checks shared by the operators.

Everything here runs while JAX traces a function: it looks at shapes and dtypes (static
information), so it costs nothing under ``jit`` and never syncs with the device. Shape and rank
assertions use chex (``chex.assert_shape`` / ``chex.assert_rank`` with a ``custom_message`` naming
the argument and ``exception_type=ValueError``; chex is imported on the first check, so that
``import ste_jax`` stays light). The one case chex has no assertion for, "rank >= 2", and the
dtype rule of :func:`as_float_array` (integers and bools promoted, anything else refused) stay
hand-written. The one exception
is a temperature that is *concrete* (a Python or NumPy number, or a JAX array that is not a tracer):
its value is known when the operator is called, so :func:`as_temperature` checks it (a negative
temperature would silently flip the tournament). Other value checks (NaN, range,
complementarity) live in :mod:`ste_jax._validation` and run in eager entry points.
"""

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._validation import validate_temperature


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
  import chex  # pylint: disable=g-import-not-at-top

  message = f"{name} must be a square matrix (or a batch of them) of shape (..., n, n)"
  if x.ndim < 2:  # chex.assert_shape would print a made-up expected shape here
    raise ValueError(f"{message}; got shape {tuple(x.shape)}.")
  n = x.shape[-1]
  chex.assert_shape(x, (..., n, n), custom_message=message, exception_type=ValueError)
  return n


def static_path_length(max_path_length, n: int) -> int:
  """The path-length bound ``K`` of the reachability, a static Python ``int`` (``None``: ``n - 1``).

  ``K`` sets loop lengths and array shapes, so it must be known when tracing: a Python or NumPy
  integer, not a JAX array.

  Raises:
    TypeError: naming ``max_path_length``, if it is not ``None`` or an integer (a float, a bool, a
      JAX array or tracer).
    ValueError: if it is ``< 1``.
  """
  if max_path_length is None:
    return max(n - 1, 1)
  if isinstance(max_path_length, bool) or not isinstance(max_path_length, (int, np.integer)):
    raise TypeError(
      f"max_path_length must be None or a static Python int, got {max_path_length!r}."
    )
  if max_path_length < 1:
    raise ValueError(f"max_path_length (K) must be >= 1, got {max_path_length}.")
  return int(max_path_length)


def check_temperature(t, name: str, *, allow_zero: bool = False) -> None:
  """Checks that a temperature is a scalar and, when its value is concrete, finite and ``> 0``.

  ``allow_zero=True`` also accepts ``0`` (the operator's exact hard limit). A traced value (inside
  ``jit``, ``grad``, ``vmap``...) cannot be checked without a device sync: only its shape is.

  Raises:
    ValueError: naming the argument, if ``t`` is not a scalar, or is concrete and negative,
      non-finite, or ``0`` where zero is not allowed.
  """
  import chex  # pylint: disable=g-import-not-at-top

  # jnp.shape, not t itself: chex.assert_rank reads a Python list as a scalar.
  chex.assert_rank(
    jax.ShapeDtypeStruct(jnp.shape(t), jnp.float32),
    0,
    custom_message=f"{name} must be a scalar temperature",
    exception_type=ValueError,
  )
  if not isinstance(t, jax.core.Tracer):
    validate_temperature(t, name, allow_zero=allow_zero)


def as_temperature(t, like: jax.Array, name: str, *, allow_zero: bool = False) -> jax.Array:
  """Converts a temperature to a scalar array of ``like``'s dtype (traced, never static).

  Concrete values are checked by :func:`check_temperature` (``> 0``, or ``>= 0`` with
  ``allow_zero``); traced values are not. Values above the dtype's largest finite number (traced
  ``inf`` too) become that number, where every operator has reached its ``t -> inf`` limit.

  Raises:
    ValueError: naming the argument, if ``t`` is not a scalar or is a concrete invalid value.
  """
  check_temperature(t, name, allow_zero=allow_zero)
  dtype = like.dtype
  largest = jnp.finfo(dtype).max
  if not isinstance(t, jax.core.Tracer):  # clamp before the cast: no overflow warning
    t = min(float(np.asarray(t)), float(largest))
  # A finite value beyond the dtype (``1e300`` in float32) would cast to ``inf`` and then meet
  # ``inf * 0``; the largest finite value gives the operators' ``t -> inf`` limit instead.
  return jnp.minimum(jnp.asarray(t).astype(dtype), jnp.asarray(largest, dtype))


def split_temperature(t: jax.Array) -> tuple[jax.Array, jax.Array]:
  """``(positive, t_safe)`` for the double-``where`` trick on a traced temperature.

  ``positive = t > 0`` selects the smooth branch; ``t_safe`` is ``t`` there and ``1`` elsewhere, so
  the smooth branch stays finite (and its gradient too: a ``0 * inf`` in the unselected branch
  would still poison the gradient of a single ``where``). Operators return their exact hard limit
  where ``positive`` is false: at a traced ``t = 0`` (and, since traced values cannot be checked,
  at a traced negative ``t``), and below :func:`soft_temperature_floor`.
  """
  positive = t >= soft_temperature_floor(t.dtype)
  return positive, jnp.where(positive, t, jnp.ones_like(t))


def soft_temperature_floor(dtype) -> float:
  """The smallest temperature the smooth kernels run at; below it they give the hard limit.

  ``sqrt(tiny)`` (float32 and bfloat16: ``1.1e-19``; float64: ``1.5e-154``): below it ``t^2``
  underflows and a derivative ``-x / t^2`` is ``inf`` (times a weight ``0``: NaN), while the soft
  value equals the hard one to rounding (``t log m`` far below eps). Where that would move values
  by more than ``eps^2`` (float16: ``sqrt(tiny) = 7.8e-3``), ``max(tiny, eps^2)`` instead, so
  that values keep the soft branch (float16 gradients may be NaN below ``7.8e-3``); never below
  ``tiny``, where ``1 / t`` overflows.
  """
  info = jnp.finfo(dtype)
  tiny, eps = float(info.tiny), float(info.eps)
  return max(tiny, min(tiny**0.5, eps**2))


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
