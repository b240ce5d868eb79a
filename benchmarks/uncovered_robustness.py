"""Uncovered-Set vote robustness: time, and how many outsiders get an exact count in the budget.

``vote_robustness(..., uncovered=True)`` computes, per agent, the fewest reversed (and removed)
comparisons that change its hard Uncovered-Set membership: a closed form for members, a 0-1
program (HiGHS, a shared time budget ``uc_time_limit`` per action) for outsiders, exact where the
greedy bound or the solver proves it, else certified bounds
(:mod:`ste_jax.evaluate._uncovered_robustness`). Input: a Bradley-Terry league with strengths
evenly spaced over ``[0, 6]`` logits (a small Uncovered Set, many outsiders: the expensive case),
``m`` games on every pair, one seed. Columns: agents, Uncovered-Set size, the seconds of the whole
``vote_robustness`` call (Top Cycle included), the share of outsiders whose reversal count is exact,
the largest gap ``upper - lower`` among the others.

Usage: ``python benchmarks/uncovered_robustness.py [--sizes 30 100 200] [--budget 5]``.
"""

import argparse
import platform
import sys
import time


def league_wins(n: int, games: int, seed: int = 0):
  """``(n, n)`` int win counts of ``games`` games per pair of a spaced Bradley-Terry league."""
  import numpy as np

  rng = np.random.default_rng(seed)
  s = np.linspace(0.0, 6.0, n)
  P = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
  upper = np.triu(rng.binomial(games, P), 1)
  return upper + np.triu(games - upper, 1).T


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[30, 100, 200])
  parser.add_argument("--games", type=int, default=10)
  parser.add_argument("--budget", type=float, default=5.0, help="uc_time_limit, seconds")
  args = parser.parse_args(argv)
  import numpy as np

  from ste_jax.data import PairCounts
  from ste_jax.evaluate import vote_robustness

  print(f"machine: {platform.processor() or platform.machine()}; budget {args.budget:g} s/action")
  print("| n | UC size | seconds | outsiders exact (flips) | largest gap |")
  print("|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    W = league_wins(n, args.games).astype(np.float64)
    counts = PairCounts(wins=W, totals=W + W.T, ties=np.zeros_like(W))
    t0 = time.perf_counter()
    r = vote_robustness(counts, uncovered=True, uc_time_limit=args.budget)
    seconds = time.perf_counter() - t0
    outside = ~np.asarray(r.uc_members)
    exact = (r.uc_flips_lower == r.uc_flips_to_change)[outside]
    gap = int((r.uc_flips_to_change - r.uc_flips_lower).max())
    print(
      f"| {n} | {int((~outside).sum())} | {seconds:.1f} | {exact.mean():.2f} "
      f"({int(exact.sum())} of {exact.size}) | {gap} |"
    )
  return 0


if __name__ == "__main__":
  sys.exit(main())
