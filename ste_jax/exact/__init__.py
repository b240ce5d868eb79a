"""Hard tournament solutions (independent of the soft operators in :mod:`ste_jax.ops`)."""

from ste_jax.exact._solutions import condorcet_winner as condorcet_winner
from ste_jax.exact._solutions import copeland_set as copeland_set
from ste_jax.exact._solutions import majority_tournament as majority_tournament
from ste_jax.exact._solutions import top_cycle as top_cycle
from ste_jax.exact._solutions import uncovered_set as uncovered_set

__all__ = ["condorcet_winner", "copeland_set", "majority_tournament", "top_cycle", "uncovered_set"]
