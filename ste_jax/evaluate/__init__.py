"""The practitioner's pipeline: estimators, verdicts, diagnostics and the leaderboard."""

from ._active import SuggestedPairs as SuggestedPairs
from ._active import SuggestSettings as SuggestSettings
from ._active import simulate_certification as simulate_certification
from ._active import suggest_pairs as suggest_pairs
from ._answer import TopAnswer as TopAnswer
from ._answer import top_answer as top_answer
from ._contradictions import Contradiction as Contradiction
from ._contradictions import head_to_head_contradictions as head_to_head_contradictions
from ._controlled import ControlledTournament as ControlledTournament
from ._controlled import fit_controlled_tournament as fit_controlled_tournament
from ._covariates import Covariates as Covariates
from ._covariates import normalize_differences as normalize_differences
from ._covariates import position_difference as position_difference
from ._covariates import style_difference as style_difference
from ._diagnostics import EvidenceDiagnostics as EvidenceDiagnostics
from ._diagnostics import evidence_diagnostics as evidence_diagnostics
from ._estimators import ESTIMATORS as ESTIMATORS
from ._estimators import AutoEstimator as AutoEstimator
from ._estimators import EstimatorChoice as EstimatorChoice
from ._estimators import ModelEstimator as ModelEstimator
from ._estimators import PosteriorEdgeEstimator as PosteriorEdgeEstimator
from ._estimators import WinRateEstimator as WinRateEstimator
from ._estimators import estimator_named as estimator_named
from ._estimators import fit_estimator as fit_estimator
from ._head_to_head import HeadToHead as HeadToHead
from ._head_to_head import head_to_head as head_to_head
from ._influence import ComparisonInfluence as ComparisonInfluence
from ._influence import comparison_influence as comparison_influence
from ._leaderboard import CoreTable as CoreTable
from ._leaderboard import Leaderboard as Leaderboard
from ._leaderboard import LeaderboardSettings as LeaderboardSettings
from ._leaderboard import core_table as core_table
from ._leaderboard import core_tables as core_tables
from ._leaderboard import leaderboard as leaderboard
from ._leaderboard import replica_cores as replica_cores
from ._leaderboard import subset_context as subset_context
from ._model_estimator import Candidate as Candidate
from ._model_estimator import ModelTournament as ModelTournament
from ._model_estimator import fit_model_tournament as fit_model_tournament
from ._protocol import FittedTournament as FittedTournament
from ._protocol import TournamentEstimator as TournamentEstimator
from ._replicas import BootstrapMemberships as BootstrapMemberships
from ._replicas import ResamplingSettings as ResamplingSettings
from ._replicas import bootstrap_hard_memberships as bootstrap_hard_memberships
from ._robustness import VoteRobustness as VoteRobustness
from ._robustness import vote_robustness as vote_robustness
from ._task_mix import TaskMixRobustness as TaskMixRobustness
from ._task_mix import task_mix_robustness as task_mix_robustness
from ._tiers import TierIntervals as TierIntervals
from ._tiers import tier_intervals as tier_intervals
from ._ties import TieModelTournament as TieModelTournament
from ._ties import fit_tie_tournament as fit_tie_tournament
from ._verdicts import ConceptVerdicts as ConceptVerdicts
from ._verdicts import MembershipVerdicts as MembershipVerdicts
from ._verdicts import OrientationCertificates as OrientationCertificates
from ._verdicts import ReplicaCoreCandidates as ReplicaCoreCandidates
from ._verdicts import membership_verdicts as membership_verdicts
from ._verdicts import orientation_certificates as orientation_certificates
from ._verdicts import replica_core_candidates as replica_core_candidates

__all__ = [
  "AutoEstimator",
  "BootstrapMemberships",
  "Candidate",
  "ComparisonInfluence",
  "ConceptVerdicts",
  "Contradiction",
  "ControlledTournament",
  "CoreTable",
  "Covariates",
  "ESTIMATORS",
  "EstimatorChoice",
  "EvidenceDiagnostics",
  "FittedTournament",
  "HeadToHead",
  "Leaderboard",
  "LeaderboardSettings",
  "MembershipVerdicts",
  "ModelEstimator",
  "ModelTournament",
  "OrientationCertificates",
  "PosteriorEdgeEstimator",
  "ReplicaCoreCandidates",
  "ResamplingSettings",
  "SuggestSettings",
  "SuggestedPairs",
  "TaskMixRobustness",
  "TieModelTournament",
  "TierIntervals",
  "TopAnswer",
  "TournamentEstimator",
  "VoteRobustness",
  "WinRateEstimator",
  "bootstrap_hard_memberships",
  "comparison_influence",
  "core_table",
  "core_tables",
  "estimator_named",
  "evidence_diagnostics",
  "fit_controlled_tournament",
  "fit_estimator",
  "fit_model_tournament",
  "fit_tie_tournament",
  "head_to_head",
  "head_to_head_contradictions",
  "leaderboard",
  "membership_verdicts",
  "normalize_differences",
  "orientation_certificates",
  "position_difference",
  "replica_core_candidates",
  "replica_cores",
  "simulate_certification",
  "style_difference",
  "subset_context",
  "suggest_pairs",
  "task_mix_robustness",
  "tier_intervals",
  "top_answer",
  "vote_robustness",
]
