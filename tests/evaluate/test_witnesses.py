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
  P = np.array([[0.5, 0.8, 0.3, 0.9], [0.2, 0.5, 0.7, 0.9], [0.7, 0.3, 0.5, 0.9], [0.1, 0.1, 0.1, 0.5]])
  w = witness_report(P, np.ones((4, 4)), list("wxyz"), 3)
  assert [(lot["set"], lot["in"], lot["witness"]) for lot in w["lotteries"]] == [
      ("bipartisan", False, True), ("essential", False, True)]


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
        agents[b] for b in np.flatnonzero(expect & strict[i]))
