"""The closure derivative's edge search: two forms of its key comparisons, timed interleaved.

The exact closure's derivative needs each output's bottleneck edge, found by Floyd--Warshall on
``(value, flat index)`` keys ordered lexicographically (``ste_jax/ops/_maxmin.py``,
``_floyd_warshall_edges``). The lexicographic minimum and maximum can be written per component
(a value minimum plus a minimum of the indices held by the winning value: ``_lex_min``) or as one
select of both components on a compound predicate (``_lex_min_select``); both give the same edges
(checked here on every input, and against a tie-breaking perturbation in
``tests/ops/test_reachability.py``). Which one XLA:CPU runs faster depends on ``n``;
``_SELECT_KEYS_MIN_N`` picks by size. For each ``n`` this script compiles the edge search in both
forms (the constant patched before each trace), then times them alternately for ``--rounds`` rounds
(one call each per round, after a warm-up) and prints the median per form, their ratio and the
closure values alone for scale. Inputs: entries drawn from {0, 1/4, 1/2, 1} with half of them
replaced by uniform values (many exact ties, as in sparse data), or ``--uniform``.

With ``--pivots P [P ...]`` it times instead the pivots per Floyd--Warshall sweep
(``_PIVOTS_PER_SWEEP``, patched before each trace; each sweep makes one pass over the ``(n, n)``
key arrays, so more pivots per sweep mean fewer passes): the edge search (keys compared in the form
the size selects) and the closure values, every count checked to give the same edges and values.

Usage: python benchmarks/closure_edges.py [--sizes 100 300 1000 2000] [--rounds 5] [--uniform]
         [--pivots 8 16 32]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import machine_description  # noqa: E402
from ste_jax.ops import _maxmin  # noqa: E402


def edge_input(n: int, uniform: bool, seed: int = 0) -> np.ndarray:
  rng = np.random.default_rng(seed)
  if uniform:
    return rng.uniform(size=(n, n)).astype(np.float32)
  W = rng.choice([0.0, 0.25, 0.5, 1.0], size=(n, n)).astype(np.float32)
  distinct = rng.uniform(size=(n, n)) < 0.5
  W[distinct] = rng.uniform(size=int(distinct.sum()))
  return W


def compiled_edges(W, select_min_n: int):
  """The edge search compiled with ``_SELECT_KEYS_MIN_N = select_min_n`` (read at trace time)."""
  saved = _maxmin._SELECT_KEYS_MIN_N
  _maxmin._SELECT_KEYS_MIN_N = select_min_n
  jax.clear_caches()
  try:
    return jax.jit(_maxmin._floyd_warshall_edges).lower(W).compile()
  finally:
    _maxmin._SELECT_KEYS_MIN_N = saved


def compiled_with_pivots(W, pivots: int):
  """(edge search, closure values) compiled with ``_PIVOTS_PER_SWEEP = pivots`` (read at trace time)."""
  n = W.shape[-1]
  saved = _maxmin._PIVOTS_PER_SWEEP
  _maxmin._PIVOTS_PER_SWEEP = pivots
  jax.clear_caches()
  try:
    edges = jax.jit(_maxmin._floyd_warshall_edges).lower(W).compile()
    values = jax.jit(lambda W: _maxmin._closure_single(W, K=max(n - 1, 1))).lower(W).compile()
    return edges, values
  finally:
    _maxmin._PIVOTS_PER_SWEEP = saved


def pivot_table(args):
  print(f"machine: {machine_description()}")
  print(f"inputs: {'uniform' if args.uniform else 'half {0, 1/4, 1/2, 1}, half uniform (ties)'}; "
        f"median of {args.rounds} interleaved rounds; pivots per sweep from n = {_maxmin._SWEEP_MIN_N}, "
        f"current _PIVOTS_PER_SWEEP = {_maxmin._PIVOTS_PER_SWEEP}")
  print()
  head = " | ".join(f"edges, {p} (s) | values, {p} (s)" for p in args.pivots)
  print(f"| n | {head} |")
  print("|---:|" + "---:|" * (2 * len(args.pivots)))
  for n in args.sizes:
    W = jax.numpy.asarray(edge_input(n, args.uniform))
    fns = {p: compiled_with_pivots(W, p) for p in args.pivots}
    first = fns[args.pivots[0]]
    for edges, values in fns.values():
      np.testing.assert_array_equal(edges(W), first[0](W))
      np.testing.assert_array_equal(values(W), first[1](W))
    times = {(p, k): [] for p in args.pivots for k in range(2)}
    for _ in range(args.rounds):
      for p, pair in fns.items():
        for k, fn in enumerate(pair):
          t0 = time.perf_counter()
          jax.block_until_ready(fn(W))
          times[p, k].append(time.perf_counter() - t0)
    cells = " | ".join(f"{np.median(times[p, 0]):.4g} | {np.median(times[p, 1]):.4g}" for p in args.pivots)
    print(f"| {n} | {cells} |", flush=True)


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500, 700, 1000, 2000])
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--uniform", action="store_true", help="uniform entries (no ties)")
  parser.add_argument("--pivots", type=int, nargs="+", help="time these pivots per sweep instead")
  args = parser.parse_args()
  if args.pivots:
    return pivot_table(args)
  print(f"machine: {machine_description()}")
  print(f"inputs: {'uniform' if args.uniform else 'half {0, 1/4, 1/2, 1}, half uniform (ties)'}; "
        f"median of {args.rounds} interleaved rounds; current _SELECT_KEYS_MIN_N = {_maxmin._SELECT_KEYS_MIN_N}")
  print()
  print("| n | per component (s) | compound select (s) | per component / select | closure values alone (s) |")
  print("|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    W = jax.numpy.asarray(edge_input(n, args.uniform))
    forms = {"per component": compiled_edges(W, 1 << 30), "select": compiled_edges(W, 0)}
    values = jax.jit(lambda W: _maxmin._closure_single(W, K=max(n - 1, 1))).lower(W).compile()
    np.testing.assert_array_equal(forms["per component"](W), forms["select"](W))
    times = {name: [] for name in [*forms, "values"]}
    for fn in [*forms.values(), values]:
      jax.block_until_ready(fn(W))  # warm-up
    for _ in range(args.rounds):
      for name, fn in [*forms.items(), ("values", values)]:
        t0 = time.perf_counter()
        jax.block_until_ready(fn(W))
        times[name].append(time.perf_counter() - t0)
    med = {name: float(np.median(t)) for name, t in times.items()}
    print(f"| {n} | {med['per component']:.4g} | {med['select']:.4g} | "
          f"{med['per component'] / med['select']:.2f}x | {med['values']:.4g} |", flush=True)


if __name__ == "__main__":
  main()
