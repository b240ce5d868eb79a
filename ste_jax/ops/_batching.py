"""Batching of the single-tournament kernels: a loop on XLA:CPU, a batch axis on accelerators.

The closure and cover kernels are written for one ``(n, n)`` matrix. Under ``jax.vmap`` they can
run in two ways, and the better one depends on the backend:

* XLA:CPU: as a compiled loop over the items (``lax.map``). A leading batch axis on every
  Floyd--Warshall step or cover chunk compiled to slower code (fwd+bwd of 100 tournaments of
  n = 100: 0.47x the loop's speed).
* GPU / TPU: with the batch as a leading axis (plain ``jax.vmap``): a Floyd--Warshall pivot of one
  small matrix is a tiny kernel whose launch latency dominates, so a loop over items leaves the
  device idle (on an H200: the batch axis 35x faster for 100 tournaments, 100x for 1000).

Both figures: ``benchmarks/operators.py --batch B N``, recorded in ``benchmarks/RESULTS.md``.

:func:`vmap_by_platform` gives a kernel a ``custom_vmap`` rule that lowers to one or the other with
``lax.platform_dependent``: the choice is made when the computation is compiled for a backend, and
the same traced program is correct on all of them.
"""

from typing import Callable

import jax
from jax import lax
from jax.custom_batching import custom_vmap

# Backends on which a batch of kernel calls runs as a loop over items. Tests set it to () (and clear
# JAX's caches) to run the accelerator path on the CPU.
_LOOP_PLATFORMS: tuple[str, ...] = ("cpu",)


def vmap_by_platform(fun: Callable) -> Callable:
  """``fun`` with a batching rule: a loop over items on CPU, a batch axis elsewhere.

  Args:
    fun: a function of positional array arguments (pytrees allowed) returning a pytree of arrays,
      written for one unbatched item.

  Returns:
    A function equal to ``fun``. Under ``jax.vmap`` its batch runs as ``lax.map`` over the items on
    the backends in ``_LOOP_PLATFORMS`` (CPU) and as ``jax.vmap(fun)`` on every other backend; an
    argument that is not batched is shared by all items. Nested ``vmap``\\ s apply the same rule
    at every level. Differentiate it inside a ``jax.custom_vjp`` (``custom_vmap`` functions have
    no automatic derivative).
  """
  wrapped = custom_vmap(fun)

  @wrapped.def_vmap
  def rule(axis_size, in_batched, *args):
    leaves, treedef = jax.tree.flatten(list(args))
    batched = jax.tree.leaves(list(in_batched))

    def merge(mapped, shared):
      mapped, shared = iter(mapped), iter(shared)
      return treedef.unflatten([next(mapped) if b else next(shared) for b in batched])

    def split(leaves):
      return ([x for x, b in zip(leaves, batched) if b], [x for x, b in zip(leaves, batched) if not b])

    def looped(*leaves):
      mapped, shared = split(leaves)
      # Each item calls ``wrapped`` again, so an enclosing vmap meets this rule once more.
      return lax.map(lambda item: wrapped(*merge(item, shared)), mapped)

    def vectorized(*leaves):
      mapped, shared = split(leaves)
      return jax.vmap(lambda item: fun(*merge(item, shared)), axis_size=axis_size)(mapped)

    out = lax.platform_dependent(
        *leaves, default=vectorized, **{platform: looped for platform in _LOOP_PLATFORMS}
    )
    return out, jax.tree.map(lambda _: True, out)

  return wrapped


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
