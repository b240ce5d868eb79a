"""The leaderboard: comparisons -> one typed core table per context (compute only, no printing).

:func:`core_tables` is what ``ste-jax score`` prints and :func:`leaderboard` is its Python entry
point (a pandas DataFrame indexed by agent). Per agent: the STE soft Top-Cycle and Uncovered-Set
scores of the chosen estimator's edges, the share of bootstrap replicas whose *hard* core holds the
agent with an ``in`` / ``out`` / ``undetermined`` verdict at a stated confidence, the hard
membership and condensation tier of the point estimate (same edges as the soft scores, see
:mod:`ste_jax.evaluate._estimators`), and the win-rate, Bradley-Terry and Elo baselines. Evidence
diagnostics and warnings come with every table.

Cost: each bootstrap replica recomputes the estimator's edges (a warm-started refit for the model
estimator) and the *hard* cores (breadth-first reachability and one matrix product); soft scores are
recomputed per replica only when soft intervals are asked for (default: at most
``SOFT_INTERVALS_MAX_AGENTS`` agents), since the soft cover costs ``O(n^3)`` exponentials.
"""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import exact
from ste_jax.data import Comparisons, pair_counts
from ste_jax.evaluate import _estimators
from ste_jax.evaluate._diagnostics import EvidenceDiagnostics, evidence_diagnostics
from ste_jax.evaluate._verdicts import verdict_labels

SOFT_INTERVALS_MAX_AGENTS = 300
REPLICA_CHUNK = 25

COLUMNS = (
    "agent", "tier",
    "tc_score", "tc_lo", "tc_hi", "p_tc", "tc_verdict",
    "uc_score", "uc_lo", "uc_hi", "p_uc", "uc_verdict",
    "hard_tc", "hard_uc", "win_rate", "bradley_terry", "elo", "games",
)


@dataclasses.dataclass(frozen=True)
class LeaderboardSettings:
  """What a leaderboard computes (hashable; every field is documented in :func:`leaderboard`)."""

  estimator: str = "auto"
  tau: float = 0.01
  gamma: float | None = None
  num_replicas: int = 200
  seed: int = 0
  confidence: float = 0.95
  soft_intervals: bool | None = None
  min_games: int = 10
  batch_size: int = 8

  def __post_init__(self):
    if self.estimator not in _estimators.ESTIMATORS:
      raise ValueError(f"estimator must be one of {_estimators.ESTIMATORS}, got {self.estimator!r}.")
    for name in ("tau",) + (() if self.gamma is None else ("gamma",)):
      v = getattr(self, name)
      if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}.")
    for name, lo in (("num_replicas", 0), ("min_games", 0), ("batch_size", 1)):
      v = getattr(self, name)
      if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}.")
    if not 0.5 < float(self.confidence) < 1:
      raise ValueError(f"confidence must be in (0.5, 1), got {self.confidence!r}.")

  @property
  def gamma_value(self) -> float:
    return self.tau if self.gamma is None else self.gamma

  def soft_intervals_for(self, n: int) -> bool:
    if not self.num_replicas:
      return False
    return n <= SOFT_INTERVALS_MAX_AGENTS if self.soft_intervals is None else bool(self.soft_intervals)


@dataclasses.dataclass(frozen=True)
class CoreTable:
  """One leaderboard table (one context, or all data pooled).

  Attributes:
    context: the context name, or ``None`` for all data.
    agents: agent names (index order of the arrays).
    columns: ``COLUMNS`` -> ``(n,)`` NumPy arrays in agent order (NaN where not computed).
    order: display order (tier, then soft Top-Cycle score, Uncovered score, win rate).
    P: ``(n, n)`` the estimator's tournament for figures and witnesses (the model's ``P̂``, or the
      win rates for ``winrate`` and ``posterior``;
      :func:`~ste_jax.evaluate._estimators.display_tournament`).
    games_matrix: ``(n, n)`` comparisons per pair.
    estimator: the estimator used (``posterior``, ``winrate`` or ``model``); ``estimator_reason``
      says why (``requested`` or the ``auto`` rule).
    model: the :class:`~ste_jax.evaluate.ModelTournament` (model estimator) or ``None``.
    diagnostics: :class:`~ste_jax.evaluate.EvidenceDiagnostics`.
    bt_identifiable / bt_note: whether the Bradley-Terry MLE exists (and why not).
    num_comparisons: rows behind the table.
    settings: the :class:`LeaderboardSettings`.
    soft_intervals: whether the soft scores were bootstrapped (``tc_lo`` ... filled).
  """

  context: str | None
  agents: tuple[str, ...]
  columns: dict
  order: np.ndarray
  P: np.ndarray
  games_matrix: np.ndarray
  estimator: str
  estimator_reason: str
  model: object
  diagnostics: EvidenceDiagnostics
  bt_identifiable: bool
  bt_note: str
  num_comparisons: int
  settings: LeaderboardSettings
  soft_intervals: bool

  @property
  def top_cycle(self) -> list[str]:
    """Hard Top Cycle of the point estimate, in display order."""
    return [self.agents[i] for i in self.order if self.columns["hard_tc"][i]]

  @property
  def uncovered_set(self) -> list[str]:
    return [self.agents[i] for i in self.order if self.columns["hard_uc"][i]]

  def conventions(self) -> str:
    """The estimator, missing-data convention, temperatures, bootstrap and verdict rule, as one paragraph."""
    s = self.settings
    parts = [f"estimator: {self.estimator} ({self.estimator_reason}): {_estimators.CONVENTIONS[self.estimator]}"]
    if self.model is not None:
      parts.append(f"model: {self.model.describe()}")
    temps = (f"gamma = gamma_c = {s.gamma_value:g}" if self.estimator == "posterior"
             else f"tau = {s.tau:g}, gamma = gamma_c = {s.gamma_value:g}")
    parts.append(f"soft TC/UC: STE scores of the same edges, {temps}, exact max-min reachability; hard TC = agents "
                 "reaching every agent in the hard relation, hard UC = agents no one covers, tier = depth in its "
                 "condensation (tier 1 = hard TC when every pair is related)")
    if s.num_replicas:
      boot = (f"{s.num_replicas} Poisson bootstrap replicas over unit comparisons (seed {s.seed})"
              + (" with refits of the model" if self.estimator == "model" else "")
              + f"; P(TC), P(UC) = share of replicas whose hard core holds the agent; verdict in if P >= "
              f"{s.confidence:g}, out if P <= {1 - s.confidence:.2g}, else undetermined")
      if self.soft_intervals:
        boot += f"; {s.confidence:.0%} percentile CIs of the soft scores"
      else:
        boot += f"; soft scores not bootstrapped (n > {SOFT_INTERVALS_MAX_AGENTS}; --soft-intervals to force)"
      parts.append(boot)
    else:
      parts.append("no bootstrap (no verdicts)")
    parts.append("baselines: win rate (ties 1/2), BT = Bradley-Terry MLE (ties as half wins), Elo K = 32 in file order")
    return "; ".join(parts) + "."

  def records(self) -> list[dict]:
    """Rows in display order as dicts of plain Python values (NaN -> ``None``)."""
    out = []
    for rank, i in enumerate(self.order, start=1):
      row = {"rank": rank}
      for name in COLUMNS:
        row[name] = _plain(self.columns[name][i])
      out.append(row)
    return out

  def to_frame(self):
    """A pandas DataFrame indexed by agent name, rows in display order; ``attrs`` hold the metadata."""
    import pandas as pd

    data = {name: self.columns[name][self.order] for name in COLUMNS if name != "agent"}
    frame = pd.DataFrame(data, index=pd.Index([self.agents[i] for i in self.order], name="agent"))
    frame.attrs.update(
        context=self.context, estimator=self.estimator, conventions=self.conventions(),
        diagnostics=self.diagnostics.to_dict(), top_cycle=self.top_cycle, uncovered_set=self.uncovered_set,
        num_comparisons=self.num_comparisons,
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
  """The comparisons of context ``index``, re-indexed to the agents that play in it."""
  keep = np.asarray(comparisons.context) == index
  a = np.asarray(comparisons.a)[keep]
  b = np.asarray(comparisons.b)[keep]
  present = np.unique(np.concatenate([a, b]))
  new_index = np.full(comparisons.num_agents, -1, dtype=np.int64)
  new_index[present] = np.arange(len(present))
  return Comparisons.from_arrays(
      new_index[a], new_index[b], np.asarray(comparisons.outcome)[keep],
      agents=[comparisons.agents[i] for i in present], weight=np.asarray(comparisons.weight)[keep],
  )


def resample_unit_weights(key, weight, num_replicas: int) -> jax.Array:
  """``(R, m)`` Poisson-bootstrap weights over unit comparisons: row weight ``w`` -> ``Poisson(w)``.

  A row of weight ``w`` stands for ``w`` comparisons; resampling each of them ``Poisson(1)`` times
  gives the row ``Poisson(w)`` (a sum of independent Poissons), so aggregated rows (one row per pair
  with ``weight`` = wins) are resampled like the unit rows they summarize. For unit rows this is the
  classical Poisson bootstrap.
  """
  rate = jnp.broadcast_to(weight, (num_replicas,) + weight.shape)
  return jax.random.poisson(key, rate, rate.shape).astype(weight.dtype)


def bootstrap_hard_memberships(key, comparisons: Comparisons, estimator, *, num_replicas: int,
                               batch_size: int | None = 8, soft=None, progress=None):
  """Hard (and optionally soft) core memberships of bootstrap replicas of ``comparisons``.

  Replicas reweight the rows by :func:`resample_unit_weights` (Poisson bootstrap over unit
  comparisons); each replica recomputes the estimator's edges (a warm-started refit for the model
  estimator) and its hard cores, ``batch_size`` replicas per compiled ``lax.map`` step. Replica ``r``
  uses ``jax.random.split(key, num_chunks)[r // REPLICA_CHUNK]``.

  Args:
    key: PRNG key.
    comparisons: the data.
    estimator: an :class:`~ste_jax.evaluate._estimators.EdgeEstimator`.
    num_replicas: ``R``.
    batch_size: replicas per compiled batch (memory bound).
    soft: ``None``, or ``(tau, gamma)`` to also return the replicas' soft scores.
    progress: optional ``progress(num_done)`` callable.

  Returns:
    ``(tc, uc)`` boolean ``(R, n)`` arrays, plus ``(tc_soft, uc_soft)`` ``(R, n)`` with ``soft``.
  """
  name = estimator.name
  chunk = min(num_replicas, REPLICA_CHUNK)
  batch = min(batch_size or chunk, chunk)

  def replica(w):
    edges = estimator.replica_edges(dataclasses.replace(comparisons, weight=w))
    out = _estimators.hard_memberships(edges, name)
    if soft is not None:
      s = _estimators.soft_scores(edges, name, tau=soft[0], gamma=soft[1])
      out = out + (s.top_cycle, s.uncovered)
    return out

  @jax.jit
  def run(k):
    return jax.lax.map(replica, resample_unit_weights(k, comparisons.weight, chunk), batch_size=batch)

  parts = []
  for k in jax.random.split(key, -(-num_replicas // chunk)):
    parts.append([np.asarray(x) for x in run(k)])
    if progress is not None:
      progress(chunk)
  return tuple(np.concatenate(xs)[:num_replicas] for xs in zip(*parts))


def _baselines(comparisons, counts, n):
  from ste_jax.stats import bradley_terry, elo, win_rate

  cols = {
      "win_rate": np.asarray(win_rate(counts.wins).rates, dtype=np.float64),
      "elo": np.asarray(elo(comparisons.a, comparisons.b, comparisons.outcome, num_agents=n,
                            weight=comparisons.weight), dtype=np.float64),
      "games": np.asarray(jnp.sum(counts.totals, axis=-1), dtype=np.float64),
  }
  bt = bradley_terry(counts.wins)
  identifiable = bool(bt.identifiable)
  if identifiable:
    cols["bradley_terry"] = np.asarray(bt.scores, dtype=np.float64)
    return cols, True, ""
  cols["bradley_terry"] = np.full(n, np.nan)
  why = []
  if not bool(bt.connected):
    why.append("the comparison graph is disconnected")
  if bool(bt.separable):
    why.append("the data are separable (a group of agents never lost to the others)")
  note = ("Bradley-Terry: not identifiable: " + " and ".join(why or ["Zermelo's condition fails"])
          + "; the maximum-likelihood strengths do not exist, so no BT scores are shown.")
  return cols, False, note


def core_table(comparisons: Comparisons, settings: LeaderboardSettings = LeaderboardSettings(), *, context=None,
               key=None, progress=None) -> CoreTable:
  """The :class:`CoreTable` of one (single-context or pooled) set of comparisons.

  Args:
    comparisons: the data (contexts pooled).
    settings: :class:`LeaderboardSettings`.
    context: context name recorded on the table.
    key: PRNG key (default ``jax.random.key(settings.seed)``).
    progress: optional ``progress(num_replicas_done)``.
  """
  if comparisons.num_comparisons == 0:
    raise ValueError("no comparisons to score.")
  n = comparisons.num_agents
  key = jax.random.key(settings.seed) if key is None else key
  k_fit, k_boot = jax.random.split(key)
  name, reason = _estimators.resolve_estimator(settings.estimator, comparisons)
  est = _estimators.build_estimator(name, comparisons, key=k_fit)
  tau, gamma = settings.tau, settings.gamma_value
  edges = est.edges
  soft = _estimators.soft_scores(edges, name, tau=tau, gamma=gamma)
  weak, strict = _estimators.hard_relations(edges, name)
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
  if settings.num_replicas:
    out = bootstrap_hard_memberships(k_boot, comparisons, est, num_replicas=settings.num_replicas,
                                     batch_size=settings.batch_size, soft=(tau, gamma) if with_soft else None,
                                     progress=progress)
    p_tc, p_uc = out[0].mean(axis=0), out[1].mean(axis=0)
    cols.update(p_tc=p_tc, p_uc=p_uc, tc_verdict=verdict_labels(p_tc, settings.confidence),
                uc_verdict=verdict_labels(p_uc, settings.confidence))
    if with_soft:
      alpha = (1 - settings.confidence) / 2
      for name_, x in (("tc", out[2]), ("uc", out[3])):
        lo, hi = np.quantile(np.asarray(x, dtype=np.float64), [alpha, 1 - alpha], axis=0)
        cols[f"{name_}_lo"], cols[f"{name_}_hi"] = lo, hi
  else:
    cols.update(p_tc=nan, p_uc=nan, tc_verdict=np.full(n, "", dtype=object), uc_verdict=np.full(n, "", dtype=object))
  for c in ("tc_lo", "tc_hi", "uc_lo", "uc_hi"):
    cols.setdefault(c, nan)
  base, identifiable, note = _baselines(comparisons, counts, n)
  cols.update(base)
  # Soft scores are in [0, 1] up to rounding; keep -1e-9 from printing as -0.000.
  for c in ("tc_score", "uc_score", "tc_lo", "tc_hi", "uc_lo", "uc_hi"):
    cols[c] = np.clip(cols[c], 0.0, 1.0) + 0.0
  order = np.lexsort((-cols["win_rate"], -cols["uc_score"], -cols["tc_score"], cols["tier"]))
  diagnostics = evidence_diagnostics(np.asarray(counts.totals), agents=comparisons.agents,
                                     top_cycle=cols["hard_tc"], tc_scores=cols["tc_score"],
                                     min_games=settings.min_games)
  return CoreTable(
      context=context, agents=tuple(comparisons.agents), columns=cols, order=order,
      P=np.asarray(_estimators.display_tournament(edges, name, counts), dtype=np.float64),
      games_matrix=np.asarray(counts.totals, dtype=np.float64), estimator=name, estimator_reason=reason,
      model=est.model, diagnostics=diagnostics, bt_identifiable=identifiable, bt_note=note,
      num_comparisons=comparisons.num_comparisons, settings=settings, soft_intervals=with_soft,
  )


def core_tables(comparisons: Comparisons, settings: LeaderboardSettings = LeaderboardSettings(), *,
                by_context: bool = False, progress=None) -> list[CoreTable]:
  """One :class:`CoreTable` for all data, or one per context (agents that play in it only)."""
  key = jax.random.key(settings.seed)
  if not by_context:
    return [core_table(comparisons, settings, key=key, progress=progress)]
  keys = jax.random.split(key, comparisons.num_contexts)
  tables = []
  for k, name in enumerate(comparisons.contexts):
    sub = subset_context(comparisons, k)
    if sub.num_comparisons:
      tables.append(core_table(sub, settings, context=name, key=keys[k], progress=progress))
  return tables


def leaderboard(data, *, estimator: str = "auto", bootstrap: int = 200, confidence: float = 0.95, tau: float = 0.01,
                gamma: float | None = None, seed: int = 0, soft_intervals: bool | None = None, min_games: int = 10,
                by_context: bool = False, progress=None):
  """The STE leaderboard as a pandas DataFrame indexed by agent (what ``ste-jax score`` prints).

  Columns: ``tier`` (condensation order of the hard relation: 1 = Top Cycle), ``tc_score`` /
  ``uc_score`` (soft STE scores), ``tc_lo``/``tc_hi``/``uc_lo``/``uc_hi`` (bootstrap percentile
  intervals when soft intervals are computed), ``p_tc`` / ``p_uc`` (share of replicas whose hard
  core holds the agent), ``tc_verdict`` / ``uc_verdict`` (``in`` / ``out`` / ``undetermined`` at
  ``confidence``), ``hard_tc`` / ``hard_uc`` (point estimate), ``win_rate``, ``bradley_terry``,
  ``elo``, ``games``. ``frame.attrs`` holds the conventions line, the estimator and model
  selection, the evidence diagnostics (with warnings), and the hard cores.

  Args:
    data: a :class:`~ste_jax.data.Comparisons` or a pandas DataFrame in a schema
      :func:`~ste_jax.data.from_dataframe` reads (``model_a, model_b, winner`` or ``a, b, winner``).
    estimator: ``"auto"`` (default: ``posterior`` when every pair was compared, else ``model``),
      ``"posterior"``, ``"winrate"`` or ``"model"``.
    bootstrap: bootstrap replicas (0: no verdicts).
    confidence: verdict level in ``(0.5, 1)``.
    tau: edge temperature (win-rate and model estimators) and default ``gamma``.
    gamma: Top-Cycle and covering temperature (default ``tau``).
    seed: PRNG seed of the model fit and the bootstrap.
    soft_intervals: bootstrap the soft scores too (default: when ``n <= 300``).
    min_games: threshold of the thin-evidence diagnostic.
    by_context: one table per context; returns a dict ``context -> DataFrame``.
    progress: optional ``progress(num_replicas_done)``.

  Returns:
    A DataFrame (or a dict of them with ``by_context``).

  Examples:
    >>> c = Comparisons.from_arrays([0, 1, 2, 0] * 10, [1, 2, 0, 3] * 10, [1.0] * 40, agents=list("wxyz"))
    >>> lb = leaderboard(c, estimator="posterior", bootstrap=0)
    >>> sorted(lb.index[lb["hard_tc"]])  # the 3-cycle w > x > y > w (z never beat anyone)
    ['w', 'x', 'y']
    >>> int(lb.loc["z", "tier"])
    2
  """
  if not isinstance(data, Comparisons):
    from ste_jax.data import from_dataframe

    data, _ = from_dataframe(data)
  settings = LeaderboardSettings(estimator=estimator, tau=tau, gamma=gamma, num_replicas=bootstrap, seed=seed,
                                 confidence=confidence, soft_intervals=soft_intervals, min_games=min_games)
  tables = core_tables(data, settings, by_context=by_context, progress=progress)
  if by_context:
    return {t.context: t.to_frame() for t in tables}
  return tables[0].to_frame()
