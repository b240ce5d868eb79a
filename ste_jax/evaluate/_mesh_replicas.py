"""Bootstrap replicas of an estimator scored over the devices of a mesh, which may span processes.

:func:`~ste_jax.evaluate.bootstrap_hard_memberships` draws each chunk of replicas on the host
(NumPy, from the chunk's key) and scores it in one compiled step. With a ``mesh``,
:func:`sharded_replica_chunk` scores the chunk over the mesh's devices instead: the ``(chunk, m)``
draws are a global array split over the replica axis (padded to a multiple of the device count
with copies of the chunk's first draws, whose replicas are dropped), the comparisons and the fitted
state are replicated, and ``jax.shard_map`` runs the one-device step (the same ``lax.map`` over
replicas) on each device's block. The orientation counts are summed over the devices (``psum``),
the memberships gathered to every process (``process_allgather``). Every process draws the same
chunk from the same key and places only its own devices' rows
(``jax.make_array_from_callback``), so a run over several processes (``jax.distributed``) has the
replicas of a one-process run and every process ends with the same arrays.
"""

import functools
import math

import jax
from jax import lax
from jax.experimental import multihost_utils
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
import numpy as np

from ste_jax._compiler_options import gather_friendly_jit
from ste_jax._placement import place as _place


def replica_mesh(mesh: Mesh) -> tuple[Mesh, tuple[str, ...]]:
  """``(mesh with Auto axes, all its axis names)``: the replicas are split over every axis.

  Raises:
    TypeError: ``mesh`` is not a ``jax.sharding.Mesh``.
  """
  if not isinstance(mesh, Mesh):
    raise TypeError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}.")
  axes = tuple(mesh.axis_names)
  return Mesh(mesh.devices, axes, axis_types=(AxisType.Auto,) * len(axes)), axes


def _replicated(tree, mesh: Mesh):
  """Every array leaf of ``tree`` placed replicated on ``mesh`` (the same value on every process);
  Python scalars stay as they are (the compiled step treats them as replicated)."""
  sharding = NamedSharding(mesh, P())

  def place(x):
    return _place(x, sharding) if isinstance(x, (jax.Array, np.ndarray)) else x

  return jax.tree.map(place, tree)


def _host(x: jax.Array) -> np.ndarray:
  """A global array as a NumPy array on this host (gathered from the other processes)."""
  if x.is_fully_addressable:
    return np.asarray(x)
  if x.is_fully_replicated:
    return np.asarray(x.addressable_data(0))
  return np.asarray(multihost_utils.process_allgather(x, tiled=True))


@functools.partial(
  gather_friendly_jit,
  static_argnames=("chunk_fn", "static", "mesh", "axes"),
)
def _sharded_step(
  draws, comparisons, state, num_valid, tau, gamma, *, chunk_fn, static, mesh, axes
):
  """``chunk_fn`` (the one-device step) on each device's block of ``draws``; counts summed."""
  static = dict(static)

  def block(draws, comparisons, state, num_valid, tau, gamma):
    first = lax.axis_index(axes) * draws.shape[0]
    out = chunk_fn(draws, comparisons, state, num_valid - first, tau, gamma, **static)
    return out[:2] + (lax.psum(out[2], axes),) + out[3:]

  split = P(axes)
  num_out = 5 if static["with_soft"] else 3
  return jax.shard_map(
    block,
    mesh=mesh,
    in_specs=(split, P(), P(), P(), P(), P()),
    out_specs=tuple(P() if i == 2 else split for i in range(num_out)),
    # The estimators' loops start from constants and carry per-device values: the one-device step
    # is not written for varying-axis types, which its outputs' specs state instead.
    check_vma=False,
  )(draws, comparisons, state, num_valid, tau, gamma)


def sharded_replica_chunk(
  chunk_fn,
  draws: np.ndarray,
  comparisons,
  state,
  num_valid: int,
  tau,
  gamma,
  *,
  mesh: Mesh,
  axes: tuple[str, ...],
  **static,
) -> list[np.ndarray]:
  """One chunk of replicas scored over ``mesh``: ``chunk_fn``'s outputs as NumPy arrays.

  Args:
    chunk_fn: the one-device step, ``chunk_fn(draws, comparisons, state, num_valid, tau, gamma,
      **static) -> (top_cycle, uncovered, beats[, soft_top_cycle, soft_uncovered])``, with
      ``beats`` the orientation counts of the replicas before ``num_valid``.
    draws: ``(chunk, m)`` the chunk's draws (the same on every process).
    comparisons, state: the data and the fitted state (the same on every process).
    num_valid: replicas of the chunk that count (the rest pad the last chunk).
    tau, gamma: the soft scores' temperatures (dtype of the edges).
    mesh: a mesh with Auto axes (:func:`replica_mesh`).
    axes: the mesh axes the replicas are split over.
    **static: ``chunk_fn``'s static arguments (``batch``: clamped to a device's block).

  Returns:
    ``chunk_fn``'s outputs, ``(chunk, ...)`` each (``beats`` ``(n, n)``), on every process.
  """
  num_devices = math.prod(mesh.shape[ax] for ax in axes)
  chunk = draws.shape[0]
  pad = -chunk % num_devices
  if pad:  # copies of real draws (a refit of all-zero weights would be wasted work); dropped below
    draws = np.concatenate([draws, draws[np.arange(pad) % chunk]])
  per_device = draws.shape[0] // num_devices
  static["batch"] = min(static["batch"], per_device)
  out = _sharded_step(
    _place(draws, NamedSharding(mesh, P(axes))),
    *_replicated((comparisons, state), mesh),
    *_replicated(
      (np.asarray(num_valid, np.int32), np.asarray(tau, tau.dtype), np.asarray(gamma, gamma.dtype)),
      mesh,
    ),
    chunk_fn=chunk_fn,
    static=tuple(sorted(static.items())),
    mesh=mesh,
    axes=axes,
  )
  return [_host(x) if i == 2 else _host(x)[:chunk] for i, x in enumerate(out)]
