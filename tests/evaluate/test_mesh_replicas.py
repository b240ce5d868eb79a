"""Bootstrap replicas scored over a mesh (``bootstrap_hard_memberships(mesh=...)``) vs on the
default device: the same replicas for the same key. Several devices and processes:
``tests/test_distributed.py``; here the one device of the test process and the argument checks."""

import jax
from jax.sharding import Mesh
import numpy as np
import pytest

from ste_jax.data import Comparisons
from ste_jax.evaluate import PosteriorEdgeEstimator, fit_estimator
from ste_jax.evaluate._mesh_replicas import replica_mesh
from ste_jax.evaluate._replicas import bootstrap_hard_memberships


def _comparisons(seed: int = 0, n: int = 6, m: int = 80) -> Comparisons:
  rng = np.random.default_rng(seed)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  return Comparisons.from_arrays(a, b, (rng.random(m) < 0.5) * 1.0)


def test_one_device_mesh_gives_the_default_devices_replicas():
  """27 replicas (chunks of 25 and 2) with their soft scores: equal, array for array."""
  c = _comparisons()
  est, _, fitted, key = fit_estimator(jax.random.key(0), c, PosteriorEdgeEstimator())
  mesh = Mesh(np.array(jax.devices()[:1]), ("replicas",))
  kw = dict(num_replicas=27, soft=(0.1, 0.1))
  want = bootstrap_hard_memberships(jax.random.clone(key), c, est, fitted, **kw)
  got = bootstrap_hard_memberships(key, c, est, fitted, mesh=mesh, **kw)
  assert 0 < want.top_cycle.mean() < 1  # replicas differ: one lost or repeated would show
  for field in ("top_cycle", "uncovered", "beats", "soft_top_cycle", "soft_uncovered"):
    np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)


def test_replica_mesh_checks_the_mesh():
  with pytest.raises(TypeError, match="mesh"):
    replica_mesh("rows")
  mesh, axes = replica_mesh(jax.make_mesh((1, 1), ("hosts", "devices")))
  assert axes == ("hosts", "devices")
  assert all(t == jax.sharding.AxisType.Auto for t in mesh.axis_types)
