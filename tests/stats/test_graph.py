"""Graph searches of the identifiability diagnostics (``ste_jax.stats._graph``) against networkx."""

import jax
import networkx as nx
import numpy as np
import pytest

from ste_jax.stats import comparison_diagnostics
from ste_jax.stats._graph import (
  component_labels,
  connected_components,
  is_strongly_connected,
  reached_from,
  strongly_connected_within_components,
)


def _graphs():
  """Random digraphs of several densities and sizes, long paths (large diameter) and edge cases."""
  rng = np.random.default_rng(0)
  out = [np.zeros((1, 1), bool), np.zeros((2, 2), bool), np.array([[0, 1], [0, 0]], bool)]
  for n in (12, 40):
    for density in (0.02, 0.08, 0.3):
      out.append((rng.random((n, n)) < density) & ~np.eye(n, dtype=bool))
  for n in (40,):  # a shuffled directed path and a shuffled cycle: diameter n - 1
    perm = rng.permutation(n)
    path = np.zeros((n, n), bool)
    path[perm[:-1], perm[1:]] = True
    out.append(path)
    cycle = path.copy()
    cycle[perm[-1], perm[0]] = True
    out.append(cycle)
  return out


GRAPHS = _graphs()
# Compiled once per shape for every test here.
_labels, _same, _reach = (
  jax.jit(component_labels),
  jax.jit(connected_components),
  jax.jit(reached_from),
)
_within, _strong = jax.jit(strongly_connected_within_components), jax.jit(is_strongly_connected)


@pytest.mark.parametrize("A", GRAPHS, ids=[f"g{i}" for i in range(len(GRAPHS))])
def test_graph_searches_match_networkx(A):
  n = A.shape[0]
  G = nx.DiGraph()
  G.add_nodes_from(range(n))
  G.add_edges_from(zip(*np.nonzero(A)))
  labels = np.asarray(_labels(A))
  expect = np.empty(n, np.int64)
  for comp in nx.weakly_connected_components(G):
    expect[list(comp)] = min(comp)
  np.testing.assert_array_equal(labels, expect)
  np.testing.assert_array_equal(np.asarray(_same(A)), expect[:, None] == expect[None, :])
  rng = np.random.default_rng(n)
  sources = rng.random(n) < 0.2
  reach = set(np.flatnonzero(sources)).union(
    *(nx.descendants(G, s) for s in np.flatnonzero(sources))
  )
  np.testing.assert_array_equal(np.asarray(_reach(A, sources)), np.isin(np.arange(n), list(reach)))
  within = all(nx.is_strongly_connected(G.subgraph(c)) for c in nx.weakly_connected_components(G))
  assert bool(_within(A)) == within
  assert bool(_strong(A)) == nx.is_strongly_connected(G)


@pytest.mark.parametrize("A", GRAPHS[3::2], ids=[f"g{i}" for i in range(3, len(GRAPHS), 2)])
def test_bradley_terry_existence_condition_matches_networkx(A):
  wins = A * np.random.default_rng(A.shape[0]).integers(1, 4, size=A.shape)
  G = nx.DiGraph()
  G.add_nodes_from(range(A.shape[0]))
  G.add_edges_from(zip(*np.nonzero(A)))
  connected, separable = comparison_diagnostics(wins.astype(np.float32))
  assert bool(connected) == nx.is_weakly_connected(G)
  assert bool(separable) == (
    not all(nx.is_strongly_connected(G.subgraph(c)) for c in nx.weakly_connected_components(G))
  )


def test_bad_shapes_name_the_argument():
  with pytest.raises(ValueError, match="adjacency must have shape"):
    component_labels(np.zeros(3))
  with pytest.raises(ValueError, match="sources must have shape"):
    reached_from(np.zeros((3, 3)), np.zeros(2, bool))
