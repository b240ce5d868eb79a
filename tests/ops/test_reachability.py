"""Soft reachability: exact closure vs K literal products, custom VJP vs autodiff, soft variant."""

import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

from ste_jax.ops import (
  _maxmin,
  closure_algorithm,
  max_min_product,
  soft_majority_edges,
  soft_reachability,
  ste_scores,
)
from tests import oracles


def random_edges(rng, n, dtype=np.float64):
  D = rng.uniform(size=(n, n))
  np.fill_diagonal(D, 0.0)
  return D.astype(dtype)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 11])
@pytest.mark.parametrize("K", [1, 2, 3, 5, None, 20])
def test_exact_closure_equals_literal_products(rng, n, K):
  D = random_edges(rng, n, np.float32)
  k = n - 1 if K is None else K
  expect = np.asarray(oracles.naive_reachability(jnp.asarray(D), max(k, 1), 0.0))
  got = np.asarray(soft_reachability(D, max_path_length=K))
  np.testing.assert_array_equal(got, expect)


def test_squaring_and_floyd_warshall_closures_agree_with_literal_products(x64):
  """The full closure (K = n - 1) by either algorithm: the literal products' values, equal
  gradients.

  Floyd--Warshall's gradient is checked against autodiff of the literal products in
  ``test_custom_vjp_equals_autodiff_of_literal_products``; equal gradients carry that over.
  """
  rng = np.random.default_rng(11)
  for n in [1, 3, 4, 10]:  # 0, 0, 1 and 3 squarings
    D = jnp.asarray(random_edges(rng, n))
    W = jnp.asarray(rng.normal(size=(n, n)))
    expect = oracles.naive_reachability(D, max(n - 1, 1), 0.0)
    grads = []
    for algorithm in ("floyd_warshall", "squaring"):
      with closure_algorithm(algorithm):
        loss = lambda D: jnp.sum(W * soft_reachability(D))
        R, dR = jax.jit(lambda D: (soft_reachability(D), jax.grad(loss)(D)))(D)
      np.testing.assert_array_equal(R, expect)
      grads.append(dR)
    np.testing.assert_array_equal(grads[0], grads[1])


def test_closure_algorithm_rejects_unknown_names():
  with pytest.raises(ValueError, match="algorithm"):
    with closure_algorithm("dijkstra"):
      pass


def test_binary_edges_give_transitive_closure(rng):
  for n in [4, 9, 25]:
    A = rng.uniform(size=(n, n)) < 0.15
    np.fill_diagonal(A, False)
    R = np.asarray(soft_reachability(A.astype(np.float32)))
    expect = oracles.nx_reachability(A) & ~np.eye(n, dtype=bool)
    np.testing.assert_array_equal(R, expect.astype(np.float32))


@pytest.mark.parametrize("K", [1, 2, 4, None])
def test_custom_vjp_equals_autodiff_of_literal_products(x64, K):
  rng = np.random.default_rng(5)
  n = 7
  D = jnp.asarray(random_edges(rng, n))
  W = jnp.asarray(rng.normal(size=(n, n)))
  k = n - 1 if K is None else K
  f_fast = lambda D: jnp.sum(W * soft_reachability(D, max_path_length=K))
  f_naive = lambda D: jnp.sum(W * oracles.naive_reachability(D, k, 0.0))
  np.testing.assert_allclose(jax.grad(f_fast)(D), jax.jit(jax.grad(f_naive))(D), atol=1e-12)
  check_grads(jax.jit(f_fast), (D,), order=1, modes=("rev",), eps=1e-7)


@pytest.mark.parametrize(
  "K", [1, pytest.param(3, marks=pytest.mark.slow), None]
)  # K = 3: about 5 s on 2 cores
def test_soft_products_match_equations_values_and_gradients(x64, K):
  rng = np.random.default_rng(6)
  n = 5
  D = jnp.asarray(random_edges(rng, n))
  k = n - 1 if K is None else K
  W = jnp.asarray(rng.normal(size=(n, n)))
  got = soft_reachability(D, max_path_length=K, gamma=0.1)
  # The dense oracle compiled (one program, not op by op; the same equations either way).
  expect = jax.jit(oracles.naive_reachability, static_argnums=1)(D, k, 0.1)
  np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-12)
  assert np.all((np.asarray(got) >= 0) & (np.asarray(got) <= 1))
  f = lambda D, g: jnp.sum(W * soft_reachability(D, max_path_length=K, gamma=g))
  f_naive = lambda D, g: jnp.sum(W * oracles.naive_reachability(D, k, g))
  for a, b in zip(jax.grad(f, (0, 1))(D, 0.1), jax.jit(jax.grad(f_naive, (0, 1)))(D, 0.1)):
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
  check_grads(jax.jit(f), (D, jnp.float64(0.1)), order=1, modes=("rev",), eps=1e-6)


def test_max_min_product(x64):
  rng = np.random.default_rng(8)
  X, Y = jnp.asarray(rng.uniform(size=(2, 3, 4))), jnp.asarray(rng.uniform(size=(2, 4, 5)))
  expect = np.max(np.minimum(np.asarray(X)[:, :, :, None], np.asarray(Y)[:, None, :, :]), axis=2)
  np.testing.assert_array_equal(max_min_product(X, Y), expect)
  # Equation soft_boolean_product with a *soft* inner minimum (m = 2), literally.
  g = 0.05
  x = np.asarray(X)[:, :, :, None]
  y = np.asarray(Y)[:, None, :, :]
  inner = -g * np.log((np.exp(-x / g) + np.exp(-y / g)) / 2)
  soft = g * np.log(np.mean(np.exp(inner / g), axis=2))
  np.testing.assert_allclose(max_min_product(X, Y, gamma=g), soft, rtol=1e-12)
  check_grads(
    jax.jit(lambda X, Y, g: max_min_product(X, Y, gamma=g)), (X, Y, jnp.float64(0.3)), order=1
  )
  with pytest.raises(ValueError, match="X and Y must have shapes"):
    max_min_product(X, X)


def test_batch_vmap_jit_and_float32_gradient_close_to_float64():
  rng = np.random.default_rng(9)
  D = np.stack([random_edges(rng, 8, np.float32) for _ in range(6)]).reshape(2, 3, 8, 8)
  batched = np.asarray(soft_reachability(D))
  single = np.stack([np.asarray(soft_reachability(d)) for d in D.reshape(6, 8, 8)]).reshape(D.shape)
  np.testing.assert_array_equal(batched, single)
  np.testing.assert_array_equal(jax.vmap(jax.vmap(soft_reachability))(D), single)
  np.testing.assert_array_equal(
    jax.jit(soft_reachability, static_argnames="max_path_length")(D), single
  )
  gb = jax.grad(lambda D: soft_reachability(D).sum())(D)
  gs = np.stack(
    [np.asarray(jax.grad(lambda d: soft_reachability(d).sum())(d)) for d in D.reshape(6, 8, 8)]
  )
  np.testing.assert_array_equal(np.asarray(gb).reshape(6, 8, 8), gs)


def test_zero_diagonal_and_range(rng):
  P = oracles.random_tournament(rng, 10, tie_prob=0.2).astype(np.float32)
  R = np.asarray(soft_reachability(soft_majority_edges(P, tau=0.05)))
  assert np.all(np.diag(R) == 0) and np.all((R >= 0) & (R <= 1))


def test_invalid_path_length():
  with pytest.raises(ValueError, match="max_path_length"):
    soft_reachability(jnp.zeros((3, 3)), max_path_length=0)
  with pytest.raises(TypeError, match="max_path_length"):
    soft_reachability(jnp.zeros((3, 3)), max_path_length=2.5)
  with pytest.raises(TypeError, match="max_path_length"):  # a traced K cannot set loop lengths
    jax.jit(lambda K: soft_reachability(jnp.zeros((3, 3)), max_path_length=K))(2)


def test_numpy_integer_path_length_is_static():
  """A NumPy integer K (read from a config or an array) is the same static bound as a Python int."""
  D = random_edges(np.random.default_rng(3), 5, np.float32)
  np.testing.assert_array_equal(
    soft_reachability(D, max_path_length=np.int64(2)), soft_reachability(D, max_path_length=2)
  )
  P = jnp.asarray(oracles.random_tournament(np.random.default_rng(3), 5), jnp.float32)
  s = ste_scores(P, tau=0.1, max_path_length=np.int32(2))
  np.testing.assert_array_equal(s.top_cycle, ste_scores(P, tau=0.1, max_path_length=2).top_cycle)


def perturbed_bottleneck_edges(W, K):
  """Independent oracle: each output's bottleneck edge after breaking ties by flat index.

  Adds ``1e-9 * (index + 1) / n**2`` to every entry in float64 (entries are at least ``1e-6`` apart
  or equal, so the order becomes value-then-index), takes ``K`` literal max-min products in NumPy
  and reads each output's edge as the unique entry holding its value. Off-diagonal outputs only (the
  diagonal is masked by every caller), flattened.
  """
  n = W.shape[0]
  Wp = W.astype(np.float64) + 1e-9 * (np.arange(n * n).reshape(n, n) + 1) / n**2
  np.fill_diagonal(Wp, -np.inf)
  Q = R = Wp
  for _ in range(K - 1):
    Q = np.max(np.minimum(Q[:, :, None], Wp[None, :, :]), axis=1)
    R = np.maximum(R, Q)
  where = {v: e for e, v in enumerate(Wp.reshape(-1))}
  off = ~np.eye(n, dtype=bool)
  return np.array([where[v] if np.isfinite(v) else -1 for v in R[off]], dtype=np.int32)


@pytest.mark.parametrize(
  ("pivots_per_sweep", "keys"),
  # one pivot per step with per-component keys (the small-n path); a padded sweep with the select
  [(1, "per_component"), (3, "select")]
  + [
    pytest.param(p, k, marks=pytest.mark.slow)
    for p, k in [(1, "select"), (3, "per_component"), (4, "per_component"), (4, "select")]
  ],
)
def test_bottleneck_edges_break_ties_by_index_like_a_perturbation(
  patch_trace_constant, pivots_per_sweep, keys
):
  """Bottleneck edges (Floyd--Warshall on keys, the closure on ranks) = a tie-breaking perturbation.

  Exact ties (many entries 1/2 and 1, as in sparse data) must be broken as by one global order of
  the entries, value then index -- the order of an infinitesimal perturbation, so each derivative is
  that of one linear piece of the closure, and the true derivative wherever the closure is
  differentiable (``test_gradient_at_tied_entries_where_the_closure_is_differentiable``). Checked
  against :func:`perturbed_bottleneck_edges`, for sweeps of several pivots (here from n = 3 on; n =
  10 with 3 per sweep pads the matrix to 12) and bounded path lengths (rank closure). The values'
  closure runs the same sweeps and must equal the literal K-product closure. Both forms of the key
  comparisons (per component, one compound select: ``_SELECT_KEYS_MIN_N``) are run.
  """
  patch_trace_constant(_maxmin, "_SELECT_KEYS_MIN_N", 0 if keys == "select" else 1 << 30)
  patch_trace_constant(_maxmin, "_SWEEP_MIN_N", 3)
  patch_trace_constant(_maxmin, "_PIVOTS_PER_SWEEP", pivots_per_sweep)
  rng = np.random.default_rng(pivots_per_sweep)
  for n in [1, 2, 3, 10, 13]:
    W = rng.choice([0.0, 0.25, 0.5, 0.5, 1.0], size=(n, n)).astype(np.float32)
    distinct = rng.uniform(size=(n, n)) < 0.3
    W[distinct] = rng.uniform(size=int(distinct.sum()))
    K = max(n - 1, 1)
    off = ~np.eye(n, dtype=bool).reshape(-1)
    for matrix in (W, rng.uniform(size=(n, n)).astype(np.float32)):
      expect = perturbed_bottleneck_edges(matrix, K)
      got = jax.jit(_maxmin._floyd_warshall_edges)(jnp.asarray(matrix))
      ranked = jax.jit(lambda w: _maxmin._rank_edges(w, K=K))(jnp.asarray(matrix))
      np.testing.assert_array_equal(np.asarray(got)[off], expect)
      np.testing.assert_array_equal(np.asarray(ranked)[off], expect)
      if n >= 3:
        bounded = jax.jit(lambda w: _maxmin._rank_edges(w, K=2))(jnp.asarray(matrix))
        np.testing.assert_array_equal(
          np.asarray(bounded)[off], perturbed_bottleneck_edges(matrix, 2)
        )
        values = jax.jit(lambda w: _maxmin._closure_single(w, K=n - 1))(jnp.asarray(matrix))
        off2 = off.reshape(n, n)
        literal = np.asarray(oracles.naive_reachability(jnp.asarray(matrix), n - 1, 0.0))
        np.testing.assert_array_equal(np.asarray(values)[off2], literal[off2])


@pytest.mark.parametrize("algorithm", ["floyd_warshall", "squaring"])
def test_gradient_at_tied_entries_where_the_closure_is_differentiable(algorithm):
  """Equal entries need not make the closure non-differentiable; then the gradient must be exact.

  Vertices x=0, y=1, a=2, b=3: edges a->x and x->b both 0.5, a->y->x both 0.9. The widest walk
  a -> y -> x -> b avoids a->x, so R[a, b] = min(max(W[a,x], 0.9), W[x,b]) = W[x,b] near this
  point: derivative 1 for x->b and 0 for a->x (finite differences agree). A bottleneck edge picked
  as "the first walk found" (a -> x -> b at pivot x, kept at pivot y as no better) gets it wrong.
  """
  W = np.zeros((4, 4), np.float32)
  W[2, 0] = W[0, 3] = 0.5
  W[2, 1] = W[1, 0] = 0.9
  W = jnp.asarray(W)
  with closure_algorithm(algorithm):
    reach_ab = jax.jit(lambda W: soft_reachability(W)[2, 3])
    grad = np.asarray(jax.grad(reach_ab)(W))
  eps = 1e-3
  fd = {}
  for i, j in [(2, 0), (0, 3)]:
    bump = jnp.zeros_like(W).at[i, j].set(eps)
    fd[i, j] = float(reach_ab(W + bump) - reach_ab(W - bump)) / (2 * eps)
  np.testing.assert_allclose([fd[2, 0], fd[0, 3]], [0.0, 1.0], atol=1e-3)
  expect = np.zeros((4, 4), np.float32)
  expect[0, 3] = 1.0
  np.testing.assert_array_equal(grad, expect)
