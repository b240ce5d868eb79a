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

Two more rows: the same sums hand-written in C (``benchmarks/native/cover_sums.c``: GCC/Clang
vector extensions, a degree-5 polynomial, OpenMP over rows ``c``; not used by ``ste_jax``),
compiled at run time with ``cc -O3 -march=native -fopenmp`` and called through ``ctypes`` on the
same arrays (and checked equal to the ``jnp.exp`` row's sums): the rate a native cover kernel
could reach on this CPU; and the same C code as a typed XLA FFI target
(``benchmarks/native/cover_sums_ffi.cc``, built with ``c++`` and the headers of
``jax.ffi.include_dir()``) through ``jax.ffi.ffi_call`` inside a compiled program: what a native
kernel in ``ste_jax`` would cost, call overhead included. Each is skipped, with a message, where
it cannot be built (``--no-c`` skips both).

Usage: python benchmarks/exp_rate.py [--n 1000] [--rounds 3] [--degrees 4 5 6] [--no-c]
"""

import argparse
import ctypes
import functools
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from benchmarks._timing import interleaved_medians, machine_description  # noqa: E402

_LOG2E = np.float32(1.4426950408889634)
_MAGIC = np.float32(1.5 * 2**23)


def exp2_coefficients(degree: int) -> list:
  """Coefficients (constant first) of a polynomial for ``2^f`` on ``[-1/2, 1/2]``, relative error fitted."""
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
  """``out[a_block, c, a] = sum_b exp(D[a, b] Y[c, b] / g - 1 / g)``, tiles of ``rows`` rows ``a``."""

  def run(D, Y, inv_g):
    def block(a0):
      Da = lax.dynamic_slice_in_dim(D, a0, rows)
      return lax.map(lambda y: jnp.sum(exp(Da * y[None, :] * inv_g - inv_g), axis=-1), Y)

    return lax.map(block, jnp.arange(n // rows) * rows)

  return run


def native_cover_sums(build_dir: str):
  """``(sums(D, Y, inv_g) -> out, exp(x) -> out)`` from ``benchmarks/native/cover_sums.c``; ``None`` if it cannot be built."""
  compiler = shutil.which(os.environ.get("CC", "cc"))
  if compiler is None:
    return None
  source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native", "cover_sums.c")
  library = os.path.join(build_dir, "cover_sums.so")
  build = subprocess.run([compiler, "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-o", library, source],
                         capture_output=True, text=True)
  if build.returncode != 0:  # e.g. a compiler without OpenMP
    print(f"building {source} failed:\n{build.stderr}", file=sys.stderr)
    return None
  lib = ctypes.CDLL(library)
  ptr = ctypes.POINTER(ctypes.c_float)

  def sums(D, Y, inv_g):
    D, Y = np.ascontiguousarray(D, np.float32), np.ascontiguousarray(Y, np.float32)
    out = np.empty(D.shape, np.float32)
    lib.cover_sums(D.ctypes.data_as(ptr), Y.ctypes.data_as(ptr), D.shape[0], ctypes.c_float(inv_g), out.ctypes.data_as(ptr))
    return out

  def exp(x):
    x = np.ascontiguousarray(x, np.float32)
    out = np.empty_like(x)
    lib.exp_values(x.ctypes.data_as(ptr), x.size, out.ctypes.data_as(ptr))
    return out

  return sums, exp


def native_ffi_cover_sums(build_dir: str):
  """The same sums as an XLA FFI target (``native/cover_sums_ffi.cc``): ``sums(D, Y, inv_g)`` to call inside ``jax.jit``.

  ``None`` where no C++ compiler is found or the build fails (the error goes to stderr).
  """
  compiler = shutil.which(os.environ.get("CXX", "c++"))
  if compiler is None:
    return None
  here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native")
  library = os.path.join(build_dir, "cover_sums_ffi.so")
  build = subprocess.run(
      [compiler, "-O3", "-std=c++17", "-march=native", "-fopenmp", "-fPIC", "-shared", "-w",
       f"-I{jax.ffi.include_dir()}", os.path.join(here, "cover_sums_ffi.cc"), "-x", "c",
       os.path.join(here, "cover_sums.c"), "-o", library],
      capture_output=True, text=True)
  if build.returncode != 0:
    print(f"building the FFI target failed:\n{build.stderr[-2000:]}", file=sys.stderr)
    return None
  lib = ctypes.cdll.LoadLibrary(library)
  jax.ffi.register_ffi_target("ste_bench_cover_sums", jax.ffi.pycapsule(lib.CoverSums), platform="cpu")

  def sums(D, Y, inv_g):
    out = jax.ShapeDtypeStruct(D.shape, jnp.float32)
    return jax.ffi.ffi_call("ste_bench_cover_sums", out, vmap_method="sequential")(D, Y, jnp.reshape(inv_g, (1,)))

  return sums


def main():
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--n", type=int, default=1000)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--degrees", type=int, nargs="+", default=[4, 5, 6])
  parser.add_argument("--no-c", action="store_true", help="skip the hand-written C row")
  args = parser.parse_args()
  build_dir = tempfile.mkdtemp(prefix="ste_exp_rate_")
  native = None if args.no_c else native_cover_sums(build_dir)
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
  compiled = {k: jax.jit(cover_shaped_sum(e, n, rows)).lower(D, Y, inv_g).compile() for k, e in variants.items()}
  errors = {k: float(jnp.max(jnp.abs(jax.jit(e)(x) / jnp.exp(x) - 1.0))) for k, e in variants.items()}
  reference = np.asarray(compiled["jnp.exp"](D, Y, inv_g)).transpose(1, 0, 2).reshape(n, n)  # [c, a]
  if native is not None:
    sums, native_exp = native
    D_np, Y_np = np.asarray(D), np.asarray(Y)
    compiled["hand-written C, degree 5"] = lambda D, Y, inv_g: sums(D_np, Y_np, float(inv_g))
    errors["hand-written C, degree 5"] = float(np.max(np.abs(native_exp(np.asarray(x)) / np.asarray(jnp.exp(x)) - 1.0)))
  ffi_sums = None if args.no_c else native_ffi_cover_sums(build_dir)
  if ffi_sums is not None:
    compiled["hand-written C via jax.ffi, in jit"] = jax.jit(ffi_sums).lower(D, Y, inv_g).compile()
    # the same C exponential as the row above (its error; NaN where that row was not built)
    errors["hand-written C via jax.ffi, in jit"] = errors.get("hand-written C, degree 5", float("nan"))
  for k in compiled.keys() - variants.keys():  # the native rows compute the same sums
    np.testing.assert_allclose(np.asarray(compiled[k](D, Y, inv_g)), reference, rtol=1e-5)
  med = interleaved_medians({k: functools.partial(fn, D, Y, inv_g) for k, fn in compiled.items()}, args.rounds)
  print(f"machine: {machine_description()}")
  print(f"sum over b of exp(D[a,b] Y[c,b] / g - 1 / g), n = {n} ({n**3:.2e} exponentials), g = 0.05, float32; "
        f"medians of {args.rounds} interleaved rounds")
  if native is None and not args.no_c:
    print("(no C compiler, or the build failed: the hand-written row is skipped)")
  print()
  print("| exponential | time (s) | G exp/s | time vs jnp.exp | max rel. error vs jnp.exp on [-50, 0] |")
  print("|---|---:|---:|---:|---:|")
  base = med["jnp.exp"]
  for k in compiled:
    t = med[k]
    print(f"| {k} | {t:.3f} | {n**3 / t / 1e9:.2f} | {t / base:.2f}x | {errors[k]:.1e} |")
  shutil.rmtree(build_dir, ignore_errors=True)


if __name__ == "__main__":
  main()
