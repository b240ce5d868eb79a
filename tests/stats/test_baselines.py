"""Baselines against hand computations and independent oracles (scipy, numpy)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from scipy.special import expit, log_expit

from ste_jax import stats


def _btl_wins(rng, strengths, games_per_pair):
  """Wins sampled from a BTL model with log-strengths ``strengths`` (numpy, independent)."""
  n = len(strengths)
  p = expit(strengths[:, None] - strengths[None, :])
  wins = np.zeros((n, n))
  for a in range(n):
    for b in range(a + 1, n):
      wins[a, b] = rng.binomial(games_per_pair, p[a, b])
      wins[b, a] = games_per_pair - wins[a, b]
  return wins


def _scipy_bt(wins, lam):
  """Oracle: BT MAP by scipy's BFGS on the penalized negative log-likelihood (float64)."""
  wins = np.asarray(wins, dtype=np.float64).copy()
  np.fill_diagonal(wins, 0.0)
  games = wins + wins.T

  def nll(s):
    d = s[:, None] - s[None, :]
    value = -np.sum(wins * log_expit(d)) + 0.5 * lam * s @ s
    grad = -(np.sum(wins - games * expit(d), axis=1)) + lam * s
    return value, grad

  res = scipy.optimize.minimize(
    nll, np.zeros(len(wins)), jac=True, method="BFGS", options={"gtol": 1e-11}
  )
  s = res.x
  return s - s.mean()


# ----------------------------------------------------------------------------- Bradley–Terry


def test_bt_two_agents_closed_form():
  # the MLE satisfies sigmoid(s0 - s1) = 3 / 4, i.e. s0 - s1 = log 3.
  res = stats.bradley_terry(jnp.array([[0.0, 3.0], [1.0, 0.0]]))
  np.testing.assert_allclose(
    np.asarray(res.scores), [0.5 * math.log(3), -0.5 * math.log(3)], atol=1e-6
  )
  assert bool(res.converged) and bool(res.identifiable) and not bool(res.prior_applied)


def test_bt_recovers_btl_strengths():
  rng = np.random.default_rng(1)
  true = np.linspace(-1.5, 1.5, 8)
  true = true - true.mean()
  wins = _btl_wins(rng, true, 400)
  res = jax.jit(stats.bradley_terry)(jnp.asarray(wins, dtype=jnp.float32))
  est = np.asarray(res.scores)
  assert bool(res.converged) and bool(res.identifiable)
  assert not bool(res.prior_applied) and float(res.prior_strength) == 0.0
  assert np.corrcoef(est, true)[0, 1] > 0.98
  assert np.max(np.abs(est - true)) < 0.15
  assert abs(est.mean()) < 1e-5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bt_matches_scipy_mle(x64, seed):
  rng = np.random.default_rng(seed)
  wins = (
    rng.integers(0, 6, size=(6, 6)).astype(np.float64) + 0.5
  )  # every pair both ways: identifiable
  res = stats.bradley_terry(jnp.asarray(wins))
  assert res.scores.dtype == jnp.float64
  assert bool(res.identifiable) and bool(res.converged)
  np.testing.assert_allclose(np.asarray(res.scores), _scipy_bt(wins, 0.0), atol=1e-6)


def test_bt_prior_always_matches_scipy_map(x64):
  rng = np.random.default_rng(3)
  wins = rng.integers(1, 5, size=(5, 5)).astype(np.float64)
  res = stats.bradley_terry(jnp.asarray(wins), prior="always", prior_strength=0.5)
  assert bool(res.prior_applied) and float(res.prior_strength) == 0.5
  np.testing.assert_allclose(np.asarray(res.scores), _scipy_bt(wins, 0.5), atol=1e-6)


def test_bt_separable_agent_never_loses():
  rng = np.random.default_rng(4)
  wins = _btl_wins(rng, np.linspace(-1, 1, 6), 10)
  wins[:, 0] = 0.0  # agent 0 never loses
  wins[0, 1:] = 10.0
  res = stats.bradley_terry(jnp.asarray(wins, dtype=jnp.float32), max_iter=100)
  assert bool(res.separable) and bool(res.connected) and not bool(res.identifiable)
  assert bool(res.prior_applied) and float(res.prior_strength) == pytest.approx(0.01)
  scores = np.asarray(res.scores)
  assert np.all(np.isfinite(scores)) and np.max(np.abs(scores)) < 50
  assert bool(res.converged) and int(res.num_iterations) < 100
  assert np.argmax(scores) == 0
  # the returned scores are the documented MAP with the Gaussian prior (scipy oracle).
  with jax.enable_x64(True):
    res64 = stats.bradley_terry(jnp.asarray(wins))
  np.testing.assert_allclose(np.asarray(res64.scores), _scipy_bt(wins, 0.01), atol=1e-5)
  np.testing.assert_allclose(scores, np.asarray(res64.scores), atol=2e-3)


def test_bt_separable_group():
  # agents {0, 1} beat each other but never lose to {2, 3}: the "beat" graph is not strongly
  # connected although the comparison graph is complete.
  wins = np.array(
    [
      [0, 2, 3, 3],
      [1, 0, 3, 3],
      [0, 0, 0, 2],
      [0, 0, 1, 0],
    ],
    dtype=np.float32,
  )
  res = stats.bradley_terry(jnp.asarray(wins))
  assert bool(res.separable) and bool(res.connected) and not bool(res.identifiable)
  assert bool(res.prior_applied) and bool(res.converged)
  s = np.asarray(res.scores)
  assert np.all(np.isfinite(s)) and min(s[0], s[1]) > max(s[2], s[3])


def test_bt_disconnected_graph():
  # two components {0, 1}, {2, 3} never compared, and agent 4 with no games at all.
  wins = np.zeros((5, 5), dtype=np.float32)
  wins[0, 1], wins[1, 0] = 3, 1
  wins[2, 3], wins[3, 2] = 1, 2
  res = stats.bradley_terry(jnp.asarray(wins))
  assert not bool(res.connected) and not bool(res.separable) and not bool(res.identifiable)
  assert bool(res.prior_applied) and bool(res.converged)
  s = np.asarray(res.scores)
  assert np.all(np.isfinite(s))
  # the prior centers each component: s0 = -s1, s2 = -s3 and the isolated agent sits at 0.
  np.testing.assert_allclose([s[0] + s[1], s[2] + s[3], s[4]], 0.0, atol=1e-6)
  with jax.enable_x64(True):
    s64 = np.asarray(stats.bradley_terry(jnp.asarray(wins, dtype=jnp.float64)).scores)
  np.testing.assert_allclose(s64, _scipy_bt(wins, 0.01), atol=1e-6)


def test_comparison_diagnostics_hand_cases():
  cycle = jnp.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]])
  chain = jnp.array([[0.0, 1, 0], [0, 0, 1], [0, 0, 0]])
  assert [bool(x) for x in stats.comparison_diagnostics(cycle)] == [True, False]
  assert [bool(x) for x in stats.comparison_diagnostics(chain)] == [True, True]
  single = stats.bradley_terry(jnp.zeros((1, 1)))
  assert bool(single.identifiable) and float(single.scores[0]) == 0.0


def test_bt_rejects_bad_arguments():
  with pytest.raises(ValueError, match="prior_strength"):
    stats.bradley_terry(jnp.ones((3, 3)), prior_strength=0.0)
  with pytest.raises(ValueError, match="prior"):
    stats.bradley_terry(jnp.ones((3, 3)), prior="never")
  with pytest.raises(ValueError, match="shape"):
    stats.bradley_terry(jnp.ones((3, 2)))


# ----------------------------------------------------------------------------- win rate


def test_win_rate_hand_computation():
  wins = jnp.array(
    [
      [0.0, 3.0, 1.0, 0.0],
      [1.0, 0.0, 0.5, 0.0],  # a tie between 1 and 2 added as 1/2 to both sides
      [1.0, 1.5, 0.0, 0.0],
      [0.0, 0.0, 0.0, 0.0],  # agent 3 never played
    ]
  )
  res = stats.win_rate(wins)
  # agent 0: won 4 of 6; agent 1: won 1.5 of 6; agent 2: won 2.5 of 4; agent 3: no games.
  np.testing.assert_allclose(np.asarray(res.rates), [4 / 6, 1.5 / 6, 2.5 / 4, 0.5], rtol=1e-6)
  np.testing.assert_allclose(np.asarray(res.num_games), [6, 6, 4, 0])
  assert np.asarray(res.has_games).tolist() == [True, True, True, False]
  assert np.all(np.isfinite(np.asarray(jax.grad(lambda w: jnp.sum(stats.win_rate(w).rates))(wins))))


# ----------------------------------------------------------------------------- Elo


def test_elo_three_games_by_hand():
  a = jnp.array([0, 1, 2])
  b = jnp.array([1, 2, 0])
  outcome = jnp.array([1.0, 1.0, 0.5])
  ratings = np.asarray(stats.elo(a, b, outcome, num_agents=4, k_factor=32, scale=400, initial=1000))
  # game 1: equal ratings, expected 1/2: 0 -> 1016, 1 -> 984.
  r = [1000.0, 1000.0, 1000.0, 1000.0]
  r[0], r[1] = 1016.0, 984.0
  # game 2: 1 (984) beats 2 (1000).
  e = 1 / (1 + 10 ** ((r[2] - r[1]) / 400))
  r[1], r[2] = r[1] + 32 * (1 - e), r[2] - 32 * (1 - e)
  # game 3: 2 draws with 0.
  e = 1 / (1 + 10 ** ((r[0] - r[2]) / 400))
  r[2], r[0] = r[2] + 32 * (0.5 - e), r[0] - 32 * (0.5 - e)
  np.testing.assert_allclose(ratings, r, atol=1e-3)
  assert ratings[3] == 1000.0
  assert abs(ratings[1] - 1000.7362) < 1e-3  # 984 + 32 * (1 - 1/(1 + 10^0.04))
  np.testing.assert_allclose(ratings.sum(), 4000.0, atol=1e-3)  # Elo is zero-sum


def test_elo_order_matters_and_weight():
  a = jnp.array([0, 0])
  b = jnp.array([1, 1])
  r1 = stats.elo(a, b, jnp.array([1.0, 0.0]), num_agents=2)
  r2 = stats.elo(a, b, jnp.array([0.0, 1.0]), num_agents=2)
  assert float(r1[0]) < 1000 < float(r2[0])  # the last result weighs more
  half = stats.elo(a[:1], b[:1], jnp.array([1.0]), num_agents=2, weight=jnp.array([0.5]))
  np.testing.assert_allclose(np.asarray(half), [1008.0, 992.0])


# ----------------------------------------------------------------------------- HodgeRank


def test_hodge_rank_transitive_flow_has_no_cycles():
  s = np.array([1.2, 0.4, -0.1, -0.5, -1.0])
  m = 50.0
  wins = m * expit(s[:, None] - s[None, :])  # exact BTL expectations: log-odds flow = s_a - s_b
  np.fill_diagonal(wins, 0.0)
  res = stats.hodge_rank(jnp.asarray(wins, dtype=jnp.float32), pseudo_count=0.0)
  assert float(res.cyclicity) < 1e-5
  np.testing.assert_allclose(np.asarray(res.scores), s - s.mean(), atol=1e-5)


@pytest.mark.parametrize("flow", ["log_odds", "win_fraction"])
def test_hodge_rank_three_cycle_is_all_residual(flow):
  wins = jnp.array([[0.0, 5.0, 0.0], [0.0, 0.0, 5.0], [5.0, 0.0, 0.0]])
  res = stats.hodge_rank(wins, flow=flow)
  # every node has one outgoing and one incoming unit of flow: zero divergence, zero potential.
  np.testing.assert_allclose(np.asarray(res.scores), 0.0, atol=1e-6)
  assert float(res.cyclicity) > 0.9
  np.testing.assert_allclose(float(res.cyclicity), 1.0, atol=1e-6)


@pytest.mark.parametrize("edge_weights", ["games", "uniform"])
def test_hodge_rank_matches_lstsq_oracle(x64, edge_weights):
  rng = np.random.default_rng(5)
  n = 7
  wins = rng.integers(0, 8, size=(n, n)).astype(np.float64)
  mask = np.triu(rng.random((n, n)) < 0.7, 1)
  mask[np.arange(n - 1), np.arange(1, n)] = True  # keep a spanning path: connected
  mask = mask | mask.T
  wins = np.where(mask, wins, 0.0)
  np.fill_diagonal(wins, 0.0)
  res = stats.hodge_rank(jnp.asarray(wins), edge_weights=edge_weights, pseudo_count=0.5)
  # oracle: weighted least squares on the edge list with numpy.
  rows, y, w = [], [], []
  for a in range(n):
    for b in range(a + 1, n):
      g = wins[a, b] + wins[b, a]
      if g > 0:
        row = np.zeros(n)
        row[a], row[b] = 1.0, -1.0
        rows.append(row)
        y.append(np.log(wins[a, b] + 0.5) - np.log(wins[b, a] + 0.5))
        w.append(g if edge_weights == "games" else 1.0)
  A, y, w = np.array(rows), np.array(y), np.sqrt(np.array(w))
  s, *_ = np.linalg.lstsq(A * w[:, None], y * w, rcond=None)
  s = s - s.mean()
  np.testing.assert_allclose(np.asarray(res.scores), s, atol=1e-9)
  resid = (y - A @ s) * w
  np.testing.assert_allclose(
    float(res.cyclicity), np.linalg.norm(resid) / np.linalg.norm(y * w), atol=1e-9
  )


def test_hodge_rank_disconnected_components_centered():
  wins = jnp.array(
    [[0.0, 3.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 2.0, 0.0]]
  )
  res = stats.hodge_rank(wins, pseudo_count=0.0)
  s = np.asarray(res.scores)
  np.testing.assert_allclose(s, [0.5 * math.log(3), -0.5 * math.log(3), 0.0, 0.0], atol=1e-6)
  assert float(res.cyclicity) < 1e-6


# ----------------------------------------------------------------------------- Rank Centrality


def test_rank_centrality_recovers_noiseless_btl():
  pi = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
  frac = pi[:, None] / (pi[:, None] + pi[None, :])
  wins = 10.0 * frac
  np.fill_diagonal(wins, 0.0)
  res = stats.rank_centrality(jnp.asarray(wins, dtype=jnp.float32))
  assert bool(res.irreducible)
  np.testing.assert_allclose(np.asarray(res.scores), pi, atol=1e-5)


def test_rank_centrality_ranks_transitive_set():
  rng = np.random.default_rng(6)
  true = np.linspace(2.0, -2.0, 7)  # agent 0 strongest
  wins = _btl_wins(rng, true, 200)
  res = stats.rank_centrality(jnp.asarray(wins, dtype=jnp.float32))
  assert np.argsort(-np.asarray(res.scores)).tolist() == list(range(7))
  np.testing.assert_allclose(float(jnp.sum(res.scores)), 1.0, atol=1e-6)


def test_rank_centrality_matches_eigenvector_oracle(x64):
  rng = np.random.default_rng(7)
  n = 6
  wins = rng.integers(0, 5, size=(n, n)).astype(np.float64) + 1.0
  wins[0, 3] = wins[3, 0] = 0.0  # one unobserved pair
  np.fill_diagonal(wins, 0.0)
  res = stats.rank_centrality(jnp.asarray(wins))
  # oracle: the Negahban et al. transition matrix and numpy's left eigenvector for eigenvalue 1.
  games = wins + wins.T
  d_max = max(int(np.sum(games[i] > 0)) for i in range(n))
  P = np.where(games > 0, wins.T / np.where(games > 0, games, 1.0), 0.0) / d_max
  P += np.diag(1 - P.sum(axis=1))
  vals, vecs = np.linalg.eig(P.T)
  v = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
  np.testing.assert_allclose(np.asarray(res.scores), v / v.sum(), atol=1e-9)


def test_rank_centrality_unbeaten_agent_absorbs_mass():
  wins = jnp.array([[0.0, 2.0, 2.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
  res = stats.rank_centrality(wins)
  assert not bool(res.irreducible)
  np.testing.assert_allclose(np.asarray(res.scores), [1.0, 0.0, 0.0], atol=1e-6)


def test_validate_wins():
  stats.validate_wins(np.ones((3, 3)))
  with pytest.raises(ValueError, match="nonnegative"):
    stats.validate_wins(-np.ones((2, 2)))
  with pytest.raises(ValueError, match="NaN"):
    stats.validate_wins(np.full((2, 2), np.nan))
  with pytest.raises(ValueError, match="shape"):
    stats.validate_wins(np.ones((2, 3)))


# ----------------------------------------------------------------------------- transformations


def test_baselines_vmap_matches_loop():
  rng = np.random.default_rng(8)
  batch = np.stack([_btl_wins(rng, np.linspace(-1, 1, 5), 30) for _ in range(3)]).astype(np.float32)
  batch[2, :, 0] = 0.0  # one separable dataset in the batch
  wins = jnp.asarray(batch)
  for fn, field in [
    (stats.bradley_terry, "scores"),
    (stats.hodge_rank, "scores"),
    (stats.rank_centrality, "scores"),
    (stats.win_rate, "rates"),
  ]:
    batched = getattr(jax.jit(jax.vmap(fn))(wins), field)
    looped = np.stack([np.asarray(getattr(fn(w), field)) for w in wins])
    np.testing.assert_allclose(np.asarray(batched), looped, atol=2e-5, err_msg=fn.__name__)
  flags = jax.vmap(stats.bradley_terry)(wins)
  assert np.asarray(flags.separable).tolist() == [False, False, True]
  assert np.all(np.asarray(flags.converged))


def test_public_names_import():
  for name in stats.__all__:
    assert getattr(stats, name) is not None, name
