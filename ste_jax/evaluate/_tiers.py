"""Tier intervals: best and worst tier over all tournaments that agree with the sure edges.

The *tier* of an agent in a complete relation ``T`` (every pair at least one way) is the position of
its strongly connected component in the condensation, which is a chain: tier 1 is the Top Cycle,
tier ``k`` the Top Cycle of what remains after removing tiers ``1..k-1``
(:func:`~ste_jax.exact.condensation_tiers`). The certified verdicts
(:func:`~ste_jax.evaluate.orientation_certificates`) fix the *sure* edges ``S`` (``beats >= c``)
and the *possible* edges ``Q`` (pairs whose reverse is not sure); a *completion* is a complete
relation ``T`` with ``S <= T <= Q``: every undecided pair goes either way (``strict``), or, with
``ties=True``, may also be a tie counted both ways (the weak-relation convention). If every sure
edge is a true edge, the true tournament is a completion, so its tiers lie in the intervals below
*for all agents at once* (the intervals are simultaneous, not marginal).

Notation: ``R_X(x)`` is the set of agents ``x`` reaches in relation ``X`` (``x`` included), and
``#scc_X(A)`` the number of strongly connected components of ``X`` inside ``A``.

**Tier in one completion.** In a complete ``T`` the agents *above* ``x`` are exactly those ``x``
does not reach, ``V - R_T(x)``, a union of whole upper tiers, so ``tier_T(x) = 1 + #scc_T(V -
R_T(x))``. Equivalently, ``tier_T(x) - 1`` is the length of the longest chain ``U_1 < ... <
U_m`` of *dominant* sets not containing ``x`` (every member beats every non-member, and not back).

**Worst tier** ``= 1 + #scc_S(V - R_S(x))``. *Upper bound:* a dominant set of a completion has no
``T`` edge entering it, hence no sure edge entering it: it is closed under sure predecessors, a
union of components of ``S``, and one without ``x`` lies in ``V - R_S(x)``; a chain of such sets
adds at least one component of ``S`` per step. *Achieved:* order the components of ``S`` in
``V - R_S(x)`` topologically (``B_1, ..., B_m``) and put ``R_S(x)`` last; orient every pair across
two blocks from the earlier block to the later one (allowed: a sure edge never enters an earlier
block's union, which is closed under sure predecessors) and the pairs inside a block by ``S``,
the undecided ones either way. The unions ``B_1 + ... + B_i`` are then dominant, so ``x`` has at
least ``m`` tiers above it. Both bounds hold for strict and for tied completions alike.

**Best tier** ``= 1 + sum`` over the components ``C`` of ``Q`` inside ``A* = V - R_Q(x)`` of
``w(C)``, where ``w(C) = 1``, except ``w(C) = 2`` for a strict completion (``ties=False``) and
``|C| = 2``. *Lower bound:* every completion has ``T <= Q``, so ``R_T(x) <= R_Q(x)`` and the set
above ``x``, ``A = V - R_T(x)``, contains ``A*``. Every pair between ``A*`` and ``R_Q(x)`` is sure
from ``A*`` (else ``x`` would reach across in ``Q``), so ``A*`` is dominant inside ``A`` and
``#scc_T(A) >= #scc_T(A*)``. The components of ``T <= Q`` refine those of ``Q``, so ``#scc_T(A*)
>= sum_C #scc_T(C)``, and ``#scc_T(C) >= w(C)``: a strict orientation of a two-agent component is
two tiers. *Achieved:* with ties, ``T = Q`` (every undecided pair a tie). Strict: orient a
breadth-first tree of ``Q`` from ``x`` along the tree (so ``R_T(x) = R_Q(x)``) and, inside each
component ``C`` of ``Q`` with ``|C| >= 3``, a Hamiltonian cycle (a strongly connected
semicomplete digraph on at least three vertices has one: Camion's theorem as extended by Moon),
which keeps ``C`` one tier; these pairs are disjoint, the rest go either way.

**Separable pairs.** ``x`` is above ``y`` in every completion iff ``y`` does not reach ``x`` in
``Q`` (then in no ``T <= Q`` either; and in a complete relation, not reaching ``x`` puts ``x`` in a
higher tier). This is sharper than comparing intervals: ``worst(x) < best(y)`` implies it, not
conversely.

**Tied for the top.** The agents whose best tier is 1 (those the verdicts do not rule ``out`` of
the Top Cycle) are the certified top group: no agent outside it can be in the true Top Cycle, and
it is the smallest set the sure edges certify to hold it.
"""

import jax
import jax.numpy as jnp

from ste_jax._checks import check_square
from ste_jax._results import result_type


@result_type
class TierIntervals:
  """Best and worst tiers over the completions of the sure edges: see :func:`tier_intervals`.

  Attributes:
    best: ``(..., n)`` int32, the smallest tier (1 = Top Cycle) the agent has in any completion.
    worst: ``(..., n)`` int32, the largest.
    above: ``(..., n, n)`` bool, ``above[x, y]``: ``x`` is in a higher tier than ``y`` in every
      completion (certified separable; zero diagonal).
    top_group: ``(..., n)`` bool, ``best == 1``: the agents not separable from the top.
  """

  best: jax.Array
  worst: jax.Array
  above: jax.Array
  top_group: jax.Array


def _closure(E: jax.Array) -> jax.Array:
  """Reflexive-transitive closure of ``(..., n, n)`` Boolean ``E`` by repeated squaring."""
  n = E.shape[-1]
  R = E | jnp.eye(n, dtype=bool)
  for _ in range(max(n - 2, 0).bit_length()):  # paths of length <= 2**k after k squarings
    Rf = R.astype(jnp.float32)
    R = jnp.matmul(Rf, Rf) > 0
  return R


def _component_weights(closure: jax.Array, *, pairs_split: bool) -> jax.Array:
  """``(..., n)`` int32: 1 on one representative per component (``2`` for 2-agent ones if asked)."""
  n = closure.shape[-1]
  mutual = closure & jnp.swapaxes(closure, -1, -2)
  first = jnp.argmax(mutual, axis=-1) == jnp.arange(n)  # the lowest index of its component
  if not pairs_split:
    return first.astype(jnp.int32)
  return jnp.where(first, jnp.where(jnp.sum(mutual, axis=-1) == 2, 2, 1), 0).astype(jnp.int32)


def tier_intervals(
  beats: jax.typing.ArrayLike, confidence: jax.typing.ArrayLike, *, ties: bool = False
) -> TierIntervals:
  """Each agent's best and worst tier over all completions of the sure edges at ``confidence``.

  Sure edges ``S = beats >= confidence`` and possible edges ``Q = not S^T``, as in
  :func:`~ste_jax.evaluate.orientation_certificates`. With ``R_X(x)`` the agents ``x`` reaches in
  ``X``: ``worst(x) = 1 +`` the number of components of ``S`` outside ``R_S(x)``; ``best(x) = 1
  +`` the number of components of ``Q`` outside ``R_Q(x)``, a two-agent component counting twice
  for strict completions. Both are exact (the module docstring proves them), computed from two
  transitive closures: ``O(n^3 log n)``. Pure: jit, vmap and traced ``confidence`` work.

  Args:
    beats: ``(..., n, n)`` floating, the probability (or share of resampled tournaments) that
      ``a`` beats ``b`` in the strict relation; the diagonal is ignored.
    confidence: level ``c`` in ``(0.5, 1)`` (scalar, may be traced).
    ties: whether an undecided pair may be a tie counted both ways (``True``) or must go one way
      (``False``, the true tournament is strict). Static.

  Returns:
    :class:`TierIntervals`; ``best <= worst``; ``worst == 1`` exactly for the Top-Cycle verdict
    ``in`` and ``best > 1`` for ``out``.

  Raises:
    TypeError: ``beats`` not floating.
    ValueError: ``beats`` not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> beats = jnp.array(
    ...   [[0, .99, .99, .99], [0, 0, .6, .99], [0, .4, 0, .99], [0, 0, 0, 0]]
    ... )  # 0 surely above all, 3 surely below all, 1 vs 2 open
    >>> t = tier_intervals(beats, 0.95)
    >>> t.best.tolist(), t.worst.tolist()
    ([1, 2, 2, 4], [1, 3, 3, 4])
    >>> tier_intervals(beats, 0.95, ties=True).worst.tolist()  # a tie keeps 1 and 2 one tier
    [1, 3, 3, 4]
    >>> tier_intervals(beats, 0.95, ties=True).best.tolist()
    [1, 2, 2, 3]
  """
  beats = jnp.asarray(beats)
  if not jnp.issubdtype(beats.dtype, jnp.floating):
    raise TypeError(
      f"beats must be a floating array of orientation probabilities, got dtype {beats.dtype}."
    )
  check_square(beats, "beats")
  n = beats.shape[-1]
  off = ~jnp.eye(n, dtype=bool)
  sure = (beats >= jnp.asarray(confidence, beats.dtype)) & off
  possible = ~jnp.swapaxes(sure, -1, -2) & off
  reach_sure, reach_possible = _closure(sure), _closure(possible)

  def tiers_above(reach, weights):
    return 1 + jnp.sum(jnp.where(reach, 0, weights[..., None, :]), axis=-1, dtype=jnp.int32)

  worst = tiers_above(reach_sure, _component_weights(reach_sure, pairs_split=False))
  best = tiers_above(reach_possible, _component_weights(reach_possible, pairs_split=not ties))
  above = ~jnp.swapaxes(reach_possible, -1, -2) & off
  return TierIntervals(best, worst, above, best == 1)
