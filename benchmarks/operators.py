"""Benchmark of ``ste_scores``: compile, forward, forward+backward time and peak RSS vs n.

Baseline: a literal dense transcription of the paper's equations (``tests/oracles.py``: K smooth
max-min products with K = n - 1, a dense (c, a, b) cover tensor, plain autodiff), measured in the
same run where it fits in memory. Also times the hard ``top_cycle`` / ``uncovered_set``.

Usage:
  python benchmarks/operators.py                   # n in 100 200 500 1000 2000
  python benchmarks/operators.py --sizes 100 1000  # a subset
Each configuration runs in its own process so peak RSS is per configuration.
"""

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks._timing import compile_and_time, fmt_mb, machine_description, memory_report, run_child  # noqa: E402

NAIVE_MAX_N = 100  # the literal transcription needs O(n^4) autodiff memory (about 1 GB at n = 100)


def make_tournament(n: int, seed: int = 0) -> np.ndarray:
  """A random tournament with a planted 5-cycle on top (float32)."""
  rng = np.random.default_rng(seed)
  upper = rng.uniform(0.05, 0.95, size=(n, n))
  P = np.triu(upper, 1) + np.tril(1.0 - upper.T, -1) + 0.5 * np.eye(n)
  return P.astype(np.float32)


def child(n: int, method: str) -> dict:
  import jax
  import jax.numpy as jnp

  import ste_jax

  P = jnp.asarray(make_tournament(n))
  if method == "ste":
    def scores(P):
      s = ste_scores_fn(P)
      return s.top_cycle, s.uncovered

    ste_scores_fn = lambda P: ste_jax.ste_scores(P, tau=0.05)
  elif method == "naive":
    from tests.oracles import naive_ste_scores

    def scores(P):
      return naive_ste_scores(P, 0.05, 0.05, 0.05, n - 1, 0.0)
  elif method == "hard":
    c_tc, t_tc = compile_and_time(ste_jax.top_cycle, P, reps=5)
    c_uc, t_uc = compile_and_time(ste_jax.uncovered_set, P, reps=5)
    return {"top_cycle_s": t_tc, "uncovered_set_s": t_uc, **memory_report()}
  else:
    raise ValueError(method)

  def loss(P):
    t, u = scores(P)
    return jnp.sum(t) + jnp.sum(u)

  reps = 5 if n <= 500 else 2
  compile_fwd, fwd = compile_and_time(scores, P, reps=reps)
  compile_bwd, fwd_bwd = compile_and_time(jax.grad(loss), P, reps=reps)
  return {
      "compile_fwd_s": compile_fwd,
      "forward_s": fwd,
      "compile_grad_s": compile_bwd,
      "forward_backward_s": fwd_bwd,
      **memory_report(),
  }


def fmt(x, unit=""):
  return "—" if x is None else (f"{x:.4f}{unit}" if x < 1 else f"{x:.2f}{unit}")


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--sizes", type=int, nargs="*", default=[100, 200, 500, 1000, 2000])
  parser.add_argument("--hard-n", type=int, default=1000)
  parser.add_argument("--child", nargs=2, metavar=("N", "METHOD"), help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    print(json.dumps(child(int(args.child[0]), args.child[1])))
    return

  print(f"machine: {machine_description()}")
  print("ste_scores(P, tau=0.05), float32, jit, K = n-1, exact max-min reachability; grad of sum(t) + sum(u) w.r.t. P")
  print()
  print(
      "| n | method | compile fwd (s) | forward (s) | compile grad (s) | fwd+bwd (s) | peak RSS (MB) | peak device (MB) "
      "| fwd+bwd vs naive |"
  )
  print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    rows = {"ste": run_child(__file__, [n, "ste"])}
    if n <= NAIVE_MAX_N:
      rows["naive"] = run_child(__file__, [n, "naive"])
    for method, r in rows.items():
      if "error" in r:
        print(f"| {n} | {method} | error: {r['error']} ||||||| ")
        continue
      ratio = ""
      if method == "ste" and "naive" in rows and "error" not in rows["naive"]:
        ratio = f"{rows['naive']['forward_backward_s'] / r['forward_backward_s']:.0f}x faster"
      print(
          f"| {n} | {method} | {fmt(r['compile_fwd_s'])} | {fmt(r['forward_s'])} | {fmt(r['compile_grad_s'])} | "
          f"{fmt(r['forward_backward_s'])} | {r['peak_rss_mb']:.0f} | {fmt_mb(r.get('peak_device_mb'))} | {ratio} |",
          flush=True,
      )
  if args.hard_n:
    r = run_child(__file__, [args.hard_n, "hard"])
    print()
    print("| n | top_cycle (s) | uncovered_set (s) |")
    print("|---:|---:|---:|")
    if "error" in r:
      print(f"| {args.hard_n} | error: {r['error']} | |")
    else:
      print(f"| {args.hard_n} | {fmt(r['top_cycle_s'])} | {fmt(r['uncovered_set_s'])} |")


if __name__ == "__main__":
  main()
