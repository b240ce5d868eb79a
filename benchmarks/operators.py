"""Benchmark of ``ste_scores``: compile, forward, forward+backward time and peak memory vs n.

Baseline: a literal dense transcription of the paper's equations (``tests/oracles.py``,
``naive_ste_scores`` with the same settings as ``ste_scores``: tau = gamma = gamma_c = 0.05,
reach_gamma = 0, so K = n - 1 exact (hard) max-min products, a dense (c, a, b) cover tensor and
plain autodiff), measured in the same run where it fits in memory (n <= ``NAIVE_MAX_N``). Also
times ``jax.vmap`` over a batch of tournaments with the kernels of the batch run as a loop over
items (the CPU default) and with a batch axis (the accelerator default,
``ste_jax/ops/_batching.py``), and the hard ``top_cycle`` / ``uncovered_set``. Inputs: random
tournaments from :func:`make_tournament` (float32).

Usage:
  python benchmarks/operators.py                   # n in 100 200 500 1000 2000
  python benchmarks/operators.py --sizes 100 1000  # a subset
  python benchmarks/operators.py --sizes --hard-n 0 --batch 100 100   # only the batched comparison
  python benchmarks/operators.py --sizes 100 1000 --xla-kernels --hard-n 0 --batch 0 0
      # also "ste-xla": the cover's JAX kernels instead of its native CPU kernels (the default on
      # the CPU for float32, ``ste_jax/ops/_native.py``), measured in the same run
  python benchmarks/operators.py --sizes --batch 0 0 --hard-n 0 --parts 100 1000 2000
      # only where the fwd+bwd time goes: the soft cover alone, the Top-Cycle score alone, both
      # (with --xla-kernels also with the cover's JAX kernels)
Each configuration runs in its own process so peak RSS is per configuration. To compare with an
earlier revision in interleaved rounds, see ``benchmarks/compare_trees.py``.
"""

import argparse
import contextlib
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks._timing import (  # noqa: E402
  compile_and_time,
  fmt_mb,
  machine_description,
  memory_report,
  run_child,
)  # noqa: E402

NAIVE_MAX_N = (
  100  # the literal transcription needs O(n^4) autodiff memory (2.5 GB peak RSS at n = 100)
)


def make_tournament(n: int, seed: int = 0) -> np.ndarray:
  """A random probabilistic tournament (float32): ``P[a, b] ~ U(0.05, 0.95)`` independently for
  ``a < b``, ``P[b, a] = 1 - P[a, b]``, diagonal ``1/2``."""
  rng = np.random.default_rng(seed)
  upper = rng.uniform(0.05, 0.95, size=(n, n))
  P = np.triu(upper, 1) + np.tril(1.0 - upper.T, -1) + 0.5 * np.eye(n)
  return P.astype(np.float32)


def child(n: int, method: str, batch: int = 0) -> dict:
  import jax
  import jax.numpy as jnp

  import ste_jax

  P = jnp.asarray(make_tournament(n))
  # How jax.vmap runs the kernels of a batch on this backend: a loop over items or a batch axis.
  # A suffix "-xla" runs the cover's JAX kernels instead of its native CPU kernels
  # (ste_jax.ops.native_kernels(False)).
  native = not method.endswith("-xla")
  method = method.removesuffix("-xla")
  # Read while tracing: entered around every compile_and_time below.
  kernels_block = contextlib.nullcontext() if native else ste_jax.ops.native_kernels(False)
  mode = {"batch-loop": "loop", "batch-axis": "vectorize"}.get(method, "auto")
  if method in ("batch-loop", "batch-axis"):
    P = jnp.asarray(np.stack([make_tournament(n, seed=i) for i in range(batch)]))

    def scores(P):
      s = jax.vmap(lambda p: ste_jax.ste_scores(p, tau=0.05))(P)
      return s.top_cycle, s.uncovered

  elif method == "ste":

    def scores(P):
      s = ste_jax.ste_scores(P, tau=0.05)
      return s.top_cycle, s.uncovered
  elif method == "naive":
    from tests.oracles import naive_ste_scores

    def scores(P):
      return naive_ste_scores(P, 0.05, 0.05, 0.05, n - 1, 0.0)
  elif method == "parts":  # where the time of ste_scores' fwd+bwd goes, in one process
    D = jax.nn.sigmoid((P - 0.5) / 0.05)
    reps, min_time = (5, 1.0) if n <= 200 else (3, 0.0)
    cover = lambda D: jnp.sum(ste_jax.ops.soft_cover_scores(D, gamma_c=0.05))
    top_cycle = lambda P: jnp.sum(ste_jax.ste_scores(P, tau=0.05).top_cycle)

    def both(P):
      s = ste_jax.ste_scores(P, tau=0.05)
      return jnp.sum(s.top_cycle) + jnp.sum(s.uncovered)

    timed = {
      "cover_forward_s": (cover, D),
      "cover_fwd_bwd_s": (jax.grad(cover), D),
      "top_cycle_fwd_bwd_s": (jax.grad(top_cycle), P),
      "ste_fwd_bwd_s": (jax.grad(both), P),
    }
    with kernels_block:
      return {
        k: compile_and_time(f, x, reps=reps, min_time=min_time)[1] for k, (f, x) in timed.items()
      }
  elif method == "hard":
    c_tc, t_tc = compile_and_time(ste_jax.top_cycle, P, reps=5)
    c_uc, t_uc = compile_and_time(ste_jax.uncovered_set, P, reps=5)
    return {"top_cycle_s": t_tc, "uncovered_set_s": t_uc, **memory_report()}
  else:
    raise ValueError(method)

  def loss(P):
    t, u = scores(P)  # the tuple (top_cycle, uncovered) of the scores functions above
    return jnp.sum(t) + jnp.sum(u)

  reps = 5 if n <= 500 else 2
  min_time = (
    1.0 if n <= 200 else 0.0
  )  # milliseconds per call: repeat for a second, report the median
  with ste_jax.ops.batching_mode(mode), kernels_block:  # read while tracing
    compile_fwd, fwd = compile_and_time(scores, P, reps=reps, min_time=min_time)
    compile_bwd, fwd_bwd = compile_and_time(jax.grad(loss), P, reps=reps, min_time=min_time)
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
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--sizes", type=int, nargs="*", default=[100, 200, 500, 1000, 2000])
  parser.add_argument("--hard-n", type=int, default=1000)
  parser.add_argument(
    "--batch",
    type=int,
    nargs=2,
    default=[100, 100],
    metavar=("B", "N"),
    help="also time jax.vmap over B tournaments of N agents, kernels as a loop vs a batch axis (B "
    "= 0: skip)",
  )
  parser.add_argument(
    "--xla-kernels",
    action="store_true",
    help="also time ste_scores with the cover's JAX kernels instead of its native CPU kernels "
    "(ste_jax.ops.native_kernels(False)) at each size, and the parts with them",
  )
  parser.add_argument(
    "--parts",
    type=int,
    nargs="*",
    default=[],
    metavar="N",
    help="also split the fwd+bwd time at these sizes: the soft cover alone (forward, fwd+bwd), the "
    "Top-Cycle "
    "score alone (closure; fwd+bwd) and both scores, in one process",
  )
  parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    n, method, *batch = args.child
    print(json.dumps(child(int(n), method, *map(int, batch))))
    return

  print(f"machine: {machine_description()}")
  if args.sizes:
    print(
      "ste_scores(P, tau=0.05), float32, jit, K = n-1, exact max-min reachability; grad of sum(t) "
      "+ sum(u) w.r.t. P"
    )
    print()
    print(
      "| n | method | compile fwd (s) | forward (s) | compile grad (s) | fwd+bwd (s) | peak RSS "
      "(MB) | peak device (MB) "
      "| fwd+bwd vs naive |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
      rows = {"ste": run_child(__file__, [n, "ste"])}
      if args.xla_kernels:
        rows["ste-xla"] = run_child(__file__, [n, "ste-xla"])
      if n <= NAIVE_MAX_N:
        rows["naive"] = run_child(__file__, [n, "naive"])
      for method, r in rows.items():
        if "error" in r:
          print(f"| {n} | {method} | error: {r['error']} ||||||| ")
          continue
        ratio = ""
        if method.startswith("ste") and "naive" in rows and "error" not in rows["naive"]:
          ratio = f"{rows['naive']['forward_backward_s'] / r['forward_backward_s']:.0f}x faster"
        print(
          f"| {n} | {method} | {fmt(r['compile_fwd_s'])} | {fmt(r['forward_s'])} | "
          f"{fmt(r['compile_grad_s'])} | "
          f"{fmt(r['forward_backward_s'])} | {r['peak_rss_mb']:.0f} | "
          f"{fmt_mb(r.get('peak_device_mb'))} | {ratio} |",
          flush=True,
        )
  B, nb = args.batch
  if B:
    print()
    print(
      f"jax.vmap of ste_scores over B = {B} tournaments of n = {nb}: the kernels of the batch as a "
      "loop vs a batch axis"
    )
    print()
    print(
      "| kernels of a batch | compile fwd (s) | forward (s) | fwd+bwd (s) | fwd+bwd per tournament "
      "(ms) | peak RSS (MB) | peak device (MB) | fwd+bwd vs loop |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    methods = ("batch-loop", "batch-axis") + (
      ("batch-loop-xla", "batch-axis-xla") if args.xla_kernels else ()
    )
    rows = {m: run_child(__file__, [nb, m, B]) for m in methods}
    for method, r in rows.items():
      if "error" in r:
        print(f"| {method} | error: {r['error']} |||||||")
        continue
      loop = rows["batch-loop"]
      ratio = (
        ""
        if method == "batch-loop" or "error" in loop
        else f"{loop['forward_backward_s'] / r['forward_backward_s']:.2f}x"
      )
      print(
        f"| {method.removeprefix('batch-')} | {fmt(r['compile_fwd_s'])} | {fmt(r['forward_s'])} | "
        f"{fmt(r['forward_backward_s'])} | {1e3 * r['forward_backward_s'] / B:.2f} | "
        f"{r['peak_rss_mb']:.0f} | "
        f"{fmt_mb(r.get('peak_device_mb'))} | {ratio} |",
        flush=True,
      )
  if args.parts:
    print()
    print(
      "Where the fwd+bwd time goes (one process per n; D = sigmoid((P - 1/2) / 0.05), gamma_c = "
      "tau = 0.05). "
      "Each pass of the soft cover evaluates n^3 exponentials; its forward is one fused reduction "
      "of them per tile, "
      "so twice the cover's forward is what two such passes cost here."
    )
    print()
    print(
      "| n | cover kernels | cover forward (s) | cover fwd+bwd (s) | 2 x cover forward (s) | "
      "top-cycle score fwd+bwd (s) | ste_scores fwd+bwd (s) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n in args.parts:
      for method in ("parts", "parts-xla") if args.xla_kernels else ("parts",):
        r = run_child(__file__, [n, method])
        kernels = "JAX" if method.endswith("-xla") else "native (CPU default)"
        if "error" in r:
          print(f"| {n} | {kernels} | error: {r['error']} |||||")
          continue
        print(
          f"| {n} | {kernels} | {fmt(r['cover_forward_s'])} | {fmt(r['cover_fwd_bwd_s'])} | "
          f"{fmt(2 * r['cover_forward_s'])} | {fmt(r['top_cycle_fwd_bwd_s'])} | "
          f"{fmt(r['ste_fwd_bwd_s'])} |",
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
