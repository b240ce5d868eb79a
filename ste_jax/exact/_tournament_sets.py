"""More tournament solutions: the Schwartz set, the minimal covering set and the Banks set.

Conventions follow :mod:`ste_jax.exact._solutions`: ``P`` has shape ``(..., n, n)``, the strict
majority relation is ``P > 1/2`` and ties are ``P = 1/2``. All functions are pure and
jit/vmap-compatible. Theory guarantees, on tournaments (no ties): ``banks_set ⊆ uncovered_set``,
``bipartisan_set ⊆ minimal_covering_set ⊆ uncovered_set ⊆ top_cycle`` and ``schwartz_set =
top_cycle``; every solution is the Condorcet winner when there is one.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, check_square
from ste_jax.exact._lotteries import _maximal_lottery_single, _tolerance, margin_matrix
from ste_jax.exact._relations import _over_leading_axes, condensation_tiers
from ste_jax.exact._solutions import majority_tournament
from ste_jax.ops._batching import vmap_by_platform

BANKS_MAX_N = 20
"""Largest ``n`` accepted by :func:`banks_set` (it enumerates all ``2**n`` subsets)."""


def schwartz_set(P: jax.typing.ArrayLike) -> jax.Array:
  """Schwartz set (GOCHA): the union of the undominated components of the strict majority relation.

  ``a`` is in the Schwartz set iff every agent that reaches ``a`` by a path of strict majority wins
  (``P > 1/2``) is reached back by ``a``: ``a``'s strongly connected component of the strict
  relation has no strict win into it from outside. Equivalently, the union of the minimal sets
  that no outsider strictly beats any member of (Schwartz 1972). It equals the Smith set
  (:func:`~ste_jax.exact.top_cycle`) on tournaments and can be smaller with ties.

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    Boolean mask of shape ``(..., n)``; never empty (``n >= 1``).

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.5, 0.9], [0.5, 0.5, 0.5], [0.1, 0.5, 0.5]])  # 0 > 2, other pairs tie
    >>> schwartz_set(P).tolist()  # the Smith set is everyone; 2 is strictly beaten by 0
    [True, True, False]

  References:
    T. Schwartz (1972), Rationality and the myth of the maximum, Noûs 6(2):97-117.
  """
  A = majority_tournament(P)
  if A.shape[-1] == 0:
    return jnp.zeros(A.shape[:-1], bool)
  return condensation_tiers(A) == 1


_BUCKET_SIZES = (32, 128, 512)
"""Padded sizes below ``n`` of the sub-tournament LPs that :func:`minimal_covering_set` solves."""

_MIN_BUCKETED_N = 160
"""Smallest ``n`` whose LPs are padded to buckets: below it an LP takes milliseconds, and a bucket
saves less in all rounds together than its branch of the program costs to compile."""

_MAX_UNDOMINATED_ROUNDS = 16
"""Most rounds of :func:`_undominated_padded` (any number of rounds gives a valid candidate set)."""


def _bucket_sizes(n: int, sizes: tuple[int, ...]) -> tuple[int, ...]:
  """The static sizes for an ``n``-agent tournament: the buckets up to ``3n/4``, then ``n``.

  A bucket above ``3n/4`` would save less than ``1 - (3/4)**3`` (58 %) of a full LP and costs one
  more branch of the compiled program.
  """
  return tuple(s for s in sorted(set(sizes)) if 4 * s <= 3 * n) + (n,)


def _gather(K: jax.Array, C: jax.Array, size: int) -> tuple[jax.Array, jax.Array, jax.Array]:
  """The members of ``C`` (``|C| <= size``) in index order, padded to ``size`` with the index ``n``.

  Returns:
    ``(idx, real, K_sub)``: the ``(size,)`` indices, which of them are agents (not padding), and
    ``K`` restricted to them, ``(size, size)`` (arbitrary in the padding's rows and columns).
  """
  n = K.shape[-1]
  idx = jnp.nonzero(C, size=size, fill_value=n)[0]
  safe = jnp.minimum(idx, n - 1)
  return idx, idx < n, K[safe[:, None], safe[None, :]]


def _scatter(idx: jax.Array, values: jax.Array, n: int) -> jax.Array:
  """Boolean ``(n,)``: ``values`` at the gathered indices ``idx``, ``False`` elsewhere (padding
  dropped)."""
  return jnp.zeros(n, bool).at[idx].set(values, mode="drop")


def _undominated_padded(K: jax.Array, C: jax.Array, size: int) -> jax.Array:
  """The agents of ``C`` left by iteratively removing dominated ones, on a ``size x size`` block.

  In the sub-tournament on a set ``T``, ``c`` dominates ``a`` if ``K[c, a] > 0`` and ``K[c, x] >=
  K[a, x]`` for every ``x in T`` (on a tournament: ``c`` covers ``a``). Moving a maximal lottery's
  mass from ``a`` to ``c`` keeps it maximal and gives ``c`` a positive margin, which strict
  complementarity forbids for a played agent: no maximal lottery plays ``a``. Every maximal
  lottery of the sub-tournament on the undominated agents ``U`` is also one on ``T`` (an agent
  outside ``U`` is dominated by one inside, and loses to the lottery at least as much). So the
  bipartisan (essential) set of ``T`` is that of ``U``, and ``T`` can be replaced by ``U``, again
  and again (the iterated uncovered set, on tournaments). Violations ``K[c, x] < K[a, x]`` of the
  ``{-1, 0, 1}`` margins are counted by one matrix product per round (exact in float32).

  Returns:
    Boolean ``(n,)``: a non-empty subset of ``C`` with the same bipartisan set.
  """
  n = K.shape[-1]
  idx, real, K_sub = _gather(K, C, size)
  below = jnp.concatenate([K_sub < 0, K_sub == 0], axis=-1).astype(jnp.float32)  # [c, (x, level)]
  above = jnp.concatenate([K_sub >= 0, K_sub > 0], axis=-1).astype(jnp.float32)  # [a, (x, level)]
  beats = K_sub > 0

  def cond(state):
    _, changed, it = state
    return changed & (it < _MAX_UNDOMINATED_ROUNDS)

  def body(state):
    T, _, it = state
    in_T = jnp.concatenate([T, T]).astype(jnp.float32)[None, :]
    violations = (below * in_T) @ (above * in_T).T  # [c, a]: #{x in T: K[c, x] < K[a, x]}
    dominated = jnp.any(beats & (violations == 0) & T[:, None], axis=0)
    return T & ~dominated, jnp.any(T & dominated), it + 1

  T, _, _ = lax.while_loop(cond, body, (real, jnp.ones((), bool), jnp.zeros((), jnp.int32)))
  return _scatter(idx, T, n)


def _bipartisan_padded(K: jax.Array, S: jax.Array, size: int) -> tuple[jax.Array, jax.Array]:
  """Bipartisan set and maximal lottery of the sub-tournament on ``S`` (``1 <= |S| <= size``).

  Solved as one ``size x size`` LP: the members of ``S`` are gathered in index order, followed by
  ``size - |S|`` dummy agents that lose to every member and tie each other. A maximal lottery
  never plays a dummy (if it gave them mass ``q`` with ``0 < q < 1``, its restriction to ``S``
  would give every member a margin of at least ``q`` in the game on ``S``, whose value is ``0``;
  ``q = 1`` loses to every member), so the maximal lotteries of the padded game are those of the
  sub-tournament, padded with zeros.

  Returns:
    ``(support, p)``, both ``(n,)``: the bipartisan (essential) set of the sub-tournament and its
    maximal lottery, zero outside ``S``.
  """
  n = K.shape[-1]
  idx, real, K_sub = _gather(K, S, size)
  pad = jnp.where(real[:, None], 1.0, jnp.where(real[None, :], -1.0, 0.0)).astype(K.dtype)
  K_sub = jnp.where(real[:, None] & real[None, :], K_sub, pad)
  p, support, _ = _maximal_lottery_single(K_sub)
  p_full = jnp.zeros(n, K.dtype).at[idx].set(jnp.where(real, p, 0.0), mode="drop")
  return _scatter(idx, support & real, n), p_full


def _minimal_covering_single(P: jax.Array) -> jax.Array:
  """:func:`minimal_covering_set` of one ``(n, n)`` tournament."""
  return _minimal_covering_bucketed(P, _BUCKET_SIZES if P.shape[-1] >= _MIN_BUCKETED_N else ())


def _minimal_covering_bucketed(P: jax.Array, bucket_sizes: tuple[int, ...]) -> jax.Array:
  """:func:`minimal_covering_set` of one ``(n, n)`` tournament, LPs padded to ``bucket_sizes``.

  One loop iteration solves one LP. The state ``(B, W, C, S)``: the covering set so far, the
  witness counts ``W[a, c] = #{b in B, b != c : a > b and not c > b}`` against "``c`` covers
  ``a``", the outsiders ``C`` whose bipartisan set the current round adds, and the subset ``S`` of
  ``C`` whose LP is solved next.
  """
  n = P.shape[-1]
  A = (P > 0.5) & ~jnp.eye(n, dtype=bool)
  K = margin_matrix(P, majority=True)
  tol = _tolerance(K.dtype)
  Af = A.astype(jnp.float32)
  not_beaten = ((~A) & ~jnp.eye(n, dtype=bool)).astype(jnp.float32)  # [c, b]: c != b, not c > b
  sizes = _bucket_sizes(n, bucket_sizes)

  def bucket(X):
    """Index in ``sizes`` of the smallest bucket that holds the agents of ``X``."""
    return jnp.sum(
      jnp.sum(X, dtype=jnp.int32) > jnp.asarray(sizes[:-1], jnp.int32), dtype=jnp.int32
    )

  def by_bucket(branches, X, *args):
    """Calls the branch of the smallest bucket that holds the agents of ``X``."""
    return branches[0](*args) if len(branches) == 1 else lax.switch(bucket(X), branches, *args)

  def add_witnesses(size, W, new):
    """``W[a, c] += #{b in new, b != c : a > b and not c > b}`` (``|new| <= size``)."""
    idx = jnp.nonzero(new, size=size, fill_value=n)[0]
    cols = jnp.minimum(idx, n - 1)
    sel = (idx < n).astype(jnp.float32)[None, :]
    return W + (Af[:, cols] * sel) @ (not_beaten[:, cols] * sel).T  # exact integers below 2**24

  reduce_branches = [functools.partial(_undominated_padded, K, size=s) for s in sizes]
  lp_branches = [functools.partial(_bipartisan_padded, K, size=s) for s in sizes]
  witness_branches = [functools.partial(add_witnesses, s) for s in sizes]

  def best(C, X, k):
    """The ``k`` agents of ``X`` (a subset of ``C``) with the most wins within ``C``."""
    score = jnp.where(X, K @ C.astype(K.dtype), -jnp.inf)
    rank = (
      jnp.zeros(n, jnp.int32)
      .at[jnp.argsort(-score, stable=True)]
      .set(jnp.arange(n, dtype=jnp.int32))
    )
    return X & (rank < k)

  def first_subset(C, bp_size):
    """The agents of ``C`` the round's LP starts from: the ``max(2 |BP|, sizes[0])`` best."""
    return best(C, C, jnp.maximum(2 * bp_size, sizes[0]))

  def grow(state, late):
    """Adds ``late`` to ``S``; all of ``C`` once ``S`` exceeds ``|C| / 4`` or ``C``'s bucket."""
    B, W, C, S = state
    S = S | late
    full = (4 * jnp.sum(S, dtype=jnp.int32) > jnp.sum(C, dtype=jnp.int32)) | (
      bucket(S) == bucket(C)
    )
    return B, W, C, jnp.where(full, C, S)

  def commit(state, support):
    B, W, _, _ = state
    W = by_bucket(witness_branches, support, W, support)
    B = B | support
    covers = A.T & (W == 0) & B[None, :]  # [a, c]: c in B covers a within B ∪ {a}
    C = ~B & ~jnp.any(covers, axis=-1)
    C = by_bucket(reduce_branches, C, C)
    return B, W, C, first_subset(C, jnp.sum(support, dtype=jnp.int32))

  def cond(state):
    return jnp.any(state[2])

  def body(state):
    _, _, C, S = state
    support, p = by_bucket(lp_branches, S, S)
    # p is a maximal lottery of C (and support its bipartisan set) if no agent of C outside S
    # beats or ties it; those that do join S and the LP is solved again.
    late = C & ~S & (p @ K <= tol)
    return lax.cond(jnp.any(late), lambda: grow(state, late), lambda: commit(state, support))

  # The first round, from B = {}, solves the LP on all agents that no agent dominates.
  C = _undominated_padded(K, jnp.ones(n, bool), n)
  init = (
    jnp.zeros(n, bool),
    jnp.zeros((n, n), jnp.float32),
    C,
    first_subset(C, jnp.zeros((), jnp.int32)),
  )
  B, _, _, _ = lax.while_loop(cond, body, init)
  return B


_MINIMAL_COVERING_KERNEL = vmap_by_platform(_minimal_covering_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _minimal_covering(P: jax.Array) -> jax.Array:
  return _over_leading_axes(_MINIMAL_COVERING_KERNEL, P)


def minimal_covering_set(P: jax.typing.ArrayLike) -> jax.Array:
  """Minimal covering set (Dutta 1988) of the strict majority relation.

  ``B`` is a covering set if no member of ``B`` is covered within ``B`` and every outsider ``a`` is
  covered within ``B ∪ {a}`` (covering: ``c`` covers ``a`` iff ``c > a`` and ``c > b`` whenever
  ``a > b``, strict majorities). On a tournament the inclusion-minimal covering set is unique and
  lies between the bipartisan set and the uncovered set. Algorithm (Brandt and Fischer 2008): start
  from ``B = BP(A)``; while the set ``C`` of outsiders that are uncovered in ``B ∪ {a}`` is not
  empty, add the bipartisan set of the sub-tournament on ``C`` to ``B``. The first round is the
  same step with ``C`` = all agents and ``B`` empty. Each round

  1. shrinks ``C`` without changing its bipartisan set: agents dominated within ``C`` (on a
     tournament: covered) are removed, repeatedly (at most 16 times), since no maximal lottery
     plays them;
  2. solves the maximal-lottery LP (:func:`~ste_jax.exact.maximal_lottery`) of the sub-tournament
     on a subset ``S`` of ``C``, padded with dummy agents that lose to every member (no maximal
     lottery plays them) to the smallest of the static sizes 32, 128, 512 (those up to ``3n/4``;
     none below ``n = 160``) and ``n`` that holds it, chosen by ``lax.switch``: five agents are one
     ``32 x 32`` LP, not an ``n x n`` one. ``S`` starts as the ``max(32, 2 |BP|)`` agents of ``C``
     with the most wins within ``C`` (``|BP|`` of the previous round; all of ``C`` if that is
     fewer, or without buckets). If an agent of ``C`` outside ``S`` beats or ties the lottery
     (margin ``<= tol``), it joins ``S`` (all of ``C`` once ``S`` exceeds ``|C| / 4`` or ``C``'s
     bucket) and the LP is solved again; otherwise the lottery is a maximal lottery of ``C`` whose
     margin against every other agent of ``C`` is positive, so that (strict complementarity) no
     maximal lottery of ``C`` plays one of them and its support is ``BP(C)``;
  3. updates the covering witness counts for the new members only.

  There are at most ``n`` rounds. On uniformly random tournaments about ten, with ``|C|`` roughly
  halving from ``n/2`` and ``BP`` about half of ``C`` (n = 1000, float64: one ``1000 x 1000`` LP,
  then ``|C|`` = 483, 222, 107, ...). On nearly transitive ones, up to a few hundred rounds with
  ``|C|`` up to about ``0.65 n`` but small bipartisan sets, each solved on a small ``S``. Each
  bucket size is one branch of the program (up to four, from ``n = 683``); each LP is solved on
  the host in float64 (:func:`~ste_jax.exact.maximal_lottery_with_support`). Under ``jax.vmap`` on
  accelerators (a batch axis) every LP evaluates all bucket sizes and selects.

  With ties (weak tournaments) the same iteration is run with the essential set of the majority
  relation in place of ``BP`` and the covering of :func:`~ste_jax.exact.uncovered_set` (Bordes
  covering); the result is externally stable, but minimality is only guaranteed on tournaments.

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    Boolean mask of shape ``(..., n)``; never empty.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.7, 0.3, 0.9], [0.3, 0.5, 0.7, 0.9],
    ...                [0.7, 0.3, 0.5, 0.9], [0.1, 0.1, 0.1, 0.5]])
    >>> minimal_covering_set(P).tolist()
    [True, True, True, False]

  References:
    B. Dutta (1988), Covering sets and a new Condorcet choice correspondence, J. Econ. Theory 44.
    F. Brandt, F. Fischer (2008), Computing the minimal covering set, Math. Soc. Sci. 56(2).
  """
  P = as_float_array(P, "P")
  n = check_square(P, "P")
  if n <= 1:
    return jnp.ones(P.shape[:-1], bool)
  return _minimal_covering(P)


def _banks_single(P: jax.Array) -> jax.Array:
  """:func:`banks_set` of one ``(n, n)`` tournament by enumerating the ``2**n`` subsets."""
  n = P.shape[-1]
  off = ~jnp.eye(n, dtype=bool)
  bits = jnp.left_shift(jnp.int32(1), jnp.arange(n, dtype=jnp.int32))  # (n,)
  beats = jnp.sum(
    jnp.where((P > 0.5) & off, bits[None, :], 0), axis=-1, dtype=jnp.int32
  )  # whom a beats
  ties = jnp.sum(jnp.where((P == 0.5) & off, bits[None, :], 0), axis=-1, dtype=jnp.int32)
  subsets = jnp.arange(1 << n, dtype=jnp.int32)
  member = (subsets[:, None] & bits[None, :]) != 0  # (2**n, n)
  size = jnp.sum(member, axis=-1, dtype=jnp.int32)
  # Within-subset wins of each member; a subset is a chain (linearly ordered by strict majority)
  # iff no two members tie and the members' win counts are distinct (then they are 0..size-1).
  wins = lax.population_count(subsets[:, None] & beats[None, :])
  tied = jnp.any(member & ((subsets[:, None] & ties[None, :]) != 0), axis=-1)
  seen = jnp.bitwise_or.reduce(jnp.where(member, jnp.left_shift(1, wins), 0), axis=-1)
  chain = ~tied & (seen == jnp.left_shift(1, size) - 1)
  extendable = jnp.any(~member & chain[subsets[:, None] | bits[None, :]], axis=-1)
  maximal = chain & ~extendable
  top = member & (wins == size[:, None] - 1)
  return jnp.any(maximal[:, None] & top, axis=0)


def banks_set(P: jax.typing.ArrayLike) -> jax.Array:
  """Banks set: the maxima of the maximal chains of the strict majority relation (small ``n``).

  A chain is a set of agents linearly ordered by strict majority (``P > 1/2`` between every two,
  transitive); it is maximal if no agent can be added. The Banks set collects the top agents of the
  maximal chains (Banks 1985); with ties, chains may not contain tied pairs (pref_voting's
  ``banks``). Deciding membership is NP-complete (Woeginger 2003), so this enumerates all ``2**n``
  subsets with bit operations: ``O(2**n n)`` time and memory.

  Args:
    P: ``(..., n, n)`` probabilistic tournament with ``n <= BANKS_MAX_N`` (20).

  Returns:
    Boolean mask of shape ``(..., n)``; never empty.

  Raises:
    ValueError: if ``n > BANKS_MAX_N`` (checked at trace time from the shape).

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.7, 0.3], [0.3, 0.5, 0.7], [0.7, 0.3, 0.5]])  # a 3-cycle
    >>> banks_set(P).tolist()
    [True, True, True]

  References:
    J. S. Banks (1985), Sophisticated voting outcomes and agenda control, Soc. Choice Welfare 1.
    G. J. Woeginger (2003), Banks winners in tournaments are difficult to recognize, SCW 20.
  """
  P = as_float_array(P, "P")
  n = check_square(P, "P")
  if n > BANKS_MAX_N:
    raise ValueError(
      f"banks_set enumerates all 2**n subsets and accepts n <= {BANKS_MAX_N}; P has n = {n}. "
      "Use uncovered_set or minimal_covering_set (supersets of the Banks set on tournaments)."
    )
  if n == 0:
    return jnp.zeros(P.shape[:-1], bool)
  return _over_leading_axes(_banks_single, P)
