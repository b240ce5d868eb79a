"""Benchmark of ``bootstrap_scores``: replicas/s of full STE scores vs a Python loop, and counting.

Bootstrap: ``n`` agents, ``m`` comparisons, ``R`` multinomial replicas; each replica reweights the
comparisons, counts wins, builds the posterior-edge tournament ``D`` (paper Eq.
``posterior_edge_estimator``) and computes both STE scores (max-min reachability, tau = gamma =
0.01, the paper's bootstrap setting). Methods:

* ``bootstrap_scores``: ``stats.bootstrap_scores(..., batch_size=B)``: one jit-compiled computation
  over all replicas (``lax.map`` over chunks of ``B`` vmapped replicas; ``B = 1`` is a compiled
  sequential loop, often the fastest on CPU, where vmapped replicas cost more per item).
* ``Python loop, jitted replica``: the baseline of the issue's target, a Python loop over replica
  keys calling one jit-compiled single-replica function (``ste_score_fn(resample_comparisons(key,
  c))``), timed on ``--loop-replicas`` replicas and reported per replica; results are not
  synchronized inside the loop (dispatch may pipeline).
* ``Python loop, un-jitted replica``: the same loop without ``jax.jit`` (operations dispatched one
  by one), timed on a tenth as many replicas: what a loop written without ``jit`` costs.

Counting: ``pair_counts`` (+ ``posterior_edges`` or ``win_rate_tournament``) on ``m`` comparisons,
against a NumPy baseline (``np.bincount`` + ``scipy.special.betainc``) in the same run, and
``posterior_edges`` alone on the ``(n, n)`` counts.

Draws (``--draws``): the leaderboard's replicas draw Poisson weights (or binomial outcomes) per
count cell (:func:`ste_jax.data.merge_into_cells`) on the host with NumPy. This table times one
chunk of ``REPLICA_CHUNK`` replicas of those draws with ``jax.random.poisson`` /
``jax.random.binomial`` (jit-compiled, compilation excluded) against NumPy's samplers, on the cells
of synthetic arena battles (``--agents`` models, ``--draw-battles`` battles, 10 % ties).

Usage:
  python benchmarks/bootstrap.py # n=100, m=1e5, R=1000, batch sizes 1 10 100; counts on 1e6
  python benchmarks/bootstrap.py --quick   # a small configuration, to check that it runs
  python benchmarks/bootstrap.py --draws --agents 200   # the draws table only
Each configuration runs in its own process so peak RSS is per configuration.
"""

import argparse
import json
import pathlib
import sys
import time

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

TAU = 0.01


def make_comparisons(n: int, m: int, seed: int = 0):
  """``m`` comparisons between ``n`` agents: a Bradley-Terry ladder under a planted 5-cycle."""
  from ste_jax.data import Comparisons

  rng = np.random.default_rng(seed)
  strength = np.sort(rng.normal(size=n))[::-1] * 2.0
  P = 1.0 / (1.0 + np.exp(strength[None, :] - strength[:, None]))
  core = min(5, n)
  for i in range(core):  # each core agent beats the next two around the cycle
    for d in (1, 2):
      j = (i + d) % core
      if d <= (core - 1) // 2:
        P[i, j], P[j, i] = 0.7, 0.3
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  outcome = (rng.random(m) < P[a, b]).astype(np.float32)
  outcome[rng.random(m) < 0.05] = 0.5  # some ties
  return Comparisons.from_arrays(a, b, outcome)


def child_bootstrap(
  method: str, n: int, m: int, replicas: int, batch_size: int, loop_replicas: int
) -> dict:
  import jax

  from ste_jax import stats

  c = make_comparisons(n, m)
  score_fn = stats.ste_score_fn(estimator="posterior", tau=TAU)
  if method == "vmap":

    def run(key, c):
      return stats.bootstrap_scores(
        key, c, score_fn, num_replicas=replicas, batch_size=batch_size or None
      )

    compile_s, run_s = compile_and_time(run, jax.random.key(0), c, reps=1)
    return {"compile_s": compile_s, "run_s": run_s, "replicas": replicas, **memory_report()}
  if method not in ("loop", "eager"):
    raise ValueError(method)

  def replica(k, c):
    return score_fn(stats.resample_comparisons(k, c))

  keys = jax.random.split(jax.random.key(0), loop_replicas + 1)
  compile_s = None
  if method == "loop":
    t0 = time.perf_counter()
    replica = jax.jit(replica).lower(keys[0], c).compile()
    compile_s = time.perf_counter() - t0
  # "eager": no jax.jit, every operation dispatched on its own (JAX caches the compiled
  # operations, and the warm-up call fills that cache).
  jax.block_until_ready(replica(keys[0], c))  # warm-up
  t0 = time.perf_counter()
  out = [replica(keys[i + 1], c) for i in range(loop_replicas)]
  jax.block_until_ready(out)
  run_s = time.perf_counter() - t0
  return {"compile_s": compile_s, "run_s": run_s, "replicas": loop_replicas, **memory_report()}


def child_counts(method: str, n: int, m: int) -> dict:
  c = make_comparisons(n, m)
  if method == "numpy":
    from scipy.special import betainc

    a, b = np.asarray(c.a), np.asarray(c.b)
    o, w = np.asarray(c.outcome, dtype=np.float64), np.asarray(c.weight, dtype=np.float64)

    def run():
      wins = np.bincount(a * n + b, weights=w * o, minlength=n * n) + np.bincount(
        b * n + a, weights=w * (1 - o), minlength=n * n
      )
      wins = wins.reshape(n, n)
      wt = wins.T
      d = np.maximum(betainc(0.5 + wt, 0.5 + wins, 0.5) - betainc(0.5 + wins, 0.5 + wt, 0.5), 0.0)
      np.fill_diagonal(d, 0.0)
      return d

    run()
    times = []
    for _ in range(3):
      t0 = time.perf_counter()
      run()
      times.append(time.perf_counter() - t0)
    return {"compile_s": None, "run_s": sorted(times)[1], **memory_report()}

  from ste_jax.data import pair_counts, posterior_edges, win_rate_tournament

  if method == "posterior_edges":  # the estimator alone, on the (n, n) counts
    compile_s, run_s = compile_and_time(posterior_edges, pair_counts(c).wins, reps=20, min_time=0.5)
    return {"compile_s": compile_s, "run_s": run_s, **memory_report()}
  fns = {
    "pair_counts": lambda c: pair_counts(c).wins,
    "pair_counts+posterior_edges": lambda c: posterior_edges(pair_counts(c).wins),
    "pair_counts+win_rate_tournament": lambda c: win_rate_tournament(pair_counts(c)),
  }
  compile_s, run_s = compile_and_time(fns[method], c, reps=20, min_time=0.5)
  return {"compile_s": compile_s, "run_s": run_s, **memory_report()}


def draws_table(n: int, battles: int, rounds: int = 3) -> None:
  """Prints the ``--draws`` table: JAX's and NumPy's samplers on one chunk of count cells."""
  import jax
  import jax.numpy as jnp

  from ste_jax.data import Comparisons, merge_into_cells
  from ste_jax.evaluate._replicas import (
    REPLICA_CHUNK,
    resample_model_outcomes,
    resample_unit_weights,
  )

  rng = np.random.default_rng(0)
  a = rng.integers(0, n, battles)
  b = (a + rng.integers(1, n, battles)) % n
  outcome = np.where(rng.random(battles) < 0.1, 0.5, (rng.random(battles) < 0.5) * 1.0)
  cells = merge_into_cells(Comparisons.from_arrays(a, b, outcome))
  weight = cells.weight
  p = jnp.full(weight.shape, 0.6, weight.dtype)
  games = jnp.maximum(jnp.round(weight), 1.0)
  shape = (REPLICA_CHUNK,) + weight.shape
  jax_poisson = jax.jit(lambda k: jax.random.poisson(k, jnp.broadcast_to(weight, shape), shape))
  jax_binomial = jax.jit(
    lambda k: jax.random.binomial(k, jnp.broadcast_to(games, shape), jnp.broadcast_to(p, shape))
  )
  samplers = {
    "Poisson weights": (
      lambda k: jax_poisson(k).block_until_ready(),
      lambda k: resample_unit_weights(k, weight, REPLICA_CHUNK),
    ),
    "binomial outcomes": (
      lambda k: jax_binomial(k).block_until_ready(),
      lambda k: resample_model_outcomes(k, p, weight, REPLICA_CHUNK),
    ),
  }
  print(
    f"draws: {battles:,} battles among {n} models -> {cells.num_comparisons:,} count cells; one "
    f"chunk = {REPLICA_CHUNK} replicas x {cells.num_comparisons:,} cells; best of {rounds}"
  )
  print()
  print("| draw | jax.random, jit (s) | NumPy on the host (s) | NumPy speed-up |")
  print("|---|---:|---:|---:|")
  for name, (with_jax, with_numpy) in samplers.items():
    with_jax(jax.random.key(0))  # compiles
    times = []
    for fn in (with_jax, with_numpy):
      best = float("inf")
      for r in range(rounds):
        start = time.perf_counter()
        fn(jax.random.key(r + 1))
        best = min(best, time.perf_counter() - start)
      times.append(best)
    print(f"| {name} | {times[0]:.3f} | {times[1]:.3f} | {times[0] / times[1]:.1f}x |", flush=True)


def fmt(x):
  return "—" if x is None else (f"{x:.4f}" if x < 1 else f"{x:.2f}")


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument(
    "--quick", action="store_true", help="small configuration (n=20, m=1e4, R=64)"
  )
  parser.add_argument("--agents", type=int, default=100)
  parser.add_argument("--comparisons", type=int, default=100_000)
  parser.add_argument("--replicas", type=int, default=1000)
  parser.add_argument(
    "--batch-sizes",
    type=int,
    nargs="+",
    default=[1, 10, 100],
    help="0 = all replicas in one vmap (batch_size=None)",
  )
  parser.add_argument(
    "--loop-replicas", type=int, default=200, help="replicas timed for the loop baseline"
  )
  parser.add_argument("--count-comparisons", type=int, default=1_000_000)
  parser.add_argument("--draws", action="store_true", help="only the draws table")
  parser.add_argument("--draw-battles", type=int, default=2_000_000)
  parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.draws:
    print(f"machine: {machine_description()}")
    draws_table(args.agents, args.draw_battles)
    return
  if args.child:
    kind, method, *rest = args.child
    rest = [int(x) for x in rest]
    out = child_bootstrap(method, *rest) if kind == "bootstrap" else child_counts(method, *rest)
    print(json.dumps(out))
    return
  if args.quick:
    args.agents, args.comparisons, args.replicas = 20, 10_000, 64
    args.batch_sizes, args.loop_replicas, args.count_comparisons = [1, 16], 8, 100_000

  n, m, R = args.agents, args.comparisons, args.replicas
  print(f"machine: {machine_description()}")
  print(
    f"bootstrap: n = {n} agents, m = {m:,} comparisons, R = {R:,} multinomial replicas; per "
    "replica: "
    f"reweight, pair_counts, posterior_edges, ste_scores_from_edges (tau = gamma = {TAU}, max-min "
    "reachability), float32"
  )
  print()
  print(
    "| method | batch size | compile (s) | run (s) | replicas timed | replicas/s | vs jitted loop "
    "| vs un-jitted loop | peak RSS (MB) | peak device (MB) |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  loop = run_child(__file__, ["bootstrap", "loop", n, m, R, 0, args.loop_replicas])
  eager = run_child(__file__, ["bootstrap", "eager", n, m, R, 0, max(1, args.loop_replicas // 10)])
  loop_rate = None if "error" in loop else loop["replicas"] / loop["run_s"]
  eager_rate = None if "error" in eager else eager["replicas"] / eager["run_s"]
  rows = [
    ("Python loop, jitted replica", "—", loop),
    ("Python loop, un-jitted replica", "—", eager),
  ]
  for b in args.batch_sizes:
    label = str(b) if b else "all (None)"
    rows.append(
      ("bootstrap_scores", label, run_child(__file__, ["bootstrap", "vmap", n, m, R, b, 0]))
    )
  for method, b, r in rows:
    if "error" in r:
      print(f"| {method} | {b} | error: {r['error']} ||||||||")
      continue
    rate = r["replicas"] / r["run_s"]
    ratio = f"{rate / loop_rate:.3g}x" if loop_rate and r is not loop else ""
    ratio_eager = f"{rate / eager_rate:.3g}x" if eager_rate and r is not eager else ""
    print(
      f"| {method} | {b} | {fmt(r['compile_s'])} | {fmt(r['run_s'])} | {r['replicas']} | "
      f"{rate:.1f} | {ratio} | "
      f"{ratio_eager} | {r['peak_rss_mb']:.0f} | {fmt_mb(r.get('peak_device_mb'))} |",
      flush=True,
    )

  mc = args.count_comparisons
  print()
  print(
    f"counts and estimators: n = {n} agents, m = {mc:,} comparisons, float32 (NumPy baseline "
    "float64)"
  )
  print()
  print("| computation | compile (s) | run (s) | comparisons/s | peak RSS (MB) |")
  print("|---|---:|---:|---:|---:|")
  methods = (
    "pair_counts",
    "pair_counts+posterior_edges",
    "pair_counts+win_rate_tournament",
    "numpy",
    "posterior_edges",
  )
  for method in methods:
    r = run_child(__file__, ["counts", method, n, mc])
    label = {
      "numpy": "NumPy bincount + scipy betainc (baseline for posterior_edges)",
      "posterior_edges": f"posterior_edges alone, on the {n} x {n} counts",
    }.get(method, method)
    if "error" in r:
      print(f"| {label} | error: {r['error']} ||||")
      continue
    rate = "—" if method == "posterior_edges" else f"{mc / r['run_s']:.3g}"
    print(
      f"| {label} | {fmt(r['compile_s'])} | {fmt(r['run_s'])} | {rate} | {r['peak_rss_mb']:.0f} |",
      flush=True,
    )


if __name__ == "__main__":
  main()
