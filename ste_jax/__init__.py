"""ste_jax: Soft Tournament Equilibrium in JAX.

Set-valued cores (Top Cycle / Smith set, Uncovered Set) of pairwise-comparison tournaments and
their differentiable soft versions, following "Soft Tournament Equilibrium" (STE).
"""

from ste_jax._validation import validate_tournament as validate_tournament
from ste_jax.exact import condorcet_winner as condorcet_winner
from ste_jax.exact import copeland_set as copeland_set
from ste_jax.exact import majority_tournament as majority_tournament
from ste_jax.exact import top_cycle as top_cycle
from ste_jax.exact import uncovered_set as uncovered_set
from ste_jax.ops import STEScores as STEScores
from ste_jax.ops import max_min_product as max_min_product
from ste_jax.ops import normalized_smax as normalized_smax
from ste_jax.ops import normalized_softmin as normalized_softmin
from ste_jax.ops import soft_cover_scores as soft_cover_scores
from ste_jax.ops import soft_majority_edges as soft_majority_edges
from ste_jax.ops import soft_reachability as soft_reachability
from ste_jax.ops import soft_top_cycle_score as soft_top_cycle_score
from ste_jax.ops import soft_uncovered_score as soft_uncovered_score
from ste_jax.ops import ste_scores as ste_scores
from ste_jax.ops import ste_scores_from_edges as ste_scores_from_edges

__version__ = "0.1.0"

__all__ = [
    "STEScores",
    "condorcet_winner",
    "copeland_set",
    "majority_tournament",
    "max_min_product",
    "normalized_smax",
    "normalized_softmin",
    "soft_cover_scores",
    "soft_majority_edges",
    "soft_reachability",
    "soft_top_cycle_score",
    "soft_uncovered_score",
    "ste_scores",
    "ste_scores_from_edges",
    "top_cycle",
    "uncovered_set",
    "validate_tournament",
]
