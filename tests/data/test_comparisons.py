"""Tests for the Comparisons pytree and its validated constructor."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax.data import Comparisons


def test_from_arrays_fields_dtypes_and_defaults():
  c = Comparisons.from_arrays([0, 2, 1], [1, 0, 2], [1, 0.5, 0])
  assert c.a.dtype == jnp.int32 and c.b.dtype == jnp.int32 and c.context.dtype == jnp.int32
  assert c.outcome.dtype == jnp.float32 and c.weight.dtype == jnp.float32
  np.testing.assert_array_equal(c.a, [0, 2, 1])
  np.testing.assert_array_equal(c.b, [1, 0, 2])
  np.testing.assert_array_equal(c.outcome, [1, 0.5, 0])
  np.testing.assert_array_equal(c.context, [0, 0, 0])
  np.testing.assert_array_equal(c.weight, [1, 1, 1])
  assert c.agents == ("0", "1", "2") and c.contexts == ("all",)
  assert (c.num_agents, c.num_contexts, c.num_comparisons) == (3, 1, 3)


def test_from_arrays_names_contexts_and_weights():
  c = Comparisons.from_arrays(
    np.array([0, 1]),
    np.array([1, 3]),
    np.array([1, 0]),
    agents=["w", "x", "y", "z"],
    context=[1, 0],
    weight=[2.0, 0.0],
  )
  assert c.agents == ("w", "x", "y", "z") and c.num_agents == 4
  assert c.contexts == ("0", "1")
  np.testing.assert_array_equal(c.context, [1, 0])
  np.testing.assert_array_equal(c.weight, [2.0, 0.0])
  # integer outcomes become the default float dtype
  assert c.outcome.dtype == jnp.float32


def test_from_arrays_float64_under_x64(x64):
  c = Comparisons.from_arrays([0], [1], np.array([1.0]), weight=np.array([3], dtype=np.int64))
  assert c.outcome.dtype == jnp.float64 and c.weight.dtype == jnp.float64
  assert c.a.dtype == jnp.int32
  c32 = Comparisons.from_arrays([0], [1], jnp.array([1.0], dtype=jnp.float32), weight=[2.0])
  # the weight follows the outcome's dtype
  assert c32.outcome.dtype == jnp.float32 and c32.weight.dtype == jnp.float32


@pytest.mark.parametrize(
  "kwargs, match",
  [
    (dict(a=[0, 3], b=[1, 0], outcome=[1, 0], agents=["p", "q", "r"]), r"a\[1\] = 3"),
    (dict(a=[0, -1], b=[1, 0], outcome=[1, 0]), r"a\[1\] = -1"),
    (dict(a=[0, 1], b=[1, 1], outcome=[1, 0]), "self-comparison at row 1"),
    (dict(a=[0, 1], b=[1, 0], outcome=[1, 1.5]), r"outcome\[1\] = 1.5"),
    (dict(a=[0, 1], b=[1, 0], outcome=[np.nan, 1]), r"outcome\[0\] = nan"),
    (dict(a=[0, 1], b=[1, 0], outcome=[1, 0], weight=[1, -2]), r"weight\[1\] = -2"),
    (dict(a=[0, 1], b=[1, 0], outcome=[1, 0], weight=[np.inf, 1]), r"weight\[0\] = inf"),
    (dict(a=[0, 1], b=[1, 0], outcome=[1, 0, 1]), "same length"),
    (dict(a=[0.0, 1.0], b=[1, 0], outcome=[1, 0]), "integer"),
    (dict(a=[0, 1], b=[1, 0], outcome=[1, 0], agents=["x", "x"]), "more than once"),
    (
      dict(a=[0, 1], b=[1, 0], outcome=[1, 0], context=[0, 2], contexts=["c0", "c1"]),
      r"context\[1\] = 2",
    ),
    (dict(a=[], b=[], outcome=[]), "no comparisons"),
  ],
)
def test_from_arrays_rejects_bad_input(kwargs, match):
  with pytest.raises(ValueError, match=match):
    Comparisons.from_arrays(kwargs.pop("a"), kwargs.pop("b"), kwargs.pop("outcome"), **kwargs)


def test_empty_with_agents_is_allowed():
  c = Comparisons.from_arrays(np.zeros(0, int), np.zeros(0, int), np.zeros(0), agents=["x", "y"])
  assert c.num_comparisons == 0 and c.num_agents == 2


def test_is_a_pytree_with_static_names():
  c = Comparisons.from_arrays([0, 1], [1, 2], [1, 0], agents=["x", "y", "z"])
  leaves, treedef = jax.tree.flatten(c)
  assert len(leaves) == 5  # a, b, outcome, context, weight
  back = jax.tree.unflatten(treedef, leaves)
  assert back.agents == ("x", "y", "z") and back.contexts == ("all",)
  doubled = jax.tree.map(lambda x: x * 2, c)
  np.testing.assert_array_equal(doubled.a, [0, 2])
  other = Comparisons.from_arrays([0, 1], [1, 2], [1, 0], agents=["x", "y", "w"])
  assert jax.tree.structure(other) != treedef  # names are static metadata


def test_jit_traces_once_per_metadata_and_sees_static_names():
  traces = []

  @jax.jit
  def f(c):
    traces.append(c.num_agents)
    return jnp.sum(c.weight * c.outcome) + c.num_agents

  c = Comparisons.from_arrays([0, 1], [1, 2], [1, 0], agents=["x", "y", "z"])
  assert float(f(c)) == 4.0
  c2 = dataclasses.replace(c, weight=jnp.array([3.0, 1.0]))
  assert float(f(c2)) == 6.0
  assert traces == [3]  # new weights, same shapes and names: no retrace


def test_classmethod_loaders_delegate():
  import pandas as pd

  df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["model_b"]})
  c, report = Comparisons.from_dataframe(df)
  assert c.agents == ("x", "y") and float(c.outcome[0]) == 0.0 and report.rows_used == 1
  df = pd.DataFrame({"agent": ["x", "y"], "task": ["t", "t"], "score": [1, 0]})
  c, report = Comparisons.from_task_results(df)
  assert float(c.outcome[0]) == 1.0 and report.num_comparisons == 1
