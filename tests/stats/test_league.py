"""The tennis-like sparse league: shapes, determinism, heavy tails, outcomes, the planted cycle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import exact, stats


def _games_per_agent(league):
  c = league.comparisons
  n = c.num_agents
  return np.bincount(np.asarray(c.a), minlength=n) + np.bincount(np.asarray(c.b), minlength=n)


def test_default_league_shapes_and_dtypes(key):
  league = stats.sparse_league(key)
  c = league.comparisons
  assert c.num_agents == 1200 and c.num_comparisons == 30000
  assert c.agents[0] == "p0000" and c.agents[-1] == "p1199" and c.contexts == ("all",)
  assert c.a.dtype == jnp.int32 and c.b.dtype == jnp.int32
  assert c.outcome.dtype == jnp.float32 and c.weight.dtype == jnp.float32
  assert league.strength.shape == (1200,) and league.strength.dtype == jnp.float32
  assert league.P.shape == (1200, 1200) and league.P.dtype == jnp.float32
  assert set(np.unique(np.asarray(c.outcome)).tolist()) == {0.0, 1.0}  # no ties
  assert np.all(np.asarray(c.a) != np.asarray(c.b))
  P = np.asarray(league.P)
  np.testing.assert_array_equal(P + P.T, 1.0)
  np.testing.assert_array_equal(np.diag(P), 0.5)


def test_dtype_follows_x64_and_the_argument(x64):
  league = stats.sparse_league(jax.random.key(1), num_agents=30, num_comparisons=200)
  assert league.P.dtype == jnp.float64 and league.comparisons.outcome.dtype == jnp.float64
  league = stats.sparse_league(
    jax.random.key(2), num_agents=30, num_comparisons=200, dtype=jnp.float32
  )
  assert league.P.dtype == jnp.float32 and league.strength.dtype == jnp.float32
  assert league.comparisons.outcome.dtype == jnp.float32


def test_deterministic_per_key():
  kwargs = dict(num_agents=50, num_comparisons=400, cycle_strength=0.7)
  first = stats.sparse_league(jax.random.key(3), **kwargs)
  again = stats.sparse_league(jax.random.key(3), **kwargs)
  other = stats.sparse_league(jax.random.key(4), **kwargs)
  for x, y in zip(jax.tree.leaves(first), jax.tree.leaves(again)):
    np.testing.assert_array_equal(x, y)
  assert first.comparisons.agents == again.comparisons.agents
  assert not np.array_equal(first.comparisons.a, other.comparisons.a)
  assert not np.array_equal(first.strength, other.strength)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_games_per_agent_are_heavy_tailed(seed):
  games = _games_per_agent(stats.sparse_league(jax.random.key(seed)))
  assert games.sum() == 2 * 30000
  assert games.min() >= 1  # every agent plays at least once when m >= n
  assert 10 * np.median(games) < games.max()
  assert np.mean(games <= 5) > 0.15
  assert np.sum(games >= 200) >= 5  # a few agents play hundreds of matches


@pytest.mark.parametrize("num_agents", [2, 5])
def test_no_self_pairs_even_with_few_agents(num_agents):
  league = stats.sparse_league(
    jax.random.key(num_agents),
    num_agents=num_agents,
    num_comparisons=5000,
    locality=1.0,
    activity_shape=0.5,
  )
  a, b = np.asarray(league.comparisons.a), np.asarray(league.comparisons.b)
  assert np.all(a != b) and a.min() >= 0 and max(a.max(), b.max()) < num_agents
  assert np.all(_games_per_agent(league) >= 1)


def test_empirical_win_rates_match_P():
  n = 12
  league = stats.sparse_league(jax.random.key(5), num_agents=n, num_comparisons=20000)
  c = league.comparisons
  a, b, o = np.asarray(c.a), np.asarray(c.b), np.asarray(c.outcome).astype(np.float64)
  wins = np.zeros((n, n))
  games = np.zeros((n, n))
  np.add.at(wins, (a, b), o)
  np.add.at(wins, (b, a), 1 - o)
  np.add.at(games, (a, b), 1)
  np.add.at(games, (b, a), 1)
  P = np.asarray(league.P).astype(np.float64)
  rows, cols = np.triu_indices(n, k=1)
  sampled = games[rows, cols] >= 30
  assert sampled.sum() >= 40
  r, s = rows[sampled], cols[sampled]
  p, g = P[r, s], games[r, s]
  z = (wins[r, s] - g * p) / np.sqrt(g * p * (1 - p))
  assert np.max(np.abs(z)) < 4.5
  assert 0.6 < np.mean(z**2) < 1.5


def test_P_is_bradley_terry_in_the_strengths():
  league = stats.sparse_league(jax.random.key(6), num_agents=50, num_comparisons=400)
  s = np.asarray(league.strength).astype(np.float64)
  expected = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
  np.testing.assert_allclose(np.asarray(league.P), expected, atol=1e-6)
  top = exact.top_cycle(league.P)
  np.testing.assert_array_equal(top, s == s.max())  # no cycle: the strongest agent alone


@pytest.mark.parametrize("cycle_strength", [0.05, 0.5, 3.0])
def test_cycle_strength_plants_a_three_cycle_among_the_top_three(cycle_strength):
  league = stats.sparse_league(
    jax.random.key(7), num_agents=50, num_comparisons=400, cycle_strength=cycle_strength
  )
  s = np.asarray(league.strength)
  t1, t2, t3 = np.argsort(s)[::-1][:3]
  top = np.asarray(exact.top_cycle(league.P))
  assert top.sum() == 3 and set(np.flatnonzero(top)) == {t1, t2, t3}
  P = np.asarray(league.P).astype(np.float64)
  p = 1 / (1 + np.exp(-cycle_strength))
  np.testing.assert_allclose([P[t1, t2], P[t2, t3], P[t3, t1]], p, atol=1e-6)
  others = np.setdiff1d(np.arange(50), [t1, t2, t3])
  expected = 1 / (1 + np.exp(-(s[others, None] - s[None, others]).astype(np.float64)))
  np.testing.assert_allclose(P[np.ix_(others, others)], expected, atol=1e-6)


def test_locality_pairs_agents_of_similar_strength():
  rank_gaps = []
  for seed, locality in ((8, 0.0), (9, 1.0)):
    league = stats.sparse_league(jax.random.key(seed), locality=locality)
    rank = np.argsort(np.argsort(np.asarray(league.strength)))
    c = league.comparisons
    rank_gaps.append(np.mean(np.abs(rank[np.asarray(c.a)] - rank[np.asarray(c.b)])))
  uniform_gap, local_gap = rank_gaps
  assert uniform_gap > 300  # about n / 3 for independent draws
  assert local_gap < uniform_gap / 4


def test_no_comparisons():
  league = stats.sparse_league(jax.random.key(10), num_agents=10, num_comparisons=0)
  assert league.comparisons.num_comparisons == 0 and league.comparisons.num_agents == 10


@pytest.mark.parametrize(
  "kwargs,name",
  [
    ({"num_agents": 1}, "num_agents"),
    ({"num_agents": 2.5}, "num_agents"),
    ({"num_agents": True}, "num_agents"),
    ({"num_agents": 2, "cycle_strength": 1.0}, "num_agents"),
    ({"num_comparisons": -1}, "num_comparisons"),
    ({"num_comparisons": 10.0}, "num_comparisons"),
    ({"activity_shape": 0.0}, "activity_shape"),
    ({"activity_shape": float("nan")}, "activity_shape"),
    ({"strength_scale": -0.1}, "strength_scale"),
    ({"locality": 1.5}, "locality"),
    ({"locality": -0.1}, "locality"),
    ({"cycle_strength": -1.0}, "cycle_strength"),
    ({"cycle_strength": float("inf")}, "cycle_strength"),
    ({"dtype": jnp.int32}, "dtype"),
  ],
)
def test_bad_arguments_raise_naming_them(kwargs, name):
  with pytest.raises(ValueError, match=name):
    stats.sparse_league(jax.random.key(0), **{"num_agents": 20, "num_comparisons": 50, **kwargs})
