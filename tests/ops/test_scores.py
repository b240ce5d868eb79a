"""STE scores: paper walkthrough, zero-temperature consistency, invariances, gradients, edges."""

from hypothesis import given, settings
from hypothesis import strategies as st
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import ste_jax
from ste_jax.ops import soft_majority_edges, soft_reachability, ste_scores, ste_scores_from_edges
from tests import oracles

WALKTHROUGH_P = np.array(
  [[0.5, 0.7, 0.6, 0.9], [0.3, 0.5, 0.8, 0.7], [0.4, 0.2, 0.5, 0.6], [0.1, 0.3, 0.4, 0.5]]
)


def test_walkthrough_edges_and_uncovered_scores_match_paper():
  """Appendix "Detailed Walkthrough": the printed D_tau and u_tau (tau = gamma = 0.05, K = 3)."""
  D = np.asarray(soft_majority_edges(WALKTHROUGH_P, tau=0.05))
  printed_D = np.array(
    [
      [0, 0.982, 0.881, 1.000],
      [0.018, 0, 0.998, 0.982],
      [0.119, 0.002, 0, 0.881],
      [0.000, 0.018, 0.119, 0],
    ]
  )
  np.testing.assert_allclose(D, printed_D, atol=5e-4)
  s = ste_scores(WALKTHROUGH_P, tau=0.05, max_path_length=3)
  np.testing.assert_allclose(s.uncovered, [0.991, 0.160, 0.123, 0.031], atol=5e-4)


def test_walkthrough_reachability_and_top_cycle_do_not_match_printed_values():
  """The paper prints R and t that no reading of its equations reproduces (documented in README).

  Printed: R[A, B] = 0.985, t = (0.994, 0.204, 0.159, 0.044). Under the exact max-min operator
  R[A, B] is a path bottleneck, hence at most max D = 0.982 on any path A -> B; under the smooth
  operator it is lower still. What the equations give is checked here against the literal dense
  transcription in ``tests/oracles.py``.
  """
  D = soft_majority_edges(WALKTHROUGH_P, tau=0.05)
  R = np.asarray(soft_reachability(D, max_path_length=3))
  np.testing.assert_allclose(R, np.asarray(oracles.naive_reachability(D, 3, 0.0)), atol=1e-7)
  assert R[0, 1] <= 0.9821 < 0.985  # printed 0.985 is unreachable for a max-min bottleneck
  for reach_gamma in [0.0, 0.05]:
    s = ste_scores(WALKTHROUGH_P, tau=0.05, max_path_length=3, reach_gamma=reach_gamma)
    naive = jax.jit(
      lambda P: oracles.naive_ste_scores(P, 0.05, 0.05, 0.05, 3, reach_gamma)
    )  # compiled, not op by op
    t_eq, u_eq = naive(jnp.asarray(WALKTHROUGH_P))
    np.testing.assert_allclose(s.top_cycle, t_eq, atol=1e-5)
    np.testing.assert_allclose(s.uncovered, u_eq, atol=1e-5)
    assert np.max(np.abs(np.asarray(s.top_cycle) - [0.994, 0.204, 0.159, 0.044])) > 0.02
  # Values the equations give (exact max-min, the paper's default), to 3 decimals:
  s = ste_scores(WALKTHROUGH_P, tau=0.05, max_path_length=3)
  np.testing.assert_allclose(s.top_cycle, [0.987, 0.174, 0.139, 0.119], atol=5e-4)


def _hard_consistency_check(P, temp=1e-3):
  s = ste_scores(P, tau=temp)
  tc, uc = np.asarray(ste_jax.top_cycle(P)), np.asarray(ste_jax.uncovered_set(P))
  np.testing.assert_array_equal(np.asarray(s.top_cycle) > 0.5, tc)
  np.testing.assert_array_equal(np.asarray(s.uncovered) > 0.5, uc)
  np.testing.assert_array_equal(tc, oracles.nx_top_cycle(P))
  np.testing.assert_array_equal(uc, oracles.brute_uncovered_set(P))
  # In the limit the scores are (numerically) 0/1: within gamma log n of the indicator.
  bound = 1e-3 * np.log(P.shape[0]) + 1e-3
  assert np.all(np.abs(np.asarray(s.top_cycle) - tc) <= bound)
  assert np.all(np.abs(np.asarray(s.uncovered) - uc) <= bound)


# n = 8 runs by default; n = 3 and the larger sizes, which run the same code paths (one cover chunk
# up to n = 64), run in `make test-slow` (each size compiles anew, about 1.5 s on 2 cores).
@pytest.mark.parametrize(
  "n",
  [
    pytest.param(3, marks=pytest.mark.slow),
    8,
    pytest.param(20, marks=pytest.mark.slow),
    pytest.param(60, marks=pytest.mark.slow),
  ],
)
def test_zero_temperature_consistency_random(n):
  rng = np.random.default_rng(n)
  for _ in range(3):
    _hard_consistency_check(oracles.random_tournament(rng, n, margin=0.05))


@pytest.mark.parametrize(
  "n, core",
  [
    (12, 3),
    pytest.param(40, 5, marks=pytest.mark.slow),
    pytest.param(60, 7, marks=pytest.mark.slow),
  ],
)
def test_zero_temperature_consistency_planted(n, core):
  rng = np.random.default_rng(100 + n)
  P, mask = oracles.planted_cycle_tournament(rng, n, core, margin=0.05)
  _hard_consistency_check(P)
  np.testing.assert_array_equal(np.asarray(ste_scores(P, tau=1e-3).top_cycle) > 0.5, mask)


@pytest.mark.slow  # about 2 s on 2 cores (four sizes)
def test_condorcet_winner_has_unique_top_scores_and_uc_subset_tc():
  rng = np.random.default_rng(3)
  for n in [2, 3, 7, 15]:
    P = oracles.random_tournament(rng, n)
    w = rng.integers(n)
    for b in range(n):
      if b != w:
        P[w, b], P[b, w] = 0.8, 0.2
    for tau in [0.05, 0.01]:
      s = ste_scores(P, tau=tau)
      for score in (np.asarray(s.top_cycle), np.asarray(s.uncovered)):
        assert np.argmax(score) == w and np.sum(score >= score[w] - 1e-9) == 1
    s = ste_scores(P, tau=1e-3)
    assert np.all((np.asarray(s.uncovered) > 0.5) <= (np.asarray(s.top_cycle) > 0.5))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_permutation_equivariance(seed):
  rng = np.random.default_rng(seed)
  n = 7
  P = oracles.random_tournament(rng, n, tie_prob=0.2).astype(np.float32)
  perm = rng.permutation(n)
  s = _jitted_scores(P, 0.05)
  sp = _jitted_scores(P[np.ix_(perm, perm)], 0.05)
  np.testing.assert_allclose(sp.top_cycle, np.asarray(s.top_cycle)[perm], atol=1e-6)
  np.testing.assert_allclose(sp.uncovered, np.asarray(s.uncovered)[perm], atol=1e-6)


_jitted_scores = jax.jit(lambda P, tau: ste_scores(P, tau=tau))


@pytest.mark.slow  # about 2 s on 2 cores; tests/ops/test_batching.py checks batching by default
def test_batched_equals_per_item_equals_vmap_and_jit_equals_eager():
  rng = np.random.default_rng(4)
  P = np.stack([oracles.random_tournament(rng, 6, tie_prob=0.2) for _ in range(6)]).reshape(
    3, 2, 6, 6
  )
  P = P.astype(np.float32)
  batched = ste_scores(P, tau=0.05)
  per_item = [ste_scores(p, tau=0.05) for p in P.reshape(6, 6, 6)]
  vmapped = jax.vmap(jax.vmap(lambda p: ste_scores(p, tau=0.05)))(P)
  jitted = jax.jit(lambda p: ste_scores(p, tau=0.05))(P)
  for field in ("top_cycle", "uncovered"):
    ref = np.stack([getattr(s, field) for s in per_item]).reshape(3, 2, 6)
    np.testing.assert_allclose(getattr(batched, field), ref, atol=1e-6)
    np.testing.assert_allclose(getattr(vmapped, field), ref, atol=1e-6)
    np.testing.assert_allclose(getattr(jitted, field), ref, atol=1e-6)


def test_no_retrace_on_second_call_or_new_temperature():
  traces = []

  @jax.jit
  def f(P, tau, gamma):
    traces.append(1)
    return ste_scores(P, tau=tau, gamma=gamma)

  rng = np.random.default_rng(5)
  P = jnp.asarray(oracles.random_tournament(rng, 5), jnp.float32)
  f(P, 0.1, 0.1)
  f(P, 0.1, 0.1)
  f(P, 0.02, 0.03)
  f(P + 0.0, 0.5, 0.2)
  assert len(traces) == 1


# The smooth reachability's gradients are also checked against the dense equations (operator by
# operator) in tests/ops/test_reachability.py; through ste_scores (about 3 s on 2 cores) here in
# `make test-slow`.
@pytest.mark.parametrize("reach_gamma", [0.0, pytest.param(0.1, marks=pytest.mark.slow)])
def test_gradients_match_dense_transcription_and_finite_differences(x64, reach_gamma):
  rng = np.random.default_rng(6)
  n = 6
  P = jnp.asarray(oracles.random_tournament(rng, n, margin=0.02))
  wt, wu = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))

  def f(P, tau, gamma, gamma_c):
    s = ste_scores(P, tau=tau, gamma=gamma, gamma_c=gamma_c, reach_gamma=reach_gamma)
    return jnp.sum(wt * s.top_cycle) + jnp.sum(wu * s.uncovered)

  def f_naive(P, tau, gamma, gamma_c):
    t, u = oracles.naive_ste_scores(P, tau, gamma, gamma_c, n - 1, reach_gamma)
    return jnp.sum(wt * t) + jnp.sum(wu * u)

  # Both compiled: one program each instead of op-by-op dispatch (the oracle's traced temperatures
  # are positive, its literal reach_gamma = 0 the exact closure).
  f, f_naive = jax.jit(f), jax.jit(f_naive)
  args = (P, jnp.float64(0.1), jnp.float64(0.07), jnp.float64(0.05))
  np.testing.assert_allclose(f(*args), f_naive(*args), rtol=1e-12)
  for a, b in zip(jax.grad(f, (0, 1, 2, 3))(*args), jax.grad(f_naive, (0, 1, 2, 3))(*args)):
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
  check_grads(f, args, order=1, modes=("rev",), eps=1e-7)


def test_ste_scores_from_edges_matches_ste_scores(x64):
  rng = np.random.default_rng(7)
  P = jnp.asarray(oracles.random_tournament(rng, 8, tie_prob=0.2))
  a = ste_scores(P, tau=0.05)
  b = ste_scores_from_edges(soft_majority_edges(P, tau=0.05), gamma=0.05)
  np.testing.assert_allclose(a.top_cycle, b.top_cycle, atol=1e-12)
  np.testing.assert_allclose(a.uncovered, b.uncovered, atol=1e-12)


def _finite(tree):
  return all(np.all(np.isfinite(np.asarray(x))) for x in jax.tree.leaves(tree))


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", ["random", "all_ties", "saturated"])
@pytest.mark.parametrize("temp", [1e-4, 0.05])
def test_edge_cases_finite_values_and_gradients(n, kind, temp):
  rng = np.random.default_rng(n)
  if kind == "random":
    P = oracles.random_tournament(rng, n, tie_prob=0.3)
  elif kind == "all_ties":
    P = np.full((n, n), 0.5)
  else:
    P = (np.triu(np.ones((n, n)), 1) + 0.5 * np.eye(n)).astype(np.float64)
    P = np.where(np.tril(np.ones((n, n)), -1) > 0, 0.0, P)
  P = jnp.asarray(P, jnp.float32)
  temps = (jnp.float32(temp),) * 3
  s = _scores_and_grads(P, *temps)
  assert _finite(s)
  values, grads = s
  assert np.all((np.asarray(values) >= 0) & (np.asarray(values) <= 1))
  if n == 1:
    np.testing.assert_array_equal(values, [[1.0], [1.0]])


@jax.jit
def _scores_and_grads(P, tau, gamma, gamma_c):
  def f(P, tau, gamma, gamma_c):
    s = ste_scores(P, tau=tau, gamma=gamma, gamma_c=gamma_c)
    return jnp.sum(s.top_cycle) + jnp.sum(s.uncovered), jnp.stack([s.top_cycle, s.uncovered])

  (_, values), grads = jax.value_and_grad(f, (0, 1, 2, 3), has_aux=True)(P, tau, gamma, gamma_c)
  return values, grads


def test_n2_and_ties_behaviour():
  # n = 2: the winner reaches the loser; nobody is covered because the covering witness set is empty
  # and the loser cannot cover the winner.
  s = ste_scores(jnp.array([[0.5, 0.9], [0.1, 0.5]]), tau=1e-3)
  np.testing.assert_allclose(s.top_cycle, [1.0, 0.0], atol=1e-6)
  np.testing.assert_allclose(s.uncovered, [1.0, 0.0], atol=1e-6)
  # Two agents tied with each other, both beating a third: t -> 1/2 for both (documented).
  P = jnp.array([[0.5, 0.5, 0.9], [0.5, 0.5, 0.8], [0.1, 0.2, 0.5]])
  s = ste_scores(P, tau=1e-3)
  np.testing.assert_allclose(np.asarray(s.top_cycle)[:2], 0.5, atol=2e-3)
  assert float(s.top_cycle[2]) < 1e-3


def test_float64_dtype(x64):
  P = jnp.asarray(WALKTHROUGH_P, jnp.float64)
  s = ste_scores(P, tau=0.05)
  assert s.top_cycle.dtype == jnp.float64 and s.uncovered.dtype == jnp.float64


def test_float32_gradient_close_to_float64():
  rng = np.random.default_rng(8)
  P = oracles.random_tournament(rng, 12, margin=0.0) * 0.2 + 0.4  # margins below tau: unsaturated
  P = P - np.diag(np.diag(P)) + 0.5 * np.eye(12)
  f = jax.jit(jax.grad(lambda P: jnp.sum(ste_scores(P, tau=0.02).top_cycle)))
  g32 = np.asarray(f(jnp.asarray(P, jnp.float32)))
  with jax.enable_x64(True):
    g64 = np.asarray(f(jnp.asarray(P, jnp.float64)))
  scale = np.max(np.abs(g64))
  assert scale > 1.0
  assert np.max(np.abs(g32 - g64)) <= 1e-4 * scale


def test_shape_errors_name_the_argument():
  with pytest.raises(ValueError, match="P must be a square"):
    ste_scores(jnp.zeros((3, 4)), tau=0.1)
  with pytest.raises(ValueError, match="P must be a square"):
    jax.jit(lambda P: ste_scores(P, tau=0.1))(jnp.zeros((2, 3, 4)))
  with pytest.raises(ValueError, match="D must be a square"):
    ste_scores_from_edges(jnp.zeros((3,)), gamma=0.1)
