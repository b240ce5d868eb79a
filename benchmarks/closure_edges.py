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
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import interleaved_medians, machine_description, patched  # noqa: E402
from ste_jax.ops import _maxmin  # noqa: E402


def edge_input(n: int, uniform: bool, seed: int = 0) -> np.ndarray:
  rng = np.random.default_rng(seed)
  if uniform:
    return rng.uniform(size=(n, n)).astype(np.float32)
  W = rng.choice([0.0, 0.25, 0.5, 1.0], size=(n, n)).astype(np.float32)
  distinct = rng.uniform(size=(n, n)) < 0.5
  W[distinct] = rng.uniform(size=int(distinct.sum()))
  return W


def compiled_edges(W, **constants):
  """The edge search compiled with these ``_maxmin`` constants (read at trace time)."""
  with patched(_maxmin, **constants):
    return jax.jit(_maxmin._floyd_warshall_edges).lower(W).compile()


def compiled_values(W, **constants):
  """The closure values (``K = n - 1``) compiled with these ``_maxmin`` constants."""
  n = W.shape[-1]
  with patched(_maxmin, **constants):
    return jax.jit(lambda W: _maxmin._closure_single(W, K=max(n - 1, 1))).lower(W).compile()


def print_header(args, current: str):
  print(f"machine: {machine_description()}")
  print(
    f"inputs: {'uniform' if args.uniform else 'half {0, 1/4, 1/2, 1}, half uniform (ties)'}; "
    f"median of {args.rounds} interleaved rounds; {current}"
  )
  print()


def pivot_table(args):
  print_header(
    args,
    f"pivots per sweep from n = {_maxmin._SWEEP_MIN_N}, current _PIVOTS_PER_SWEEP = "
    f"{_maxmin._PIVOTS_PER_SWEEP}",
  )
  head = " | ".join(f"edges, {p} (s) | values, {p} (s)" for p in args.pivots)
  print(f"| n | {head} |")
  print("|---:|" + "---:|" * (2 * len(args.pivots)))
  for n in args.sizes:
    W = jax.numpy.asarray(edge_input(n, args.uniform))
    fns = {
      (p, kind): compile(W, _PIVOTS_PER_SWEEP=p)
      for p in args.pivots
      for kind, compile in (("edges", compiled_edges), ("values", compiled_values))
    }
    for (p, kind), fn in fns.items():
      np.testing.assert_array_equal(fn(W), fns[args.pivots[0], kind](W))
    med = interleaved_medians(
      {key: functools.partial(fn, W) for key, fn in fns.items()}, args.rounds
    )
    cells = " | ".join(f"{med[p, 'edges']:.4g} | {med[p, 'values']:.4g}" for p in args.pivots)
    print(f"| {n} | {cells} |", flush=True)


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500, 700, 1000, 2000])
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--uniform", action="store_true", help="uniform entries (no ties)")
  parser.add_argument("--pivots", type=int, nargs="+", help="time these pivots per sweep instead")
  args = parser.parse_args()
  if args.pivots:
    return pivot_table(args)
  print_header(args, f"current _SELECT_KEYS_MIN_N = {_maxmin._SELECT_KEYS_MIN_N}")
  print(
    "| n | per component (s) | compound select (s) | per component / select | closure values alone "
    "(s) |"
  )
  print("|---:|---:|---:|---:|---:|")
  for n in args.sizes:
    W = jax.numpy.asarray(edge_input(n, args.uniform))
    fns = {
      "per component": compiled_edges(W, _SELECT_KEYS_MIN_N=1 << 30),
      "select": compiled_edges(W, _SELECT_KEYS_MIN_N=0),
      "values": compiled_values(W),
    }
    np.testing.assert_array_equal(fns["per component"](W), fns["select"](W))
    med = interleaved_medians(
      {name: functools.partial(fn, W) for name, fn in fns.items()}, args.rounds
    )
    print(
      f"| {n} | {med['per component']:.4g} | {med['select']:.4g} | "
      f"{med['per component'] / med['select']:.2f}x | {med['values']:.4g} |",
      flush=True,
    )


if __name__ == "__main__":
  main()
