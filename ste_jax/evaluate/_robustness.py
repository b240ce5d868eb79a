"""Vote robustness of hard Top-Cycle membership: the fewest reversed comparisons that change it.

For the count-based tournaments (``winrate``, ``posterior``) the hard relation of a pair ``{a, b}``
depends only on its *margin* ``M_ab = W_ab - W_ba``, where ``W_ab`` is the number of decisive
comparisons ``a`` won against ``b``. A tie counts 1/2 to each side (``tie_policy="half"``) or is
left out (``"drop"``); either way it adds nothing to the margin, and reversing a tie leaves it a
tie, so a tie is never reversed. Reversing one decisive comparison moves the margin by 2.

* ``winrate``: ``a -> b`` iff ``P_ab >= 1/2`` iff ``M_ab >= 0`` (a tie and an unobserved pair,
  ``P = 1/2``, are edges both ways: the Smith-set convention). Threshold ``c = 0``.
* ``posterior``: ``a -> b`` iff ``D_ab > 0`` iff ``M_ab > 0`` (the symmetric Beta prior puts the
  posterior median above 1/2 exactly when ``a`` won more); an evenly split or unobserved pair is
  no edge. Threshold ``c = 1``.

Hence ``a -> b`` iff ``M_ab >= c``, and the integer flip costs of an ordered pair are

* create ``a -> b`` (absent, ``M_ab < c``): ``k = ceil((c - M_ab) / 2)`` reversals of ``b``'s
  wins over ``a``, possible iff ``k <= W_ba``;
* remove ``a -> b`` (present, ``M_ab >= c``): ``k = floor((M_ab - c) / 2) + 1`` reversals of
  ``a``'s wins over ``b``, possible iff ``k <= W_ab`` (always, except a ``winrate`` pair whose
  votes are all ties or that was never compared: ``M_ab = 0 = W_ab``).

Reversals in one pair change only that pair's edges, and reversing votes both ways within a pair
is never cheaper than reversing their difference one way, so a set of reversals is a choice of new
margins, one pair at a time, of cost ``|M_ab - M'_ab| / 2``.

*Removing* a decisive comparison moves the margin by 1 (removing a tie moves nothing; a pair
with every comparison removed is unobserved, ``M = 0``, the same relation as an even split), so
the removal costs are ``create = c - M_ab`` (``b``'s wins over ``a``, possible iff
``<= W_ba``) and ``remove = M_ab - c + 1`` (``a``'s wins over ``b``, possible iff ``<= W_ab``),
and every statement below holds for removals with these costs.

**The model estimator** (``estimator="model"``; :attr:`VoteRobustness.relation` ``"model, imputed
pairs held fixed"``): its hard relation ``P_ab >= 1/2`` of the fitted table, with the model *not
refitted*: a pair without comparisons keeps the model's (imputed) orientation whatever the votes,
and a compared pair keeps the model's orientation while its votes are as observed; once one or
more of its decisive votes are reversed (removed), it is decided by its record as the ``winrate``
relation decides it (``a -> b`` iff ``M'_ab >= 0``). The cost of a pair's state is then the count
cost above (at least 1), except where the model orients a pair against its record, where one
change of that pair's votes already hands it to its record
(:func:`~ste_jax.evaluate._vote_costs.held_relation_costs`). Changes in one pair still change only
that pair's edges, so the shortest-path and minimum-cut arguments of :func:`vote_robustness` hold
unchanged and the counts are exact *for this relation*; they are not the votes that would change
a refitted model's core (the influence of each comparison on the soft scores,
:func:`~ste_jax.evaluate.comparison_influence`, measures that locally). The Uncovered-Set fields
(``uncovered=True``) are the same on the model's *strict* relation ``P_ab > 1/2``, a changed pair
decided by ``M'_ab >= 1`` (:func:`~ste_jax.evaluate._uncovered_robustness.held_uncovered_changes`),
exact for members and exact or certified bounds for outsiders, as for the counts.
"""

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components, dijkstra, maximum_flow

from ste_jax._errors import InputError, OptionError
from ste_jax._results import result_type, static
from ste_jax.data import Comparisons, PairCounts, pair_counts
from ste_jax.evaluate._estimators import (
  ModelEstimator,
  PosteriorEdgeEstimator,
  WinRateEstimator,
  as_estimator,
)
from ste_jax.evaluate._protocol import FittedTournament
from ste_jax.evaluate._uncovered_robustness import held_uncovered_changes, uncovered_changes
from ste_jax.evaluate._vote_costs import Flip, flip_costs, held_relation_costs

if TYPE_CHECKING:
  import pandas as pd

# The margin threshold ``c`` of each count-based estimator's hard relation (``a -> b`` iff
# ``M_ab >= c``), by estimator class; names resolve through the estimator registry.
_THRESHOLD = {WinRateEstimator: 0, PosteriorEdgeEstimator: 1}


@result_type
class VoteRobustness:
  """Per agent: the fewest reversed comparisons that change its hard Top-Cycle membership.

  Attributes:
    members: ``(n,)`` bool, the hard Top Cycle of the counts' relation.
    flips_to_change: ``(n,)`` int64, the minimum number of comparisons whose outcome must be
      reversed to make a member leave (or an outsider join) the Top Cycle; ``-1`` where no set
      of reversals does it (or, for an outsider of an empty Top Cycle, where it is not computed).
    removals_to_change: ``(n,)`` int64, the same for comparisons *removed* instead of reversed.
    uc_members: ``(n,)`` bool, the hard Uncovered Set (this and the other ``uc_`` fields: ``None``
      unless asked for with ``uncovered=True``) of the counts' strict relation ``M_ab >= 1`` (for
      the model: of its strict relation ``P_ab > 1/2``, imputed pairs held fixed).
    uc_flips_to_change: ``(n,)`` int64, the number of reversals in ``uc_flips``, which change the
      agent's hard Uncovered-Set membership (``-1``: no set of reversals does); the minimum where
      it equals ``uc_flips_lower`` (:mod:`ste_jax.evaluate._uncovered_robustness`: always for
      members, for outsiders where the solver proves it).
    uc_flips_lower: ``(n,)`` int64, a certified lower bound on that minimum.
    uc_removals_to_change, uc_removals_lower: the same for removals.
    flips: per agent, a tuple of :data:`Flip` ``(winner, loser, votes)`` achieving the minimum
      (their ``votes`` sum to ``flips_to_change``; empty where it is ``-1``). Static.
    removals: per agent, ``(winner, loser, votes)``: remove ``votes`` comparisons ``winner`` won
      against ``loser`` (they sum to ``removals_to_change``). Static.
    agents: the agent names. Static.
    estimator: ``"winrate"``, ``"posterior"`` or ``"model"``. Static.
    relation: ``"counts"`` (the count relation of the module docstring) or, for the model,
      ``"model, imputed pairs held fixed"`` (its hard relations, not refitted, each compared pair
      handed to its record once its votes change; the Top-Cycle and ``uc_`` fields alike). Static.
  """

  members: np.ndarray
  flips_to_change: np.ndarray
  removals_to_change: np.ndarray
  uc_members: np.ndarray
  uc_flips_to_change: np.ndarray
  uc_flips_lower: np.ndarray
  uc_removals_to_change: np.ndarray
  uc_removals_lower: np.ndarray
  flips: tuple[tuple[Flip, ...], ...] = static()
  removals: tuple[tuple[Flip, ...], ...] = static()
  uc_flips: tuple[tuple[Flip, ...], ...] = static()
  uc_removals: tuple[tuple[Flip, ...], ...] = static()
  agents: tuple[str, ...] = static()
  estimator: str = static()
  relation: str = static(default="counts")

  def to_frame(self) -> "pd.DataFrame":
    """A DataFrame indexed by agent: ``member``, ``flips_to_change``, ``flips`` (text: ``A>B x2``
    reverses two of A's wins over B), ``removals_to_change``, ``removals`` (text), and, where
    computed, the same with a ``uc_`` prefix for the Uncovered Set, plus ``uc_flips_lower`` and
    ``uc_removals_lower``."""
    import pandas as pd

    def text(changes: tuple[tuple[Flip, ...], ...]) -> list[str]:
      return [
        "; ".join(f"{self.agents[w]}>{self.agents[lo]} x{k}" for w, lo, k in row) for row in changes
      ]

    frame = pd.DataFrame(
      {
        "member": np.asarray(self.members, dtype=bool),
        "flips_to_change": np.asarray(self.flips_to_change, dtype=np.int64),
        "flips": text(self.flips),
        "removals_to_change": np.asarray(self.removals_to_change, dtype=np.int64),
        "removals": text(self.removals),
      },
      index=pd.Index(list(self.agents), name="agent"),
    )
    if self.uc_members is not None:
      uc = {
        "uc_member": np.asarray(self.uc_members, dtype=bool),
        "uc_flips_to_change": np.asarray(self.uc_flips_to_change, dtype=np.int64),
        "uc_flips_lower": np.asarray(self.uc_flips_lower, dtype=np.int64),
        "uc_flips": text(self.uc_flips),
        "uc_removals_to_change": np.asarray(self.uc_removals_to_change, dtype=np.int64),
        "uc_removals_lower": np.asarray(self.uc_removals_lower, dtype=np.int64),
        "uc_removals": text(self.uc_removals),
      }
      frame = frame.assign(**uc)
    frame.attrs.update(estimator=self.estimator, relation=self.relation)
    return frame


def decisive_wins(counts: PairCounts, tie_policy: str = "half") -> np.ndarray:
  """``(n, n)`` int64 decisive wins ``W_ab`` of integer, unit-weight counts.

  Args:
    counts: :class:`~ste_jax.data.PairCounts` of ``n`` agents, counted under ``tie_policy``.
    tie_policy: ``"half"`` (``wins`` holds ties as halves) or ``"drop"``.

  Returns:
    ``W`` with ``W[a, b]`` = comparisons ``a`` won against ``b`` outright.

  Raises:
    OptionError: an unknown ``tie_policy``.
    InputError: counts that are not whole numbers of comparisons (weights or fractional outcomes).
  """
  if tie_policy not in ("half", "drop"):
    raise OptionError(f"tie_policy must be 'half' or 'drop', got {tie_policy!r}.")
  wins = np.asarray(counts.wins, dtype=np.float64)
  ties = np.asarray(counts.ties, dtype=np.float64)
  if wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
    raise InputError(f"counts: expected (n, n) matrices, got shape {wins.shape}.")
  decisive = wins - ties / 2 if tie_policy == "half" else wins
  rounded = np.rint(decisive)
  bad = (np.abs(decisive - rounded) > 1e-6) | (rounded < 0)
  if bad.any():
    a, b = np.argwhere(bad)[0]
    raise InputError(
      f"counts: {int(bad.sum())} cells are not whole numbers of decisive comparisons (first "
      f"[{a}, {b}] = {decisive[a, b]}); vote robustness needs unit-weight win/loss/tie rows."
    )
  out = rounded.astype(np.int64)
  np.fill_diagonal(out, 0)
  return out


def top_cycle_of(edge: np.ndarray) -> np.ndarray:
  """``(n,)`` bool: agents reaching every agent in ``edge`` (the unique source component)."""
  n = edge.shape[0]
  _, labels = connected_components(csr_matrix(edge), directed=True, connection="strong")
  across = edge & (labels[:, None] != labels[None, :])
  entered = np.zeros(labels.max() + 1, dtype=bool)
  entered[labels[np.nonzero(across)[1]]] = True
  sources = np.flatnonzero(~entered)
  if len(sources) != 1:
    return np.zeros(n, dtype=bool)
  return labels == sources[0]


def vote_robustness(
  data: Comparisons | PairCounts,
  *,
  estimator: Any = "winrate",
  tie_policy: str | None = None,
  agents: tuple[str, ...] | None = None,
  uncovered: bool = False,
  uc_time_limit: float = 5.0,
  fitted: FittedTournament | None = None,
) -> VoteRobustness:
  """The fewest reversed comparisons that change each agent's hard Top-Cycle membership.

  For the model estimator: the same on its hard relations with the imputed pairs held fixed
  (the module docstring; ``relation`` says so) of its fit ``fitted``; exact for that relation
  (the Uncovered Set: exact or certified bounds, as below).

  With ``uncovered=True``, the same for the hard Uncovered Set (``uc_`` fields): exact for
  members, and for outsiders a 0-1 program solved within ``uc_time_limit`` seconds in all (per
  action), exact where solved, else a certified lower bound and the changes found
  (:mod:`ste_jax.evaluate._uncovered_robustness`).

  Exact, for the hard relation ``a -> b`` iff ``M_ab >= c`` of the module docstring (``winrate``:
  ``c = 0``, weak ``P >= 1/2``; ``posterior``: ``c = 1``, ``D > 0``), with edge costs
  ``create``/``remove`` of :func:`flip_costs`. The Top Cycle ``TC`` is the set of agents that
  reach every agent.

  **Joining** (``x`` outside a non-empty ``TC``): the minimum is the shortest-path distance from
  ``x`` to ``TC`` with edge cost ``0`` on an existing edge and ``create`` on an absent one.
  *Lower bound*: after any set ``F`` of reversals that puts ``x`` in the Top Cycle, ``x`` reaches
  a member ``t`` of the old ``TC`` by a simple path; its edges lie in distinct pairs (a simple path
  never uses both ``u -> v`` and ``v -> u``), and each absent one was created by reversals in its
  own pair, costing at least ``create``; so ``|F| >=`` the path's cost ``>=`` the distance.
  *Achievability*: reverse only what creates the absent edges of a shortest simple path ``P``
  (``x = p_0, ..., p_k = t``). Every edge of ``P`` is then present (each pair of ``P`` is touched
  once, its other pairs not at all). The only edges lost are ``p_{i+1} -> p_i`` between path
  vertices. Any agent ``w`` was reached from ``t`` in the old relation; on that old path, after its
  last lost edge (which ends at a vertex of ``P``, reached from ``x``) every edge survives, so ``x``
  reaches ``w``: ``x`` joins. Hence the distance is exact. (With an empty ``TC``, possible for
  ``posterior`` only, joining needs ``x`` to reach everyone: a minimum spanning arborescence
  rooted at ``x``, not computed here: ``-1``.)

  **Leaving** (``m`` in ``TC``): the minimum is ``min_{t != m}`` of the minimum ``m``-``t`` cut
  with capacity ``remove`` on present edges (infinite where no reversal removes it). *Lower
  bound*: after reversals ``F`` under which ``m`` misses some ``t``, let ``R`` be the agents ``m``
  then reaches; every old edge from ``R`` to its complement is gone, each in its own pair, so
  ``|F| >= cut(R) >=`` the minimum ``m``-``t`` cut. *Achievability*: remove exactly the present
  edges of a minimum cut ``R``; removing ``u -> v`` only adds ``v -> u``, into ``R``, so nothing
  leaves ``R`` and ``m`` no longer reaches ``t``.

  Complexity, for reversals and again for removals: one multi-source Dijkstra, ``O(n^2)`` on the
  dense graph (:func:`scipy.sparse.csgraph.dijkstra`; integer costs scaled by ``n`` plus 1 per
  edge, so zero-cost edges stay edges and the shortest path also has the fewest edges), plus at
  most ``|TC| (n - 1)`` maximum flows (:func:`scipy.sparse.csgraph.maximum_flow`, Dinic,
  ``O(n^2 |E|)`` each on ``|E| <= n^2`` edges), of which the bound of :func:`_leave_all` skips
  those that cannot beat the best cut found (at least one flow per member whose one-agent cuts
  are not provably minimal).

  Args:
    data: :class:`~ste_jax.data.Comparisons` (unit weights; outcomes 0, 1/2, 1) or their
      :class:`~ste_jax.data.PairCounts` of ``n`` agents.
    estimator: ``"winrate"``, ``"posterior"`` or a ``WinRateEstimator``/``PosteriorEdgeEstimator``
      (its ``tie_policy`` is used; a win-rate estimator's ``missing`` must be 1/2); or ``"model"``
      / a :class:`~ste_jax.evaluate.ModelEstimator` (``data`` as comparisons; ties count half).
    tie_policy: how ``data`` was or is counted, ``"half"`` (default) or ``"drop"``; default: the
      estimator's.
    agents: names for a :class:`PairCounts` (default ``"0"``, ``"1"``, ...); ignored for
      comparisons, whose own names are used.
    uncovered: also compute the Uncovered-Set fields (``None`` otherwise).
    uc_time_limit: total seconds of the Uncovered-Set solver, per action.
    fitted: the model estimator's fit on ``data``, ``estimator.fit(key, data)`` (required for
      the model; ignored by the count estimators).

  Returns:
    A :class:`VoteRobustness`: reversal and removal counts and their witnesses.

  Raises:
    OptionError: an unknown estimator or tie policy, a win-rate ``missing`` other than 1/2, or
      the model estimator without ``fitted``.
    InputError: counts that are not whole numbers of comparisons, or pair counts for the model.

  Example:
    >>> from ste_jax.data import Comparisons
    >>> # 0 beat 1 three times, 1 beat 2 once, 2 beat 0 once: 0 -> 1 -> 2 -> 0, a 3-cycle
    >>> c = Comparisons.from_arrays([0, 0, 0, 1, 2], [1, 1, 1, 2, 0], [1.0] * 5)
    >>> r = vote_robustness(c)
    >>> r.members.tolist(), r.flips_to_change.tolist()
    ([True, True, True], [1, 1, 1])
    >>> r.flips[1]  # reverse 1's only win (over 2): then 1 reaches no one
    ((1, 2, 1),)
    >>> r.removals_to_change.tolist()  # every loser here has no win to keep: a tie at best
    [-1, -1, -1]
    >>> vote_robustness(c, estimator="posterior").removals[1]  # an even split is no edge
    ((1, 2, 1),)
  """
  model = _as_model(estimator)
  if model is not None:
    return _model_robustness(data, model, fitted, uncovered, uc_time_limit)
  name, threshold, policy = _estimator_settings(estimator, tie_policy)
  if isinstance(data, Comparisons):
    names = tuple(data.agents)
    counts = pair_counts(data, tie_policy=policy)
  else:
    counts = data
    n = np.shape(counts.wins)[-1]
    names = tuple(agents) if agents is not None else tuple(str(i) for i in range(n))
  W = decisive_wins(counts, policy)
  n = W.shape[0]
  found = {}
  for action in ACTIONS:
    edge, create, remove = flip_costs(W, threshold, action)
    members = top_cycle_of(edge)
    result = np.full(n, -1, dtype=np.int64)
    witnesses: list[tuple[Flip, ...]] = [()] * n
    if members.any() and not members.all():
      _join(edge, create, members, result, witnesses)
    _leave_all(edge, remove, members, result, witnesses)
    found[action] = result, tuple(witnesses)
  uc = {
    action: uncovered_changes(W, action, time_limit=uc_time_limit) if uncovered else None
    for action in found
  }
  return _result(members, found, uc, names, name)


def _result(members, found: dict, uc: dict, agents, estimator: str, relation: str = "counts"):
  """The :class:`VoteRobustness` of the Top-Cycle results ``found[action] = (counts,
  changes)`` and the Uncovered-Set results ``uc[action]`` (``None``: not computed)."""
  return VoteRobustness(
    members=members,
    flips_to_change=found["reverse"][0],
    flips=found["reverse"][1],
    removals_to_change=found["remove"][0],
    removals=found["remove"][1],
    uc_members=_field(uc["reverse"], "members"),
    uc_flips_to_change=_field(uc["reverse"], "upper"),
    uc_flips_lower=_field(uc["reverse"], "lower"),
    uc_flips=_field(uc["reverse"], "changes"),
    uc_removals_to_change=_field(uc["remove"], "upper"),
    uc_removals_lower=_field(uc["remove"], "lower"),
    uc_removals=_field(uc["remove"], "changes"),
    agents=tuple(agents),
    estimator=estimator,
    relation=relation,
  )


MODEL_RELATION = "model, imputed pairs held fixed"
"""The :attr:`VoteRobustness.relation` of the model estimator (module docstring)."""


def _as_model(estimator: Any) -> ModelEstimator | None:
  try:
    resolved = as_estimator(estimator)
  except (TypeError, ValueError):
    return None
  return resolved if isinstance(resolved, ModelEstimator) else None


def _model_robustness(
  data: Any,
  est: ModelEstimator,
  fitted: FittedTournament | None,
  uncovered: bool = False,
  uc_time_limit: float = 5.0,
) -> VoteRobustness:
  """:func:`vote_robustness` of the model's hard relation, imputed pairs held fixed."""
  if not isinstance(data, Comparisons):
    raise InputError(
      "data: the model estimator's vote robustness needs the comparisons (the model is fitted "
      f"on them), got {type(data).__name__}."
    )
  if fitted is None:
    raise OptionError(
      "fitted: the model estimator's vote robustness is that of a fit: pass "
      "fitted=estimator.fit(key, data)."
    )
  counts = pair_counts(data, tie_policy="half")
  W = decisive_wins(counts, "half")
  observed = np.asarray(counts.totals) > 0
  weak, strict = (np.asarray(r, dtype=bool) for r in est.hard_relations(fitted.edges))
  found = {action: held_relation_changes(W, weak, observed, action)[1:] for action in ACTIONS}
  uc = {
    action: held_uncovered_changes(W, strict, observed, action, time_limit=uc_time_limit)
    if uncovered
    else None
    for action in ACTIONS
  }
  return _result(top_cycle_of(weak), found, uc, data.agents, est.name, MODEL_RELATION)


ACTIONS = ("reverse", "remove")


def held_relation_changes(
  W: np.ndarray, edge: np.ndarray, observed: np.ndarray, action: str = "reverse"
) -> tuple[np.ndarray, np.ndarray, tuple[tuple[Flip, ...], ...]]:
  """Top-Cycle vote robustness of a relation with its uncompared pairs held fixed.

  ``edge`` holds while no vote changes; a compared pair whose votes change is decided by its
  record, ``a -> b`` iff ``M'_ab >= 0`` (module docstring;
  :func:`~ste_jax.evaluate._vote_costs.held_relation_costs`).

  Args:
    W: ``(n, n)`` int decisive wins.
    edge: ``(n, n)`` bool relation (zero diagonal).
    observed: ``(n, n)`` bool symmetric, the compared pairs.
    action: ``"reverse"`` or ``"remove"``.

  Returns:
    ``(members, changes_to_change, changes)``: the Top Cycle of ``edge``, the fewest changes per
    agent (``-1``: none, or joining an empty Top Cycle), and the changes achieving it.
  """
  n = W.shape[0]
  members = top_cycle_of(edge)
  create, remove, create_from, remove_from = held_relation_costs(W, edge, observed, 0, action)
  result = np.full(n, -1, dtype=np.int64)
  witnesses: list[tuple[Flip, ...]] = [()] * n
  if members.any() and not members.all():
    _join(edge, create, members, result, witnesses, create_from)
  _leave_all(edge, remove, members, result, witnesses, remove_from)
  return members, result, tuple(witnesses)


def _field(changes: Any, name: str) -> Any:
  """A field of an :class:`~ste_jax.evaluate._uncovered_robustness.UncoveredChanges`, or None."""
  return None if changes is None else getattr(changes, name)


def counts_relation_of(estimator: Any) -> int | None:
  """The margin threshold ``c`` of a count-based estimator's relation, or ``None`` for others.

  Args:
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` or a registry name.

  Returns:
    ``0`` (``winrate`` with ``missing = 1/2``), ``1`` (``posterior``) or ``None``.
  """
  try:
    resolved = as_estimator(estimator)
  except (TypeError, ValueError):
    return None
  if type(resolved) not in _THRESHOLD or getattr(resolved, "missing", 0.5) != 0.5:
    return None
  return _THRESHOLD[type(resolved)]


def _estimator_settings(estimator: Any, tie_policy: str | None) -> tuple[str, int, str]:
  """``(name, margin threshold, tie policy)`` of a count-based estimator (or its registry name)."""
  try:
    resolved = as_estimator(estimator)
  except (TypeError, ValueError):
    resolved = None
  if type(resolved) not in _THRESHOLD:
    raise OptionError(f"estimator must be 'winrate' or 'posterior', got {estimator!r}.")
  if getattr(resolved, "missing", 0.5) != 0.5:
    raise OptionError(
      f"estimator.missing must be 0.5 for vote robustness, got {resolved.missing!r}."
    )
  if tie_policy is None:
    tie_policy = resolved.tie_policy
  return resolved.name, _THRESHOLD[type(resolved)], tie_policy


def _join(
  edge: np.ndarray,
  create: np.ndarray,
  members: np.ndarray,
  result: np.ndarray,
  witnesses: list,
  create_from: np.ndarray | None = None,
) -> None:
  """Fills ``result``/``witnesses`` of the outsiders: one multi-source Dijkstra to the Top Cycle.

  ``create_from[u, v]``: the agent whose wins are changed to create ``u -> v`` (default ``v``).
  """
  n = edge.shape[0]
  if create_from is None:
    create_from = np.broadcast_to(np.arange(n)[None, :], (n, n))
  cost = np.where(edge, 0, create)
  usable = cost >= 0
  # Scaled weights: n * cost + 1 > 0 keeps zero-cost edges; floor(dist / n) is the cost.
  weights = np.where(usable, cost * n + 1, 0).astype(np.float64)
  reverse = csr_matrix(weights.T)
  dist, pred, _ = dijkstra(
    reverse,
    directed=True,
    indices=np.flatnonzero(members),
    return_predecessors=True,
    min_only=True,
  )
  for x in np.flatnonzero(~members & np.isfinite(dist)):
    flips = []
    u = int(x)
    while not members[u]:
      v = int(pred[u])
      if not edge[u, v]:
        winner = int(create_from[u, v])
        flips.append((winner, u + v - winner, int(create[u, v])))
      u = v
    result[x] = int(dist[x]) // n
    witnesses[x] = tuple(flips)


def _leave_all(
  edge: np.ndarray,
  remove: np.ndarray,
  members: np.ndarray,
  result: np.ndarray,
  witnesses: list,
  remove_from: np.ndarray | None = None,
) -> None:
  """Fills ``result``/``witnesses`` of the members: ``min_{t != m}`` of the ``m``-``t`` cut.

  ``remove_from[u, v]``: the agent whose wins are changed to remove ``u -> v`` (default ``u``).

  Exact with pruning: ``lambda(m, t) >= min(lambda(m, z), lambda(z, t))`` (an ``m``-``t`` cut
  separates ``m`` from ``z`` or ``z`` from ``t``), and ``lambda(z, t) >= f(z)`` once ``z``'s
  minimum ``f(z)`` is known; a flow ``m``-``t`` is run only while that bound is below the best
  cut found (started at the one-agent cuts ``{m}`` and ``V - {t}``).
  """
  n = edge.shape[0]
  finite = np.where(edge & (remove >= 0), remove, 0)
  big = int(finite.sum()) + 1
  cap = np.where(edge, np.where(remove >= 0, remove, big), 0).astype(np.int64)
  graph = csr_matrix(cap.astype(np.int32))
  lower = np.zeros((n, n))  # lower[z, t] <= lambda(z, t)
  done = np.zeros(n, dtype=bool)
  into = cap.sum(axis=0)
  for m in np.flatnonzero(members):
    out_m = int(cap[m].sum())
    others = np.flatnonzero(np.arange(n) != m)
    t_in = int(others[np.argmin(into[others])])
    if out_m <= into[t_in]:
      best, inside = out_m, np.arange(n) == m
    else:
      best, inside = int(into[t_in]), np.arange(n) != t_in
    bound = np.zeros(n)
    bound[m] = np.inf
    while True:
      open_ = bound < best
      if not open_.any():
        break
      rows = open_ & done
      t = int(np.flatnonzero(rows)[0] if rows.any() else np.argmin(np.where(open_, bound, np.inf)))
      flow = maximum_flow(graph, int(m), t)
      value = int(flow.flow_value)
      lower[m, t] = value
      bound[t] = np.inf
      if value < best:
        residual = cap - flow.flow.toarray()
        side = breadth_first_order(
          csr_matrix(residual > 0), int(m), directed=True, return_predecessors=False
        )
        best, inside = value, np.isin(np.arange(n), side)
      if done[t]:
        bound = np.maximum(bound, np.minimum(value, lower[t]))
    done[m] = True
    lower[m] = np.maximum(lower[m], best)
    if best >= big:
      continue
    cut = np.argwhere(edge & inside[:, None] & ~inside[None, :])
    result[m] = best
    if remove_from is None:
      witnesses[m] = tuple((int(u), int(v), int(remove[u, v])) for u, v in cut)
    else:
      witnesses[m] = tuple(
        (int(remove_from[u, v]), int(u + v - remove_from[u, v]), int(remove[u, v])) for u, v in cut
      )
