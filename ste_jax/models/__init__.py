"""Pairwise models (paper §4.1, Stage 1): Flax NNX logits and the marginal tournament.

The modules take keyword-only ``rngs``, default their ``param_dtype`` to float32 (float64 under
``jax_enable_x64``) and can be used as submodules of a user's own NNX model. Every model follows the
call protocol ``model(a, b, x=None) -> h`` with ``P(a > b | x) = sigmoid(h)``.
"""

from ._pairwise import BradleyTerryLogit as BradleyTerryLogit
from ._pairwise import PairwiseLogit as PairwiseLogit
from ._tournament import marginal_tournament as marginal_tournament
from ._tournament import pairwise_logits as pairwise_logits

__all__ = [
    "BradleyTerryLogit",
    "PairwiseLogit",
    "marginal_tournament",
    "pairwise_logits",
]
