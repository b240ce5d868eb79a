"""Cluster bootstrap vs per-comparison bootstrap on the LLMFAO crowd votes (issue 36).

The raw file (``../shared/data/llmfao_crowd/raw/crowd-comparisons.csv``) has, per vote, the item
``id`` (one pair of answers to one prompt, judged by about 4 workers), the ``prompt`` (13) and the
``worker`` (124 crowd annotators). Votes on one item, by one worker or on one prompt are not
independent draws; this script scores the same votes with the same key and estimator, resampling
unit comparisons and then each clustering, and prints how the verdicts and the soft Top-Cycle
intervals change.

Per resampling unit: the number of clusters, the Top-Cycle and Uncovered-Set verdicts (in / out /
undetermined), the mean width of the agents' soft Top-Cycle intervals (``tc_hi - tc_lo``) and its
ratio to the per-comparison one, and the wall time. Then, for the first ``--top`` agents of the
per-comparison table, ``P(TC)`` and the verdict under each unit.

Usage:
  python benchmarks/cluster_bootstrap.py                      # winrate, 200 replicas
  python benchmarks/cluster_bootstrap.py --estimator posterior --replicas 100
"""

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks._timing import machine_description  # noqa: E402
from ste_jax.evaluate import leaderboard  # noqa: E402

RAW = ROOT.parent / "shared" / "data" / "llmfao_crowd" / "raw" / "crowd-comparisons.csv"
UNITS = (None, "id", "worker", "prompt")


def votes(path: pathlib.Path) -> pd.DataFrame:
  """The crowd votes as ``a, b, winner`` (left, right; ``a`` / ``b`` / ``tie``) plus cluster ids."""
  raw = pd.read_csv(path)
  winner = raw["winner"].map({"left": "a", "right": "b", "tie": "tie"})
  return pd.DataFrame(
    dict(
      a=raw["left"],
      b=raw["right"],
      winner=winner,
      id=raw["id"].astype(str),
      worker=raw["worker"].astype(str),
      prompt=raw["prompt"].astype(str),
    )
  )


def _counts(verdicts: pd.Series) -> str:
  return " / ".join(str(verdicts.get(v, 0)) for v in ("in", "out", "undetermined"))


def main() -> int:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--estimator", default="winrate", choices=("winrate", "posterior", "model"))
  parser.add_argument("--replicas", type=int, default=200)
  parser.add_argument("--top", type=int, default=8)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()

  df = votes(RAW)
  print(f"machine: {machine_description()}")
  print(
    f"data: LLMFAO crowd votes, {len(df):,} votes, {pd.unique(df[['a', 'b']].values.ravel()).size}"
    f" models; estimator {args.estimator}, {args.replicas} replicas, confidence 0.95, Poisson "
    "resampling (cluster: one Poisson(1) weight per cluster)"
  )
  print()
  frames, rows = {}, []
  for unit in UNITS:
    start = time.perf_counter()
    lb = leaderboard(
      jax.random.key(args.seed),
      df,
      args.estimator,
      num_replicas=args.replicas,
      cluster_column=unit,
      soft_intervals=True,
      resampling="poisson",
    )
    elapsed = time.perf_counter() - start
    table = lb.table()
    frame = table.to_frame()
    frames[unit] = frame
    verdicts = (frame["tc_verdict"].value_counts(), frame["uc_verdict"].value_counts())
    width = float(np.mean(frame["tc_hi"] - frame["tc_lo"]))
    rows.append((unit, table.num_clusters, verdicts, width, elapsed))
  base_width = rows[0][3]
  print(
    "| resampling unit | clusters | TC in / out / undetermined | UC in / out / undetermined "
    "| mean soft-TC interval width | vs per comparison | time (s) |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|")
  for unit, clusters, verdicts, width, elapsed in rows:
    name = "comparison" if unit is None else unit
    count = "—" if clusters is None else f"{clusters:,}"
    print(
      f"| {name} | {count} | {_counts(verdicts[0])} | {_counts(verdicts[1])} "
      f"| {width:.3f} | {width / base_width:.2f}x "
      f"| {elapsed:.1f} |"
    )
  print()
  top = frames[None].index[: args.top]
  header = " | ".join(f"P(TC), verdict by {'comparison' if u is None else u}" for u in UNITS)
  print(f"| agent | {header} |")
  print("|---|" + "---|" * len(UNITS))
  for agent in top:
    cells = " | ".join(
      f"{frames[u].loc[agent, 'p_tc']:.2f} {frames[u].loc[agent, 'tc_verdict']}" for u in UNITS
    )
    print(f"| {agent} | {cells} |")
  return 0


if __name__ == "__main__":
  sys.exit(main())
