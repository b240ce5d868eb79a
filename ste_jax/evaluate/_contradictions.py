"""Head-to-head records that contradict a table's tournament (model misfit on observed pairs).

The model estimator (:mod:`ste_jax.evaluate._model_estimator`) predicts every pair from a global
low-rank fit chosen by cross-validation. A cycle confined to a few well-observed pairs (three
leaders who beat each other in a circle) barely moves the held-out likelihood of a large league,
so cross-validation keeps plain Bradley-Terry and the table orders those leaders transitively,
sometimes against a lopsided direct record. Nothing in the table would show it. This module finds
those pairs so the report can say so.

*Test.* For an observed unordered pair whose displayed tournament says ``x`` beats ``y`` with
probability ``P[x, y] > 1/2``, the null hypothesis is that the table is right about the pair: ``y``
wins each game with probability at most ``q = 1 - P[x, y]``. The one-sided binomial test's p-value
is the chance that ``y`` wins at least ``w_y`` of the ``t`` games at that rate:

.. math::

   p = \\Pr[\\mathrm{Bin}(t, q) \\ge w_y] = I_{q}(w_y,\\ t - w_y + 1)\\qquad (w_y > 0),

the regularized incomplete beta function, which extends the binomial tail continuously to the
half wins of ties and to weighted rows. The p-values of all observed pairs (pairs exactly at
``1/2`` are skipped: the table takes no side; optionally only pairs among a given set of agents,
e.g. the top of the table) are thresholded by the Benjamini-Hochberg step-up
rule at false-discovery rate ``q_{FDR}``, and the rejected pairs whose record also has the
majority against the table (``w_y > t / 2``) are reported: among them, at most a share
``q_{FDR}`` are expected to be pairs the table gets right. Testing at the table's own probability
rather than at ``1/2`` is what makes a lopsided record count against a confident table (``y``
winning 14 of 15 when the table gives it 0.3) even in a league of thousands of pairs; ``P`` is
itself fitted to the data, which pulls it toward the record, so the test errs on the side of
silence.

Eager NumPy/SciPy on concrete arrays; it runs once per report.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import special

from ste_jax._results import result_type
from ste_jax.evaluate._head_to_head import records_and_tournament

_MAX_LISTED = 3  # contradictions spelled out in the warning line


@result_type
class Contradiction:
  """One observed pair whose record contradicts the table's tournament.

  Attributes:
    winner: agent with the better head-to-head record (the table says it loses).
    loser: the other agent (the table says it wins).
    record_wins: ``winner``'s (weighted) wins against ``loser``; ties count 1/2.
    games: their (weighted) comparisons.
    table_probability: the table's ``P[loser, winner]`` (``> 1/2``).
    p_value: one-sided binomial-test p-value of the record at the table's probability.
  """

  winner: str
  loser: str
  record_wins: float
  games: float
  table_probability: float
  p_value: float


def head_to_head_contradictions(
  wins: npt.ArrayLike,
  tournament: npt.ArrayLike,
  *,
  agents: Sequence[str] | None = None,
  fdr: float = 0.05,
  among: npt.ArrayLike | None = None,
) -> tuple[Contradiction, ...]:
  """Observed pairs whose direct record significantly contradicts the tournament's orientation.

  Args:
    wins: ``(n, n)`` nonnegative weighted wins, ``wins[a, b]`` = games ``a`` won against ``b``
      (ties counted 1/2 each way; the ``wins`` of :func:`ste_jax.data.pair_counts`).
    tournament: ``(n, n)`` the table's win probabilities (e.g. the model's ``P̂``).
    agents: optional ``n`` names (default the indices as strings).
    fdr: Benjamini-Hochberg false-discovery rate in ``(0, 1)``.
    among: optional ``(n,)`` bool mask: only pairs of two agents in the mask are tested (they form
      the Benjamini-Hochberg family). The leaderboard passes the top of its table, where a
      contradiction bears on the core and the family is small enough for a 10-0 record to count.

  Returns:
    The contradictions, most significant first (empty when none passes the threshold).

  Raises:
    ValueError: naming the argument, for mismatched or non-square shapes, negative or non-finite
      wins, a tournament with values outside ``[0, 1]``, ``fdr`` outside ``(0, 1)``, ``agents``
      of the wrong length or ``among`` not a boolean mask of one entry per agent.

  Examples:
    >>> import numpy as np
    >>> wins = np.array([[0, 2], [18, 0]])  # b beat a 18-2 ...
    >>> P = np.array([[0.5, 0.7], [0.3, 0.5]])  # ... but the table says a beats b
    >>> c, = head_to_head_contradictions(wins, P, agents=["a", "b"])
    >>> c.winner, c.loser, c.record_wins, c.games, round(c.p_value, 9)  # Pr[Bin(20, 0.3) >= 18]
    ('b', 'a', 18.0, 20.0, 3.8e-08)
  """
  w, P = records_and_tournament(wins, tournament)
  if not np.all((P >= 0) & (P <= 1)):
    raise ValueError("tournament must hold probabilities in [0, 1] (no NaN).")
  if isinstance(fdr, bool) or not isinstance(fdr, (int, float, np.floating)) or not 0 < fdr < 1:
    raise ValueError(f"fdr must be a number in (0, 1), got {fdr!r}.")
  n = w.shape[0]
  names = tuple(str(i) for i in range(n)) if agents is None else tuple(agents)
  if len(names) != n:
    raise ValueError(f"agents must hold {n} names, got {len(names)}.")

  if among is None:
    member = np.ones(n, dtype=bool)
  else:
    member = np.asarray(among)
    if member.shape != (n,) or member.dtype != bool:
      raise ValueError(
        f"among must be a boolean mask of shape ({n},), got {member.dtype} {member.shape}."
      )
  i, j = np.triu_indices(n, k=1)
  games = w[i, j] + w[j, i]
  decided = (games > 0) & (P[i, j] != 0.5) & member[i] & member[j]
  i, j, games = i[decided], j[decided], games[decided]
  # Orient every pair as the table does: x = the table's winner, y = the other.
  x = np.where(P[i, j] > 0.5, i, j)
  y = np.where(P[i, j] > 0.5, j, i)
  w_y = w[y, x]
  q = P[y, x]
  p = np.where(w_y > 0, special.betainc(np.maximum(w_y, 1e-300), games - w_y + 1, q), 1.0)
  m = p.size
  if m == 0:
    return ()
  order = np.argsort(p, kind="stable")
  passed = p[order] <= fdr * np.arange(1, m + 1) / m
  k = int(np.flatnonzero(passed)[-1]) + 1 if passed.any() else 0
  return tuple(
    Contradiction(
      winner=names[y[t]],
      loser=names[x[t]],
      record_wins=float(w_y[t]),
      games=float(games[t]),
      table_probability=float(P[x[t], y[t]]),
      p_value=float(p[t]),
    )
    for t in order[:k]
    if 2 * w_y[t] > games[t]
  )


def contradiction_warning(
  contradictions: Sequence[Contradiction], *, fdr: float, remedy: str, family: str = ""
) -> str | None:
  """One warning line listing the first contradictions, or ``None`` when there are none."""
  if not contradictions:
    return None
  shown = "; ".join(
    f"{c.winner} beat {c.loser} {c.record_wins:g} of {c.games:g} but the table has P({c.loser} "
    "beats "
    f"{c.winner}) = {c.table_probability:.2f}"
    for c in contradictions[:_MAX_LISTED]
  )
  more = (
    f" (and {len(contradictions) - _MAX_LISTED} more)" if len(contradictions) > _MAX_LISTED else ""
  )
  k = len(contradictions)
  where = f" {family}" if family else ""
  return (
    f"{k} observed pair{'s' if k > 1 else ''}{where} contradict{'' if k > 1 else 's'} the table's "
    "tournament "
    f"(one-sided binomial test at the table's probability, Benjamini-Hochberg FDR {fdr:g}): "
    f"{shown}{more}; the fitted model smooths "
    f"over these head-to-head records; {remedy}"
  )
