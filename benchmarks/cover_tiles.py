"""The soft cover's tile budgets, timed interleaved: value kernel and reverse kernel.

The cover kernels stream the ``(c, a, b)`` witness terms in tiles whose size is a module constant of
``ste_jax/ops/_cover_kernels.py``: ``_TILE_ELEMENTS`` (the value kernel) and
``_BACKWARD_TILE_ELEMENTS`` (the reverse kernel's tiles of one row ``c`` and a block of rows ``a``).
For each ``n`` this script compiles ``soft_cover_scores(D, gamma_c=0.05)`` forward and
``jax.value_and_grad`` of a weighted sum of it once per budget pair (the constants patched before
each trace), checks that every pair gives the same values and gradients (to float32 rounding), then
times them alternately for ``--rounds`` rounds (one call each per round, after a warm-up) and prints
the medians. ``D = sigmoid((P - 1/2) /
0.05)`` of a random tournament, as in ``benchmarks/operators.py --parts``. The tiles are those of
the JAX kernels, so everything runs inside ``ste_jax.ops.native_kernels(False)`` (on the CPU the
native kernels would otherwise run, whatever the budgets).

Usage: python benchmarks/cover_tiles.py [--sizes 100 1000 2000] [--rounds 3]
         [--budgets 18:18 18:20]    # log2 of (_TILE_ELEMENTS, _BACKWARD_TILE_ELEMENTS)
"""

import argparse
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import interleaved_medians, machine_description, patched  # noqa: E402
from benchmarks.operators import make_tournament  # noqa: E402
import ste_jax  # noqa: E402
from ste_jax.ops import _cover_kernels  # noqa: E402


def compiled_pair(D, W, value_log2: int, backward_log2: int):
  """(forward, value_and_grad) compiled with the two tile budgets ``2**value_log2``,
  ``2**backward_log2``."""
  with (
    patched(
      _cover_kernels, _TILE_ELEMENTS=1 << value_log2, _BACKWARD_TILE_ELEMENTS=1 << backward_log2
    ),
    ste_jax.ops.native_kernels(False),
  ):
    loss = lambda D: jnp.sum(W * ste_jax.ops.soft_cover_scores(D, gamma_c=0.05))
    forward = jax.jit(lambda D: ste_jax.ops.soft_cover_scores(D, gamma_c=0.05)).lower(D).compile()
    both = jax.jit(jax.value_and_grad(loss)).lower(D).compile()
    return forward, both


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 2000])
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument(
    "--budgets",
    nargs="+",
    default=["18:18", "18:20"],
    help="value:backward tile budgets as log2 of elements",
  )
  args = parser.parse_args()
  budgets = [tuple(int(x) for x in b.split(":")) for b in args.budgets]
  print(f"machine: {machine_description()}")
  print(
    f"soft_cover_scores(D, gamma_c=0.05), float32; median of {args.rounds} interleaved rounds; "
    "current budgets "
    f"2^{_cover_kernels._TILE_ELEMENTS.bit_length() - 1}:"
    f"2^{_cover_kernels._BACKWARD_TILE_ELEMENTS.bit_length() - 1}"
  )
  print()
  print(
    "| n | budgets (log2 value:backward) | backward a-rows | forward (s) | fwd+bwd (s) | fwd+bwd "
    "vs first |"
  )
  print("|---:|---|---:|---:|---:|---:|")
  for n in args.sizes:
    P = jnp.asarray(make_tournament(n))
    D = jax.nn.sigmoid((P - 0.5) / 0.05)
    W = jnp.asarray(np.random.default_rng(1).normal(size=(n, n)).astype(np.float32))
    fns = {b: compiled_pair(D, W, *b) for b in budgets}
    ref = fns[budgets[0]][1](D)
    for b, (_, both) in fns.items():
      np.testing.assert_allclose(
        both(D)[1], ref[1], rtol=1e-4, atol=1e-6 * float(jnp.max(jnp.abs(ref[1])))
      )
    med = interleaved_medians(
      {(b, k): functools.partial(pair[k], D) for b, pair in fns.items() for k in (0, 1)},
      args.rounds,
    )
    first = med[budgets[0], 1]
    for b in budgets:
      with patched(_cover_kernels, _BACKWARD_TILE_ELEMENTS=1 << b[1]):
        rows = _cover_kernels._backward_block_rows(n)
      fwd, both = med[b, 0], med[b, 1]
      print(
        f"| {n} | {b[0]}:{b[1]} | {rows} | {fwd:.4g} | {both:.4g} | {first / both:.2f}x |",
        flush=True,
      )


if __name__ == "__main__":
  main()
