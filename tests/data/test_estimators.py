"""Tests for the posterior-edge estimator and weighted tournaments (scipy / NumPy oracles)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from ste_jax.data import (
  Comparisons,
  WeightedTournament,
  pair_counts,
  posterior_edges,
  weighted_soft_majority_edges,
  weighted_tournament,
  win_rate_tournament,
)


def _scipy_posterior_edges(w, alpha=0.5):
  """Oracle: D_ab = max(0, 2 Pr(theta > 1/2) - 1), theta ~ Beta(alpha + w_ab, alpha + w_ba)."""
  n = w.shape[0]
  d = np.zeros((n, n))
  for i in range(n):
    for j in range(n):
      if i != j and w[i, j] + w[j, i] > 0:
        d[i, j] = max(0.0, 2 * stats.beta.sf(0.5, alpha + w[i, j], alpha + w[j, i]) - 1)
  return d


def _random_wins(rng, n=7, high=30):
  w = rng.integers(0, high, size=(n, n)).astype(np.float64)
  w[rng.random((n, n)) < 0.2] = 0  # some unobserved directions / pairs
  w[0, 1], w[1, 0] = 4.5, 2.0  # fractional counts (half-wins from ties, weights)
  w[2, 3], w[3, 2] = 0.0, 0.0  # an unobserved pair
  np.fill_diagonal(w, 0)
  return w


@pytest.mark.parametrize("prior", [(0.5, 0.5), (1.0, 1.0)])
def test_posterior_edges_match_scipy_float64(rng, x64, prior):
  w = _random_wins(rng)
  d = posterior_edges(jnp.asarray(w), prior=prior)
  assert d.dtype == jnp.float64
  np.testing.assert_allclose(d, _scipy_posterior_edges(w, prior[0]), rtol=0, atol=1e-10)


def test_posterior_edges_large_counts_float64(x64):
  w = np.array([[0, 5000, 1200], [4900, 0, 1], [1100, 0, 0]], dtype=np.float64)
  np.testing.assert_allclose(
    posterior_edges(jnp.asarray(w)), _scipy_posterior_edges(w), rtol=0, atol=1e-9
  )


def test_posterior_edges_match_scipy_float32(rng):
  w = _random_wins(rng, high=50)
  d = posterior_edges(jnp.asarray(w, dtype=jnp.float32))
  assert d.dtype == jnp.float32
  # float32: up to ~1.4e-5 below 25 games per pair, ~3e-7 above (precision note in the docstring)
  np.testing.assert_allclose(d, _scipy_posterior_edges(w), rtol=0, atol=2e-5)


def _count_grid():
  """(w_ab, w_ba) from 0 to 10^6 games per pair: balanced, nearly balanced, lopsided, fractional."""
  pairs = [(0.0, 0.0), (0.0, 1e6), (1e6, 0.0), (0.5, 0.0), (1e6, 1e6 - 1), (1e6 - 0.5, 1e6)]
  for total in np.unique(np.concatenate([np.arange(0, 60, 0.5), np.geomspace(60, 2e6, 80)])):
    sd = np.sqrt(max(total, 1.0))
    for diff in [
      0.0,
      0.5,
      1.0,
      2.0,
      3.0,
      0.1 * sd,
      0.5 * sd,
      sd,
      1.7 * sd,
      3 * sd,
      6 * sd,
      0.45 * total,
      total,
    ]:
      if diff <= total:
        w_ab = np.round((total + diff) / 2 * 2) / 2  # integer or half-integer (half-wins from ties)
        pairs.append((w_ab, max(total - w_ab, 0.0)))
        pairs.append((w_ab + 0.3, max(total - w_ab, 0.0)))  # weighted (fractional) counts
  w = np.array(pairs, dtype=np.float64)
  return np.concatenate([w, w[:, ::-1]])  # both orientations


def _pair_edges(w, dtype, prior=(0.5, 0.5)):
  """posterior_edges on a batch of 2 x 2 count matrices, one per row (w_ab, w_ba) of ``w``."""
  m = np.zeros((len(w), 2, 2))
  m[:, 0, 1], m[:, 1, 0] = w[:, 0], w[:, 1]
  d = np.asarray(posterior_edges(jnp.asarray(m, dtype), prior=prior))
  assert d.dtype == dtype and np.isfinite(d).all()
  return d[:, 0, 1], d[:, 1, 0]


def _scipy_pair_edges(w, alpha=0.5):
  margin = stats.beta.sf(0.5, alpha + w[:, 0], alpha + w[:, 1]) - stats.beta.cdf(
    0.5, alpha + w[:, 0], alpha + w[:, 1]
  )
  margin = np.where(w[:, 0] == w[:, 1], 0.0, margin)
  return np.maximum(margin, 0.0), np.maximum(-margin, 0.0)


@pytest.mark.parametrize("prior", [(0.5, 0.5), (1.0, 1.0)])
def test_posterior_edges_accurate_in_float32_up_to_a_million_games(prior):
  """<= 1e-4 against scipy (float64) at any count up to 10^6 per pair; 1.3e-2 at 2e4 before."""
  w = _count_grid().astype(np.float32).astype(np.float64)  # the counts float32 can represent
  got_ab, got_ba = _pair_edges(w, np.float32, prior)
  ref_ab, ref_ba = _scipy_pair_edges(w, prior[0])
  err = np.maximum(np.abs(got_ab - ref_ab), np.abs(got_ba - ref_ba))
  assert err.max() <= 1e-4, (err.max(), w[np.argmax(err)])
  large = w.sum(axis=1) >= 100
  assert err[large].max() <= 2e-6  # the large-count expansion: float32 rounding only
  assert not ((got_ab > 0) & (got_ba > 0)).any()
  balanced = w[:, 0] == w[:, 1]
  assert (got_ab[balanced] == 0).all() and (got_ba[balanced] == 0).all()


@pytest.mark.parametrize("prior", [(0.5, 0.5), (1.0, 1.0)])
def test_posterior_edges_accurate_in_float64_up_to_a_million_games(x64, prior):
  w = _count_grid()
  got_ab, got_ba = _pair_edges(w, np.float64, prior)
  ref_ab, ref_ba = _scipy_pair_edges(w, prior[0])
  err = np.maximum(np.abs(got_ab - ref_ab), np.abs(got_ba - ref_ba))
  assert err.max() <= 1e-10, (err.max(), w[np.argmax(err)])


def test_posterior_edges_large_counts_antisymmetric_and_vmappable():
  rng = np.random.default_rng(7)
  w = rng.integers(0, 10**6, size=(4, 6, 6)).astype(np.float32)
  w[:, 0, 1] = w[:, 1, 0]  # a balanced large pair
  w[..., np.arange(6), np.arange(6)] = 0
  d = posterior_edges(jnp.asarray(w))
  np.testing.assert_array_equal(jax.vmap(posterior_edges)(jnp.asarray(w)), d)
  np.testing.assert_array_equal(
    posterior_edges(jnp.asarray(np.swapaxes(w, -1, -2))), np.swapaxes(d, -1, -2)
  )
  d = np.asarray(d)
  assert (d[:, 0, 1] == 0).all() and (d[:, 1, 0] == 0).all()
  assert not ((d > 0) & (np.swapaxes(d, -1, -2) > 0)).any()
  assert ((d >= 0) & (d <= 1)).all()


def test_posterior_edges_conventions():
  w = jnp.asarray(
    [[0, 1000, 7.5, 0], [1000, 0, 3, 0], [7.5, 0, 0, 0], [0, 0, 0, 0]], dtype=jnp.float32
  )
  d = np.asarray(posterior_edges(w))
  assert d[0, 1] == d[1, 0] == 0.0  # equal counts: exactly zero, even at large counts
  assert d[0, 2] == d[2, 0] == 0.0
  assert (d[3] == 0).all() and (d[:, 3] == 0).all()  # agent 3 never compared
  assert (np.diag(d) == 0).all()
  assert d[1, 2] > 0 and d[2, 1] == 0  # 3 wins to 0: one direction only
  assert ((d >= 0) & (d < 1)).all()
  assert not ((d > 0) & (d.T > 0)).any()
  # integer counts are accepted (default float dtype)
  d_int = posterior_edges(jnp.asarray([[0, 3], [0, 0]], dtype=jnp.int32))
  assert d_int.dtype == jnp.float32 and float(d_int[0, 1]) > 0


def test_posterior_edges_tie_handling(x64):
  # x beats y twice, two ties; x-z: one win each and three ties
  c = Comparisons.from_arrays(
    [0, 0, 1, 0, 0, 0, 2, 0, 0, 0],
    [1, 1, 0, 1, 2, 2, 0, 2, 2, 2],
    np.array([1, 1, 0.5, 0.5, 1, 0, 0.5, 0.5, 0.5, 0.5][:10]),
    agents=["x", "y", "z"],
  )
  d_half = np.asarray(posterior_edges(pair_counts(c)))  # default: a tie is half a win each
  expect = 2 * stats.beta.sf(0.5, 0.5 + 3, 0.5 + 1) - 1  # wins 2 + 2/2 = 3 vs 0 + 2/2 = 1
  np.testing.assert_allclose(d_half[0, 1], expect, atol=1e-12)
  d_drop = np.asarray(posterior_edges(pair_counts(c, tie_policy="drop").wins))
  np.testing.assert_allclose(d_drop[0, 1], 2 * stats.beta.sf(0.5, 2.5, 0.5) - 1, atol=1e-12)
  assert d_half[0, 2] == d_half[2, 0] == 0.0  # 1 + 4/2 each way
  assert d_drop[0, 2] == d_drop[2, 0] == 0.0


def test_posterior_edges_batch_jit_and_errors(rng):
  w = np.stack([_random_wins(rng, n=5) for _ in range(3)]).astype(np.float32)
  d = posterior_edges(jnp.asarray(w))
  assert d.shape == (3, 5, 5)
  for i in range(3):
    np.testing.assert_allclose(d[i], _scipy_posterior_edges(w[i]), atol=2e-5)
  jitted = jax.jit(posterior_edges, static_argnames="prior")(jnp.asarray(w))
  np.testing.assert_allclose(jitted, d, atol=1e-6)
  with pytest.raises(ValueError, match="symmetric"):
    posterior_edges(jnp.asarray(w), prior=(1.0, 2.0))
  with pytest.raises(ValueError, match="prior"):
    posterior_edges(jnp.asarray(w), prior=0.5)
  with pytest.raises(ValueError, match="square"):
    posterior_edges(jnp.ones((3, 4)))


# agents x, y, z: x beat y 3 times, y beat x once, z beat y twice (one tie), x-z never met
def _weighted_example():
  return Comparisons.from_arrays(
    [0, 0, 0, 1, 2, 2, 1], [1, 1, 1, 0, 1, 1, 2], [1, 1, 1, 1, 1, 1, 0.5], agents=["x", "y", "z"]
  )


def test_weighted_tournament_by_hand():
  c = _weighted_example()
  totals = np.array([[0, 4, 0], [4, 0, 3], [0, 3, 0]], dtype=np.float32)
  wt = weighted_tournament(c)
  assert isinstance(wt, WeightedTournament)
  np.testing.assert_array_equal(wt.W, totals)
  np.testing.assert_allclose(
    wt.P, [[0.5, 0.75, 0.5], [0.25, 0.5, 0.5 / 3], [0.5, 2.5 / 3, 0.5]], rtol=1e-6
  )
  np.testing.assert_array_equal(wt.P, win_rate_tournament(c))
  np.testing.assert_allclose(weighted_tournament(c, confidence="sqrt").W, np.sqrt(totals))
  np.testing.assert_allclose(weighted_tournament(c, confidence="normalized").W, totals / 4)
  drop = weighted_tournament(c, tie_policy="drop")
  np.testing.assert_array_equal(drop.W, [[0, 4, 0], [4, 0, 2], [0, 2, 0]])
  by_ctx = weighted_tournament(pair_counts(c, by_context=True), confidence="normalized")
  assert by_ctx.W.shape == (1, 3, 3)
  with pytest.raises(ValueError, match="confidence"):
    weighted_tournament(c, confidence="log")


def test_weighted_soft_majority_edges_formula():
  wt = weighted_tournament(_weighted_example())
  p, w = np.asarray(wt.P), np.asarray(wt.W)
  for tau in (0.5, 2.0):
    expect = 1 / (1 + np.exp(-w * (p - 0.5) / tau))
    np.fill_diagonal(expect, 0)
    np.testing.assert_allclose(weighted_soft_majority_edges(wt.P, wt.W, tau=tau), expect, rtol=1e-6)
  d = np.asarray(weighted_soft_majority_edges(wt.P, wt.W, tau=1.0))
  assert d[0, 2] == d[2, 0] == 0.5  # unobserved pair: no evidence either way
  # W_ab (P_ab - 1/2) = (w_ab - w_ba) / 2 with count weights: x-y margin 2 -> sigmoid(1)
  np.testing.assert_allclose(d[0, 1], 1 / (1 + np.exp(-1.0)), rtol=1e-6)
  ones = jnp.ones_like(wt.P)
  unweighted = 1 / (1 + np.exp(-(p - 0.5) / 0.3))
  np.fill_diagonal(unweighted, 0)
  np.testing.assert_allclose(
    weighted_soft_majority_edges(wt.P, ones, tau=0.3), unweighted, rtol=1e-6
  )
  with pytest.raises(ValueError, match="W must have"):
    weighted_soft_majority_edges(wt.P, jnp.ones((2, 2)), tau=1.0)


def test_weighted_edges_temperature_is_traced():
  wt = weighted_tournament(_weighted_example())
  traces = []

  @jax.jit
  def f(p, w, tau):
    traces.append(1)
    return weighted_soft_majority_edges(p, w, tau=tau)

  a = f(wt.P, wt.W, jnp.float32(0.5))
  b = f(wt.P, wt.W, jnp.float32(0.1))
  assert len(traces) == 1
  assert float(b[0, 1]) > float(a[0, 1])
  np.testing.assert_allclose(a, weighted_soft_majority_edges(wt.P, wt.W, tau=0.5), rtol=1e-6)
