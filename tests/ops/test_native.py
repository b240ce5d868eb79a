"""The native CPU cover kernels (ste_jax/ops/_native.py) against the JAX kernels and float64 equations."""

import os
import pathlib
import subprocess
import sys
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import soft_cover_scores, ste_scores
from ste_jax.ops import _native, native_kernels
from tests import oracles

AVAILABLE, DETAIL = _native.native_kernels_status()
needs_native = pytest.mark.skipif(not AVAILABLE, reason=f"native kernels unavailable: {DETAIL}")


def edges(rng, n, kind):
  """``D`` of shape ``(n, n)``, zero diagonal: random, with ties (P = 1/2), or saturated (0/1)."""
  if kind == "random":
    D = rng.uniform(size=(n, n))
  elif kind == "ties":
    D = np.where(rng.uniform(size=(n, n)) < 0.5, 0.5, rng.uniform(size=(n, n)))
  else:
    D = np.triu(np.ones((n, n)), 1)
  np.fill_diagonal(D, 0.0)
  return D


def values_and_grads(D, gamma_c, W, *, native):
  """Cover scores and the gradient of ``sum(W * cover)`` in ``D`` and ``gamma_c``, float32, jitted."""
  f = lambda D, g: jnp.sum(W * soft_cover_scores(D, gamma_c=g))
  with native_kernels(native):
    value = jax.jit(lambda D, g: soft_cover_scores(D, gamma_c=g))(D, gamma_c)
    grads = jax.jit(jax.grad(f, argnums=(0, 1)))(D, gamma_c)
  return value, grads


# n: tails of 3, 4, 1, 1 and 0 witnesses past 8 lanes; gamma_c: traced zero, both shifts on both
# sides of their threshold. The default suite runs n in (3, 9, 40) at five temperatures; the rest
# runs in `make test-slow`.
_SIZES_AND_TEMPERATURES = [
  pytest.param(
    n, g, marks=() if n in (3, 9, 40) and g in (0.0, 0.01, 0.0199, 0.02, 0.3) else pytest.mark.slow
  )
  for n in (3, 4, 9, 17, 40)
  for g in (0.0, 1e-4, 0.01, 0.0199, 0.02, 0.3, 5.0)
]


@needs_native
@pytest.mark.parametrize("n, gamma_c", _SIZES_AND_TEMPERATURES)
@pytest.mark.parametrize("kind", ["random", "ties", "saturated"])
def test_native_kernels_equal_float64_equations(n, kind, gamma_c):
  """Values and gradients (in D and gamma_c, traced; 0 is the hard limit) of both kernels vs float64."""
  rng = np.random.default_rng(n)
  D = edges(rng, n, kind)
  W = rng.normal(size=(n, n))
  D32, W32, g32 = (jnp.asarray(x, jnp.float32) for x in (D, W, gamma_c))
  native = values_and_grads(D32, g32, W32, native=True)
  portable = values_and_grads(D32, g32, W32, native=False)
  with jax.enable_x64(True):
    D64, W64 = jnp.asarray(D), jnp.asarray(W)
    expect = np.asarray(jax.jit(lambda D: oracles.naive_cover(D, gamma_c))(D64))
    expect_dD = np.asarray(
      jax.jit(jax.grad(lambda D: jnp.sum(W64 * oracles.naive_cover(D, gamma_c))))(D64)
    )
  for value, (dD, _) in (native, portable):
    np.testing.assert_allclose(value, expect, atol=2e-6)
    np.testing.assert_allclose(dD, expect_dD, atol=2e-5 * max(1.0, np.abs(expect_dD).max()))
  # The temperature's gradient is a cancellation (divided by gamma_c): both kernels agree to its rounding.
  np.testing.assert_allclose(native[1][1], portable[1][1], rtol=2e-2, atol=1e-3)


@needs_native
@pytest.mark.parametrize("gamma_c", [1e-3, 0.1])
def test_native_and_jax_kernels_agree_at_n_101(gamma_c):
  rng = np.random.default_rng(0)
  P = jnp.asarray(oracles.random_tournament(rng, 101, tie_prob=0.2), jnp.float32)
  W = jnp.asarray(rng.normal(size=(101, 101)), jnp.float32)
  native = values_and_grads(P, jnp.float32(gamma_c), W, native=True)
  portable = values_and_grads(P, jnp.float32(gamma_c), W, native=False)
  np.testing.assert_allclose(native[0], portable[0], atol=2e-6)
  np.testing.assert_allclose(native[1][0], portable[1][0], atol=1e-5 * np.abs(portable[1][0]).max())


@needs_native
def test_native_kernels_in_batches_forward_mode_and_second_order():
  """vmap (a loop of native calls), jvp (the JAX tangent map) and a Hessian-vector product agree."""
  rng = np.random.default_rng(3)
  P = jnp.asarray(
    np.stack([oracles.random_tournament(rng, 12, tie_prob=0.2) for _ in range(3)]), jnp.float32
  )
  V = jnp.asarray(rng.normal(size=P.shape), jnp.float32)
  f = lambda P: jnp.sum(ste_scores(P, tau=0.1).uncovered ** 2)
  hvp = lambda P, V: jax.jvp(jax.grad(f), (P,), (V,))[1]
  results = []
  for native in (True, False):
    with native_kernels(native):
      results.append(
        (
          jax.jit(jax.vmap(jax.grad(f)))(P),
          jax.jit(lambda P, V: jax.jvp(f, (P,), (V,))[1])(P, V),
          jax.jit(hvp)(P, V),
        )
      )
  for got, expect in zip(*results):
    np.testing.assert_allclose(
      got, expect, rtol=1e-4, atol=1e-5 * max(1.0, float(jnp.abs(expect).max()))
    )


@needs_native
def test_native_kernels_are_deterministic_and_propagate_nan():
  rng = np.random.default_rng(5)
  D = jnp.asarray(edges(rng, 33, "random"), jnp.float32)
  f = jax.jit(jax.value_and_grad(lambda D: jnp.sum(soft_cover_scores(D, gamma_c=0.05) ** 2)))
  first, second = f(D), f(D)
  np.testing.assert_array_equal(first[0], second[0])
  np.testing.assert_array_equal(first[1], second[1])
  v = soft_cover_scores(D.at[2, 5].set(jnp.nan), gamma_c=0.05)
  assert np.isnan(np.asarray(v)).any()


def test_native_kernels_off_and_unknown_setting():
  with native_kernels(False):
    assert not _native.use_native(jnp.float32)
  assert not _native.use_native(jnp.float64)  # float64 always runs the JAX kernels
  with pytest.raises(TypeError, match="enabled must be a bool"):
    with native_kernels("off"):
      pass


def test_a_failed_build_reports_the_compiler_error(tmp_path, monkeypatch):
  monkeypatch.setenv("STE_JAX_CACHE_DIR", str(tmp_path))
  monkeypatch.setattr(_native, "_compiler", lambda: sys.executable)  # Python as the compiler: fails
  with pytest.raises(RuntimeError, match="compilation failed"):
    _native.built_library()
  assert not list(tmp_path.iterdir())  # nothing half-written is left to load


def test_without_a_compiler_the_jax_kernels_run_and_the_reason_is_logged(tmp_path):
  """A fresh process whose build fails logs why once and still computes the scores."""
  code = (
    "import jax.numpy as jnp, ste_jax\n"
    "from ste_jax.ops import _native\n"
    "s = ste_jax.ste_scores(jnp.array([[0.5, 0.9, 0.2], [0.1, 0.5, 0.8], [0.8, 0.2, 0.5]]), tau=0.1)\n"
    "print(_native.native_kernels_status()[0], float(s.uncovered.sum()) > 0)\n"
  )
  env = dict(
    os.environ, STE_JAX_CACHE_DIR=str(tmp_path), CXX="", PATH=str(tmp_path), JAX_PLATFORMS="cpu"
  )
  run = subprocess.run(
    [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
  )
  assert run.returncode == 0, run.stderr
  assert run.stdout.split() == ["False", "True"]
  assert "native CPU cover kernels unavailable" in run.stderr and "no C++ compiler" in run.stderr
  assert run.stderr.count("native CPU cover kernels unavailable") == 1


def test_other_backends_lower_without_the_native_kernels():
  """Lowered for a GPU (no GPU needed: ``jax.export``), the program holds no native call; a CPU
  program exported inside ``native_kernels(False)`` holds none either (serializable)."""
  P = jnp.asarray(oracles.random_tournament(np.random.default_rng(2), 6), jnp.float32)
  grad = jax.jit(jax.grad(lambda P: jnp.sum(ste_scores(P, tau=0.1).uncovered)))
  assert "ste_jax_cover" not in jax.export.export(grad, platforms=["cuda"])(P).mlir_module()
  with native_kernels(False):
    exported = jax.export.export(grad, platforms=["cpu"])(P)
  assert "ste_jax_cover" not in exported.mlir_module()
  np.testing.assert_allclose(exported.call(P), grad(P), rtol=1e-5, atol=1e-7)


def test_an_unwritable_user_cache_falls_back_to_a_temporary_directory(tmp_path, monkeypatch):
  monkeypatch.delenv("STE_JAX_CACHE_DIR", raising=False)
  blocked = tmp_path / "not_a_directory"
  blocked.write_text("")  # XDG_CACHE_HOME is a file: its ste_jax subdirectory cannot be made
  monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
  assert _native._cache_dir().parent == pathlib.Path(tempfile.gettempdir())
  monkeypatch.setenv("STE_JAX_CACHE_DIR", str(tmp_path / "explicit"))
  assert _native._cache_dir() == tmp_path / "explicit"
