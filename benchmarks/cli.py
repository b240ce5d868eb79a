"""Wall time of ``ste-jax score`` on a large, real-sized input (issue 6).

Generates a synthetic arena-style battles file (``model_a, model_b, winner`` with ties) for
``--agents`` agents and ``--comparisons`` comparisons (Bradley-Terry strengths plus a planted
5-cycle on top, random pairs, 10 % ties), then times the whole command in a fresh process
(``python -m ste_jax score FILE --bootstrap R --output csv``): interpreter start, JAX import,
loading, compilation, STE scores, bootstrap and baselines. The stage timings are not separable
from outside, so a second run without bootstrap is the baseline in the same run.

Usage:
  python benchmarks/cli.py                     # 1000 agents, 100000 comparisons, 200 replicas
  python benchmarks/cli.py --agents 200 --comparisons 20000 --replicas 20   # quick
"""

import argparse
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks._timing import machine_description  # noqa: E402


def write_battles(path: pathlib.Path, n: int, m: int, seed: int = 0) -> None:
  rng = np.random.default_rng(seed)
  strength = rng.normal(size=n)
  strength[:5] = strength.max() + 3.0  # a planted top tier ...
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n  # never a self-pair
  logit = strength[a] - strength[b]
  cyc = (a < 5) & (b < 5)
  logit = np.where(cyc, np.where(np.isin((b - a) % 5, (1, 2)), 1.5, -1.5), logit)  # ... that is a 5-cycle
  p = 1.0 / (1.0 + np.exp(-logit))
  u = rng.random(m)
  winner = np.where(u < 0.1, "tie", np.where(rng.random(m) < p, "model_a", "model_b"))
  names = np.array([f"agent-{i:04d}" for i in range(n)])
  with open(path, "w") as f:
    f.write("model_a,model_b,winner\n")
    for x, y, w in zip(names[a], names[b], winner):
      f.write(f"{x},{y},{w}\n")


def run(args: list) -> tuple[float, float, str]:
  start = time.perf_counter()
  before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
  out = subprocess.run([sys.executable, "-m", "ste_jax", *args], capture_output=True, text=True)
  wall = time.perf_counter() - start
  rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
  if out.returncode != 0:
    raise SystemExit(f"ste-jax failed: {out.stderr.strip().splitlines()[-1:]}")
  return wall, max(rss, before) / 1024.0, out.stdout


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--agents", type=int, default=1000)
  parser.add_argument("--comparisons", type=int, default=100_000)
  parser.add_argument("--replicas", type=int, default=200)
  args = parser.parse_args()
  with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "battles.csv"
    write_battles(path, args.agents, args.comparisons)
    print(f"machine: {machine_description()}")
    print(f"input: {args.agents} agents, {args.comparisons} comparisons (synthetic arena battles, 10% ties)")
    print()
    print("| command | wall (s) | peak RSS (MB) | rows out |")
    print("|---|---:|---:|---:|")
    for label, extra in (("score --bootstrap 0 (baseline)", ["--bootstrap", "0"]),
                         (f"score --bootstrap {args.replicas}", ["--bootstrap", str(args.replicas)])):
      wall, rss, out = run(["score", str(path), "--output", "csv", "--no-progress", *extra])
      rows = max(0, len(out.strip().splitlines()) - 1)
      print(f"| `ste-jax {label}` | {wall:.1f} | {rss:.0f} | {rows} |", flush=True)


if __name__ == "__main__":
  main()
