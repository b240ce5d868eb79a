"""The public API: every documented name imports from ``ste_jax``; importing is light."""

import pathlib
import subprocess
import sys

import pytest

import ste_jax

FOUNDATION = [
  "soft_majority_edges",
  "normalized_smax",
  "normalized_softmin",
  "max_min_product",
  "soft_reachability",
  "soft_top_cycle_score",
  "soft_cover_scores",
  "soft_uncovered_score",
  "ste_scores",
  "ste_scores_from_edges",
  "STEScores",
  "majority_tournament",
  "top_cycle",
  "uncovered_set",
  "condorcet_winner",
  "copeland_set",
  "validate_tournament",
]
DATA_AND_STATS = [
  "Comparisons",
  "LoadReport",
  "PairCounts",
  "from_dataframe",
  "from_task_results",
  "load_comparisons",
  "pair_counts",
  "posterior_edges",
  "win_rate_tournament",
  "bootstrap_scores",
  "bradley_terry",
  "elo",
  "hodge_rank",
  "inclusion_frequency",
  "percentile_intervals",
  "planted_core_tournament",
  "rank_centrality",
  "sample_comparisons",
  "ste_score_fn",
  "win_rate",
]
MODELS_AND_TRAINING = [
  "PairwiseLogit",
  "BradleyTerryLogit",
  "marginal_tournament",
  "make_train_step",
  "fit",
  "pairwise_cross_entropy",
  "sharpness_regularizer",
  "ste_objective",
  "temperature_schedule",
  "exponential_anneal",
  "calibrate_temperature",
]


def test_all_names_importable():
  for name in FOUNDATION + DATA_AND_STATS + MODELS_AND_TRAINING:
    assert name in ste_jax.__all__, name
    assert getattr(ste_jax, name) is not None
  for name in ste_jax.__all__:
    assert hasattr(ste_jax, name), name
  assert sorted(ste_jax.__all__) == list(ste_jax.__all__)
  for sub in (
    ste_jax.ops,
    ste_jax.exact,
    ste_jax.data,
    ste_jax.stats,
    ste_jax.models,
    ste_jax.training,
  ):
    for name in sub.__all__:
      assert hasattr(sub, name), (sub.__name__, name)


HEAVY = ("flax", "optax", "tqdm", "pandas", "matplotlib", "scipy")
LAZY = ("models", "training", "evaluate", "plotting")


def _run(code: str) -> str:
  return subprocess.run(
    [sys.executable, "-c", code], capture_output=True, text=True, check=True
  ).stdout


def _modules() -> list[str]:
  """Every module of the package, from its files (importing nothing)."""
  root = pathlib.Path(ste_jax.__file__).parent
  names = (
    ".".join(("ste_jax",) + p.relative_to(root).with_suffix("").parts) for p in root.rglob("*.py")
  )
  return sorted(name.removesuffix(".__init__") for name in names)


def test_import_is_light():
  """``import ste_jax`` (the operators, exact solutions, data, stats) loads no Flax, Optax, tqdm,
  pandas, matplotlib or scipy; neither does computing scores."""
  code = (
    "import sys, ste_jax, jax.numpy as jnp\n"
    "ste_jax.ste_scores(jnp.full((3, 3), 0.5), tau=0.1)\n"
    f"print(*[m for m in {HEAVY!r} if m in sys.modules])\n"
    f"print(*[m for m in {LAZY!r} if 'ste_jax.' + m in sys.modules])"
  )
  assert _run(code).split("\n")[:2] == ["", ""]


def test_lazy_names_import_on_first_use():
  """Every public name is in ``dir(ste_jax)`` before its module is loaded and imports with
  ``from ste_jax import ...``; loading ``fit`` brings in Flax and Optax only then."""
  code = (
    "import sys, ste_jax\n"
    "missing = [n for n in ste_jax.__all__ + ['evaluate', 'models', 'training', 'plotting'] if n not in dir(ste_jax)]\n"
    "before = 'flax' in sys.modules\n"
    "from ste_jax import fit, PairwiseLogit, leaderboard, plotting\n"
    "assert fit is ste_jax.training.fit and PairwiseLogit is ste_jax.models.PairwiseLogit\n"
    "assert ste_jax.fit is fit and plotting is ste_jax.plotting\n"
    "print(missing, before, 'flax' in sys.modules, 'optax' in sys.modules)"
  )
  assert _run(code).split() == ["[]", "False", "True", "True"]
  with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
    ste_jax.not_a_name  # noqa: B018


@pytest.mark.slow
def test_every_module_imports_first_without_a_cycle():
  """Each module imported first, with ``ste_jax`` purged from ``sys.modules`` before each (a
  circular import fails only for some entry points): about 80 imports of the package, 9-13 s on 2
  cores, so in `make test-slow`. ``test_every_module_imports_in_a_fresh_interpreter`` does the same
  with one interpreter per module."""
  code = (
    "import importlib, sys\n"
    f"for name in {_modules()!r}:\n"
    "  for k in [k for k in sys.modules if k == 'ste_jax' or k.startswith('ste_jax.')]:\n"
    "    del sys.modules[k]\n"
    "  importlib.import_module(name)\n"
    "print('ok')"
  )
  assert _run(code).split() == ["ok"]


@pytest.mark.slow
def test_every_module_imports_in_a_fresh_interpreter():
  failures = {}
  for name in _modules():
    out = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True)
    if out.returncode:
      failures[name] = out.stderr.strip().splitlines()[-1]
  assert not failures, failures
