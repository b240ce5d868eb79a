"""Pairwise models (paper §4.1, Stage 1): Flax NNX logits and the marginal tournament.

The modules take keyword-only ``rngs``, default their ``param_dtype`` to float32 (float64 under
``jax_enable_x64``) and can be used as submodules of a user's own NNX model. Every model follows the
call protocol ``model(a, b, x=None) -> h`` with ``P(a > b | x) = sigmoid(h)``.
"""

import importlib as _importlib
import typing as _typing

from ._intransitive import IntransitiveParams as IntransitiveParams
from ._intransitive import init_intransitive_params as init_intransitive_params
from ._intransitive import intransitive_logits as intransitive_logits
from ._intransitive import intransitive_tournament as intransitive_tournament
from ._tournament import marginal_tournament as marginal_tournament
from ._tournament import pairwise_logits as pairwise_logits

# The NNX modules import Flax: loaded on first access, so that the pure functions above (the model
# estimator's, the CLI's) do not pay for it.
_NNX_MODULES = ("BradleyTerryLogit", "IntransitiveLogit", "PairwiseLogit")

if _typing.TYPE_CHECKING:  # static analysers see the lazy names as ordinary imports
  from ._pairwise import BradleyTerryLogit as BradleyTerryLogit
  from ._pairwise import IntransitiveLogit as IntransitiveLogit
  from ._pairwise import PairwiseLogit as PairwiseLogit


def __getattr__(name: str) -> object:
  """Imports an NNX module class on first access and caches it in the package."""
  if name not in _NNX_MODULES:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
  value = getattr(_importlib.import_module(f"{__name__}._pairwise"), name)
  globals()[name] = value
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(_NNX_MODULES))


__all__ = [
  "BradleyTerryLogit",
  "IntransitiveLogit",
  "IntransitiveParams",
  "PairwiseLogit",
  "init_intransitive_params",
  "intransitive_logits",
  "intransitive_tournament",
  "marginal_tournament",
  "pairwise_logits",
]
