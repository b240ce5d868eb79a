"""Maximal-lottery witnesses of ``ste-jax explain`` against a SciPy LP oracle."""

import numpy as np
import pytest

from ste_jax.evaluate._witnesses import lottery_witnesses, witness_report
from tests import oracles
from tests.exact.test_lotteries import lp_essential


@pytest.mark.parametrize("seed", range(4))
def test_lottery_witnesses_match_the_lp_supports_and_margins_certify_exclusion(seed):
  rng = np.random.default_rng(seed)
  n = 7
  P = np.asarray(oracles.random_tournament(rng, n), dtype=np.float64)
  agents = [f"a{i}" for i in range(n)]
  for name, M in (("bipartisan", np.sign(P - P.T)), ("essential", P - P.T)):
    support = lp_essential(M)
    for i in range(n):
      lot = next(w for w in lottery_witnesses(P, agents, i) if w["set"] == name)
      assert lot["optimal"]
      assert lot["in"] == support[i]
      mix = np.zeros(n)
      for e in lot["lottery"]:
        mix[agents.index(e["agent"])] = e["p"]
      np.testing.assert_allclose(mix.sum(), 1.0, atol=1e-5)
      assert (mix @ M).min() >= -1e-5  # the lottery shown is a maximal lottery
      np.testing.assert_allclose(lot["margin"], (mix @ M)[i], atol=1e-5)
      # A tournament's maximal lottery is unique and strictly complementary: every agent outside
      # the support is beaten by it in expectation, so each exclusion has its witness.
      assert lot["witness"] == (not support[i])


def test_witness_report_carries_the_lotteries_for_small_n():
  P = np.array(
    [[0.5, 0.8, 0.3, 0.9], [0.2, 0.5, 0.7, 0.9], [0.7, 0.3, 0.5, 0.9], [0.1, 0.1, 0.1, 0.5]]
  )
  w = witness_report(P, np.ones((4, 4)), list("wxyz"), 3)
  assert [(lot["set"], lot["in"], lot["witness"]) for lot in w["lotteries"]] == [
    ("bipartisan", False, True),
    ("essential", False, True),
  ]


@pytest.mark.parametrize("seed", range(3))
def test_covering_set_witness_names_a_member_covering_each_outsider(seed):
  """Membership = the brute-force minimal covering set; each outsider's coverer is a member that
  beats it and every member it beats (checked here from P, not from the witness's own fields)."""
  from ste_jax.evaluate._witnesses import covering_set_witness
  from tests.exact.test_lotteries import brute_minimal_covering

  rng = np.random.default_rng(seed)
  n = 8
  P = np.asarray(oracles.random_tournament(rng, n), dtype=np.float64)
  agents = [f"a{i}" for i in range(n)]
  strict = P > 0.5
  expect = np.asarray(brute_minimal_covering(P), dtype=bool)
  for i in range(n):
    w = covering_set_witness(P, agents, i)
    assert w["set"] == [agents[j] for j in np.flatnonzero(expect)]
    assert w["in"] == expect[i]
    if expect[i]:
      assert w["coverer"] is None
      continue
    c = agents.index(w["coverer"]["agent"])
    assert expect[c] and strict[c, i]
    assert all(strict[c, b] for b in np.flatnonzero(expect & strict[i]))
    assert sorted(e["agent"] for e in w["coverer"]["also_beats"]) == sorted(
      agents[b] for b in np.flatnonzero(expect & strict[i])
    )


def _strict_closure(strict):
  """Reflexive-transitive closure of a Boolean relation by Warshall's algorithm (brute force)."""
  R = strict.copy() | np.eye(strict.shape[0], dtype=bool)
  for k in range(R.shape[0]):
    R |= R[:, k : k + 1] & R[k : k + 1, :]
  return R


def _brute_schwartz(strict):
  """Union of the minimal undominated sets (no outsider strictly beats a member), by enumeration."""
  n = strict.shape[0]
  undominated = []
  for mask in range(1, 1 << n):
    inside = np.array([(mask >> i) & 1 for i in range(n)], dtype=bool)
    if not (strict[~inside][:, inside]).any():
      undominated.append(mask)
  minimal = [m for m in undominated if not any(s != m and s & m == s for s in undominated)]
  return np.array([any((m >> i) & 1 for m in minimal) for i in range(n)], dtype=bool)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tie_prob", [0.0, 0.3, 0.6])
def test_schwartz_set_is_the_union_of_minimal_undominated_sets_and_the_reach_characterization(
  seed, tie_prob
):
  """The witness relies on ``x`` out iff some ``y`` strictly reaches ``x`` and not back."""
  from ste_jax import exact

  rng = np.random.default_rng(seed)
  n = int(rng.integers(1, 9))
  P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  R = _strict_closure(strict)
  got = np.asarray(exact.schwartz_set(P))
  np.testing.assert_array_equal(got, _brute_schwartz(strict))
  np.testing.assert_array_equal(got, ~np.any(R & ~R.T, axis=0))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("tie_prob", [0.0, 0.3, 0.6, 0.9])
def test_schwartz_set_witness_is_a_member_with_a_strict_chain_that_is_not_reached_back(
  seed, tie_prob
):
  """Each outsider's witness: a member ``y``, a chain of strict wins ``y -> ... -> x`` (``P`` and
  games read off the matrices) and no strict chain from ``x`` back to ``y`` (brute-force
  closure)."""
  from ste_jax import exact
  from ste_jax.evaluate._witnesses import schwartz_set_witness

  rng = np.random.default_rng(100 + seed)
  n = int(rng.integers(2, 13))
  P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
  games = rng.integers(1, 20, size=(n, n)).astype(np.float64)
  games = games + games.T
  agents = [f"a{i}" for i in range(n)]
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  R = _strict_closure(strict)
  expect = np.asarray(exact.schwartz_set(P))
  for x in range(n):
    w = schwartz_set_witness(P, games, agents, x)
    assert w["set"] == [agents[j] for j in np.flatnonzero(expect)]
    assert w["in"] == expect[x]
    if expect[x]:
      assert w["chain"] is None
      continue
    chain = w["chain"]
    path = [agents.index(s["agent"]) for s in chain]
    y = path[0]
    assert expect[y] and path[-1] == x and len(path) >= 2 and len(set(path)) == len(path)
    for u, v, s in zip(path, path[1:], chain[1:]):
      assert P[u, v] > 0.5 and s["p"] == P[u, v] and s["games"] == games[u, v] and s["tie"] is False
    assert R[y, x] and not R[x, y]


def test_witness_report_carries_the_schwartz_witness_also_for_the_posterior_conversion():
  # 0 > 1 > 2, 0 ties 3 and 3 ties everyone: the Smith set is {0, 3, 1, 2}, the Schwartz set {0, 3}.
  P = np.array(
    [[0.5, 0.8, 0.5, 0.5], [0.2, 0.5, 0.7, 0.5], [0.5, 0.3, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]]
  )
  for ties_connect in (True, False):
    w = witness_report(P, np.full((4, 4), 10.0), list("wxyz"), 2, ties_connect=ties_connect)
    assert w["schwartz"]["set"] == ["w", "z"] and not w["schwartz"]["in"]
    assert [s["agent"] for s in w["schwartz"]["chain"]] == ["w", "x", "y"]
    assert [s["p"] for s in w["schwartz"]["chain"][1:]] == [0.8, 0.7]
    assert witness_report(P, np.ones((4, 4)), list("wxyz"), 3, ties_connect=ties_connect)[
      "schwartz"
    ]["in"]
