"""How much evidence a comparison data set holds, with one-line warnings for thin or missing data.

:func:`evidence_diagnostics` reads the ``(n, n)`` table of comparisons per pair (the ``totals`` of
:func:`ste_jax.data.pair_counts`) and, optionally, the hard Top Cycle and the soft Top-Cycle
scores computed from it. It reports coverage (pairs observed, comparisons per pair and per agent),
the connected components of the comparison graph and a tuple of warnings a practitioner should
read before trusting a verdict:

1. *uninformative core*: the hard Top Cycle holds more than half of ``n >= 4`` agents while some
   pairs were never compared. A missing pair counts as an even ``1/2`` in the win-rate tournament,
   so with many missing pairs almost everyone reaches everyone and the core says little;
2. *plateau*: more than half of ``n >= 4`` agents share the highest soft Top-Cycle score (within
   ``1e-3``), so the scores do not separate the leaders. A plateau below the top is not flagged:
   when one agent stands above the rest (a Condorcet winner), all the others typically share one
   low score, bounded by the same weakest link to the winner, and that verdict is informative;
3. *disconnected comparison graph*: agents in different components were never linked by a chain
   of comparisons, so the data cannot order them;
4. *thin evidence*: more than 10% of the agents have fewer than ``min_games`` comparisons.

Everything here is eager NumPy (it runs once per report, on concrete arrays); the connected
components come from :func:`scipy.sparse.csgraph.connected_components`.
"""

from collections.abc import Sequence
import dataclasses
import math
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.sparse import csgraph

from ste_jax._results import as_dict

_MODEL_REMEDY = (
  "use --estimator model (a pairwise model pools evidence across pairs) or compare more pairs"
)
_MIN_CORE_AGENTS = 4  # warnings (1) and (2) need at least this many agents
_PLATEAU_TOL = 1e-3  # scores within this distance count as one plateau
_THIN_SHARE = 0.10  # warning (4) fires above this share of thin agents
_MAX_LISTED_SIZES = 8  # component sizes spelled out in warning (3)


@dataclasses.dataclass(frozen=True)
class EvidenceDiagnostics:
  """Output of :func:`evidence_diagnostics`: coverage of a comparison data set and its warnings.

  Attributes:
    num_agents: ``n``.
    num_pairs: ``n (n - 1) / 2`` unordered pairs.
    pairs_observed: unordered pairs with at least one comparison (``totals > 0``).
    share_pairs_observed: ``pairs_observed / num_pairs`` (NaN when ``n < 2``).
    comparisons_per_observed_pair: ``(min, median, max)`` of ``totals`` over the observed pairs,
      as floats; all NaN when no pair is observed.
    games_per_agent: ``(min, median)`` over the agents of the comparisons each agent took part in
      (the row sums of ``totals``).
    agents_below_min_games: names of the agents with fewer than ``min_games`` comparisons (their
      indices as strings when no names were given), in agent order.
    min_games: the threshold used for ``agents_below_min_games`` and warning (4).
    num_components: number of connected components of the comparison graph (an edge per pair with
      ``totals > 0``; an agent with no comparison is a component of its own).
    component_sizes: the components' sizes, largest first.
    connected: ``num_components == 1``.
    warnings: one-line warnings, each naming its cause with numbers and a remedy; empty when the
      data raise no concern.
    contradictions: observed pairs whose head-to-head record significantly contradicts the
      table's tournament (:func:`~ste_jax.evaluate.head_to_head_contradictions`; filled by the
      leaderboard, empty here).
  """

  num_agents: int
  num_pairs: int
  pairs_observed: int
  share_pairs_observed: float
  comparisons_per_observed_pair: tuple[float, float, float]
  games_per_agent: tuple[float, float]
  agents_below_min_games: tuple[str, ...]
  min_games: int | float
  num_components: int
  component_sizes: tuple[int, ...]
  connected: bool
  warnings: tuple[str, ...]
  contradictions: tuple = ()

  def to_dict(self) -> dict[str, Any]:
    """A JSON-ready dict of plain Python types (``json.dumps`` accepts it as is).

    Tuples become lists, ``comparisons_per_observed_pair`` becomes ``{"min", "median", "max"}``
    and ``games_per_agent`` becomes ``{"min", "median"}``; NaN becomes ``None`` (JSON ``null``).

    Returns:
      A dict with one key per attribute.
    """
    pair_min, pair_median, pair_max = self.comparisons_per_observed_pair
    games_min, games_median = self.games_per_agent
    return {
      "num_agents": self.num_agents,
      "num_pairs": self.num_pairs,
      "pairs_observed": self.pairs_observed,
      "share_pairs_observed": _json_float(self.share_pairs_observed),
      "comparisons_per_observed_pair": {
        "min": _json_float(pair_min),
        "median": _json_float(pair_median),
        "max": _json_float(pair_max),
      },
      "games_per_agent": {"min": _json_float(games_min), "median": _json_float(games_median)},
      "agents_below_min_games": list(self.agents_below_min_games),
      "min_games": self.min_games,
      "num_components": self.num_components,
      "component_sizes": list(self.component_sizes),
      "connected": self.connected,
      "warnings": list(self.warnings),
      "contradictions": [as_dict(c) for c in self.contradictions],
    }


def _json_float(x: float) -> float | None:
  """``x`` as a Python float, or ``None`` for NaN (JSON has no NaN)."""
  return None if math.isnan(x) else float(x)


def _check_totals(totals) -> np.ndarray:
  """``totals`` as a float64 NumPy matrix with a zero diagonal, or ValueError naming it."""
  t = np.asarray(totals)
  if t.dtype == object or not (np.issubdtype(t.dtype, np.number) or t.dtype == bool):
    raise ValueError(f"totals must be a real numeric array, got dtype {t.dtype}.")
  if np.issubdtype(t.dtype, np.complexfloating):
    raise ValueError(f"totals must be a real numeric array, got dtype {t.dtype}.")
  if t.ndim != 2 or t.shape[0] != t.shape[1]:
    raise ValueError(f"totals must be a square matrix of shape (n, n); got shape {t.shape}.")
  if t.shape[0] == 0:
    raise ValueError("totals must describe at least one agent; got shape (0, 0).")
  t = t.astype(np.float64)
  if not np.all(np.isfinite(t)):
    i, j = np.argwhere(~np.isfinite(t))[0]
    raise ValueError(f"totals must be finite; totals[{i}, {j}] = {t[i, j]}.")
  if np.any(t < 0):
    i, j = np.argwhere(t < 0)[0]
    raise ValueError(f"totals must be >= 0; totals[{i}, {j}] = {t[i, j]}.")
  gap = np.abs(t - t.T)
  if np.any(gap > 1e-6 * max(1.0, float(np.max(t)))):
    i, j = np.unravel_index(int(np.argmax(gap)), gap.shape)
    raise ValueError(
      f"totals must be symmetric (comparisons per unordered pair); totals[{i}, {j}] = "
      f"{t[i, j]} but totals[{j}, {i}] = {t[j, i]}."
    )
  t = (t + t.T) / 2
  np.fill_diagonal(t, 0.0)
  return t


def _check_vector(x, n: int, name: str) -> np.ndarray:
  """``x`` as a 1-D NumPy array of length ``n``, or ValueError naming it."""
  arr = np.asarray(x)
  if arr.shape != (n,):
    raise ValueError(f"{name} must have shape ({n},) (one entry per agent); got {arr.shape}.")
  return arr


def _check_top_cycle(top_cycle, n: int) -> np.ndarray:
  """The hard Top Cycle as a bool mask, or ValueError naming it."""
  arr = _check_vector(top_cycle, n, "top_cycle")
  if arr.dtype == bool:
    return arr
  if np.issubdtype(arr.dtype, np.number) and np.all(np.isin(arr, (0, 1))):
    return arr.astype(bool)
  raise ValueError(f"top_cycle must be a boolean mask (or 0/1 values); got dtype {arr.dtype}.")


def _check_tc_scores(tc_scores, n: int) -> np.ndarray:
  """The soft Top-Cycle scores as finite float64 values, or ValueError naming them."""
  arr = _check_vector(tc_scores, n, "tc_scores")
  if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
    raise ValueError(f"tc_scores must be real numbers, got dtype {arr.dtype}.")
  if np.issubdtype(arr.dtype, np.complexfloating):
    raise ValueError(f"tc_scores must be real numbers, got dtype {arr.dtype}.")
  arr = arr.astype(np.float64)
  if not np.all(np.isfinite(arr)):
    i = int(np.argmax(~np.isfinite(arr)))
    raise ValueError(f"tc_scores must be finite; tc_scores[{i}] = {arr[i]}.")
  return arr


def _check_agents(agents, n: int) -> tuple[str, ...]:
  """Agent names (indices as strings by default), or ValueError naming ``agents``."""
  if agents is None:
    return tuple(str(i) for i in range(n))
  if isinstance(agents, str):
    raise ValueError(f"agents must be a sequence of names, not a single string {agents!r}.")
  names = tuple(str(a) for a in agents)
  if len(names) != n:
    raise ValueError(f"agents must hold {n} names (one per row of totals); got {len(names)}.")
  return names


def _check_min_games(min_games) -> int | float:
  """``min_games`` as an int (when integral) or float ``>= 0``, or ValueError naming it."""
  if isinstance(min_games, (bool, np.bool_)):
    raise ValueError(f"min_games must be a number >= 0, got {min_games!r}.")
  try:
    value = float(min_games)
  except (TypeError, ValueError):
    raise ValueError(f"min_games must be a number >= 0, got {min_games!r}.") from None
  if not math.isfinite(value) or value < 0:
    raise ValueError(f"min_games must be a finite number >= 0, got {min_games!r}.")
  return int(value) if value.is_integer() else value


def _percent(share: float) -> str:
  """A share in ``(0, 1]`` as a whole percentage, never rounding a nonzero share to ``0%``."""
  pct = 100 * share
  return "<1%" if 0 < pct < 0.5 else f"{pct:.0f}%"


def _top_plateau(scores: np.ndarray) -> tuple[int, float]:
  """Size and median of the group of scores within ``_PLATEAU_TOL`` of the highest one."""
  top = scores[scores >= scores.max() - _PLATEAU_TOL]
  return int(top.size), float(np.median(top))


def _list_sizes(sizes: tuple[int, ...]) -> str:
  """Component sizes spelled out, the tail summarized past ``_MAX_LISTED_SIZES``."""
  shown = ", ".join(str(s) for s in sizes[:_MAX_LISTED_SIZES])
  rest = len(sizes) - _MAX_LISTED_SIZES
  return f"{shown} and {rest} more" if rest > 0 else shown


def evidence_diagnostics(
  totals: npt.ArrayLike,
  *,
  agents: Sequence[str] | None = None,
  top_cycle: npt.ArrayLike | None = None,
  tc_scores: npt.ArrayLike | None = None,
  min_games: int | float = 10,
) -> EvidenceDiagnostics:
  """Describes how much evidence a comparison table holds, and warns when it is too little.

  Eager NumPy: the inputs may be JAX or NumPy arrays but must be concrete (not traced). The
  warnings, each one line, fire on:

  1. ``top_cycle`` given, ``n >= 4``, more than ``n / 2`` agents in the hard Top Cycle and at
     least one unobserved pair;
  2. ``tc_scores`` given, ``n >= 4`` and more than ``n / 2`` scores within ``1e-3`` of the highest
     score (the message gives their median);
  3. a comparison graph with more than one connected component;
  4. more than 10% of the agents with fewer than ``min_games`` comparisons.

  Args:
    totals: ``(n, n)`` symmetric, nonnegative, finite comparisons per pair (the ``totals`` of
      :func:`ste_jax.data.pair_counts`); weighted (fractional) counts are allowed and the diagonal
      is ignored.
    agents: optional ``n`` agent names, used in ``agents_below_min_games``.
    top_cycle: optional ``(n,)`` bool mask of the hard Top Cycle of the table's tournament.
    tc_scores: optional ``(n,)`` soft Top-Cycle scores.
    min_games: an agent with fewer comparisons than this (``>= 0``) has thin evidence.

  Returns:
    An :class:`EvidenceDiagnostics`.

  Raises:
    ValueError: naming the argument, if ``totals`` is not a nonempty square matrix or is
      asymmetric, negative or not finite; ``agents``, ``top_cycle`` or ``tc_scores`` does not have
      one entry per agent (or ``top_cycle`` is not a mask, ``tc_scores`` not finite); or
      ``min_games`` is negative or not a finite number.

  Examples:
    >>> import numpy as np
    >>> totals = np.array([[0, 12, 0], [12, 0, 0], [0, 0, 0]])
    >>> diag = evidence_diagnostics(totals, agents=["x", "y", "z"])
    >>> diag.pairs_observed, diag.component_sizes, diag.agents_below_min_games
    (1, (2, 1), ('z',))
    >>> print("\\n".join(diag.warnings))  # doctest: +NORMALIZE_WHITESPACE
    the comparison graph has 2 components (sizes 2, 1): agents in different components were
    never linked by any chain of comparisons, so their order is not identified by the data;
    compare agents across components to link them
    1 of 3 agents have fewer than 10 comparisons; their scores rest on few games; collect more
    comparisons for them
  """
  t = _check_totals(totals)
  n = t.shape[0]
  names = _check_agents(agents, n)
  core = None if top_cycle is None else _check_top_cycle(top_cycle, n)
  scores = None if tc_scores is None else _check_tc_scores(tc_scores, n)
  min_games = _check_min_games(min_games)

  num_pairs = n * (n - 1) // 2
  upper = t[np.triu_indices(n, k=1)]
  per_pair = upper[upper > 0]
  pairs_observed = int(per_pair.size)
  share = pairs_observed / num_pairs if num_pairs else math.nan
  if pairs_observed:
    pair_stats = (float(per_pair.min()), float(np.median(per_pair)), float(per_pair.max()))
  else:
    pair_stats = (math.nan, math.nan, math.nan)
  games = t.sum(axis=1)
  thin = np.flatnonzero(games < min_games)
  num_components, labels = csgraph.connected_components(t > 0, directed=False)
  sizes = tuple(int(s) for s in np.sort(np.bincount(labels, minlength=num_components))[::-1])

  warnings = []
  if core is not None and n >= _MIN_CORE_AGENTS and 2 * int(core.sum()) > n and share < 1:
    warnings.append(
      f"hard Top Cycle holds {int(core.sum())} of {n} agents with {_percent(1 - share)} of pairs "
      f"unobserved: missing pairs make everyone reach everyone; {_MODEL_REMEDY}"
    )
  if core is not None and n >= 2 and not core.any():
    warnings.append(
      "the hard Top Cycle is empty: no agent reaches every other agent through evidence-backed "
      "wins "
      f"(several groups were never beaten from outside); {_MODEL_REMEDY}"
    )
  if scores is not None and n >= _MIN_CORE_AGENTS:
    size, value = _top_plateau(scores)
    if 2 * size > n:
      warnings.append(
        f"{size} of {n} agents share the Top-Cycle score {value:.3f}: the scores do not separate "
        f"them; {_MODEL_REMEDY}"
      )
  if num_components > 1:
    warnings.append(
      f"the comparison graph has {num_components} components (sizes {_list_sizes(sizes)}): "
      "agents in different components were never linked by any chain of comparisons, so their "
      "order is not identified by the data; compare agents across components to link them"
    )
  if thin.size > _THIN_SHARE * n:
    warnings.append(
      f"{thin.size} of {n} agents have fewer than {min_games:g} comparisons; their scores rest "
      "on few games; collect more comparisons for them"
    )

  return EvidenceDiagnostics(
    num_agents=n,
    num_pairs=num_pairs,
    pairs_observed=pairs_observed,
    share_pairs_observed=float(share),
    comparisons_per_observed_pair=pair_stats,
    games_per_agent=(float(games.min()), float(np.median(games))),
    agents_below_min_games=tuple(names[i] for i in thin),
    min_games=min_games,
    num_components=int(num_components),
    component_sizes=sizes,
    connected=bool(num_components == 1),
    warnings=tuple(warnings),
  )
