"""L-BFGS with a fixed (or bounded) number of iterations: ``optax.lbfgs`` in a ``lax`` loop."""

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
  stop_when_stalled: bool = False,
) -> jax.Array:
  """Minimizes ``fun`` from ``x0`` by ``num_steps`` iterations of ``optax.lbfgs``.

  Each iteration is one ``optax.lbfgs`` update (two-loop recursion over the last ``memory``
  curvature pairs, then optax's zoom line search for the strong Wolfe conditions), the value and
  gradient at the accepted point reused from the line search's state
  (``optax.value_and_grad_from_state``). The iteration count is fixed (a ``lax.fori_loop``), so
  the function is pure, jit-compiles once per ``num_steps`` and vmaps.

  With ``stop_when_stalled``, the iterations stop early once an accepted step did not lower the
  value (the objective is minimized to the precision of its dtype), and the iterate before that
  step is returned: a ``lax.while_loop`` bounded by ``num_steps`` (still pure; a vmapped batch
  runs until its last member stops). A warm start at or near the minimum (a bootstrap refit)
  otherwise spends the line search's whole budget of evaluations failing to descend in every
  remaining iteration. Where the stop falls depends on rounding, so two compilations of the same
  fit can stop at different iterations; the default keeps the fixed count.

  Args:
    fun: smooth scalar objective of a flat ``(d,)`` vector (pure; traced once).
    x0: ``(d,)`` starting point.
    num_steps: iterations, or their maximum with ``stop_when_stalled`` (static).
    memory: number of stored curvature pairs (static).
    stop_when_stalled: stop at the first step that does not lower the value (static).

  Returns:
    ``(d,)`` the last iterate (with ``stop_when_stalled``: the last one that lowered the value).

  Examples:
    >>> import jax.numpy as jnp
    >>> quadratic = lambda x: jnp.sum(jnp.array([1.0, 100.0]) * (x - 3.0) ** 2)
    >>> x = minimize_lbfgs(quadratic, jnp.zeros(2), num_steps=20)
    >>> [round(float(v), 4) for v in x]
    [3.0, 3.0]
    >>> x = minimize_lbfgs(quadratic, jnp.zeros(2), num_steps=100, stop_when_stalled=True)
    >>> [round(float(v), 4) for v in x]
    [3.0, 3.0]

  References:
    Nocedal and Wright, *Numerical Optimization*, 2nd ed., Algorithms 7.4 (two-loop recursion)
    and 7.5 (L-BFGS), 2006; ``optax.lbfgs`` and ``optax.scale_by_zoom_linesearch``.
  """
  solver = optax.lbfgs(memory_size=memory)
  value_and_grad = optax.value_and_grad_from_state(fun)

  def update(x, state):
    value, grad = value_and_grad(x, state=state)
    # optax adds its int32 step count to an arange, int64 under x64: strict promotion refuses it.
    with jax.numpy_dtype_promotion("standard"):
      updates, state = solver.update(grad, state, x, value=value, grad=grad, value_fn=fun)
    return value, optax.apply_updates(x, updates), state

  if not stop_when_stalled:

    def step(_, carry):
      return update(*carry)[1:]

    x, _ = lax.fori_loop(0, num_steps, step, (x0, solver.init(x0)))
    return x

  def keep_going(carry):
    step, _, _, _, _, stopped = carry
    return (step < num_steps) & ~stopped

  def iterate(carry):
    step, x, state, x_prev, value_prev, _ = carry
    value, x_next, state = update(x, state)
    stopped = (step > 0) & ~(value < value_prev)  # the step into ``x`` did not lower the value
    x_prev = jnp.where(stopped, x_prev, x)  # on a stop: the last iterate that lowered the value
    return step + 1, x_next, state, x_prev, value, stopped

  inf = jnp.asarray(jnp.inf, jnp.result_type(x0))
  init = (jnp.asarray(0), x0, solver.init(x0), x0, inf, jnp.asarray(False))
  _, x, _, x_prev, _, stopped = lax.while_loop(keep_going, iterate, init)
  return jnp.where(stopped, x_prev, x)
