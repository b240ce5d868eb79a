"""Witnesses for hard core membership: majority paths and covers (paper §1, "witnesses").

An agent is in the Top Cycle (Smith set) iff it reaches every other agent through the weak
majority relation, and it is in the Uncovered Set iff no agent covers it. These functions return
the certificates behind those facts, so that a report can *show* why an agent is (not) in a core:

* :func:`majority_reach_tree`: a breadth-first tree of majority wins (``P > 1/2``) from one agent,
  falling back to a tie (``P = 1/2``) only where no chain of strict wins gets further; the path to
  each reached agent is read off with :func:`witness_path`.
* :func:`coverers`: the agents that cover a given agent (beat it and everyone it beats).
* :func:`cover_refutations`: for an uncovered agent, why each agent that beats it fails to cover it.

All functions are pure NumPy on a concrete ``(n, n)`` tournament (witnesses are printed, not
differentiated) and use the conventions of :mod:`ste_jax.exact`: strict majority is ``P > 1/2``.
"""

import jax
import numpy as np


def _majority(P) -> tuple[np.ndarray, np.ndarray]:
  """``(strict, tie)`` Boolean ``(n, n)`` relations of a concrete tournament, diagonal cleared."""
  P = np.asarray(P, dtype=np.float64)
  if P.ndim != 2 or P.shape[0] != P.shape[1]:
    raise ValueError(f"P must have shape (n, n); got {P.shape}.")
  off = ~np.eye(P.shape[0], dtype=bool)
  return (P > 0.5) & off, (P == 0.5) & off


def _check_agent(agent, n: int) -> int:
  agent = int(agent)
  if not 0 <= agent < n:
    raise ValueError(f"agent index {agent} out of range for {n} agents.")
  return agent


def majority_reach_tree(P: jax.typing.ArrayLike, source: int) -> tuple[np.ndarray, np.ndarray]:
  """Breadth-first tree of majority wins from ``source``, with ties only as a last resort.

  Level-synchronous BFS over strict wins (``P[u, v] > 1/2``): the frontier's out-neighbours are
  found with one Boolean matrix product per level. When strict wins reach no further, one step
  over ties (``P[u, v] = 1/2``) is allowed from every agent reached so far, and the strict BFS
  resumes. The resulting paths therefore use as few ties as this greedy order allows, and none
  at all for agents reachable by strict wins; the set of reached agents is exactly the weak
  majority closure, so ``source`` is in the Top Cycle (Smith set) iff every agent is reached.

  Args:
    P: ``(n, n)`` concrete probabilistic tournament.
    source: the agent index the paths start from.

  Returns:
    ``(parent, via_tie)``: int ``(n,)`` with ``parent[v]`` the predecessor of ``v`` on its path
    (``-1`` for ``source`` and for unreached agents), and Boolean ``(n,)``, ``True`` where the
    edge ``parent[v] -> v`` is a tie rather than a strict win.

  Examples:
    >>> P = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])  # 0 > 1 > 2 > 0
    >>> majority_reach_tree(P, 0)[0].tolist()
    [-1, 0, 1]
  """
  strict, tie = _majority(P)
  n = strict.shape[0]
  source = _check_agent(source, n)
  parent = np.full(n, -1, dtype=np.int64)
  via_tie = np.zeros(n, dtype=bool)
  reached = np.zeros(n, dtype=bool)
  reached[source] = True
  frontier = reached.copy()
  while True:
    while frontier.any():
      rows = np.flatnonzero(frontier)
      hits = strict[rows] & ~reached  # (frontier, n)
      new = hits.any(axis=0)
      parent[new] = rows[np.argmax(hits[:, new], axis=0)]
      reached |= new
      frontier = new
    rows = np.flatnonzero(reached)
    hits = tie[rows] & ~reached
    new = hits.any(axis=0)
    if not new.any():
      return parent, via_tie
    parent[new] = rows[np.argmax(hits[:, new], axis=0)]
    via_tie[new] = True
    reached |= new
    frontier = new


def witness_path(parent: np.ndarray, source: int, target: int) -> list[int]:
  """The path ``[source, ..., target]`` in a :func:`majority_reach_tree` parent array.

  Args:
    parent: the ``parent`` array of ``majority_reach_tree(P, source)``.
    source: the tree's root.
    target: an agent index.

  Returns:
    The agent indices from ``source`` to ``target`` (``[source]`` when they are equal), or ``[]``
    when ``target`` is not reached.
  """
  parent = np.asarray(parent)
  n = parent.shape[0]
  source, target = _check_agent(source, n), _check_agent(target, n)
  path = [target]
  while path[-1] != source:
    nxt = int(parent[path[-1]])
    if nxt < 0:
      return []
    path.append(nxt)
    if len(path) > n:
      raise ValueError("parent array has a cycle.")
  path.reverse()
  return path


def reached_agents(parent: np.ndarray, source: int) -> np.ndarray:
  """Boolean ``(n,)`` mask of the agents in the tree of ``source`` (``source`` included)."""
  parent = np.asarray(parent)
  reached = parent >= 0
  reached[_check_agent(source, parent.shape[0])] = True
  return reached


def coverers(P: jax.typing.ArrayLike, agent: int) -> np.ndarray:
  """The agents that cover ``agent`` (paper Definition "Covering Relation").

  ``c`` covers ``a`` iff ``c`` strictly beats ``a`` and strictly beats every agent that ``a``
  strictly beats. ``agent`` is in the Uncovered Set iff the result is empty.

  Args:
    P: ``(n, n)`` concrete probabilistic tournament.
    agent: the index ``a``.

  Returns:
    Boolean ``(n,)`` mask of the coverers of ``agent``.
  """
  strict, _ = _majority(P)
  a = _check_agent(agent, strict.shape[0])
  beaten = strict[a]  # everyone a beats
  return strict[:, a] & ~np.any(beaten[None, :] & ~strict, axis=1)


def cover_refutations(P: jax.typing.ArrayLike, agent: int) -> np.ndarray:
  """For each agent ``c`` that beats ``agent``, an agent ``agent`` beats and ``c`` does not.

  Such a ``b`` shows that ``c`` does not cover ``agent``: ``agent > b`` but not ``c > b``. For an
  uncovered agent every ``c`` that beats it has one; together with a direct win or tie against
  every other ``c`` this is the two-step witness of membership in the Uncovered Set.

  Args:
    P: ``(n, n)`` concrete probabilistic tournament.
    agent: the index ``a``.

  Returns:
    int ``(n,)``: ``b`` for each ``c`` with ``P[c, a] > 1/2`` that does not cover ``a``; ``-1``
    for agents that do not beat ``a`` and for the coverers of ``a``.
  """
  strict, _ = _majority(P)
  a = _check_agent(agent, strict.shape[0])
  gaps = strict[a][None, :] & ~strict  # gaps[c, b]: a beats b, c does not
  has = gaps.any(axis=1) & strict[:, a]
  return np.where(has, np.argmax(gaps, axis=1), -1)
