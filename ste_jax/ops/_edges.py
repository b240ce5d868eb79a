"""Soft majority edges (paper §3.2, Eq. ``soft_majority_edge``)."""

import jax
import jax.numpy as jnp

from ste_jax._checks import (
  as_float_array,
  as_temperature,
  check_square,
  eye_mask,
  split_temperature,
)


def tempered_sigmoid(x: jax.Array, t: jax.Array) -> jax.Array:
  """``sigmoid(x / t)`` for ``t > 0``, else its ``t -> 0`` limit ``1[x > 0] + 1[x = 0] / 2``.

  NaN-free in values and gradients at a traced ``t = 0`` (double ``where``: the smooth branch
  divides by ``1`` there); the step has zero gradient.
  """
  positive, t_safe = split_temperature(t)
  soft = jax.nn.sigmoid(x / t_safe)
  step = 0.5 + 0.5 * jnp.sign(x)
  return jnp.where(positive, soft, step)


def soft_majority_edges(P: jax.typing.ArrayLike, *, tau: jax.typing.ArrayLike) -> jax.Array:
  r"""Temperature-controlled soft adjacency of the majority tournament (Eq. ``soft_majority_edge``).

  .. math::
    D_\tau(a, b) = \sigma\big((P_{ab} - 1/2) / \tau\big) \quad (a \ne b), \qquad D_\tau(a, a) = 0.

  An exact tie ``P_ab = 1/2`` gives ``D = 1/2`` both ways at every ``tau``; as ``tau -> 0`` the
  other entries tend to the 0/1 majority adjacency, which ``tau = 0`` gives exactly (the step
  function, ``1/2`` at ties, zero gradient in ``P``).

  Args:
    P: probabilistic tournament of shape ``(..., n, n)`` (any leading batch axes).
    tau: edge temperature ``tau >= 0`` (scalar, traced: a new value does not recompile); ``0`` is
      the hard limit, also when traced. A concrete value (Python/NumPy number or a JAX array
      outside ``jit``) that is negative or not finite raises ``ValueError``; a traced value
      cannot be checked, and a traced ``tau <= 0`` gives the hard limit.

  Returns:
    ``D`` of shape ``(..., n, n)`` with entries in ``[0, 1]`` and a zero diagonal.

  Examples:
    >>> import jax.numpy as jnp
    >>> D = soft_majority_edges(jnp.array([[0.5, 0.9], [0.1, 0.5]]), tau=0.1)
    >>> [round(float(x), 4) for x in D.ravel()]
    [0.0, 0.982, 0.018, 0.0]
    >>> [float(x) for x in soft_majority_edges(jnp.array([[0.5, 0.5], [0.5, 0.5]]), tau=0).ravel()]
    [0.0, 0.5, 0.5, 0.0]
  """
  P = as_float_array(P, "P")
  check_square(P, "P")
  t = as_temperature(tau, P, "tau", allow_zero=True)
  D = tempered_sigmoid(P - 0.5, t)
  return jnp.where(eye_mask(D), jnp.zeros_like(D), D)
