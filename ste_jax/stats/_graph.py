"""Graph searches used by the baselines' identifiability diagnostics.

Everything here is jit-able and works on one dense ``(n, n)`` adjacency matrix, by frontier
propagation in a ``lax.while_loop`` that stops when nothing changes: each step is ``O(n^2)``
elementwise work (no matrix product), and there are at most as many steps as the longest shortest
path plus one (connected components: pointer jumping shortens long paths), where a transitive
closure by repeated squaring would cost ``2 ceil(log2(n - 1))`` dense ``n x n`` integer matrix
products whatever the graph (``benchmarks/cli.py`` times a whole ``ste-jax score`` run).
"""

import jax
from jax import lax
import jax.numpy as jnp


def _as_bool(adjacency) -> jax.Array:
  """Nonzero entries as ``True`` (bool inputs pass through; no mixed-dtype comparison)."""
  adjacency = jnp.asarray(adjacency)
  if adjacency.dtype == jnp.bool_:
    return adjacency
  return adjacency != jnp.zeros((), adjacency.dtype)


def _square_bool(adjacency, name: str) -> jax.Array:
  adjacency = _as_bool(adjacency)
  if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
    raise ValueError(f"{name} must have shape (n, n); got {tuple(adjacency.shape)}.")
  return adjacency


def reached_from(adjacency: jax.typing.ArrayLike, sources: jax.typing.ArrayLike) -> jax.Array:
  """The vertices reachable from a set of sources along directed edges (the sources included).

  Args:
    adjacency: boolean (or 0/1) ``(n, n)``; ``adjacency[a, b]`` means an edge ``a -> b``.
    sources: boolean ``(n,)`` mask of the start vertices.

  Returns:
    Boolean ``(n,)``: ``True`` at ``b`` iff some source reaches ``b`` by a directed path of length
    ``>= 0``. One ``O(n^2)`` step per edge of the longest shortest path from the sources.

  Examples:
    >>> import jax.numpy as jnp
    >>> A = jnp.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])  # 0 -> 1 -> 2
    >>> reached_from(A, jnp.array([False, True, False])).tolist()
    [False, True, True]
  """
  adjacency = _square_bool(adjacency, "adjacency")
  sources = jnp.asarray(sources, dtype=bool)
  if sources.shape != adjacency.shape[:1]:
    raise ValueError(
      f"sources must have shape ({adjacency.shape[0]},); got {tuple(sources.shape)}."
    )

  def step(state):
    reached, _ = state
    new = reached | jnp.any(adjacency & reached[:, None], axis=0)
    return new, jnp.any(new != reached)

  reached, _ = lax.while_loop(lambda state: state[1], step, (sources, jnp.ones((), bool)))
  return reached


def component_labels(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Connected components of the undirected graph ``adjacency | adjacency.T``, as labels.

  Minimum-label propagation with pointer jumping: every vertex repeatedly takes the smallest label
  among itself and its neighbours, then the label of the vertex its label names. Labels only
  decrease and always name a vertex of the same component, so the fixed point is each
  component's smallest vertex index.

  Args:
    adjacency: boolean (or 0/1) ``(n, n)``.

  Returns:
    int32 ``(n,)``: the smallest vertex index of each vertex's component.

  Examples:
    >>> import jax.numpy as jnp
    >>> A = jnp.array([[0, 0, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0]])
    >>> component_labels(A).tolist()  # {0, 2} and {1, 3}
    [0, 1, 0, 1]
  """
  adjacency = _square_bool(adjacency, "adjacency")
  n = adjacency.shape[0]
  linked = adjacency | adjacency.T
  none = jnp.full((), n, jnp.int32)

  def step(state):
    label, _ = state
    hooked = jnp.minimum(label, jnp.min(jnp.where(linked, label[None, :], none), axis=1))
    new = hooked[hooked]
    return new, jnp.any(new != label)

  label, _ = lax.while_loop(
    lambda state: state[1], step, (jnp.arange(n, dtype=jnp.int32), jnp.ones((), bool))
  )
  return label


def connected_components(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Same-component relation of the undirected graph ``adjacency | adjacency.T``.

  Args:
    adjacency: boolean (or 0/1) array of shape ``(n, n)``.

  Returns:
    Boolean ``(n, n)`` array, ``True`` at ``[a, b]`` iff ``a`` and ``b`` are in the same connected
    component (ignoring edge directions).
  """
  label = component_labels(adjacency)
  return label[:, None] == label[None, :]


def strongly_connected_within_components(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Whether every connected component is strongly connected along the directed edges (scalar bool).

  A component is strongly connected iff its smallest vertex reaches all of it and is reached from
  all of it; both searches run for every component at once (edges never leave a component).

  Examples:
    >>> import jax.numpy as jnp
    >>> A = jnp.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])  # 0 <-> 1, and 2 alone
    >>> bool(strongly_connected_within_components(A))
    True
    >>> bool(strongly_connected_within_components(A.at[1, 0].set(0)))  # 0 -> 1 only
    False
  """
  adjacency = _square_bool(adjacency, "adjacency")
  label = component_labels(adjacency)
  roots = label == jnp.arange(adjacency.shape[0], dtype=jnp.int32)
  return jnp.all(reached_from(adjacency, roots) & reached_from(adjacency.T, roots))


def is_strongly_connected(adjacency: jax.typing.ArrayLike) -> jax.Array:
  """Whether every vertex reaches every other one along directed edges (scalar bool)."""
  adjacency = _square_bool(adjacency, "adjacency")
  start = jnp.arange(adjacency.shape[0]) == 0
  return jnp.all(reached_from(adjacency, start) & reached_from(adjacency.T, start))
