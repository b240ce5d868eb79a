"""The result family (issue 34): every public result type is a frozen dataclass and a pytree."""

import dataclasses
import importlib

import jax
import jax.numpy as jnp
import pytest

from ste_jax._results import as_dict, result_type, static

RESULTS = {
  "ste_jax.ops": ["STEScores", "NashAverage"],
  "ste_jax.data": ["PairCounts", "WeightedTournament"],
  "ste_jax.stats": [
    "BradleyTerryResult",
    "HodgeRankResult",
    "League",
    "PercentileInterval",
    "PlantedCore",
    "RankCentralityResult",
    "SampledComparisons",
    "WinRateResult",
  ],
  "ste_jax.evaluate": [
    "BootstrapMemberships",
    "Candidate",
    "Contradiction",
    "HeadToHead",
    "OrientationCertificates",
    "ReplicaCoreCandidates",
    "SuggestedPairs",
    "TopAnswer",
    "VoteRobustness",
  ],
  "ste_jax.models": ["IntransitiveParams"],
  "ste_jax.training": [
    "FitHistory",
    "FitResult",
    "ObjectiveTerms",
    "ReliabilityDiagram",
    "TemperatureScaling",
    "Temperatures",
  ],
}


@pytest.mark.parametrize(
  "module, name", [(m, n) for m, names in RESULTS.items() for n in names], ids=lambda x: str(x)
)
def test_public_results_are_frozen_dataclasses_not_tuples(module, name):
  cls = getattr(importlib.import_module(module), name)
  assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, name
  assert not issubclass(cls, tuple), f"{name} is still a tuple"


def test_no_public_result_is_a_namedtuple():
  """Every ``__all__`` class of every subpackage: none is a NamedTuple."""
  for module in ("ops", "exact", "data", "stats", "evaluate", "models", "training"):
    mod = importlib.import_module(f"ste_jax.{module}")
    for name in mod.__all__:
      obj = getattr(mod, name)
      if isinstance(obj, type):
        assert not (issubclass(obj, tuple) and hasattr(obj, "_fields")), f"{module}.{name}"


def test_results_pass_through_jit_vmap_and_replace():
  import ste_jax as ste

  P = jnp.array([[0.5, 0.9, 0.2], [0.1, 0.5, 0.8], [0.8, 0.2, 0.5]])
  batched = jax.jit(jax.vmap(lambda p: ste.ste_scores(p, tau=0.1)))(jnp.stack([P, P.T]))
  assert isinstance(batched, ste.STEScores) and batched.top_cycle.shape == (2, 3)
  one = ste.ste_scores(P, tau=0.1)
  assert jnp.allclose(batched.uncovered[0], one.uncovered)
  changed = dataclasses.replace(one, uncovered=jnp.zeros(3))
  assert float(changed.uncovered.sum()) == 0 and changed.top_cycle is one.top_cycle
  with pytest.raises(dataclasses.FrozenInstanceError):
    one.top_cycle = jnp.zeros(3)
  with pytest.raises(TypeError):
    _, _ = one  # fields by name only


def test_static_fields_are_metadata_and_as_dict_keeps_order():
  @result_type
  class Labelled:
    values: jax.Array
    label: str = static(default="x")

  r = Labelled(jnp.arange(3.0), "scores")
  leaves, tree = jax.tree_util.tree_flatten(r)
  assert len(leaves) == 1 and jax.tree_util.tree_unflatten(tree, leaves).label == "scores"
  assert list(as_dict(r)) == ["values", "label"]
  doubled = jax.jit(lambda r: jax.tree.map(lambda v: 2 * v, r))(r)
  assert doubled.label == "scores" and doubled.values.tolist() == [0.0, 2.0, 4.0]
