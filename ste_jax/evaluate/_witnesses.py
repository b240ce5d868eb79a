"""Witnesses for ``ste-jax explain``: majority-win chains from an agent, its coverers, refutations,
the maximal lottery that excludes it from the bipartisan and essential sets, the member of the
minimal covering set that covers it there, and the chain of strict wins from a Schwartz-set member
that keeps it out of the Schwartz set."""

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import _tuning, exact

# Maximal-lottery witnesses only up to this n: the interior-point solve costs O(n^3) per step.
LOTTERY_WITNESS_MAX_AGENTS = _tuning.LOTTERY_WITNESS_MAX_AGENTS
_LOTTERY_SHOWN = 6  # support entries spelled out


def witness_report(
  P: jax.typing.ArrayLike,
  games: jax.typing.ArrayLike,
  agents: Sequence[str],
  index: int,
  *,
  ties_connect: bool = True,
) -> dict:
  """Why agent ``index`` is or is not in the hard Top Cycle and Uncovered Set of ``P``.

  Args:
    P: ``(n, n)`` win-rate tournament.
    games: ``(n, n)`` comparisons per pair.
    agents: the agent names.
    index: the agent to explain.
    ties_connect: whether a tie (``P = 1/2``, e.g. an unobserved pair) links its agents both ways
      (win-rate and model tournaments: the Smith set) or not at all (the posterior-edge estimator,
      where such a pair has no edge).

  Returns:
    A JSON-ready dict: ``in_top_cycle``, ``in_uncovered_set``; ``chains`` (root-to-leaf paths of
    the majority-win tree from the agent, each a list of steps ``{"agent", "p", "games", "tie"}``,
    the first step being the agent itself), ``unreached`` (agents no chain reaches, Top-Cycle
    members first); ``coverers`` (each with the agents it beats that the explained agent beats)
    and ``refutations`` (for each agent that beats it without covering it, an agent it beats that
    the other does not beat); ``lotteries`` (:func:`lottery_witnesses`, empty above
    ``LOTTERY_WITNESS_MAX_AGENTS`` agents); ``minimal_covering`` (:func:`covering_set_witness`,
    ``None`` above that size); ``schwartz`` (:func:`schwartz_set_witness`).
  """
  P = np.asarray(P, dtype=np.float64)
  games = np.asarray(games, dtype=np.float64)
  n = P.shape[0]
  if not ties_connect:  # a tie becomes "no edge either way": neither strict nor a tie
    P = np.where((P == 0.5) & ~np.eye(n, dtype=bool), 0.0, P)
  off = ~np.eye(n, dtype=bool)
  weak = ((P > 0.5) | ((P == 0.5) & ties_connect)) & off
  hard_tc = np.asarray(exact.reach_all(weak))
  hard_uc = np.asarray(exact.uncovered_in_relation((P > 0.5) & off))
  parent, via_tie = exact.majority_reach_tree(P, index)
  reached = exact.reached_agents(parent, index)
  is_parent = np.zeros(n, dtype=bool)
  is_parent[parent[parent >= 0]] = True
  leaves = [v for v in range(n) if reached[v] and not is_parent[v] and v != index]

  def step(u, v):
    return {
      "agent": agents[v],
      "p": float(P[u, v]),
      "games": float(games[u, v]),
      "tie": bool(via_tie[v]),
    }

  chains = []
  for leaf in sorted(
    leaves, key=lambda v: [agents[u] for u in exact.witness_path(parent, index, v)]
  ):
    path = exact.witness_path(parent, index, leaf)
    chains.append([{"agent": agents[index]}] + [step(u, v) for u, v in zip(path, path[1:])])
  unreached = sorted(np.flatnonzero(~reached), key=lambda v: (not hard_tc[v], agents[v]))
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  beaten = np.flatnonzero(strict[index])
  cov = exact.coverers(P, index)
  refute = exact.cover_refutations(P, index)
  return {
    "agent": agents[index],
    "in_top_cycle": bool(hard_tc[index]),
    "in_uncovered_set": bool(hard_uc[index]),
    "top_cycle": [agents[i] for i in np.flatnonzero(hard_tc)],
    "uncovered_set": [agents[i] for i in np.flatnonzero(hard_uc)],
    "chains": chains,
    "unreached": [agents[v] for v in unreached],
    "beats": [agents[b] for b in beaten],
    "coverers": [
      {
        "agent": agents[c],
        "p": float(P[c, index]),
        "also_beats": [{"agent": agents[b], "p": float(P[c, b])} for b in beaten],
      }
      for c in np.flatnonzero(cov)
    ],
    "refutations": [
      {
        "agent": agents[c],
        "p": float(P[c, index]),
        "misses": agents[refute[c]],
        "p_agent": float(P[index, refute[c]]),
        "p_other": float(P[c, refute[c]]),
      }
      for c in np.flatnonzero(refute >= 0)
    ],
    "lotteries": lottery_witnesses(P, agents, index) if n <= LOTTERY_WITNESS_MAX_AGENTS else [],
    "minimal_covering": covering_set_witness(P, agents, index)
    if n <= LOTTERY_WITNESS_MAX_AGENTS
    else None,
    "schwartz": schwartz_set_witness(P, games, agents, index),
  }


def schwartz_set_witness(
  P: jax.typing.ArrayLike, games: jax.typing.ArrayLike, agents: Sequence[str], index: int
) -> dict:
  """Schwartz-set (GOCHA) membership of one agent, with a chain of strict wins into it if it is out.

  The Schwartz set (:func:`~ste_jax.exact.schwartz_set`) is the union of the strongly connected
  components of the strict majority relation ``P > 1/2`` that no strict win enters from outside
  (ties, ``P = 1/2``, are no edge). ``x`` is out iff some ``y`` reaches ``x`` by a chain of strict
  wins while ``x`` reaches no chain of strict wins back to ``y``. Following such ``y`` upwards ends
  in a source component, so some member ``y`` of the set reaches ``x``; and ``x`` cannot reach any
  member that reaches it (it would share that member's component). The witness is the member
  nearest to ``x`` (:func:`~ste_jax.exact.majority_reach_tree` of the reversed strict relation),
  with its shortest chain.

  Args:
    P: ``(n, n)`` concrete tournament.
    games: ``(n, n)`` comparisons per pair.
    agents: the agent names.
    index: the agent to explain.

  Returns:
    ``{"set": [members], "in": bool, "chain": None or [steps]}``: for an agent outside the set,
    ``chain`` is the chain of strict wins from a member ``y`` to the agent in the Top-Cycle chains'
    step format (the first step ``{"agent": y}``, then ``{"agent", "p", "games", "tie": False}``);
    the agent reaches no chain of strict wins back to ``y``.
  """
  P = np.asarray(P, dtype=np.float64)
  games = np.asarray(games, dtype=np.float64)
  n = P.shape[0]
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  # A 0/1 copy of the strict relation: the same set in float32, with no rounding of P near 1/2.
  members = np.asarray(exact.schwartz_set(strict.astype(np.float32)))
  out = {
    "set": [agents[i] for i in np.flatnonzero(members)],
    "in": bool(members[index]),
    "chain": None,
  }
  if members[index]:
    return out
  # Chains of strict wins *into* the agent: the breadth-first tree of the reversed strict relation
  # (0/1 entries, so the tree takes no tie steps), whose paths from the agent are shortest.
  reverse = strict.T.astype(np.float64)
  np.fill_diagonal(reverse, 0.5)
  parent, _ = exact.majority_reach_tree(reverse, index)
  paths = [exact.witness_path(parent, index, int(y)) for y in np.flatnonzero(members)]
  paths = [q for q in paths if q]
  if not paths:  # unreachable for a consistent set; no witness claimed
    return out
  path = min(paths, key=lambda q: (len(q), q[-1]))[
    ::-1
  ]  # nearest member (lowest index on ties) -> agent
  out["chain"] = [{"agent": agents[path[0]]}] + [
    {"agent": agents[v], "p": float(P[u, v]), "games": float(games[u, v]), "tie": False}
    for u, v in zip(path, path[1:])
  ]
  return out


def covering_set_witness(P: jax.typing.ArrayLike, agents: Sequence[str], index: int) -> dict:
  """Minimal-covering-set membership of one agent, with the member covering it there if it is out.

  A covering set ``B`` (Dutta 1988) is externally stable: every outsider ``a`` is covered within
  ``B ∪ {a}`` by some ``c`` in ``B`` -- ``c`` beats ``a`` and beats every member of ``B`` that ``a``
  beats (strict majorities). That ``c`` is the witness of ``a``'s exclusion; the set is computed
  in float64 (:func:`~ste_jax.exact.minimal_covering_set`, which solves maximal-lottery LPs).

  Args:
    P: ``(n, n)`` concrete tournament.
    agents: the agent names.
    index: the agent to explain.

  Returns:
    ``{"set": [members], "in": bool, "coverer": None or {"agent", "p", "also_beats": [{"agent",
    "p"}]}}``: ``also_beats`` lists the set's members that the explained agent beats (each beaten
    by the coverer too, with the coverer's probability).
  """
  P = np.asarray(P, dtype=np.float64)
  n = P.shape[0]
  with jax.enable_x64(True):
    members = np.asarray(exact.minimal_covering_set(jnp.asarray(P, jnp.float64)))
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  out = {
    "set": [agents[i] for i in np.flatnonzero(members)],
    "in": bool(members[index]),
    "coverer": None,
  }
  if members[index]:
    return out
  beaten = members & strict[index]
  coverers = np.flatnonzero(members & strict[:, index] & np.all(strict[:, beaten], axis=1))
  if coverers.size:
    c = coverers[0]
    out["coverer"] = {
      "agent": agents[c],
      "p": float(P[c, index]),
      "also_beats": [{"agent": agents[b], "p": float(P[c, b])} for b in np.flatnonzero(beaten)],
    }
  return out


def lottery_witnesses(P: jax.typing.ArrayLike, agents: Sequence[str], index: int) -> list[dict]:
  """Bipartisan- and essential-set membership of one agent, with the maximal lottery as witness.

  For the majority margins ``sign(P - P^T)`` (bipartisan set) and the probability margins ``P -
  P^T`` (essential set), the maximum-entropy maximal lottery ``p`` is computed
  (:func:`~ste_jax.exact.maximal_lottery_with_support`, in float64). An agent ``a`` with expected
  margin ``m_a = sum_b p_b M[b, a] > 0`` against it is outside the support of *every* maximal
  lottery: for any maximal lottery ``q``, ``0 = p^T M q = sum_b q_b m_b >= q_a m_a`` (the game is
  symmetric with value 0 and ``m >= 0``), so ``q_a = 0``. That margin is the witness. Margins are
  computed in float64 from ``P``; ``optimal`` says whether ``min_b m_b >= -1e-6`` (``p`` is a
  maximal lottery up to rounding), without which the witness is not claimed.

  Args:
    P: ``(n, n)`` concrete tournament (float64).
    agents: the agent names.
    index: the agent to explain.

  Returns:
    One dict per set: ``set``, ``in`` (membership as the solver reports it), ``margin``
    (``m_index``), ``optimal``, ``witness`` (``True`` when ``optimal`` and the margin is ``> 1e-6``:
    the lottery beats the agent in expectation) and ``lottery`` (the largest probabilities,
    ``{"agent", "p"}``).
  """
  P = np.asarray(P, dtype=np.float64)
  out = []
  for name, majority in (("bipartisan", True), ("essential", False)):
    M = np.sign(P - P.T) if majority else P - P.T
    with jax.enable_x64(True):  # float32 misjudges supports beyond a few hundred agents
      p, support, _ = exact.maximal_lottery_with_support(jnp.asarray(M, jnp.float64))
      p, support = np.asarray(p, dtype=np.float64), np.asarray(support)
    margins = p @ M  # m_b = sum_a p_a M[a, b]
    scale = max(float(np.abs(M).max()), 1e-300)
    optimal = bool(margins.min() >= -1e-6 * scale)
    top = np.argsort(-p, kind="stable")[:_LOTTERY_SHOWN]
    out.append(
      {
        "set": name,
        "in": bool(support[index]),
        "margin": float(margins[index]),
        "optimal": optimal,
        "witness": optimal and bool(margins[index] > 1e-6 * scale),
        "lottery": [{"agent": agents[b], "p": float(p[b])} for b in top if p[b] > 0],
      }
    )
  return out
