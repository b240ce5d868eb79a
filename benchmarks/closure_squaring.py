"""Exact max-min closure: Floyd-Warshall vs repeated squaring, both at ``K = n - 1`` (same values).

Issue 11 asks, for accelerators, whether the exact max-min closure of one small tournament is
latency-bound with Floyd-Warshall (``n`` dependent pivot steps, each a tiny kernel) and whether
repeated squaring (``ceil(log2(n - 2)) + 1`` max-min products, each a large parallel kernel) does
better. Both run under :func:`ste_jax.ops.closure_algorithm`; ``"auto"`` picks Floyd-Warshall on
CPU and squaring elsewhere. Per ``n`` and algorithm the script times (median of ``--reps`` calls of
the AOT-compiled function, after a warm-up):

* ``closure``: :func:`ste_jax.ops.soft_reachability` of ``P`` (the closure alone, forward);
* ``ste fwd+bwd``: ``jax.value_and_grad`` of ``sum(t) + sum(u)`` of ``ste_scores(P, tau=0.05)``;

and prints the largest difference between the algorithms' values and gradients (expected 0) and,
on a GPU, the peak device memory of the process so far (``memory_stats``; it only grows).
``--batch B`` runs a stack of ``B`` tournaments per call (leading batch axis of ``P``) instead of
one.

Usage: python benchmarks/closure_squaring.py [--sizes 100 300 1000] [--reps 20] [--batch B]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import ste_jax  # noqa: E402


def tournament(n, seed=0):
  rng = np.random.default_rng(seed)
  U = rng.uniform(0.05, 0.95, size=(n, n))
  P = np.triu(U, 1) + np.tril(1.0 - U.T, -1)
  np.fill_diagonal(P, 0.5)
  return P.astype(np.float32)


def timed(fn, P, reps):
  compiled = jax.jit(fn).lower(P).compile()
  jax.block_until_ready(compiled(P))
  times = []
  for _ in range(reps):
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(P))
    times.append(time.perf_counter() - t0)
  return float(np.median(times)), compiled(P)


def peak_device_mb():
  stats = jax.devices()[0].memory_stats() or {}
  peak = stats.get("peak_bytes_in_use")
  return "—" if peak is None else f"{peak / 2**20:.0f}"


def loss(P):
  s = ste_jax.ste_scores(P, tau=0.05)
  return jnp.sum(s.top_cycle) + jnp.sum(s.uncovered)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
  parser.add_argument("--reps", type=int, default=20)
  parser.add_argument(
    "--batch", type=int, default=0, help="tournaments per call (0: one, no batch axis)"
  )
  args = parser.parse_args()
  print(
    f"jax {jax.__version__}, backend {jax.default_backend()}, devices {jax.devices()}"
    + (f"; a batch of {args.batch} tournaments per call" if args.batch else "")
  )
  print(
    "| n | algorithm | closure (ms) | ste fwd+bwd (ms) | fwd+bwd ratio to Floyd-Warshall | max abs "
    "diff | peak device (MB) |"
  )
  print("|---:|---|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    if args.batch:
      P = jnp.asarray(np.stack([tournament(n, seed) for seed in range(args.batch)]))
    else:
      P = jnp.asarray(tournament(n))
    rows = {}
    for algorithm in ("floyd_warshall", "squaring"):
      with ste_jax.ops.closure_algorithm(algorithm):
        t_closure, R = timed(ste_jax.ops.soft_reachability, P, args.reps)
        t_grad, (value, grad) = timed(jax.value_and_grad(loss), P, args.reps)
      rows[algorithm] = (t_closure, t_grad, R, value, grad, peak_device_mb())
    base = rows["floyd_warshall"]
    for algorithm, (t_closure, t_grad, R, value, grad, peak) in rows.items():
      diff = max(
        float(jnp.max(jnp.abs(R - base[2]))),
        float(jnp.abs(value - base[3])),
        float(jnp.max(jnp.abs(grad - base[4]))),
      )
      print(
        f"| {n} | {algorithm} | {1e3 * t_closure:.3f} | {1e3 * t_grad:.3f} | "
        f"{t_grad / base[1]:.2f} | "
        f"{diff:.1e} | {peak} |",
        flush=True,
      )


if __name__ == "__main__":
  main()
