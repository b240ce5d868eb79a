"""Flattening leading batch axes for kernels written for a single batch axis."""

import jax


def flatten_batch(x: jax.Array, core_ndim: int):
  """Reshapes ``(*batch, *core)`` to ``(prod(batch), *core)``; returns it and the batch shape."""
  batch = x.shape[: x.ndim - core_ndim]
  core = x.shape[x.ndim - core_ndim :]
  size = 1
  for d in batch:
    size *= d
  return x.reshape((size,) + core), batch


def unflatten_batch(x: jax.Array, batch: tuple) -> jax.Array:
  """Inverse of :func:`flatten_batch` for an output ``(prod(batch), *core)``."""
  return x.reshape(tuple(batch) + x.shape[1:])
