"""Maximal lotteries, bipartisan / essential / Schwartz / minimal covering / Banks sets vs
pref_voting, scipy LPs and brute force."""

import functools
import itertools

# The oracle sweeps (pref_voting, brute force and per-agent LPs over many shapes) are marked slow;
# the fast subset checks a few shapes per dtype.
import hypothesis
import hypothesis.strategies as st
import jax
import numpy as np
import pytest
from scipy.optimize import linprog

import ste_jax
from ste_jax.exact import _tournament_sets
from ste_jax.exact._lotteries import maximal_lottery_with_support
from tests import oracles


# ----------------------------------------------------------------------------- oracles
def lp_essential(M, tol=1e-9):
  """Union of the supports of all optimal strategies: for each a, max p_a over the optimal set."""
  n = M.shape[0]
  out = np.zeros(n, bool)
  for a in range(n):
    c = np.zeros(n)
    c[a] = -1.0
    res = linprog(
      c,
      A_ub=-M.T,
      b_ub=np.zeros(n),
      A_eq=np.ones((1, n)),
      b_eq=[1.0],
      bounds=[(0, None)] * n,
      method="highs",
    )
    out[a] = -res.fun > tol
  return out


def _mask(n, winners):
  m = np.zeros(n, bool)
  m[list(winners)] = True
  return m


def pv_call(fn, P):
  return _mask(P.shape[0], fn(oracles._margin_graph(P)))


def pv_ml(P):
  from pref_voting.probabilistic_methods import maximal_lottery

  d = maximal_lottery(oracles._margin_graph(P))
  return np.array([d[a] for a in range(P.shape[0])])


def brute_minimal_covering(P):
  """Smallest covering set of a tournament, by enumeration (unique on tournaments)."""
  n = P.shape[0]
  A = (P > 0.5) & ~np.eye(n, dtype=bool)

  def covered_in(a, B):
    return any(A[c, a] and all(A[c, b] for b in B if b != c and A[a, b]) for c in B if c != a)

  for size in range(1, n + 1):
    for B in itertools.combinations(range(n), size):
      if any(covered_in(a, B) for a in B):
        continue
      if all(covered_in(a, B + (a,)) for a in range(n) if a not in B):
        return _mask(n, B)
  raise AssertionError("no covering set")


def condorcet_tournament(rng, n, winner):
  P = oracles.random_tournament(rng, n)
  P[winner, :], P[:, winner] = 0.9, 0.1
  P[winner, winner] = 0.5
  return P


# ----------------------------------------------------------------------------- tests
@pytest.mark.slow  # one IPM compilation per (n, dtype): minutes on a shared 2-core CPU
@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
@pytest.mark.parametrize("tie_prob", [0.0, 0.3])
def test_supports_and_lotteries_against_oracles(x64, n, tie_prob):
  rng = np.random.default_rng(100 * n + int(10 * tie_prob))
  for _ in range(3):
    P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
    for majority in (True, False):
      M = np.asarray(ste_jax.exact.margin_matrix(P, majority=majority))
      p, support, verified = (np.asarray(v) for v in maximal_lottery_with_support(M))
      assert bool(verified)
      np.testing.assert_array_equal(support, lp_essential(M))
      assert np.all(M.T @ p >= -1e-9) and abs(p.sum() - 1) < 1e-12 and np.all(p >= 0)
    bp = np.asarray(ste_jax.exact.bipartisan_set(P))
    es = np.asarray(ste_jax.exact.essential_set(P))
    np.testing.assert_array_equal(
      np.asarray(ste_jax.exact.schwartz_set(P)), pv_call(_pv("c1_methods", "gocha"), P)
    )
    # Unique maximal lotteries: pref_voting's answer is the oracle. Its `bipartisan` enumerates the
    # vertices of the game (nashpy), exponential in n: compared up to n = 8.
    if tie_prob == 0.0 and n <= 8:
      from pref_voting.c1_methods import bipartisan
      from pref_voting.margin_based_methods import essential

      np.testing.assert_array_equal(bp, pv_call(bipartisan, P))
      np.testing.assert_array_equal(es, pv_call(essential, P))
      np.testing.assert_allclose(
        np.asarray(ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P))),
        pv_ml(P),
        atol=1e-7,
      )
      assert bp.sum() % 2 == 1


def _pv(module, name):
  import importlib

  return getattr(importlib.import_module(f"pref_voting.{module}"), name)


# pref_voting's Banks set takes about 1 s per tournament at n = 8 on 2 cores: the default suite
# checks ties at n = 5 and n = 8 without ties; n = 8 with ties runs in `make test-slow`.
@pytest.mark.parametrize(
  "n, tie_prob",
  [(5, 0.0), (8, 0.0), (5, 0.3), pytest.param(8, 0.3, marks=pytest.mark.slow)],
)
def test_banks_against_pref_voting(n, tie_prob):
  from pref_voting.c1_methods import banks

  rng = np.random.default_rng(n + int(10 * tie_prob))
  for _ in range(3):
    P = oracles.random_tournament(rng, n, tie_prob=tie_prob)
    np.testing.assert_array_equal(np.asarray(ste_jax.exact.banks_set(P)), pv_call(banks, P))


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 5, 7, 9])
def test_minimal_covering_set_against_brute_force(x64, n):
  rng = np.random.default_rng(7 * n)
  for _ in range(3):
    P = oracles.random_tournament(rng, n)
    np.testing.assert_array_equal(
      np.asarray(ste_jax.exact.minimal_covering_set(P)), brute_minimal_covering(P)
    )


def brandt_fischer_iteration(P):
  """The minimal-covering-set iteration with SciPy LPs on the sub-tournaments, and each |C|."""
  n = P.shape[0]
  A = (P > 0.5) & ~np.eye(n, dtype=bool)
  M = np.sign(P - P.T)
  B, C, sizes = np.zeros(n, bool), np.ones(n, bool), []
  while C.any():
    sizes.append(int(C.sum()))
    idx = np.flatnonzero(C)
    B[idx[lp_essential(M[np.ix_(idx, idx)])]] = True
    members = np.flatnonzero(B)
    C = np.array(
      [
        not B[a]
        and not any(
          A[c, a] and all(A[c, b] for b in members if b != c and A[a, b]) for c in members
        )
        for a in range(n)
      ]
    )
  return B, sizes


def test_minimal_covering_set_bucketed_rounds(x64):
  """Sub-problems padded to buckets (3, 12) at n = 12: the rounds' |C| fall in both buckets (with
  dummies in each; the LPs start from subsets of C that grow), results equal the iteration with
  exact LPs on C (also with ties) and the brute force."""
  rng = np.random.default_rng(20)
  Ps = [oracles.random_tournament(rng, 12) for _ in range(4)]
  Ps += [oracles.random_tournament(rng, 12, tie_prob=0.3) for _ in range(3)]
  Ps += [
    oracles.planted_cycle_tournament(rng, 12, 3)[0],
    condorcet_tournament(rng, 12, winner=5),
  ]  # BP in S
  assert _tournament_sets._bucket_sizes(12, (3,)) == (3, 12)
  kernel = functools.partial(_tournament_sets._minimal_covering_bucketed, bucket_sizes=(3,))
  got = np.asarray(jax.jit(lambda Ps: jax.lax.map(kernel, Ps))(np.stack(Ps)))
  sizes = set()
  for P, mcs in zip(Ps, got):
    expected, rounds = brandt_fischer_iteration(P)
    sizes.update(rounds)
    np.testing.assert_array_equal(mcs, expected)
    if not np.any((P == 0.5) & ~np.eye(12, dtype=bool)):
      np.testing.assert_array_equal(mcs, brute_minimal_covering(P))
  assert {1, 2, 3, 12} <= sizes and sizes & {4, 5, 6, 7, 8, 9, 10, 11}


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 12, 30])
def test_inclusions_on_tournaments(x64, n):
  rng = np.random.default_rng(n)
  for _ in range(3):
    P = oracles.random_tournament(rng, n)
    bp, mcs = (
      np.asarray(ste_jax.exact.bipartisan_set(P)),
      np.asarray(ste_jax.exact.minimal_covering_set(P)),
    )
    uc, tc = np.asarray(ste_jax.exact.uncovered_set(P)), np.asarray(ste_jax.exact.top_cycle(P))
    assert np.all(~bp | mcs) and np.all(~mcs | uc) and np.all(~uc | tc)
    np.testing.assert_array_equal(np.asarray(ste_jax.exact.schwartz_set(P)), tc)
    if n <= 12:
      assert np.all(~np.asarray(ste_jax.exact.banks_set(P)) | uc)


@pytest.mark.slow  # about 10 s on 2 cores (every solution compiled at three sizes)
def test_condorcet_winner_is_every_solution():
  rng = np.random.default_rng(3)
  P = condorcet_tournament(rng, 9, winner=4)
  single = _mask(9, [4])
  out = ste_jax.exact.solution_memberships(P, ste_jax.exact.SOLUTION_NAMES)
  for name in (
    "top_cycle",
    "uncovered",
    "copeland",
    "schwartz",
    "bipartisan",
    "essential",
    "mcs",
    "banks",
  ):
    np.testing.assert_array_equal(np.asarray(out[name]), single, err_msg=name)
  for name in ("ml", "c1_ml", "nash"):
    np.testing.assert_allclose(np.asarray(out[name]), single.astype(float), atol=1e-5, err_msg=name)


def test_ties_examples():
  # Two agents tie and both beat a third: Smith = Schwartz = {0, 1}; all ties: everyone, uniform.
  P = np.array([[0.5, 0.5, 0.9], [0.5, 0.5, 0.8], [0.1, 0.2, 0.5]])
  np.testing.assert_array_equal(ste_jax.exact.schwartz_set(P), [True, True, False])
  np.testing.assert_array_equal(ste_jax.exact.bipartisan_set(P), [True, True, False])
  np.testing.assert_allclose(
    ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P, majority=True)),
    [0.5, 0.5, 0],
    atol=1e-5,
  )
  P = np.full((4, 4), 0.5)
  np.testing.assert_allclose(
    ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P)), np.full(4, 0.25), atol=1e-6
  )
  # Schwartz smaller than Smith: 0 > 2 strictly, every other pair ties.
  P = np.array([[0.5, 0.5, 0.9], [0.5, 0.5, 0.5], [0.1, 0.5, 0.5]])
  np.testing.assert_array_equal(ste_jax.exact.schwartz_set(P), [True, True, False])
  np.testing.assert_array_equal(ste_jax.exact.top_cycle(P), [True, True, True])


def test_float32_tournament_supports():
  rng = np.random.default_rng(11)
  for _ in range(3):
    P = oracles.random_tournament(rng, 9).astype(np.float32)
    p, support, verified = maximal_lottery_with_support(
      ste_jax.exact.margin_matrix(P, majority=True)
    )
    assert p.dtype == np.float32 and bool(verified)
    np.testing.assert_array_equal(
      np.asarray(support), lp_essential(np.sign(P - P.T).astype(np.float64))
    )


def lp_support(M, tol=1e-10):
  """Support of the (unique, on a tournament) maximal lottery: one HiGHS LP, tolerances 1e-10."""
  n = M.shape[0]
  res = linprog(
    np.zeros(n),
    A_ub=-M.T,
    b_ub=np.zeros(n),
    A_eq=np.ones((1, n)),
    b_eq=[1.0],
    bounds=[(0, None)] * n,
    method="highs",
    options=dict(primal_feasibility_tolerance=tol, dual_feasibility_tolerance=tol),
  )
  return res.x > tol, res.x


def weak_tournament(rng, n, tied_pairs):
  """Random weak tournament with exactly ``tied_pairs`` tied ordered pairs ``(a, b)``, a != b."""
  pairs = list(itertools.combinations(range(n), 2))
  tied = set(rng.choice(len(pairs), tied_pairs // 2, replace=False).tolist())
  P = np.full((n, n), 0.5)
  for k, (a, b) in enumerate(pairs):
    if k not in tied:
      p = 0.5 + rng.uniform(0.1, 0.5) * rng.choice([-1.0, 1.0])
      P[a, b], P[b, a] = p, 1.0 - p
  return P


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_weak_tournaments_essential_sets_against_per_agent_lps(dtype):
  """Issue 35 (a): the essential set is the union of the supports of all maximal lotteries (one LP
  per agent maximizing its probability over the optimal strategies), not the agents with zero
  expected margin against one of them; on random weak tournaments, n = 8..12, 12..48 tied ordered
  pairs (the former solution returned 7 extra agents in 40 such tournaments, float64)."""
  rng = np.random.default_rng(35)
  with jax.enable_x64(dtype == "float64"):
    for _ in range(10):
      n, ties = int(rng.integers(8, 13)), 2 * int(rng.integers(6, 25))
      P = weak_tournament(rng, n, ties).astype(dtype)
      assert np.sum((P == 0.5) & ~np.eye(n, dtype=bool)) == ties
      for majority, fn in (
        (False, ste_jax.exact.essential_set),
        (True, ste_jax.exact.bipartisan_set),
      ):
        D = P.astype(np.float64) - P.T.astype(np.float64)
        M = np.sign(D) if majority else D
        expected = lp_essential(M)
        np.testing.assert_array_equal(np.asarray(fn(P)), expected)
        p, support, verified = maximal_lottery_with_support(M.astype(dtype))
        assert p.dtype == dtype and bool(verified)
        np.testing.assert_array_equal(np.asarray(support), expected)
        p = np.asarray(p, np.float64)
        np.testing.assert_array_equal(p > 0, expected)
        assert np.all(M.T @ p >= -1e-6) and abs(p.sum() - 1) < 1e-6


def check_float32_supports_against_highs(n, seed):
  P = oracles.random_tournament(np.random.default_rng(seed), n).astype(np.float32)
  expected, x = lp_support(np.sign(P - P.T).astype(np.float64))
  bp = ste_jax.exact.bipartisan_set(P)
  p = ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P, majority=True))
  assert bp.dtype == bool and p.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(bp), expected)
  np.testing.assert_array_equal(np.asarray(p) > 0, expected)
  np.testing.assert_allclose(np.asarray(p), x, atol=1e-6)
  return P


@pytest.mark.parametrize("n", [30, 100])
def test_float32_supports_against_highs(n):
  """Issue 35 (b): in float32, the default dtype, the bipartisan set and the support of the maximal
  lottery are HiGHS's (the former float32 solver differed from it in 2 of 100 agents); jit and vmap
  give the same."""
  P = check_float32_supports_against_highs(n, seed=n)
  Ps = np.stack([P, P[::-1, ::-1]])
  single = np.stack([np.asarray(ste_jax.exact.bipartisan_set(Q)) for Q in Ps])
  np.testing.assert_array_equal(np.asarray(jax.vmap(ste_jax.exact.bipartisan_set)(Ps)), single)
  np.testing.assert_array_equal(np.asarray(jax.jit(ste_jax.exact.bipartisan_set)(Ps)), single)


@pytest.mark.slow  # the HiGHS oracle takes minutes at n = 1000 on a shared 2-core CPU
@pytest.mark.parametrize("n", [300, 1000])
def test_float32_supports_against_highs_large(n):
  """As above at n = 300 and 1000 (the former float32 solver: 16 of 300 and 119 of 1,000 agents)."""
  check_float32_supports_against_highs(n, seed=n)


@pytest.mark.slow
def test_batched_jit_vmap_match_single(x64):
  rng = np.random.default_rng(5)
  Ps = np.stack([oracles.random_tournament(rng, 7, tie_prob=0.2) for _ in range(4)]).reshape(
    2, 2, 7, 7
  )
  for fn in (
    ste_jax.exact.bipartisan_set,
    ste_jax.exact.essential_set,
    ste_jax.exact.schwartz_set,
    ste_jax.exact.minimal_covering_set,
    ste_jax.exact.banks_set,
    lambda P: ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P)),
  ):
    single = np.stack([np.asarray(fn(P)) for P in Ps.reshape(4, 7, 7)]).reshape(2, 2, 7)
    np.testing.assert_allclose(np.asarray(fn(Ps)), single, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(Ps)), single, atol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.vmap(fn))(Ps)), single, atol=1e-12)


@pytest.mark.slow
@hypothesis.settings(max_examples=8, deadline=None)
@hypothesis.given(seed=st.integers(0, 2**31 - 1))
def test_relabeling_permutes_solutions(seed):
  with jax.enable_x64(True):
    rng = np.random.default_rng(seed)
    P = oracles.random_tournament(rng, 9, tie_prob=0.2)
    perm = rng.permutation(9)
    Pp = P[np.ix_(perm, perm)]
    for fn in (
      ste_jax.exact.bipartisan_set,
      ste_jax.exact.essential_set,
      ste_jax.exact.minimal_covering_set,
    ):
      np.testing.assert_array_equal(np.asarray(fn(Pp)), np.asarray(fn(P))[perm])
    ml = np.asarray(ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P)))
    # With ties the maximum-entropy lottery is found by an iterative solve whose rounding is not
    # permutation-invariant: equal up to 1e-3 (a seed gave 1e-4), the supports exactly (above).
    np.testing.assert_allclose(
      np.asarray(ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(Pp))),
      ml[perm],
      atol=1e-3,
    )


def test_errors_name_the_argument():
  with pytest.raises(ValueError, match="P must be a square"):
    ste_jax.exact.bipartisan_set(np.zeros((3, 4)))
  with pytest.raises(ValueError, match="n <= 20"):
    ste_jax.exact.banks_set(np.full((21, 21), 0.5))
  with pytest.raises(ValueError, match="unknown solution 'nope'"):
    ste_jax.exact.solution_memberships(np.full((3, 3), 0.5), ("nope",))


def test_solution_memberships_shapes_and_aliases():
  P = oracles.random_tournament(np.random.default_rng(0), 6)
  out = jax.jit(ste_jax.exact.solution_memberships, static_argnames="names")(
    P, names=("bp", "mcs", "ml", "alpharank")
  )
  assert set(out) == {"bp", "mcs", "ml", "alpharank"}
  assert out["bp"].dtype == bool and out["ml"].shape == (6,)
  np.testing.assert_allclose(float(out["alpharank"].sum()), 1.0, atol=1e-5)


def test_fast_oracle_subset(x64):
  """One shape (n = 9), tournaments and weak tournaments, against the LP oracle and pref_voting."""
  from pref_voting.c1_methods import bipartisan

  rng = np.random.default_rng(21)
  for tie_prob in (0.0, 0.3):
    P = oracles.random_tournament(rng, 9, tie_prob=tie_prob)
    for majority in (True, False):
      M = np.asarray(ste_jax.exact.margin_matrix(P, majority=majority))
      _, support, verified = maximal_lottery_with_support(M)
      assert bool(verified)
      np.testing.assert_array_equal(np.asarray(support), lp_essential(M))
    if tie_prob == 0.0:
      np.testing.assert_array_equal(
        np.asarray(ste_jax.exact.bipartisan_set(P)), pv_call(bipartisan, P)
      )
      np.testing.assert_array_equal(
        np.asarray(ste_jax.exact.minimal_covering_set(P)), brute_minimal_covering(P)
      )
