"""Witnesses of hard core membership (majority paths, covers) against networkx / brute force."""

import networkx as nx
import numpy as np
import pytest

from ste_jax import exact
from tests.oracles import brute_uncovered_set, nx_top_cycle, random_tournament


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("tie_prob", [0.0, 0.3])
def test_reach_tree_and_covers_match_oracles(seed, tie_prob):
  rng = np.random.default_rng(seed)
  n = int(rng.integers(2, 9))
  P = np.asarray(random_tournament(rng, n, tie_prob=tie_prob))
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  weak = (P >= 0.5) & ~np.eye(n, dtype=bool)
  G = nx.DiGraph()
  G.add_nodes_from(range(n))
  G.add_edges_from(zip(*np.nonzero(weak)))
  S = nx.DiGraph()
  S.add_nodes_from(range(n))
  S.add_edges_from(zip(*np.nonzero(strict)))
  tc, uc = nx_top_cycle(P), brute_uncovered_set(P)
  for a in range(n):
    parent, via_tie = exact.majority_reach_tree(P, a)
    reached = exact.reached_agents(parent, a)
    assert set(np.flatnonzero(reached)) == nx.descendants(G, a) | {a}
    assert reached.all() == tc[a]
    for v in range(n):
      path = exact.witness_path(parent, a, v)
      if not reached[v]:
        assert path == []
        continue
      assert path[0] == a and path[-1] == v
      for x, y in zip(path, path[1:]):
        assert strict[x, y] or (via_tie[y] and P[x, y] == 0.5)
      if v in nx.descendants(S, a):  # reachable by strict wins: no tie used
        assert not via_tie[path[1:]].any()
    cov = exact.coverers(P, a)
    assert (not cov.any()) == uc[a]
    for c in np.flatnonzero(cov):
      assert strict[c, a] and all(strict[c, b] for b in np.flatnonzero(strict[a]))
    ref = exact.cover_refutations(P, a)
    for c in range(n):
      if strict[c, a] and not cov[c]:
        b = ref[c]
        assert strict[a, b] and not strict[c, b]
      else:
        assert ref[c] == -1


def test_docstring_cycle():
  P = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])
  parent, via_tie = exact.majority_reach_tree(P, 0)
  assert parent.tolist() == [-1, 0, 1] and not via_tie.any()
  assert exact.witness_path(parent, 0, 2) == [0, 1, 2]
  with pytest.raises(ValueError, match="out of range"):
    exact.majority_reach_tree(P, 3)
