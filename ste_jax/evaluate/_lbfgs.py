"""L-BFGS with a fixed number of iterations (``optax.lbfgs`` in a ``lax.fori_loop``), or at most
that many with a gradient tolerance (a ``lax.while_loop``)."""

from typing import Callable

import jax
from jax import lax
import jax.numpy as jnp
import optax


def minimize_lbfgs(
  fun: Callable[[jax.Array], jax.Array],
  x0: jax.Array,
  *,
  num_steps: int,
  memory: int = 10,
  tolerance: jax.typing.ArrayLike | None = None,
) -> jax.Array:
  """Minimizes ``fun`` from ``x0`` by ``num_steps`` iterations of ``optax.lbfgs``.

  Each iteration is one ``optax.lbfgs`` update (two-loop recursion over the last ``memory``
  curvature pairs, then optax's zoom line search for the strong Wolfe conditions), the value and
  gradient at the accepted point reused from the line search's state
  (``optax.value_and_grad_from_state``). The iteration count is fixed (a ``lax.fori_loop``, no
  stopping test), so the function is pure, jit-compiles once per ``num_steps`` and vmaps.

  With ``tolerance`` the loop stops after the iteration that starts at a point whose gradient has
  every entry at most ``tolerance`` in absolute value (or after ``num_steps``); still pure, and it
  vmaps (a batch runs until its last member stops, the others held).

  Args:
    fun: smooth scalar objective of a flat ``(d,)`` vector (pure; traced once).
    x0: ``(d,)`` starting point.
    num_steps: iterations (static).
    memory: number of stored curvature pairs (static).
    tolerance: ``None`` (the fixed count), or a scalar ``>= 0`` (traced) of the stopping test.

  Returns:
    ``(d,)`` the last iterate.

  Examples:
    >>> import jax.numpy as jnp
    >>> quadratic = lambda x: jnp.sum(jnp.array([1.0, 100.0]) * (x - 3.0) ** 2)
    >>> x = minimize_lbfgs(quadratic, jnp.zeros(2), num_steps=20)
    >>> [round(float(v), 4) for v in x]
    [3.0, 3.0]

  References:
    Nocedal and Wright, *Numerical Optimization*, 2nd ed., Algorithms 7.4 (two-loop recursion)
    and 7.5 (L-BFGS), 2006; ``optax.lbfgs`` and ``optax.scale_by_zoom_linesearch``.
  """
  solver = optax.lbfgs(memory_size=memory)
  value_and_grad = optax.value_and_grad_from_state(fun)

  def iterate(x, state):
    value, grad = value_and_grad(x, state=state)
    # optax adds its int32 step count to an arange, int64 under x64: strict promotion refuses it.
    with jax.numpy_dtype_promotion("standard"):
      updates, state = solver.update(grad, state, x, value=value, grad=grad, value_fn=fun)
    return optax.apply_updates(x, updates), state, grad

  if tolerance is None:
    x, _ = lax.fori_loop(0, num_steps, lambda _, c: iterate(*c)[:2], (x0, solver.init(x0)))
    return x

  def body(carry):
    i, x, state, _ = carry
    x, state, grad = iterate(x, state)
    return i + 1, x, state, jnp.max(jnp.abs(grad)) <= tolerance

  def cond(carry):
    i, _, _, small = carry
    return (i < num_steps) & ~small

  init = (jnp.zeros((), jnp.int32), x0, solver.init(x0), jnp.zeros((), bool))
  return lax.while_loop(cond, body, init)[1]
