"""ste_jax: Soft Tournament Equilibrium in JAX.

Set-valued cores (Top Cycle / Smith set, Uncovered Set) of pairwise-comparison tournaments and
their differentiable soft versions, following "Soft Tournament Equilibrium" (STE).

Importing ``ste_jax`` loads the operators and everything that needs only jax and numpy:
``ops``, ``exact``, ``data``, ``stats`` and ``validate_tournament``. The parts that need Flax,
Optax or tqdm (``models``, ``training``, ``evaluate``) and ``plotting`` (matplotlib) are imported
on first use of one of their names (PEP 562 module ``__getattr__``); ``from ste_jax import fit``
and ``dir(ste_jax)`` work as for any other name.
"""

import importlib
import typing

from ste_jax import data as data
from ste_jax import exact as exact
from ste_jax import ops as ops
from ste_jax import stats as stats
from ste_jax._solution_memberships import SOLUTION_NAMES as SOLUTION_NAMES
from ste_jax._solution_memberships import solution_memberships as solution_memberships
from ste_jax._validation import validate_tournament as validate_tournament
from ste_jax.data import Comparisons as Comparisons
from ste_jax.data import LoadReport as LoadReport
from ste_jax.data import OutcomePolicy as OutcomePolicy
from ste_jax.data import PairCounts as PairCounts
from ste_jax.data import from_dataframe as from_dataframe
from ste_jax.data import from_task_results as from_task_results
from ste_jax.data import load_comparisons as load_comparisons
from ste_jax.data import pair_counts as pair_counts
from ste_jax.data import posterior_edges as posterior_edges
from ste_jax.data import win_rate_tournament as win_rate_tournament
from ste_jax.exact import banks_set as banks_set
from ste_jax.exact import bipartisan_set as bipartisan_set
from ste_jax.exact import condensation_tiers as condensation_tiers
from ste_jax.exact import condorcet_winner as condorcet_winner
from ste_jax.exact import copeland_set as copeland_set
from ste_jax.exact import essential_set as essential_set
from ste_jax.exact import kings_in_relation as kings_in_relation
from ste_jax.exact import majority_tournament as majority_tournament
from ste_jax.exact import margin_matrix as margin_matrix
from ste_jax.exact import maximal_lottery as maximal_lottery
from ste_jax.exact import minimal_covering_set as minimal_covering_set
from ste_jax.exact import reach_all as reach_all
from ste_jax.exact import schwartz_set as schwartz_set
from ste_jax.exact import top_cycle as top_cycle
from ste_jax.exact import uncovered_in_relation as uncovered_in_relation
from ste_jax.exact import uncovered_set as uncovered_set
from ste_jax.ops import NashAverage as NashAverage
from ste_jax.ops import STEScores as STEScores
from ste_jax.ops import alpha_rank as alpha_rank
from ste_jax.ops import max_min_product as max_min_product
from ste_jax.ops import nash_average as nash_average
from ste_jax.ops import normalized_smax as normalized_smax
from ste_jax.ops import normalized_softmin as normalized_softmin
from ste_jax.ops import soft_cover_scores as soft_cover_scores
from ste_jax.ops import soft_majority_edges as soft_majority_edges
from ste_jax.ops import soft_maximal_lottery as soft_maximal_lottery
from ste_jax.ops import soft_reachability as soft_reachability
from ste_jax.ops import soft_top_cycle_score as soft_top_cycle_score
from ste_jax.ops import soft_uncovered_score as soft_uncovered_score
from ste_jax.ops import ste_scores as ste_scores
from ste_jax.ops import ste_scores_from_edges as ste_scores_from_edges
from ste_jax.stats import bootstrap_scores as bootstrap_scores
from ste_jax.stats import bradley_terry as bradley_terry
from ste_jax.stats import elo as elo
from ste_jax.stats import hodge_rank as hodge_rank
from ste_jax.stats import inclusion_frequency as inclusion_frequency
from ste_jax.stats import percentile_intervals as percentile_intervals
from ste_jax.stats import planted_core_tournament as planted_core_tournament
from ste_jax.stats import rank_centrality as rank_centrality
from ste_jax.stats import sample_comparisons as sample_comparisons
from ste_jax.stats import sparse_league as sparse_league
from ste_jax.stats import ste_score_fn as ste_score_fn
from ste_jax.stats import win_rate as win_rate

# Public names whose modules import Flax, Optax or tqdm: loaded on first access.
_LAZY_NAMES = {
  "CertifiedMemberships": "ste_jax.evaluate",
  "certified_memberships": "ste_jax.evaluate",
  "core_candidates": "ste_jax.evaluate",
  "CoreCandidates": "ste_jax.evaluate",
  "CoreTable": "ste_jax.evaluate",
  "evidence_diagnostics": "ste_jax.evaluate",
  "fit_model_tournament": "ste_jax.evaluate",
  "head_to_head_contradictions": "ste_jax.evaluate",
  "leaderboard": "ste_jax.evaluate",
  "membership_verdicts": "ste_jax.evaluate",
  "SuggestedPairs": "ste_jax.evaluate",
  "suggest_pairs": "ste_jax.evaluate",
  "BradleyTerryLogit": "ste_jax.models",
  "IntransitiveLogit": "ste_jax.models",
  "marginal_tournament": "ste_jax.models",
  "PairwiseLogit": "ste_jax.models",
  "calibrate_temperature": "ste_jax.training",
  "exponential_anneal": "ste_jax.training",
  "fit": "ste_jax.training",
  "make_train_step": "ste_jax.training",
  "pairwise_cross_entropy": "ste_jax.training",
  "sharpness_regularizer": "ste_jax.training",
  "ste_objective": "ste_jax.training",
  "temperature_schedule": "ste_jax.training",
}
_LAZY_SUBMODULES = ("evaluate", "models", "training", "plotting")

if typing.TYPE_CHECKING:  # static analysers see the lazy names as ordinary imports
  from ste_jax import evaluate as evaluate
  from ste_jax import models as models
  from ste_jax import plotting as plotting
  from ste_jax import training as training
  from ste_jax.evaluate import CertifiedMemberships as CertifiedMemberships
  from ste_jax.evaluate import CoreCandidates as CoreCandidates
  from ste_jax.evaluate import CoreTable as CoreTable
  from ste_jax.evaluate import SuggestedPairs as SuggestedPairs
  from ste_jax.evaluate import certified_memberships as certified_memberships
  from ste_jax.evaluate import core_candidates as core_candidates
  from ste_jax.evaluate import evidence_diagnostics as evidence_diagnostics
  from ste_jax.evaluate import fit_model_tournament as fit_model_tournament
  from ste_jax.evaluate import head_to_head_contradictions as head_to_head_contradictions
  from ste_jax.evaluate import leaderboard as leaderboard
  from ste_jax.evaluate import membership_verdicts as membership_verdicts
  from ste_jax.evaluate import suggest_pairs as suggest_pairs
  from ste_jax.models import BradleyTerryLogit as BradleyTerryLogit
  from ste_jax.models import IntransitiveLogit as IntransitiveLogit
  from ste_jax.models import PairwiseLogit as PairwiseLogit
  from ste_jax.models import marginal_tournament as marginal_tournament
  from ste_jax.training import calibrate_temperature as calibrate_temperature
  from ste_jax.training import exponential_anneal as exponential_anneal
  from ste_jax.training import fit as fit
  from ste_jax.training import make_train_step as make_train_step
  from ste_jax.training import pairwise_cross_entropy as pairwise_cross_entropy
  from ste_jax.training import sharpness_regularizer as sharpness_regularizer
  from ste_jax.training import ste_objective as ste_objective
  from ste_jax.training import temperature_schedule as temperature_schedule


def __getattr__(name: str):
  """Imports a lazy public name (or subpackage) on first access and caches it in the module."""
  if name in _LAZY_NAMES:
    value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
  elif name in _LAZY_SUBMODULES:
    value = importlib.import_module(f"{__name__}.{name}")
  else:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
  globals()[name] = value
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(_LAZY_NAMES) | set(_LAZY_SUBMODULES))


__version__ = "0.1.0"

__all__ = [
  "BradleyTerryLogit",
  "CertifiedMemberships",
  "Comparisons",
  "CoreCandidates",
  "CoreTable",
  "IntransitiveLogit",
  "LoadReport",
  "NashAverage",
  "OutcomePolicy",
  "PairCounts",
  "PairwiseLogit",
  "SOLUTION_NAMES",
  "STEScores",
  "SuggestedPairs",
  "alpha_rank",
  "banks_set",
  "bipartisan_set",
  "bootstrap_scores",
  "bradley_terry",
  "calibrate_temperature",
  "certified_memberships",
  "condensation_tiers",
  "condorcet_winner",
  "copeland_set",
  "core_candidates",
  "elo",
  "essential_set",
  "evidence_diagnostics",
  "exponential_anneal",
  "fit",
  "fit_model_tournament",
  "from_dataframe",
  "from_task_results",
  "head_to_head_contradictions",
  "hodge_rank",
  "inclusion_frequency",
  "kings_in_relation",
  "leaderboard",
  "load_comparisons",
  "majority_tournament",
  "make_train_step",
  "margin_matrix",
  "marginal_tournament",
  "max_min_product",
  "maximal_lottery",
  "membership_verdicts",
  "minimal_covering_set",
  "nash_average",
  "normalized_smax",
  "normalized_softmin",
  "pair_counts",
  "pairwise_cross_entropy",
  "percentile_intervals",
  "planted_core_tournament",
  "posterior_edges",
  "rank_centrality",
  "reach_all",
  "sample_comparisons",
  "schwartz_set",
  "sharpness_regularizer",
  "soft_cover_scores",
  "soft_majority_edges",
  "soft_maximal_lottery",
  "soft_reachability",
  "soft_top_cycle_score",
  "soft_uncovered_score",
  "solution_memberships",
  "sparse_league",
  "ste_objective",
  "ste_score_fn",
  "ste_scores",
  "ste_scores_from_edges",
  "suggest_pairs",
  "temperature_schedule",
  "top_cycle",
  "uncovered_in_relation",
  "uncovered_set",
  "validate_tournament",
  "win_rate",
  "win_rate_tournament",
]
