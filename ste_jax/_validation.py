"""Eager value checks, in one place: tournaments, temperatures, priors, counts and numbers.

Operators check shapes and dtypes at trace time (:mod:`ste_jax._checks`); *values* can only be
checked on concrete arrays and numbers, so these checks run in eager entry points, outside ``jit``,
and every error names the offending argument. :func:`validate_tournament` and
:func:`validate_wins` are public. Which entry point calls which check:
``docs/design/validation.md``.
"""

import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._errors import InputError, OptionError


def validate_tournament(P, *, atol: float = 1e-6, name: str = "P") -> np.ndarray:
  """Checks that ``P`` is a probabilistic tournament (paper §2.2, "Probabilistic Tournament").

  A probabilistic tournament has ``P[a, b] in [0, 1]``, ``P[a, b] + P[b, a] = 1`` and
  ``P[a, a] = 1/2``. Batches ``(..., n, n)`` are checked item by item.

  Args:
    P: array-like of shape ``(..., n, n)``; must be concrete (not a tracer).
    atol: absolute tolerance for complementarity and the diagonal.
    name: the argument name used in error messages.

  Returns:
    ``P`` as a NumPy array, unchanged.

  Raises:
    InputError: naming the problem and the first offending entry: wrong shape, NaN/Inf, values
      outside ``[0, 1]``, ``P + P^T != 1`` or a diagonal different from ``1/2``.

  Examples:
    >>> import ste_jax as ste
    >>> ste.validate_tournament([[0.5, 0.7], [0.3, 0.5]]).shape
    (2, 2)
    >>> ste.validate_tournament([[0.5, 0.7], [0.4, 0.5]])
    Traceback (most recent call last):
    ...
    ste_jax._errors.InputError: P is not complementary: P[0, 1] + P[1, 0] = 1.1 != 1 (atol=1e-06).
  """
  try:
    arr = np.asarray(P)
  except Exception as e:  # a tracer under jit, or an object that is not an array
    raise InputError(
      f"{name} must be a concrete array to be validated (call outside jit): {e}"
    ) from e
  if arr.dtype == bool or not (
    np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
  ):
    raise InputError(f"{name} must be a real-valued array, got dtype {arr.dtype}.")
  if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
    raise InputError(
      f"{name} must have shape (..., n, n) with a square last two axes; got {arr.shape}."
    )
  if arr.shape[-1] == 0:
    raise InputError(f"{name} must describe at least one agent; got shape {arr.shape}.")
  _check_entries(arr, name, atol=atol, diagonal=True, complementary=True)
  return arr


def _first(mask: np.ndarray) -> tuple[int, ...]:
  return tuple(int(i) for i in np.argwhere(mask)[0])


def _check_entries(
  arr: np.ndarray, name: str, *, atol: float, diagonal: bool, complementary: bool
) -> None:
  """Finite entries in ``[0, 1]`` (and ``P + P^T = 1``, a ``1/2`` diagonal), first bad one named.

  ``diagonal=False`` skips the diagonal entirely (operators that never read it).
  """
  x = arr.astype(np.float64)
  n = x.shape[-1]
  read = np.ones(x.shape, bool) if diagonal else np.broadcast_to(~np.eye(n, dtype=bool), x.shape)
  bad = ~np.isfinite(x) & read
  if bad.any():
    idx = _first(bad)
    raise InputError(f"{name} contains NaN or Inf ({name}{list(idx)} = {float(x[idx])}).")
  bad = ((x < 0) | (x > 1)) & read
  if bad.any():
    idx = _first(bad)
    raise InputError(f"{name} has values outside [0, 1] ({name}{list(idx)} = {float(x[idx])}).")
  if diagonal:
    diag = np.diagonal(x, axis1=-2, axis2=-1)
    bad = np.abs(diag - 0.5) > atol
    if bad.any():
      idx = _first(bad)
      raise InputError(
        f"{name} must have 1/2 on its diagonal (self-comparison); "
        f"{name}{list(idx[:-1]) + [idx[-1], idx[-1]]} = {float(diag[idx])}."
      )
  if complementary:
    bad = (np.abs(x + np.swapaxes(x, -1, -2) - 1.0) > atol) & read
    if bad.any():
      idx = _first(bad)
      mirror = idx[:-2] + (idx[-1], idx[-2])
      raise InputError(
        f"{name} is not complementary: {name}{list(idx)} + {name}{list(mirror)} = "
        f"{x[idx] + x[mirror]:.6g}"
        f" != 1 (atol={atol})."
      )


def check_operator_input(
  x, name: str, *, validate: bool, complementary: bool, atol: float = 1e-6
) -> None:
  """The eager value check of an operator's ``(..., n, n)`` input; a no-op where it cannot run.

  Checks, off the diagonal (which the operators never read), what :func:`validate_tournament`
  checks: finite entries in ``[0, 1]`` and, with ``complementary``, ``x + x^T = 1`` within
  ``atol`` (at least the dtype's eps: float16 and bfloat16 round each entry). It does nothing
  when ``validate`` is false, for a tracer (inside ``jit``, ``vmap``, ``grad``: a check would need
  a host sync), or for input the operator's own trace-time checks reject (not a real array, not
  square, no agents), so that their messages stay as they are.

  Raises:
    InputError: naming ``name`` and the first bad entry.
  """
  if not validate or isinstance(x, jax.core.Tracer):
    return
  try:
    arr = np.asarray(x)
  except Exception:  # not an array: the operator's own conversion raises
    return
  floating = jnp.issubdtype(arr.dtype, jnp.floating)  # bfloat16 too (not a NumPy floating)
  if arr.dtype == bool or not (floating or np.issubdtype(arr.dtype, np.integer)):
    return
  if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] == 0 or arr.size == 0:
    return
  if floating:  # P[a, b] and P[b, a] each round by eps / 2 (float16: 2.4e-4 off from exact)
    atol = max(atol, float(jnp.finfo(arr.dtype).eps))
  _check_entries(arr, name, atol=atol, diagonal=False, complementary=complementary)


def validate_temperature(value, name: str, *, allow_zero: bool = False) -> float:
  """Checks that a temperature is a finite scalar ``> 0`` (or ``>= 0`` with ``allow_zero``).

  Any finite value is usable: the operators clamp one beyond their dtype's range to its largest
  finite number (their ``t -> inf`` limit) and treat one below the square root of its smallest
  normal number as ``0`` (their hard limit); see ``docs/design/validation.md``.

  Raises:
    OptionError: naming the argument.
  """
  try:
    if isinstance(value, (bool, np.bool_)):
      raise TypeError("a bool is not a temperature")
    v = float(np.asarray(value))
  except Exception as e:
    raise OptionError(f"{name} must be a real scalar, got {value!r}.") from e
  if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
    bound = ">= 0" if allow_zero else "> 0"
    raise OptionError(f"{name} must be a finite number {bound}, got {v}.")
  return v


def validate_path_length(max_path_length, name: str = "max_path_length") -> None:
  """Checks that the path length ``K`` is ``None`` or an integer ``>= 1``."""
  if max_path_length is None:
    return
  if isinstance(max_path_length, bool) or not isinstance(max_path_length, (int, np.integer)):
    raise OptionError(f"{name} must be None or an integer >= 1, got {max_path_length!r}.")
  if max_path_length < 1:
    raise OptionError(f"{name} (K) must be >= 1, got {max_path_length}.")


def validate_symmetric_prior(prior, name: str = "prior") -> tuple[float, float]:
  """Checks a symmetric Beta prior ``(alpha, alpha)``, finite ``alpha > 0``; returns it as floats.

  The posterior-edge estimator (paper §6, Eq. ``posterior_edge_estimator``) needs a symmetric
  prior: an asymmetric one would make ``D`` depend on which agent of a pair is called ``a``.
  """
  try:
    alpha, beta = (float(x) for x in prior)
  except (TypeError, ValueError) as e:
    raise OptionError(f"{name} must be a pair (alpha, beta) of numbers, got {prior!r}.") from e
  if not (alpha > 0 and alpha == beta and np.isfinite(alpha)):
    raise OptionError(
      f"{name} must be a symmetric Beta(alpha, alpha) with finite alpha > 0, got {prior!r}: an "
      "asymmetric prior would make D depend on the order of each pair."
    )
  return alpha, beta


def validate_int(value, name: str, *, minimum: int = 1, allow_none: bool = False) -> int | None:
  """Checks that ``value`` is an integer ``>= minimum`` (bools are not); returns it as a Python int.

  ``None`` passes (and is returned) with ``allow_none``.

  Raises:
    OptionError: naming the argument.
  """
  if value is None and allow_none:
    return None
  try:
    if isinstance(value, (bool, np.bool_)):
      raise TypeError
    count = operator.index(value)
  except TypeError:
    count = None
  if count is None or count < minimum:
    raise OptionError(
      f"{name} must be an integer >= {minimum}{' or None' if allow_none else ''}, got {value!r}."
    )
  return count


def validate_number(
  value,
  name: str,
  *,
  low: float = -math.inf,
  high: float = math.inf,
  low_open: bool = False,
  high_open: bool = False,
) -> float:
  """Checks that ``value`` is a finite real number in ``[low, high]``; returns it as a Python float.

  ``low_open`` / ``high_open`` exclude the end points. Bools are not numbers here.

  Raises:
    OptionError: naming the argument and the interval.
  """
  try:
    if isinstance(value, (bool, np.bool_)):
      raise TypeError
    x = float(np.asarray(value))
  except (TypeError, ValueError):
    x = math.nan
  bad = (
    not math.isfinite(x)
    or x < low
    or x > high
    or (low_open and x == low)
    or (high_open and x == high)
  )
  if bad:
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    raise OptionError(f"{name} must be a finite number in {interval}, got {value!r}.")
  return x


def validate_wins(wins: jax.typing.ArrayLike, *, name: str = "wins") -> np.ndarray:
  """Eager value check of a wins matrix (call outside ``jit``, e.g. in loaders and scripts).

  Args:
    wins: concrete array-like of shape ``(n, n)``.
    name: the argument name used in error messages.

  Returns:
    ``wins`` as a NumPy array, unchanged.

  Raises:
    InputError: if ``wins`` is not a square real array with finite, nonnegative entries.

  Examples:
    >>> from ste_jax.stats import validate_wins
    >>> validate_wins([[0, 3], [1, 0]]).tolist()
    [[0, 3], [1, 0]]
  """
  arr = np.asarray(wins)
  if arr.dtype == bool or not (
    np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
  ):
    raise InputError(f"{name} must be a real-valued array, got dtype {arr.dtype}.")
  if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
    raise InputError(f"{name} must have shape (n, n); got {arr.shape}.")
  if not np.all(np.isfinite(arr)):
    idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
    raise InputError(f"{name} contains NaN or Inf ({name}{list(idx)} = {arr[idx]}).")
  if np.any(arr < 0):
    idx = tuple(int(i) for i in np.argwhere(arr < 0)[0])
    raise InputError(f"{name} must be nonnegative ({name}{list(idx)} = {arr[idx]}).")
  return arr
