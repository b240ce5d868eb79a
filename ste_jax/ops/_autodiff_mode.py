"""Which derivative rule the soft cover uses: a JVP rule for every mode (default), or a reverse-only VJP.

The soft cover (:mod:`ste_jax.ops._covering`) has two hand-written derivative rules, and JAX lets a
function have only one:

* ``"any"`` (default): a custom JVP rule, linear in the tangents, from which JAX derives reverse
  mode by transposition: ``jax.grad``, ``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``,
  ``jax.hessian`` and Hessian-vector products in any nesting, with ``O(n^2)`` memory. Its tangent
  map runs over the reverse kernel's tiles, so the transpose JAX derives is a tiled pass like the
  hand-written one.
* ``"reverse"``: a custom VJP whose backward is one hand-written pass over the value kernel's tiles
  (reverse mode only: forward mode and second order raise JAX's "can't apply forward-mode autodiff
  (jvp) to a custom_vjp function"). For reverse-only use it is the faster rule: with the JVP rule,
  ``jax.grad`` of ``ste_scores`` was 1.1-1.2x slower at ``n = 100`` and ``1000`` and 1.1-1.3x at
  ``n = 2000`` in interleaved runs on the EPYC VM, at the same peak memory
  (``benchmarks/compare_trees.py``; ``benchmarks/RESULTS.md``, "The cover's two derivative
  rules"; ``benchmarks/operators.py --reverse-rule`` times both rules).

The max-min closure has a single custom JVP rule that serves every mode, so the mode only concerns
the cover (``soft_cover_scores``, ``soft_uncovered_score``, ``ste_scores``).
"""

import contextlib
from typing import Iterator, Literal

from ste_jax.ops._trace_option import trace_option

AutodiffMode = Literal["any", "reverse"]
_MODES = ("any", "reverse")

# Read while a computation is traced (part of JAX's cache keys where JAX supports it:
# :mod:`ste_jax.ops._trace_option`).
_current, _set = trace_option("ste_jax_autodiff_mode", "any")


@contextlib.contextmanager
def autodiff_mode(mode: AutodiffMode) -> Iterator[None]:
  """Context manager: the derivative rule of the soft cover for computations traced inside it.

  Args:
    mode: ``"any"`` (the default outside any block: a custom JVP rule serving ``jax.grad``,
      ``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``, ``jax.hessian`` and Hessian-vector products)
      or ``"reverse"`` (a hand-written custom VJP: reverse mode only). See the module docstring.

  The mode is read when a function is traced; where JAX has ``jax.make_user_context`` it is part of
  JAX's cache keys, so a ``jax.jit`` function is traced again in the other mode.

  Raises:
    ValueError: for another ``mode``.

  Examples:
    >>> import jax, jax.numpy as jnp
    >>> import ste_jax
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])
    >>> f = lambda P: ste_jax.ste_scores(P, tau=0.1).uncovered.sum()
    >>> jax.hessian(f)(P).shape  # the default rule serves every mode
    (3, 3, 3, 3)
    >>> with ste_jax.ops.autodiff_mode("reverse"):  # reverse mode only
    ...   g = jax.grad(f)(P)
    >>> g.shape
    (3, 3)
  """
  if mode not in _MODES:
    raise ValueError(f"mode must be one of {_MODES}, got {mode!r}.")
  with _set(mode):
    yield


def current_autodiff_mode() -> AutodiffMode:
  """The mode of the innermost enclosing :func:`autodiff_mode` block (``"any"`` outside)."""
  return _current()  # type: ignore[return-value]
