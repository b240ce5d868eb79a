"""Hard solutions of an arbitrary Boolean relation (complete or partial), for the zero-temperature
columns of the estimators' reports.

The functions of :mod:`ste_jax.exact._solutions` threshold a probabilistic tournament ``P`` at
``1/2``. The ones here take the relation itself, ``E`` of shape ``(..., n, n)`` with ``E[a, b]`` =
"``a`` beats (reaches in one step) ``b``", so that they also serve relations that are not complete:
a posterior-edge relation has no edge either way for a pair without evidence. The diagonal of
``E`` is always ignored.

* :func:`reach_all`: the agents that reach every other agent by a directed path. For the weak
  majority relation (``P >= 1/2``) this is the Smith set (:func:`~ste_jax.exact.top_cycle`); for a
  partial relation it can be empty.
* :func:`uncovered_in_relation`: the agents that no agent covers. For the strict majority relation
  (``P > 1/2``) this is :func:`~ste_jax.exact.uncovered_set`.
* :func:`kings_in_relation`: the agents that reach every other agent in at most two steps. For a
  tournament these are the uncovered agents; unlike covering, the property is monotone in the edges.
* :func:`condensation_tiers`: each agent's tier in the condensation (the DAG of strongly connected
  components). For a complete relation tier 1 is the Smith set, tier 2 the Smith set of the rest...

All functions are pure and jit/vmap-compatible (the loops are ``lax.while_loop`` / ``lax.scan``
with traced trip counts, no host syncs). Matrix products run in float32 on ``{0, 1}`` operands,
whatever ``jax_enable_x64`` says: every product is exact and every sum is an integer ``<= n``,
exact in float32 for ``n < 2**24``.

The kernels are written for one ``(n, n)`` relation; a batch (leading axes or ``jax.vmap``) runs
through :func:`~ste_jax.ops._batching.vmap_by_platform`: a loop over the relations on XLA:CPU, a
batch axis on accelerators (on the CPU a loop keeps one relation in cache through all of its BFS
levels).
"""

from collections.abc import Callable

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import check_square, eye_mask
from ste_jax.ops._batching import flatten_batch, unflatten_batch, vmap_by_platform

_COUNT = jnp.float32  # exact for integer counts below 2**24


def _as_relation(x, name: str) -> jax.Array:
  """Converts a Boolean relation to a JAX array of shape ``(..., n, n)`` with a cleared diagonal.

  Args:
    x: array-like Boolean input.
    name: the argument's name, used in the error messages.

  Returns:
    A Boolean JAX array of ``x``'s shape, ``False`` on the diagonal.

  Raises:
    TypeError: if ``x`` is not Boolean (a relation is built explicitly, e.g. ``P >= 0.5``).
    ValueError: at trace time, naming the argument, if ``x`` is not square in its last two axes.
  """
  x = jnp.asarray(x)
  if not jnp.issubdtype(x.dtype, jnp.bool_):
    raise TypeError(f"{name} must be a Boolean relation (e.g. P >= 0.5), got dtype {x.dtype}.")
  check_square(x, name)
  return x & ~eye_mask(x)


def _over_leading_axes(kernel: Callable[[jax.Array], jax.Array], E: jax.Array):
  """Applies ``kernel`` (``(n, n) ->`` a pytree of arrays) to each ``(n, n)`` relation of ``E``."""
  if E.ndim == 2:
    return kernel(E)
  flat, batch = flatten_batch(E, 2)
  return jax.tree.map(lambda y: unflatten_batch(y, batch), jax.vmap(kernel)(flat))


def _bfs(step: Callable[[jax.Array], jax.Array], seed: jax.Array) -> tuple[jax.Array, jax.Array]:
  """Agents reached from ``seed`` (Boolean ``(n,)``, included) by repeating ``step`` (one edge).

  Level-synchronous breadth-first search: one Boolean mat-vec per level, until the frontier is
  empty (at most ``n`` levels; an empty seed costs no level).

  Returns:
    ``(visited, distance)``: Boolean ``(n,)`` and int32 ``(n,)``, the number of steps from the
    seed (``0`` for the seed and for agents not reached).
  """

  def cond(state):
    _, frontier, _, _ = state
    return jnp.any(frontier)

  def body(state):
    visited, frontier, distance, level = state
    new = step(frontier) & ~visited
    return visited | new, new, jnp.where(new, level, distance), level + 1

  n = seed.shape[-1]
  init = (seed, seed, jnp.zeros(n, jnp.int32), jnp.ones((), jnp.int32))
  visited, _, distance, _ = lax.while_loop(cond, body, init)
  return visited, distance


def _reach_all_single(E: jax.Array) -> jax.Array:
  """:func:`reach_all` of one ``(n, n)`` relation with a cleared diagonal."""
  n = E.shape[-1]
  Ef = E.astype(_COUNT)
  out_degree = jnp.sum(E, axis=-1, dtype=jnp.int32)
  agents = jnp.arange(n)

  def forward(frontier):  # the agents the frontier beats
    return jnp.matmul(frontier.astype(_COUNT), Ef) > 0

  def backward(frontier):  # the agents that beat the frontier
    return jnp.matmul(Ef, frontier.astype(_COUNT)) > 0

  def cond(state):
    _, _, _, done = state
    return ~done

  def body(state):
    candidates, upstream, _, _ = state
    # Pivot: the candidate farthest upstream of the previous pivot, then the largest out-degree.
    farthest = candidates & (upstream == jnp.max(jnp.where(candidates, upstream, -1)))
    pivot = jnp.argmax(jnp.where(farthest, out_degree, -1))
    seed = agents == pivot
    fwd, _ = _bfs(forward, seed)
    back, back_distance = _bfs(backward, seed)
    found = jnp.all(fwd)
    # Not found: an agent that reaches everyone reaches the pivot (it is in `back`) and is not
    # reached by it (else the pivot would reach everyone), so only back \ fwd stays a candidate.
    candidates = candidates & back & ~fwd
    return candidates, back_distance, back & found, found | ~jnp.any(candidates)

  init = (jnp.ones(n, bool), jnp.zeros(n, jnp.int32), jnp.zeros(n, bool), jnp.zeros((), bool))
  _, _, result, _ = lax.while_loop(cond, body, init)
  return result


_REACH_ALL_KERNEL = vmap_by_platform(_reach_all_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _reach_all(E: jax.Array) -> jax.Array:
  return _over_leading_axes(_REACH_ALL_KERNEL, E)


def reach_all(E: jax.typing.ArrayLike) -> jax.Array:
  """Agents from which every other agent is reached by a directed path of the relation ``E``.

  Algorithm (candidate elimination with breadth-first search): keep a candidate mask ``C``
  (initially everyone) and pick the pivot ``s`` = the candidate with the largest out-degree.
  Forward and backward level-synchronous BFS (one Boolean mat-vec per level inside
  ``lax.while_loop``) give ``Fwd(s)`` and ``Back(s)``, the agents ``s`` reaches and the agents
  that reach ``s`` (both including ``s``). If ``Fwd(s)`` is everyone, the answer is ``Back(s)``:
  an agent reaches everyone iff it reaches ``s``. Otherwise no agent of ``Fwd(s)`` reaches
  everyone (``s`` would too), and every agent that does reaches ``s``, so ``C`` shrinks to
  ``C & Back(s) & ~Fwd(s)``, which loses at least ``s``; when ``C`` is empty so is the answer.
  The next pivot is the candidate farthest upstream of ``s`` (largest backward BFS distance),
  ties broken by out-degree, so that a long chain is not walked one agent per round.

  Each BFS level is one ``O(n^2)`` mat-vec. For a complete relation the first pivot is in the top
  component (each member has a larger out-degree than every outsider), so the cost is two
  searches, ``O(n^2 * depth)``; a partial relation may take more rounds, at most ``n``.

  Args:
    E: Boolean ``(..., n, n)`` relation, ``E[a, b]`` = "``a`` beats ``b``"; the diagonal is
      ignored.

  Returns:
    Boolean mask of shape ``(..., n)``. For a complete relation (an edge at least one way for every
    pair) it is the top strongly connected component, never empty; with the weak majority relation
    ``P >= 1/2`` it equals ``top_cycle(P)``. For a partial relation it may be empty. With ``n = 1``
    it is the single agent.

  Raises:
    TypeError: if ``E`` is not Boolean.
    ValueError: if ``E`` is not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> E = jnp.array([[0, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]], bool)
    >>> reach_all(E).tolist()  # 0 > 1 > 2 > 0 and 1 > 3
    [True, True, True, False]
    >>> reach_all(E.at[3, 0].set(True)).tolist()  # 3 > 0: now 3 also reaches everyone
    [True, True, True, True]
    >>> reach_all(E.at[1, 3].set(False)).tolist()  # partial: 3 is isolated
    [False, False, False, False]
  """
  E = _as_relation(E, "E")
  if E.shape[-1] == 0:
    return jnp.zeros(E.shape[:-1], bool)
  return _reach_all(E)


def _uncovered_single(S: jax.Array) -> jax.Array:
  """:func:`uncovered_in_relation` of one ``(n, n)`` relation with a cleared diagonal."""
  n = S.shape[-1]
  Sf = S.astype(_COUNT)
  Nf = (~S & ~jnp.eye(n, dtype=bool)).astype(_COUNT)  # "does not beat", False on the diagonal
  witnesses = jnp.matmul(Sf, Nf.T)  # [a, c]
  covers = S & (witnesses.T == 0)  # [c, a]
  return ~jnp.any(covers, axis=0)


_UNCOVERED_KERNEL = vmap_by_platform(_uncovered_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _uncovered(S: jax.Array) -> jax.Array:
  return _over_leading_axes(_UNCOVERED_KERNEL, S)


def uncovered_in_relation(S: jax.typing.ArrayLike) -> jax.Array:
  """Agents not covered by anybody in the relation ``S``.

  ``c`` covers ``a`` iff ``S[c, a]`` and ``S[c, b]`` for every ``b != a, c`` with ``S[a, b]``. The
  numbers of witnesses against covering (``b`` with ``S[a, b]``, ``b != c`` and not ``S[c, b]``)
  for all pairs are one matrix product, ``S N^T`` with ``N`` = "does not beat" off the diagonal
  (so ``b = c`` never counts); ``c`` covers ``a`` iff ``S[c, a]`` and that count is zero.

  Args:
    S: Boolean ``(..., n, n)`` relation, ``S[c, a]`` = "``c`` beats ``a``"; the diagonal is
      ignored.

  Returns:
    Boolean mask of shape ``(..., n)``. With the strict majority relation ``P > 1/2`` it equals
    ``uncovered_set(P)``.

  Raises:
    TypeError: if ``S`` is not Boolean.
    ValueError: if ``S`` is not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> S = jnp.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], bool)  # 0 > 1 > 2 and 0 > 2
    >>> uncovered_in_relation(S).tolist()
    [True, False, False]
  """
  S = _as_relation(S, "S")
  return _uncovered(S)


def _kings_single(E: jax.Array) -> jax.Array:
  """:func:`kings_in_relation` of one ``(n, n)`` relation with a cleared diagonal."""
  n = E.shape[-1]
  Ef = E.astype(_COUNT)
  within_two = E | (jnp.matmul(Ef, Ef) > 0) | jnp.eye(n, dtype=bool)
  return jnp.all(within_two, axis=-1)


_KINGS_KERNEL = vmap_by_platform(_kings_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _kings(E: jax.Array) -> jax.Array:
  return _over_leading_axes(_KINGS_KERNEL, E)


def kings_in_relation(E: jax.typing.ArrayLike) -> jax.Array:
  """Agents that reach every other agent in at most two steps of the relation ``E`` ("kings").

  For a tournament (exactly one edge per pair) an agent is a king iff nobody covers it, so this is
  the Uncovered Set of ``E`` (Landau's theorem). Unlike the cover definition, being a king is
  *monotone*: adding edges never removes a king. That is what certifying membership from
  uncertain edges needs (:func:`~ste_jax.evaluate.certified_memberships`): a king of a
  sub-relation of the true tournament is a king of it, and a non-king of a super-relation is not.
  One ``O(n^3)`` Boolean matrix product (exact in float32).

  Args:
    E: Boolean ``(..., n, n)`` relation, ``E[a, b]`` = "``a`` beats ``b``"; the diagonal is
      ignored.

  Returns:
    Boolean mask of shape ``(..., n)``.

  Raises:
    TypeError: if ``E`` is not Boolean.
    ValueError: if ``E`` is not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> E = jnp.array([[0, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]], bool)
    >>> kings_in_relation(E).tolist()  # 0 > 1 > 2 > 0 and 1 > 3: 2 needs three steps to reach 3
    [True, True, False, False]
  """
  E = _as_relation(E, "E")
  if E.shape[-1] == 0:
    return jnp.zeros(E.shape[:-1], bool)
  return _kings(E)


def _closure(E: jax.Array) -> jax.Array:
  """Reflexive-transitive closure of one ``(n, n)`` relation by repeated Boolean squaring.

  After ``k`` squarings the closure holds every path of length ``<= 2**k``; the loop stops when a
  squaring changes nothing or after ``ceil(log2(n - 1))`` squarings (all simple paths covered).
  """
  n = E.shape[-1]
  max_squarings = max(n - 2, 0).bit_length()  # ceil(log2(n - 1)) for n >= 2

  def cond(state):
    _, changed, k = state
    return changed & (k < max_squarings)

  def body(state):
    R, _, k = state
    Rf = R.astype(_COUNT)
    squared = jnp.matmul(Rf, Rf) > 0
    return squared, jnp.any(squared != R), k + 1

  R0 = E | jnp.eye(n, dtype=bool)
  R, _, _ = lax.while_loop(cond, body, (R0, jnp.ones((), bool), jnp.zeros((), jnp.int32)))
  return R


def _tiers_single(E: jax.Array) -> jax.Array:
  """:func:`condensation_tiers` of one ``(n, n)`` relation with a cleared diagonal."""
  n = E.shape[-1]
  R = _closure(E)
  above = R & ~R.T  # [c, a]: c's component is strictly above a's
  # `above` is a strict partial order: c above a implies that everyone above c is above a, so
  # sorting by the number of agents above gives a topological order.
  n_above = jnp.sum(above, axis=0, dtype=jnp.int32)
  order = jnp.argsort(n_above, stable=True)
  above_sorted = above[order][:, order]

  def step(depth, i_and_column):
    i, is_above = i_and_column  # is_above[j]: sorted agent j is above sorted agent i (so j < i)
    tier = 1 + jnp.max(jnp.where(is_above, depth, 0))
    return depth.at[i].set(tier), None

  depth, _ = lax.scan(step, jnp.zeros(n, jnp.int32), (jnp.arange(n), above_sorted.T))
  return depth[jnp.argsort(order)]


_TIERS_KERNEL = vmap_by_platform(_tiers_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _condensation_tiers(E: jax.Array) -> jax.Array:
  return _over_leading_axes(_TIERS_KERNEL, E)


def condensation_tiers(E: jax.typing.ArrayLike) -> jax.Array:
  """Tier of each agent in the condensation (DAG of strongly connected components) of ``E``.

  ``tier(a) = 1 +`` the number of components on the longest chain of components strictly above
  ``a``'s component (``C'`` is strictly above ``C`` if a member of ``C'`` reaches a member of ``C``
  and not back). Algorithm: the reflexive-transitive closure ``R`` by repeated squaring of a
  float32 matrix product, thresholded to ``{0, 1}`` (a ``lax.while_loop`` that stops when a
  squaring changes nothing, at most ``ceil(log2(n - 1))`` squarings); ``above = R & ~R^T``;
  agents sorted by how many agents are above them (a topological order, since ``above`` is
  transitive); then one ``lax.scan`` over that order sets ``tier(a) = 1 + max`` tier of the
  agents above ``a`` (``0`` if none). Cost ``O(n^3)`` per squaring plus ``O(n^2)`` for the scan.

  Args:
    E: Boolean ``(..., n, n)`` relation, ``E[a, b]`` = "``a`` beats ``b``"; the diagonal is
      ignored.

  Returns:
    int32 ``(..., n)``, tiers starting at 1. For a complete relation the components form a chain:
    tier 1 is ``reach_all(E)`` (the Smith set for the weak majority relation), tier 2 the Smith set
    of the other agents, and so on. For a partial relation tier 1 is the union of the source
    components.

  Raises:
    TypeError: if ``E`` is not Boolean.
    ValueError: if ``E`` is not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> E = jnp.array([[0, 1, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0], [0, 0, 1, 0]], bool)
    >>> condensation_tiers(E).tolist()  # 0 <-> 1 -> 2 <- 3
    [1, 1, 2, 1]
  """
  E = _as_relation(E, "E")
  if E.shape[-1] == 0:
    return jnp.zeros(E.shape[:-1], jnp.int32)
  return _condensation_tiers(E)
