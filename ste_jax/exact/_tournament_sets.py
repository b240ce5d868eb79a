"""More tournament solutions: the Schwartz set, the minimal covering set and the Banks set.

Conventions follow :mod:`ste_jax.exact._solutions`: ``P`` has shape ``(..., n, n)``, the strict
majority relation is ``P > 1/2`` and ties are ``P = 1/2``. All functions are pure and
jit/vmap-compatible. Theory guarantees, on tournaments (no ties): ``banks_set ⊆ uncovered_set``,
``bipartisan_set ⊆ minimal_covering_set ⊆ uncovered_set ⊆ top_cycle`` and ``schwartz_set =
top_cycle``; every solution is the Condorcet winner when there is one.
"""

import jax
import jax.numpy as jnp
from jax import lax

from ste_jax._checks import as_float_array, check_square
from ste_jax.exact._lotteries import _maximal_lottery_single, margin_matrix
from ste_jax.exact._relations import _over_leading_axes, condensation_tiers
from ste_jax.exact._solutions import majority_tournament
from ste_jax.ops._batching import vmap_by_platform

BANKS_MAX_N = 20
"""Largest ``n`` accepted by :func:`banks_set` (it enumerates all ``2**n`` subsets)."""


def schwartz_set(P) -> jax.Array:
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


def _bipartisan_of(K: jax.Array, C: jax.Array) -> jax.Array:
  """Bipartisan set of the sub-tournament on ``C`` (Boolean ``(n,)``; empty if ``C`` is empty)."""
  # Every agent of C strictly beats every outsider: the maximal lottery never plays an outsider.
  outside = ~C[:, None] & C[None, :]
  K_C = jnp.where(C[:, None] & C[None, :], K, jnp.where(outside, -1.0, jnp.where(outside.T, 1.0, 0.0)))
  _, support, _ = _maximal_lottery_single(K_C)
  return support & C


def _minimal_covering_single(P: jax.Array) -> jax.Array:
  """:func:`minimal_covering_set` of one ``(n, n)`` tournament."""
  n = P.shape[-1]
  A = (P > 0.5) & ~jnp.eye(n, dtype=bool)
  K = margin_matrix(P, majority=True)
  Af = A.astype(jnp.float32)
  off = (~jnp.eye(n, dtype=bool)).astype(jnp.float32)

  def uncovered_when_added(B):
    """``a`` not in ``B`` that no ``c in B`` covers within ``B ∪ {a}`` (Boolean ``(n,)``)."""
    Bf = B.astype(jnp.float32)
    # W[a, c] = #{b in B, b != c : a > b and not c > b} (witnesses against "c covers a").
    W = (Af * Bf[None, :]) @ ((1.0 - Af) * off * Bf[None, :]).T
    covers = A.T & (W == 0) & B[None, :]  # [a, c]: c in B covers a
    return ~B & ~jnp.any(covers, axis=-1)

  def cond(state):
    _, new = state
    return jnp.any(new)

  def body(state):
    B, new = state
    B = B | _bipartisan_of(K, new)
    return B, uncovered_when_added(B)

  B = _bipartisan_of(K, jnp.ones(n, bool))
  B, _ = lax.while_loop(cond, body, (B, uncovered_when_added(B)))
  return B


_MINIMAL_COVERING_KERNEL = vmap_by_platform(_minimal_covering_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _minimal_covering(P: jax.Array) -> jax.Array:
  return _over_leading_axes(_MINIMAL_COVERING_KERNEL, P)


def minimal_covering_set(P) -> jax.Array:
  """Minimal covering set (Dutta 1988) of the strict majority relation.

  ``B`` is a covering set if no member of ``B`` is covered within ``B`` and every outsider ``a`` is
  covered within ``B ∪ {a}`` (covering: ``c`` covers ``a`` iff ``c > a`` and ``c > b`` whenever
  ``a > b``, strict majorities). On a tournament the inclusion-minimal covering set is unique and
  lies between the bipartisan set and the uncovered set. Algorithm (Brandt and Fischer 2008): start
  from ``B = BP(A)``; while the set ``C`` of outsiders that are uncovered in ``B ∪ {a}`` is not
  empty, add the bipartisan set of the sub-tournament on ``C`` to ``B``. Each round solves one
  maximal-lottery LP (:func:`~ste_jax.exact.maximal_lottery`); there are at most ``n`` rounds and
  usually one or two.

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
  beats = jnp.sum(jnp.where((P > 0.5) & off, bits[None, :], 0), axis=-1, dtype=jnp.int32)  # whom a beats
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


def banks_set(P) -> jax.Array:
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
