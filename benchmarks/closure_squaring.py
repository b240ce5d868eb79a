"""Single-tournament latency of ``ste_scores`` fwd+bwd: Floyd-Warshall closure vs repeated squaring.

Issue 11 asks, for accelerators, whether the exact max-min closure of one small tournament is
latency-bound with Floyd-Warshall (``n`` dependent pivot steps, each a tiny kernel) and whether
repeated squaring (``ceil(log2 K)`` max-min products, each a large parallel kernel) does better.
``max_path_length=None`` (``K = n - 1``) runs Floyd-Warshall; ``K = n - 2`` runs repeated squaring
(walks of at most ``n - 2`` edges: the same values unless a best bottleneck path needs all ``n - 1``
edges; the script prints the largest difference). Times: median of ``--reps`` calls of the
AOT-compiled ``jax.value_and_grad`` of ``sum(t) + sum(u)`` (``tau = 0.05``), after a warm-up.

Usage: python benchmarks/closure_squaring.py [--sizes 100 300 1000] [--reps 20]
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
  return jnp.asarray(P, jnp.float32)


def timed(fn, P, reps):
  compiled = jax.jit(fn).lower(P).compile()
  jax.block_until_ready(compiled(P))
  times = []
  for _ in range(reps):
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(P))
    times.append(time.perf_counter() - t0)
  return float(np.median(times)), compiled(P)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
  parser.add_argument("--reps", type=int, default=20)
  args = parser.parse_args()
  print(f"jax {jax.__version__}, backend {jax.default_backend()}, devices {jax.devices()}")
  print("| n | closure | fwd+bwd (ms) | ratio to Floyd-Warshall | max abs diff of value and grad |")
  print("|---:|---|---:|---:|---:|")
  for n in args.sizes:
    P = tournament(n)
    out = {}
    for label, K in (("Floyd-Warshall (K = n-1)", None), ("repeated squaring (K = n-2)", n - 2)):
      def loss(P, K=K):
        s = ste_jax.ste_scores(P, tau=0.05, max_path_length=K)
        return jnp.sum(s.top_cycle) + jnp.sum(s.uncovered)
      out[label] = timed(jax.value_and_grad(loss), P, args.reps)
    (t_fw, r_fw), (t_sq, r_sq) = out.values()
    diff = max(float(jnp.abs(r_fw[0] - r_sq[0])), float(jnp.max(jnp.abs(r_fw[1] - r_sq[1]))))
    print(f"| {n} | Floyd-Warshall (K = n-1) | {1e3 * t_fw:.3f} | 1.00 | |")
    print(f"| {n} | repeated squaring (K = n-2) | {1e3 * t_sq:.3f} | {t_sq / t_fw:.2f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
  main()
