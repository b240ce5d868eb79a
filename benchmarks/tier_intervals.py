"""Tier-interval calibration: how often the certified tier intervals hold the true tier.

:func:`~ste_jax.evaluate.tier_intervals` gives each agent the best and worst tier over every
tournament that agrees with the edges at least a share ``c = 0.95`` of the bootstrap replicas
orient the same way (the sure edges of the certified verdicts). If every sure edge is a true edge,
all intervals hold at once; this script measures how often they do on simulated data with a known
tournament ``P``, whose true tiers are the condensation tiers of its strict majority relation
(:func:`~ste_jax.exact.condensation_tiers` of ``P > 1/2``).

Data (each trial its own key, derived from the setting and the trial number):

* ``planted``: :func:`~ste_jax.stats.planted_core_tournament` (``n = 16``, a cyclic core of 5 on
  top, the 11 others in a random strict order: 12 tiers), ``m`` games per kept pair, a share ``mu``
  of the pairs without data (:func:`~ste_jax.stats.sample_comparisons`, label noise 0.02);
* ``tiered``: 12 agents in 4 tiers of 3, each tier a 3-cycle (margins ``U(0.1, 0.3)``), the higher
  tier beating the lower with margin ``U(0.05, 0.3)`` per pair.

Per trial and estimator (``winrate``, ``posterior``): the leaderboard's bootstrap
(:func:`~ste_jax.evaluate.bootstrap_hard_memberships`, ``R`` Poisson replicas), its edge shares with
the unobserved pairs masked (as the leaderboard does), and the tier intervals (strict completions,
the default). Metrics over agent-trials: ``cover`` = share of agents whose true tier is in the
interval (Wilson 95% interval), ``all`` = share of trials where every agent's is, ``width`` = mean
``worst - best``, ``exact`` = share with ``best = worst``, ``top`` = share of trials whose true Top
Cycle lies inside the certified top group (``best = 1``), ``|top|`` = its mean size.

Usage: ``python benchmarks/tier_intervals.py [--quick]`` (``--quick``: 20 trials per setting
instead of 100, 100 replicas instead of 200).
"""

import argparse
import dataclasses
import math
import sys
import time

CONFIDENCE = 0.95
ROOT_SEED = 36
ESTIMATORS = ("winrate", "posterior")


@dataclasses.dataclass(frozen=True)
class Setting:
  kind: str  # "planted" or "tiered"
  games: int
  mu: float = 0.0

  @property
  def label(self) -> str:
    return f"{self.kind} m={self.games} mu={self.mu:g}"


SETTINGS = (
  Setting("planted", 10),
  Setting("planted", 40),
  Setting("planted", 40, 0.2),
  Setting("tiered", 10),
  Setting("tiered", 40),
)


def trial_key(*path):
  import jax

  key = jax.random.key(ROOT_SEED)
  for v in path:
    key = jax.random.fold_in(key, v)
  return key


def tiered_tournament(key, *, tiers: int = 4, size: int = 3):
  """``(n, n)`` tournament of ``tiers`` 3-cycles, each tier beating every lower one."""
  import jax
  import numpy as np

  n = tiers * size
  u = np.asarray(jax.random.uniform(key, (n, n)))
  P = np.full((n, n), 0.5)
  for a in range(n):
    for b in range(a + 1, n):
      ta, tb = a // size, b // size
      if ta == tb:  # rotation a -> a+1 -> a+2 -> a inside the tier
        winner, loser = (a, b) if (b - a) % size == 1 else (b, a)
        margin = 0.1 + 0.2 * u[a, b]
      else:
        winner, loser, margin = a, b, 0.05 + 0.25 * u[a, b]
      P[winner, loser], P[loser, winner] = 0.5 + margin, 0.5 - margin
  return P


def simulate(setting: Setting, trial: int):
  """``(wins, observed, P)`` of one trial as NumPy arrays."""
  import jax
  import numpy as np

  from ste_jax.stats import planted_core_tournament, sample_comparisons

  k_p, k_s = jax.random.split(trial_key(SETTINGS.index(setting), trial, 0))
  if setting.kind == "planted":
    P = np.asarray(planted_core_tournament(k_p, n=16, core_size=5).P, dtype=np.float64)
  else:
    P = tiered_tournament(k_p)
  sampled = sample_comparisons(
    k_s, jax.numpy.asarray(P, jax.numpy.float32), per_pair=setting.games, missing_rate=setting.mu
  )
  return np.asarray(sampled.wins), np.asarray(sampled.observed), P


def counts_to_comparisons(wins, observed):
  """Two aggregated rows per observed pair ``a < b`` (``a`` won, ``b`` won; weight = the wins)."""
  import numpy as np

  from ste_jax.data import Comparisons

  n = wins.shape[0]
  a, b = np.nonzero(np.triu(observed, k=1))
  return Comparisons.from_arrays(
    np.repeat(a, 2),
    np.repeat(b, 2),
    np.tile(np.asarray([1.0, 0.0]), a.size),
    agents=[str(i) for i in range(n)],
    weight=np.stack([wins[a, b], wins[b, a]], axis=1).reshape(-1),
  )


def run_setting(setting: Setting, trials: int, replicas: int) -> list[dict]:
  """One row per trial and estimator: the coverage counts of that trial."""
  import jax
  import jax.numpy as jnp
  import numpy as np

  from ste_jax import exact
  from ste_jax.evaluate import bootstrap_hard_memberships, estimator_named, tier_intervals

  rows = []
  for t in range(trials):
    wins, observed, P = simulate(setting, t)
    comparisons = counts_to_comparisons(wins, observed)
    n = P.shape[0]
    truth = np.asarray(exact.condensation_tiers(jnp.asarray(P > 0.5) & ~jnp.eye(n, dtype=bool)))
    true_tc = truth == 1
    for e, name in enumerate(ESTIMATORS):
      k_fit, k_boot = jax.random.split(trial_key(SETTINGS.index(setting), t, 1, e))
      est = estimator_named(name)
      fitted = est.fit(k_fit, comparisons)
      boot = bootstrap_hard_memberships(k_boot, comparisons, est, fitted, num_replicas=replicas)
      beats = np.where((wins + wins.T) > 0, np.asarray(boot.beats, dtype=np.float64), 0.0)
      ti = tier_intervals(jnp.asarray(beats), CONFIDENCE)
      best, worst = np.asarray(ti.best), np.asarray(ti.worst)
      covered = (best <= truth) & (truth <= worst)
      top = np.asarray(ti.top_group)
      rows.append(
        dict(
          setting=setting.label,
          estimator=name,
          agents=n,
          covered=int(covered.sum()),
          all_covered=bool(covered.all()),
          width=float((worst - best).mean()),
          exact=int((best == worst).sum()),
          top_holds=bool(top[true_tc].all()),
          top_size=int(top.sum()),
        )
      )
  return rows


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
  if n == 0:
    return float("nan"), float("nan")
  p = k / n
  d = 1 + z * z / n
  c = (p + z * z / (2 * n)) / d
  h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
  return c - h, c + h


def summarize(rows: list[dict]) -> list[dict]:
  """Per setting and estimator: the metrics of the module docstring."""
  out = []
  keys = dict.fromkeys((r["setting"], r["estimator"]) for r in rows)
  for setting, estimator in keys:
    rs = [r for r in rows if r["setting"] == setting and r["estimator"] == estimator]
    agents = sum(r["agents"] for r in rs)
    covered = sum(r["covered"] for r in rs)
    out.append(
      dict(
        setting=setting,
        estimator=estimator,
        trials=len(rs),
        cover=covered / agents,
        cover_ci=wilson(covered, agents),
        all=sum(r["all_covered"] for r in rs) / len(rs),
        width=sum(r["width"] for r in rs) / len(rs),
        exact=sum(r["exact"] for r in rs) / agents,
        top=sum(r["top_holds"] for r in rs) / len(rs),
        top_size=sum(r["top_size"] for r in rs) / len(rs),
      )
    )
  return out


def table(summary: list[dict]) -> str:
  lines = [
    "| setting | estimator | trials | cover (95% CI) | all | width | exact | top | \\|top\\| |",
    "|---|---|---:|---|---:|---:|---:|---:|---:|",
  ]
  for s in summary:
    lo, hi = s["cover_ci"]
    lines.append(
      f"| {s['setting']} | {s['estimator']} | {s['trials']} | {s['cover']:.3f} "
      f"[{lo:.3f}, {hi:.3f}] | {s['all']:.2f} | {s['width']:.2f} | {s['exact']:.2f} | "
      f"{s['top']:.2f} | {s['top_size']:.1f} |"
    )
  return "\n".join(lines)


def run(quick: bool) -> list[dict]:
  trials, replicas = (20, 100) if quick else (100, 200)
  rows = []
  for setting in SETTINGS:
    rows += run_setting(setting, trials, replicas)
  return summarize(rows)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--quick", action="store_true", help="20 trials, 100 replicas")
  args = parser.parse_args(argv)
  t0 = time.perf_counter()
  summary = run(args.quick)
  print(table(summary))
  print(
    f"\nconfidence {CONFIDENCE}; strict completions; {time.perf_counter() - t0:.0f} s; "
    f"command: python benchmarks/tier_intervals.py{' --quick' * args.quick}"
  )
  return 0


if __name__ == "__main__":
  sys.exit(main())
