"""Tests for pair counts and the win-rate tournament, against hand counts and a pandas oracle."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from ste_jax._validation import validate_tournament
from ste_jax.data import Comparisons, PairCounts, pair_counts, win_rate_tournament

# agents x=0, y=1, z=2; contexts c0, c1
#   row  a  b  outcome  weight  context
#   1    x  y  1        1       c0      x beats y
#   2    y  x  1        2       c1      y beats x (counted twice)
#   3    x  y  1/2      1       c0      tie
#   4    y  z  0        1       c1      z beats y
#   5    z  y  3/4      2       c0      fractional: 1.5 to z, 0.5 to y
HAND = dict(
  a=[0, 1, 0, 1, 2],
  b=[1, 0, 1, 2, 1],
  outcome=[1, 1, 0.5, 0, 0.75],
  weight=[1, 2, 1, 1, 2],
  context=[0, 1, 0, 1, 0],
)


def _hand():
  kw = dict(HAND)
  return Comparisons.from_arrays(
    kw.pop("a"), kw.pop("b"), kw.pop("outcome"), agents=["x", "y", "z"], contexts=["c0", "c1"], **kw
  )


def test_pair_counts_by_hand():
  c = _hand()
  strict = np.array([[0, 1, 0], [2, 0, 0.5], [0, 2.5, 0]])
  ties = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
  k = pair_counts(c, tie_policy="drop")
  np.testing.assert_array_equal(k.wins, strict)
  np.testing.assert_array_equal(k.ties, ties)
  np.testing.assert_array_equal(k.totals, [[0, 3, 0], [3, 0, 3], [0, 3, 0]])
  k = pair_counts(c)  # "half" is the default
  np.testing.assert_array_equal(k.wins, strict + ties / 2)
  np.testing.assert_array_equal(k.ties, ties)
  np.testing.assert_array_equal(k.totals, [[0, 4, 0], [4, 0, 3], [0, 3, 0]])
  assert isinstance(k, PairCounts) and k.wins.dtype == jnp.float32


def test_pair_counts_by_context_by_hand():
  k = pair_counts(_hand(), tie_policy="drop", by_context=True)
  assert k.wins.shape == (2, 3, 3)
  np.testing.assert_array_equal(k.wins[0], [[0, 1, 0], [0, 0, 0.5], [0, 1.5, 0]])
  np.testing.assert_array_equal(k.wins[1], [[0, 0, 0], [2, 0, 0], [0, 1, 0]])
  np.testing.assert_array_equal(k.ties[0], [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
  np.testing.assert_array_equal(k.ties[1], np.zeros((3, 3)))


def _random_comparisons(rng, m=400, n=6, num_contexts=3):
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  outcome = rng.choice([0.0, 0.5, 1.0, 0.25], size=m)
  weight = rng.choice([0.0, 1.0, 2.0, 0.5], size=m)
  context = rng.integers(0, num_contexts, m)
  c = Comparisons.from_arrays(
    a,
    b,
    outcome,
    weight=weight,
    context=context,
    contexts=[f"c{i}" for i in range(num_contexts)],
    agents=[f"ag{i}" for i in range(n)],
  )
  return c, pd.DataFrame(dict(a=a, b=b, o=outcome, w=weight, c=context))


def _pandas_counts(df, n, num_contexts):
  """Oracle: weighted wins/ties per (context, a, b) with pandas groupby sums."""
  wins = np.zeros((num_contexts, n, n))
  ties = np.zeros((num_contexts, n, n))
  dec = df[df.o != 0.5].assign(fa=lambda d: d.w * d.o, fb=lambda d: d.w * (1 - d.o))
  for (c, a, b), v in dec.groupby(["c", "a", "b"])["fa"].sum().items():
    wins[c, a, b] += v
  for (c, a, b), v in dec.groupby(["c", "a", "b"])["fb"].sum().items():
    wins[c, b, a] += v
  for (c, a, b), v in df[df.o == 0.5].groupby(["c", "a", "b"])["w"].sum().items():
    ties[c, a, b] += v
    ties[c, b, a] += v
  return wins, ties


@pytest.mark.parametrize("tie_policy", ["half", "drop"])
def test_pair_counts_match_pandas_oracle(rng, tie_policy, x64):
  c, df = _random_comparisons(rng)
  strict, ties = _pandas_counts(df, c.num_agents, c.num_contexts)
  wins = strict + ties / 2 if tie_policy == "half" else strict
  k = pair_counts(c, tie_policy=tie_policy, by_context=True)
  assert k.wins.dtype == jnp.float64
  np.testing.assert_allclose(k.wins, wins, rtol=0, atol=1e-12)
  np.testing.assert_allclose(k.ties, ties, rtol=0, atol=1e-12)
  np.testing.assert_allclose(k.totals, wins + wins.transpose(0, 2, 1), rtol=0, atol=1e-12)
  k_all = pair_counts(c, tie_policy=tie_policy)
  np.testing.assert_allclose(k_all.wins, wins.sum(0), rtol=0, atol=1e-12)
  np.testing.assert_allclose(k_all.ties, ties.sum(0), rtol=0, atol=1e-12)


def test_jit_equals_eager_and_weights_do_not_retrace(rng):
  c, _ = _random_comparisons(rng)
  traces = []

  def f(c):
    traces.append(1)
    return pair_counts(c, tie_policy="drop", by_context=True)

  jf = jax.jit(f)
  expect = pair_counts(c, tie_policy="drop", by_context=True)
  for x, y in zip(jax.tree.leaves(jf(c)), jax.tree.leaves(expect)):
    np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-5)
  c2 = dataclasses.replace(c, weight=c.weight * 2)
  np.testing.assert_allclose(jf(c2).wins, 2 * np.asarray(jf(c).wins), rtol=1e-6)
  assert len(traces) == 1
  jp = jax.jit(win_rate_tournament, static_argnames=("tie_policy", "by_context"))
  np.testing.assert_allclose(jp(c, missing=0.5), win_rate_tournament(c), rtol=1e-6)


def test_vmap_over_weights_equals_loop(rng):
  c, _ = _random_comparisons(rng, m=100)
  weights = jnp.asarray(rng.poisson(1.0, size=(4, 100)), dtype=jnp.float32)
  batched = jax.vmap(lambda w: pair_counts(dataclasses.replace(c, weight=w)).wins)(weights)
  for i in range(4):
    np.testing.assert_allclose(
      batched[i], pair_counts(dataclasses.replace(c, weight=weights[i])).wins, rtol=1e-6
    )


def test_win_rate_tournament_by_hand():
  c = _hand()
  p = np.asarray(win_rate_tournament(c))
  expect = np.array([[0.5, 1.5 / 4, 0.5], [2.5 / 4, 0.5, 0.5 / 3], [0.5, 2.5 / 3, 0.5]])
  np.testing.assert_allclose(p, expect, rtol=1e-6)
  p = np.asarray(win_rate_tournament(c, tie_policy="drop"))
  expect = np.array([[0.5, 1 / 3, 0.5], [2 / 3, 0.5, 0.5 / 3], [0.5, 2.5 / 3, 0.5]])
  np.testing.assert_allclose(p, expect, rtol=1e-6)
  pc = np.asarray(win_rate_tournament(c, by_context=True, missing=float("nan")))
  # context c1: y beat x twice, z beat y once; x-z never met
  np.testing.assert_allclose(pc[1], [[0.5, 0, np.nan], [1, 0.5, 0], [np.nan, 1, 0.5]])


def test_missing_and_tie_policies_do_what_the_docs_say():
  # x-y: only ties; x-z: never compared; y-z: z won once
  c = Comparisons.from_arrays([0, 0, 1], [1, 1, 2], [0.5, 0.5, 0], agents=["x", "y", "z"])
  for policy in ("half", "drop"):
    p = np.asarray(win_rate_tournament(c, missing=float("nan"), tie_policy=policy))
    assert p[0, 1] == p[1, 0] == 0.5  # tie-only pair is even, not missing
    assert np.isnan(p[0, 2]) and np.isnan(p[2, 0])  # never compared
    assert p[1, 2] == 0 and p[2, 1] == 1
  p = np.asarray(win_rate_tournament(c))  # default missing = 1/2
  assert p[0, 2] == p[2, 0] == 0.5
  validate_tournament(p)
  p = np.asarray(win_rate_tournament(c, missing=0.0))
  assert p[0, 2] == p[2, 0] == 0.0
  with pytest.raises(ValueError, match="missing"):
    win_rate_tournament(c, missing=1.5)
  with pytest.raises(ValueError, match="tie_policy"):
    win_rate_tournament(pair_counts(c), tie_policy="drop")
  with pytest.raises(ValueError, match="tie_policy"):
    pair_counts(c, tie_policy="win")


def test_win_rate_is_an_exact_tournament(rng):
  c, _ = _random_comparisons(rng)
  p = np.asarray(win_rate_tournament(c))
  validate_tournament(p)
  lower = np.tril(np.ones_like(p, dtype=bool), k=-1)
  np.testing.assert_array_equal(p[lower], (np.float32(1) - p.T)[lower])
  k = pair_counts(c, by_context=True)
  pc = np.asarray(win_rate_tournament(k))
  assert pc.shape == (3, 6, 6)
  for i in range(3):
    validate_tournament(pc[i])
