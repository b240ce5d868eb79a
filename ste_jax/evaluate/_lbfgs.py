"""A small fixed-step L-BFGS for smooth objectives, built to be vmapped and compiled quickly.

``optax.lbfgs`` with its zoom line search (nested ``while_loop``s) compiles to a large program, and
the model estimator compiles one per command-line run. This solver keeps the graph small: a two-loop
recursion over a fixed memory (unused slots are masked out) and a *parallel* line search that
evaluates the objective at a fixed grid of step sizes in one ``vmap`` and takes the best step
satisfying the Armijo condition (no ``while_loop``, so a ``vmap`` over many problems never waits for
the slowest one). A step that makes no Armijo progress is skipped, and curvature pairs with ``s . y
<= 0`` are not stored, so the iteration never diverges.
"""

from typing import Callable

import jax
from jax import lax
import jax.numpy as jnp

# Algorithm constants, not tuning (they change the iterates): the line search's step sizes and
# the Armijo sufficient-decrease factor.
STEP_GRID = (2.0, 1.0, 0.5, 0.25, 0.1, 0.03, 0.01, 1e-3)
ARMIJO = 1e-4


def minimize_lbfgs(
  fun: Callable[[jax.Array], jax.Array], x0: jax.Array, *, num_steps: int, memory: int = 8
) -> jax.Array:
  """Minimizes ``fun`` from ``x0`` by ``num_steps`` L-BFGS iterations.

  Args:
    fun: smooth scalar objective of a flat ``(d,)`` vector (pure; traced once).
    x0: ``(d,)`` starting point.
    num_steps: iterations (static).
    memory: number of stored curvature pairs (static).

  Returns:
    ``(d,)`` the final iterate (the best point seen: iterates only move downhill).
  """
  dtype = x0.dtype
  d = x0.shape[0]
  steps = jnp.asarray(STEP_GRID, dtype)
  value_and_grad = jax.value_and_grad(fun)
  tiny = jnp.asarray(jnp.finfo(dtype).tiny, dtype)

  def direction(g, S, Y, rho):
    # Two-loop recursion; slots with rho = 0 (unused or rejected) are no-ops. Newest pair last.
    def back(q, syr):
      s, y, r = syr
      alpha = r * jnp.dot(s, q)
      return q - alpha * y, alpha

    q, alphas = lax.scan(back, g, (S, Y, rho), reverse=True)
    sy = jnp.sum(S[-1] * Y[-1])
    yy = jnp.sum(Y[-1] * Y[-1])
    scale = jnp.where(
      (rho[-1] > 0) & (yy > 0),
      sy / jnp.maximum(yy, tiny),
      1.0 / jnp.maximum(jnp.linalg.norm(g), tiny),
    )

    def forward(r_vec, syra):
      s, y, r, alpha = syra
      beta = r * jnp.dot(y, r_vec)
      return r_vec + (alpha - beta) * s, None

    r_vec, _ = lax.scan(forward, scale * q, (S, Y, rho, alphas))
    return -r_vec

  def step(carry, _):
    x, f, g, S, Y, rho = carry
    p = direction(g, S, Y, rho)
    slope = jnp.dot(g, p)
    p = jnp.where(slope < 0, p, -g / jnp.maximum(jnp.linalg.norm(g), tiny))
    slope = jnp.dot(g, p)
    trial = jax.vmap(lambda t: fun(x + t * p))(steps)
    ok = jnp.isfinite(trial) & (trial <= f + ARMIJO * steps * slope)
    best = jnp.argmin(jnp.where(ok, trial, jnp.inf))
    moved = jnp.any(ok)
    t = jnp.where(moved, steps[best], jnp.zeros((), dtype))
    x_new = x + t * p
    f_new, g_new = value_and_grad(x_new)
    s, y = x_new - x, g_new - g
    sy = jnp.dot(s, y)
    accept = moved & (sy > 1e-10 * jnp.maximum(jnp.dot(y, y), tiny))
    S = jnp.where(accept, jnp.concatenate([S[1:], s[None]]), S)
    Y = jnp.where(accept, jnp.concatenate([Y[1:], y[None]]), Y)
    rho = jnp.where(accept, jnp.concatenate([rho[1:], (1.0 / jnp.maximum(sy, tiny))[None]]), rho)
    return (x_new, f_new, g_new, S, Y, rho), None

  f0, g0 = value_and_grad(x0)
  init = (
    x0,
    f0,
    g0,
    jnp.zeros((memory, d), dtype),
    jnp.zeros((memory, d), dtype),
    jnp.zeros((memory,), dtype),
  )
  (x, *_), _ = lax.scan(step, init, None, length=num_steps)
  return x
