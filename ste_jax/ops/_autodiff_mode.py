"""Which derivative rule the soft cover uses: a fast reverse-only VJP, or a JVP rule for every mode.

The soft cover (:mod:`ste_jax.ops._covering`) has two hand-written derivative rules, and JAX lets a
function have only one:

* ``"reverse"`` (default): a custom VJP whose backward is one pass over the value kernel's tiles
  -- the fastest ``jax.grad`` on XLA:CPU (``benchmarks/operators.py``; the figures in
  ``benchmarks/RESULTS.md`` are of this rule). Forward mode (``jax.jvp``, ``jax.jacfwd``,
  ``jax.linearize``) and second order (``jax.hessian``) are not defined for it: JAX raises
  "can't apply forward-mode autodiff (jvp) to a custom_vjp function".
* ``"any"``: a custom JVP rule, linear in the tangents, from which JAX derives reverse mode by
  transposition: every mode and order works, with ``O(n^2)`` memory; ``jax.grad`` of ``ste_scores``
  was 7.5x slower than ``"reverse"`` at ``n = 1000`` and 11x at ``n = 2000`` on the Xeon VM
  (``benchmarks/operators.py --any-mode``, table in ``benchmarks/RESULTS.md``).

The max-min closure has a single custom JVP rule that serves every mode at full speed, so the mode
only concerns the cover (``soft_cover_scores``, ``soft_uncovered_score``, ``ste_scores``).
"""

import contextlib
from typing import Iterator, Literal

from ste_jax.ops._trace_option import trace_option

AutodiffMode = Literal["reverse", "any"]
_MODES = ("reverse", "any")

# Read while a computation is traced (part of JAX's cache keys where JAX supports it:
# :mod:`ste_jax.ops._trace_option`).
_current, _set = trace_option("ste_jax_autodiff_mode", "reverse")


@contextlib.contextmanager
def autodiff_mode(mode: AutodiffMode) -> Iterator[None]:
  """Context manager: the derivative rule of the soft cover for computations traced inside it.

  Args:
    mode: ``"reverse"`` (the default outside any block: the fast custom VJP, reverse mode only) or
      ``"any"`` (a custom JVP rule: ``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``,
      ``jax.hessian`` and Hessian-vector products too; reverse mode 7.5x slower at
      ``n = 1000``, 11x at ``n = 2000``). See the module docstring.

  The mode is read when a function is traced; where JAX has ``jax.make_user_context`` it is part of
  JAX's cache keys, so a ``jax.jit`` function is traced again in the other mode.

  Raises:
    ValueError: for another ``mode``.

  Examples:
    >>> import jax, jax.numpy as jnp
    >>> import ste_jax
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])
    >>> f = lambda P: ste_jax.ste_scores(P, tau=0.1).uncovered.sum()
    >>> with ste_jax.ops.autodiff_mode("any"):
    ...   H = jax.hessian(f)(P)
    >>> H.shape
    (3, 3, 3, 3)
  """
  if mode not in _MODES:
    raise ValueError(f"mode must be one of {_MODES}, got {mode!r}.")
  with _set(mode):
    yield


def current_autodiff_mode() -> AutodiffMode:
  """The mode of the innermost enclosing :func:`autodiff_mode` block (``"reverse"`` outside)."""
  return _current()  # type: ignore[return-value]
