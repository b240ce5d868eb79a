"""Soft reachability: exact closure vs K literal products, custom VJP vs autodiff, soft variant."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from ste_jax import max_min_product, soft_majority_edges, soft_reachability
from ste_jax.ops import _maxmin, closure_algorithm
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
  """The full closure (K = n - 1) by either algorithm: the literal products' values, equal gradients.

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


@pytest.mark.parametrize("K", [1, pytest.param(3, marks=pytest.mark.slow), None])  # K = 3: about 5 s on 2 cores
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
  check_grads(jax.jit(lambda X, Y, g: max_min_product(X, Y, gamma=g)), (X, Y, jnp.float64(0.3)), order=1)
  with pytest.raises(ValueError, match="X and Y must have shapes"):
    max_min_product(X, X)


def test_batch_vmap_jit_and_float32_gradient_close_to_float64():
  rng = np.random.default_rng(9)
  D = np.stack([random_edges(rng, 8, np.float32) for _ in range(6)]).reshape(2, 3, 8, 8)
  batched = np.asarray(soft_reachability(D))
  single = np.stack([np.asarray(soft_reachability(d)) for d in D.reshape(6, 8, 8)]).reshape(D.shape)
  np.testing.assert_array_equal(batched, single)
  np.testing.assert_array_equal(jax.vmap(jax.vmap(soft_reachability))(D), single)
  np.testing.assert_array_equal(jax.jit(soft_reachability, static_argnames="max_path_length")(D), single)
  gb = jax.grad(lambda D: soft_reachability(D).sum())(D)
  gs = np.stack([np.asarray(jax.grad(lambda d: soft_reachability(d).sum())(d)) for d in D.reshape(6, 8, 8)])
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


@pytest.mark.parametrize("pivots_per_sweep", [1, 3, 4])
def test_floyd_warshall_edges_equal_the_rank_closure_edges_ties_included(monkeypatch, pivots_per_sweep):
  """The bottleneck edges from (value, index) keys are those of the closure on stable-sort ranks.

  Sweeps of several pivots (here from n = 3 on; n = 10 with 3 per sweep pads the matrix to 12) must
  equal single pivots; exact ties (many entries 1/2 and 1, as in sparse data) must break alike.
  The values' closure runs the same sweeps and must equal the literal K-product closure.
  """
  monkeypatch.setattr(_maxmin, "_SWEEP_MIN_N", 3)
  monkeypatch.setattr(_maxmin, "_PIVOTS_PER_SWEEP", pivots_per_sweep)
  rng = np.random.default_rng(pivots_per_sweep)
  for n in [1, 2, 3, 10, 13]:
    W = rng.choice([0.0, 0.25, 0.5, 0.5, 1.0], size=(n, n)).astype(np.float32)
    distinct = rng.uniform(size=(n, n)) < 0.3
    W[distinct] = rng.uniform(size=int(distinct.sum()))
    for matrix in (W, rng.uniform(size=(n, n)).astype(np.float32)):
      got = jax.jit(_maxmin._floyd_warshall_edges)(jnp.asarray(matrix))
      expect = jax.jit(lambda w: _maxmin._rank_edges(w, K=max(n - 1, 1)))(jnp.asarray(matrix))
      np.testing.assert_array_equal(got, expect)
      if n >= 3:
        values = jax.jit(lambda w: _maxmin._closure_single(w, K=n - 1))(jnp.asarray(matrix))
        off = ~np.eye(n, dtype=bool)
        literal = np.asarray(oracles.naive_reachability(jnp.asarray(matrix), n - 1, 0.0))
        np.testing.assert_array_equal(np.asarray(values)[off], literal[off])
