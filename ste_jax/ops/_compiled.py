"""Eager calls of the operators run as one compiled computation, not op by op.

Called outside ``jax.jit``, JAX runs a function one operation at a time, and every ``lax.map``,
``lax.scan`` or ``lax.cond`` whose body is a fresh closure is traced and compiled again at each
call: the loops of the soft cover and of the max-min closure made every eager ``ste_scores`` call
pay for their compilation. :func:`compiled_entry` makes a public operator jit itself
(``ste_scores``, ``ste_scores_from_edges``, ``soft_reachability``, the cover functions,
``soft_uncovered_score``, ``soft_maximal_lottery``, ``alpha_rank``, ``posterior_edges``; the exact
solutions of :mod:`ste_jax.exact` are plain ``jax.jit`` functions, having no temperatures): array
arguments are traced, structural arguments (``max_path_length``) are static, and a temperature is
traced unless it is ``None`` or a literal zero -- the literal zero that selects an operator's exact
kernels (:func:`~ste_jax._checks.is_static_zero`) stays a static literal, so a new temperature never
recompiles and the hard kernels stay reachable. Concrete temperatures are checked before tracing, so
a negative or non-finite one still raises ``ValueError`` naming the argument.

The compiled program is cached per argument shapes and dtypes, static arguments, which
temperatures are literal zeros, and the trace-time options (:func:`~ste_jax.ops.native_kernels`,
:func:`~ste_jax.ops.closure_algorithm`, :func:`~ste_jax.ops.batching_mode`), read when the call
is made. Inside a user's ``jit``, ``grad`` or ``vmap`` the same function is a nested ``jit``, which
JAX inlines into the enclosing computation. Inputs that are not numeric arrays (a list of
strings, say) run the function as written, so its own checks raise their errors.
``benchmarks/eager_calls.py`` measures eager calls with and without the entry.
"""

import functools
import inspect

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


def compiled_entry(
  *,
  temperatures: tuple[str, ...] = (),
  static: tuple[str, ...] = (),
  positive: tuple[str, ...] = (),
):
  """Decorator: calls of the operator run as one ``jax.jit``-compiled computation.

  Args:
    temperatures: names of the temperature arguments (traced, except ``None`` and literal zeros;
      concrete values checked by :func:`~ste_jax._checks.check_temperature` first).
    static: names of structural arguments passed as static values (hashable).
    positive: the temperatures among ``temperatures`` that must be ``> 0`` (a concrete zero
      raises; a literal zero reaches the function, whose own check raises).

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
      traced, fixed = {}, {}
      for name, value in bound.arguments.items():
        if name in temperatures:
          if value is None or is_static_zero(value):
            fixed[name] = value
            continue
          check_temperature(value, name, allow_zero=name not in positive)
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
