"""Planted-core generator and comparison sampler against a networkx oracle and the spec."""

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest

from ste_jax import stats
from ste_jax._validation import validate_tournament


def _hard_top_cycle(P):
  """Oracle: the source component of the condensation of the majority graph ``P > 1/2``."""
  P = np.asarray(P)
  n = P.shape[0]
  g = nx.DiGraph()
  g.add_nodes_from(range(n))
  g.add_edges_from((a, b) for a in range(n) for b in range(n) if a != b and P[a, b] > 0.5)
  cond = nx.condensation(g)
  sources = [c for c in cond.nodes if cond.in_degree(c) == 0]
  assert len(sources) == 1  # a tournament's condensation is a path: one source
  mask = np.zeros(n, dtype=bool)
  mask[list(cond.nodes[sources[0]]["members"])] = True
  return mask


GRID = [(n, s) for n in (30, 50, 100) for s in (3, 5, 7)]


@pytest.mark.parametrize("n,core_size", GRID)
@pytest.mark.parametrize("outsiders", ["random_order", "random_tournament"])
def test_top_cycle_is_the_planted_core(n, core_size, outsiders):
  key = jax.random.fold_in(jax.random.key(n), core_size)
  planted = stats.planted_core_tournament(key, n=n, core_size=core_size, outsiders=outsiders)
  P, core = planted.P, planted.core_mask
  core = np.asarray(core)
  assert core.sum() == core_size
  np.testing.assert_array_equal(_hard_top_cycle(P), core)
  validate_tournament(np.asarray(P), atol=1e-6)


@pytest.mark.parametrize("core_size", [1, 3, 5, 7])
def test_structure_matches_specification(core_size):
  n = 30
  planted = stats.planted_core_tournament(jax.random.key(core_size), n=n, core_size=core_size)
  P, core = planted.P, planted.core_mask
  P, core = np.asarray(P), np.asarray(core)
  off = ~np.eye(n, dtype=bool)
  np.testing.assert_allclose(P + P.T, 1.0, atol=1e-6)  # complementary
  np.testing.assert_array_equal(np.diag(P), 0.5)
  # (1) core beats outsiders with 1/2 + U(0.20, 0.30)
  core_vs_out = P[np.ix_(core, ~core)]
  assert np.all((core_vs_out >= 0.70 - 1e-6) & (core_vs_out <= 0.80 + 1e-6))
  # (2) regular rotation: each core agent beats exactly (s - 1)/2 core agents, margin in range,
  # and the core is strongly connected (checked by the top-cycle oracle).
  inner = P[np.ix_(core, core)]
  wins_inside = (inner > 0.5).sum(axis=1)
  np.testing.assert_array_equal(wins_inside, (core_size - 1) // 2)
  winners = inner[inner > 0.5]
  assert np.all((winners >= 0.70 - 1e-6) & (winners <= 0.80 + 1e-6))
  # (3) outsiders in a strict order: out-degrees inside the outsider set are 0, 1, ..., n - s - 1.
  outer = P[np.ix_(~core, ~core)]
  assert sorted((outer > 0.5).sum(axis=1).tolist()) == list(range(n - core_size))
  winners = outer[outer > 0.5]
  assert np.all((winners >= 0.62 - 1e-6) & (winners <= 0.95 + 1e-6))
  assert np.all(P[off] != 0.5)
  np.testing.assert_array_equal(_hard_top_cycle(P), core)


def test_random_tournament_outsiders_can_be_cyclic():
  n, s = 30, 3
  planted = stats.planted_core_tournament(
    jax.random.key(3), n=n, core_size=s, outsiders="random_tournament"
  )
  P, core = planted.P, planted.core_mask
  outer = np.asarray(P)[np.ix_(~np.asarray(core), ~np.asarray(core))]
  degrees = sorted((outer > 0.5).sum(axis=1).tolist())
  assert degrees != list(range(n - s))  # not transitive


def test_labels_are_permuted():
  n, s = 10, 3
  masks = [
    np.asarray(stats.planted_core_tournament(jax.random.key(seed), n=n, core_size=s).core_mask)
    for seed in range(12)
  ]
  first = np.zeros(n, dtype=bool)
  first[:s] = True
  assert sum(np.array_equal(m, first) for m in masks) <= 1
  assert len({tuple(np.flatnonzero(m)) for m in masks}) >= 10
  # every index belongs to the core in at least one draw (no index is excluded by construction)
  assert np.any(np.stack(masks), axis=0).sum() >= n - 2


def test_margins_are_parameters_and_validated():
  planted = stats.planted_core_tournament(
    jax.random.key(0),
    n=10,
    core_size=3,
    core_margin=(0.4, 0.4),
    cycle_margin=(0.1, 0.1),
    outsider_margin=(0.3, 0.3),
  )
  P, core = planted.P, planted.core_mask
  P, core = np.asarray(P), np.asarray(core)
  np.testing.assert_allclose(P[np.ix_(core, ~core)], 0.9, atol=1e-6)
  inner = P[np.ix_(core, core)]
  np.testing.assert_allclose(inner[inner > 0.5], 0.6, atol=1e-6)
  outer = P[np.ix_(~core, ~core)]
  np.testing.assert_allclose(outer[outer > 0.5], 0.8, atol=1e-6)
  with pytest.raises(ValueError, match="odd"):
    stats.planted_core_tournament(jax.random.key(0), n=10, core_size=4)
  with pytest.raises(ValueError, match="exceed"):
    stats.planted_core_tournament(jax.random.key(0), n=5, core_size=5)
  with pytest.raises(ValueError, match="core_margin"):
    stats.planted_core_tournament(jax.random.key(0), n=10, core_size=3, core_margin=(0.0, 0.3))
  with pytest.raises(ValueError, match="outsiders"):
    stats.planted_core_tournament(jax.random.key(0), n=10, core_size=3, outsiders="cyclic")


def test_vmapped_pipeline_matches_eager():
  # the benchmark's shape of computation (generator -> sampler -> scores -> metrics) under
  # jit(vmap) over seeds must equal the eager computation seed by seed.
  def trial(key):
    k1, k2 = jax.random.split(key)
    planted = stats.planted_core_tournament(k1, n=10, core_size=5)
    P, core = planted.P, planted.core_mask
    wins = stats.sample_comparisons(k2, P, per_pair=50, missing_rate=0.1).wins
    rates = stats.win_rate(wins).rates  # BT under jit(vmap) is covered in test_baselines
    return P, core, wins, stats.top_k_f1(rates, core), stats.auroc(rates, core)

  keys = jax.random.split(jax.random.key(9), 4)
  P, core, wins, f1, auc = jax.jit(jax.vmap(trial))(jax.random.clone(keys))  # same keys on purpose
  assert P.shape == (4, 10, 10) and np.all(np.asarray(core).sum(axis=1) == 5)
  assert np.all((np.asarray(f1) >= 0) & (np.asarray(f1) <= 1)) and np.all(
    np.isfinite(np.asarray(auc))
  )
  k1, k2 = jax.random.split(keys[2])
  planted = stats.planted_core_tournament(k1, n=10, core_size=5)
  P2, core2 = planted.P, planted.core_mask
  wins2 = stats.sample_comparisons(k2, P2, per_pair=50, missing_rate=0.1).wins
  np.testing.assert_allclose(np.asarray(P[2]), np.asarray(P2), atol=1e-7)
  np.testing.assert_array_equal(np.asarray(core[2]), np.asarray(core2))
  np.testing.assert_array_equal(np.asarray(wins[2]), np.asarray(wins2))


def test_generator_float64_and_deterministic(x64):
  a = stats.planted_core_tournament(jax.random.key(5), n=10, core_size=5)
  b = stats.planted_core_tournament(jax.random.key(5), n=10, core_size=5)
  assert a.P.dtype == jnp.float64
  np.testing.assert_array_equal(np.asarray(a.P), np.asarray(b.P))
  np.testing.assert_allclose(np.asarray(a.P + a.P.T), 1.0, atol=1e-15)


# ----------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("missing_rate", [0.0, 0.1, 0.3, 0.5, 1.0])
def test_missing_pair_count_is_exact(missing_rate):
  n, m = 10, 5
  num_pairs = n * (n - 1) // 2
  expected_missing = round(missing_rate * num_pairs)
  k1, k2 = jax.random.split(jax.random.key(7))
  P = stats.planted_core_tournament(k1, n=n, core_size=3).P
  sampled = stats.sample_comparisons(k2, P, per_pair=m, missing_rate=missing_rate)
  wins, observed = sampled.wins, sampled.observed
  wins, observed = np.asarray(wins), np.asarray(observed)
  assert num_pairs - observed[np.triu_indices(n, 1)].sum() == expected_missing
  np.testing.assert_array_equal(observed, observed.T)
  assert not observed.diagonal().any()
  games = wins + wins.T
  np.testing.assert_array_equal(games[observed], m)
  np.testing.assert_array_equal(games[~observed], 0)
  assert np.all(wins == np.round(wins)) and wins.min() >= 0


def test_missing_count_hand_values():
  # n = 10: 45 pairs; 0.1 * 45 = 4.5 -> 4 (half to even), 0.3 * 45 = 13.5 -> 14, 0.5 * 45 -> 22.
  P = jnp.full((10, 10), 0.5, dtype=jnp.float32)
  for mu, missing in [(0.1, 4), (0.3, 14), (0.5, 22)]:
    observed = stats.sample_comparisons(jax.random.key(0), P, per_pair=1, missing_rate=mu).observed
    assert 45 - int(np.triu(np.asarray(observed), 1).sum()) == missing


def test_sample_means_match_binomial_means():
  n, m, eta = 10, 20000, 0.02
  k1, k2 = jax.random.split(jax.random.key(11))
  P = stats.planted_core_tournament(k1, n=n, core_size=3).P
  wins = stats.sample_comparisons(k2, P, per_pair=m, label_noise=eta).wins
  P, wins = np.asarray(P, dtype=np.float64), np.asarray(wins, dtype=np.float64)
  p_game = eta / 2 + (1 - eta) * P
  rows, cols = np.triu_indices(n, 1)
  z = (wins[rows, cols] / m - p_game[rows, cols]) / np.sqrt(
    p_game[rows, cols] * (1 - p_game[rows, cols]) / m
  )
  assert np.max(np.abs(z)) < 5.0  # 45 pairs, each within 5 standard deviations
  assert abs(np.mean(z)) < 5.0 / np.sqrt(len(z))
  assert 0.2 < np.std(z) < 2.0  # binomial spread, neither degenerate nor inflated


def test_full_label_noise_gives_fair_coins():
  n, m = 10, 5000
  P = stats.planted_core_tournament(jax.random.key(2), n=n, core_size=3).P
  wins = stats.sample_comparisons(jax.random.key(3), P, per_pair=m, label_noise=1.0).wins
  frac = np.asarray(wins)[np.triu_indices(n, 1)] / m
  assert np.max(np.abs(frac - 0.5)) < 5 * np.sqrt(0.25 / m)


def test_sampling_dtype_and_validation(x64):
  P = stats.planted_core_tournament(jax.random.key(0), n=10, core_size=3).P
  wins = stats.sample_comparisons(jax.random.key(1), P, per_pair=3).wins
  assert wins.dtype == jnp.float64
  with pytest.raises(ValueError, match="missing_rate"):
    stats.sample_comparisons(jax.random.key(1), P, per_pair=3, missing_rate=1.5)
  with pytest.raises(ValueError, match="per_pair"):
    stats.sample_comparisons(jax.random.key(1), P, per_pair=2.5)
  with pytest.raises(ValueError, match="label_noise"):
    stats.sample_comparisons(jax.random.key(1), P, per_pair=2, label_noise=-0.1)


def test_planted_core_recovered_by_baselines_with_many_games():
  # end to end: with lots of data the core agents win most games, so even the win rate ranks them
  # on top when outsiders are weak; a sanity check that sampling follows P's orientation.
  k1, k2 = jax.random.split(jax.random.key(4))
  planted = stats.planted_core_tournament(k1, n=10, core_size=3, outsider_margin=(0.01, 0.02))
  P, core = planted.P, planted.core_mask
  wins = stats.sample_comparisons(k2, P, per_pair=2000).wins
  rates = np.asarray(stats.win_rate(wins).rates)
  assert set(np.argsort(-rates)[:3].tolist()) == set(np.flatnonzero(np.asarray(core)).tolist())
