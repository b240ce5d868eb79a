"""The native CPU cover kernels (ste_jax/ops/_native.py): values against the JAX kernels and float64
equations; the build at installation, the checks before loading, the fallbacks."""

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import ste_scores
from ste_jax.ops import _native, native_kernels, soft_cover_scores
from tests import oracles

_ROOT = pathlib.Path(__file__).resolve().parents[2]
_NATIVE_DIR = pathlib.Path(_native.__file__).resolve().parent / "_native"
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
  """Cover scores and the gradient of ``sum(W * cover)`` in ``D`` and ``gamma_c`` (float32, jit)."""
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
  """Values and gradients (in D and traced gamma_c; 0: the hard limit) of both kernels, float64."""
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
  # The temperature's gradient is a cancellation (divided by gamma_c): both kernels agree to its
  # rounding.
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


@needs_native
@pytest.mark.parametrize("name", ["generic", "avx2", "avx512"])
def test_every_vector_width_computes_the_same_values(name):
  """Each variant of the loops (chosen at run time) against the JAX kernels; unsupported: skip."""
  best = _native.variant()
  if not _native.select_variant(name):
    pytest.skip(f"this CPU or build has no {name} variant")
  try:
    rng = np.random.default_rng(7)
    D = jnp.asarray(edges(rng, 37, "ties"), jnp.float32)
    W = jnp.asarray(rng.normal(size=(37, 37)), jnp.float32)
    for g in (0.0, 0.01, 0.3):
      got = values_and_grads(D, jnp.float32(g), W, native=True)
      expect = values_and_grads(D, jnp.float32(g), W, native=False)
      np.testing.assert_allclose(got[0], expect[0], atol=2e-6)
      np.testing.assert_allclose(got[1][0], expect[1][0], atol=2e-5 * np.abs(expect[1][0]).max())
  finally:
    assert _native.select_variant(best)
  assert not _native.select_variant("sse9")


_NO_COMPILER_RUN = """
import json, sys
import jax, jax.numpy as jnp, numpy as np
from ste_jax.ops import _native, native_kernels, soft_cover_scores
rng = np.random.default_rng(1)
D = rng.uniform(size=(24, 24)); np.fill_diagonal(D, 0.0)
D = jnp.asarray(D, jnp.float32)
f = lambda D: soft_cover_scores(D, gamma_c=0.05)
values = []
for native in (True, False):
  with native_kernels(native):
    values.append(np.asarray(jax.jit(f)(D)))
    lowered = jax.jit(f).lower(D).as_text()
    values.append("ste_jax_cover_forward" in lowered)
print(json.dumps([*_native.native_kernels_status(), float(np.abs(values[0] - values[2]).max()),
                  values[1], values[3]]))
"""


def _compiler_on_path() -> bool:
  return any(shutil.which(name) for name in (os.environ.get("CXX") or "c++", "g++", "clang++"))


def test_installed_kernels_run_without_a_compiler_and_with_an_empty_cache(tmp_path):
  """The library built at installation loads in a process with no compiler on PATH and empty
  cache directories, runs (the lowered program calls it) and matches the JAX kernels; nothing is
  written to the caches."""
  if os.environ.get("STE_JAX_NATIVE") == "0":
    pytest.skip("STE_JAX_NATIVE=0")
  if not AVAILABLE and not _compiler_on_path():
    pytest.skip(f"installed without a C++ compiler: {DETAIL}")
  cache, empty_path = tmp_path / "cache", tmp_path / "bin"
  cache.mkdir()
  empty_path.mkdir()
  env = dict(
    os.environ,
    PATH=str(empty_path),
    CXX="",
    CC="",
    HOME=str(tmp_path),
    XDG_CACHE_HOME=str(cache),
    STE_JAX_CACHE_DIR=str(cache),
    JAX_PLATFORMS="cpu",
  )
  run = subprocess.run(
    [sys.executable, "-c", _NO_COMPILER_RUN],
    capture_output=True,
    text=True,
    env=env,
    timeout=300,
    cwd=tmp_path,
  )
  assert run.returncode == 0, run.stderr
  available, detail, difference, native_called, jax_called = json.loads(run.stdout)
  assert available, detail
  assert "variant" in detail and "cover_kernels.so" in detail
  assert native_called and not jax_called
  assert difference < 2e-6
  assert not list(cache.iterdir())


def _setup_module():
  spec = importlib.util.spec_from_file_location("ste_jax_setup", _ROOT / "setup.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)  # setup() runs only as __main__
  return module


def test_a_build_without_a_compiler_warns_once_and_leaves_no_library(tmp_path, monkeypatch, capsys):
  setup = _setup_module()
  target = tmp_path / "ste_jax" / "ops" / "_native" / "cover_kernels.so"
  target.parent.mkdir(parents=True)
  target.write_bytes(b"an older build")  # removed: never left beside newer code
  monkeypatch.setenv("CXX", "false")  # the compiler fails
  assert not setup.build_or_warn(str(target), str(_NATIVE_DIR / "cover_kernels.cc"))
  lines = capsys.readouterr().err.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("warning: ste_jax native CPU kernels not built")
  assert "false failed" in lines[0] and "the JAX kernels will run" in lines[0]
  assert not list(target.parent.iterdir())
  monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
  assert not setup.build_or_warn(str(target), str(_NATIVE_DIR / "cover_kernels.cc"))
  assert "no C++ compiler" in capsys.readouterr().err


@pytest.mark.slow
def test_pip_builds_a_wheel_without_a_compiler(tmp_path):
  """``pip wheel`` (build isolation, as ``pip install``) with a failing compiler succeeds, warns,
  and the wheel holds no library; the package then runs the JAX kernels."""
  env = dict(os.environ, CXX="false")
  run = subprocess.run(
    [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(_ROOT)],
    capture_output=True,
    text=True,
    env=env,
    timeout=900,
  )
  assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
  output = run.stdout + run.stderr
  assert output.count("warning: ste_jax native CPU kernels not built") == 1
  (wheel,) = tmp_path.glob("ste_jax-*.whl")
  names = zipfile.ZipFile(wheel).namelist()
  assert "ste_jax/ops/_native/cover_kernels.cc" in names
  assert not [name for name in names if name.endswith((".so", "cover_kernels.json"))]


def _copy_of_the_library(tmp_path) -> pathlib.Path:
  for name in ("cover_kernels.so", "cover_kernels.json", "cover_kernels.cc"):
    shutil.copyfile(_NATIVE_DIR / name, tmp_path / name)
  return tmp_path


@needs_native
@pytest.mark.parametrize("damage", ["truncated", "corrupt", "no manifest", "bad manifest", "stale"])
def test_a_damaged_library_is_never_loaded(tmp_path, damage):
  """Checked against the manifest before ``dlopen``: a truncated file (which ``dlopen`` could map
  and then fault on) or a flipped byte raises a clear error instead of crashing."""
  directory = _copy_of_the_library(tmp_path)
  _native.open_library(directory)  # the intact copy loads
  library = directory / "cover_kernels.so"
  data = library.read_bytes()
  # A new file, not the loaded one rewritten in place: truncating a file this process has mapped
  # would raise SIGBUS here later (at exit: pytest's status 135 after every test passed).
  library.unlink()
  library.write_bytes(data)
  if damage == "truncated":
    library.write_bytes(data[: len(data) // 2])
    match = "truncated"
  elif damage == "corrupt":
    library.write_bytes(data[:1000] + bytes([data[1000] ^ 1]) + data[1001:])
    match = "SHA-256 mismatch"
  elif damage == "no manifest":
    (directory / "cover_kernels.json").unlink()
    match = "not built at installation"
  elif damage == "bad manifest":
    (directory / "cover_kernels.json").write_text("{")
    match = "unreadable manifest"
  else:
    (directory / "cover_kernels.cc").write_text("// edited since the build\n")
    match = "stale"
  with pytest.raises(_native.NativeLibraryError, match=match):
    _native.open_library(directory)


@needs_native
def test_a_library_built_against_a_newer_jaxlib_is_not_loaded(tmp_path):
  directory = _copy_of_the_library(tmp_path)
  manifest = directory / "cover_kernels.json"
  record = json.loads(manifest.read_text())
  record["jaxlib_headers"] = "999.0.0"
  manifest.write_text(json.dumps(record))
  with pytest.raises(_native.NativeLibraryError, match="newer than the installed jaxlib"):
    _native.open_library(directory)


def test_a_missing_library_falls_back_to_the_jax_kernels_and_says_why(tmp_path):
  """A process whose package has no library (as after an install without a compiler) logs the
  reason once, reports it, and computes the scores with the JAX kernels."""
  code = (
    "import jax.numpy as jnp, pathlib\n"
    "from ste_jax.ops import _native\n"
    "_native._library, _native._reason = None, None\n"
    "try:\n"
    "  _native.open_library(pathlib.Path(%r))\n"
    "except _native.NativeLibraryError as error:\n"
    "  _native._reason = str(error)\n"
    "import ste_jax\n"
    "P = jnp.array([[0.5, 0.9, 0.2], [0.1, 0.5, 0.8], [0.8, 0.2, 0.5]])\n"
    "for tau in (0.1, 0.2):\n"
    "  s = ste_jax.ste_scores(P, tau=tau)\n"
    "print(_native.native_kernels_status()[0], float(s.uncovered.sum()) > 0)\n"
  ) % str(tmp_path)
  env = dict(os.environ, JAX_PLATFORMS="cpu")
  run = subprocess.run(
    [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
  )
  assert run.returncode == 0, run.stderr
  assert run.stdout.split() == ["False", "True"]
  assert run.stderr.count("native CPU cover kernels unavailable") == 1
  assert "not built at installation" in run.stderr


def test_disabled_by_the_environment():
  code = "from ste_jax.ops import native_kernels_status; print(native_kernels_status())"
  env = dict(os.environ, STE_JAX_NATIVE="0", JAX_PLATFORMS="cpu")
  run = subprocess.run(
    [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
  )
  assert run.returncode == 0, run.stderr
  assert run.stdout.strip() == "(False, 'disabled by STE_JAX_NATIVE=0')"


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


_LOAD_FROM = """
import os, pathlib, sys
import jax.numpy as jnp, numpy as np
from ste_jax.ops import _native  # imported with STE_JAX_NATIVE=0: nothing loaded yet
os.environ["STE_JAX_NATIVE"] = "1"
_native._DIRECTORY = pathlib.Path(sys.argv[1])
_native._library, _native._reason = _native._load()
import ste_jax
P = jnp.asarray([[0.5, 0.9, 0.2, 0.6], [0.1, 0.5, 0.8, 0.3], [0.8, 0.2, 0.5, 0.7],
                 [0.4, 0.7, 0.3, 0.5]], jnp.float32)
for tau in (0.1, 0.2, 0.3):
  s = ste_jax.ste_scores(P, tau=tau)
print(_native.native_kernels_status()[0], bool(np.all(np.isfinite(np.asarray(s.uncovered)))))
"""


@needs_native
@pytest.mark.parametrize("damage", ["intact", "truncated", "truncated to a page", "zero bytes"])
def test_the_next_load_of_a_damaged_library_falls_back_with_one_warning(tmp_path, damage):
  """A truncated library (a full disk, an interrupted copy) used to kill every later run with
  SIGBUS once ``dlopen`` mapped it. The loader, pointed at a damaged copy in a subprocess (so
  that a crash could not take pytest down), falls back to the JAX kernels with one warning naming
  the file; the intact copy loads and runs."""
  directory = _copy_of_the_library(tmp_path)
  library = directory / "cover_kernels.so"
  data = library.read_bytes()
  keep = {"intact": len(data), "truncated": len(data) * 3 // 4, "truncated to a page": 4096}
  library.write_bytes(data[: keep.get(damage, 0)])
  env = dict(os.environ, JAX_PLATFORMS="cpu", STE_JAX_NATIVE="0")
  run = subprocess.run(
    [sys.executable, "-c", _LOAD_FROM, str(directory)],
    capture_output=True,
    text=True,
    env=env,
    timeout=300,
  )
  assert run.returncode == 0, (run.returncode, run.stderr[-2000:])  # SIGBUS: -7
  warnings = run.stderr.count("native CPU cover kernels unavailable")
  if damage == "intact":
    assert run.stdout.split() == ["True", "True"]
    assert warnings == 0
  else:
    assert run.stdout.split() == ["False", "True"]
    assert warnings == 1
    assert str(library) in run.stderr and "truncated" in run.stderr
