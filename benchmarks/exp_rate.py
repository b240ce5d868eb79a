"""The rate of XLA:CPU's ``exp`` in a cover-shaped reduction, against polynomial exponentials.

Each pass of the soft cover evaluates ``n^3`` exponentials ``exp(term / g - 1 / g)`` of terms
``term = D[a, b] Y[c, b]`` in ``[0, 1]`` and sums them over ``b`` (``ste_jax/ops/_covering.py``).
This script times that reduction alone -- tiles of up to 256 rows ``a`` (a divisor of ``n``) for
one row ``c``, ``b`` minor, ``g = 0.05`` -- with ``jnp.exp`` and with exponentials written in JAX
for the range ``[-50, 0]`` of
the shift-by-one path: ``2^k`` built from the exponent bits and a polynomial of degree ``d`` for
``2^f`` on ``f in [-1/2, 1/2]`` (least-squares fit of the relative error on Chebyshev nodes),
with ``k`` rounded by ``jnp.round`` ("round") or by adding and subtracting ``1.5 * 2^23``
("magic", behind an optimization barrier). Variants alternate for ``--rounds`` rounds; the table
gives the median, the rate in exponentials per second, the ratio to ``jnp.exp`` and each
variant's largest relative error against ``jnp.exp`` on ``[-50, 0]``.

One more row: the same sums by ``ste_jax``'s native CPU cover kernel
(``ste_jax/ops/_native/cover_kernels.cc``: C++ with GCC/Clang vector extensions, a Cody-Waite
reduction and a degree-4 polynomial, on XLA's CPU thread pool; built at installation, see
``ste_jax/ops/_native.py``; the row names the vector-width variant that ran), called through
``jax.ffi.ffi_call`` inside a compiled program, call overhead and the per-pair logarithm included,
checked equal to the ``jnp.exp`` row's sums. It is skipped, with a message, where the kernel was
not built (``--no-native`` skips it).

Usage: python benchmarks/exp_rate.py [--n 1000] [--rounds 3] [--degrees 4 5 6] [--no-native]
"""

import argparse
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
from jax import lax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import interleaved_medians, machine_description  # noqa: E402
from ste_jax.ops import _native, native_kernels_status  # noqa: E402

_LOG2E = np.float32(1.4426950408889634)
_MAGIC = np.float32(1.5 * 2**23)


def exp2_coefficients(degree: int) -> list:
  """Coefficients (constant first) of a polynomial for ``2^f`` on ``[-1/2, 1/2]``."""
  f = 0.5 * np.cos(np.linspace(0.0, np.pi, 4001))
  V = np.vander(f, degree + 1, increasing=True) * (2.0**-f)[:, None]
  return [np.float32(c) for c in np.linalg.lstsq(V, np.ones_like(f), rcond=None)[0]]


def polynomial_exp(degree: int, rounding: str):
  """``exp`` for float32 arguments in ``[-50, 0]``: ``2^k * p(f)`` with ``x log2(e) = k + f``."""
  coefficients = exp2_coefficients(degree)

  def exp(x):
    t = x * _LOG2E
    if rounding == "magic":
      # The low mantissa bits of z hold round(t); the barrier keeps XLA from simplifying
      # (t + M) - M to t, which it otherwise does (then f = 0 and the error reaches 41 %).
      z = lax.optimization_barrier(t + _MAGIC)
      f = t - (z - _MAGIC)
      bits = (lax.bitcast_convert_type(z, jnp.int32) << 23) + (127 << 23)
    else:
      k = jnp.round(t)
      f = t - k
      bits = (k.astype(jnp.int32) + 127) << 23
    p = coefficients[-1]
    for c in coefficients[-2::-1]:
      p = p * f + c
    return p * lax.bitcast_convert_type(bits, jnp.float32)

  return exp


def cover_shaped_sum(exp, n: int, rows: int = 256):
  """``out[a_block, c, a] = sum_b exp(D[a, b] Y[c, b] / g - 1 / g)``, tiles of ``rows`` rows a."""

  def run(D, Y, inv_g):
    def block(a0):
      Da = lax.dynamic_slice_in_dim(D, a0, rows)
      return lax.map(lambda y: jnp.sum(exp(Da * y[None, :] * inv_g - inv_g), axis=-1), Y)

    return lax.map(block, jnp.arange(n // rows) * rows)

  return run


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--n", type=int, default=1000)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--degrees", type=int, nargs="+", default=[4, 5, 6])
  parser.add_argument(
    "--no-native", action="store_true", help="skip the row of ste_jax's native kernel"
  )
  args = parser.parse_args()
  n = args.n
  rows = max(r for r in range(1, min(256, n) + 1) if n % r == 0)  # tiles of up to 256 rows a
  D = jax.random.uniform(jax.random.key(0), (n, n), jnp.float32)
  Y = 1.0 - D.T
  inv_g = jnp.float32(20.0)
  x = jnp.linspace(-50.0, 0.0, 1_000_001, dtype=jnp.float32)
  variants = {"jnp.exp": jnp.exp}
  for d in args.degrees:
    for rounding in ("round", "magic"):
      variants[f"degree {d}, {rounding}"] = polynomial_exp(d, rounding)
  compiled = {
    k: jax.jit(cover_shaped_sum(e, n, rows)).lower(D, Y, inv_g).compile()
    for k, e in variants.items()
  }
  errors = {
    k: f"{float(jnp.max(jnp.abs(jax.jit(e)(x) / jnp.exp(x) - 1.0))):.1e}"
    for k, e in variants.items()
  }
  reference = (
    np.asarray(compiled["jnp.exp"](D, Y, inv_g)).transpose(1, 0, 2).reshape(n, n)
  )  # [c, a]
  available, detail = (False, "--no-native") if args.no_native else native_kernels_status()
  if available:
    row = f"ste_jax native kernel ({_native.variant()}) via jax.ffi, in jit"

    def native_sums(
      D, Y, inv_g
    ):  # the kernel subtracts two zero terms' share, exp(-1/g) each; add it back
      _, aux = _native.cover_forward(D, Y, 1.0 / inv_g, min_gamma_shift_by_one=0.0)
      return jnp.exp(aux) + 2.0 * jnp.exp(-inv_g)

    compiled[row] = jax.jit(native_sums).lower(D, Y, inv_g).compile()
    np.testing.assert_allclose(np.asarray(compiled[row](D, Y, inv_g)), reference, rtol=1e-5)
    errors[row] = "see tests/ops/test_native.py"
  med = interleaved_medians(
    {k: functools.partial(fn, D, Y, inv_g) for k, fn in compiled.items()}, args.rounds
  )
  print(f"machine: {machine_description()}")
  print(
    f"sum over b of exp(D[a,b] Y[c,b] / g - 1 / g), n = {n} ({n**3:.2e} exponentials), "
    f"g = 0.05, float32; medians of {args.rounds} interleaved rounds"
  )
  if not available:
    print(f"(the native kernel's row is skipped: {detail})")
  print()
  print(
    "| exponential | time (s) | G exp/s | time vs jnp.exp | max rel. error vs jnp.exp on [-50, 0] |"
  )
  print("|---|---:|---:|---:|---:|")
  base = med["jnp.exp"]
  for k in compiled:
    t = med[k]
    print(f"| {k} | {t:.3f} | {n**3 / t / 1e9:.2f} | {t / base:.2f}x | {errors[k]} |")


if __name__ == "__main__":
  main()
