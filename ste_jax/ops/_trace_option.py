"""A trace-time option: a value read while a computation is traced, set by a ``with`` block.

Where JAX has ``jax.make_user_context`` the value is part of JAX's tracing and compilation cache
keys, so a function jitted under one value is traced again under another; an older JAX falls back
to a context variable, and a jitted function then keeps the value of its first trace for the same
shapes. Used by :func:`~ste_jax.ops.batching_mode`, :func:`~ste_jax.ops.closure_algorithm` and
:func:`~ste_jax.ops.native_kernels`.
"""

from collections.abc import Callable
import contextlib
import contextvars


def trace_option(
  name: str, default: str
) -> tuple[Callable[[], str], Callable[[str], contextlib.AbstractContextManager]]:
  """``(current, scoped)``: ``current()`` reads the option; ``scoped(value)`` sets it in a ``with``.

  Args:
    name: the option's name (for the context-variable fallback).
    default: its value outside any block.
  """
  import jax

  if hasattr(jax, "make_user_context"):
    option = jax.make_user_context(default)
    return (lambda: option.value), option

  var: contextvars.ContextVar[str] = contextvars.ContextVar(
    name, default=default
  )  # pragma: no cover

  @contextlib.contextmanager
  def scoped(value: str):  # pragma: no cover - a JAX without jax.make_user_context
    token = var.set(value)
    try:
      yield
    finally:
      var.reset(token)

  return var.get, scoped  # pragma: no cover
