"""The practitioner's pipeline: estimators, verdicts, diagnostics and the leaderboard."""

from ._active import SuggestedPairs as SuggestedPairs
from ._active import simulate_certification as simulate_certification
from ._active import suggest_pairs as suggest_pairs
from ._answer import TopAnswer as TopAnswer
from ._answer import top_answer as top_answer
from ._contradictions import Contradiction as Contradiction
from ._contradictions import head_to_head_contradictions as head_to_head_contradictions
from ._diagnostics import EvidenceDiagnostics as EvidenceDiagnostics
from ._diagnostics import evidence_diagnostics as evidence_diagnostics
from ._estimators import ESTIMATORS as ESTIMATORS
from ._head_to_head import HeadToHead as HeadToHead
from ._head_to_head import head_to_head as head_to_head
from ._leaderboard import CoreTable as CoreTable
from ._leaderboard import LeaderboardSettings as LeaderboardSettings
from ._leaderboard import core_table as core_table
from ._leaderboard import core_tables as core_tables
from ._leaderboard import leaderboard as leaderboard
from ._leaderboard import replica_cores as replica_cores
from ._leaderboard import subset_context as subset_context
from ._model_estimator import Candidate as Candidate
from ._model_estimator import ModelTournament as ModelTournament
from ._model_estimator import fit_model_tournament as fit_model_tournament
from ._verdicts import CertifiedMemberships as CertifiedMemberships
from ._verdicts import CoreCandidates as CoreCandidates
from ._verdicts import MembershipVerdicts as MembershipVerdicts
from ._verdicts import Verdicts as Verdicts
from ._verdicts import certified_memberships as certified_memberships
from ._verdicts import core_candidates as core_candidates
from ._verdicts import membership_verdicts as membership_verdicts

__all__ = [
  "Candidate",
  "CertifiedMemberships",
  "Contradiction",
  "CoreCandidates",
  "CoreTable",
  "ESTIMATORS",
  "EvidenceDiagnostics",
  "HeadToHead",
  "LeaderboardSettings",
  "MembershipVerdicts",
  "ModelTournament",
  "SuggestedPairs",
  "TopAnswer",
  "Verdicts",
  "certified_memberships",
  "core_candidates",
  "core_table",
  "core_tables",
  "evidence_diagnostics",
  "fit_model_tournament",
  "head_to_head",
  "head_to_head_contradictions",
  "leaderboard",
  "membership_verdicts",
  "replica_cores",
  "subset_context",
  "simulate_certification",
  "suggest_pairs",
  "top_answer",
]
