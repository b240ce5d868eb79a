"""Tiled soft cover, values and derivatives, vs the dense transcription of Eqs.
soft_cover_violation/score."""

import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

from ste_jax.ops import _cover_kernels, soft_cover_scores, soft_uncovered_score
from tests import oracles


def random_edges(rng, n):
  D = rng.uniform(size=(n, n))
  np.fill_diagonal(D, 0.0)
  return D


# Tile budgets (elements of one tile, value and reverse kernels alike): the default (one tile for
# these small n); 20 -- blocks of rows ``a`` for one row ``c``, the last block padded at n = 7 and 9
# (2 rows each), and at n = 3 two rows ``c`` per tile, padded; 100 -- several rows ``c`` per tile
# with whole rows ``a``, the last block padded at n = 7 (4 blocks of 2).
@pytest.fixture(params=[None, 20, 100], ids=["one_tile", "a_blocks", "c_blocks"])
def block_budget(request, patch_trace_constant):
  """Also runs each test with tiny tiles (several blocks of rows ``a`` or ``c``, some padded)."""
  if request.param is not None:
    patch_trace_constant(_cover_kernels, "_TILE_ELEMENTS", request.param)
    patch_trace_constant(_cover_kernels, "_BACKWARD_TILE_ELEMENTS", request.param)
  return request.param


# For the tests it decorates: small tiles by default, one tile (the layout every other test of the
# operators runs; 9-10 s each on 2 cores) in `make test-slow`.
_MANY_CHUNKS_BY_DEFAULT = pytest.mark.parametrize(
  "block_budget",
  [
    pytest.param(None, id="one_tile", marks=pytest.mark.slow),
    pytest.param(20, id="a_blocks"),
    pytest.param(100, id="c_blocks"),
  ],
  indirect=True,
)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9])
@pytest.mark.parametrize("gamma_c", [0.0, 0.3, 0.01])
def test_values_and_gradients_match_dense_equations(x64, block_budget, n, gamma_c):
  rng = np.random.default_rng(n)
  D = jnp.asarray(random_edges(rng, n))
  W = jnp.asarray(rng.normal(size=(n, n)))
  got = soft_cover_scores(D, gamma_c=gamma_c)
  np.testing.assert_allclose(got, oracles.naive_cover(D, gamma_c), rtol=1e-12, atol=1e-14)
  assert np.all((np.asarray(got) >= 0) & (np.asarray(got) <= 1))
  f = lambda D: jnp.sum(W * soft_cover_scores(D, gamma_c=gamma_c))
  f_naive = lambda D: jnp.sum(W * oracles.naive_cover(D, gamma_c))
  np.testing.assert_allclose(jax.grad(f)(D), jax.jit(jax.grad(f_naive))(D), rtol=1e-10, atol=1e-12)


@_MANY_CHUNKS_BY_DEFAULT
def test_temperature_gradient_and_finite_differences(x64, block_budget):
  rng = np.random.default_rng(11)
  D = jnp.asarray(random_edges(rng, 6))
  W = jnp.asarray(rng.normal(size=(6, 6)))
  f = lambda D, g: jnp.sum(W * soft_cover_scores(D, gamma_c=g))
  f_naive = lambda D, g: jnp.sum(W * oracles.naive_cover(D, g))
  np.testing.assert_allclose(
    jax.grad(f, 1)(D, 0.2), jax.jit(jax.grad(f_naive, 1))(D, 0.2), rtol=1e-10
  )
  check_grads(jax.jit(f), (D, jnp.float64(0.2)), order=1, modes=("rev",), eps=1e-6)
  check_grads(
    jax.jit(lambda D: soft_uncovered_score(D, gamma_c=0.2)), (D,), order=1, modes=("rev",), eps=1e-6
  )


def test_hard_limit_on_examples():
  # Example 3 of the paper: B > A, C > A, C > B, D > B, D > C, A > D; C covers B.
  A = np.zeros((4, 4), np.float32)
  for w, l in [(1, 0), (2, 0), (2, 1), (3, 1), (3, 2), (0, 3)]:
    A[w, l] = 1.0
  cover = np.asarray(soft_cover_scores(A, gamma_c=0.0))
  expect = np.zeros((4, 4))
  expect[2, 1] = 1.0
  np.testing.assert_array_equal(cover, expect)
  np.testing.assert_array_equal(soft_uncovered_score(A, gamma_c=0.0), [1.0, 0.0, 1.0, 1.0])


# Batching is checked by default with several rows ``c`` per tile (the small-n layout); the blocks
# of rows ``a`` (the large-n layout, whose values and gradients the other tests check by default)
# and the single tile in `make test-slow` (5-10 s each on 2 cores).
@pytest.mark.parametrize(
  "block_budget",
  [
    pytest.param(None, id="one_tile", marks=pytest.mark.slow),
    pytest.param(20, id="a_blocks", marks=pytest.mark.slow),
    pytest.param(100, id="c_blocks"),
  ],
  indirect=True,
)
def test_vmap_batch_and_jit_agree(block_budget):
  rng = np.random.default_rng(12)
  D = np.stack([random_edges(rng, 7) for _ in range(4)]).astype(np.float32)
  batched = np.asarray(soft_cover_scores(D, gamma_c=0.05))
  single = np.stack([np.asarray(soft_cover_scores(d, gamma_c=0.05)) for d in D])
  np.testing.assert_allclose(batched, single, rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(
    jax.vmap(lambda d: soft_cover_scores(d, gamma_c=0.05))(D), single, rtol=1e-6, atol=1e-7
  )
  np.testing.assert_allclose(
    jax.jit(lambda d, g: soft_cover_scores(d, gamma_c=g))(D, 0.05), single, rtol=1e-6, atol=1e-7
  )
  g_b = jax.grad(lambda d: soft_uncovered_score(d, gamma_c=0.05).sum())(D)
  g_s = np.stack(
    [np.asarray(jax.grad(lambda d: soft_uncovered_score(d, gamma_c=0.05).sum())(d)) for d in D]
  )
  np.testing.assert_allclose(g_b, g_s, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("gamma_c", [0.0199, 0.02, 0.05])
def test_float32_shift_by_one_matches_float64_equations_at_its_threshold(gamma_c):
  """From gamma_c = 1/50 the value kernel shifts every exponent by 1 instead of each pair's maximum.

  At the threshold the smallest maximum (0: the pairs of a row of zeros) sits 50 below the
  shift; float32 values and gradients must still match the float64 dense equations (the pair-max
  shift runs just below the threshold, so both sides of it are checked).
  """
  rng = np.random.default_rng(7)
  n = 40
  D = random_edges(rng, n)
  D[3] = 0.0  # every term of a = 3 is 0
  D[:, 5] = 1.0  # 1 - D[c, 5] = 0: terms of witness 5 vanish
  D[7] = rng.uniform(size=n) * 1e-3  # small maxima
  np.fill_diagonal(D, 0.0)
  W = rng.normal(size=(n, n))
  got = soft_cover_scores(jnp.asarray(D, jnp.float32), gamma_c=gamma_c)
  f = lambda D: jnp.sum(jnp.asarray(W, D.dtype) * soft_cover_scores(D, gamma_c=gamma_c))
  grad = jax.grad(f)(jnp.asarray(D, jnp.float32))
  with jax.enable_x64(True):
    D64 = jnp.asarray(D, jnp.float64)
    expect = np.asarray(jax.jit(lambda D: oracles.naive_cover(D, gamma_c))(D64))
    f_naive = lambda D: jnp.sum(jnp.asarray(W) * oracles.naive_cover(D, gamma_c))
    expect_grad = np.asarray(jax.jit(jax.grad(f_naive))(D64))
  assert got.dtype == jnp.float32 and grad.dtype == jnp.float32
  np.testing.assert_allclose(got, expect, atol=2e-6)
  np.testing.assert_allclose(grad, expect_grad, atol=2e-5 * np.abs(expect_grad).max())
