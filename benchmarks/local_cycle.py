"""Does the model estimator see a cycle confined to three well-observed leaders? (issue 10 probe)

A sparse 300-agent league (``ste_jax.stats.sparse_league``: heavy-tailed activity, local pairing,
6,000 matches) whose three strongest agents play rock-paper-scissors (logit ``--cycle``), plus
``g`` extra games per pair among those three and 20 games of each against random others. For
each ``g`` the script fits the leaderboard's model estimator (5-fold CV, one-standard-error rule)
and prints: the chosen model, its held-out log-loss next to Bradley-Terry's, the three records,
the table's P for each core pair, the table's hard Top Cycle, the head-to-head contradictions
the table reports (``ste_jax.evaluate.head_to_head_contradictions``, FDR 0.05), and, for 200
bootstrap replicas of each kind (Poisson reweighting and the parametric redraw from the fitted
model, ``resampling=``), the four agents most often in the replicas' hard Top Cycles with their
shares (``P(TC)``) and games.

Usage: .venv/bin/python benchmarks/local_cycle.py [--games 10 15 30] [--cycle 2.5] [--seed 0]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import machine_description  # noqa: E402
from ste_jax.data import Comparisons  # noqa: E402
from ste_jax.evaluate import (  # noqa: E402
  LeaderboardSettings,
  bootstrap_hard_memberships,
  core_table,
  fit_estimator,
)
from ste_jax.exact import top_cycle  # noqa: E402
from ste_jax.stats import sparse_league  # noqa: E402


def probe(seed: int, cycle: float, games: int):
  """The league with ``games`` extra games per core pair: ``(comparisons, core indices)``."""
  league = sparse_league(
    jax.random.key(seed), num_agents=300, num_comparisons=6000, cycle_strength=cycle
  )
  c, P = league.comparisons, np.asarray(league.P)
  core = np.flatnonzero(np.asarray(top_cycle(league.P)))
  rng = np.random.default_rng(seed)
  a, b, o = [list(np.asarray(x)) for x in (c.a, c.b, c.outcome)]
  extra = [(x, y) for x in core for y in core if x < y] * games
  for x in core:
    extra += [(x, y) for y in rng.integers(300, size=20) if y not in core]
  for u, v in extra:
    a.append(u), b.append(v), o.append(float(rng.random() < P[u, v]))
  comps = Comparisons.from_arrays(
    np.asarray(a, np.int32), np.asarray(b, np.int32), np.asarray(o, np.float32), agents=c.agents
  )
  return comps, core


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--games", type=int, nargs="+", default=[10, 15, 30])
  parser.add_argument("--cycle", type=float, default=2.5)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args(argv)
  print(
    f"machine: {machine_description()}; league n=300, 6000 matches, cycle logit {args.cycle}, seed "
    f"{args.seed}"
  )
  print(
    "| games per core pair | chosen model | CV log-loss (model / BT) | core records (wins of first "
    "/ games) "
    "| table P for those pairs | table's hard TC | contradictions reported | most often in the "
    "replicas' TC, "
    "Poisson (P(TC), games) | same, parametric |"
  )
  print("|---|---|---|---|---|---|---|---|---|")
  for g in args.games:
    comps, core = probe(args.seed, args.cycle, g)
    table = core_table(jax.random.key(0), comps, "model", LeaderboardSettings(num_replicas=0))
    names = comps.agents
    a, b, o = (np.asarray(x) for x in (comps.a, comps.b, comps.outcome))
    records, probs = [], []
    for x, y in ((core[0], core[1]), (core[1], core[2]), (core[2], core[0])):
      fwd, bwd = (a == x) & (b == y), (a == y) & (b == x)
      records.append(
        f"{names[x]}>{names[y]} {o[fwd].sum() + (1 - o[bwd]).sum():.0f}/{fwd.sum() + bwd.sum()}"
      )
      probs.append(f"{table.P[x, y]:.2f}")
    m = table.model
    model = (
      "BT" if m.chosen.rank == 0 else f"BT + rank {m.chosen.rank} (ridge {m.chosen.l2_skew:g})"
    )
    found = table.diagnostics.contradictions
    shown = (
      "; ".join(
        f"{c.winner}>{c.loser} {c.record_wins:g}/{c.games:g} (p={c.p_value:.1e})" for c in found
      )
      or "none"
    )
    games = np.bincount(np.concatenate([a, b]), minlength=len(names))
    est, _, fitted, _ = fit_estimator(jax.random.key(0), comps, "model")  # the table's fit
    frequent = []
    for resampling in ("poisson", "parametric"):
      p_tc = bootstrap_hard_memberships(
        jax.random.key(1), comps, est, fitted, num_replicas=200, resampling=resampling
      ).top_cycle.mean(axis=0)
      top = np.argsort(-p_tc, kind="stable")[:4]
      frequent.append(
        ", ".join(f"{names[i]}{'*' if i in core else ''} ({p_tc[i]:.2f}, {games[i]})" for i in top)
      )
    print(
      f"| {g} | {model} | {m.cv_log_loss:.4f} / {m.bt_cv_log_loss:.4f} | {', '.join(records)} | "
      f"{', '.join(probs)} "
      f"| {', '.join(table.top_cycle)} | {shown} | {frequent[0]} | {frequent[1]} |"
    )
  print(f"true Top Cycle (* in the last columns): {', '.join(names[i] for i in core)}")


if __name__ == "__main__":
  main()
