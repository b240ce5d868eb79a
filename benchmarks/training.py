"""Benchmark of the pure train step: steps/s with and without the STE sharpness regularizer.

Setup (issue 4): n = 50 agents, 1e5 synthetic comparisons in 4 contexts (one-hot features),
minibatches of 4096, ``PairwiseLogit`` (embedding 16, MLP 64-64), Adam. The regularized step also
builds the n = 50 marginal tournament over the 4 contexts (4 x 2500 pairs through the model), runs
``ste_scores`` at annealed temperatures and backpropagates the sharpness term (Eq.
``sharpness_regularizer``) into the model: with the smoothed reachability (the default of
``make_ste_loss``, ``reach_gamma`` following ``gamma``; K = n - 1 or 4) and with the exact max-min
closure (``reach_gamma = 0``). The baseline (log-loss only) is
measured in the same run.

Usage:
  python benchmarks/training.py           # 200 timed steps per configuration
  python benchmarks/training.py --quick   # 20 timed steps per configuration
Each configuration runs in its own process (peak RSS per configuration); compile time (AOT
``lower().compile()``) is reported separately from the run time.
"""

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks._timing import machine_description, peak_rss_mb, run_child  # noqa: E402

N_AGENTS = 50
N_COMPARISONS = 100_000
BATCH = 4096
N_CONTEXTS = 4

CONFIGS = {
  "log-loss only": dict(sharpness_weight=0.0, max_path_length=None),
  "+ STE sharpness, smoothed (default), K = n-1": dict(sharpness_weight=0.1, max_path_length=None),
  "+ STE sharpness, smoothed (default), K = 4": dict(sharpness_weight=0.1, max_path_length=4),
  "+ STE sharpness, exact closure, K = n-1": dict(
    sharpness_weight=0.1, max_path_length=None, reach_gamma=0.0
  ),
}


def make_data(seed: int = 0):
  """Synthetic comparisons: a random context-dependent tournament, pairs drawn uniformly."""
  from ste_jax.data import Comparisons

  rng = np.random.default_rng(seed)
  upper = rng.uniform(0.05, 0.95, size=(N_CONTEXTS, N_AGENTS, N_AGENTS))
  P = np.triu(upper, 1) + np.tril(1.0 - np.swapaxes(upper, 1, 2), -1)
  a = rng.integers(0, N_AGENTS, N_COMPARISONS)
  b = (a + rng.integers(1, N_AGENTS, N_COMPARISONS)) % N_AGENTS
  ctx = rng.integers(0, N_CONTEXTS, N_COMPARISONS)
  y = (rng.random(N_COMPARISONS) < P[ctx, a, b]).astype(np.int8)
  return Comparisons.from_arrays(a, b, y, context=ctx)


def child(config: str, steps: int) -> dict:
  from flax import nnx
  import jax
  import jax.numpy as jnp
  import optax

  from ste_jax.models import PairwiseLogit
  from ste_jax.training import (
    exponential_anneal,
    make_ste_loss,
    make_train_step,
    temperature_schedule,
  )

  data = make_data()
  features = jnp.eye(N_CONTEXTS)
  model = PairwiseLogit(N_AGENTS, num_context_features=N_CONTEXTS, rngs=nnx.Rngs(0))
  graphdef, params, rest = nnx.split(model, nnx.Param, ...)
  tx = optax.adam(1e-3)
  opt_state = tx.init(params)
  loss_fn = make_ste_loss(context_features=features, **CONFIGS[config])
  schedule = temperature_schedule(exponential_anneal(1.0, 0.01, steps))
  step = make_train_step(graphdef, tx, loss_fn=loss_fn, schedule=schedule, rest=rest)

  key = jax.random.key(0)
  num_batches = 8
  idx = jax.random.permutation(key, N_COMPARISONS)[: num_batches * BATCH].reshape(
    num_batches, BATCH
  )
  batches = [jax.tree.map(lambda x, i=i: x[i], data) for i in idx]
  jax.block_until_ready(batches)

  t0 = time.perf_counter()
  compiled = step.lower(params, opt_state, batches[0], 0).compile()
  compile_s = time.perf_counter() - t0
  params, opt_state, metrics = compiled(params, opt_state, batches[0], 0)  # warm-up
  jax.block_until_ready((params, metrics))
  t0 = time.perf_counter()
  for t in range(steps):
    params, opt_state, metrics = compiled(params, opt_state, batches[t % num_batches], t)
  jax.block_until_ready((params, metrics))
  run_s = time.perf_counter() - t0
  return {
    "compile_s": compile_s,
    "step_ms": 1e3 * run_s / steps,
    "steps_per_s": steps / run_s,
    "final_loss": float(metrics["loss"]),
    "peak_rss_mb": peak_rss_mb(),
  }


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--quick", action="store_true", help="20 timed steps per configuration")
  parser.add_argument("--steps", type=int, default=None, help="timed steps per configuration")
  parser.add_argument("--child", nargs=2, metavar=("CONFIG", "STEPS"), help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    print(json.dumps(child(args.child[0], int(args.child[1]))))
    return

  steps = args.steps or (20 if args.quick else 200)
  print(f"machine: {machine_description()}")
  print(
    f"train step (jit, float32, Adam): n = {N_AGENTS} agents, {N_COMPARISONS} comparisons, "
    f"{N_CONTEXTS} contexts, batch {BATCH}, PairwiseLogit 16-d embeddings + MLP 64-64; {steps} "
    "timed steps"
  )
  print()
  print(
    "| configuration | compile (s) | ms / step | steps / s | vs log-loss only | peak RSS (MB) |"
  )
  print("|---|---:|---:|---:|---:|---:|")
  base = None
  for name in CONFIGS:
    r = run_child(__file__, [name, steps])
    if "error" in r:
      print(f"| {name} | error: {r['error']} |||||", flush=True)
      continue
    base = r["step_ms"] if base is None else base
    print(
      f"| {name} | {r['compile_s']:.2f} | {r['step_ms']:.2f} | {r['steps_per_s']:.1f} | "
      f"{r['step_ms'] / base:.2f}x | {r['peak_rss_mb']:.0f} |",
      flush=True,
    )


if __name__ == "__main__":
  main()
