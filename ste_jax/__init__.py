"""ste_jax: Soft Tournament Equilibrium in JAX.

Set-valued cores (Top Cycle / Smith set, Uncovered Set) of pairwise-comparison tournaments and
their differentiable soft versions, following "Soft Tournament Equilibrium" (STE).

The top level holds the names most users need first: the STE operators (:func:`ste_scores`,
:func:`ste_scores_from_edges`, :class:`STEScores`), the hard cores (:func:`top_cycle`,
:func:`uncovered_set`), :func:`validate_tournament`, loading (:class:`Comparisons`,
:func:`load_comparisons`, :func:`from_dataframe`), the leaderboard and its verdicts
(:func:`leaderboard`, :func:`membership_verdicts`, :func:`suggest_pairs`), the pairwise models
(:class:`PairwiseLogit`, :class:`BradleyTerryLogit`, :class:`IntransitiveLogit`), :func:`fit`, and
the two error types (:class:`InputError` for bad data, :class:`OptionError` for bad options).
Everything else is reached through its subpackage: ``ops`` (kernels), ``exact`` (hard solutions),
``data`` (containers and loaders), ``stats`` (baselines, bootstrap, metrics, generators),
``evaluate`` (estimators, verdicts, diagnostics), ``models``, ``training``, ``plotting`` and
``benchmarking``.

``import ste_jax`` loads only what needs jax and numpy (``ops``, ``exact``, ``data``, ``stats``).
The parts that need Flax, Optax, tqdm or matplotlib (``evaluate``, ``models``, ``training``,
``plotting``, ``benchmarking``) are imported on first use of one of their names (PEP 562 module
``__getattr__``); ``from ste_jax import fit`` and ``dir(ste_jax)`` work as for any other name.
"""

import importlib as _importlib
import typing as _typing

from ste_jax import data as data
from ste_jax import exact as exact
from ste_jax import ops as ops
from ste_jax import stats as stats
from ste_jax._errors import InputError as InputError
from ste_jax._errors import OptionError as OptionError
from ste_jax._validation import validate_tournament as validate_tournament
from ste_jax.data import Comparisons as Comparisons
from ste_jax.data import from_dataframe as from_dataframe
from ste_jax.data import load_comparisons as load_comparisons
from ste_jax.exact import top_cycle as top_cycle
from ste_jax.exact import uncovered_set as uncovered_set
from ste_jax.ops import STEScores as STEScores
from ste_jax.ops import ste_scores as ste_scores
from ste_jax.ops import ste_scores_from_edges as ste_scores_from_edges

__version__ = "0.1.0"  # the one source: pyproject.toml reads it (tool.setuptools.dynamic)

# Public names whose modules import Flax, Optax or tqdm: loaded on first access.
_LAZY_NAMES = {
  "leaderboard": "ste_jax.evaluate",
  "membership_verdicts": "ste_jax.evaluate",
  "suggest_pairs": "ste_jax.evaluate",
  "BradleyTerryLogit": "ste_jax.models",
  "IntransitiveLogit": "ste_jax.models",
  "PairwiseLogit": "ste_jax.models",
  "fit": "ste_jax.training",
}
_LAZY_SUBMODULES = ("benchmarking", "evaluate", "models", "plotting", "training")

if _typing.TYPE_CHECKING:  # static analysers see the lazy names as ordinary imports
  from ste_jax import benchmarking as benchmarking
  from ste_jax import evaluate as evaluate
  from ste_jax import models as models
  from ste_jax import plotting as plotting
  from ste_jax import training as training
  from ste_jax.evaluate import leaderboard as leaderboard
  from ste_jax.evaluate import membership_verdicts as membership_verdicts
  from ste_jax.evaluate import suggest_pairs as suggest_pairs
  from ste_jax.models import BradleyTerryLogit as BradleyTerryLogit
  from ste_jax.models import IntransitiveLogit as IntransitiveLogit
  from ste_jax.models import PairwiseLogit as PairwiseLogit
  from ste_jax.training import fit as fit


def __getattr__(name: str) -> object:
  """Imports a lazy public name (or subpackage) on first access and caches it in the module."""
  if name in _LAZY_NAMES:
    value = getattr(_importlib.import_module(_LAZY_NAMES[name]), name)
  elif name in _LAZY_SUBMODULES:
    value = _importlib.import_module(f"{__name__}.{name}")
  else:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
  globals()[name] = value
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(_LAZY_NAMES) | set(_LAZY_SUBMODULES))


__all__ = [
  "BradleyTerryLogit",
  "Comparisons",
  "InputError",
  "IntransitiveLogit",
  "OptionError",
  "PairwiseLogit",
  "STEScores",
  "benchmarking",
  "data",
  "evaluate",
  "exact",
  "fit",
  "from_dataframe",
  "leaderboard",
  "load_comparisons",
  "membership_verdicts",
  "models",
  "ops",
  "plotting",
  "stats",
  "ste_scores",
  "ste_scores_from_edges",
  "suggest_pairs",
  "top_cycle",
  "training",
  "uncovered_set",
  "validate_tournament",
]
