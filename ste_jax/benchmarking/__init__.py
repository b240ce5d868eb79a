"""Reproducible experiments shipped with the package: the paper's planted-core benchmark.

``ste-jax planted`` and ``benchmarks/planted_core.py`` (a thin driver in a source checkout) both run
:func:`planted_core_main`. Not imported by ``import ste_jax``. The planted-core names need pandas,
tqdm, Flax and Optax (the STE-model rows), and matplotlib for the figures, so they are imported on
first use (PEP 562): ``machine_description`` (jax only, used by every script in ``benchmarks/``)
loads none of them.
"""

import importlib as _importlib
import typing as _typing

from ste_jax.benchmarking._machine import machine_description as machine_description

_LAZY_NAMES = {
  "PLANTED_CORE_FULL": ("ste_jax.benchmarking._planted_experiments", "FULL"),
  "PLANTED_CORE_QUICK": ("ste_jax.benchmarking._planted_experiments", "QUICK"),
  "PlantedCoreConfig": ("ste_jax.benchmarking._planted_experiments", "Config"),
  "PlantedCoreResult": ("ste_jax.benchmarking._planted_core", "PlantedCoreResult"),
  "planted_core_main": ("ste_jax.benchmarking._planted_core", "main"),
  "run_planted_core": ("ste_jax.benchmarking._planted_core", "run_planted_core"),
}

if _typing.TYPE_CHECKING:
  from ste_jax.benchmarking._planted_core import PlantedCoreResult as PlantedCoreResult
  from ste_jax.benchmarking._planted_core import main as planted_core_main
  from ste_jax.benchmarking._planted_core import run_planted_core as run_planted_core
  from ste_jax.benchmarking._planted_experiments import FULL as PLANTED_CORE_FULL
  from ste_jax.benchmarking._planted_experiments import QUICK as PLANTED_CORE_QUICK
  from ste_jax.benchmarking._planted_experiments import Config as PlantedCoreConfig


def __getattr__(name: str) -> object:
  if name not in _LAZY_NAMES:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
  module, attr = _LAZY_NAMES[name]
  value = getattr(_importlib.import_module(module), attr)
  globals()[name] = value
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(_LAZY_NAMES))


__all__ = [
  "PLANTED_CORE_FULL",
  "PLANTED_CORE_QUICK",
  "PlantedCoreConfig",
  "PlantedCoreResult",
  "machine_description",
  "planted_core_main",
  "run_planted_core",
]
