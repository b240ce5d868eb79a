"""Hard tournament solutions (independent of the soft operators in :mod:`ste_jax.ops`), the same
solutions of arbitrary (complete or partial) Boolean relations, and their witnesses (majority paths
and covers)."""

from ste_jax.exact._relations import condensation_tiers as condensation_tiers
from ste_jax.exact._relations import reach_all as reach_all
from ste_jax.exact._relations import uncovered_in_relation as uncovered_in_relation
from ste_jax.exact._solutions import condorcet_winner as condorcet_winner
from ste_jax.exact._solutions import copeland_set as copeland_set
from ste_jax.exact._solutions import majority_tournament as majority_tournament
from ste_jax.exact._solutions import top_cycle as top_cycle
from ste_jax.exact._solutions import uncovered_set as uncovered_set
from ste_jax.exact._witnesses import cover_refutations as cover_refutations
from ste_jax.exact._witnesses import coverers as coverers
from ste_jax.exact._witnesses import majority_reach_tree as majority_reach_tree
from ste_jax.exact._witnesses import reached_agents as reached_agents
from ste_jax.exact._witnesses import witness_path as witness_path

__all__ = [
    "condensation_tiers",
    "condorcet_winner",
    "copeland_set",
    "cover_refutations",
    "coverers",
    "majority_reach_tree",
    "majority_tournament",
    "reach_all",
    "reached_agents",
    "top_cycle",
    "uncovered_in_relation",
    "uncovered_set",
    "witness_path",
]
