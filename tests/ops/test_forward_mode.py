"""Forward mode and second order: jvp / jacfwd / linearize / hessian of every soft operator.

The derivatives come from custom JVP rules (``ste_jax.ops._maxmin.bottleneck_closure``, and
``ste_jax.ops._covering._cover_parts``); reverse mode is their transpose (the cover's: its
hand-written reverse pass, checked here against the transpose JAX derives from its tangent map).
Checked here:
finite differences to second order in both modes, equality with autodiff of the dense transcription
of the equations (``tests/oracles.py``), jvp = Jacobian (from ``jacrev``) times the tangent,
``linearize`` and its transpose, and the memory of a Hessian-vector product at n = 1000.
"""

import chex
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

from ste_jax.ops import (
  _cover_kernels,
  _covering,
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

N = 5


def _edges(seed, n=N):
  """Soft adjacency with distinct entries (no ties: the closure is differentiable there)."""
  rng = np.random.default_rng(seed)
  D = rng.uniform(0.05, 0.95, size=(n, n))
  np.fill_diagonal(D, 0.0)
  return jnp.asarray(D)


def _tournament(seed, n=N):
  return jnp.asarray(oracles.random_tournament(np.random.default_rng(seed), n, margin=0.05))


def _stacked(s):
  return jnp.stack([s.top_cycle, s.uncovered])


# Each soft operator as a function of (array, temperature); float64 arguments built inside x64.
OPERATORS = {
  "soft_majority_edges": (_tournament, 0.2, lambda P, t: soft_majority_edges(P, tau=t)),
  "normalized_smax": (_edges, 0.3, lambda z, g: normalized_smax(z, gamma=g)),
  "normalized_softmin": (_edges, 0.3, lambda z, g: normalized_softmin(z, gamma=g, axis=0)),
  "max_min_product": (_edges, 0.2, lambda D, g: max_min_product(D, D.T, gamma=g)),
  "soft_reachability.closure": (_edges, None, lambda D, g: soft_reachability(D)),
  "soft_reachability.closure_K2": (
    _edges,
    None,
    lambda D, g: soft_reachability(D, max_path_length=2),
  ),
  "soft_reachability.smooth": (
    _edges,
    0.2,
    lambda D, g: soft_reachability(D, gamma=g, max_path_length=3),
  ),
  "soft_cover_violation": (_edges, 0.3, lambda D, g: soft_cover_violation(D, gamma_c=g)),
  "soft_cover_violation.hard": (_edges, None, lambda D, g: soft_cover_violation(D, gamma_c=0.0)),
  "soft_cover_scores": (_edges, 0.3, lambda D, g: soft_cover_scores(D, gamma_c=g)),
  "soft_top_cycle_score": (_edges, 0.3, lambda R, g: soft_top_cycle_score(R, gamma=g)),
  "soft_uncovered_score": (_edges, 0.3, lambda D, g: soft_uncovered_score(D, gamma_c=g)),
  "ste_scores.closure": (_tournament, 0.2, lambda P, t: _stacked(ste_scores(P, tau=t))),
  "ste_scores.smooth": (
    _tournament,
    0.2,
    lambda P, t: _stacked(ste_scores(P, tau=t, reach_gamma=0.1)),
  ),
  "ste_scores_from_edges.closure": (
    _edges,
    0.3,
    lambda D, g: _stacked(ste_scores_from_edges(D, gamma=g)),
  ),
  "ste_scores_from_edges.smooth": (
    _edges,
    0.3,
    lambda D, g: _stacked(ste_scores_from_edges(D, gamma=g, reach_gamma=0.2)),
  ),
}


# The smooth products and reachability (O(n^3) dense scans) run in `make test-slow`, and so do the
# composite scores, the smooth cover and the extrema (2-12 s each on 2 cores since the checks run
# compiled, 2026-11-27; by default: the closure, the hard cover and the Top-Cycle score here, the
# smooth cover against the dense equations below, the extrema to second order in
# tests/ops/test_extrema.py).
_SLOW_CHECKS = (
  "max_min_product",
  "soft_reachability.smooth",
  "ste_scores.smooth",
  "ste_scores_from_edges.smooth",
  "normalized_smax",
  "normalized_softmin",
  "soft_cover_scores",
  "soft_cover_violation",
  "soft_uncovered_score",
  "ste_scores.closure",
  "ste_scores_from_edges.closure",
)


@pytest.mark.parametrize(
  "name",
  [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_CHECKS else n for n in sorted(OPERATORS)],
)
def test_check_grads_second_order_forward_and_reverse(x64, name):
  make, temperature, fn = OPERATORS[name]
  x = make(1)
  if temperature is None:  # no temperature (exact closure, hard cover)
    check_grads(jax.jit(lambda x: fn(x, None)), (x,), order=2, modes=("fwd", "rev"), eps=1e-5)
  else:
    check_grads(jax.jit(fn), (x, jnp.float64(temperature)), order=2, modes=("fwd", "rev"), eps=1e-5)


def _oracle_pairs():
  """(ours, dense transcription) pairs as functions of one float64 array."""
  n = N
  return {
    "closure": (
      lambda D: soft_reachability(D),
      lambda D: oracles.naive_reachability(D, n - 1, 0.0),
    ),
    "closure_K2": (
      lambda D: soft_reachability(D, max_path_length=2),
      lambda D: oracles.naive_reachability(D, 2, 0.0),
    ),
    "cover": (lambda D: soft_cover_scores(D, gamma_c=0.2), lambda D: oracles.naive_cover(D, 0.2)),
    "cover_hard": (
      lambda D: soft_cover_scores(D, gamma_c=0.0),
      lambda D: oracles.naive_cover(D, 0.0),
    ),
    "ste_scores": (
      lambda P: jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.1, gamma=0.2, gamma_c=0.3))),
      lambda P: jnp.stack(oracles.naive_ste_scores(P, 0.1, 0.2, 0.3, n - 1, 0.0)),
    ),
    "ste_scores_smooth": (
      lambda P: jnp.stack(
        jax.tree.leaves(ste_scores(P, tau=0.1, gamma=0.2, gamma_c=0.3, reach_gamma=0.15))
      ),
      lambda P: jnp.stack(oracles.naive_ste_scores(P, 0.1, 0.2, 0.3, n - 1, 0.15)),
    ),
  }


@pytest.mark.parametrize(
  "name",
  [
    "closure",
    "closure_K2",
    "cover",
    "cover_hard",
    pytest.param("ste_scores", marks=pytest.mark.slow),  # 4-5 s on 2 cores
    pytest.param("ste_scores_smooth", marks=pytest.mark.slow),
  ],
)
def test_custom_rules_equal_autodiff_of_the_dense_equations(x64, name):
  ours, naive = _oracle_pairs()[name]
  x = _tournament(2) if name.startswith("ste") else _edges(2)
  tol = dict(atol=1e-12, rtol=1e-10)  # float64; both sides sum the same terms in another order
  # Each derivative compiled (jax.jit), not run op by op.
  expect = jax.jit(jax.jacrev(naive))(x)
  chex.assert_trees_all_close(jax.jit(jax.jacfwd(ours))(x), expect, **tol)
  chex.assert_trees_all_close(jax.jit(jax.jacrev(ours))(x), expect, **tol)
  scalar = lambda f: lambda x: jnp.sum(jnp.sin(3.0 * f(x)))  # a loss with curvature of its own
  chex.assert_trees_all_close(
    jax.jit(jax.hessian(scalar(ours)))(x), jax.jit(jax.hessian(scalar(naive)))(x), **tol
  )


@pytest.mark.slow
def test_temperature_derivatives_equal_the_dense_equations(x64):
  P = _tournament(3)
  temps = jnp.asarray([0.1, 0.2, 0.3, 0.15])

  def ours(P, t):
    return jnp.stack(
      jax.tree.leaves(ste_scores(P, tau=t[0], gamma=t[1], gamma_c=t[2], reach_gamma=t[3]))
    )

  def naive(P, t):
    return jnp.stack(oracles.naive_ste_scores(P, t[0], t[1], t[2], N - 1, t[3]))

  tol = dict(atol=1e-12, rtol=1e-10)
  # Both compiled (the oracle's traced temperatures are positive ones).
  chex.assert_trees_all_close(
    jax.jit(jax.jacfwd(ours, 1))(P, temps), jax.jit(jax.jacrev(naive, 1))(P, temps), **tol
  )
  chex.assert_trees_all_close(
    jax.jit(jax.hessian(lambda t: jnp.sum(ours(P, t))))(temps),
    jax.jit(jax.hessian(lambda t: jnp.sum(naive(P, t))))(temps),
    **tol,
  )


# 2-5 s per layout on 2 cores; one block of rows ``a`` (the layout up to n = 512) is what every
# other test here runs.
@pytest.mark.slow
@pytest.mark.parametrize(
  "block_budget", [None, 7, 21], ids=["one_block", "row_blocks", "padded_blocks"]
)
def test_cover_tangent_blocks_do_not_change_derivatives(x64, patch_trace_constant, block_budget):
  """n = 7: all rows ``a`` in one block, one row per block (7 // 7), three rows with a padded last
  block."""
  if block_budget is not None:
    patch_trace_constant(_cover_kernels, "_BACKWARD_TILE_ELEMENTS", block_budget)
  D = _edges(4, n=7)
  for gamma_c in (0.0, 0.1):
    f = lambda D: soft_cover_scores(D, gamma_c=gamma_c)
    naive = lambda D: oracles.naive_cover(D, gamma_c)
    tol = dict(atol=1e-13, rtol=1e-11)
    expect = jax.jit(jax.jacrev(naive))(D)  # every derivative compiled, not run op by op
    chex.assert_trees_all_close(jax.jit(jax.jacfwd(f))(D), expect, **tol)
    chex.assert_trees_all_close(jax.jit(jax.jacrev(f))(D), expect, **tol)
    loss = lambda f: lambda D: jnp.sum(jnp.sin(3.0 * f(D)))
    chex.assert_trees_all_close(
      jax.jit(jax.hessian(loss(f)))(D), jax.jit(jax.hessian(loss(naive)))(D), **tol
    )


class TransformationsTest(chex.TestCase):
  """jvp = Jacobian times tangent, linearize and its transpose, with and without ``jax.jit``."""

  def _fns(self):
    return {
      "closure": lambda P: soft_reachability(P),
      "cover": lambda D: soft_cover_scores(D, gamma_c=0.05),
      "ste_scores": lambda P: jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.05))),
      "ste_scores_smooth": lambda P: jnp.stack(
        jax.tree.leaves(ste_scores(P, tau=0.05, reach_gamma=0.1))
      ),
    }

  @chex.variants(with_jit=True, without_jit=True)
  @pytest.mark.slow  # 3-6 s per variant on 2 cores
  def test_jvp_is_the_jacobian_times_the_tangent(self):
    with (
      jax.enable_x64(True),
      jax.numpy_dtype_promotion("strict"),
      jax.numpy_rank_promotion("raise"),
    ):
      x = _tournament(5, n=6)
      dx = jnp.asarray(np.random.default_rng(5).normal(size=(6, 6)))
      for name, f in self._fns().items():
        y, y_dot = self.variant(lambda x, dx: jax.jvp(f, (x,), (dx,)))(x, dx)
        J = jax.jacrev(f)(x)
        chex.assert_trees_all_close(y, f(x), atol=1e-14, rtol=1e-12, custom_message=name)
        chex.assert_trees_all_close(
          y_dot, jnp.tensordot(J, dx, axes=2), atol=1e-12, rtol=1e-10, custom_message=name
        )

  @chex.variants(with_jit=True, without_jit=True)
  @pytest.mark.slow  # 3-4 s per variant on 2 cores
  def test_linearize_and_its_transpose(self):
    with (
      jax.enable_x64(True),
      jax.numpy_dtype_promotion("strict"),
      jax.numpy_rank_promotion("raise"),
    ):
      x = _tournament(6, n=6)
      rng = np.random.default_rng(6)
      dx = jnp.asarray(rng.normal(size=(6, 6)))
      for name, f in self._fns().items():
        ct = jnp.asarray(rng.normal(size=f(x).shape))

        def lin_and_transpose(x, dx, ct):
          y, f_lin = jax.linearize(f, x)
          (x_bar,) = jax.linear_transpose(f_lin, x)(ct)
          return y, f_lin(dx), x_bar

        y, y_dot, x_bar = self.variant(lin_and_transpose)(x, dx, ct)
        chex.assert_trees_all_close(
          y_dot, jax.jvp(f, (x,), (dx,))[1], atol=1e-12, rtol=1e-10, custom_message=name
        )
        chex.assert_trees_all_close(
          x_bar, jax.vjp(f, x)[1](ct)[0], atol=1e-12, rtol=1e-10, custom_message=name
        )

  @chex.variants(with_jit=True, without_jit=True)
  @pytest.mark.slow  # 5-13 s per variant on 2 cores
  def test_hessian_vector_products_agree_across_modes(self):
    with (
      jax.enable_x64(True),
      jax.numpy_dtype_promotion("strict"),
      jax.numpy_rank_promotion("raise"),
    ):
      P = _tournament(7, n=6)
      v = jnp.asarray(np.random.default_rng(7).normal(size=(6, 6)))
      for reach_gamma in (0.0, 0.1):
        loss = lambda P: jnp.sum(
          jnp.sin(jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.05, reach_gamma=reach_gamma))))
        )
        fwd_over_rev = self.variant(lambda P, v: jax.jvp(jax.grad(loss), (P,), (v,))[1])(P, v)
        rev_over_fwd = self.variant(
          lambda P, v: jax.grad(lambda P: jax.jvp(loss, (P,), (v,))[1])(P)
        )(P, v)
        dense = jnp.tensordot(jax.hessian(loss)(P), v, axes=2)
        chex.assert_trees_all_close(fwd_over_rev, dense, atol=1e-11, rtol=1e-9)
        chex.assert_trees_all_close(rev_over_fwd, dense, atol=1e-11, rtol=1e-9)


@pytest.mark.slow  # about 4 s on 2 cores
def test_forward_mode_under_vmap_matches_a_loop():
  P = jnp.stack([_tournament(s, n=6) for s in range(3)]).astype(jnp.float32)
  f = lambda P: jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.05)))
  batched = jax.jit(jax.vmap(jax.jacfwd(f)))(P)
  jac = jax.jit(jax.jacfwd(f))
  loop = jnp.stack([jac(p) for p in P])
  chex.assert_trees_all_close(batched, loop, atol=1e-6, rtol=1e-5)  # float32
  chex.assert_trees_all_close(
    jac(P), jax.jit(jax.jacrev(f))(P), atol=1e-6, rtol=1e-5
  )  # (..., n, n) input


def _hvp(P, v):
  loss = lambda P: jnp.sum(jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.05))) ** 2)
  return jax.jvp(jax.grad(loss), (P,), (v,))[1]


def test_hessian_vector_product_at_n_1000_keeps_quadratic_memory():
  """Compiled, not run: XLA's buffer plan of an HVP (forward over reverse) of ste_scores."""
  n = 1000
  spec = jax.ShapeDtypeStruct((n, n), jnp.float32)
  for fn in (
    _hvp,
    lambda P, v: jax.jvp(
      lambda P: jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.05, reach_gamma=0.0))), (P,), (v,)
    )[1],
  ):
    memory = jax.jit(fn).lower(spec, spec).compile().memory_analysis()
    # O(n^2): a few dozen n x n float32 buffers (4 MB each); an n^3 tensor alone would be 4 GB.
    assert memory.temp_size_in_bytes < 400e6, memory


@pytest.mark.slow
def test_hessian_vector_product_at_n_1000_runs_and_both_nestings_agree():
  """An n = 1000 HVP runs, is finite, and forward-over-reverse equals reverse-over-forward.

  (Finite differences of the gradient are no oracle at this size: the exact closure is piecewise
  smooth, and a step of 1e-3 in 10^6 entries crosses many bottleneck switches; the small-n tests
  above check both nestings against finite differences and the dense transcription.)
  """
  n = 1000
  rng = np.random.default_rng(8)
  P = jnp.asarray(oracles.random_tournament(rng, n, margin=0.01), jnp.float32)
  v = jnp.asarray(rng.normal(size=(n, n)), jnp.float32)
  v = (v - v.T) / 2  # stays a tournament direction
  loss = lambda P: jnp.sum(jnp.stack(jax.tree.leaves(ste_scores(P, tau=0.05))) ** 2)
  fwd_over_rev = jax.jit(_hvp)(P, v)
  rev_over_fwd = jax.jit(jax.grad(lambda P: jax.jvp(loss, (P,), (v,))[1]))(P)
  assert bool(jnp.all(jnp.isfinite(fwd_over_rev)))
  scale = float(jnp.max(jnp.abs(fwd_over_rev)))
  assert scale > 0
  np.testing.assert_allclose(np.asarray(rev_over_fwd), np.asarray(fwd_over_rev), atol=1e-3 * scale)


def _scores_loss(P, tau=0.1):
  s = ste_scores(P, tau=tau)
  return jnp.sum(s.top_cycle * jnp.arange(6.0)) + jnp.sum(s.uncovered**2)


@pytest.mark.parametrize("gamma_c", ["hard", 0.0, 0.005, 0.3])
def test_cover_reverse_pass_is_the_transpose_of_its_tangent_map(x64, gamma_c):
  """``jax.vjp`` (the tangent primitive's transpose: the one-pass reverse kernel) equals the
  transpose JAX derives from the JAX tangent map, in ``D`` and in ``gamma_c`` (``"hard"``: a literal
  zero; 0.0: a traced zero)."""
  rng = np.random.default_rng(4)
  n = 7
  D = jnp.asarray(_edges(5, n))
  ct = jnp.asarray(rng.normal(size=(n, n)))
  hard = gamma_c == "hard"
  g = jnp.float64(1.0 if hard else gamma_c)
  violation = lambda D, g: _covering._cover_violation(D, g, hard)
  _, vjp = jax.vjp(violation, D, g)
  tangent_map = lambda D_dot, g_dot: _cover_kernels.tangent_single(D, g, D_dot, g_dot, hard=hard)
  derived = jax.linear_transpose(tangent_map, D, g)(ct)
  chex.assert_trees_all_close(vjp(ct), derived, rtol=1e-10, atol=1e-12)


def test_forward_mode_of_ste_scores_equals_its_gradient_times_the_tangent(x64):
  P = _tournament(3, 6)
  dP = jnp.asarray(np.random.default_rng(3).normal(size=(6, 6)))
  _, tangent = jax.jvp(_scores_loss, (P,), (dP,))
  chex.assert_trees_all_close(tangent, jnp.sum(jax.grad(_scores_loss)(P) * dP), rtol=1e-10)
