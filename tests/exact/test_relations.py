"""Hard solutions of Boolean relations vs networkx, brute force and the majority solutions."""

import itertools

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest

from ste_jax.exact import (
  condensation_tiers,
  kings_in_relation,
  reach_all,
  top_cycle,
  uncovered_in_relation,
  uncovered_set,
)
from ste_jax.ops import batching_mode
from tests import oracles

FUNCTIONS = [reach_all, uncovered_in_relation, condensation_tiers]
# One compilation per shape (eager calls of top_cycle / uncovered_set compile op by op).
JITTED = {fn: jax.jit(fn) for fn in FUNCTIONS + [top_cycle, uncovered_set]}


# ------------------------------------------------------------------------- generators and oracles
def random_relation(rng, n, kind):
  """A random Boolean relation with a cleared diagonal.

  ``"tournament"``: exactly one direction per pair. ``"ties"``: complete, some pairs both ways.
  ``"partial"``: 30-70% of the pairs have no edge either way, the others one way or (rarely) both.
  """
  E = np.zeros((n, n), bool)
  missing = rng.uniform(0.3, 0.7)
  for a, b in itertools.combinations(range(n), 2):
    u = rng.random()
    if kind == "partial" and u < missing:
      continue
    if kind != "tournament" and rng.random() < 0.2:
      E[a, b] = E[b, a] = True
    elif rng.random() < 0.5:
      E[a, b] = True
    else:
      E[b, a] = True
  return E


nx_reach_all = oracles.nx_reach_all


def nx_tiers(E):
  """1 + the number of components on the longest chain above each agent, by networkx."""
  C = nx.condensation(oracles.nx_digraph(E))
  depth = {}
  for c in nx.topological_sort(C):
    depth[c] = 1 + max((depth[p] for p in C.predecessors(c)), default=0)
  tiers = np.zeros(E.shape[0], np.int32)
  for c, members in C.nodes(data="members"):
    tiers[list(members)] = depth[c]
  return tiers


def brute_uncovered(S):
  """c covers a iff S[c, a] and S[c, b] for every b != a, c with S[a, b]."""
  n = S.shape[0]
  covered = np.zeros(n, bool)
  for a, c in itertools.permutations(range(n), 2):
    if S[c, a] and all(S[c, b] for b in range(n) if b not in (a, c) and S[a, b]):
      covered[a] = True
  return ~covered


def check_all(E):
  np.testing.assert_array_equal(JITTED[reach_all](E), nx_reach_all(E))
  np.testing.assert_array_equal(JITTED[uncovered_in_relation](E), brute_uncovered(E))
  np.testing.assert_array_equal(JITTED[condensation_tiers](E), nx_tiers(E))


# ------------------------------------------------------------------------- oracles
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 20])
@pytest.mark.parametrize("kind", ["tournament", "ties", "partial"])
def test_against_networkx_and_brute_force(n, kind):
  rng = np.random.default_rng(100 * n + len(kind))
  for _ in range(6):
    E = random_relation(rng, n, kind)
    check_all(E)
    if kind != "partial":
      assert np.asarray(JITTED[reach_all](E)).any()


def test_structured_relations():
  n = 20
  ladder = np.zeros((n, n), bool)
  ladder[np.arange(1, n), np.arange(n - 1)] = True  # i + 1 -> i: only n - 1 reaches everyone
  with_cycle = ladder.copy()
  with_cycle[0, 1] = with_cycle[0, 2] = True  # 0 <-> 1 and 0 -> 2: one component {0, 1, 2}
  isolated = ladder.copy()
  isolated[n - 1, n - 2] = False  # a ladder on n - 1 agents and an isolated agent
  sources = np.zeros((n, n), bool)
  sources[:3, 3:] = True  # three sources beating everyone else, no edges among them
  empty, full = np.zeros((n, n), bool), np.ones((n, n), bool)
  for E in [ladder, ladder.T, with_cycle, isolated, sources, empty, full]:
    check_all(E)
  np.testing.assert_array_equal(JITTED[reach_all](ladder), np.arange(n) == n - 1)
  np.testing.assert_array_equal(JITTED[condensation_tiers](ladder), n - np.arange(n))
  assert not np.asarray(JITTED[reach_all](isolated)).any()
  np.testing.assert_array_equal(JITTED[condensation_tiers](sources), 1 + (np.arange(n) >= 3))
  np.testing.assert_array_equal(JITTED[condensation_tiers](empty), np.ones(n))


# ------------------------------------------------------------------------- majority relations
@pytest.mark.parametrize("n", [3, 8, 20, 40])
def test_majority_relations_match_tournament_solutions(n):
  rng = np.random.default_rng(n)
  for tie_prob in [0.0, 0.3]:
    for _ in range(4):
      P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
      weak, strict = P >= 0.5, P > 0.5
      tc = np.asarray(JITTED[top_cycle](P))
      np.testing.assert_array_equal(JITTED[reach_all](weak), tc)
      np.testing.assert_array_equal(JITTED[uncovered_in_relation](strict), JITTED[uncovered_set](P))
      tiers = np.asarray(JITTED[condensation_tiers](weak))
      np.testing.assert_array_equal(tiers == 1, tc)
      rest = ~tc
      if rest.any():  # tier 2 is the Smith set of the agents outside tier 1
        np.testing.assert_array_equal(tiers[rest] == 2, oracles.nx_top_cycle(P[np.ix_(rest, rest)]))
      # A complete relation's condensation is a chain: tiers are 1..k with no gaps.
      np.testing.assert_array_equal(np.unique(tiers), np.arange(1, tiers.max() + 1))


def test_planted_cycle_is_tier_one():
  rng = np.random.default_rng(5)
  P, mask = oracles.planted_cycle_tournament(rng, 40, 7)
  np.testing.assert_array_equal(JITTED[reach_all](P >= 0.5), mask)
  np.testing.assert_array_equal(JITTED[condensation_tiers](P >= 0.5) == 1, mask)


# ------------------------------------------------------------------------- transformations
def test_jit_equals_eager_and_vmap_equals_loop():
  rng = np.random.default_rng(7)
  Es = np.stack([random_relation(rng, 9, kind) for kind in ["tournament", "ties", "partial"] * 2])
  for fn in FUNCTIONS:
    single = np.stack([np.asarray(fn(E)) for E in Es])
    np.testing.assert_array_equal(np.stack([np.asarray(JITTED[fn](E)) for E in Es]), single)
    np.testing.assert_array_equal(jax.jit(jax.vmap(fn))(Es), single)
    # Leading batch axes.
    np.testing.assert_array_equal(fn(Es.reshape(2, 3, 9, 9)), single.reshape(2, 3, 9))


def test_accelerator_batch_axis_equals_loop():
  """The batch-axis path that vmap_by_platform takes off the CPU, run on the CPU."""
  rng = np.random.default_rng(8)
  Es = np.stack([random_relation(rng, 9, kind) for kind in ["tournament", "ties", "partial"] * 2])
  expected = {fn: np.stack([np.asarray(JITTED[fn](E)) for E in Es]) for fn in FUNCTIONS}
  with batching_mode("vectorize"):
    for fn in FUNCTIONS:
      np.testing.assert_array_equal(jax.vmap(fn)(Es), expected[fn])


def test_under_x64(x64):
  rng = np.random.default_rng(11)
  E = random_relation(rng, 8, "partial")
  np.testing.assert_array_equal(reach_all(E), nx_reach_all(E))
  np.testing.assert_array_equal(uncovered_in_relation(E), brute_uncovered(E))
  tiers = condensation_tiers(E)
  assert tiers.dtype == jnp.int32
  np.testing.assert_array_equal(tiers, nx_tiers(E))


# ------------------------------------------------------------------------- edge cases and errors
def test_one_and_two_agents():
  for diagonal in [False, True]:  # the diagonal is ignored
    E = np.full((1, 1), diagonal)
    assert reach_all(E).tolist() == [True]
    assert uncovered_in_relation(E).tolist() == [True]
    assert condensation_tiers(E).tolist() == [1]
  win = np.array([[False, True], [False, False]])
  assert reach_all(win).tolist() == [True, False]
  assert uncovered_in_relation(win).tolist() == [True, False]
  assert condensation_tiers(win).tolist() == [1, 2]
  both = np.array([[True, True], [True, True]])
  assert reach_all(both).tolist() == [True, True]
  assert uncovered_in_relation(both).tolist() == [False, False]  # each covers the other
  assert condensation_tiers(both).tolist() == [1, 1]
  none = np.zeros((2, 2), bool)
  assert reach_all(none).tolist() == [False, False]
  assert uncovered_in_relation(none).tolist() == [True, True]
  assert condensation_tiers(none).tolist() == [1, 1]


def test_empty_relation_shape():
  assert reach_all(np.zeros((3, 0, 0), bool)).shape == (3, 0)
  assert condensation_tiers(np.zeros((0, 0), bool)).shape == (0,)


@pytest.mark.parametrize(
  "fn, name", [(reach_all, "E"), (uncovered_in_relation, "S"), (condensation_tiers, "E")]
)
def test_bad_input_raises_naming_argument(fn, name):
  with pytest.raises(ValueError, match=f"{name} must be a square"):
    fn(np.zeros((3, 4), bool))
  with pytest.raises(ValueError, match=f"{name} must be a square"):
    fn(np.zeros(3, bool))
  with pytest.raises(TypeError, match=f"{name} must be a Boolean relation"):
    fn(np.full((3, 3), 0.7))


@pytest.mark.parametrize("kind", ["tournament", "ties", "partial"])
def test_kings_against_networkx_and_landau(kind):
  """Kings = agents at distance <= 2 from everyone (networkx shortest paths); on tournaments the
  uncovered set (Landau's theorem, brute-force covering); monotone: adding edges keeps every
  king."""
  rng = np.random.default_rng(7)
  for n in (1, 2, 3, 5, 8, 13):
    E = random_relation(rng, n, kind)
    G = oracles.nx_digraph(E)
    expected = np.array(
      [len(nx.single_source_shortest_path_length(G, a, cutoff=2)) == n for a in range(n)]
    )
    got = np.asarray(kings_in_relation(E))
    np.testing.assert_array_equal(got, expected)
    if kind == "tournament":
      P = np.where(E, 1.0, np.where(E.T, 0.0, 0.5))
      np.testing.assert_array_equal(got, oracles.brute_uncovered_set(P))
    more = E | (rng.uniform(size=(n, n)) < 0.2)
    assert np.all(np.asarray(kings_in_relation(more)) >= got)
  with pytest.raises(ValueError, match="E must be a square"):
    kings_in_relation(np.zeros((3, 4), bool))
