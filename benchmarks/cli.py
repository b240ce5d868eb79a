"""Wall time and peak memory of ``ste-jax score`` with its defaults on large, sparse inputs (issues
6, 10).

Inputs (written to a temporary CSV, ``a, b, winner``):

* ``league`` (default): a tennis-like sparse tour from :func:`ste_jax.stats.sparse_league` —
  1,200 agents, 30,000 comparisons, heavy-tailed games per agent (many agents with 1-5 matches,
  a few with thousands), opponents of similar strength preferred, no ties;
* ``arena``: the issue-6 synthetic arena battles (uniformly random pairs, 10 % ties, a 5-cycle on
  top of Bradley-Terry strengths).

Each estimator is timed as a whole command in a fresh process (``python -m ste_jax score FILE
--estimator E --output csv --no-progress`` with the default 200 bootstrap replicas): interpreter
start, JAX import, loading, compilation, model fit, bootstrap and baselines. Peak RSS is the
child's own maximum resident set (``os.wait4``). With ``--before PATH`` (a checkout of an older
revision, e.g. ``git worktree add /tmp/before 01191f0``) the same commands run against that source
tree too (an estimator it does not know shows "failed"), as the baseline measured in the same run.

Usage:
  python benchmarks/cli.py                                  # league, every estimator
  python benchmarks/cli.py --before /tmp/before             # ... and the older revision
  python benchmarks/cli.py --input arena --agents 1000 --comparisons 100000
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks._timing import machine_description  # noqa: E402

ESTIMATORS = ("auto", "posterior", "winrate", "model")


def write_arena(path: pathlib.Path, n: int, m: int, seed: int = 0) -> str:
  rng = np.random.default_rng(seed)
  strength = rng.normal(size=n)
  strength[:5] = strength.max() + 3.0  # a planted top tier ...
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n  # never a self-pair
  logit = strength[a] - strength[b]
  cyc = (a < 5) & (b < 5)
  logit = np.where(
    cyc, np.where(np.isin((b - a) % 5, (1, 2)), 1.5, -1.5), logit
  )  # ... that is a 5-cycle
  p = 1.0 / (1.0 + np.exp(-logit))
  winner = np.where(rng.random(m) < 0.1, "tie", np.where(rng.random(m) < p, "a", "b"))
  names = np.array([f"agent-{i:04d}" for i in range(n)])
  _write(path, names[a], names[b], winner)
  return f"synthetic arena battles: {n} agents, {m} comparisons, random pairs, 10% ties"


def write_league(path: pathlib.Path, n: int, m: int, seed: int = 0) -> str:
  import jax

  from ste_jax.stats import sparse_league

  c = sparse_league(jax.random.key(seed), num_agents=n, num_comparisons=m).comparisons
  names = np.array(c.agents)
  a, b, o = np.asarray(c.a), np.asarray(c.b), np.asarray(c.outcome)
  _write(path, names[a], names[b], np.where(o == 1.0, "a", "b"))
  games = np.bincount(np.concatenate([a, b]), minlength=n)
  pairs = len(np.unique(np.minimum(a, b) * n + np.maximum(a, b)))
  return (
    f"sparse_league(key {seed}): {n} agents, {m} comparisons, {pairs} distinct pairs "
    f"({pairs / (n * (n - 1) / 2):.1%} of all), games per agent min {games.min()} / median "
    f"{np.median(games):g} / max {games.max()}, {np.mean(games <= 5):.0%} of agents with <= 5"
  )


def _write(path, a, b, winner) -> None:
  with open(path, "w") as f:
    f.write("a,b,winner\n")
    for x, y, w in zip(a, b, winner):
      f.write(f"{x},{y},{w}\n")


def run(args: list, source: pathlib.Path) -> tuple[float, float, str, int]:
  """``(wall s, peak RSS MB, stdout, exit status)`` of ``python -m ste_jax ARGS`` in ``source``."""
  env = dict(os.environ, PYTHONPATH=str(source))
  with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
    start = time.perf_counter()
    proc = subprocess.Popen(
      [sys.executable, "-m", "ste_jax", *args], stdout=out, stderr=err, cwd=source, env=env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out.seek(0)
    err.seek(0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
      print(
        f"  ({source}: {' '.join(args[2:])} failed: {err.read().strip().splitlines()[-1:]})",
        file=sys.stderr,
      )
    return wall, usage.ru_maxrss / 1024.0, out.read(), code


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--input", choices=("league", "arena"), default="league")
  parser.add_argument(
    "--agents", type=int, default=None, help="default 1200 (league) / 1000 (arena)"
  )
  parser.add_argument(
    "--comparisons", type=int, default=None, help="default 30000 (league) / 100000 (arena)"
  )
  parser.add_argument("--replicas", type=int, default=200)
  parser.add_argument("--estimators", nargs="+", choices=ESTIMATORS, default=list(ESTIMATORS))
  parser.add_argument(
    "--before", type=pathlib.Path, default=None, help="source tree of an older revision"
  )
  args = parser.parse_args()
  league = args.input == "league"
  n = args.agents or (1200 if league else 1000)
  m = args.comparisons or (30_000 if league else 100_000)
  with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "battles.csv"
    description = (write_league if league else write_arena)(path, n, m)
    print(f"machine: {machine_description()}")
    print(f"input: {description}")
    print()
    print("| source | estimator | wall (s) | peak RSS (MB) | rows out |")
    print("|---|---|---:|---:|---:|")
    sources = [("this checkout", ROOT)] + (
      [("before", args.before.resolve())] if args.before else []
    )
    for estimator in args.estimators:
      for label, source in sources:
        cmd = [
          "score",
          str(path),
          "--estimator",
          estimator,
          "--bootstrap",
          str(args.replicas),
          "--output",
          "csv",
          "--no-progress",
        ]
        wall, rss, out, code = run(cmd, source)
        rows = max(0, len(out.strip().splitlines()) - 1) if code == 0 else "failed"
        print(f"| {label} | {estimator} | {wall:.1f} | {rss:.0f} | {rows} |", flush=True)


if __name__ == "__main__":
  main()
