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
"""

import dataclasses
import time

import numpy as np
from scipy.sparse import coo_matrix

from ste_jax.evaluate._vote_costs import Flip, flip_costs

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


def _make_unmake(W: np.ndarray, action: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """``(edge, make, unmake)`` of the strict relation: float64 costs, ``inf`` where impossible."""
  edge, create, remove = flip_costs(W, UNCOVERED_THRESHOLD, action)
  n = W.shape[0]
  off = ~np.eye(n, dtype=bool)
  make = np.where(edge, 0.0, np.where(create >= 0, create, np.inf))
  unmake = np.where(edge, np.where(remove >= 0, remove, np.inf), 0.0)
  return edge, np.where(off, make, np.inf), np.where(off, unmake, 0.0)


def uncovered_of(edge: np.ndarray) -> np.ndarray:
  """``(n,)`` bool: agents nobody covers in the strict relation ``edge`` (NumPy)."""
  n = edge.shape[0]
  e = edge & ~np.eye(n, dtype=bool)
  # c covers a iff e[c, a] and no b with e[a, b], not e[c, b], b != c.
  escapes = e.astype(np.int64) @ (~e & ~np.eye(n, dtype=bool)).T.astype(np.int64)  # [a, c]
  covers = e & (escapes.T == 0)  # [c, a]
  return ~covers.any(axis=0)


def _leave(a: int, make: np.ndarray, unmake: np.ndarray) -> tuple[int, tuple[Flip, ...]]:
  """Exact fewest changes making someone cover uncovered ``a`` (``-1`` if none does)."""
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
    changes.append((a, c, int(make[c, a])))
  for b in np.flatnonzero(others & (np.arange(n) != c)):
    if unmake[a, b] <= make[c, b]:
      if unmake[a, b] > 0:
        changes.append((a, int(b), int(unmake[a, b])))
    elif make[c, b] > 0:
      changes.append((int(b), c, int(make[c, b])))
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


def _join(
  a: int, edge: np.ndarray, make: np.ndarray, unmake: np.ndarray, time_limit: float
) -> tuple[int, int, tuple[Flip, ...]]:
  """``(lower, upper, changes)``: fewest changes making covered ``a`` uncovered (facility MILP)."""
  n = edge.shape[0]
  dominators = np.flatnonzero(edge[:, a])
  witnesses = np.flatnonzero(np.isfinite(make[a]) & (np.arange(n) != a))
  r = unmake[dominators, a]  # finite: a dominance can always be undone
  own = dominators[:, None] == witnesses[None, :]
  serve = np.where(own, np.inf, unmake[np.ix_(dominators, witnesses)])
  opened, greedy_cost, alone = _greedy_witnesses(make[a, witnesses], r, serve, own)
  if alone >= greedy_cost:  # the greedy choice is optimal
    return _changes(a, dominators, witnesses, opened, make, unmake, r, greedy_cost)
  if time_limit < 1e-3:
    return _changes(a, dominators, witnesses, opened, make, unmake, r, alone)
  from scipy.optimize import Bounds, LinearConstraint, milp  # only here: slow to import

  # Serving pairs (c, b): c a dominator, b a possible witness, b != c, cheaper than removal.
  cc, bb = np.meshgrid(np.arange(len(dominators)), np.arange(len(witnesses)), indexing="ij")
  cost = unmake[dominators[cc], witnesses[bb]]
  keep = (dominators[cc] != witnesses[bb]) & (cost < r[cc])
  cc, bb, cost = cc[keep], bb[keep], cost[keep]
  nd, nw, nx = len(dominators), len(witnesses), len(cc)
  # Variables: o (nw witnesses), s (nd removals), x (nx servings).
  objective = np.concatenate([make[a, witnesses], r, cost])
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
    return _changes(a, dominators, witnesses, opened, make, unmake, r, alone)
  solved = np.rint(result.x[:nw]) > 0
  bound = float(result.mip_dual_bound) if result.status != 0 else float(result.fun)
  if result.fun > greedy_cost:  # stopped early with a worse solution than the greedy one
    solved = opened
  return _changes(a, dominators, witnesses, solved, make, unmake, r, max(bound, alone))


def _changes(a, dominators, witnesses, opened, make, unmake, r, bound):
  """``(lower, upper, changes)`` of the open witnesses: each dominator served at its cheapest."""
  changes = {}
  open_agents = [int(b) for b in witnesses[opened]]
  for b in open_agents:
    if make[a, b] > 0:
      changes[(b, a)] = int(make[a, b])  # reverse b's wins over a
  for i, c in enumerate(dominators):
    c = int(c)
    if c in open_agents:
      continue
    served = [b for b in open_agents if b != c]
    b = min(served, key=lambda b: unmake[c, b]) if served else None
    if b is not None and unmake[c, b] < r[i]:
      if unmake[c, b] > 0:
        changes[(c, b)] = int(unmake[c, b])  # reverse c's wins over b
    else:
      changes[(c, a)] = int(r[i])  # reverse c's wins over a
  upper = int(sum(changes.values()))
  lower = min(upper, int(np.ceil(bound - 1e-6)))
  return lower, upper, tuple((w, lo, k) for (w, lo), k in changes.items())


def uncovered_changes(
  W: np.ndarray, action: str = "reverse", *, time_limit: float = 10.0, only: int | None = None
) -> UncoveredChanges:
  """Fewest reversals (``action="reverse"``) or removals that change each agent's hard UC.

  Exact for members (leaving, closed form of the module docstring). For outsiders (joining): a
  greedy choice of witnesses and a one-dominator lower bound, exact where they meet; elsewhere
  the 0-1 program, exact where HiGHS proves optimality, else its certified lower bound and the
  better of its and the greedy solution. The solver's total time is about ``time_limit`` seconds,
  shared evenly among the outsiders still to solve (so with a small limit, or many outsiders,
  more of them get bounds only; the result then depends on the machine's speed, the bounds stay
  certified).

  Args:
    W: ``(n, n)`` int decisive wins (:func:`~ste_jax.evaluate._robustness.decisive_wins`).
    action: ``"reverse"`` or ``"remove"``.
    time_limit: total seconds for the solver (``0``: greedy and bound only).
    only: compute this agent's counts only (the others stay ``-1``, their changes empty).

  Returns:
    :class:`UncoveredChanges`.
  """
  edge, make, unmake = _make_unmake(W, action)
  n = edge.shape[0]
  members = uncovered_of(edge)
  upper = np.full(n, -1, dtype=np.int64)
  lower = np.full(n, -1, dtype=np.int64)
  changes: list[tuple[Flip, ...]] = [()] * n
  deadline = time.monotonic() + time_limit
  outsiders_left = int((~members).sum()) if only is None else int(not members[only])
  for a in range(n) if only is None else (int(only),):
    if members[a]:
      k, found = _leave(a, make, unmake)
      lower[a] = upper[a] = k
    else:
      share = max(deadline - time.monotonic(), 0.0) / outsiders_left
      lower[a], upper[a], found = _join(a, edge, make, unmake, share)
      outsiders_left -= 1
    changes[a] = found
  return UncoveredChanges(members, upper, lower, tuple(changes))
