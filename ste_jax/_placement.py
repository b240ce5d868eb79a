"""Placing host arrays on a mesh that may span processes (shared by the bootstrap drivers)."""

import jax
from jax.sharding import NamedSharding
import numpy as np


def place(x, sharding: NamedSharding) -> jax.Array:
  """``x`` placed with ``sharding``.

  For a mesh over several processes (``jax.distributed``), each process contributes its own
  devices' shards of its copy of ``x``, which must be the same on every process (the same key and
  comparisons: the replicas then are those of a one-process run).

  Args:
    x: an array (host or device), the same on every process.
    sharding: the target ``NamedSharding``.

  Returns:
    The global ``jax.Array``.
  """
  if sharding.is_fully_addressable:
    return jax.device_put(x, sharding)
  host = np.asarray(x)
  return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])
