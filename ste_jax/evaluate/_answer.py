"""The answer first: what a core table says about the top set, in one or two lines.

A core table answers "which agents form the top set (the Top Cycle)?" through a dozen columns and
a footer. On dense data the answer is a certified set; on sparse data it is "not settled", and the
table's first row can be an agent that few bootstrap replicas put on top. An analyst reads the
first lines of a report and stops, so :func:`top_answer` condenses the table into the statement
those lines must carry, in one of four cases (``status``):

* ``certified``: every agent's Top-Cycle verdict is ``in`` or ``out`` at the table's confidence:
  the Top Cycle is the ``in`` agents.
* ``partly certified``: some agents are certified ``in``, others undetermined.
* ``not settled``: no agent is certified ``in``. The answer names the agents most often in the
  replicas' hard Top Cycles, with their shares, as shares of replicas and nothing more: they are
  not probabilities of membership: an agent in the Top Cycle of at least half the replicas (where
  none was certified) is often outside the true Top Cycle (``python benchmarks/verdicts.py
  --estimators model`` measures how often) -- one upset between a core agent and an outsider puts
  the outsider in the sample's Top Cycle, and the bootstrap resamples around the sample. So no
  agent is called *likely*.
* ``point estimate``: no bootstrap replicas, so no statement of how sure: the point estimate's
  hard Top Cycle.

Except when certified, a second line gives the direct evidence behind the named agents: the
record of the first one against the other agents of the table's first rows, and how many pairs
among those rows (and among the named agents) ever met. On sparse data that is the line that
shows the top rests on the model pooling results against other opponents, not on games among the
leaders.

Eager NumPy on concrete arrays, once per report.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ste_jax._results import as_dict, result_type

from ._head_to_head import DEFAULT_ROWS

STATUSES = ("certified", "partly certified", "not settled", "point estimate")
NAMED = 3
"""Agents named by their share of replicas (``not settled``, or the undetermined ones)."""


@result_type
class TopAnswer:
  """What a core table says about its top set (see the module docstring for the four cases).

  Attributes:
    status: one of ``STATUSES``.
    members: the agents the answer names, first one first: the certified ``in`` agents in table
      order (``certified``, ``partly certified``), the ``NAMED`` agents most often in the
      replicas' hard Top Cycles by decreasing share (``not settled``), the point estimate's hard
      Top Cycle in table order (``point estimate``).
    shares: the share of replicas whose hard Top Cycle holds each of ``members`` (NaN without
      replicas).
    others: ``partly certified``: the ``NAMED`` undetermined agents most often in the replicas'
      Top Cycles, by decreasing share; else empty.
    other_shares: their shares.
    undetermined: number of agents whose verdict is undetermined.
    out: number of agents certified ``out``.
    confidence: the table's confidence.
    num_replicas: bootstrap replicas behind the shares and verdicts (``0``: none).
    rows: ``k``, the table's first rows the evidence is about.
    met: opponents of ``members[0]`` among the other first ``k`` rows it has met.
    opponents: the number of agents other than ``members[0]`` among the first ``k`` rows (``k``
      when it is not one of them).
    wins, games: its weighted wins and games against those it met (ties 1/2).
    pairs_compared, pairs: pairs among the first ``k`` rows that met, of ``k (k - 1) / 2``.
    member_pairs_compared, member_pairs: the same among ``members``.
  """

  status: str
  members: tuple[str, ...]
  shares: tuple[float, ...]
  others: tuple[str, ...]
  other_shares: tuple[float, ...]
  undetermined: int
  out: int
  confidence: float
  num_replicas: int
  rows: int
  met: int
  opponents: int
  wins: float
  games: float
  pairs_compared: int
  pairs: int
  member_pairs_compared: int
  member_pairs: int

  def lines(self) -> list[str]:
    """The answer as one or two lines of text (the first starts with ``answer:``; the second, the
    direct records, unless certified or with a single agent)."""
    return [_statement(self)] + (
      [] if self.status == "certified" or not self.pairs else [_evidence(self)]
    )

  def to_dict(self) -> dict:
    """JSON-ready: every field (NaN shares as ``None``) and the ``lines``."""
    d = as_dict(self)
    for key in ("shares", "other_shares"):
      d[key] = [None if np.isnan(x) else float(x) for x in d[key]]
    for key in ("members", "others"):
      d[key] = list(d[key])
    return d | {"lines": self.lines()}


def _set(names) -> str:
  return "{" + ", ".join(names) + "}"


def _listed(names, shares) -> str:
  return ", ".join(f"{a} {p:.2f}" for a, p in zip(names, shares))  # as the table's P(TC) column


def _statement(a: TopAnswer) -> str:
  c, r = f"{a.confidence:g}", a.num_replicas
  if a.status == "certified":
    return (
      f"answer: the Top Cycle is {_set(a.members)}, certified at {c} (every other agent is "
      "certified out, "
      f"{r} bootstrap replicas)"
    )
  if a.status == "partly certified":
    return (
      f"answer: the Top Cycle holds {_set(a.members)}, certified at {c}; {a.undetermined} agent"
      f"{'s' * (a.undetermined != 1)} undetermined (most often in the {r} replicas' Top Cycles, by "
      "P(TC): "
      f"{_listed(a.others, a.other_shares)}), {a.out} certified out"
    )
  if a.status == "not settled":
    return (
      f"answer: not settled at {c}: no agent is certified in the Top Cycle; most often in the hard "
      "Top "
      f"Cycles of the {r} bootstrap replicas, by P(TC): {_listed(a.members, a.shares)} (shares of "
      "replicas, not "
      "probabilities of membership)"
    )
  return (
    f"answer (point estimate, no bootstrap: how sure is not measured): the hard Top Cycle is "
    f"{_set(a.members)}"
  )


def _evidence(a: TopAnswer) -> str:
  first = a.members[0] if a.members else None
  parts = []
  if first is not None and a.opponents:
    record = f", {a.wins:g}-{a.games - a.wins:g} in all (ties 1/2)" if a.met else ""
    parts.append(
      f"{first} met {a.met} of the {a.opponents} other agents of the first {a.rows} rows{record}"
    )
  parts.append(f"{a.pairs_compared} of {a.pairs} pairs among the first {a.rows} rows compared")
  if a.member_pairs:
    parts.append(f"{a.member_pairs_compared} of {a.member_pairs} among the named agents")
  line = "direct records: " + "; ".join(parts)
  if a.status in ("partly certified", "not settled"):
    line += "; comparing the open pairs decides the top (ste-jax suggest proposes them)"
  return line


def top_answer(
  columns: dict[str, np.ndarray],
  agents: Sequence[str],
  order: npt.ArrayLike,
  wins: npt.ArrayLike,
  *,
  confidence: float,
  num_replicas: int,
  rows: int = DEFAULT_ROWS,
) -> TopAnswer:
  """The :class:`TopAnswer` of a core table's columns (see the module docstring).

  Args:
    columns: the table's columns: ``hard_tc`` ``(n,)`` bool, ``p_tc`` ``(n,)`` shares (NaN without
      replicas) and ``tc_verdict`` ``(n,)`` ``"in"`` / ``"out"`` / ``"undetermined"`` (``""``
      without replicas).
    agents: ``n`` names.
    order: ``(n,)`` the table's row order.
    wins: ``(n, n)`` weighted wins, ``wins[a, b]`` = games ``a`` won against ``b``.
    confidence: the verdicts' confidence (for the text).
    num_replicas: bootstrap replicas (``0``: none; then ``p_tc`` and the verdicts are ignored).
    rows: the table's first rows the evidence line is about (``>= 1``).

  Returns:
    The :class:`TopAnswer`.

  Examples:
    >>> import numpy as np
    >>> cols = {"hard_tc": np.array([True, False, False]), "p_tc": np.array([0.3, 0.2, 0.1]),
    ...         "tc_verdict": np.array(["undetermined"] * 3, dtype=object)}
    >>> wins = np.array([[0, 1, 0], [2, 0, 0], [0, 0, 0]])
    >>> a = top_answer(cols, ["a", "b", "c"], [0, 1, 2], wins, confidence=0.95, num_replicas=200)
    >>> a.status, a.members, a.met, a.wins, a.games
    ('not settled', ('a', 'b', 'c'), 1, 1.0, 3.0)
  """
  n = len(agents)
  if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
    raise ValueError(f"rows must be a positive integer, got {rows!r}.")
  order = np.asarray(order)
  w = np.asarray(wins, np.float64)
  if order.shape != (n,) or w.shape != (n, n):
    raise ValueError(
      f"order must have shape ({n},) and wins ({n}, {n}), got {order.shape} and {w.shape}."
    )
  hard = np.asarray(columns["hard_tc"], bool)
  p = np.asarray(columns["p_tc"], np.float64)
  verdict = np.asarray(columns["tc_verdict"], dtype=object)
  position = np.empty(n, np.int64)
  position[order] = np.arange(n)
  by_share = np.lexsort((position, -np.nan_to_num(p, nan=-1.0))) if num_replicas else order
  in_table_order = [int(i) for i in order]

  if not num_replicas:
    status, named = "point estimate", [i for i in in_table_order if hard[i]]
    others = []
  else:
    certified_in = [i for i in in_table_order if verdict[i] == "in"]
    undetermined = [i for i in by_share if verdict[i] == "undetermined"]
    if certified_in and not undetermined:
      status, named, others = "certified", certified_in, []
    elif certified_in:
      status, named, others = "partly certified", certified_in, undetermined[:NAMED]
    else:
      status, named, others = "not settled", [int(i) for i in by_share[:NAMED]], []

  first_rows = [int(i) for i in order[:rows]]
  met = games = won = 0
  opponents = 0
  if named:
    lead = int(named[0])
    opp = [i for i in first_rows if i != lead]
    opponents = len(opp)
    g = w[lead, opp] + w[opp, lead]
    met, games, won = int((g > 0).sum()), float(g.sum()), float(w[lead, opp].sum())

  def pairs_met(idx):
    idx = np.asarray(idx, np.int64)
    g = (w + w.T)[np.ix_(idx, idx)]
    return int(np.triu(g > 0, 1).sum()), idx.size * (idx.size - 1) // 2

  pairs_compared, pairs = pairs_met(first_rows)
  member_pairs_compared, member_pairs = pairs_met(named)
  share = (
    (lambda idx: tuple(float(p[i]) for i in idx))
    if num_replicas
    else (lambda idx: (float("nan"),) * len(idx))
  )
  return TopAnswer(
    status=status,
    members=tuple(str(agents[i]) for i in named),
    shares=share(named),
    others=tuple(str(agents[i]) for i in others),
    other_shares=share(others),
    undetermined=int(sum(v == "undetermined" for v in verdict)) if num_replicas else 0,
    out=int(sum(v == "out" for v in verdict)) if num_replicas else 0,
    confidence=float(confidence),
    num_replicas=int(num_replicas),
    rows=min(rows, n),
    met=met,
    opponents=opponents,
    wins=won,
    games=games,
    pairs_compared=pairs_compared,
    pairs=pairs,
    member_pairs_compared=member_pairs_compared,
    member_pairs=member_pairs,
  )
