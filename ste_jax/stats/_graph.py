"""Boolean graph closures used by the baselines' identifiability diagnostics.

Everything here is jit-able and works on one ``(n, n)`` adjacency matrix: reachability is the
reflexive-transitive closure computed by repeated Boolean squaring, ``ceil(log2(n - 1))`` integer
matrix products whose count is fixed by the static ``n``.
"""

import math

import jax
import jax.numpy as jnp
from jax import lax


def _as_bool(adjacency) -> jax.Array:
  """Nonzero entries as ``True`` (bool inputs pass through; no mixed-dtype comparison)."""
  adjacency = jnp.asarray(adjacency)
  if adjacency.dtype == jnp.bool_:
    return adjacency
  return adjacency != jnp.zeros((), adjacency.dtype)


def reachability(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Reflexive-transitive closure of a directed graph.

  Args:
    adjacency: boolean (or 0/1) array of shape ``(n, n)``; ``adjacency[a, b]`` means an edge
      ``a -> b``.

  Returns:
    Boolean array of shape ``(n, n)``: ``True`` at ``[a, b]`` iff ``b`` can be reached from ``a``
    by a directed path of length ``>= 0`` (so the diagonal is ``True``).

  Examples:
    >>> import jax.numpy as jnp
    >>> r = reachability(jnp.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    >>> r.astype(int).tolist()
    [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
  """
  adjacency = _as_bool(adjacency)
  if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
    raise ValueError(f"adjacency must have shape (n, n); got {tuple(adjacency.shape)}.")
  n = adjacency.shape[0]
  r = adjacency | jnp.eye(n, dtype=bool)
  num_squarings = math.ceil(math.log2(n - 1)) if n > 2 else 1

  return lax.fori_loop(0, num_squarings, _boolean_square, r)


def _boolean_square(_, r):
  ri = r.astype(jnp.int32)
  return (ri @ ri) > 0


def connected_components(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Same-component relation of the undirected graph ``adjacency | adjacency.T``.

  Args:
    adjacency: boolean (or 0/1) array of shape ``(n, n)``.

  Returns:
    Boolean ``(n, n)`` array, ``True`` at ``[a, b]`` iff ``a`` and ``b`` are in the same connected
    component (ignoring edge directions).
  """
  adjacency = _as_bool(adjacency)
  return reachability(adjacency | adjacency.T)


def is_strongly_connected(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Whether every vertex reaches every other one along directed edges (scalar bool)."""
  return jnp.all(reachability(adjacency))
