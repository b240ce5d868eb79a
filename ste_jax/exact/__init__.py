"""Hard tournament solutions (independent of the soft operators in :mod:`ste_jax.ops`), the same
solutions of arbitrary (complete or partial) Boolean relations, their witnesses (majority paths and
covers), and :func:`solution_memberships`: the whole solution family of one tournament in one call
(its lotteries include :func:`ste_jax.ops.nash_average` and :func:`ste_jax.ops.alpha_rank`)."""

from ste_jax.exact._lotteries import bipartisan_set as bipartisan_set
from ste_jax.exact._lotteries import essential_set as essential_set
from ste_jax.exact._lotteries import margin_matrix as margin_matrix
from ste_jax.exact._lotteries import maximal_lottery as maximal_lottery
from ste_jax.exact._lotteries import maximal_lottery_with_support as maximal_lottery_with_support
from ste_jax.exact._relations import condensation_tiers as condensation_tiers
from ste_jax.exact._relations import kings_in_relation as kings_in_relation
from ste_jax.exact._relations import reach_all as reach_all
from ste_jax.exact._relations import uncovered_in_relation as uncovered_in_relation
from ste_jax.exact._solution_memberships import SOLUTION_NAMES as SOLUTION_NAMES
from ste_jax.exact._solution_memberships import solution_memberships as solution_memberships
from ste_jax.exact._solutions import condorcet_winner as condorcet_winner
from ste_jax.exact._solutions import copeland_set as copeland_set
from ste_jax.exact._solutions import majority_tournament as majority_tournament
from ste_jax.exact._solutions import top_cycle as top_cycle
from ste_jax.exact._solutions import uncovered_set as uncovered_set
from ste_jax.exact._tournament_sets import BANKS_MAX_N as BANKS_MAX_N
from ste_jax.exact._tournament_sets import banks_set as banks_set
from ste_jax.exact._tournament_sets import minimal_covering_set as minimal_covering_set
from ste_jax.exact._tournament_sets import schwartz_set as schwartz_set
from ste_jax.exact._witnesses import cover_refutations as cover_refutations
from ste_jax.exact._witnesses import coverers as coverers
from ste_jax.exact._witnesses import majority_reach_tree as majority_reach_tree
from ste_jax.exact._witnesses import reached_agents as reached_agents
from ste_jax.exact._witnesses import witness_path as witness_path

__all__ = [
  "BANKS_MAX_N",
  "SOLUTION_NAMES",
  "banks_set",
  "bipartisan_set",
  "condensation_tiers",
  "condorcet_winner",
  "copeland_set",
  "cover_refutations",
  "coverers",
  "essential_set",
  "kings_in_relation",
  "majority_reach_tree",
  "majority_tournament",
  "margin_matrix",
  "maximal_lottery",
  "maximal_lottery_with_support",
  "minimal_covering_set",
  "reach_all",
  "reached_agents",
  "schwartz_set",
  "solution_memberships",
  "top_cycle",
  "uncovered_in_relation",
  "uncovered_set",
  "witness_path",
]
