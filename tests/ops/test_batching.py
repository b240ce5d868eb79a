"""vmap_by_platform and batching_mode: the CPU loop and the accelerator batch axis give the per-item
results."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import ste_scores
from ste_jax.ops import batching_mode
from ste_jax.ops._batching import current_batching_mode, vmap_by_platform


@pytest.fixture(params=["auto", "vectorize"])
def batching(request):
  """Runs the test in the default mode (a loop on the CPU), then with the accelerator batch axis."""
  with batching_mode(request.param):
    yield request.param


def _kernel(x, pair, scale):
  """Arguments of several kinds: an array, a pytree, a scalar; two outputs."""
  return jnp.cumsum(x * scale) + pair["shift"], {"m": jnp.max(x) - pair["y"].sum()}


def test_toy_kernel_batched_equals_per_item(batching):
  rng = np.random.default_rng(0)
  xs = jnp.asarray(rng.normal(size=(5, 7)), jnp.float32)
  ys = jnp.asarray(rng.normal(size=(5, 3)), jnp.float32)
  shift, scale = jnp.float32(0.5), jnp.float32(2.0)
  wrapped = vmap_by_platform(_kernel)
  # x and pair["y"] batched; pair["shift"] and scale shared by all items.
  out = jax.jit(jax.vmap(lambda x, y: wrapped(x, {"shift": shift, "y": y}, scale)))(xs, ys)
  for i in range(5):
    ref = _kernel(xs[i], {"shift": shift, "y": ys[i]}, scale)
    np.testing.assert_allclose(out[0][i], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1]["m"][i], ref[1]["m"], rtol=1e-5, atol=1e-6)


def test_nested_vmap_equals_per_item(batching):
  xs = jnp.arange(24.0, dtype=jnp.float32).reshape(2, 3, 4)
  wrapped = vmap_by_platform(lambda x, s: jnp.cumsum(x) * s)
  out = jax.vmap(jax.vmap(wrapped, in_axes=(0, None)), in_axes=(0, 0))(
    xs, jnp.array([1.0, -1.0], jnp.float32)
  )
  ref = jnp.cumsum(xs, axis=-1) * jnp.array([1.0, -1.0], jnp.float32)[:, None, None]
  np.testing.assert_allclose(out, ref)
  # A batch axis that is not the leading one.
  out = jax.vmap(wrapped, in_axes=(1, None))(xs[0], jnp.float32(2.0))
  np.testing.assert_allclose(out, 2.0 * jnp.cumsum(xs[0].T, axis=-1))


@pytest.mark.parametrize("max_path_length", [None, 2])
@pytest.mark.parametrize("gamma_c", [0.05, 0.0])
def test_ste_scores_and_gradients_batched_equal_per_item(batching, max_path_length, gamma_c):
  """Closure (Floyd--Warshall and bounded), cover (soft and hard) and their custom VJPs."""
  rng = np.random.default_rng(1)
  P = rng.uniform(size=(4, 6, 6))
  P = jnp.asarray(
    np.triu(P, 1) + np.tril(1.0 - P.transpose(0, 2, 1), -1) + 0.5 * np.eye(6), jnp.float32
  )

  def total(P):
    s = ste_scores(P, tau=0.1, gamma_c=gamma_c, max_path_length=max_path_length)
    return jnp.sum(s.top_cycle * jnp.arange(6.0, dtype=jnp.float32)) + jnp.sum(s.uncovered**2)

  batched = jax.jit(jax.vmap(jax.value_and_grad(total)))(P)
  per_item = jax.jit(jax.value_and_grad(total))
  for i in range(P.shape[0]):
    value, grad = per_item(P[i])
    np.testing.assert_allclose(batched[0][i], value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(batched[1][i], grad, rtol=1e-4, atol=1e-6)
  # A leading batch axis of the array (the operators' own batching) agrees too.
  scores = jax.jit(
    lambda P: ste_scores(P, tau=0.1, gamma_c=gamma_c, max_path_length=max_path_length)
  )
  s = scores(P)
  np.testing.assert_allclose(
    s.top_cycle, jnp.stack([scores(p).top_cycle for p in P]), rtol=1e-5, atol=1e-6
  )
  np.testing.assert_allclose(
    s.uncovered, jnp.stack([scores(p).uncovered for p in P]), rtol=1e-5, atol=1e-6
  )


@pytest.mark.parametrize("mode", ["auto", "loop", "vectorize"])
def test_loop_is_a_loop_and_batch_axis_is_not(mode):
  """A loop maps over items (a while loop around the kernel); the batch-axis program does not."""
  wrapped = vmap_by_platform(lambda x: jnp.sort(x))
  with batching_mode(mode):
    hlo = jax.jit(jax.vmap(wrapped)).lower(jnp.ones((3, 5), jnp.float32)).as_text()
  expect_loop = mode == "loop" or (mode == "auto" and jax.default_backend() == "cpu")
  assert ("while" in hlo) == expect_loop


def test_mode_is_scoped_nested_and_keys_the_jit_cache():
  """The mode holds inside its block only; a jitted function is traced again in another mode."""
  assert current_batching_mode() == "auto"
  traces = []

  def kernel(x):
    traces.append(None)
    return jnp.cumsum(x)

  f = jax.jit(jax.vmap(vmap_by_platform(kernel)))
  xs = jnp.ones((3, 4), jnp.float32)
  with batching_mode("loop"):
    with batching_mode("vectorize"):
      assert current_batching_mode() == "vectorize"
      np.testing.assert_allclose(f(xs), jnp.cumsum(xs, axis=-1))
      n_vectorized = len(traces)
      f(xs)
      assert len(traces) == n_vectorized  # a second call in the same mode: no retrace
    assert current_batching_mode() == "loop"
    np.testing.assert_allclose(f(xs), jnp.cumsum(xs, axis=-1))
    assert len(traces) > n_vectorized  # another mode: traced again, not the cached program
  assert current_batching_mode() == "auto"


def test_unknown_mode_raises():
  with pytest.raises(ValueError, match="mode must be one of"):
    with batching_mode("gpu"):  # type: ignore[arg-type]
      pass
  assert current_batching_mode() == "auto"
