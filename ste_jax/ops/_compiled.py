"""Eager calls of the operators run as one compiled computation, not op by op.

:func:`compiled_entry` makes a public operator jit itself: array arguments are traced, structural
arguments are static, and a temperature is traced unless it is ``None`` or a literal zero (which
selects the exact kernels and stays static). Concrete temperatures are checked before tracing, so
a bad one raises ``ValueError`` naming the argument. Inside a user's ``jit``, ``grad`` or ``vmap``
the operator is a nested ``jit``. Design notes: ``docs/design/eager_calls.md``
(``benchmarks/eager_calls.py`` times eager calls with and without the entry).
"""

import functools
import inspect
import math

import jax
import numpy as np


def _trace_options() -> tuple[str, str, str]:
  from ste_jax.ops._batching import current_batching_mode  # pylint: disable=g-import-not-at-top
  from ste_jax.ops._maxmin import current_closure_algorithm  # pylint: disable=g-import-not-at-top
  from ste_jax.ops._native import current_native_kernels  # pylint: disable=g-import-not-at-top

  return current_native_kernels(), current_closure_algorithm(), current_batching_mode()


def _is_numeric(value) -> bool:
  """Whether ``value`` can be traced as it is: a JAX array or a numeric NumPy array or number."""
  if isinstance(value, jax.Array):
    return True
  if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
    return np.asarray(value).dtype.kind in "biuf"
  return False


def _in_float_range(value):
  """A Python float beyond the largest float JAX traces it as (float32 unless x64) as ``inf``.

  The conversion rounds it to ``inf`` anyway, but the first call of a signature converts it with
  NumPy, which warns of the overflow, and later calls do not: the same value, without a warning
  that depends on what ran before.
  """
  if type(value) is not float or not math.isfinite(value):
    return value
  largest = float(np.finfo(jax.dtypes.canonicalize_dtype(np.float64)).max)
  return math.copysign(math.inf, value) if abs(value) > largest else value


def compiled_entry(
  *,
  temperatures: tuple[str, ...] = (),
  static: tuple[str, ...] = (),
  positive: tuple[str, ...] = (),
  check=None,
):
  """Decorator: calls of the operator run as one ``jax.jit``-compiled computation.

  Args:
    temperatures: names of the temperature arguments (traced, except ``None`` and literal zeros;
      concrete values checked by :func:`~ste_jax._checks.check_temperature` first).
    static: names of structural arguments passed as static values (hashable).
    positive: the temperatures among ``temperatures`` that must be ``> 0`` (a concrete zero
      raises; a literal zero reaches the function, whose own check raises).
    check: optional ``check(arguments)``, called with the bound arguments (defaults applied)
      before tracing: the eager value checks of concrete inputs (it skips tracers itself).

  Returns:
    A decorator; the decorated function keeps the signature and docstring, and the undecorated one
    is its ``__wrapped__``.
  """
  from ste_jax._checks import check_temperature, is_static_zero  # pylint: disable=g-import-not-at-top

  def decorate(fn):
    signature = inspect.signature(fn)

    @functools.partial(jax.jit, static_argnames=("fixed", "options"))
    def run(traced, fixed, options):  # pylint: disable=unused-argument
      del options  # a cache key only: the options are read while tracing
      return fn(**traced, **dict(fixed))

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
      bound = signature.bind(*args, **kwargs)
      bound.apply_defaults()
      if check is not None:
        check(bound.arguments)
      traced, fixed = {}, {}
      for name, value in bound.arguments.items():
        if name in temperatures:
          if value is None or is_static_zero(value):
            fixed[name] = value
            continue
          check_temperature(value, name, allow_zero=name not in positive)
          value = _in_float_range(value)
        elif name in static:
          fixed[name] = value
          continue
        if type(value) in (list, tuple):  # nested lists of numbers: one array (not NamedTuples)
          try:
            value = np.asarray(value)
          except ValueError:  # ragged
            return fn(*args, **kwargs)
        if not _is_numeric(value):
          return fn(*args, **kwargs)
        traced[name] = value
      fixed = tuple(sorted(fixed.items()))
      try:
        hash(fixed)
      except TypeError:
        return fn(*args, **kwargs)
      return run(traced, fixed, _trace_options())

    return wrapper

  return decorate
