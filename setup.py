"""Builds ste_jax's optional native CPU kernels; everything else is declared in pyproject.toml.

``ste_jax/ops/_native/cover_kernels.cc`` is compiled, when the package is built or installed
(``pip install .``, ``pip install -e .``, a wheel), into ``ste_jax/ops/_native/cover_kernels.so``
beside a manifest ``cover_kernels.json`` (the library's size and SHA-256, the source's SHA-256, the
FFI headers' version) that ``ste_jax/ops/_native.py`` checks before it loads the library. The
library is a plain shared library, not a Python extension module: it is loaded with ``ctypes`` and
its XLA FFI handlers are registered with ``jax.ffi``, so it depends on neither the Python version
nor the Python ABI.

Compiler: ``$CXX``, else the C++ compiler Python was built with, else ``c++``. Flags: ``-O3
-std=c++17``, and on x86-64 ``-march=x86-64 -mtune=generic`` (the baseline instruction set; the
source carries AVX2 and AVX-512 variants of its loops and picks one at run time, so one build runs
on any x86-64 CPU). The extension is optional: where the build fails (no compiler, no FFI headers,
Windows) one warning line is printed and the installation succeeds; the JAX kernels then run.
``pip`` shows a build's output only with ``-v``; ``ste_jax.ops.native_kernels_status()`` reports
the reason at run time.

FFI headers: those of the ``jaxlib`` in the build environment (``[build-system] requires`` in
pyproject.toml; ``jax.ffi.include_dir()`` is the same directory). The XLA FFI is a C ABI whose
structures carry their sizes and whose API is versioned (``XLA_FFI_API_MAJOR``/``MINOR`` in
``xla/ffi/api/c_api.h``): XLA keeps accepting handlers built against older headers of the same
major version (for at least 12 months, says that header), and a handler checks the sizes of what
the runtime hands it, so a library built against one jaxlib runs with a newer one at run time; a
mismatch is an error returned by the call, not a crash.
"""

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
  from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1: only where tests import this file outside a build
  from setuptools import Command as bdist_wheel

_SOURCE = os.path.join("ste_jax", "ops", "_native", "cover_kernels.cc")
_NAME = "ste_jax.ops._native.cover_kernels"


def _sha256(path: str) -> str:
  with open(path, "rb") as f:
    return hashlib.sha256(f.read()).hexdigest()


def _manifest(library: str) -> str:
  return os.path.splitext(library)[0] + ".json"


def _compiler() -> list[str]:
  """The C++ compiler's command: ``$CXX``, else Python's build-time ``CXX``, else ``c++``."""
  command = os.environ.get("CXX") or sysconfig.get_config_var("CXX") or "c++"
  words = shlex.split(command)
  if not words or shutil.which(words[0]) is None:
    raise RuntimeError(f"no C++ compiler: {command!r} is not on PATH (set CXX)")
  return words


def _ffi_include_dir() -> tuple[str, str]:
  """``(include directory, jaxlib version)`` of the XLA FFI headers in the build environment."""
  spec = importlib.util.find_spec("jaxlib")
  if spec is None or not spec.submodule_search_locations:
    raise RuntimeError("jaxlib (the XLA FFI headers) is not installed in the build environment")
  include = os.path.join(list(spec.submodule_search_locations)[0], "include")
  if not os.path.exists(os.path.join(include, "xla", "ffi", "api", "ffi.h")):
    raise RuntimeError(f"no XLA FFI headers under {include}")
  return include, importlib.metadata.version("jaxlib")


def _flags() -> list[str]:
  flags = ["-O3", "-std=c++17", "-fPIC", "-shared", "-Wno-psabi"]
  if platform.machine().lower() in ("x86_64", "amd64"):
    flags += ["-march=x86-64", "-mtune=generic"]  # portable; wider variants dispatch at run time
  return flags


class OptionalNativeBuild(build_ext):
  """Compiles the kernels with the C++ compiler directly; a failure warns and installs without."""

  def get_ext_filename(self, fullname: str) -> str:
    return os.path.join(*fullname.split(".")) + ".so"  # no Python ABI tag: not a Python module

  def get_outputs(self) -> list[str]:
    outputs = super().get_outputs()
    return outputs + [_manifest(path) for path in outputs]

  def copy_extensions_to_source(self) -> None:  # in-place and editable builds
    build_py = self.get_finalized_command("build_py")
    for ext in self.extensions:
      inplace, regular = self._get_inplace_equivalent(build_py, ext)
      for path, built in ((inplace, regular), (_manifest(inplace), _manifest(regular))):
        if os.path.exists(built):
          # A new file renamed over the old one: a process that has the old library mapped
          # keeps it intact (writing into it would make that process fault).
          partial = f"{path}.{os.getpid()}.tmp"
          shutil.copyfile(built, partial)
          os.replace(partial, path)
        elif os.path.exists(path):
          os.remove(path)  # a failed build leaves no older library in the source tree

  def build_extension(self, ext: Extension) -> None:
    build_or_warn(self.get_ext_fullpath(ext.name), ext.sources[0])


class PlatformWheel(bdist_wheel):
  """Tags the wheel ``py3-none-<platform>``: the library does not use the Python ABI."""

  def get_tag(self) -> tuple[str, str, str]:
    _, _, platform_tag = super().get_tag()
    return "py3", "none", platform_tag


def build_library(target: str, source: str = _SOURCE) -> dict:
  """Compiles ``source`` into the shared library ``target`` and writes its manifest beside it.

  Returns:
    The manifest's record. Raises ``RuntimeError`` (no compiler, no headers, a failed build).
  """
  if sys.platform == "win32":
    raise RuntimeError("the kernels use GCC/Clang vector extensions; not built on Windows")
  include, jaxlib_version = _ffi_include_dir()
  command = [*_compiler(), *_flags(), "-isystem", include, source, "-o", target]
  os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
  run = subprocess.run(command, capture_output=True, text=True)
  if run.returncode != 0:
    lines = (run.stderr or run.stdout).strip().splitlines()
    first_error = next((line for line in lines if "error" in line), lines[-1] if lines else "")
    raise RuntimeError(f"{command[0]} failed (exit {run.returncode}): {first_error}")
  with open(os.path.join(include, "xla", "ffi", "api", "c_api.h"), encoding="utf-8") as f:
    api = dict(re.findall(r"#define XLA_FFI_API_(MAJOR|MINOR) (\d+)", f.read()))
  record = {
    "library": os.path.basename(target),
    "size": os.path.getsize(target),
    "sha256": _sha256(target),
    "source_sha256": _sha256(source),
    "jaxlib_headers": jaxlib_version,
    "ffi_api": f"{api.get('MAJOR', '?')}.{api.get('MINOR', '?')}",
  }
  with open(_manifest(target), "w", encoding="utf-8") as f:
    json.dump(record, f, indent=1)
  return record


def build_or_warn(target: str, source: str = _SOURCE) -> bool:
  """:func:`build_library`, or one warning line on stderr and no library where it fails."""
  for stale in (target, _manifest(target)):  # never leave an older library beside newer code
    if os.path.exists(stale):
      os.remove(stale)
  try:
    build_library(target, source)
    return True
  except Exception as error:  # optional: install without the kernels
    for partial in (target, _manifest(target)):
      if os.path.exists(partial):
        os.remove(partial)
    reason = " ".join(str(error).split())
    print(
      f"warning: ste_jax native CPU kernels not built ({reason}); the JAX kernels will run",
      file=sys.stderr,
    )
    return False


if __name__ == "__main__":  # as setuptools runs it; tests import build_or_warn
  setup(
    ext_modules=[Extension(_NAME, sources=[_SOURCE], optional=True)],
    cmdclass={"build_ext": OptionalNativeBuild, "bdist_wheel": PlatformWheel},
  )
