"""The head-to-head crosstable of a table's first rows: the direct records behind the top.

On sparse data the top of a core table rests on a fitted model (it predicts the pairs never
compared) and on bootstrap shares that say the top is unsettled. What an analyst checks next is the
evidence itself: which of the leading agents have met, how often, and who won -- the crosstable
chess tournaments print. A leader that never met the others, or a circle of direct wins the model
orders transitively, shows here and nowhere in the scores.

Eager NumPy on concrete arrays, once per report.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ste_jax._results import result_type

DEFAULT_ROWS = 10
"""Table rows in the crosstable by default (``CoreTable.head_to_head``, ``--head-to-head``)."""


@result_type
class HeadToHead:
  """The direct records among ``k`` agents (a table's first ``k`` rows, in table order).

  Attributes:
    agents: the ``k`` agent names, in table order (agent ``i`` is the table's row ``i + 1``).
    wins: ``(k, k)`` ``wins[i, j]`` = weighted games agent ``i`` won against agent ``j`` (a tie
      counts 1/2 to each side under the tie policy ``half``; zero diagonal).
    games: ``(k, k)`` symmetric weighted games between the two (``wins + wins.T``).
    probability: ``(k, k)`` the table's tournament ``P`` restricted to these agents.
  """

  agents: tuple[str, ...]
  wins: np.ndarray
  games: np.ndarray
  probability: np.ndarray

  @property
  def compared(self) -> np.ndarray:
    """``(k, k)`` bool: the pair met at least once (off the diagonal)."""
    return (self.games > 0) & ~np.eye(len(self.agents), dtype=bool)

  @property
  def against_table(self) -> np.ndarray:
    """``(k, k)`` bool: ``i`` leads its record against ``j`` but the table has ``P[i, j] < 1/2``.

    Marks the records whose majority the table's tournament reverses (the model smoothing over a
    head-to-head result); not a test -- :func:`~ste_jax.evaluate.head_to_head_contradictions` tests.
    """
    return (self.wins > self.wins.T) & (self.probability < 0.5)

  def summary(self) -> str:
    """One line: pairs compared among the ``k`` agents and records against the table."""
    k = len(self.agents)
    pairs = k * (k - 1) // 2
    met = int(np.triu(self.compared, 1).sum())
    games = self.games[np.triu(self.compared, 1)]
    line = f"{met} of {pairs} pairs compared"
    if met:
      line += f" ({np.median(games):g} games per compared pair, median)"
    against = int(self.against_table.sum())
    if against:
      line += f"; {against} record{'s' * (against != 1)} led by the agent the table has losing (!)"
    return line

  def to_dict(self) -> dict:
    """JSON-ready: the names and the three matrices as nested lists of floats."""
    return {
      "agents": list(self.agents),
      "wins": self.wins.tolist(),
      "games": self.games.tolist(),
      "probability": self.probability.tolist(),
    }


def records_and_tournament(
  wins: npt.ArrayLike, tournament: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
  """``(wins, tournament)`` as float64 NumPy arrays, checked: square, same shape, wins finite, >= 0.

  Shared by the crosstable and :func:`~ste_jax.evaluate.head_to_head_contradictions`.

  Raises:
    ValueError: naming the argument.
  """
  w = np.asarray(wins, dtype=np.float64)
  P = np.asarray(tournament, dtype=np.float64)
  if w.ndim != 2 or w.shape[0] != w.shape[1]:
    raise ValueError(f"wins must be a square (n, n) matrix, got shape {w.shape}.")
  if P.shape != w.shape:
    raise ValueError(f"tournament must have the shape of wins {w.shape}, got {P.shape}.")
  if not np.all(np.isfinite(w)) or np.any(w < 0):
    raise ValueError("wins must be finite and nonnegative.")
  return w, P


def head_to_head(
  wins: npt.ArrayLike,
  tournament: npt.ArrayLike,
  order: npt.ArrayLike,
  agents: Sequence[str],
  k: int,
) -> HeadToHead:
  """The :class:`HeadToHead` of the first ``k`` agents of ``order``.

  Args:
    wins: ``(n, n)`` weighted wins, ``wins[a, b]`` = games ``a`` won against ``b`` (the ``wins`` of
      :func:`ste_jax.data.pair_counts`).
    tournament: ``(n, n)`` the table's win probabilities.
    order: ``(n,)`` the table's row order (agent indices).
    agents: ``n`` agent names.
    k: how many rows, ``>= 0`` (at most ``n`` are taken).

  Returns:
    The crosstable of agents ``order[:k]``.

  Raises:
    ValueError: naming the argument, for non-square or mismatched matrices, negative or non-finite
      wins, an ``order`` that is not a permutation of the agents, or ``k < 0``.

  Examples:
    >>> import numpy as np
    >>> wins = np.array([[0, 2, 0], [1, 0, 3], [0, 0, 0]])  # 0 beat 1 2-1; 1 beat 2 3-0
    >>> P = np.array([[.5, .6, .7], [.4, .5, .8], [.3, .2, .5]])
    >>> h = head_to_head(wins, P, order=[1, 0, 2], agents=["a", "b", "c"], k=2)
    >>> h.agents, h.wins.tolist()
    (('b', 'a'), [[0.0, 1.0], [2.0, 0.0]])
    >>> h.summary()
    '1 of 1 pairs compared (3 games per compared pair, median)'
  """
  w, P = records_and_tournament(wins, tournament)
  n = w.shape[0]
  order = np.asarray(order)
  if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
    raise ValueError(f"order must be a permutation of the {n} agents' indices.")
  if len(agents) != n:
    raise ValueError(f"agents must hold {n} names, got {len(agents)}.")
  if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
    raise ValueError(f"k must be a nonnegative integer, got {k!r}.")
  idx = order[:k]
  sub = np.ix_(idx, idx)
  w = w[sub] * ~np.eye(idx.size, dtype=bool)
  return HeadToHead(
    agents=tuple(str(agents[i]) for i in idx), wins=w, games=w + w.T, probability=P[sub]
  )
