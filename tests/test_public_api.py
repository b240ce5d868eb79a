"""The public API: every documented name imports from ``ste_jax``; importing is light."""

import subprocess
import sys

import ste_jax

FOUNDATION = [
    "soft_majority_edges", "normalized_smax", "normalized_softmin", "max_min_product", "soft_reachability",
    "soft_top_cycle_score", "soft_cover_scores", "soft_uncovered_score", "ste_scores", "ste_scores_from_edges",
    "STEScores", "majority_tournament", "top_cycle", "uncovered_set", "condorcet_winner", "copeland_set",
    "validate_tournament",
]
DATA_AND_STATS = [
    "Comparisons", "LoadReport", "PairCounts", "from_dataframe", "from_task_results", "load_comparisons",
    "pair_counts", "posterior_edges", "win_rate_tournament", "bootstrap_scores", "bradley_terry", "elo",
    "hodge_rank", "inclusion_frequency", "percentile_intervals", "planted_core_tournament", "rank_centrality",
    "sample_comparisons", "ste_score_fn", "win_rate",
]
MODELS_AND_TRAINING = [
    "PairwiseLogit", "BradleyTerryLogit", "marginal_tournament", "make_train_step", "fit", "pairwise_cross_entropy",
    "sharpness_regularizer", "ste_objective", "temperature_schedule", "exponential_anneal", "calibrate_temperature",
]


def test_all_names_importable():
  for name in FOUNDATION + DATA_AND_STATS + MODELS_AND_TRAINING:
    assert name in ste_jax.__all__, name
    assert getattr(ste_jax, name) is not None
  for name in ste_jax.__all__:
    assert hasattr(ste_jax, name), name
  assert sorted(ste_jax.__all__) == list(ste_jax.__all__)
  for sub in (ste_jax.ops, ste_jax.exact, ste_jax.data, ste_jax.stats, ste_jax.models, ste_jax.training):
    for name in sub.__all__:
      assert hasattr(sub, name), (sub.__name__, name)


def test_import_does_not_pull_pandas_or_matplotlib():
  code = "import sys, ste_jax; print('pandas' in sys.modules, 'matplotlib' in sys.modules)"
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
  assert out.split() == ["False", "False"]
