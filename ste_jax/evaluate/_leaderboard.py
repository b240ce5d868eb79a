"""The leaderboard: comparisons -> one typed core table per context (compute only, no printing).

:func:`core_tables` is what ``ste-jax score`` prints and :func:`leaderboard` is its Python entry
point (a pandas DataFrame indexed by agent). Per agent: the STE soft Top-Cycle and Uncovered-Set
scores of the chosen estimator's edges, the share of bootstrap replicas whose *hard* core holds the
agent with an ``in`` / ``out`` / ``undetermined`` verdict at a stated confidence, the hard
membership and condensation tier of the point estimate (same edges as the soft scores, see
:mod:`ste_jax.evaluate._estimators`), and the win-rate, Bradley-Terry and Elo baselines. Evidence
diagnostics and warnings come with every table, including the observed pairs whose head-to-head
record significantly contradicts the table's tournament
(:mod:`ste_jax.evaluate._contradictions`, among the table's top ``CONTRADICTION_FAMILY`` agents,
at false-discovery rate ``1 - confidence``).

Cost: each bootstrap replica (:mod:`ste_jax.evaluate._replicas`) recomputes the estimator's edges
(a warm-started refit for the model estimator) and the *hard* cores (breadth-first reachability and
one matrix product); soft scores are recomputed per replica only when soft intervals are asked for
(default: at most ``SOFT_INTERVALS_MAX_AGENTS`` agents), since the soft cover costs ``O(n^3)``
exponentials.
"""

import argparse
from collections.abc import Callable, Sequence
import dataclasses
import math
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import _tuning, exact
from ste_jax._errors import InputError, OptionError
from ste_jax._options import (
  at_least,
  check_options,
  option,
  parse_nonnegative_int,
  parse_positive,
  temperature,
)
from ste_jax.data import Comparisons, LoadReport, LoadSettings, pair_counts
from ste_jax.data._clusters import load_cluster_ids
from ste_jax.data._tabular import load_rows
from ste_jax.evaluate._answer import TopAnswer, top_answer
from ste_jax.evaluate._contradictions import contradiction_warning, head_to_head_contradictions
from ste_jax.evaluate._diagnostics import EvidenceDiagnostics, evidence_diagnostics
from ste_jax.evaluate._estimators import as_estimator, fit_estimator
from ste_jax.evaluate._head_to_head import DEFAULT_ROWS, HeadToHead, head_to_head
from ste_jax.evaluate._protocol import TournamentEstimator
from ste_jax.evaluate._replicas import (
  ResamplingSettings,
  bootstrap_hard_memberships,
  cluster_codes,
)
from ste_jax.evaluate._tiers import tier_intervals
from ste_jax.evaluate._verdicts import ReplicaCoreCandidates, verdicts_from_replicas

if TYPE_CHECKING:
  import pandas as pd

SOFT_INTERVALS_MAX_AGENTS = _tuning.SOFT_INTERVALS_MAX_AGENTS
CONTRADICTION_FAMILY = 20  # head-to-head contradictions are sought among the table's top agents
_CONTRADICTION_REMEDY = (
  "read these records before trusting the order of these agents; --estimator posterior "
  "uses each pair's own record"
)

COLUMNS = (
  "agent",
  "tier",
  "tc_score",
  "tc_lo",
  "tc_hi",
  "p_tc",
  "tc_verdict",
  "uc_score",
  "uc_lo",
  "uc_hi",
  "p_uc",
  "uc_verdict",
  "hard_tc",
  "hard_uc",
  "win_rate",
  "bradley_terry",
  "elo",
  "games",
)
# Added by ``LeaderboardSettings(robustness=True)``: fewest reversed / removed comparisons that
# change the agent's hard Top-Cycle (Uncovered-Set) membership (-1: no such set; the model
# estimator: on its hard relations with the imputed pairs held fixed). An Uncovered-Set count the
# solver did not prove minimal is the text "lo..hi".
ROBUSTNESS_COLUMNS = ("flips_tc", "removals_tc", "flips_uc", "removals_uc")
# Added by ``LeaderboardSettings(tier_intervals=True)``: the best and worst tier over every
# tournament that agrees with the sure edges (-1 without bootstrap replicas).
TIER_COLUMNS = ("tier_best", "tier_worst")
# Added by ``LeaderboardSettings(task_mix_radius=r)``: the smallest and largest soft Top-Cycle score
# found over the task mixes within total variation r of the uniform mix, and whether a mix found
# changes the hard membership (empty with fewer than two tasks).
TASK_MIX_COLUMNS = ("tc_mix_min", "tc_mix_max", "hard_tc_mix")


# The top agents (by soft Top-Cycle score) whose influence ``LeaderboardSettings.influence`` lists.
INFLUENCE_AGENTS = 3


def _mix_radius_check(value: Any, name: str) -> None:
  if value is None:
    return
  if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
    raise OptionError(f"{name} must be in (0, 1], got {value!r}.")


def _solutions_check(value: Any, name: str) -> None:
  if isinstance(value, str) or len(set(value)) != len(tuple(value)):
    raise ValueError(f"{name} must be a tuple of distinct names, got {value!r}.")
  from ste_jax.exact._solution_memberships import canonical_solution_name

  for solution in value:
    canonical_solution_name(solution)
    if solution in COLUMNS + ROBUSTNESS_COLUMNS + TIER_COLUMNS + TASK_MIX_COLUMNS:
      raise ValueError(f"solution name {solution!r} collides with the table column of that name.")


def parse_solutions(text: str) -> tuple[str, ...]:
  """``--solutions``: comma-separated solution names (checked; duplicates dropped)."""
  names = tuple(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))
  try:
    _solutions_check(names, "solutions")
  except ValueError as e:
    raise argparse.ArgumentTypeError(str(e)) from None
  return names


@dataclasses.dataclass(frozen=True)
class LeaderboardSettings(ResamplingSettings):
  """What a leaderboard computes: the :class:`ResamplingSettings` plus the table's own options.

  Attributes:
    tau: edge temperature (estimators whose edges are a tournament) and the default ``gamma``,
      in ``(0, 3.4e38]`` (:func:`~ste_jax._options.temperature`; so is ``gamma``).
    gamma: Top-Cycle and covering temperature ``gamma = gamma_c`` (default ``tau``).
    soft_intervals: bootstrap the soft scores too (default: when ``n <= 300``).
    min_games: threshold of the thin-evidence diagnostic.
    solutions: further tournament solutions as columns (e.g. ``("bipartisan", "ml")``).
    robustness: add the vote-robustness columns :data:`ROBUSTNESS_COLUMNS` (count-based
      estimators: :func:`~ste_jax.evaluate.vote_robustness`).
    tier_intervals: add the certified tier intervals :data:`TIER_COLUMNS`
      (:func:`~ste_jax.evaluate.tier_intervals` of the replicas' sure edges at ``confidence``).
    task_mix_radius: add :data:`TASK_MIX_COLUMNS` at this total-variation radius around the
      uniform mix of the tasks (contexts; :func:`~ste_jax.evaluate.task_mix_robustness`).
    influence: list the ``influence`` comparisons with the largest influence on each of the top
      agents' soft scores (:attr:`CoreTable.influence`;
      :func:`~ste_jax.evaluate.comparison_influence`); ``0``: none.
  """

  tau: float = option(
    0.01,
    parse=parse_positive,
    check=temperature,
    help="edge temperature tau (win-rate and model estimators) and default gamma",
  )
  gamma: float | None = option(
    None,
    parse=parse_positive,
    check=temperature,
    help="Top-Cycle and covering temperature gamma = gamma_c (none: tau)",
  )
  soft_intervals: bool | None = option(
    None,
    switch=True,
    help="bootstrap the soft scores too (--no-soft-intervals: never; none: only with at most "
    f"{SOFT_INTERVALS_MAX_AGENTS} agents)",
  )
  min_games: int = option(10, flag=None, check=at_least(0), help="thin-evidence threshold")
  solutions: tuple[str, ...] = option(
    (),
    parse=parse_solutions,
    check=_solutions_check,
    metavar="NAMES",
    help="comma-separated further tournament solutions as columns, e.g. "
    "bipartisan,mcs,ml,alpharank (sets: top_cycle, uncovered, copeland, schwartz, bipartisan, "
    "essential, mcs, banks; lotteries: ml, c1_ml, nash, alpharank), computed on the "
    "estimator's tournament",
  )
  robustness: bool = option(
    False,
    help="add the columns flips_tc and removals_tc: the fewest comparisons whose outcome must be "
    "reversed (removed) to change the agent's hard Top-Cycle membership, exact, for the winrate "
    "and posterior estimators (ste_jax.evaluate.vote_robustness; for the model estimator: on its "
    "hard relation with the imputed pairs held fixed, labelled so); and flips_uc, removals_uc, "
    "the same for the hard Uncovered Set (exact, or 'lo..hi' certified bounds where the "
    "solver's time ran out; for the model on its strict relation, imputed pairs held fixed)",
  )
  tier_intervals: bool = option(
    False,
    help="add the columns tier_best and tier_worst: the best and worst tier of the agent over "
    "every tournament that agrees with the edges the bootstrap makes sure at the confidence "
    "(exact, simultaneous for all agents; ste_jax.evaluate.tier_intervals)",
  )
  task_mix_radius: float | None = option(
    None,
    parse=parse_positive,
    check=_mix_radius_check,
    metavar="R",
    help="add the columns tc_mix_min, tc_mix_max and hard_tc_mix: the range of the agent's soft "
    "Top-Cycle score (win-rate tournament) found over reweightings of the tasks (contexts) "
    "within total variation R of the uniform mix, by projected gradient, and whether a mix "
    "found changes its hard membership (ste_jax.evaluate.task_mix_robustness)",
  )

  influence: int = option(
    0,
    parse=parse_nonnegative_int,
    check=at_least(0),
    metavar="K",
    help="list the K comparisons with the largest influence d score / d weight on the soft "
    f"Top-Cycle and Uncovered scores of each of the top {INFLUENCE_AGENTS} agents, through the "
    "estimator and the soft cores (ste_jax.evaluate.comparison_influence), with the first-order "
    "effect of removing each and its line in the input file; 0: none",
  )

  def __post_init__(self):
    if self.tau is None:
      raise OptionError("tau must be a number > 0, got None.")
    object.__setattr__(self, "solutions", tuple(self.solutions))
    check_options(self)

  @property
  def extra_columns(self) -> tuple[str, ...]:
    """The columns these settings add after :data:`COLUMNS`: solutions, robustness, tiers."""
    return (
      self.solutions
      + (ROBUSTNESS_COLUMNS if self.robustness else ())
      + (TIER_COLUMNS if self.tier_intervals else ())
      + (TASK_MIX_COLUMNS if self.task_mix_radius is not None else ())
    )

  @property
  def gamma_value(self) -> float:
    """``gamma``, or ``tau`` when unset."""
    return self.tau if self.gamma is None else self.gamma

  def soft_intervals_for(self, n: int) -> bool:
    """Whether the soft scores of ``n`` agents are bootstrapped."""
    if not self.num_replicas:
      return False
    return (
      n <= SOFT_INTERVALS_MAX_AGENTS if self.soft_intervals is None else bool(self.soft_intervals)
    )


@dataclasses.dataclass(frozen=True)
class CoreTable:
  """One leaderboard table (one context, or all data pooled).

  Attributes:
    context: the context name, or ``None`` for all data.
    agents: agent names (index order of the arrays).
    columns: ``COLUMNS`` -> ``(n,)`` NumPy arrays in agent order (NaN where not computed).
    order: display order (:func:`display_order`: tier, soft Top-Cycle score, Uncovered score,
      win rate; with replicas, agents in more replicas' Top Cycles than any member of the point
      estimate's Top Cycle first, by ``P(TC)``).
    P: ``(n, n)`` the estimator's tournament for figures and witnesses (the model's ``P̂``, or the
      win rates for ``winrate`` and ``posterior``;
      :func:`~ste_jax.evaluate._estimators.display_tournament`).
    games_matrix: ``(n, n)`` comparisons per pair.
    wins_matrix: ``(n, n)`` weighted wins per ordered pair (``wins_matrix[a, b]``: games ``a`` won
      against ``b``; a tie counts 1/2 to each side), the records behind :meth:`head_to_head`.
    tournament_estimator: the resolved :class:`~ste_jax.evaluate.TournamentEstimator` behind
      every column (:attr:`estimator` is its name); ``estimator_reason`` says why it was used
      (``requested`` or the ``auto`` rule).
    model: the fitted model's record (:attr:`~ste_jax.evaluate.FittedTournament.model`, e.g. a
      :class:`~ste_jax.evaluate.ModelTournament`) or ``None``.
    diagnostics: :class:`~ste_jax.evaluate.EvidenceDiagnostics`.
    bt_identifiable / bt_note: whether the Bradley-Terry MLE exists (and why not).
    num_comparisons: rows behind the table.
    settings: the :class:`LeaderboardSettings`.
    soft_intervals: whether the soft scores were bootstrapped (``tc_lo`` ... filled).
    top_cycle_candidates / uncovered_candidates: the
      :class:`~ste_jax.evaluate.ReplicaCoreCandidates` of the
      bootstrap replicas at level ``settings.confidence`` (``None`` without replicas): the agents
      most often in the replicas' hard cores, enough of them to hold the whole core of that share
      of the replicas.
    num_clusters: clusters of the cluster bootstrap (``settings.cluster_column``), or ``None``
      when the replicas resampled unit comparisons (or there are none).
    influence: with ``settings.influence = K``, the
      :meth:`~ste_jax.evaluate.ComparisonInfluence.to_frame` of the ``K`` largest-``|influence|``
      comparisons on each of the top :data:`INFLUENCE_AGENTS` agents' soft scores (``row``: the
      comparison's index, 0-based, among this table's comparisons in input order; ``line``, where
      the comparisons carry it, :attr:`~ste_jax.data.Comparisons.line`: its input line); else
      ``None``.
  """

  context: str | None
  agents: tuple[str, ...]
  columns: dict
  order: np.ndarray
  P: np.ndarray
  games_matrix: np.ndarray
  wins_matrix: np.ndarray
  tournament_estimator: TournamentEstimator
  estimator_reason: str
  model: Any
  diagnostics: EvidenceDiagnostics
  bt_identifiable: bool
  bt_note: str
  num_comparisons: int
  settings: LeaderboardSettings
  soft_intervals: bool
  top_cycle_candidates: ReplicaCoreCandidates | None = None
  uncovered_candidates: ReplicaCoreCandidates | None = None
  num_clusters: int | None = None
  influence: Any = None

  @property
  def estimator(self) -> str:
    """The name of :attr:`tournament_estimator` (as shown in tables and JSON)."""
    return self.tournament_estimator.name

  def candidates(self, concept: str) -> ReplicaCoreCandidates | None:
    """:attr:`top_cycle_candidates` (``"top_cycle"``) or :attr:`uncovered_candidates`."""
    return {"top_cycle": self.top_cycle_candidates, "uncovered": self.uncovered_candidates}[concept]

  def candidate_names(self, concept: str) -> list[str] | None:
    """Names of :meth:`candidates`, by decreasing share of replicas; ``None`` without replicas."""
    c = self.candidates(concept)
    return None if c is None else [self.agents[i] for i in c.members]

  def head_to_head(self, k: int = DEFAULT_ROWS) -> HeadToHead:
    """The direct records among the first ``k`` rows (:class:`~ste_jax.evaluate.HeadToHead`)."""
    return head_to_head(self.wins_matrix, self.P, self.order, self.agents, k)

  def answer(self, rows: int = DEFAULT_ROWS) -> TopAnswer:
    """What the table says about its top set (:class:`~ste_jax.evaluate.TopAnswer`).

    With the direct records among its first ``rows`` rows.
    """
    return top_answer(
      self.columns,
      self.agents,
      self.order,
      self.wins_matrix,
      confidence=self.settings.confidence,
      num_replicas=self.settings.num_replicas,
      rows=rows,
    )

  @property
  def column_names(self) -> tuple[str, ...]:
    """``COLUMNS`` plus the columns the settings add (:attr:`LeaderboardSettings.extra_columns`)."""
    return COLUMNS + self.settings.extra_columns

  @property
  def top_cycle(self) -> list[str]:
    """Hard Top Cycle of the point estimate, in display order."""
    return [self.agents[i] for i in self.order if self.columns["hard_tc"][i]]

  @property
  def uncovered_set(self) -> list[str]:
    return [self.agents[i] for i in self.order if self.columns["hard_uc"][i]]

  def conventions(self) -> str:
    """The estimator, missing-data convention, temperatures, bootstrap and verdict rule."""
    s, est = self.settings, self.tournament_estimator
    parts = [f"estimator: {est.name} ({self.estimator_reason}): {est.conventions()}"]
    if self.model is not None:
      parts.append(f"model: {self.model.describe()}")
    temps = (
      f"tau = {s.tau:g}, gamma = gamma_c = {s.gamma_value:g}"
      if est.uses_tau
      else f"gamma = gamma_c = {s.gamma_value:g}"
    )
    parts.append(
      f"soft TC/UC: STE scores of the same edges, {temps}, exact max-min reachability; hard TC = "
      "agents "
      "reaching every agent in the hard relation, hard UC = agents no one covers, tier = depth in "
      "its "
      "condensation (tier 1 = hard TC when every pair is related)"
    )
    if s.num_replicas:
      if self.num_clusters is not None:
        column = f" of {s.cluster_column!r}" if s.cluster_column else ""
        boot = (
          f"{s.num_replicas} cluster bootstrap replicas over {self.num_clusters} clusters{column}: "
          "every comparison of a cluster gets the cluster's Poisson(1) weight"
          + (", the model refitted" if self.model is not None else "")
        )
      elif est.resolve_resampling(s.resampling) == "parametric":
        boot = (
          f"{s.num_replicas} parametric bootstrap replicas: every comparison's outcome redrawn "
          "from the fitted model's P (same pairs and games; a tie becomes a win or a loss), the "
          "model refitted"
        )
      else:
        boot = f"{s.num_replicas} Poisson bootstrap replicas over unit comparisons" + (
          " with refits of the model" if self.model is not None else ""
        )
      boot = (
        boot
        + "; P(TC), P(UC) = share of replicas whose hard core holds the agent; verdicts certified "
        "at "
        f"{s.confidence:g} from the replicas' edge orientations (sure edge: a beats b in >= "
        f"{s.confidence:.0%} of replicas): in = reaches every agent through sure edges (UC: within "
        "two), "
        "out = does not even through every edge not surely reversed, else undetermined; "
        + (
          "pairs never compared count with the model's imputed orientation"
          if s.certify_imputed
          else "a pair never compared is sure neither way"
        )
      )
      boot += (
        "; rows by tier, then soft TC score, except that agents with a higher P(TC) than every "
        "member of "
        "the hard TC are listed above it, by P(TC)"
      )
      if self.soft_intervals:
        boot += f"; {s.confidence:.0%} percentile CIs of the soft scores"
      else:
        boot += (
          f"; soft scores not bootstrapped (n > {SOFT_INTERVALS_MAX_AGENTS}; --soft-intervals "
          "to force)"
        )
      parts.append(boot)
    else:
      parts.append("no bootstrap (no verdicts); rows by tier, then soft TC score")
    if s.solutions:
      parts.append(
        f"solutions: {', '.join(s.solutions)} of the displayed tournament P (the model's P for "
        "model, "
        "win rates otherwise; sets as membership, lotteries as probabilities; "
        "ste_jax.exact.solution_memberships "
        "in float64)"
      )
    if s.robustness:
      parts.append(
        "flips_tc / removals_tc = fewest comparisons whose outcome reversed / that removed would "
        "change the agent's hard Top-Cycle membership in this estimator's count relation (exact; "
        "-1: none would; winrate and posterior; model: on its hard relation with the imputed "
        "pairs held fixed, a compared pair going to its record once its votes change, not "
        "refitted); flips_uc / removals_uc the same for the hard Uncovered Set (exact, or "
        "certified bounds lo..hi; model: on its strict relation, held the same way)"
      )
    if s.task_mix_radius is not None:
      parts.append(
        f"tc_mix_min / tc_mix_max = soft TC score range found over task mixes within total "
        f"variation {s.task_mix_radius:g} of the uniform mix (win-rate tournament, projected "
        "gradient: an inner bound); hard_tc_mix = a mix found changes the hard TC membership"
      )
    if s.tier_intervals:
      parts.append(
        "tier_best / tier_worst = best / worst tier over every tournament agreeing with the "
        f"edges sure at {s.confidence:.0%} (undecided pairs either way; simultaneous for all "
        "agents; tier_best 1 = not separable from the top)"
      )
    parts.append(
      "baselines: win rate (ties 1/2), BT = Bradley-Terry MLE (ties as half wins), Elo K = 32 in "
      "file order"
    )
    return "; ".join(parts) + "."

  def records(self) -> list[dict]:
    """Rows in display order as dicts of plain Python values (NaN -> ``None``)."""
    out = []
    for rank, i in enumerate(self.order, start=1):
      row = {"rank": rank}
      for name in self.column_names:
        row[name] = _plain(self.columns[name][i])
      out.append(row)
    return out

  def to_frame(self) -> "pd.DataFrame":
    """A pandas DataFrame indexed by agent, rows in display order; ``attrs`` hold the metadata."""
    import pandas as pd

    data = {name: self.columns[name][self.order] for name in self.column_names if name != "agent"}
    frame = pd.DataFrame(data, index=pd.Index([self.agents[i] for i in self.order], name="agent"))
    frame.attrs.update(
      context=self.context,
      estimator=self.estimator,
      conventions=self.conventions(),
      diagnostics=self.diagnostics.to_dict(),
      top_cycle=self.top_cycle,
      uncovered_set=self.uncovered_set,
      top_cycle_candidates=self.candidate_names("top_cycle"),
      uncovered_candidates=self.candidate_names("uncovered"),
      num_comparisons=self.num_comparisons,
      head_to_head=self.head_to_head().to_dict(),
      answer=self.answer().to_dict(),
    )
    if self.model is not None:
      frame.attrs["model"] = self.model.describe()
    return frame


def _plain(v):
  if isinstance(v, (np.bool_, bool)):
    return bool(v)
  if isinstance(v, (np.floating, float)):
    return None if math.isnan(v) else float(v)
  if isinstance(v, np.integer):
    return int(v)
  return str(v)


def subset_context(comparisons: Comparisons, index: int) -> Comparisons:
  """The comparisons of context ``index``, re-indexed to the agents that play in it (their input
  lines, :attr:`~ste_jax.data.Comparisons.line`, kept)."""
  keep = np.asarray(comparisons.context) == index
  a = np.asarray(comparisons.a)[keep]
  b = np.asarray(comparisons.b)[keep]
  present = np.unique(np.concatenate([a, b]))
  new_index = np.full(comparisons.num_agents, -1, dtype=np.int64)
  new_index[present] = np.arange(len(present))
  return Comparisons.from_arrays(
    new_index[a],
    new_index[b],
    np.asarray(comparisons.outcome)[keep],
    agents=[comparisons.agents[i] for i in present],
    weight=np.asarray(comparisons.weight)[keep],
    line=None if comparisons.line is None else np.asarray(comparisons.line)[keep],
  )


def display_order(columns: dict, *, bootstrapped: bool) -> np.ndarray:
  """The table's row order: indices into the agents, first row first.

  The point estimate's order: tier (the depth in the hard relation's condensation), then the soft
  Top-Cycle score, the soft Uncovered score, the win rate. With bootstrap replicas, one exception:
  an agent that more replicas put in their hard Top Cycle than any member of the point estimate's
  hard Top Cycle (``P(TC)`` above the members' best) is listed above them, these agents by
  decreasing ``P(TC)``.

  On dense data nothing moves (the point estimate's Top Cycle has ``P(TC)`` near 1). On sparse
  data the point estimate's Top Cycle is often one agent that few replicas put there
  (``benchmarks/sparse_candidates.py`` measures how few), and the agents the replicas put there more
  often would otherwise sit behind it and the other agents of tier 2, 3, ... ``P(TC)`` does not
  order the rest: below the top it is mostly the share of replicas whose Top Cycle holds nearly
  everyone, about the same for most agents, and would order them by sampling noise.

  Args:
    columns: ``COLUMNS`` -> ``(n,)`` arrays; uses ``tier``, ``tc_score``, ``uc_score``, ``win_rate``
      and, when ``bootstrapped``, ``p_tc`` and ``hard_tc``.
    bootstrapped: whether ``p_tc`` comes from replicas.

  Returns:
    ``(n,)`` int array, a permutation of ``range(n)``; ties keep agent index order.
  """
  keys = [
    -np.asarray(columns["win_rate"], np.float64),
    -np.asarray(columns["uc_score"], np.float64),
    -np.asarray(columns["tc_score"], np.float64),
    np.asarray(columns["tier"]),
  ]
  if bootstrapped:
    p, hard = np.asarray(columns["p_tc"], np.float64), np.asarray(columns["hard_tc"], bool)
    bar = p[hard].max() if hard.any() else 0.0  # the point estimate's Top Cycle's best share
    keys.append(-np.maximum(p, bar))
  return np.lexsort(keys)


UNSETTLED_SHARE = (
  0.5  # the point estimate's Top Cycle is "unsettled" when each member is in fewer replicas' TCs
)


def unsettled_top_warning(
  hard_tc: jax.typing.ArrayLike,
  p_tc: jax.typing.ArrayLike,
  agents: Sequence[str],
  *,
  num_replicas: int,
  shown: int = 5,
) -> str | None:
  """A warning when the point estimate's hard Top Cycle is rarely the replicas', else ``None``.

  Fires when every member of the point estimate's hard Top Cycle is in the hard Top Cycle of fewer
  than ``UNSETTLED_SHARE`` of the bootstrap replicas: most replicas put the top elsewhere, so the
  table's first rows rest on that estimate alone. Names the agents most often in the replicas' Top
  Cycles.

  Args:
    hard_tc: ``(n,)`` boolean point-estimate Top Cycle.
    p_tc: ``(n,)`` share of replicas whose hard Top Cycle holds each agent.
    agents: names.
    num_replicas: ``R`` (for the message).
    shown: how many of the most frequent agents to name.
  """
  hard_tc, p_tc = np.asarray(hard_tc, bool), np.asarray(p_tc, np.float64)
  if not hard_tc.any() or np.isnan(p_tc).any():
    return None
  best_member = float(p_tc[hard_tc].max())
  if best_member >= UNSETTLED_SHARE:
    return None
  members = ", ".join(agents[i] for i in np.flatnonzero(hard_tc)[:shown])
  frequent = np.argsort(-p_tc, kind="stable")[:shown]
  listed = ", ".join(f"{agents[i]} ({p_tc[i]:.0%})" for i in frequent)
  return (
    f"unsettled top: each member of the point estimate's hard Top Cycle {{{members}}} is in the "
    "hard Top Cycle "
    f"of at most {best_member:.0%} of the {num_replicas} bootstrap replicas; most often in the "
    "replicas' Top "
    f"Cycles: {listed}; the agents in more replicas' Top Cycles than these members are listed "
    "above them; "
    "compare these agents more (ste-jax suggest)"
  )


def _baselines(comparisons, counts, n):
  from ste_jax.stats import bradley_terry, elo, win_rate

  cols = {
    "win_rate": np.asarray(win_rate(counts.wins).rates, dtype=np.float64),
    "elo": np.asarray(
      elo(
        comparisons.a, comparisons.b, comparisons.outcome, num_agents=n, weight=comparisons.weight
      ),
      dtype=np.float64,
    ),
    "games": np.asarray(jnp.sum(counts.totals, axis=-1), dtype=np.float64),
  }
  bt = bradley_terry(counts.wins)  # the existence condition and the fit in one compiled call
  connected, separable = bool(bt.connected), bool(bt.separable)
  if connected and not separable:
    cols["bradley_terry"] = np.asarray(bt.scores, dtype=np.float64)
    return cols, True, ""
  cols["bradley_terry"] = np.full(n, np.nan)
  why = []
  if not connected:
    why.append("the comparison graph is disconnected")
  if separable:
    why.append("the data are separable (a group of agents never lost to the others)")
  note = (
    "Bradley-Terry: not identifiable: "
    + " and ".join(why)
    + "; the maximum-likelihood strengths do not exist, so no BT scores are shown."
  )
  return cols, False, note


def _add_robustness(cols: dict, comparisons: Comparisons, est, fitted) -> str | None:
  """Adds :data:`ROBUSTNESS_COLUMNS` to ``cols``; returns a warning line where not computed."""
  from ste_jax.evaluate._estimators import ModelEstimator
  from ste_jax.evaluate._robustness import counts_relation_of, vote_robustness

  n = comparisons.num_agents
  if isinstance(est, ModelEstimator):
    try:
      r = vote_robustness(comparisons, estimator=est, fitted=fitted, uncovered=True)
    except InputError as e:
      cols.update({c: np.full(n, np.nan) for c in ROBUSTNESS_COLUMNS})
      return f"vote robustness (flips_tc, removals_tc, flips_uc, removals_uc): not computed: {e}"
    _robustness_cells(cols, r)
    return (
      "vote robustness (model): flips_tc / removals_tc and flips_uc / removals_uc are on the "
      "model's hard relations with its imputed pairs held fixed (the model not refitted; a "
      "compared pair goes to its record once its votes change)"
    )
  if counts_relation_of(est) is None:
    cols.update({c: np.full(n, np.nan) for c in ROBUSTNESS_COLUMNS})
    return (
      "vote robustness (flips_tc, removals_tc, flips_uc, removals_uc): not computed for the "
      f"{est.name} estimator; it is exact for the count relations of --estimator winrate and "
      "posterior"
    )
  _robustness_cells(cols, vote_robustness(comparisons, estimator=est, uncovered=True))
  return None


def _robustness_cells(cols: dict, r) -> None:
  """:data:`ROBUSTNESS_COLUMNS` of a :class:`~ste_jax.evaluate.VoteRobustness` with UC fields."""
  n = len(r.agents)
  cols["flips_tc"] = np.asarray(r.flips_to_change, dtype=np.int64)
  cols["removals_tc"] = np.asarray(r.removals_to_change, dtype=np.int64)
  for column, upper, lower in (
    ("flips_uc", r.uc_flips_to_change, r.uc_flips_lower),
    ("removals_uc", r.uc_removals_to_change, r.uc_removals_lower),
  ):
    cells = np.empty(n, dtype=object)
    for i, (hi, lo) in enumerate(zip(np.asarray(upper), np.asarray(lower))):
      cells[i] = np.int64(hi) if lo == hi else f"{lo}..{hi}"
    cols[column] = cells


def _influence(key, comparisons: Comparisons, est, fitted, settings) -> tuple[Any, str | None]:
  """``(frame, None)``: the top agents' most influential comparisons, or ``(None, why not)``."""
  from ste_jax.evaluate._influence import comparison_influence

  try:
    infl = comparison_influence(
      key,
      comparisons,
      est,
      fitted=fitted,
      num_agents=min(INFLUENCE_AGENTS, comparisons.num_agents),
      tau=settings.tau,
      gamma=settings.gamma_value,
    )
  except OptionError as e:
    return None, f"influence: not computed: {e}"
  return infl.to_frame(num=settings.influence), None


def _add_task_mix(
  cols: dict, key: jax.Array, comparisons: Comparisons, settings: LeaderboardSettings
) -> str | None:
  """Adds :data:`TASK_MIX_COLUMNS` to ``cols``; returns a warning line where not computed."""
  from ste_jax.evaluate._task_mix import task_mix_robustness

  n = comparisons.num_agents
  used = np.unique(np.asarray(comparisons.context)).size
  if used < 2:
    cols.update(tc_mix_min=np.full(n, np.nan), tc_mix_max=np.full(n, np.nan))
    cols["hard_tc_mix"] = np.full(n, None, dtype=object)
    return (
      "task-mix robustness (tc_mix_min, tc_mix_max, hard_tc_mix): not computed, the data hold "
      f"{used} task (context); it reweights two or more"
    )
  r = task_mix_robustness(
    key, comparisons, radius=settings.task_mix_radius, tau=settings.tau, gamma=settings.gamma_value
  )
  cols["tc_mix_min"] = np.clip(np.asarray(r.score_min, dtype=np.float64), 0.0, 1.0) + 0.0
  cols["tc_mix_max"] = np.clip(np.asarray(r.score_max, dtype=np.float64), 0.0, 1.0) + 0.0
  cols["hard_tc_mix"] = np.asarray(r.hard_can_change)
  return None


def core_table(
  key: jax.Array,
  comparisons: Comparisons,
  estimator: "str | TournamentEstimator" = "auto",
  settings: LeaderboardSettings = LeaderboardSettings(),
  *,
  context: str | None = None,
  progress: Callable[[int], object] | None = None,
  clusters: np.typing.ArrayLike | None = None,
  mesh: "jax.sharding.Mesh | None" = None,
) -> CoreTable:
  """The :class:`CoreTable` of one (single-context or pooled) set of comparisons.

  Args:
    key: PRNG key: the estimator's fit and the bootstrap replicas.
    comparisons: the data (contexts pooled).
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` or a registry name
      (:data:`~ste_jax.evaluate.ESTIMATORS`).
    settings: :class:`LeaderboardSettings`.
    context: context name recorded on the table.
    progress: optional ``progress(num_replicas_done)``.
    clusters: ``(m,)`` cluster id of each comparison for the cluster bootstrap
      (:func:`~ste_jax.evaluate.bootstrap_hard_memberships`); required when
      ``settings.cluster_column`` is set and there are replicas.
    mesh: a ``jax.sharding.Mesh`` to split the bootstrap replicas over (it may span processes,
      ``jax.distributed``: every process passes the same arguments and gets the same table), or
      ``None`` (:func:`~ste_jax.evaluate.bootstrap_hard_memberships`); the same table either way.

  Returns:
    :class:`CoreTable`.

  Raises:
    OptionError: ``settings.cluster_column`` without ``clusters``, or parametric resampling
      with clusters.
  """
  if comparisons.num_comparisons == 0:
    raise ValueError("no comparisons to score.")
  if settings.num_replicas and settings.cluster_column and clusters is None:
    raise OptionError(
      f"cluster_column={settings.cluster_column!r} needs the comparisons' cluster ids: pass "
      "clusters=, or give leaderboard() the data frame or file that holds the column."
    )
  n = comparisons.num_agents
  est, reason, fitted, k_boot = fit_estimator(key, comparisons, estimator)
  tau, gamma = settings.tau, settings.gamma_value
  edges = fitted.edges
  soft = est.soft_scores(edges, tau=tau, gamma=gamma)
  weak, strict = est.hard_relations(edges)
  counts = pair_counts(comparisons)
  cols = {
    "agent": np.array(comparisons.agents, dtype=object),
    "tier": np.asarray(exact.condensation_tiers(weak), dtype=np.int64),
    "tc_score": np.asarray(soft.top_cycle, dtype=np.float64),
    "uc_score": np.asarray(soft.uncovered, dtype=np.float64),
    "hard_tc": np.asarray(exact.reach_all(weak)),
    "hard_uc": np.asarray(exact.uncovered_in_relation(strict)),
  }
  with_soft = settings.soft_intervals_for(n)
  nan = np.full(n, np.nan)
  candidates = (None, None)
  if settings.num_replicas:
    boot = bootstrap_hard_memberships(
      k_boot,
      comparisons,
      est,
      fitted,
      num_replicas=settings.num_replicas,
      batch_size=settings.batch_size,
      soft=(tau, gamma) if with_soft else None,
      progress=progress,
      resampling=settings.resampling,
      clusters=clusters,
      mesh=mesh,
    )
    observed = None if settings.certify_imputed else np.asarray(counts.totals) > 0
    v = verdicts_from_replicas(
      boot.top_cycle, boot.uncovered, boot.beats, confidence=settings.confidence, observed=observed
    )
    cols.update(
      p_tc=v.top_cycle.probability,
      p_uc=v.uncovered.probability,
      tc_verdict=v.top_cycle.verdict,
      uc_verdict=v.uncovered.verdict,
    )
    candidates = (v.top_cycle.candidates, v.uncovered.candidates)
    if settings.tier_intervals:
      tiers = tier_intervals(jnp.asarray(v.beats), settings.confidence)
      cols["tier_best"] = np.asarray(tiers.best, dtype=np.int64)
      cols["tier_worst"] = np.asarray(tiers.worst, dtype=np.int64)
    if with_soft:
      alpha = (1 - settings.confidence) / 2
      for name_, x in (("tc", boot.soft_top_cycle), ("uc", boot.soft_uncovered)):
        lo, hi = np.quantile(np.asarray(x, dtype=np.float64), [alpha, 1 - alpha], axis=0)
        cols[f"{name_}_lo"], cols[f"{name_}_hi"] = lo, hi
  else:
    cols.update(
      p_tc=nan,
      p_uc=nan,
      tc_verdict=np.full(n, "", dtype=object),
      uc_verdict=np.full(n, "", dtype=object),
    )
  for c in ("tc_lo", "tc_hi", "uc_lo", "uc_hi"):
    cols.setdefault(c, nan)
  if settings.tier_intervals:
    for c in TIER_COLUMNS:
      cols.setdefault(c, np.full(n, -1, dtype=np.int64))
  base, identifiable, note = _baselines(comparisons, counts, n)
  cols.update(base)
  # Soft scores are in [0, 1] up to rounding; keep -1e-9 from printing as -0.000.
  for c in ("tc_score", "uc_score", "tc_lo", "tc_hi", "uc_lo", "uc_hi"):
    cols[c] = np.clip(cols[c], 0.0, 1.0) + 0.0
  display = est.display_tournament(edges, counts)
  if settings.solutions:
    from ste_jax.exact._solution_memberships import is_lottery, solution_memberships

    # In float64: float32 misjudges maximal-lottery supports beyond a few hundred agents, float64
    # matches an LP oracle (benchmarks/solutions.py).
    with jax.enable_x64(True):
      sol = solution_memberships(jnp.asarray(np.asarray(display, np.float64)), settings.solutions)
      sol = {k: np.asarray(v) for k, v in sol.items()}
    # Lottery probabilities are >= 0 up to solver rounding; keep -1e-9 from printing as -0.000.
    cols.update(
      {
        k: np.clip(np.asarray(v, np.float64), 0.0, 1.0) + 0.0 if is_lottery(k) else np.asarray(v)
        for k, v in sol.items()
      }
    )
  robustness_note = _add_robustness(cols, comparisons, est, fitted) if settings.robustness else None
  if settings.task_mix_radius is not None:
    mix_note = _add_task_mix(cols, jax.random.fold_in(key, 36), comparisons, settings)
    robustness_note = "; ".join(x for x in (robustness_note, mix_note) if x) or None
  influence, influence_note = (
    _influence(key, comparisons, est, fitted, settings) if settings.influence else (None, None)
  )
  if influence_note:
    robustness_note = "; ".join(x for x in (robustness_note, influence_note) if x)
  order = display_order(cols, bootstrapped=bool(settings.num_replicas))
  diagnostics = evidence_diagnostics(
    np.asarray(counts.totals),
    agents=comparisons.agents,
    top_cycle=cols["hard_tc"],
    tc_scores=cols["tc_score"],
    min_games=settings.min_games,
  )
  top = np.zeros(n, dtype=bool)
  top[order[:CONTRADICTION_FAMILY]] = True
  contradictions = head_to_head_contradictions(
    np.asarray(counts.wins),
    np.asarray(display),
    agents=comparisons.agents,
    fdr=1 - settings.confidence,
    among=top,
  )
  line = contradiction_warning(
    contradictions,
    fdr=1 - settings.confidence,
    remedy=_CONTRADICTION_REMEDY,
    family=f"among the table's top {min(n, CONTRADICTION_FAMILY)} agents",
  )
  if line:
    diagnostics = dataclasses.replace(
      diagnostics, warnings=diagnostics.warnings + (line,), contradictions=contradictions
    )
  if robustness_note:
    diagnostics = dataclasses.replace(
      diagnostics, warnings=diagnostics.warnings + (robustness_note,)
    )
  if settings.num_replicas:
    unsettled = unsettled_top_warning(
      cols["hard_tc"], cols["p_tc"], comparisons.agents, num_replicas=settings.num_replicas
    )
    if unsettled:
      diagnostics = dataclasses.replace(diagnostics, warnings=diagnostics.warnings + (unsettled,))
  return CoreTable(
    context=context,
    agents=tuple(comparisons.agents),
    columns=cols,
    order=order,
    P=np.asarray(display, dtype=np.float64),
    games_matrix=np.asarray(counts.totals, dtype=np.float64),
    wins_matrix=np.asarray(counts.wins, dtype=np.float64),
    tournament_estimator=est,
    estimator_reason=reason,
    model=fitted.model,
    diagnostics=diagnostics,
    bt_identifiable=identifiable,
    bt_note=note,
    num_comparisons=comparisons.num_comparisons,
    settings=settings,
    soft_intervals=with_soft,
    top_cycle_candidates=candidates[0],
    uncovered_candidates=candidates[1],
    num_clusters=(
      cluster_codes(clusters, comparisons.num_comparisons)[1]
      if clusters is not None and settings.num_replicas
      else None
    ),
    influence=influence,
  )


def replica_cores(
  key: jax.Array,
  comparisons: Comparisons,
  estimator: "str | TournamentEstimator" = "model",
  settings: ResamplingSettings = ResamplingSettings(),
  *,
  target: str = "top_cycle",
  progress: Callable[[int], object] | None = None,
  mesh: "jax.sharding.Mesh | None" = None,
) -> np.ndarray:
  """``(R, n)`` hard cores of the bootstrap replicas of :func:`core_table` with the same key.

  The same estimator, replicas and key as the table of ``comparisons``, so the column means are
  the table's ``p_tc`` / ``p_uc``; ``ste-jax suggest`` passes them as the plausible cores of
  :func:`~ste_jax.evaluate.suggest_pairs` on data with pairs never compared.

  Args:
    key: PRNG key (as :func:`core_table`'s).
    comparisons: the data.
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` or a registry name.
    settings: :class:`ResamplingSettings` with ``num_replicas >= 1``.
    target: ``"top_cycle"`` or ``"uncovered"``.
    progress: optional ``progress(num_replicas_done)``.
    mesh: the mesh to split the replicas over, or ``None`` (as :func:`core_table`'s).

  Returns:
    ``(R, n)`` boolean.
  """
  if target not in ("top_cycle", "uncovered"):
    raise ValueError(f"target must be 'top_cycle' or 'uncovered', got {target!r}.")
  if not settings.num_replicas:
    raise ValueError("replica_cores needs num_replicas >= 1.")
  est, _, fitted, k_boot = fit_estimator(key, comparisons, estimator)
  boot = bootstrap_hard_memberships(
    k_boot,
    comparisons,
    est,
    fitted,
    num_replicas=settings.num_replicas,
    batch_size=settings.batch_size,
    progress=progress,
    resampling=settings.resampling,
    mesh=mesh,
  )
  return np.asarray(boot.top_cycle if target == "top_cycle" else boot.uncovered, dtype=bool)


def core_tables(
  key: jax.Array,
  comparisons: Comparisons,
  estimator: "str | TournamentEstimator" = "auto",
  settings: LeaderboardSettings = LeaderboardSettings(),
  *,
  by_context: bool = False,
  progress: Callable[[int], object] | None = None,
  clusters: np.typing.ArrayLike | None = None,
  mesh: "jax.sharding.Mesh | None" = None,
) -> list[CoreTable]:
  """One :class:`CoreTable` for all data, or one per context (agents that play in it only).

  Args:
    key: PRNG key; with ``by_context``, context ``k`` uses ``jax.random.split(key, C)[k]``.
    comparisons: the data.
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` or a registry name (an ``auto``
      estimator is resolved per context).
    settings: :class:`LeaderboardSettings`.
    by_context: one table per context that holds comparisons.
    progress: optional ``progress(num_replicas_done)``.
    clusters: ``(m,)`` cluster id of each comparison (the cluster bootstrap; :func:`core_table`).
    mesh: the mesh to split the replicas over, or ``None`` (:func:`core_table`).

  Returns:
    The tables.
  """
  estimator = as_estimator(estimator)
  if not by_context:
    return [
      core_table(
        key, comparisons, estimator, settings, progress=progress, clusters=clusters, mesh=mesh
      )
    ]
  keys = jax.random.split(key, comparisons.num_contexts)
  tables = []
  for k, name in enumerate(comparisons.contexts):
    sub = subset_context(comparisons, k)
    if sub.num_comparisons:
      ids = None if clusters is None else np.asarray(clusters)[np.asarray(comparisons.context) == k]
      tables.append(
        core_table(
          keys[k],
          sub,
          estimator,
          settings,
          context=name,
          progress=progress,
          clusters=ids,
          mesh=mesh,
        )
      )
  return tables


@dataclasses.dataclass(frozen=True)
class Leaderboard:
  """What :func:`leaderboard` returns: its tables, one per context or one for all data.

  Attributes:
    tables: the :class:`CoreTable` of each context (``by_context``) or the one of all data.
    load_report: the :class:`~ste_jax.data.LoadReport` of the rows read, when :func:`leaderboard`
      was given a data frame or a file (``None`` for :class:`~ste_jax.data.Comparisons`); also
      ``to_frame().attrs["load"]``.
  """

  tables: tuple[CoreTable, ...]
  load_report: "LoadReport | None" = None

  def __len__(self) -> int:
    return len(self.tables)

  def __iter__(self):
    return iter(self.tables)

  def table(self, context: str | None = None) -> CoreTable:
    """The table of ``context`` (``None``: the only table).

    Raises:
      KeyError: no table of that context, or ``None`` with several tables.
    """
    if context is None:
      if len(self.tables) != 1:
        raise KeyError("the leaderboard has one table per context: name one.")
      return self.tables[0]
    for t in self.tables:
      if t.context == context:
        return t
    raise KeyError(f"no table for context {context!r}.")

  def to_frame(self) -> "pd.DataFrame":
    """A pandas DataFrame, rows in display order, indexed by ``(context, agent)``.

    The context level is ``None`` for the table of all data. ``attrs["tables"]`` holds each
    table's metadata (:meth:`CoreTable.to_frame`'s ``attrs``), keyed by context; with one table
    its metadata are also the frame's own ``attrs``; ``attrs["load"]`` is the
    :class:`~ste_jax.data.LoadReport` when the leaderboard read raw rows.
    """
    import pandas as pd

    frames = [t.to_frame() for t in self.tables]
    frame = pd.concat(frames, keys=[t.context for t in self.tables], names=["context"])
    frame.attrs = {}
    frame.attrs["tables"] = {t.context: f.attrs for t, f in zip(self.tables, frames)}
    if len(frames) == 1:
      frame.attrs.update(frames[0].attrs)
    if self.load_report is not None:
      frame.attrs["load"] = self.load_report
    return frame


def leaderboard(
  key: jax.Array,
  data: "Comparisons | Any",
  estimator: "str | TournamentEstimator" = "auto",
  *,
  by_context: bool = False,
  settings: LeaderboardSettings | None = None,
  progress: Callable[[int], object] | None = None,
  load_settings: "LoadSettings | None" = None,
  skip_bad_rows: bool = False,
  clusters: np.typing.ArrayLike | None = None,
  mesh: "jax.sharding.Mesh | None" = None,
  **options: Any,
) -> Leaderboard:
  """The STE leaderboard (what ``ste-jax score`` prints): a :class:`Leaderboard` of tables.

  Per agent (:meth:`Leaderboard.to_frame`): ``tier`` (condensation order of the hard relation:
  1 = Top Cycle), ``tc_score`` / ``uc_score`` (soft STE scores), ``tc_lo``/``tc_hi``/``uc_lo``/
  ``uc_hi`` (bootstrap percentile intervals when soft intervals are computed), ``p_tc`` /
  ``p_uc`` (share of replicas whose hard core holds the agent), ``tc_verdict`` / ``uc_verdict``
  (``in`` / ``out`` / ``undetermined`` at ``confidence``, certified from the replicas' edge
  orientations: :mod:`ste_jax.evaluate._verdicts`), ``hard_tc`` / ``hard_uc`` (point estimate),
  ``win_rate``, ``bradley_terry``, ``elo``, ``games``. Each table's ``attrs`` hold the
  conventions, the estimator and model selection, the evidence diagnostics (with warnings), the
  hard cores, the replicas' candidates, the direct records among the first 10 rows and the
  answer about the top set.

  Args:
    key: PRNG key of the estimator's fit (e.g. a model's cross-validation folds) and of the
      bootstrap replicas.
    data: a :class:`~ste_jax.data.Comparisons`, a pandas DataFrame in a schema
      :func:`~ste_jax.data.from_dataframe` reads (``model_a, model_b, winner`` or ``a, b, winner``)
      or the path of a file :func:`~ste_jax.data.load_comparisons` reads. Raw rows that cannot
      be used are refused (:class:`~ste_jax.InputError`, as ``ste-jax score`` does) unless
      ``skip_bad_rows``.
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` (e.g.
      ``ste_jax.evaluate.ModelEstimator(record_tolerance=3.0)``, or your own) or a registry name:
      ``"auto"`` (default: posterior when every pair was compared, else model), ``"posterior"``,
      ``"winrate"`` or ``"model"``.
    by_context: one table per context.
    settings: a :class:`LeaderboardSettings` (default: its defaults, updated by ``options``).
    progress: optional ``progress(num_replicas_done)``.
    load_settings: how a data frame or file is read, a :class:`~ste_jax.data.LoadSettings`
      (default: its defaults).
    skip_bad_rows: drop the raw rows that cannot be used, with a
      :class:`~ste_jax.data.BadRowsWarning`, instead of refusing them (``--skip-bad-rows``);
      the rows stay listed in the result's ``load_report``.
    clusters: ``(m,)`` cluster id of each comparison of a :class:`~ste_jax.data.Comparisons`
      for the cluster bootstrap; for a data frame or file, ``cluster_column`` names the column
      and the ids are read from it (:func:`~ste_jax.data.load_cluster_ids`).
    mesh: a ``jax.sharding.Mesh`` to score the bootstrap replicas over its devices, or ``None``
      (the default device). The mesh may span several processes (``jax.distributed``): every
      process then calls ``leaderboard`` with the same arguments, and each gets the same
      leaderboard, the one ``mesh=None`` gives for the same key
      (:func:`~ste_jax.evaluate.bootstrap_hard_memberships`; the point estimate, the baselines
      and the other columns are computed on each process's own default device).
    **options: fields of :class:`LeaderboardSettings` (``num_replicas``, ``confidence``,
      ``resampling``, ``certify_imputed``, ``batch_size``, ``tau``, ``gamma``,
      ``soft_intervals``, ``min_games``, ``solutions``).

  Returns:
    A :class:`Leaderboard` (whatever ``by_context``), with the ``load_report`` of raw rows.

  Raises:
    TypeError: an unknown option.
    InputError: raw rows that cannot be used (without ``skip_bad_rows``; the message names the
      reasons, counts and first line numbers), or no usable row.

  Examples:
    >>> c = Comparisons.from_arrays(
    ...   [0, 1, 2, 0] * 10, [1, 2, 0, 3] * 10, [1.0] * 40, agents=list("wxyz")
    ... )
    >>> lb = leaderboard(jax.random.key(0), c, "posterior", num_replicas=0).table().to_frame()
    >>> sorted(lb.index[lb["hard_tc"]])  # the 3-cycle w > x > y > w (z never beat anyone)
    ['w', 'x', 'y']
    >>> int(lb.loc["z", "tier"])
    2
  """
  known = {f.name for f in dataclasses.fields(LeaderboardSettings)}
  unknown = sorted(set(options) - known)
  if unknown:
    raise TypeError(
      f"leaderboard() got unknown options {unknown}; the options are {sorted(known)}."
    )
  settings = dataclasses.replace(settings or LeaderboardSettings(), **options)
  report = None
  if not isinstance(data, Comparisons):
    raw = data
    data, report = load_rows(data, load_settings, skip_bad_rows=skip_bad_rows, caller="leaderboard")
    if settings.cluster_column and clusters is None:
      clusters = load_cluster_ids(
        raw, settings.cluster_column, data, load_settings, skip_bad_rows=skip_bad_rows
      )
  tables = core_tables(
    key,
    data,
    estimator,
    settings,
    by_context=by_context,
    progress=progress,
    clusters=clusters,
    mesh=mesh,
  )
  return Leaderboard(tuple(tables), load_report=report)
