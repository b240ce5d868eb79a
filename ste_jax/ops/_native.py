"""Native CPU kernels of the soft cover: C++ built at installation, called through ``jax.ffi``.

The soft cover evaluates one exponential per triple ``(c, a, b)`` in its value and one more in its
reverse pass. ``_native/cover_kernels.cc`` computes them in vectorized loops with a polynomial
exponential, on XLA's CPU thread pool. Its two typed XLA FFI handlers are run by
``jax.ffi.ffi_call`` inside compiled programs: :mod:`ste_jax.ops._cover_kernels` calls them for
float32 tournaments on the CPU (``lax.platform_dependent``: other backends, float64 and the hard
kernels run the JAX kernels, which compute the same values).

Build: ``setup.py`` compiles the library when the package is built or installed (``pip install
.``, ``pip install -e .``), for the baseline instruction set of the architecture with AVX2 and
AVX-512 variants chosen at run time on x86-64, into ``_native/cover_kernels.so`` beside a manifest
``_native/cover_kernels.json`` (its size and SHA-256). Nothing is compiled at run time. Where the
build failed (no C++ compiler, Windows) the installation went on without the library (``pip
install -v`` shows the warning), and the JAX kernels run. After editing the C++ source, rebuild
with ``pip install -e .`` or ``python setup.py build_ext --inplace``.

Loading: importing this module checks the manifest (the library's size and SHA-256, the source
it was built from, the jaxlib whose FFI headers it was built against, not newer than the
installed one) before ``dlopen``, so a missing, truncated, corrupt or stale library is never
loaded; then it registers the FFI targets for the CPU platform. Where that fails,
:func:`native_kernels_status` gives the reason, which is also logged once (logger ``ste_jax``) by
the first float32 computation that runs the JAX kernels in its place.

``STE_JAX_NATIVE=0`` in the environment at import turns the native kernels off for the process;
:func:`native_kernels` turns them off or on for the computations traced in a ``with`` block.
"""

import contextlib
import ctypes
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Iterator

import jax
import jaxlib
import numpy as np

from ste_jax.ops._trace_option import trace_option

_logger = logging.getLogger("ste_jax")

_DIRECTORY = Path(__file__).resolve().parent / "_native"
_LIBRARY = "cover_kernels.so"
_MANIFEST = "cover_kernels.json"
_SOURCE = "cover_kernels.cc"
_TARGETS = {
  "ste_jax_cover_forward": "SteJaxCoverForward",
  "ste_jax_cover_backward": "SteJaxCoverBackward",
}
_REBUILD = "reinstall ste_jax with a C++ compiler on PATH (pip install -v .)"

# "on" or "off", read while a computation is traced (part of JAX's cache keys where JAX supports
# it: :mod:`ste_jax.ops._trace_option`).
_current, _set = trace_option("ste_jax_native_kernels", "on")


class NativeLibraryError(RuntimeError):
  """The native library cannot be loaded: missing, corrupt, stale or built for another jaxlib."""


@contextlib.contextmanager
def native_kernels(enabled: bool) -> Iterator[None]:
  """Context manager: whether computations traced inside run the native CPU cover kernels.

  Args:
    enabled: ``False`` runs the JAX kernels on every backend (e.g. to compare both); ``True`` (the
      default outside any block) runs the native kernels for float32 tournaments on the CPU where
      they were built and load (:func:`native_kernels_status`).

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
  """Whether the native CPU kernels are loaded and registered, and which ones run or why not.

  Returns:
    ``(available, detail)``: ``detail`` names the library and the variant of its loops that runs
    on this CPU (``"avx512"``, ``"avx2"`` or ``"generic"``), or says why the JAX kernels run
    instead (not built at installation, a corrupt or stale library, ``STE_JAX_NATIVE=0``).

  Examples:
    >>> import ste_jax
    >>> available, detail = ste_jax.ops.native_kernels_status()
    >>> isinstance(available, bool) and isinstance(detail, str)
    True
  """
  if _library is None:
    return False, _reason
  return True, f"{_DIRECTORY / _LIBRARY} ({variant()} variant)"


def current_native_kernels() -> str:
  """``"on"`` or ``"off"``: the setting of the innermost enclosing :func:`native_kernels` block."""
  return _current()


_reason_logged = False


def use_native(dtype: np.dtype | type) -> bool:
  """Whether a kernel traced now for ``dtype`` should call the native kernels (on the CPU)."""
  global _reason_logged
  if np.dtype(dtype) != np.float32 or _current() != "on":
    return False
  if _library is None and not _reason_logged:
    _reason_logged = True
    _logger.warning(
      "ste_jax: native CPU cover kernels unavailable, using the JAX kernels (%s)", _reason
    )
  return _library is not None


def variant() -> str:
  """The variant of the native loops that runs: ``"avx512"``, ``"avx2"`` or ``"generic"``."""
  if _library is None:
    raise NativeLibraryError(_reason)
  return _library.SteJaxCoverIsa().decode()


def select_variant(name: str) -> bool:
  """Runs the variant ``name`` from the next call on; ``False`` where this CPU or build lacks it.

  For tests and benchmarks (each variant must compute the same values); the best variant the CPU
  supports is chosen at load.
  """
  if _library is None:
    raise NativeLibraryError(_reason)
  return bool(_library.SteJaxCoverSelectIsa(name.encode()))


def _version(text: str) -> tuple[int, ...]:
  parts = []
  for part in text.split("."):
    digits = "".join(ch for ch in part if ch.isdigit())
    if not digits:
      break
    parts.append(int(digits))
  return tuple(parts)


def open_library(directory: Path) -> ctypes.CDLL:
  """Checks ``directory``'s library against its manifest, then loads it (not yet registered).

  Raises:
    NativeLibraryError: the library or its manifest is missing, its size or SHA-256 differ from
      the manifest's (truncated or corrupt: never passed to ``dlopen``), it was built from another
      source or against a newer jaxlib, or ``dlopen`` fails.
  """
  library, manifest = directory / _LIBRARY, directory / _MANIFEST
  if not manifest.exists():
    raise NativeLibraryError(f"not built at installation: no {manifest}; {_REBUILD}")
  try:
    record = json.loads(manifest.read_text(encoding="utf-8"))
    size, digest = int(record["size"]), str(record["sha256"])
  except (OSError, ValueError, KeyError, TypeError) as error:
    raise NativeLibraryError(f"unreadable manifest {manifest} ({error}); {_REBUILD}") from None
  try:
    data = library.read_bytes()
  except OSError as error:
    raise NativeLibraryError(f"cannot read {library} ({error}); {_REBUILD}") from None
  if len(data) != size:
    raise NativeLibraryError(
      f"{library} has {len(data)} bytes, {size} at build time (truncated?); {_REBUILD}"
    )
  if hashlib.sha256(data).hexdigest() != digest:
    raise NativeLibraryError(f"{library} differs from its build (SHA-256 mismatch); {_REBUILD}")
  source = directory / _SOURCE
  if source.exists() and hashlib.sha256(source.read_bytes()).hexdigest() != record.get(
    "source_sha256"
  ):
    raise NativeLibraryError(
      f"{library} is stale: {source} changed since the build; rebuild with `pip install -e .` "
      "or `python setup.py build_ext --inplace`"
    )
  headers = str(record.get("jaxlib_headers", ""))
  if _version(headers) > _version(jaxlib.__version__):
    raise NativeLibraryError(
      f"{library} was built against the FFI headers of jaxlib {headers}, newer than the installed "
      f"jaxlib {jaxlib.__version__}; {_REBUILD}"
    )
  try:
    loaded = ctypes.CDLL(str(library))
    loaded.SteJaxCoverIsa.restype = ctypes.c_char_p
    loaded.SteJaxCoverSelectIsa.argtypes = [ctypes.c_char_p]
    loaded.SteJaxCoverSelectIsa.restype = ctypes.c_int
    for symbol in _TARGETS.values():
      getattr(loaded, symbol)
  except (OSError, AttributeError) as error:
    raise NativeLibraryError(f"cannot load {library} ({error}); {_REBUILD}") from None
  return loaded


def _load() -> tuple[ctypes.CDLL | None, str]:
  """Loads and registers the installed library: ``(library, "")``, or ``(None, reason)``."""
  if os.environ.get("STE_JAX_NATIVE", "1") == "0":
    return None, "disabled by STE_JAX_NATIVE=0"
  try:
    library = open_library(_DIRECTORY)
    for name, symbol in _TARGETS.items():
      jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(library, symbol)), platform="cpu")
  except Exception as error:  # any failure leaves the JAX kernels in place
    reason = str(error) if isinstance(error, NativeLibraryError) else repr(error)
    return None, reason
  return library, ""


_library, _reason = _load()


def _call_pair(target: str, D: jax.Array, *args: jax.Array, min_gamma_shift_by_one: float):
  """Calls the FFI ``target`` on ``(D, *args)``: two outputs shaped like ``D``; vmap: a loop."""
  out = jax.ShapeDtypeStruct(D.shape, D.dtype)
  call = jax.ffi.ffi_call(target, (out, out), vmap_method="sequential")
  return call(D, *args, min_gamma_shift_by_one=np.float32(min_gamma_shift_by_one))


def cover_forward(
  D: jax.Array, Y: jax.Array, g: jax.Array, min_gamma_shift_by_one: float
) -> tuple[jax.Array, jax.Array]:
  """``(S, aux)`` of the soft cover's value kernel, each ``(n, n)`` ``[c, a]`` (float32, CPU only).

  Args:
    D: ``(n, n)`` float32 with a zero diagonal.
    Y: ``(n, n)`` float32, ``1 - D`` with a zero diagonal.
    g: scalar float32 temperature (``<= 0``: the hard limit).
    min_gamma_shift_by_one: the temperature from which every exponent is shifted by ``1``.

  Returns:
    ``S``, each pair's shift (``1``, or ``max_b D[a, b] Y[c, b]``), and ``aux = log sum_b exp((D[a,
    b] Y[c, b] - S) / g)`` over the witnesses ``b`` other than ``a`` and ``c``.
  """
  return _call_pair("ste_jax_cover_forward", D, Y, g, min_gamma_shift_by_one=min_gamma_shift_by_one)


def cover_backward(
  D: jax.Array,
  Y: jax.Array,
  S: jax.Array,
  scale: jax.Array,
  g: jax.Array,
  min_gamma_shift_by_one: float,
) -> tuple[jax.Array, jax.Array]:
  """``(d_c, d_a)`` of the soft cover's reverse pass, each ``(n, n)`` (float32, CPU only).

  ``d_c[c, b] = -sum_a G D[a, b]`` and ``d_a[a, b] = sum_c G Y[c, b]`` with ``G = exp((D[a, b]
  Y[c, b] - S[c, a]) / g) scale[c, a]``.

  Args:
    D, Y, g, min_gamma_shift_by_one: as :func:`cover_forward`.
    S: ``(n, n)`` ``[c, a]``, the shifts :func:`cover_forward` returned.
    scale: ``(n, n)`` ``[c, a]``, each pair's cotangent over its normalizer.

  Returns:
    ``d_c`` and ``d_a``, each ``(n, n)``, the two parts of the cotangent of ``D``.
  """
  return _call_pair(
    "ste_jax_cover_backward", D, Y, S, scale, g, min_gamma_shift_by_one=min_gamma_shift_by_one
  )
