"""Temperatures: a traced zero is the exact hard limit (finite values and gradients), and concrete
negative / non-finite temperatures raise ``ValueError`` naming the argument."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ste_jax
from ste_jax.ops import (
  _cover_kernels,
  max_min_product,
  normalized_smax,
  normalized_softmin,
  soft_cover_scores,
  soft_cover_violation,
  soft_majority_edges,
  soft_reachability,
  soft_top_cycle_score,
  soft_uncovered_score,
  ste_scores,
  ste_scores_from_edges,
)
from tests import oracles


def _finite(tree) -> bool:
  return all(bool(np.all(np.isfinite(np.asarray(x)))) for x in jax.tree.leaves(tree))


@jax.jit
def _scores_at(P, tau, gamma, gamma_c):
  s = ste_scores(P, tau=tau, gamma=gamma, gamma_c=gamma_c)
  return jnp.stack([s.top_cycle, s.uncovered])


@jax.jit
def _scores_at_literal_zeros(P):
  s = ste_scores(P, tau=0, gamma=0.0, gamma_c=np.float32(0))  # literal zeros: the exact kernels
  return jnp.stack([s.top_cycle, s.uncovered])


def _strict_tournaments(n):
  """A batch of strict random tournaments (no ties, margins down to 0.02) with cycles."""
  rng = np.random.default_rng(20 + n)
  P = [oracles.random_tournament(rng, n, margin=0.02) for _ in range(3)]
  if n >= 12:
    P.append(oracles.planted_cycle_tournament(rng, n, n // 4 * 2 - 1, margin=0.02)[0])
  return jnp.asarray(np.stack(P), jnp.float32)


@pytest.mark.parametrize(
  "n", [3, 5, 8, 13, pytest.param(30, marks=pytest.mark.slow)]
)  # n = 30 in `make test-slow`
def test_traced_zero_temperatures_give_the_exact_solutions(n):
  P = _strict_tournaments(n)
  zero = jnp.float32(0.0)
  tc = np.stack([np.asarray(ste_jax.top_cycle(p)) for p in P])
  uc = np.stack([np.asarray(ste_jax.uncovered_set(p)) for p in P])
  assert 0 < tc.sum() + uc.sum() < 2 * tc.size  # not all trivial
  expect = np.stack([tc, uc], axis=1).astype(np.float32)
  got = jax.vmap(_scores_at, in_axes=(0, None, None, None))(P, zero, zero, zero)  # traced zeros
  np.testing.assert_array_equal(got, expect)
  np.testing.assert_array_equal(jax.vmap(_scores_at_literal_zeros)(P), expect)
  # The limit of small positive temperatures: within gamma log n of the indicators.
  small = jnp.float32(1e-4)
  near = np.asarray(jax.vmap(_scores_at, in_axes=(0, None, None, None))(P, small, small, small))
  assert np.max(np.abs(near - expect)) <= 1e-4 * np.log(n) + 1e-4


def test_traced_zero_reach_gamma_gives_the_closure(x64):
  rng = np.random.default_rng(21)
  P = jnp.asarray(oracles.random_tournament(rng, 7, margin=0.02, tie_prob=0.2))
  D = soft_majority_edges(P, tau=0.05)
  for K in (None, 2, 3):
    traced = jax.jit(lambda D, g: soft_reachability(D, max_path_length=K, gamma=g))(D, 0.0)
    np.testing.assert_allclose(
      traced, soft_reachability(D, max_path_length=K, gamma=0), rtol=0, atol=1e-15
    )
    np.testing.assert_allclose(
      traced, soft_reachability(D, max_path_length=K, gamma=1e-7), atol=1e-5
    )
  X, Y = jnp.asarray(rng.uniform(size=(3, 4))), jnp.asarray(rng.uniform(size=(4, 5)))
  traced = jax.jit(lambda g: max_min_product(X, Y, gamma=g))(0.0)
  np.testing.assert_array_equal(traced, max_min_product(X, Y, gamma=0))
  P = jnp.asarray(oracles.random_tournament(rng, 9, margin=0.02))
  s = jax.jit(lambda t, r: ste_scores(P, tau=t, reach_gamma=r))(0.0, 0.0)
  np.testing.assert_array_equal(s.top_cycle, np.asarray(ste_jax.top_cycle(P)).astype(np.float64))
  np.testing.assert_array_equal(
    s.uncovered, np.asarray(ste_jax.uncovered_set(P)).astype(np.float64)
  )


def test_tau_zero_is_the_step_function_with_half_at_ties():
  rng = np.random.default_rng(22)
  P = jnp.asarray(oracles.random_tournament(rng, 6, tie_prob=0.4), jnp.float32)
  off = ~np.eye(6, dtype=bool)
  expect = np.where(np.asarray(P) > 0.5, 1.0, np.where(np.asarray(P) < 0.5, 0.0, 0.5)) * off
  assert (np.asarray(P)[off] == 0.5).any()
  for D in (
    soft_majority_edges(P, tau=0),
    soft_majority_edges(P, tau=np.float64(0.0)),
    jax.jit(lambda t: soft_majority_edges(P, tau=t))(0.0),
  ):
    np.testing.assert_array_equal(D, expect.astype(np.float32))
  np.testing.assert_allclose(
    soft_majority_edges(P, tau=1e-6), expect, atol=1e-6
  )  # the tau -> 0 limit
  grads = jax.jit(
    jax.grad(lambda P, t: jnp.sum(soft_majority_edges(P, tau=t) ** 2), argnums=(0, 1))
  )(P, 0.0)
  assert _finite(grads)
  np.testing.assert_array_equal(grads[0], 0.0)


# n = 9 (several chunks of index pairs with the small budget) by default; n = 3 and 4 (3-6 s each on
# 2 cores) in `make test-slow`.
@pytest.mark.parametrize("block_budget", [None, 20, 100], ids=["one_tile", "a_blocks", "c_blocks"])
@pytest.mark.parametrize(
  "n", [pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow), 9]
)
def test_cover_at_traced_zero_equals_the_hard_kernels(x64, patch_trace_constant, block_budget, n):
  """Values and gradients (the even split among tied maximizers) of the literal-0 kernels."""
  if block_budget is not None:
    patch_trace_constant(_cover_kernels, "_TILE_ELEMENTS", block_budget)
    patch_trace_constant(_cover_kernels, "_BACKWARD_TILE_ELEMENTS", block_budget)
  rng = np.random.default_rng(n)
  D = rng.uniform(size=(n, n))
  D[0] = np.round(D[0] * 2) / 2  # ties among witnesses
  np.fill_diagonal(D, 0.0)
  D = jnp.asarray(D)
  W = jnp.asarray(rng.normal(size=(n, n)))

  def f(D, g):
    return jnp.sum(W * soft_cover_scores(D, gamma_c=g)) + jnp.sum(
      soft_uncovered_score(D, gamma_c=g)
    )

  value, (dD, dg) = jax.jit(jax.value_and_grad(f, argnums=(0, 1)))(D, 0.0)
  hard_value, hard_dD = jax.value_and_grad(lambda D: f(D, 0))(D)
  np.testing.assert_allclose(value, hard_value, rtol=1e-14)
  np.testing.assert_allclose(dD, hard_dD, rtol=1e-12, atol=1e-14)
  assert float(dg) == 0.0
  np.testing.assert_allclose(
    jax.jit(lambda D, g: soft_cover_violation(D, gamma_c=g))(D, 0.0),
    soft_cover_violation(D, gamma_c=0.0),
    atol=0,
  )
  np.testing.assert_allclose(value, f(D, 1e-9), atol=1e-7)  # and the limit of small temperatures


@pytest.mark.parametrize("reach_gamma", ["exact", "traced"])
def test_gradients_of_ste_scores_are_finite_at_traced_zero(reach_gamma):
  rng = np.random.default_rng(23)
  n = 6
  P = np.stack(
    [
      oracles.random_tournament(rng, n),
      oracles.random_tournament(rng, n, tie_prob=0.3),
      np.full((n, n), 0.5),  # all ties
      np.triu(np.ones((n, n)), 1) + 0.5 * np.eye(n),  # saturated
    ]
  )
  P = jnp.asarray(P, jnp.float32)

  def loss(P, tau, gamma, gamma_c, r):
    s = ste_scores(
      P, tau=tau, gamma=gamma, gamma_c=gamma_c, reach_gamma=0.0 if reach_gamma == "exact" else r
    )
    return jnp.sum(s.top_cycle * jnp.arange(n, dtype=jnp.float32)[None, :]) + jnp.sum(
      s.uncovered**2
    )

  zero = jnp.float32(0.0)
  value, grads = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3, 4)))(
    P, zero, zero, zero, zero
  )
  assert _finite((value, grads))


def test_gradients_of_each_operator_are_finite_at_traced_zero():
  rng = np.random.default_rng(25)
  zero = jnp.float32(0.0)
  z = jnp.asarray(rng.uniform(size=(4, 5)), jnp.float32)
  for fn in (normalized_smax, normalized_softmin):
    assert _finite(jax.jit(jax.grad(lambda z, g: jnp.sum(fn(z, gamma=g)), argnums=(0, 1)))(z, zero))
  D = soft_majority_edges(
    jnp.asarray(oracles.random_tournament(rng, 5, tie_prob=0.3), jnp.float32), tau=0.1
  )
  for fn in (
    lambda D, g: soft_majority_edges(D + 0.5 * jnp.eye(5, dtype=jnp.float32), tau=g),
    lambda D, g: soft_reachability(D, gamma=g),
    lambda D, g: max_min_product(D, D, gamma=g),
    lambda D, g: soft_top_cycle_score(D, gamma=g),
    lambda D, g: soft_uncovered_score(D, gamma_c=g),
    lambda D, g: soft_cover_violation(D, gamma_c=g),
  ):
    assert _finite(jax.jit(jax.grad(lambda D, g: jnp.sum(fn(D, g) ** 2), argnums=(0, 1)))(D, zero))


_P = np.array([[0.5, 0.7, 0.2], [0.3, 0.5, 0.6], [0.8, 0.4, 0.5]], np.float32)
_D = np.array([[0.0, 0.7, 0.2], [0.3, 0.0, 0.6], [0.8, 0.4, 0.0]], np.float32)

_CALLS = {
  "soft_majority_edges": ("tau", lambda t: soft_majority_edges(_P, tau=t)),
  "normalized_smax": ("gamma", lambda t: normalized_smax(_D, gamma=t)),
  "normalized_softmin": ("gamma", lambda t: normalized_softmin(_D, gamma=t)),
  "max_min_product": ("gamma", lambda t: max_min_product(_D, _D, gamma=t)),
  "soft_reachability": ("gamma", lambda t: soft_reachability(_D, gamma=t)),
  "soft_cover_violation": ("gamma_c", lambda t: soft_cover_violation(_D, gamma_c=t)),
  "soft_cover_violation_n2": ("gamma_c", lambda t: soft_cover_violation(_D[:2, :2], gamma_c=t)),
  "soft_cover_scores": ("gamma_c", lambda t: soft_cover_scores(_D, gamma_c=t)),
  "soft_top_cycle_score": ("gamma", lambda t: soft_top_cycle_score(_D, gamma=t)),
  "soft_uncovered_score": ("gamma_c", lambda t: soft_uncovered_score(_D, gamma_c=t)),
  "ste_scores.tau": ("tau", lambda t: ste_scores(_P, tau=t)),
  "ste_scores.gamma": ("gamma", lambda t: ste_scores(_P, tau=0.1, gamma=t)),
  "ste_scores.gamma_c": ("gamma_c", lambda t: ste_scores(_P, tau=0.1, gamma_c=t)),
  "ste_scores.reach_gamma": ("reach_gamma", lambda t: ste_scores(_P, tau=0.1, reach_gamma=t)),
  "ste_scores_from_edges.gamma": ("gamma", lambda t: ste_scores_from_edges(_D, gamma=t)),
  "ste_scores_from_edges.gamma_c": (
    "gamma_c",
    lambda t: ste_scores_from_edges(_D, gamma=0.1, gamma_c=t),
  ),
  "ste_scores_from_edges.reach_gamma": (
    "reach_gamma",
    lambda t: ste_scores_from_edges(_D, gamma=0.1, reach_gamma=t),
  ),
}


@pytest.mark.parametrize(
  "bad", [-0.1, -1, np.float32(-0.5), np.array(-2.0), float("nan"), float("inf"), -np.inf]
)
@pytest.mark.parametrize("call", sorted(_CALLS))
def test_bad_concrete_temperatures_raise_naming_the_argument(call, bad):
  name, fn = _CALLS[call]
  with pytest.raises(ValueError, match=rf"^{name} must be a finite number >= 0"):
    fn(bad)
  with pytest.raises(ValueError, match=rf"^{name} must be a finite number >= 0"):
    fn(jnp.asarray(bad, jnp.float32))  # a concrete JAX array is checked too


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_zero_and_positive_concrete_temperatures_are_accepted(call):
  _, fn = _CALLS[call]
  for t in (
    0,
    0.0,
    np.float32(0.0),
    jnp.float32(0.0),
    0.05,
    np.float64(0.2),
    jnp.asarray(1.0, jnp.float32),
  ):
    assert _finite(fn(t))


def test_non_scalar_temperature_raises():
  with pytest.raises(ValueError, match="gamma_c must be a scalar temperature"):
    soft_cover_scores(_D, gamma_c=np.ones(2))
  with pytest.raises(ValueError, match="reach_gamma must be a scalar temperature"):
    ste_scores(_P, tau=0.1, reach_gamma=jnp.ones(3))


def test_traced_temperatures_are_not_checked_and_negative_acts_as_zero():
  """Documented: a traced value cannot be checked; a traced negative one is the hard limit."""
  rng = np.random.default_rng(24)
  P = jnp.asarray(oracles.random_tournament(rng, 8, margin=0.02), jnp.float32)
  neg = jnp.float32(-0.1)
  np.testing.assert_array_equal(
    _scores_at(P, neg, neg, neg), _scores_at(P, *(jnp.float32(0.0),) * 3)
  )
