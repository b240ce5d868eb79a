"""Vote robustness of Top-Cycle membership against brute force and networkx oracles."""

import itertools

import jax
import networkx as nx
import numpy as np
import pytest

from ste_jax import InputError, OptionError
from ste_jax.data import Comparisons, pair_counts
from ste_jax.evaluate import PosteriorEdgeEstimator, WinRateEstimator
from ste_jax.evaluate._robustness import decisive_wins, vote_robustness

THRESHOLD = {"winrate": 0, "posterior": 1}


def random_comparisons(rng, n, max_votes, p_tie=0.25):
  a, b, o = [], [], []
  for i, j in itertools.combinations(range(n), 2):
    for _ in range(rng.integers(0, max_votes + 1)):
      a.append(i)
      b.append(j)
      o.append(0.5 if rng.random() < p_tie else float(rng.integers(0, 2)))
  if not a:  # at least one row
    a, b, o = [0], [1], [1.0]
  return Comparisons.from_arrays(a, b, o, agents=[f"m{i}" for i in range(n)])


def reach_all(edge):
  """(..., n) bool: agents reaching every agent, by repeated squaring of the closure."""
  n = edge.shape[-1]
  reach = edge | np.eye(n, dtype=bool)
  for _ in range(int(np.ceil(np.log2(max(n, 2))))):
    reach = np.einsum("...ij,...jk->...ik", reach.astype(np.int32), reach.astype(np.int32)) > 0
  return reach.all(axis=-1)


def relation(W, estimator):
  return (W - np.swapaxes(W, -1, -2)) >= THRESHOLD[estimator]


def brute_force(W, estimator):
  """Per agent, the fewest reversed comparisons changing its membership (-1: none), by
  enumerating every set of reversals: per pair, how many of each side's wins are reversed."""
  n = W.shape[0]
  pairs = list(itertools.combinations(range(n), 2))
  options = [[(f, g) for f in range(W[i, j] + 1) for g in range(W[j, i] + 1)] for i, j in pairs]
  combos = np.array(list(itertools.product(*options)))  # (K, pairs, 2)
  f, g = combos[..., 0], combos[..., 1]
  new = np.broadcast_to(W, (len(combos), n, n)).copy()
  rows = np.array([p[0] for p in pairs])
  cols = np.array([p[1] for p in pairs])
  new[:, rows, cols] += g - f
  new[:, cols, rows] += f - g
  cost = (f + g).sum(axis=1)
  base = reach_all(relation(W, estimator))
  changed = reach_all(relation(new, estimator)) != base  # (K, n)
  out = np.full(n, -1)
  for x in range(n):
    if changed[:, x].any():
      out[x] = cost[changed[:, x]].min()
  return out, base


def apply_flips(W, flips):
  W = W.copy()
  for winner, loser, k in flips:
    assert W[winner, loser] >= k
    W[winner, loser] -= k
    W[loser, winner] += k
  return W


def check_against_brute_force(c, estimator):
  r = vote_robustness(c, estimator=estimator)
  W = decisive_wins(pair_counts(c))
  expected, base = brute_force(W, estimator)
  np.testing.assert_array_equal(r.members, base)
  for x in range(W.shape[0]):
    if not base.any():  # empty Top Cycle (posterior): joining is not computed
      assert r.flips_to_change[x] == -1 and r.flips[x] == ()
      continue
    assert r.flips_to_change[x] == expected[x], (x, W, estimator)
    if expected[x] >= 0:
      assert sum(k for _, _, k in r.flips[x]) == expected[x]
      after = reach_all(relation(apply_flips(W, r.flips[x]), estimator))
      assert after[x] != base[x]
    else:
      assert r.flips[x] == ()


@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_brute_force_small(estimator):
  rng = np.random.default_rng(0)
  for _ in range(12):
    n = int(rng.integers(3, 5))
    check_against_brute_force(random_comparisons(rng, n, max_votes=3), estimator)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_brute_force_five_agents(estimator):
  rng = np.random.default_rng(1)
  for _ in range(20):
    check_against_brute_force(random_comparisons(rng, 5, max_votes=2), estimator)
  for _ in range(5):
    check_against_brute_force(random_comparisons(rng, 6, max_votes=1), estimator)


@pytest.mark.parametrize("tie_policy", ["half", "drop"])
def test_relation_matches_estimators(tie_policy):
  rng = np.random.default_rng(2)
  for _ in range(5):
    c = random_comparisons(rng, 6, max_votes=3)
    for est in (
      WinRateEstimator(tie_policy=tie_policy),
      PosteriorEdgeEstimator(tie_policy=tie_policy),
    ):
      edges = est.fit(jax.random.key(0), c).edges
      weak, _ = est.hard_relations(edges)
      top, _ = est.hard_memberships(edges)
      W = decisive_wins(pair_counts(c, tie_policy=tie_policy), tie_policy)
      np.testing.assert_array_equal(relation(W, est.name) & ~np.eye(6, dtype=bool), weak)
      r = vote_robustness(c, estimator=est)
      np.testing.assert_array_equal(r.members, np.asarray(top))


def networkx_oracle(W, estimator):
  n = W.shape[0]
  c = THRESHOLD[estimator]
  M = W - W.T
  G = nx.DiGraph()
  G.add_nodes_from(range(n))
  C = nx.DiGraph()
  C.add_nodes_from(range(n))
  for a in range(n):
    for b in range(n):
      if a == b:
        continue
      if M[a, b] >= c:
        G.add_edge(a, b)
        k = (M[a, b] - c) // 2 + 1
        C.add_edge(a, b, capacity=k if k <= W[a, b] else 10**9)
  top = [x for x in range(n) if len(nx.descendants(G, x)) == n - 1]
  H = nx.DiGraph()  # reversed graph with join costs
  for a in range(n):
    for b in range(n):
      if a != b:
        if M[a, b] >= c:
          H.add_edge(b, a, weight=0)
        elif (c - M[a, b] + 1) // 2 <= W[b, a]:
          H.add_edge(b, a, weight=(c - M[a, b] + 1) // 2)
  dist = nx.multi_source_dijkstra_path_length(H, top) if top else {}
  out = np.full(n, -1)
  for x in range(n):
    if x in top:
      value = min(nx.minimum_cut_value(C, x, t) for t in range(n) if t != x)
      out[x] = value if value < 10**9 else -1
    elif x in dist:
      out[x] = dist[x]
  return out, top


@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_networkx_larger(estimator):
  rng = np.random.default_rng(3)
  for n in (10, 16, 24):
    c = random_comparisons(rng, n, max_votes=6, p_tie=0.1)
    r = vote_robustness(c, estimator=estimator)
    W = decisive_wins(pair_counts(c))
    expected, top = networkx_oracle(W, estimator)
    assert np.flatnonzero(r.members).tolist() == top
    np.testing.assert_array_equal(r.flips_to_change, expected)
    for x in np.flatnonzero(r.flips_to_change >= 0):
      after = reach_all(relation(apply_flips(W, r.flips[x]), estimator))
      assert after[x] != r.members[x]


def test_hand_example_and_frame():
  # a beat b twice, b beat c, c beat a: a 3-cycle; d lost to a three times, to b and c once.
  c = Comparisons.from_arrays(
    [0, 0, 1, 2, 0, 0, 0, 1, 2],
    [1, 1, 2, 0, 3, 3, 3, 3, 3],
    [1.0] * 9,
    agents=["a", "b", "c", "d"],
  )
  r = vote_robustness(c)
  assert r.members.tolist() == [True, True, True, False]
  # d joins by reversing its loss to b (or to c): margin -1 -> +1. Each member leaves with one
  # reversal, e.g. c by losing its only win over a member (over a): {c, d} then has no way out.
  assert r.flips_to_change.tolist() == [1, 1, 1, 1]
  assert r.flips[3] in (((1, 3, 1),), ((2, 3, 1),))
  assert sum(k for *_, k in r.flips[2]) == 1
  frame = r.to_frame()
  assert frame.loc["d", "flips"] in ("b>d x1", "c>d x1")
  assert frame["member"].tolist() == [True, True, True, False]
  # posterior: an unobserved pair is no edge; here every pair was compared, so the same relation
  # except ties (none): the same counts.
  p = vote_robustness(c, estimator="posterior")
  assert p.flips_to_change.tolist() == [1, 1, 1, 1]


def test_errors():
  c = Comparisons.from_arrays([0], [1], [0.3])
  with pytest.raises(InputError, match="whole numbers"):
    vote_robustness(c)
  with pytest.raises(OptionError, match="estimator"):
    vote_robustness(Comparisons.from_arrays([0], [1], [1.0]), estimator="model")
  with pytest.raises(OptionError, match="missing"):
    vote_robustness(
      Comparisons.from_arrays([0], [1], [1.0]), estimator=WinRateEstimator(missing=0.4)
    )
