"""The fixed-step L-BFGS: convergence on known problems, monotone, vmaps."""

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.evaluate._lbfgs import minimize_lbfgs


def test_ill_conditioned_quadratic_and_rosenbrock():
  A = jnp.diag(jnp.array([1.0, 10.0, 100.0, 1000.0]))
  target = jnp.array([1.0, -2.0, 3.0, 0.5])
  quad = lambda x: 0.5 * (x - target) @ A @ (x - target)
  x = jax.jit(lambda x0: minimize_lbfgs(quad, x0, num_steps=60))(jnp.zeros(4))
  np.testing.assert_allclose(np.asarray(x), np.asarray(target), atol=1e-3)
  rosen = lambda x: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
  x = minimize_lbfgs(rosen, jnp.array([-1.2, 1.0]), num_steps=200)
  np.testing.assert_allclose(np.asarray(x), [1.0, 1.0], atol=1e-2)


def test_never_increases_the_objective_and_vmaps():
  f = lambda x, c: jnp.sum(jnp.cosh(x - c)) + 0.1 * jnp.sum(x**4)
  cs = jnp.linspace(-2.0, 2.0, 5)[:, None] * jnp.ones((5, 3))
  xs = jax.vmap(lambda c: minimize_lbfgs(lambda x: f(x, c), jnp.zeros(3), num_steps=30))(cs)
  for c, x in zip(cs, xs):
    assert float(f(x, c)) <= float(f(jnp.zeros(3), c))
    loop = minimize_lbfgs(lambda x: f(x, c), jnp.zeros(3), num_steps=30)
    np.testing.assert_allclose(np.asarray(x), np.asarray(loop), atol=1e-5)
    g = jax.grad(f)(x, c)
    assert float(jnp.max(jnp.abs(g))) < 1e-3
