"""Hard solutions vs the paper's examples, networkx, brute force and pref-voting."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ste_jax
from tests import oracles

EXAMPLE1 = np.array([[0.5, 0.7, 0.3], [0.3, 0.5, 0.7], [0.7, 0.3, 0.5]])
EXAMPLE2 = np.array(
  [[0.5, 0.8, 0.9, 0.85], [0.2, 0.5, 0.6, 0.55], [0.1, 0.4, 0.5, 0.52], [0.15, 0.45, 0.48, 0.5]]
)


def example3():
  # B>A, C>A, C>B, D>B, D>C, A>D  (agents A, B, C, D = 0..3)
  P = np.full((4, 4), 0.5)
  for w, l in [(1, 0), (2, 0), (2, 1), (3, 1), (3, 2), (0, 3)]:
    P[w, l], P[l, w] = 0.8, 0.2
  return P


@pytest.mark.parametrize(
  "P, tc, uc",
  [
    (EXAMPLE1, [1, 1, 1], [1, 1, 1]),
    (EXAMPLE2, [1, 0, 0, 0], [1, 0, 0, 0]),
    (example3(), [1, 1, 1, 1], [1, 0, 1, 1]),
  ],
  ids=["example1_3cycle", "example2_condorcet", "example3_tc_gt_uc"],
)
def test_paper_examples(P, tc, uc):
  np.testing.assert_array_equal(ste_jax.exact.top_cycle(P), np.array(tc, bool))
  np.testing.assert_array_equal(ste_jax.exact.uncovered_set(P), np.array(uc, bool))


def test_condorcet_and_copeland_on_examples():
  assert int(ste_jax.exact.condorcet_winner(EXAMPLE2)) == 0
  assert int(ste_jax.exact.condorcet_winner(EXAMPLE1)) == -1
  np.testing.assert_array_equal(ste_jax.exact.copeland_set(EXAMPLE2), [True, False, False, False])
  np.testing.assert_array_equal(ste_jax.exact.copeland_set(EXAMPLE1), [True, True, True])
  assert int(ste_jax.exact.condorcet_winner(np.full((1, 1), 0.5))) == 0


@pytest.mark.parametrize(
  "n",
  [
    1,
    2,
    3,
    5,
    8,
    13,
    pytest.param(30, marks=pytest.mark.slow),
    pytest.param(60, marks=pytest.mark.slow),
  ],
)
@pytest.mark.parametrize("tie_prob", [0.0, 0.3])
def test_against_networkx_bruteforce_and_pref_voting(n, tie_prob):
  rng = np.random.default_rng(1000 * n + int(10 * tie_prob))
  for _ in range(4):
    P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
    tc = np.asarray(ste_jax.exact.top_cycle(P))
    uc = np.asarray(ste_jax.exact.uncovered_set(P))
    np.testing.assert_array_equal(tc, oracles.nx_top_cycle(P))
    np.testing.assert_array_equal(uc, oracles.brute_uncovered_set(P))
    if n <= 30:  # pref-voting is slow; its definitions match for all n
      np.testing.assert_array_equal(tc, oracles.pv_smith_set(P))
      np.testing.assert_array_equal(uc, oracles.pv_uc_bordes(P))
    assert uc.any() and tc.any()
    assert np.all(~uc | tc), "UC must be a subset of TC"


@pytest.mark.parametrize("n, core", [(10, 3), (40, 5), (60, 7)])
def test_planted_cycle_is_top_cycle(n, core):
  rng = np.random.default_rng(n)
  P, mask = oracles.planted_cycle_tournament(rng, n, core)
  np.testing.assert_array_equal(ste_jax.exact.top_cycle(P), mask)
  np.testing.assert_array_equal(oracles.nx_top_cycle(P), mask)


def test_tie_conventions():
  # Two agents tied with each other, both beating a third: Smith set = both; nobody covers them.
  P = np.array([[0.5, 0.5, 0.9], [0.5, 0.5, 0.8], [0.1, 0.2, 0.5]])
  np.testing.assert_array_equal(ste_jax.exact.top_cycle(P), [True, True, False])
  np.testing.assert_array_equal(ste_jax.exact.uncovered_set(P), [True, True, False])
  # All ties: everyone is in both sets.
  P = np.full((4, 4), 0.5)
  assert bool(jnp.all(ste_jax.exact.top_cycle(P))) and bool(jnp.all(ste_jax.exact.uncovered_set(P)))


def test_batched_jit_vmap_match_single():
  rng = np.random.default_rng(7)
  Ps = np.stack([oracles.random_tournament(rng, 9, tie_prob=0.2) for _ in range(6)]).reshape(
    2, 3, 9, 9
  )
  for fn in [
    ste_jax.exact.top_cycle,
    ste_jax.exact.uncovered_set,
    ste_jax.exact.copeland_set,
    ste_jax.exact.condorcet_winner,
  ]:
    batched = np.asarray(fn(Ps))
    jitted = np.asarray(jax.jit(fn)(Ps))
    vmapped = np.asarray(jax.vmap(jax.vmap(fn))(Ps))
    single = np.stack([np.asarray(fn(P)) for P in Ps.reshape(6, 9, 9)]).reshape(batched.shape)
    np.testing.assert_array_equal(batched, single)
    np.testing.assert_array_equal(jitted, single)
    np.testing.assert_array_equal(vmapped, single)


def test_non_square_raises_naming_argument():
  with pytest.raises(ValueError, match="P must be a square"):
    ste_jax.exact.top_cycle(np.zeros((3, 4)))
