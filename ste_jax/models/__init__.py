"""Pairwise models (paper §4.1, Stage 1): Flax NNX logits and the marginal tournament.

The modules take keyword-only ``rngs``, default their ``param_dtype`` to float32 (float64 under
``jax_enable_x64``) and can be used as submodules of a user's own NNX model. Every model follows the
call protocol ``model(a, b, x=None) -> h`` with ``P(a > b | x) = sigmoid(h)``.
"""

from ._intransitive import IntransitiveLogit as IntransitiveLogit
from ._intransitive import IntransitiveParams as IntransitiveParams
from ._intransitive import init_intransitive_params as init_intransitive_params
from ._intransitive import intransitive_logits as intransitive_logits
from ._intransitive import intransitive_tournament as intransitive_tournament
from ._pairwise import BradleyTerryLogit as BradleyTerryLogit
from ._pairwise import PairwiseLogit as PairwiseLogit
from ._tournament import marginal_tournament as marginal_tournament
from ._tournament import pairwise_logits as pairwise_logits

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
