"""Pairwise comparison data: containers, loaders, counts and tournament estimators.

``Comparisons`` holds outcomes as fixed-shape arrays (a pytree); the loaders turn data frames and
files into ``(Comparisons, LoadReport)``, refusing bad rows unless ``skip_bad_rows=True``; the
estimators turn comparisons into tournaments (win-rate ``P``, posterior-edge ``D``, weighted
``(P, W)``), globally or per context. pandas and pyarrow are imported only inside the loaders.
"""

from ._cells import merge_into_cells as merge_into_cells
from ._clusters import load_cluster_ids as load_cluster_ids
from ._comparisons import Comparisons as Comparisons
from ._counts import PairCounts as PairCounts
from ._counts import pair_counts as pair_counts
from ._counts import win_rate_tournament as win_rate_tournament
from ._covariates import ControlSettings as ControlSettings
from ._covariates import arena_style_differences as arena_style_differences
from ._covariates import judge_position_differences as judge_position_differences
from ._covariates import numeric_covariate_columns as numeric_covariate_columns
from ._policies import OutcomePolicy as OutcomePolicy
from ._posterior import posterior_edges as posterior_edges
from ._raw import load_llmfao_raw as load_llmfao_raw
from ._raw import load_vicuna80_raw as load_vicuna80_raw
from ._report import BadRowsWarning as BadRowsWarning
from ._report import LoadReport as LoadReport
from ._report import PositionBias as PositionBias
from ._report import RejectedRow as RejectedRow
from ._schemas import SCHEMAS as SCHEMAS
from ._schemas import detect_schema as detect_schema
from ._settings import LoadSettings as LoadSettings
from ._tabular import from_counts as from_counts
from ._tabular import from_dataframe as from_dataframe
from ._tabular import load_comparisons as load_comparisons
from ._task_results import from_task_results as from_task_results
from ._weighted import WeightedTournament as WeightedTournament
from ._weighted import weighted_soft_majority_edges as weighted_soft_majority_edges
from ._weighted import weighted_tournament as weighted_tournament

# ``Comparisons.from_dataframe(df)`` and ``Comparisons.from_task_results(df)``: the loaders
# themselves as static methods. The loaders build ``Comparisons``, so ``_comparisons`` cannot import
# them without an import cycle; they are attached here, where both are loaded.
Comparisons.from_dataframe = staticmethod(from_dataframe)
Comparisons.from_task_results = staticmethod(from_task_results)

__all__ = [
  "BadRowsWarning",
  "Comparisons",
  "ControlSettings",
  "LoadReport",
  "LoadSettings",
  "OutcomePolicy",
  "PairCounts",
  "PositionBias",
  "RejectedRow",
  "SCHEMAS",
  "WeightedTournament",
  "arena_style_differences",
  "detect_schema",
  "from_counts",
  "from_dataframe",
  "from_task_results",
  "judge_position_differences",
  "load_cluster_ids",
  "load_comparisons",
  "load_llmfao_raw",
  "load_vicuna80_raw",
  "merge_into_cells",
  "numeric_covariate_columns",
  "pair_counts",
  "posterior_edges",
  "weighted_soft_majority_edges",
  "weighted_tournament",
  "win_rate_tournament",
]
