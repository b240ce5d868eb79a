"""Vote robustness of hard Uncovered-Set membership: the fewest reversed comparisons that change it.

The hard Uncovered Set of the count-based estimators is that of the strict relation ``a -> b`` iff
``M_ab >= 1`` (``winrate``: ``P > 1/2``; ``posterior``: ``D > 0``; see
:mod:`ste_jax.evaluate._robustness` for the margins ``M`` and the per-pair costs). ``c`` *covers*
``a`` iff ``c -> a`` and ``c -> b`` for every ``b != a, c`` with ``a -> b``; ``a`` is uncovered iff
nobody covers it (:func:`~ste_jax.exact.uncovered_in_relation`). Each pair's state is chosen on its
own, so with ``make[u, v]`` the fewest reversals (or removals) after which ``u -> v`` holds and
``unmake[u, v]`` those after which it does not (0 if it already does / does not; infinite if no
change of that pair does it), a set of changes costs the sum over the pairs it touches.

**Leaving** (``a`` uncovered becomes covered, by some ``c``): ``c`` covers ``a`` iff the pair
``{c, a}`` is ``c -> a`` and, for every ``b != a, c``, ``not a -> b`` or ``c -> b``, a condition on
the pairs ``{a, b}`` and ``{c, b}`` only. These pairs are distinct for distinct ``b``, so the
fewest changes making ``c`` cover ``a`` are exactly

``make[c, a] + sum_{b != a, c} min(unmake[a, b], make[c, b])``,

and the minimum over ``c`` is exact (``O(n^2)`` per agent, ``O(n^3)`` in all).

**Joining** (``a`` covered becomes uncovered): every ``c`` that beats ``a`` afterwards must have a
*witness* ``b`` with ``a -> b`` and ``not c -> b``. The pairs ``{a, b}`` are shared by all the
``c`` a witness serves, which makes this an uncapacitated facility-location problem (a witness
``b`` opens at cost ``make[a, b]``; a dominator ``c`` is served by removing its edge, cost
``unmake[c, a]``, or by an open witness ``b != c``, cost ``unmake[c, b]``; opening ``c`` itself
serves ``c``), NP-hard in general. It is solved as a 0-1 program by HiGHS
(:func:`scipy.optimize.milp`) within a time limit: where HiGHS proves optimality the count is
exact; otherwise the result holds a *certified lower bound* (the solver's dual bound, rounded up)
and the *upper bound* of the best solution found, whose changes are returned and do make ``a``
uncovered. The model is exact: an open witness ``b`` has ``a -> b``, so ``b`` does not beat ``a``
and needs no witness itself; hence a pair ``{c, b}`` is never asked to hold ``not c -> b`` and
``not b -> c`` at once (which a reversal could not do for an odd number of votes), and every
pair's cost is counted once.

**The model estimator** (:func:`held_uncovered_changes`): its strict relation ``P_ab > 1/2``, not
refitted, with the imputed (uncompared) pairs held fixed and a compared pair decided by its record
``M'_ab >= 1`` once one or more of its decisive votes change (:func:`held_costs`, from
:func:`~ste_jax.evaluate._vote_costs.held_relation_costs`). A pair's state is still chosen on its
own and a set of changes still costs the sum over the pairs it touches of at least the cost of the
state it gives, so both arguments above hold with these ``make``/``unmake`` (``inf`` for a held
pair): leaving is exact, joining is the same 0-1 program (a held dominance ``c -> a`` cannot be
removed, only escaped through a witness; where some dominator has neither, no change set makes
``a`` uncovered). No dominator is created on the way: making ``a -> b`` gives ``b`` no edge to
``a``, and unmaking ``c -> b`` or ``c -> a`` creates no edge into ``a``. The one mechanism,
:func:`changes_of_costs`, takes the costs of either relation.
"""

import dataclasses
import time
from typing import NamedTuple

import numpy as np
from scipy.sparse import coo_matrix

from ste_jax.evaluate._vote_costs import Flip, flip_costs, held_relation_costs

UNCOVERED_THRESHOLD = 1
"""The margin threshold of the strict relation whose Uncovered Set the estimators report."""


@dataclasses.dataclass(frozen=True)
class UncoveredChanges:
  """Per agent: the fewest changes (reversals or removals) that change its hard UC membership.

  Attributes:
    members: ``(n,)`` bool, the hard Uncovered Set.
    upper: ``(n,)`` int64, the size of the change set in ``changes`` (it does change the
      membership); ``-1`` where no change set does.
    lower: ``(n,)`` int64, a certified lower bound; ``lower == upper`` where the count is exact
      (always for members; for outsiders where the solver proved optimality).
    changes: per agent, the :data:`~ste_jax.evaluate._vote_costs.Flip` triples achieving ``upper``.
  """

  members: np.ndarray
  upper: np.ndarray
  lower: np.ndarray
  changes: tuple[tuple[Flip, ...], ...]


class UncoveredCosts(NamedTuple):
  """A strict relation and the per-pair costs of changing it (module docstring).

  Attributes:
    edge: ``(n, n)`` bool strict relation with no vote changed (zero diagonal).
    make: ``(n, n)`` float64 fewest changes after which ``u -> v`` holds (0 where it does,
      ``inf`` where no change of that pair gives it; ``inf`` on the diagonal).
    unmake: ``(n, n)`` float64 fewest changes after which ``u -> v`` does not hold (0 where it
      does not, ``inf`` where no change of that pair removes it; 0 on the diagonal).
    make_from, unmake_from: ``(n, n)`` int64, the agent whose wins over the other are changed
      to do it (the ``winner`` of the :data:`~ste_jax.evaluate._vote_costs.Flip`).
  """

  edge: np.ndarray
  make: np.ndarray
  unmake: np.ndarray
  make_from: np.ndarray
  unmake_from: np.ndarray


def _costs(edge, create, remove, create_from, remove_from) -> UncoveredCosts:
  """:class:`UncoveredCosts` of int costs ``create``/``remove`` (``-1``: impossible)."""
  n = edge.shape[0]
  off = ~np.eye(n, dtype=bool)
  make = np.where(edge, 0.0, np.where(create >= 0, create, np.inf))
  unmake = np.where(edge, np.where(remove >= 0, remove, np.inf), 0.0)
  return UncoveredCosts(
    edge,
    np.where(off, make, np.inf),
    np.where(off, unmake, 0.0),
    np.asarray(create_from, dtype=np.int64),
    np.asarray(remove_from, dtype=np.int64),
  )


def count_costs(W: np.ndarray, action: str = "reverse") -> UncoveredCosts:
  """The counts' strict relation ``M_ab >= 1`` and its costs (:func:`flip_costs`).

  Args:
    W: ``(n, n)`` int decisive wins.
    action: ``"reverse"`` or ``"remove"``.

  Returns:
    :class:`UncoveredCosts`: ``u -> v`` is made by changing ``v``'s wins over ``u`` and unmade
    by changing ``u``'s wins over ``v``.
  """
  edge, create, remove = flip_costs(W, UNCOVERED_THRESHOLD, action)
  n = W.shape[0]
  rows = np.broadcast_to(np.arange(n)[:, None], (n, n))
  return _costs(edge, create, remove, rows.T, rows)


def held_costs(
  W: np.ndarray, edge: np.ndarray, observed: np.ndarray, action: str = "reverse"
) -> UncoveredCosts:
  """A strict relation with its uncompared pairs held fixed, and its costs.

  ``edge`` (e.g. the model estimator's strict relation ``P_ab > 1/2``) holds while no vote
  changes; a compared pair whose decisive votes change is decided by its record, ``a -> b`` iff
  ``M'_ab >= 1``, as the counts' strict relation is; an uncompared (imputed) pair cannot change
  (:func:`~ste_jax.evaluate._vote_costs.held_relation_costs`).

  Args:
    W: ``(n, n)`` int decisive wins.
    edge: ``(n, n)`` bool strict relation (zero diagonal; never both ``a -> b`` and ``b -> a``).
    observed: ``(n, n)`` bool symmetric, the compared pairs.
    action: ``"reverse"`` or ``"remove"``.

  Returns:
    :class:`UncoveredCosts`.
  """
  edge = np.asarray(edge, dtype=bool) & ~np.eye(W.shape[0], dtype=bool)
  costs = held_relation_costs(
    W, edge, np.asarray(observed, dtype=bool), UNCOVERED_THRESHOLD, action
  )
  return _costs(edge, *costs)


def _flip(source: np.ndarray, u: int, v: int, k: float) -> Flip:
  """The :data:`Flip` changing ``k`` of ``source[u, v]``'s wins in the pair ``{u, v}``."""
  winner = int(source[u, v])
  return winner, int(u + v - winner), int(k)


def uncovered_of(edge: np.ndarray) -> np.ndarray:
  """``(n,)`` bool: agents nobody covers in the strict relation ``edge`` (NumPy)."""
  n = edge.shape[0]
  e = edge & ~np.eye(n, dtype=bool)
  # c covers a iff e[c, a] and no b with e[a, b], not e[c, b], b != c.
  escapes = e.astype(np.int64) @ (~e & ~np.eye(n, dtype=bool)).T.astype(np.int64)  # [a, c]
  covers = e & (escapes.T == 0)  # [c, a]
  return ~covers.any(axis=0)


def _leave(a: int, costs: UncoveredCosts) -> tuple[int, tuple[Flip, ...]]:
  """Exact fewest changes making someone cover uncovered ``a`` (``-1`` if none does)."""
  make, unmake = costs.make, costs.unmake
  n = make.shape[0]
  others = np.arange(n) != a
  per_b = np.minimum(unmake[a][None, :], make)  # [c, b]
  per_b[:, a] = 0.0
  np.fill_diagonal(per_b, 0.0)
  total = make[:, a] + per_b.sum(axis=1)
  total[~others] = np.inf
  c = int(np.argmin(total))
  if not np.isfinite(total[c]):
    return -1, ()
  changes = []
  if make[c, a] > 0:
    changes.append(_flip(costs.make_from, c, a, make[c, a]))
  for b in np.flatnonzero(others & (np.arange(n) != c)):
    if unmake[a, b] <= make[c, b]:
      if unmake[a, b] > 0:
        changes.append(_flip(costs.unmake_from, a, int(b), unmake[a, b]))
    elif make[c, b] > 0:
      changes.append(_flip(costs.make_from, c, int(b), make[c, b]))
  return int(total[c]), tuple(changes)


def _greedy_witnesses(f: np.ndarray, r: np.ndarray, serve: np.ndarray, own: np.ndarray):
  """A good set of open witnesses (upper bound) and a single-dominator lower bound.

  Args:
    f: ``(w,)`` opening costs; r: ``(d,)`` removal costs; serve: ``(d, w)`` serving costs
      (``inf`` where not allowed); own: ``(d, w)`` bool, witness ``j`` is dominator ``i`` itself.

  Returns:
    ``(opened, cost, lower)``: ``(w,)`` bool, the cost of that choice, a lower bound on the optimum
    (the costliest dominator served alone at its cheapest: removal, opening itself, or opening a
    witness and being served by it).
  """

  # current[i]: what dominator i costs with the witnesses open so far
  opened = f == 0
  current = np.minimum(r, np.where(opened[None, :], serve, np.inf).min(axis=1, initial=np.inf))
  current = np.where((own & opened[None, :]).any(axis=1), 0.0, current)
  while True:
    after = np.where(own, 0.0, np.minimum(current[:, None], serve))  # [i, j] with j opened
    gain = (current[:, None] - after).sum(axis=0) - f
    gain[opened] = -np.inf
    j = int(np.argmax(gain)) if gain.size else 0
    if not gain.size or gain[j] <= 0:
      break
    opened[j] = True
    current = after[:, j]
  cost = float(f[opened].sum() + current.sum())
  alone = np.minimum(
    r, np.min(np.where(own, f[None, :], f[None, :] + serve), axis=1, initial=np.inf)
  )
  return opened, cost, float(alone.max(initial=0.0))


def _join(a: int, costs: UncoveredCosts, time_limit: float) -> tuple[int, int, tuple[Flip, ...]]:
  """``(lower, upper, changes)``: fewest changes making covered ``a`` uncovered (facility MILP);
  ``(-1, -1, ())`` where no change set does."""
  edge, make, unmake = costs.edge, costs.make, costs.unmake
  n = edge.shape[0]
  dominators = np.flatnonzero(edge[:, a])
  witnesses = np.flatnonzero(np.isfinite(make[a]) & (np.arange(n) != a))
  r = unmake[dominators, a]  # infinite for a held (imputed) dominance
  own = dominators[:, None] == witnesses[None, :]
  serve = np.where(own, np.inf, unmake[np.ix_(dominators, witnesses)])
  servable = np.isfinite(r) | own.any(axis=1) | np.isfinite(serve).any(axis=1)
  if not servable.all():  # a dominance nothing undoes and nothing escapes
    return -1, -1, ()
  f = make[a, witnesses]
  # An impossible removal costs more than any feasible choice (one opening per witness, one
  # removal or serving per dominator), so no optimum and no bound depends on it.
  big = sum(float(x[np.isfinite(x)].sum()) for x in (f, r, serve)) + 1.0
  r = np.where(np.isfinite(r), r, big)
  opened, greedy_cost, alone = _greedy_witnesses(f, r, serve, own)
  if alone >= greedy_cost:  # the greedy choice is optimal
    return _changes(a, dominators, witnesses, opened, costs, r, greedy_cost)
  if time_limit < 1e-3:
    return _changes(a, dominators, witnesses, opened, costs, r, alone)
  from scipy.optimize import Bounds, LinearConstraint, milp  # only here: slow to import

  # Serving pairs (c, b): c a dominator, b a possible witness, b != c, cheaper than removal.
  cc, bb = np.meshgrid(np.arange(len(dominators)), np.arange(len(witnesses)), indexing="ij")
  cost = unmake[dominators[cc], witnesses[bb]]
  keep = (dominators[cc] != witnesses[bb]) & (cost < r[cc])
  cc, bb, cost = cc[keep], bb[keep], cost[keep]
  nd, nw, nx = len(dominators), len(witnesses), len(cc)
  # Variables: o (nw witnesses), s (nd removals), x (nx servings).
  objective = np.concatenate([f, r, cost])
  position = {int(b): j for j, b in enumerate(witnesses)}
  rows, cols = [], []
  for i, c in enumerate(dominators):  # s_c + o_c + sum_b x_cb >= 1
    rows.append(i), cols.append(nw + i)
    if int(c) in position:
      rows.append(i), cols.append(position[int(c)])
  rows += list(cc)
  cols += list(nw + nd + np.arange(nx))
  cover = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(nd, nw + nd + nx))
  link = coo_matrix(  # x_cb - o_b <= 0
    (
      np.concatenate([np.ones(nx), -np.ones(nx)]),
      (np.concatenate([np.arange(nx)] * 2), np.concatenate([nw + nd + np.arange(nx), bb])),
    ),
    shape=(nx, nw + nd + nx),
  )
  constraints = [LinearConstraint(cover, lb=1, ub=np.inf)]
  if nx:
    constraints.append(LinearConstraint(link, lb=-np.inf, ub=0))
  result = milp(
    objective,
    constraints=constraints,
    integrality=np.ones(nw + nd + nx),
    bounds=Bounds(0, 1),
    options={"time_limit": time_limit},
  )
  if result.x is None:  # no solution within the limit: the greedy one, the simple bound
    return _changes(a, dominators, witnesses, opened, costs, r, alone)
  solved = np.rint(result.x[:nw]) > 0
  bound = float(result.mip_dual_bound) if result.status != 0 else float(result.fun)
  if result.fun > greedy_cost:  # stopped early with a worse solution than the greedy one
    solved = opened
  return _changes(a, dominators, witnesses, solved, costs, r, max(bound, alone))


def _changes(a, dominators, witnesses, opened, costs: UncoveredCosts, r, bound):
  """``(lower, upper, changes)`` of the open witnesses: each dominator served at its cheapest."""
  make, unmake = costs.make, costs.unmake
  changes = {}
  open_agents = [int(b) for b in witnesses[opened]]
  for b in open_agents:
    if make[a, b] > 0:
      changes[_flip(costs.make_from, a, b, 0)[:2]] = int(make[a, b])  # make a -> b
  for i, c in enumerate(dominators):
    c = int(c)
    if c in open_agents:
      continue
    served = [b for b in open_agents if b != c]
    b = min(served, key=lambda b: unmake[c, b]) if served else None
    if b is not None and unmake[c, b] < r[i]:
      if unmake[c, b] > 0:
        changes[_flip(costs.unmake_from, c, b, 0)[:2]] = int(unmake[c, b])  # unmake c -> b
    else:
      changes[_flip(costs.unmake_from, c, a, 0)[:2]] = int(r[i])  # unmake c -> a
  upper = int(sum(changes.values()))
  lower = min(upper, int(np.ceil(bound - 1e-6)))
  return lower, upper, tuple((w, lo, k) for (w, lo), k in changes.items())


def uncovered_changes(
  W: np.ndarray, action: str = "reverse", *, time_limit: float = 10.0, only: int | None = None
) -> UncoveredChanges:
  """Fewest reversals (``action="reverse"``) or removals that change each agent's hard UC.

  The counts' strict relation ``M_ab >= 1``: :func:`changes_of_costs` of :func:`count_costs`.

  Args:
    W: ``(n, n)`` int decisive wins (:func:`~ste_jax.evaluate._robustness.decisive_wins`).
    action: ``"reverse"`` or ``"remove"``.
    time_limit: total seconds for the solver (``0``: greedy and bound only).
    only: compute this agent's counts only (the others stay ``-1``, their changes empty).

  Returns:
    :class:`UncoveredChanges`.

  Example:
    >>> import numpy as np
    >>> W = np.array([[0, 2, 0], [0, 0, 1], [1, 0, 0]])  # 0 -> 1 -> 2 -> 0: all uncovered
    >>> r = uncovered_changes(W)
    >>> r.members.tolist(), r.upper.tolist()
    ([True, True, True], [1, 1, 1])
  """
  return changes_of_costs(count_costs(W, action), time_limit=time_limit, only=only)


def held_uncovered_changes(
  W: np.ndarray,
  edge: np.ndarray,
  observed: np.ndarray,
  action: str = "reverse",
  *,
  time_limit: float = 10.0,
  only: int | None = None,
) -> UncoveredChanges:
  """The same for a strict relation with its uncompared pairs held fixed (the model's).

  :func:`changes_of_costs` of :func:`held_costs`: ``edge`` while no vote changes, a compared pair
  decided by its record ``M'_ab >= 1`` once its decisive votes change, an imputed pair fixed.

  Args:
    W: ``(n, n)`` int decisive wins.
    edge: ``(n, n)`` bool strict relation (e.g. the model estimator's ``P_ab > 1/2``).
    observed: ``(n, n)`` bool symmetric, the compared pairs.
    action: ``"reverse"`` or ``"remove"``.
    time_limit, only: as for :func:`uncovered_changes`.

  Returns:
    :class:`UncoveredChanges` (``-1`` also where a held pair makes the change impossible).

  Example:
    >>> import numpy as np
    >>> W = np.array([[0, 2, 0], [0, 0, 1], [0, 0, 0]])  # 0 -> 1 -> 2 compared, {0, 2} not
    >>> edge = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=bool)  # imputed 2 -> 0
    >>> r = held_uncovered_changes(W, edge, W + W.T > 0)
    >>> r.members.tolist(), r.upper.tolist()  # 2 -> 0 held: 1 covers 2 once 1 -> 0 (2 votes)
    ([True, True, True], [1, 1, 2])
  """
  costs = held_costs(W, edge, observed, action)
  return changes_of_costs(costs, time_limit=time_limit, only=only)


def changes_of_costs(
  costs: UncoveredCosts, *, time_limit: float = 10.0, only: int | None = None
) -> UncoveredChanges:
  """Fewest changes of each agent's hard UC membership under per-pair ``costs``.

  Exact for members (leaving, closed form of the module docstring). For outsiders (joining): a
  greedy choice of witnesses and a one-dominator lower bound, exact where they meet; elsewhere
  the 0-1 program, exact where HiGHS proves optimality, else its certified lower bound and the
  better of its and the greedy solution. The solver's total time is about ``time_limit`` seconds,
  shared evenly among the outsiders still to solve (so with a small limit, or many outsiders,
  more of them get bounds only; the result then depends on the machine's speed, the bounds stay
  certified).

  Args:
    costs: :class:`UncoveredCosts` (:func:`count_costs`, :func:`held_costs`).
    time_limit: total seconds for the solver (``0``: greedy and bound only).
    only: compute this agent's counts only (the others stay ``-1``, their changes empty).

  Returns:
    :class:`UncoveredChanges`.
  """
  edge = costs.edge
  n = edge.shape[0]
  members = uncovered_of(edge)
  upper = np.full(n, -1, dtype=np.int64)
  lower = np.full(n, -1, dtype=np.int64)
  changes: list[tuple[Flip, ...]] = [()] * n
  deadline = time.monotonic() + time_limit
  outsiders_left = int((~members).sum()) if only is None else int(not members[only])
  for a in range(n) if only is None else (int(only),):
    if members[a]:
      k, found = _leave(a, costs)
      lower[a] = upper[a] = k
    else:
      share = max(deadline - time.monotonic(), 0.0) / outsiders_left
      lower[a], upper[a], found = _join(a, costs, share)
      outsiders_left -= 1
    changes[a] = found
  return UncoveredChanges(members, upper, lower, tuple(changes))
