"""Pure array kernels of the STE operators (paper §3.2-3.4). Depend on jax only (the soft cover also
has native CPU kernels, C++ built at first use and called through ``jax.ffi``:
:mod:`ste_jax.ops._native`)."""

from ste_jax.ops._batching import batching_mode as batching_mode
from ste_jax.ops._covering import soft_cover_scores as soft_cover_scores
from ste_jax.ops._covering import soft_cover_violation as soft_cover_violation
from ste_jax.ops._edges import soft_majority_edges as soft_majority_edges
from ste_jax.ops._extrema import normalized_smax as normalized_smax
from ste_jax.ops._extrema import normalized_softmin as normalized_softmin
from ste_jax.ops._lottery import NashAverage as NashAverage
from ste_jax.ops._lottery import alpha_rank as alpha_rank
from ste_jax.ops._lottery import nash_average as nash_average
from ste_jax.ops._lottery import soft_maximal_lottery as soft_maximal_lottery
from ste_jax.ops._maxmin import closure_algorithm as closure_algorithm
from ste_jax.ops._native import native_kernels as native_kernels
from ste_jax.ops._native import native_kernels_status as native_kernels_status
from ste_jax.ops._reachability import max_min_product as max_min_product
from ste_jax.ops._reachability import soft_reachability as soft_reachability
from ste_jax.ops._scores import STEScores as STEScores
from ste_jax.ops._scores import soft_top_cycle_score as soft_top_cycle_score
from ste_jax.ops._scores import soft_uncovered_score as soft_uncovered_score
from ste_jax.ops._scores import ste_scores as ste_scores
from ste_jax.ops._scores import ste_scores_from_edges as ste_scores_from_edges
from ste_jax.ops._sharded import sharded_cover_scores as sharded_cover_scores
from ste_jax.ops._sharded import sharded_ste_scores as sharded_ste_scores

__all__ = [
  "NashAverage",
  "STEScores",
  "alpha_rank",
  "batching_mode",
  "closure_algorithm",
  "max_min_product",
  "nash_average",
  "native_kernels",
  "native_kernels_status",
  "normalized_smax",
  "normalized_softmin",
  "sharded_cover_scores",
  "sharded_ste_scores",
  "soft_cover_scores",
  "soft_cover_violation",
  "soft_majority_edges",
  "soft_maximal_lottery",
  "soft_reachability",
  "soft_top_cycle_score",
  "soft_uncovered_score",
  "ste_scores",
  "ste_scores_from_edges",
]
