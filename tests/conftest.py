"""Shared test configuration: compile flags, strict numerics, keys, x64 scoping and tolerances."""

import os
import shutil
import subprocess
import sys
import tempfile

import jax  # imported, not initialized: the backend starts at first use, after pytest_configure
import jax.numpy as jnp
import numpy as np
import pytest

# The suite is compile-bound: most tests run small programs (many of them eagerly: one XLA
# compilation per primitive and shape), so XLA:CPU compile time, not run time, dominates `make
# test`. `make test` sets STE_JAX_TEST_FAST_COMPILE=1, and then two flags are added to XLA_FLAGS:
# without XLA:CPU's MLIR fusion emitters and without LLVM's optimization passes the default suite
# compiles much faster. They change code generation, not the computation, and each test compares
# values computed under the same flags; but
# a bug that only the optimizer exposes (such as a fused multiply-add residual) would pass unseen,
# so `.ci/run` also runs the operator tests with XLA's default code generation (`make
# test-codegen`), and `make test-slow` uses it too (its compute-heavy tests need the optimizer). The
# flags are set before JAX initializes its backend (tests create arrays only when collected or run),
# inherited by pytest-xdist workers and by subprocesses the tests start, and only where this XLA
# knows them (an unknown flag in XLA_FLAGS aborts the process).
_FAST_COMPILE_FLAGS = ("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=0")


def _with_fast_compile_flags(env):
  """``XLA_FLAGS`` plus the fast-compile flags it lacks, or ``None`` (not asked for, present, or
  unknown)."""
  if env.get("STE_JAX_TEST_FAST_COMPILE") != "1":
    return None
  flags = env.get("XLA_FLAGS", "")
  missing = [f for f in _FAST_COMPILE_FLAGS if f.split("=")[0] not in flags]
  if not missing:
    return None
  candidate = " ".join([flags, *missing]).strip()
  probe = subprocess.run(
    [sys.executable, "-c", "import jax; jax.devices()"],
    capture_output=True,
    timeout=120,
    env=dict(env, XLA_FLAGS=candidate, JAX_PLATFORMS="cpu"),
  )
  return candidate if probe.returncode == 0 else None


# One XLA compilation cache per test session, shared by the pytest-xdist workers and by the
# subprocesses the tests start (the CLI, the planted benchmark). Many tests build fresh functions
# (lambdas, ``jax.jit`` of closures) whose programs another test, or the other worker, has already
# compiled; the in-process caches key on the Python function, the persistent cache on the program,
# so those compilations are read back instead of redone (every compilation is written:
# ``jax_persistent_cache_min_compile_time_secs = 0``). The cache key includes XLA_FLAGS and the
# jaxlib version. The directory is new for each session and removed at its end, so a session never
# reads another's programs and timings on a clean clone are what `make test` takes there.
_CACHE_ENV = "STE_JAX_TEST_COMPILATION_CACHE"


def _use_session_compilation_cache(config):
  cache = os.environ.get(_CACHE_ENV)
  if cache is None:  # the controlling process (or a run without xdist): create it
    cache = tempfile.mkdtemp(prefix="ste-jax-test-xla-cache-")
    os.environ[_CACHE_ENV] = cache
    config._ste_jax_owned_cache = cache
  # The environment reaches workers and subprocesses, whose JAX reads it on import; this process
  # imported JAX already (module top), so it is configured directly too.
  os.environ["JAX_COMPILATION_CACHE_DIR"] = cache
  os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
  jax.config.update("jax_compilation_cache_dir", cache)
  jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def pytest_configure(config):
  flags = _with_fast_compile_flags(os.environ)
  if flags is not None:
    os.environ["XLA_FLAGS"] = flags
  # Set once: xdist workers and subprocesses inherit XLA_FLAGS and need not probe again.
  os.environ["STE_JAX_TEST_FAST_COMPILE"] = "0"
  _use_session_compilation_cache(config)


def pytest_unconfigure(config):
  cache = getattr(config, "_ste_jax_owned_cache", None)
  if cache is not None:
    shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture(autouse=True)
def _strict_jax():
  """Strict dtype promotion, no implicit rank promotion, typed keys that must not be reused."""
  with (
    jax.numpy_dtype_promotion("strict"),
    jax.numpy_rank_promotion("raise"),
    jax.debug_key_reuse(True),
  ):
    yield


@pytest.fixture
def x64():
  """Runs the test with float64 enabled, restoring the previous setting afterwards."""
  with jax.enable_x64(True):
    yield


@pytest.fixture
def patch_trace_constant(monkeypatch):
  """``patch(module, name, value)``: set a constant that operators read when they are traced.

  JAX caches the traces of jitted functions (the operators' inner ``jax.jit``, ``custom_jvp`` rules)
  by function and argument shapes, not by module constants: a constant patched after another test
  traced the same operator would be ignored silently. So the caches are cleared when the constant
  is set and again when the test ends (after ``monkeypatch`` restores it).
  """

  def patch(module, name, value):
    monkeypatch.setattr(module, name, value)
    jax.clear_caches()

  yield patch
  monkeypatch.undo()
  jax.clear_caches()


@pytest.fixture
def key():
  return jax.random.key(0)


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def tol(dtype) -> float:
  """A comparison tolerance for values computed in ``dtype``."""
  return 1e-10 if jnp.dtype(dtype) == jnp.float64 else 2e-5
