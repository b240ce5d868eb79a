"""Verdict calibration: how often ``in`` / ``out`` membership verdicts are wrong on simulated data
with a known core.

The leaderboard labels an agent ``in`` the hard Top Cycle (or Uncovered Set) when it reaches every
agent through edges that at least a share ``c`` of the bootstrap replicas orient the same way (in
at most two such edges for the Uncovered Set), ``out`` when it does not reach every agent even
through the edges not surely reversed, else ``undetermined``
(:func:`~ste_jax.evaluate.orientation_certificates`). This script measures, at ``c = 0.95``, how
often those verdicts disagree with the true hard Top Cycle and Uncovered Set of the tournament the
data were drawn from (``ste_jax.exact.top_cycle(P)``, ``ste_jax.exact.uncovered_set(P)``), and,
for comparison, how often three other rules are wrong: ``certified+imputed`` (model estimator
only: the same certificate, but the model's predictions for pairs never compared count as
evidence, ``--certify-imputed``), ``share`` (the earlier rule: ``in`` if at least a share ``c`` of
the replicas' hard cores hold the agent, ``out`` if at most ``1 - c`` do) and ``half`` (Top Cycle
only: where no agent is certified ``in``, ``in`` for the agents in the hard Top Cycle of at least
half the replicas; no ``out``). ``half`` is what calling the most frequent agents of an unsettled
table *likely* members would claim; ``CoreTable.answer`` names them with their shares only,
because of this measurement.

Data (each trial its own key, derived from the setting and the trial number, so the ``--quick``
trials are the first trials of the full run's matching settings):

* ``planted``: :func:`~ste_jax.stats.planted_core_tournament` (``n = 20``, a planted cyclic core of
  5; its hard Top Cycle and Uncovered Set are the core), ``m`` games on each kept pair and exactly
  ``round(mu n (n - 1) / 2)`` pairs without data (:func:`~ste_jax.stats.sample_comparisons`,
  label noise 0.02);
* ``league``: :func:`~ste_jax.stats.sparse_league` (``n = 60``, ``cycle_strength = 1``): a sparse
  Bradley-Terry league with heavy-tailed activity whose three strongest agents play a
  rock-paper-scissors, so the true Top Cycle (and Uncovered Set) is those three.

Comparisons are aggregated: two rows per pair (``a`` won / ``b`` won, weight = the wins). The
leaderboard treats a row of integer weight ``w`` as ``w`` unit comparisons, both in the model's
cross-validation folds and in the bootstrap, so this is the same in distribution as one row per
game, and the row count does not depend on the games.

Per trial and estimator (``posterior``, ``model``, ``winrate``; :mod:`ste_jax.evaluate._estimators`)
the verdicts are computed as ``membership_verdicts`` computes them: a fit key and a bootstrap key,
the estimator's ``fit`` (:func:`~ste_jax.evaluate.estimator_named`) on the data, ``R`` bootstrap
replicas as the leaderboard draws them by default
(:func:`~ste_jax.evaluate.bootstrap_hard_memberships`: outcomes redrawn from the fitted
model and warm-started refits for the model estimator, Poisson weights over unit comparisons for the
others; compiled once per shape), and :func:`~ste_jax.evaluate._verdicts.verdicts_from_replicas`.

In the ``league`` settings the number of observed pairs varies between trials, and the model fit
compiles once per number of pairs. Each trial's data therefore get zero-weight rows on unobserved
pairs, up to the setting's largest pair count. Such a pair has no comparison for any estimator
(no posterior edge, a missing win rate, no likelihood term, no held-out weight in any fold) and
keeps weight 0 in every Poisson replica; on the first padded trial of the first league setting the
estimators' edges with and without it are compared (printed under the table). The ``planted``
settings have the same number of pairs in every trial and get no padding.

Metrics per setting, estimator and solution concept, counted over agent-trials: the number of ``in``
verdicts and the share of them that are wrong (agent not in the true set), the same for ``out``
(agent in the true set), the share of all verdicts left undetermined, and, for reading the shares,
how many true members were called ``out`` and how many non-members ``in``. Intervals are Wilson
score intervals at 95%; agent-trials of one trial are not independent, so they are narrower than an
interval over trials would be.

Float32 by default (what ``ste-jax score`` runs); ``--float64`` to compare.

Usage:
  python benchmarks/verdicts.py            # full run (minutes on 2 CPU cores; the time is printed)
  python benchmarks/verdicts.py --quick    # a small version (under 2 min; run by the slow test)
  python benchmarks/verdicts.py --csv PATH # also write the per-trial counts
"""

import argparse
import dataclasses
import datetime
import math
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ROOT_SEED = 20260301
CONFIDENCE = 0.95
ESTIMATORS = ("posterior", "model", "winrate")
CONCEPTS = (("TC", "top_cycle"), ("UC", "uncovered"))
Z95 = 1.959963984540054
COUNT_FIELDS = ("agents", "members", "in", "wrong_in", "out", "wrong_out", "undetermined")


@dataclasses.dataclass(frozen=True)
class Setting:
  """One simulated setting.

  Attributes:
    kind: ``"planted"`` or ``"league"``.
    n: number of agents.
    size: comparisons per kept pair (``planted``) or in all (``league``).
    mu: share of pairs without data (``planted``; 0 for ``league``).
    core_size: planted core size (``planted``; 3 for ``league``, the cycle on top).
    trials: number of independent data sets.
  """

  kind: str
  n: int
  size: int
  mu: float
  core_size: int
  trials: int

  @property
  def label(self) -> str:
    if self.kind == "planted":
      return f"planted n={self.n} \\|C\\|={self.core_size} m={self.size} μ={self.mu:g}"
    return f"league n={self.n} {self.size} games, 3-cycle on top"

  @property
  def key_path(self) -> tuple:
    """Integers folded into the root key (independent of the trial count)."""
    if self.kind == "planted":
      return (1, self.n, self.core_size, self.size, int(round(self.mu * 1000)))
    return (2, self.n, self.size)


@dataclasses.dataclass(frozen=True)
class Config:
  """What a run computes.

  Attributes:
    planted_n, planted_core, planted_ms, planted_mus, planted_trials: the planted-core grid.
    league_n, league_sizes, league_trials: the sparse-league settings.
    num_replicas: bootstrap replicas per trial and estimator.
    batch_size: replicas per compiled batch (the leaderboard's default).
    estimators: estimators compared.
  """

  planted_n: int = 20
  planted_core: int = 5
  planted_ms: tuple = (5, 10, 20, 50)
  planted_mus: tuple = (0.0, 0.3)
  planted_trials: int = 30
  league_n: int = 60
  league_sizes: tuple = (1500, 6000)
  league_trials: int = 20
  num_replicas: int = 200
  batch_size: int = 8
  estimators: tuple = ESTIMATORS

  def settings(self) -> list:
    out = [
      Setting("planted", self.planted_n, m, mu, self.planted_core, self.planted_trials)
      for m in self.planted_ms
      for mu in self.planted_mus
    ]
    out += [
      Setting("league", self.league_n, size, 0.0, 3, self.league_trials)
      for size in self.league_sizes
    ]
    return out

  @property
  def num_trials(self) -> int:
    return sum(s.trials for s in self.settings())


FULL = Config()
QUICK = Config(
  planted_ms=(10,), planted_trials=5, league_sizes=(1500,), league_trials=3, num_replicas=100
)


def parse_args(argv=None):
  p = argparse.ArgumentParser(
    description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
  )
  p.add_argument("--quick", action="store_true", help="a small version (under 2 minutes)")
  p.add_argument("--float64", action="store_true", help="run in float64 instead of float32")
  p.add_argument("--csv", default=None, help="also write the per-trial counts to this CSV file")
  p.add_argument("--no-progress", action="store_true", help="disable the progress bar")
  p.add_argument(
    "--estimators",
    nargs="+",
    choices=ESTIMATORS,
    default=None,
    help="run only these estimators (default: all three)",
  )
  return p.parse_args(argv)


# --------------------------------------------------------------------------------------------
# Data


def trial_key(*path):
  """A fresh key: the root seed with ``path`` folded in (a new key object at every call)."""
  import jax

  key = jax.random.key(ROOT_SEED)
  for v in path:
    key = jax.random.fold_in(key, v)
  return key


def simulate(setting: Setting, trial: int):
  """``(wins, observed, P)`` of one trial as NumPy arrays: win counts, observed pairs, true
  tournament."""
  import jax
  import numpy as np

  from ste_jax.data import pair_counts
  from ste_jax.stats import planted_core_tournament, sample_comparisons, sparse_league

  key = trial_key(*setting.key_path, trial, 0)
  if setting.kind == "planted":
    k_p, k_s = jax.random.split(key)
    P = planted_core_tournament(k_p, n=setting.n, core_size=setting.core_size).P
    sampled = sample_comparisons(k_s, P, per_pair=setting.size, missing_rate=setting.mu)
    wins, observed = sampled.wins, sampled.observed
    return np.asarray(wins), np.asarray(observed), np.asarray(P)
  league = sparse_league(
    key, num_agents=setting.n, num_comparisons=setting.size, cycle_strength=1.0
  )
  counts = pair_counts(league.comparisons)
  return np.asarray(counts.wins), np.asarray(counts.totals) > 0, np.asarray(league.P)


def pad_pairs(observed, num_pairs: int):
  """``observed`` (``(n, n)`` symmetric bool) plus the first unobserved pairs in row-major order,
  up to ``num_pairs`` unordered pairs.

  Raises:
    ValueError: if ``observed`` already holds more than ``num_pairs`` pairs.
  """
  import numpy as np

  n = observed.shape[0]
  iu, ju = np.triu_indices(n, k=1)
  free = np.flatnonzero(~observed[iu, ju])
  extra = num_pairs - (iu.size - free.size)
  if extra < 0:
    raise ValueError(f"{iu.size - free.size} observed pairs exceed num_pairs = {num_pairs}.")
  out = observed.copy()
  out[iu[free[:extra]], ju[free[:extra]]] = True
  out[ju[free[:extra]], iu[free[:extra]]] = True
  return out


def counts_to_comparisons(wins, pairs):
  """Aggregated comparisons: for each pair ``a < b`` of ``pairs``, the rows ``(a, b, 1)`` with
  weight ``wins[a, b]`` and ``(a, b, 0)`` with weight ``wins[b, a]`` (either may be 0).

  The leaderboard splits a row of integer weight ``w`` into ``w`` unit comparisons, both for the
  cross-validation folds of the model and for the bootstrap, so these rows give the estimators and
  the bootstrap the same distribution as one row per game; their number, ``2 |pairs|``, does not
  depend on the games, so every trial of a setting has the same shapes.
  """
  import numpy as np

  from ste_jax.data import Comparisons

  w = np.asarray(wins)
  n = w.shape[0]
  a, b = np.nonzero(np.triu(pairs, k=1))
  return Comparisons.from_arrays(
    np.repeat(a, 2),
    np.repeat(b, 2),
    np.tile(np.asarray([1.0, 0.0], dtype=w.dtype), a.size),
    agents=[str(i) for i in range(n)],
    weight=np.stack([w[a, b], w[b, a]], axis=1).reshape(-1),
  )


# --------------------------------------------------------------------------------------------
# Checks


def padding_check(wins, observed, padded, key, estimators) -> dict:
  """``{estimator: max |edge difference|}`` between the data with and without zero-weight pairs."""
  import numpy as np

  from ste_jax.evaluate import estimator_named

  out = {}
  for name in estimators:
    e = [
      np.asarray(estimator_named(name).fit(key(), counts_to_comparisons(wins, p)).edges)
      for p in (observed, padded)
    ]
    out[name] = float(np.max(np.abs(e[0] - e[1])))
  return out


# --------------------------------------------------------------------------------------------
# Experiment


def verdict_counts(labels, truth) -> dict:
  """Counts of one concept's verdict labels against the true membership ``truth`` (``(n,)``)."""
  import numpy as np

  v = np.asarray(labels)
  truth = np.asarray(truth, dtype=bool)
  is_in, is_out = v == "in", v == "out"
  return {
    "agents": int(v.size),
    "members": int(truth.sum()),
    "in": int(is_in.sum()),
    "wrong_in": int((is_in & ~truth).sum()),
    "out": int(is_out.sum()),
    "wrong_out": int((is_out & truth).sum()),
    "undetermined": int((v == "undetermined").sum()),
  }


def share_rule_labels(probability):
  """The earlier rule: ``in`` if ``p >= c``, ``out`` if ``p <= 1 - c`` (``p``: share of replicas'
  hard cores)."""
  import numpy as np

  p = np.asarray(probability, dtype=np.float64)
  out = np.full(p.shape, "undetermined", dtype=object)
  out[p >= CONFIDENCE - 1e-9] = "in"
  out[p <= 1 - CONFIDENCE + 1e-9] = "out"
  return out


def half_rule_labels(verdicts, probability):
  """Where no agent is certified ``in``: ``in`` for the agents in the hard core of at least half the
  replicas, ``undetermined`` for the others; where some agent is certified, ``undetermined`` for
  every agent (no ``out``). What calling the most frequent agents of an unsettled table *likely*
  members would claim."""
  import numpy as np

  v = np.asarray(verdicts, dtype=object)
  chosen = np.asarray(probability, dtype=np.float64) >= 0.5 - 1e-9
  if (v == "in").any():
    chosen = np.zeros(v.shape, bool)
  return np.where(chosen, "in", "undetermined").astype(object)


def run_setting(setting: Setting, cfg: Config, *, check: bool = False, progress=None):
  """Per-trial count rows of one setting, and the padding check (or ``None``).

  Every trial's comparisons are :func:`counts_to_comparisons` of its observed pairs padded
  (:func:`pad_pairs`) to the largest number of observed pairs among the setting's trials, so that
  all trials share shapes (no padding in the ``planted`` settings, whose pair count is fixed).

  Args:
    setting: the :class:`Setting`.
    cfg: the :class:`Config` (replicas, batch size, estimators).
    check: on the first padded trial, compare the estimators' edges with and without the
      zero-weight pairs.
    progress: optional ``progress(num_trials_done)``.

  Returns:
    ``(rows, checks)``: a list of dicts (one per trial, estimator, concept and rule) and, with
    ``check``, ``{"padding": {estimator: max |edge difference|} or None}``.
  """
  import jax
  import numpy as np

  from ste_jax import exact
  from ste_jax.evaluate import bootstrap_hard_memberships, estimator_named
  from ste_jax.evaluate._verdicts import verdicts_from_replicas

  data = [simulate(setting, t) for t in range(setting.trials)]
  target = max(int(np.triu(observed, k=1).sum()) for _, observed, _ in data)
  rows, checks = [], {"padding": None}
  for t, (wins, observed, P) in enumerate(data):
    padded = pad_pairs(observed, target)
    comparisons = counts_to_comparisons(wins, padded)
    truth = {"TC": np.asarray(exact.top_cycle(P)), "UC": np.asarray(exact.uncovered_set(P))}
    if check and checks["padding"] is None and (padded != observed).any():
      checks["padding"] = padding_check(
        wins, observed, padded, lambda: trial_key(*setting.key_path, t, 2), cfg.estimators
      )
    for name in cfg.estimators:
      e = ESTIMATORS.index(name)  # keys as in the full run, also with --estimators
      t0 = time.perf_counter()
      k_fit, k_boot = jax.random.split(trial_key(*setting.key_path, t, 1, e))
      est = estimator_named(name)
      fitted = est.fit(k_fit, comparisons)
      boot = bootstrap_hard_memberships(
        k_boot, comparisons, est, fitted, num_replicas=cfg.num_replicas, batch_size=cfg.batch_size
      )
      verdicts = verdicts_from_replicas(
        boot.top_cycle,
        boot.uncovered,
        boot.beats,
        confidence=CONFIDENCE,
        observed=(wins + wins.T) > 0,
      )  # as the leaderboard: counts.totals > 0
      imputed = None
      if name == "model":
        imputed = verdicts_from_replicas(
          boot.top_cycle, boot.uncovered, boot.beats, confidence=CONFIDENCE
        )
      seconds = time.perf_counter() - t0
      rank = int(fitted.model.chosen.rank) if fitted.model is not None else -1
      for concept, attr in CONCEPTS:
        v = getattr(verdicts, attr)
        rules = [("certified", v.verdict), ("share", share_rule_labels(v.probability))]
        if concept == "TC":
          rules.append(("half", half_rule_labels(v.verdict, v.probability)))
        if imputed is not None:
          rules.append(("certified+imputed", getattr(imputed, attr).verdict))
        for rule, labels in rules:
          rows.append(
            dict(
              setting=setting.label,
              kind=setting.kind,
              n=setting.n,
              size=setting.size,
              mu=setting.mu,
              trial=t,
              estimator=name,
              concept=concept,
              rule=rule,
              model_rank=rank,
              seconds=seconds,
              **verdict_counts(labels, truth[concept]),
            )
          )
    if progress is not None:
      progress(1)
  return rows, (checks if check else None)


def run(cfg: Config, progress=None):
  """All settings: ``(DataFrame of per-trial counts, {setting label: checks of its trial 0})``.

  The first setting of each kind is checked (see :func:`run_setting`).
  """
  import pandas as pd

  rows, checks, kinds = [], {}, set()
  for setting in cfg.settings():
    check = setting.kind not in kinds
    kinds.add(setting.kind)
    r, c = run_setting(setting, cfg, check=check, progress=progress)
    rows += r
    if c is not None:
      checks[setting.label] = c
  return pd.DataFrame(rows), checks


# --------------------------------------------------------------------------------------------
# Summaries and the table


def wilson(k: int, n: int, z: float = Z95) -> tuple:
  """Wilson score interval ``(lo, hi)`` of ``k`` successes in ``n`` trials (NaNs when ``n = 0``)."""
  if n == 0:
    return math.nan, math.nan
  p = k / n
  denom = 1 + z * z / n
  center = (p + z * z / (2 * n)) / denom
  half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
  return max(0.0, center - half), min(1.0, center + half)


def share(k: int, n: int) -> str:
  """``"p [lo, hi] (k/n)"``: the share ``p = k/n`` and its Wilson interval (``—`` if ``n = 0``)."""
  if n == 0:
    return "— (0/0)"
  lo, hi = wilson(k, n)
  return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}] ({k}/{n})"


def summarize(df):
  """Counts summed per (setting, rule, estimator, concept), plus pooled rows per rule, estimator and
  concept.

  Returns:
    A DataFrame with ``COUNT_FIELDS`` columns, ``trials``, ``rule`` and ``setting`` (``"all
    settings"`` and ``"all planted"`` for the pooled rows).
  """
  import pandas as pd

  keys = ["setting", "rule", "estimator", "concept"]
  per = df.groupby(keys, sort=False)[list(COUNT_FIELDS)].sum().reset_index()
  per["trials"] = df.groupby(keys, sort=False).trial.nunique().values
  pooled = []
  for label, sub in (("all planted", df[df.kind == "planted"]), ("all settings", df)):
    if sub.empty:
      continue
    g = sub.groupby(["rule", "estimator", "concept"], sort=False)
    p = g[list(COUNT_FIELDS)].sum().reset_index()
    p["trials"] = g.apply(
      lambda x: len(x[["setting", "trial"]].drop_duplicates()), include_groups=False
    ).values
    p.insert(0, "setting", label)
    pooled.append(p)
  return pd.concat([per] + pooled, ignore_index=True)


def md_table(header, rows) -> str:
  lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
  lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
  return "\n".join(lines)


def verdict_table(summary) -> str:
  """The Markdown table of a :func:`summarize` frame (rules: certified, certified+imputed, share,
  half)."""
  order = {"certified": 0, "certified+imputed": 1, "share": 2, "half": 3}
  summary = summary.sort_values("rule", key=lambda r: r.map(order), kind="stable")
  header = [
    "setting",
    "rule",
    "estimator",
    "set",
    "trials",
    "`in`",
    "wrong `in` share [95% CI]",
    "`out`",
    "wrong `out` share [95% CI]",
    "undetermined share [95% CI]",
    "true members called `out`",
    "non-members called `in`",
  ]
  rows = []
  for r in summary.to_dict("records"):
    rows.append(
      [
        r["setting"],
        r["rule"],
        r["estimator"],
        r["concept"],
        r["trials"],
        r["in"],
        share(r["wrong_in"], r["in"]),
        r["out"],
        share(r["wrong_out"], r["out"]),
        share(r["undetermined"], r["agents"]),
        f"{r['wrong_out']}/{r['members']}",
        f"{r['wrong_in']}/{r['agents'] - r['members']}",
      ]
    )
  return md_table(header, rows)


def report(df, checks, cfg: Config, *, command: str, seconds: float) -> str:
  """The printed report: header, table, model ranks, padding check, timing."""
  from benchmarks._timing import machine_description

  lines = [
    f"Command: `{command}`",
    f"Machine: {machine_description()}",
    f"Date: {datetime.date.today().isoformat()}",
    f"Trials: {cfg.num_trials} data sets "
    f"({', '.join(f'{s.trials} × {s.label}' for s in cfg.settings())}); "
    f"estimators {', '.join(cfg.estimators)}; {cfg.num_replicas} bootstrap replicas per trial and "
    "estimator "
    "(the leaderboard's default resampling: outcomes redrawn from the fitted model, which is "
    "refitted, for "
    "the model estimator; Poisson weights over unit comparisons for the others); verdicts at "
    f"confidence {CONFIDENCE:g}: rule `certified` "
    "(what the leaderboard reports: sure edges = oriented the same way in >= 95% of replicas; `in` "
    "= "
    "reaches every agent through sure edges, within two for UC; `out` = does not through the edges "
    "not "
    "surely reversed; a pair never compared is sure neither way), rule `certified+imputed` (model "
    "only: the "
    "model's predictions for pairs never compared count), rule `share` (the earlier rule: `in` if "
    f"P >= {CONFIDENCE:g}, `out` if P <= "
    f"{1 - CONFIDENCE:.2g}, P = share of replicas whose hard core holds the agent) and rule `half` "
    "(TC only: where no agent is certified "
    "`in`, `in` = the agents with P >= 0.5; no `out`); truth = hard Top Cycle "
    "(TC) / Uncovered Set (UC) of the true P.",
    "",
    "Wrong `in` share = share of `in` verdicts whose agent is not in the true set; wrong `out` "
    "share = "
    "share of `out` verdicts whose agent is in it; undetermined share = share of all agent-trials. "
    "Wilson 95% intervals over agent-trials (not independent within a trial).",
    "",
    verdict_table(summarize(df)),
    "",
  ]
  model = df[(df.estimator == "model") & (df.concept == "TC") & (df.rule == "certified")]
  if not model.empty:
    ranks = model.groupby("setting", sort=False).model_rank.apply(
      lambda r: f"{int((r > 0).sum())}/{len(r)}"
    )
    lines.append(
      "Model estimator, trials whose cross-validation kept an intransitive term: "
      + "; ".join(f"{k}: {v}" for k, v in ranks.items())
      + "."
    )
  for label, c in checks.items():
    if c["padding"] is not None:
      lines.append(
        f"Padding check ({label}, first padded trial): max |edge difference| with and without the "
        "zero-weight pairs: " + ", ".join(f"{k} {v:.1e}" for k, v in c["padding"].items()) + "."
      )
  per_est = (
    df[(df.concept == "TC") & (df.rule == "certified")]
    .groupby("estimator", sort=False)
    .seconds.sum()
  )
  lines.append(
    "Time per estimator (fit + bootstrap, compilations included): "
    + ", ".join(f"{k} {v:.1f} s" for k, v in per_est.items())
    + f"; total {seconds:.1f} s."
  )
  return "\n".join(lines)


def main(argv=None):
  args = parse_args(argv)
  t_start = time.perf_counter()
  import jax

  if args.float64:
    jax.config.update("jax_enable_x64", True)
  from tqdm import tqdm

  cfg = QUICK if args.quick else FULL
  if args.estimators:
    cfg = dataclasses.replace(cfg, estimators=tuple(args.estimators))
  bar = tqdm(
    total=cfg.num_trials, unit="trial", desc="verdicts", disable=args.no_progress, file=sys.stderr
  )
  df, checks = run(cfg, progress=bar.update)
  bar.close()
  if args.csv:
    df.to_csv(args.csv, index=False)
  command = (
    "python benchmarks/verdicts.py"
    + (" --quick" if args.quick else "")
    + (" --float64" if args.float64 else "")
    + (f" --estimators {' '.join(args.estimators)}" if args.estimators else "")
  )
  print(report(df, checks, cfg, command=command, seconds=time.perf_counter() - t_start))
  return 0


if __name__ == "__main__":
  sys.exit(main())
