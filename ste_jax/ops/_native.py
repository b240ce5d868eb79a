"""Native CPU kernels of the soft cover: built from C++ at first use, called through ``jax.ffi``.

The soft cover evaluates one exponential per triple ``(c, a, b)`` in its value and one more in its
reverse pass. XLA:CPU computes them at about 2.4 G exp/s on the 2-core EPYC VM; the loops of
``_native/cover_kernels.cc`` (vectorized polynomial exponentials, OpenMP over rows ``c``) at 6.2 G
exp/s, 2.6x (``benchmarks/exp_rate.py``); ``ste_scores``' fwd+bwd ran 1.8x faster at n = 1000 and
2.1x at n = 2000 than with the JAX kernels (``benchmarks/operators.py --xla-kernels``,
``benchmarks/RESULTS.md``). They are typed XLA FFI handlers that ``jax.ffi.ffi_call``
runs inside compiled programs; :mod:`ste_jax.ops._cover_kernels` calls them for float32 tournaments on
the CPU (``lax.platform_dependent``: other backends, float64 and the hard kernels run the JAX
kernels, which compute the same values).

Build: the first time a kernel is traced, the source is compiled with the C++ compiler of ``$CXX``
(else ``c++``, ``g++`` or ``clang++``) against the XLA FFI headers of the installed jaxlib
(``jax.ffi.include_dir()``), with ``-O3 -march=native`` and OpenMP where the compiler has it, into
a cache directory (``$STE_JAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/ste_jax`` or ``~/.cache/ste_jax``,
or a directory under the system's temporary one where those are not writable),
under a name that hashes the source, the compiler and its flags, the jaxlib version and the CPU's description,
so a machine never loads a library built for another CPU or jaxlib. A build takes a few seconds
once per machine. Where it fails (no compiler, no headers) the reason is logged once (logger
``ste_jax``), :func:`native_kernels_status` reports it, and the JAX kernels run instead.

``STE_JAX_NATIVE=0`` in the environment turns the native kernels off for the process;
:func:`native_kernels` turns them off or on for the computations traced in a ``with`` block.
"""

import contextlib
import functools
import hashlib
import importlib.resources
import logging
import os
from pathlib import Path
import platform
import shutil
import subprocess
import tempfile
from typing import Iterator

from ste_jax.ops._trace_option import trace_option

_logger = logging.getLogger("ste_jax")

_SOURCE = "cover_kernels.cc"
# Flags of every build (OpenMP is added where the compiler has it); part of the cache key.
_FLAGS = ("-O3", "-march=native", "-std=c++17", "-fPIC", "-shared")
_TARGETS = {
  "ste_jax_cover_forward": "SteJaxCoverForward",
  "ste_jax_cover_backward": "SteJaxCoverBackward",
}

# "on" or "off", read while a computation is traced (part of JAX's cache keys where JAX supports
# it: :mod:`ste_jax.ops._trace_option`).
_current, _set = trace_option("ste_jax_native_kernels", "on")


@contextlib.contextmanager
def native_kernels(enabled: bool) -> Iterator[None]:
  """Context manager: whether the soft cover runs its native CPU kernels in computations traced inside.

  Args:
    enabled: ``False`` runs the JAX kernels on every backend (e.g. to compare both); ``True`` (the
      default outside any block) runs the native kernels for float32 tournaments on the CPU where
      they could be built (:func:`native_kernels_status`).

  Like :func:`~ste_jax.ops.batching_mode`, the setting is read when a function is traced.

  Examples:
    >>> import jax.numpy as jnp
    >>> import ste_jax
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])
    >>> with ste_jax.ops.native_kernels(False):  # the JAX kernels, on any backend
    ...   s = ste_jax.ste_scores(P, tau=0.1)
    >>> s.uncovered.shape
    (3,)
  """
  if not isinstance(enabled, bool):
    raise TypeError(f"enabled must be a bool, got {enabled!r}.")
  with _set("on" if enabled else "off"):
    yield


def native_kernels_status() -> tuple[bool, str]:
  """``(available, detail)``: whether the native CPU kernels are built and registered, and where or why not.

  Builds them on the first call (see the module docstring); ``detail`` is the library's path, or
  the reason they are unavailable.
  """
  return _load()


def current_native_kernels() -> str:
  """``"on"`` or ``"off"``: the setting of the innermost enclosing :func:`native_kernels` block."""
  return _current()


def use_native(dtype) -> bool:
  """Whether a kernel traced now for ``dtype`` should call the native kernels (on the CPU)."""
  import numpy as np

  return np.dtype(dtype) == np.float32 and _current() == "on" and _load()[0]


def _cache_dir() -> Path:
  """``$STE_JAX_CACHE_DIR``, else the user's cache directory, else (not writable) a temporary one."""
  explicit = os.environ.get("STE_JAX_CACHE_DIR")
  if explicit:
    return Path(explicit)
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
  user = Path(base) / "ste_jax"
  try:
    user.mkdir(parents=True, exist_ok=True)
    if os.access(user, os.W_OK):
      return user
  except OSError:
    pass
  return Path(tempfile.gettempdir()) / f"ste_jax-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def _cpu_description() -> str:
  """The CPU model and feature flags (Linux), else the platform's processor string."""
  try:
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
      lines = [
        line for line in f if line.startswith(("model name", "flags", "Features", "CPU part"))
      ]
    return "".join(sorted(set(lines)))
  except OSError:
    return platform.processor() + platform.machine()


def _compiler() -> str | None:
  for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
    if name and shutil.which(name):
      return shutil.which(name)
  return None


def _build(source: bytes, compiler: str, include_dir: str, target: Path) -> None:
  """Compiles ``source`` into the shared library ``target`` (written to a temporary file, then renamed)."""
  base = [compiler, *_FLAGS, "-isystem", include_dir]
  with tempfile.TemporaryDirectory() as tmp:
    src = Path(tmp) / _SOURCE
    src.write_bytes(source)
    out = Path(tmp) / "lib.so"
    errors = []
    for flags in (["-fopenmp"], []):  # without OpenMP where the compiler lacks it (one thread)
      run = subprocess.run(
        base + flags + [str(src), "-o", str(out)], capture_output=True, text=True
      )
      if run.returncode == 0:
        break
      errors.append(run.stderr.strip()[-2000:])
    else:
      raise RuntimeError("compilation failed: " + "\n".join(errors))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(out, partial)
    os.replace(partial, target)  # atomic: concurrent processes never load a half-written file


def built_library() -> Path:
  """The path of the compiled kernels for this machine, building them if the cache lacks them.

  Raises:
    RuntimeError: no C++ compiler, or the compilation failed (with the compiler's message).
  """
  import jax
  import jaxlib

  compiler = _compiler()
  if compiler is None:
    raise RuntimeError("no C++ compiler found ($CXX, c++, g++, clang++)")
  source = importlib.resources.files("ste_jax.ops").joinpath("_native", _SOURCE).read_bytes()
  key = hashlib.sha256()
  for part in (
    source,
    compiler.encode(),
    " ".join(_FLAGS).encode(),
    jaxlib.__version__.encode(),
    _cpu_description().encode(),
  ):
    key.update(part)
    key.update(b"\0")
  target = _cache_dir() / f"cover_kernels-{key.hexdigest()[:20]}.so"
  if not target.exists():
    _build(source, compiler, jax.ffi.include_dir(), target)
  return target


@functools.lru_cache(maxsize=None)
def _load() -> tuple[bool, str]:
  """Builds (once per machine) and registers the FFI targets (once per process); ``(available, path or reason)``."""
  if os.environ.get("STE_JAX_NATIVE", "1") == "0":
    return False, "disabled by STE_JAX_NATIVE=0"
  try:
    import ctypes

    import jax

    target = built_library()
    library = ctypes.cdll.LoadLibrary(str(target))
    for name, symbol in _TARGETS.items():
      jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(library, symbol)), platform="cpu")
    return True, str(target)
  except Exception as error:  # any failure leaves the JAX kernels in place
    reason = f"{type(error).__name__}: {error}"
    _logger.warning(
      "ste_jax: native CPU cover kernels unavailable, using the JAX kernels (%s)", reason
    )
    return False, reason


def _call_pair(target: str, D, *args, min_gamma_shift_by_one: float):
  """Calls the FFI ``target`` on ``(D, *args)``: two outputs shaped like ``D``; batches item by item."""
  import jax
  import numpy as np

  out = jax.ShapeDtypeStruct(D.shape, D.dtype)
  call = jax.ffi.ffi_call(target, (out, out), vmap_method="sequential")
  return call(D, *args, min_gamma_shift_by_one=np.float32(min_gamma_shift_by_one))


def cover_forward(D, Y, g, min_gamma_shift_by_one: float):
  """``(S, aux)`` of the soft cover's value kernel, each ``(n, n)`` ``[c, a]`` (float32, CPU only).

  Args:
    D: ``(n, n)`` float32 with a zero diagonal.
    Y: ``(n, n)`` float32, ``1 - D`` with a zero diagonal.
    g: scalar float32 temperature (``<= 0``: the hard limit).
    min_gamma_shift_by_one: the temperature from which every exponent is shifted by ``1``.
  """
  return _call_pair("ste_jax_cover_forward", D, Y, g, min_gamma_shift_by_one=min_gamma_shift_by_one)


def cover_backward(D, Y, S, scale, g, min_gamma_shift_by_one: float):
  """``(d_c, d_a)`` of the soft cover's reverse pass, each ``(n, n)`` (float32, CPU only).

  ``d_c[c, b] = -sum_a G D[a, b]`` and ``d_a[a, b] = sum_c G Y[c, b]`` with ``G = exp((D[a, b]
  Y[c, b] - S[c, a]) / g) scale[c, a]``; arguments as :func:`cover_forward`, ``S`` and ``scale``
  ``(n, n)`` ``[c, a]``.
  """
  return _call_pair(
    "ste_jax_cover_backward", D, Y, S, scale, g, min_gamma_shift_by_one=min_gamma_shift_by_one
  )
