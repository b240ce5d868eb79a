"""Tests for ste_jax/_compiler_options.py: jax.jit's values; the option reaches the compiler."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import _compiler_options
from ste_jax._compiler_options import GATHER_FRIENDLY, gather_friendly_jit


def _gathered_loss(s, i, j, *, scale):
  return scale * jnp.sum(jax.nn.softplus(s[i] - s[j]))


def _data(n=50, m=400):
  rng = np.random.default_rng(0)
  return (
    jnp.asarray(rng.normal(size=n), jnp.float32),
    jnp.asarray(rng.integers(0, n, m), jnp.int32),
    jnp.asarray(rng.integers(0, n, m), jnp.int32),
  )


def test_values_and_gradients_equal_plain_jit():
  s, i, j = _data()
  tuned = functools.partial(gather_friendly_jit, static_argnames=("scale",))(_gathered_loss)
  plain = jax.jit(_gathered_loss, static_argnames=("scale",))
  np.testing.assert_allclose(tuned(s, i, j, scale=2.0), plain(s, i, j, scale=2.0), rtol=1e-6)
  grad = jax.grad(lambda s: tuned(s, i, j, scale=2.0))(s)
  np.testing.assert_allclose(
    grad, jax.grad(lambda s: plain(s, i, j, scale=2.0))(s), rtol=1e-5, atol=1e-6
  )
  # Inside another jit the wrapper traces like any function.
  np.testing.assert_allclose(
    jax.jit(lambda s: tuned(s, i, j, scale=1.0))(s), plain(s, i, j, scale=1.0), rtol=1e-6
  )


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="a CPU compiler option")
def test_option_removes_ynnpack_fusions_on_cpu():
  s, i, j = _data(1000, 100_000)
  lower = lambda **kw: jax.jit(_gathered_loss, static_argnames=("scale",), **kw).lower(
    s, i, j, scale=1.0
  )  # noqa: E731
  default = lower().compile().as_text()
  if "ynn_fusion" not in default:
    pytest.skip("this jaxlib does not fuse this program with YNNPACK")
  assert "ynn_fusion" not in lower(compiler_options=GATHER_FRIENDLY).compile().as_text()


def test_unknown_option_falls_back_to_the_defaults(monkeypatch):
  monkeypatch.setattr(_compiler_options, "GATHER_FRIENDLY", {"xla_no_such_option_for_ste_jax": ""})
  s, i, j = _data()
  f = gather_friendly_jit(functools.partial(_gathered_loss, scale=1.0))
  if jax.default_backend() == "cpu":
    with pytest.raises(Exception):  # noqa: B017  (what jax.jit itself raises for the option)
      jax.jit(
        functools.partial(_gathered_loss, scale=1.0),
        compiler_options=_compiler_options.GATHER_FRIENDLY,
      )(s, i, j)
  np.testing.assert_allclose(f(s, i, j), _gathered_loss(s, i, j, scale=1.0), rtol=1e-6)
