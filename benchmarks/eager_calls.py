"""Eager (un-jitted) calls of ``ste_scores``: what a notebook user or a test pays per call.

Each configuration runs in a fresh child process (cold caches) that imports ``ste_jax`` from a
given source tree and times, on a random tournament of ``n`` agents (``operators.make_tournament``):

* ``first``: the first call ``ste_scores(P, tau=0.05)`` (tracing and compilation included);
* ``again``: the same call once more;
* ``new tau``: ``ste_scores(P, tau=0.07)``, a temperature not seen before;
* ``grad first`` / ``grad again``: ``jax.grad(lambda P: sum of both scores)(P)`` with a fresh
  lambda each time, the first and a second time.

Every call ends with ``jax.block_until_ready``. The baseline is another checkout of the project
(e.g. the revision before ``ste_jax/ops/_compiled.py``), run in the same session, interleaved
round by round with this tree:

  git worktree add /tmp/ste-before REV
  python benchmarks/eager_calls.py --baseline /tmp/ste-before --sizes 10 100 300 --rounds 2

Without ``--baseline`` only this tree is timed.
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

_FIELDS = ("first", "again", "new_tau", "grad_first", "grad_again")


def child(tree: str, n: int) -> dict:
  sys.path.insert(0, tree)
  import time  # pylint: disable=g-import-not-at-top

  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  import ste_jax  # pylint: disable=g-import-not-at-top

  assert pathlib.Path(ste_jax.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve()), (
    ste_jax.__file__
  )
  rng = np.random.default_rng(0)
  upper = rng.uniform(0.05, 0.95, size=(n, n))
  P = jnp.asarray(
    (np.triu(upper, 1) + np.tril(1.0 - upper.T, -1) + 0.5 * np.eye(n)).astype(np.float32)
  )

  def timed(f):
    t0 = time.perf_counter()
    jax.block_until_ready(f())
    return time.perf_counter() - t0

  def loss(P, tau):
    s = ste_jax.ste_scores(P, tau=tau)
    return s.top_cycle.sum() + s.uncovered.sum()

  return {
    "first": timed(lambda: ste_jax.ste_scores(P, tau=0.05)),
    "again": timed(lambda: ste_jax.ste_scores(P, tau=0.05)),
    "new_tau": timed(lambda: ste_jax.ste_scores(P, tau=0.07)),
    "grad_first": timed(lambda: jax.grad(lambda P: loss(P, 0.05))(P)),
    "grad_again": timed(lambda: jax.grad(lambda P: loss(P, 0.05))(P)),
  }


def _run(tree: pathlib.Path, n: int) -> dict:
  cmd = [sys.executable, str(ROOT / "benchmarks" / "eager_calls.py"), "--child", str(tree), str(n)]
  out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
  if out.returncode != 0:
    tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["?"]
    return {"error": tail[0][:160]}
  return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(x: float) -> str:
  return f"{x:.4f}" if x < 1 else f"{x:.2f}"


def main(argv=None):
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument(
    "--baseline", type=pathlib.Path, default=None, help="root of a baseline source tree"
  )
  parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 300])
  parser.add_argument(
    "--rounds", type=int, default=2, help="interleaved rounds (medians are printed)"
  )
  parser.add_argument(
    "--child", nargs=2, metavar=("TREE", "N"), default=None, help=argparse.SUPPRESS
  )
  args = parser.parse_args(argv)
  if args.child:
    print(json.dumps(child(args.child[0], int(args.child[1]))))
    return
  sys.path.insert(0, str(ROOT))
  from ste_jax.benchmarking import machine_description  # pylint: disable=g-import-not-at-top

  trees = {"this tree": ROOT}
  if args.baseline is not None:
    trees = {"baseline": args.baseline.resolve(), "this tree": ROOT}
  print(f"machine: {machine_description()}")
  print(
    "ste_scores(P, tau) called eagerly, float32, fresh process per row; seconds per call "
    f"(median of {args.rounds} interleaved rounds)"
  )
  print()
  print("| n | tree | first | again | new tau | grad first | grad again |")
  print("|---:|---|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    runs = {name: [] for name in trees}
    for _ in range(args.rounds):
      for name, tree in trees.items():
        runs[name].append(_run(tree, n))
    for name, results in runs.items():
      ok = [r for r in results if "error" not in r]
      if not ok:
        print(f"| {n} | {name} | error: {results[0]['error']} | | | | |")
        continue
      cells = [_fmt(statistics.median(r[f] for r in ok)) for f in _FIELDS]
      print(f"| {n} | {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
  main()
