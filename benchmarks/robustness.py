"""Time of exact vote robustness (issue 36): the fewest reversed / removed comparisons that change
each agent's hard Top-Cycle membership, for every agent.

Input per size ``n``: a planted-core tournament (:func:`ste_jax.stats.planted_core_tournament`,
core of ``max(3, n // 10) | 1`` agents) observed through :func:`ste_jax.stats.sample_comparisons`
(``--per-pair`` games on each kept pair, ``--missing`` of the pairs never compared, 2 % label
noise), read as weighted comparisons (one row per ordered pair and winner).

Timed per size (wall clock, after one warm-up run of each on a small input so that imports and
compilation are not counted):

* ``vote_robustness`` with ``estimator="winrate"`` (both the reversal and the removal counts);
* the baseline measured in the same run: one :func:`ste_jax.evaluate.core_table` of the same
  comparisons with the win-rate estimator and no bootstrap (the table the counts explain);
* :func:`ste_jax.evaluate.comparison_influence` (winrate): the derivative of the top 10 agents'
  soft Top-Cycle and Uncovered scores with respect to every comparison's weight, after one call
  on the same comparisons (its compile time is printed separately).

Usage:
  python benchmarks/robustness.py                       # n = 30, 100, 300, 1000
  python benchmarks/robustness.py --sizes 30 100 --rounds 1
"""

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import machine_description, peak_rss_mb  # noqa: E402
from ste_jax.data import Comparisons  # noqa: E402
from ste_jax.evaluate import (  # noqa: E402
  LeaderboardSettings,
  comparison_influence,
  core_table,
  vote_robustness,
)
from ste_jax.stats import planted_core_tournament, sample_comparisons  # noqa: E402


def comparisons_of(n: int, per_pair: int, missing: float, seed: int = 0) -> Comparisons:
  """Weighted comparisons (one row per ordered pair with wins) of a sampled planted tournament."""
  k1, k2 = jax.random.split(jax.random.key(seed))
  P = planted_core_tournament(k1, n=n, core_size=max(3, n // 10) | 1).P
  wins = np.asarray(sample_comparisons(k2, P, per_pair=per_pair, missing_rate=missing).wins)
  a, b = np.nonzero(wins > 0)
  return Comparisons.from_arrays(
    a, b, np.ones(a.size), weight=wins[a, b], agents=[f"agent-{i:04d}" for i in range(n)]
  )


def best_of(rounds: int, fn) -> float:
  times = []
  for _ in range(rounds):
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)
  return min(times)


def main() -> int:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--sizes", type=int, nargs="+", default=[30, 100, 300, 1000])
  parser.add_argument("--per-pair", type=int, default=10)
  parser.add_argument("--missing", type=float, default=0.0)
  parser.add_argument("--rounds", type=int, default=2, help="best of this many runs per size")
  args = parser.parse_args()

  warm = comparisons_of(12, args.per_pair, args.missing)
  vote_robustness(warm, estimator="winrate")
  settings = LeaderboardSettings(num_replicas=0)
  print(f"machine: {machine_description()}")
  print(
    f"input: planted-core tournaments, {args.per_pair} games per kept pair, "
    f"{args.missing:.0%} of pairs never compared, 2% label noise; estimator winrate"
  )
  print()
  print(
    "| n | comparisons | Top Cycle size | vote_robustness (s) | core_table, no bootstrap (s) "
    "| ratio | median flips to change | influence, top 10 (s) | influence / table "
    "| influence first call (s) | peak RSS (MB) |"
  )
  print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    c = comparisons_of(n, args.per_pair, args.missing)
    core_table(jax.random.key(0), c, "winrate", settings)  # compiles this shape
    result = {}

    def robustness():
      result["r"] = vote_robustness(c, estimator="winrate")

    t_robust = best_of(args.rounds, robustness)
    t_table = best_of(args.rounds, lambda: core_table(jax.random.key(0), c, "winrate", settings))
    t_first = best_of(
      1, lambda: comparison_influence(jax.random.key(0), c, "winrate", num_agents=10)
    )
    t_infl = best_of(
      args.rounds, lambda: comparison_influence(jax.random.key(0), c, "winrate", num_agents=10)
    )
    r = result["r"]
    flips = np.asarray(r.flips_to_change)
    print(
      f"| {n} | {float(np.sum(np.asarray(c.weight))):,.0f} | {int(np.sum(r.members))} "
      f"| {t_robust:.2f} | {t_table:.2f} | {t_robust / t_table:.1f}x "
      f"| {np.median(flips[flips >= 0]):g} | {t_infl:.2f} | {t_infl / t_table:.1f}x "
      f"| {t_first:.1f} | {peak_rss_mb():.0f} |",
      flush=True,
    )
  return 0


if __name__ == "__main__":
  sys.exit(main())
