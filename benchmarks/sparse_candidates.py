"""Sparse data, unsettled top: what the leaderboard says about the true Top Cycle, and whether the
replicas' candidates hold it.

Two kinds of sparse data, each over several seeds, each run through ``ste_jax.evaluate.core_table``
with its defaults (model estimator, 200 parametric bootstrap replicas, verdicts at 0.95):

* ``uniform``: 300 agents with normal log-strengths, each paired with 4 opponents drawn uniformly
  (so about 8 opponents per agent), 3 games per pair; the three strongest play rock-paper-scissors
  (P = 0.7 around the cycle) and beat every other agent with P >= 0.75; plus 100 qualifiers with one
  game each against a random agent. Every strong agent crushes its few random opponents, so the
  data cannot say which of the top few dozen agents are the strongest.
* ``league``: ``ste_jax.stats.sparse_league`` (300 agents, 6,000 matches, heavy-tailed activity,
  local pairing) with the three strongest in a cycle of logit ``--cycle``.

For each run: the true Top Cycle (``exact.top_cycle`` of the true P), the point estimate's hard
Top Cycle and how many of its agents are true members, its soft Top-Cycle score and ``P(TC)``
next to the best soft score of the other agents, the certified ``in`` / ``out`` counts, the
Top-Cycle candidates at 0.95 (``ste_jax.evaluate.replica_core_candidates``: the agents most
often in the replicas' hard Top Cycles, enough to hold the whole Top Cycle of 95% of the
replicas), whether they
hold every true member, each true member's row in the table (``CoreTable.order``: agents with a
higher ``P(TC)`` than every member of the point estimate's Top Cycle above it) and in the point
estimate's order (tier, then soft scores: the table's order before that rule) with its number of
games, and how
many pairs among the true members and among the table's first 10 rows
(``CoreTable.head_to_head``) were compared; the case of the table's answer line
(``CoreTable.answer``: certified, partly certified, not settled) with how many of the agents it
names are true members (not settled: the three agents most often in the replicas' Top Cycles), and
in how many runs it certified an agent outside the true Top Cycle;
and of the 10 pairs ``suggest_pairs`` proposes
(seed 0), how many touch a candidate, with the relevance from posterior draws (``plausible_cores=
None``) and from the replicas' cores (``replica_cores``, what ``ste-jax suggest`` uses on such
data).

Usage: .venv/bin/python benchmarks/sparse_candidates.py [--seeds 0 1 2 3] [--kinds uniform league]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import machine_description  # noqa: E402
from ste_jax.data import Comparisons, pair_counts  # noqa: E402
from ste_jax.evaluate import core_table, replica_cores, suggest_pairs  # noqa: E402
from ste_jax.evaluate._leaderboard import display_order  # noqa: E402
from ste_jax.exact import top_cycle  # noqa: E402
from ste_jax.stats import sparse_league  # noqa: E402

TOP_ROWS = 10  # the rows an analyst reads first (`ste-jax score --top 10`)


def uniform_league(
  seed: int, n_main: int = 300, n_qualifiers: int = 100, opponents: int = 4, games: int = 3
):
  """``(comparisons, true P)`` of the ``uniform`` design (module docstring)."""
  rng = np.random.default_rng(seed)
  n = n_main + n_qualifiers
  s = rng.normal(size=n)
  P = 1.0 / (1.0 + np.exp(-(s[:, None] - s[None, :])))
  top = np.argsort(-s[:n_main], kind="stable")[:3]
  rest = np.setdiff1d(np.arange(n), top)
  P[np.ix_(top, rest)] = np.maximum(P[np.ix_(top, rest)], 0.75)
  P[np.ix_(rest, top)] = 1.0 - P[np.ix_(top, rest)].T
  for x, y in ((top[0], top[1]), (top[1], top[2]), (top[2], top[0])):
    P[x, y], P[y, x] = 0.7, 0.3
  i = np.repeat(np.arange(n_main), opponents)
  j = rng.integers(n_main, size=i.size)
  keep = i != j
  pairs = np.unique(np.sort(np.stack([i[keep], j[keep]], axis=1), axis=1), axis=0)
  core_pairs = np.sort(np.array([[top[0], top[1]], [top[1], top[2]], [top[2], top[0]]]), axis=1)
  pairs = np.unique(np.concatenate([pairs, core_pairs]), axis=0)
  a = np.concatenate([np.repeat(pairs[:, 0], games), np.arange(n_main, n)])
  b = np.concatenate([np.repeat(pairs[:, 1], games), rng.integers(n_main, size=n_qualifiers)])
  outcome = (rng.random(a.size) < P[a, b]).astype(np.float32)
  comps = Comparisons.from_arrays(
    a.astype(np.int32), b.astype(np.int32), outcome, agents=[f"agent{k:03d}" for k in range(n)]
  )
  return comps, P


def league(seed: int, cycle: float):
  lg = sparse_league(
    jax.random.key(seed), num_agents=300, num_comparisons=6000, cycle_strength=cycle
  )
  return lg.comparisons, np.asarray(lg.P, np.float64)


def run(kind: str, seed: int, cycle: float) -> dict:
  comps, P = uniform_league(seed) if kind == "uniform" else league(seed, cycle)
  truth = np.flatnonzero(np.asarray(top_cycle(jax.numpy.asarray(P))))
  t0 = time.perf_counter()
  table = core_table(jax.random.key(seed), comps)
  seconds = time.perf_counter() - t0
  cols = table.columns
  point = np.flatnonzero(cols["hard_tc"])
  cands = table.top_cycle_candidates
  # Each agent's table row (1 = first): the table's order, and the point estimate's order (tier,
  # then soft scores: the table's order without replicas).
  row, point_row = np.empty(len(table.agents), np.int64), np.empty(len(table.agents), np.int64)
  row[table.order] = np.arange(1, len(table.agents) + 1)
  point_row[display_order(cols, bootstrapped=False)] = np.arange(1, len(table.agents) + 1)
  totals = np.asarray(pair_counts(comps).totals)
  # `ste-jax suggest --k 10`: the relevance from posterior draws, and from the replicas' cores.
  touching = {}
  for source, cores in (
    ("posterior", None),
    ("model", replica_cores(jax.random.key(0), comps)),
  ):
    pairs = np.asarray(suggest_pairs(jax.random.key(0), comps, k=10, plausible_cores=cores).pairs)
    touching[source] = int(np.isin(pairs, cands.members).any(axis=1).sum())
  return {
    "kind": kind,
    "seed": seed,
    "agents": len(table.agents),
    "truth": len(truth),
    "point": len(point),
    "point_true": int(np.isin(point, truth).sum()),
    "in": int((cols["tc_verdict"] == "in").sum()),
    "out": int((cols["tc_verdict"] == "out").sum()),
    "soft": (
      float(cols["tc_score"][point].max()),
      float(cols["p_tc"][point].max()),
      float(np.delete(cols["tc_score"], point).max()),
    ),
    "candidates": len(cands.members),
    "share": cands.share,
    "holds_truth": bool(np.isin(truth, cands.members).all()),
    "members": sorted(
      (int(row[i]), int(point_row[i]), int(totals[i].sum()), bool(np.isin(i, cands.members)))
      for i in truth
    ),
    "seconds": seconds,
    "touching": touching,
    "core_pairs": (
      f"{int((totals[np.ix_(truth, truth)] > 0).sum()) // 2} of "
      f"{len(truth) * (len(truth) - 1) // 2}"
    ),
    "top_pairs": (
      f"{int(np.triu(table.head_to_head(TOP_ROWS).compared, 1).sum())} of "
      f"{TOP_ROWS * (TOP_ROWS - 1) // 2}"
    ),
    "answer": _answer_cell(table.answer(TOP_ROWS), [table.agents[i] for i in truth]),
  }


def _answer_cell(answer, truth) -> tuple[str, bool]:
  """``(cell, misleading)``: the answer's case with its named agents that are true members, and
  whether it certifies an agent outside the true Top Cycle."""
  true_named = sum(a in truth for a in answer.members)
  claims = answer.status in ("certified", "partly certified")
  return (
    f"{answer.status}: {true_named} of {len(answer.members)} named true",
    claims and true_named < len(answer.members),
  )


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
  parser.add_argument(
    "--kinds", nargs="+", default=["uniform", "league"], choices=["uniform", "league"]
  )
  parser.add_argument(
    "--cycle", type=float, default=2.5, help="league: cycle logit among the three strongest"
  )
  args = parser.parse_args(argv)
  print(
    f"machine: {machine_description()}; core_table defaults (model estimator, 200 parametric "
    "replicas, "
    f"confidence 0.95); league cycle logit {args.cycle}"
  )
  print(
    "| data | seed | agents | true TC | point TC (true members) | certified in / out | TC "
    "candidates at 0.95 "
    "(share of replicas held) | point TC: soft TC score, P(TC); best soft TC score of the rest | "
    "candidates hold the true TC | true members: table row (row in the point estimate's order; "
    "games; * = candidate) "
    f"| pairs among them compared | pairs among the first {TOP_ROWS} rows compared | answer: case "
    "(named agents in the true TC) "
    "| suggested pairs touching a candidate, posterior / model (of 10) | seconds |"
  )
  print("|---|---:|---:|---:|---|---|---|---|---|---|---|---|---|---|---:|")
  held, top_rows, first_row, misleading = {}, {}, {}, {}
  for kind in args.kinds:
    for seed in args.seeds:
      r = run(kind, seed, args.cycle)
      held.setdefault(kind, []).append(r["holds_truth"])
      misleading.setdefault(kind, []).append(r["answer"][1])
      for k, k0, _, _ in r["members"]:
        top_rows.setdefault(kind, []).append((k <= TOP_ROWS, k0 <= TOP_ROWS))
      first_row.setdefault(kind, []).append(
        tuple(any(m[j] == 1 for m in r["members"]) for j in (0, 1))
      )
      print(
        f"| {kind} | {seed} | {r['agents']} | {r['truth']} | {r['point']} ({r['point_true']}) | "
        f"{r['in']} / "
        f"{r['out']} | {r['candidates']} ({r['share']:.0%}) | {r['soft'][0]:.2f}, "
        f"{r['soft'][1]:.2f}; {r['soft'][2]:.2f} | "
        f"{'yes' if r['holds_truth'] else 'no'} | "
        f"{', '.join(f'{k} ({k0}; {g}){chr(42) * c}' for k, k0, g, c in r['members'])} | "
        f"{r['core_pairs']} | {r['top_pairs']} | {r['answer'][0]} | "
        f"{r['touching']['posterior']} / {r['touching']['model']} | "
        f"{r['seconds']:.1f} |",
        flush=True,
      )
  for kind, h in held.items():
    print(f"{kind}: the candidates held the whole true Top Cycle in {sum(h)} of {len(h)} runs")
  for kind, m in misleading.items():
    print(
      f"{kind}: the answer certified an agent outside the true Top Cycle in {sum(m)} of {len(m)} "
      "runs"
    )
  for counts, what in (
    (top_rows, f"true Top-Cycle members in the first {TOP_ROWS} rows:"),
    (first_row, "the first row a true Top-Cycle member in"),
  ):
    for (
      kind,
      pairs,
    ) in counts.items():  # (in the table's order, in the point estimate's order) per item
      now, before = (sum(x[k] for x in pairs) for k in (0, 1))
      unit = " runs" if counts is first_row else ""
      print(
        f"{kind}: {what} {now} of {len(pairs)}{unit} in the table's order, {before} of "
        f"{len(pairs)}{unit} "
        "in the point estimate's order"
      )


if __name__ == "__main__":
  main()
