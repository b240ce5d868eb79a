"""Baselines, recovery metrics and the planted-core generator (paper §6, issue 5)."""

from ste_jax._validation import validate_wins as validate_wins

from ._baselines import HodgeRankResult as HodgeRankResult
from ._baselines import RankCentralityResult as RankCentralityResult
from ._baselines import WinRateResult as WinRateResult
from ._baselines import elo as elo
from ._baselines import hodge_rank as hodge_rank
from ._baselines import rank_centrality as rank_centrality
from ._baselines import win_rate as win_rate
from ._bootstrap import STEScoreFn as STEScoreFn
from ._bootstrap import bootstrap_scores as bootstrap_scores
from ._bootstrap import resample_comparisons as resample_comparisons
from ._bootstrap import ste_score_fn as ste_score_fn
from ._bradley_terry import BradleyTerryResult as BradleyTerryResult
from ._bradley_terry import bradley_terry as bradley_terry
from ._bradley_terry import comparison_diagnostics as comparison_diagnostics
from ._league import League as League
from ._league import sparse_league as sparse_league
from ._metrics import auroc as auroc
from ._metrics import average_precision as average_precision
from ._metrics import expected_calibration_error as expected_calibration_error
from ._metrics import jaccard as jaccard
from ._metrics import jittered_top_k_f1 as jittered_top_k_f1
from ._metrics import score_gap as score_gap
from ._metrics import threshold_f1 as threshold_f1
from ._metrics import top_k_f1 as top_k_f1
from ._metrics import top_k_selection_probability as top_k_selection_probability
from ._summaries import PercentileInterval as PercentileInterval
from ._summaries import core_masks as core_masks
from ._summaries import inclusion_frequency as inclusion_frequency
from ._summaries import pairwise_jaccard as pairwise_jaccard
from ._summaries import percentile_intervals as percentile_intervals
from ._summaries import top1_entropy as top1_entropy
from ._synthetic import PlantedCore as PlantedCore
from ._synthetic import SampledComparisons as SampledComparisons
from ._synthetic import planted_core_tournament as planted_core_tournament
from ._synthetic import sample_comparisons as sample_comparisons

__all__ = [
  "BradleyTerryResult",
  "HodgeRankResult",
  "League",
  "PercentileInterval",
  "PlantedCore",
  "RankCentralityResult",
  "STEScoreFn",
  "SampledComparisons",
  "WinRateResult",
  "auroc",
  "average_precision",
  "bootstrap_scores",
  "bradley_terry",
  "comparison_diagnostics",
  "core_masks",
  "elo",
  "expected_calibration_error",
  "hodge_rank",
  "inclusion_frequency",
  "jaccard",
  "jittered_top_k_f1",
  "pairwise_jaccard",
  "percentile_intervals",
  "planted_core_tournament",
  "rank_centrality",
  "resample_comparisons",
  "sample_comparisons",
  "score_gap",
  "sparse_league",
  "ste_score_fn",
  "threshold_f1",
  "top1_entropy",
  "top_k_f1",
  "top_k_selection_probability",
  "validate_wins",
  "win_rate",
]
