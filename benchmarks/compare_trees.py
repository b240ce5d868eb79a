"""Interleaved timing of ``benchmarks/operators.py`` configurations in two source trees.

On a machine whose speed drifts (this VM varies by up to about 50 % from minute to minute), a
figure is only comparable with a baseline measured beside it. This driver runs each configuration's
child process (``operators.py --child N METHOD [B]``: compile, warm-up, median of repeated calls,
peak RSS) alternately from a baseline tree and from this tree, for several rounds, and prints every
run and then, per configuration, the median over rounds and the ratio baseline / this tree.

The baseline tree is any checkout of the project, e.g. of an earlier revision:

  git worktree add /tmp/ste-before REV        # or: mkdir D && git archive REV | tar -x -C D
  python benchmarks/compare_trees.py /tmp/ste-before --configs "100 ste" "1000 ste" --rounds 3

Each child imports ``ste_jax`` from its own tree (``operators.py`` puts its tree first on
``sys.path``), so both run in the same Python environment.
"""

import argparse
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import machine_description, run_child  # noqa: E402

_FIELDS = ("forward_s", "forward_backward_s", "compile_grad_s", "peak_rss_mb")


def _fmt(x: float) -> str:
  return f"{x:.4f}" if x < 1 else f"{x:.2f}"


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("baseline", type=pathlib.Path, help="root of the baseline source tree")
  parser.add_argument(
    "--configs",
    nargs="+",
    default=["100 ste", "1000 ste"],
    help='operators.py child arguments, e.g. "1000 ste" or "100 batch-loop 100"',
  )
  parser.add_argument("--rounds", type=int, default=3)
  args = parser.parse_args()
  trees = {
    "baseline": args.baseline.resolve() / "benchmarks" / "operators.py",
    "this tree": ROOT / "benchmarks" / "operators.py",
  }
  for name, script in trees.items():
    if not script.exists():
      sys.exit(f"{name}: no {script}")
  configs = [c.split() for c in args.configs]

  print(f"machine: {machine_description()}")
  print(f"baseline: {args.baseline.resolve()}; this tree: {ROOT}")
  print()
  print("| round | tree | config | forward (s) | fwd+bwd (s) | compile grad (s) | peak RSS (MB) |")
  print("|---:|---|---|---:|---:|---:|---:|")
  runs = {(tree, " ".join(c)): [] for tree in trees for c in configs}
  for r in range(args.rounds):
    for c in configs:
      for tree, script in trees.items():
        out = run_child(str(script), c)
        key = " ".join(c)
        if "error" in out:
          print(f"| {r} | {tree} | {key} | error: {out['error']} ||||", flush=True)
          continue
        runs[(tree, key)].append(out)
        print(
          f"| {r} | {tree} | {key} | "
          + " | ".join(f"{out[f]:.0f}" if f == "peak_rss_mb" else _fmt(out[f]) for f in _FIELDS)
          + " |",
          flush=True,
        )
  print()
  print("Median over rounds; ratio = baseline / this tree (> 1: this tree is faster).")
  print()
  print(
    "| config | baseline fwd (s) | this fwd (s) | fwd ratio | baseline fwd+bwd (s) | this fwd+bwd "
    "(s) | fwd+bwd ratio | baseline RSS (MB) | this RSS (MB) |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
  for c in configs:
    key = " ".join(c)
    base, this = runs[("baseline", key)], runs[("this tree", key)]
    if not base or not this:
      print(f"| {key} | (no successful run in one of the trees) ||||||||")
      continue
    med = lambda rs, f: statistics.median(x[f] for x in rs)
    print(
      f"| {key} | {_fmt(med(base, 'forward_s'))} | {_fmt(med(this, 'forward_s'))} | "
      f"{med(base, 'forward_s') / med(this, 'forward_s'):.2f}x | "
      f"{_fmt(med(base, 'forward_backward_s'))} | "
      f"{_fmt(med(this, 'forward_backward_s'))} | "
      f"{med(base, 'forward_backward_s') / med(this, 'forward_backward_s'):.2f}x | "
      f"{med(base, 'peak_rss_mb'):.0f} | {med(this, 'peak_rss_mb'):.0f} |"
    )


if __name__ == "__main__":
  main()
