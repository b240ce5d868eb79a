"""Batching of the single-tournament kernels: a loop on XLA:CPU, a batch axis on accelerators.

The closure and cover kernels are written for one ``(n, n)`` matrix. :func:`vmap_by_platform`
gives a kernel a ``custom_vmap`` rule that runs a batch either as a compiled loop over the items
(``lax.map``) or with a leading batch axis (plain ``jax.vmap``). The default mode ``"auto"`` picks
the loop on the backends in ``ste_jax._tuning.BATCH_LOOP_PLATFORMS`` (the CPU) and the batch axis
elsewhere, when the program is compiled (``lax.platform_dependent``): the same traced program is
correct on every backend. :func:`batching_mode` overrides the choice for the computations traced
inside a ``with`` block. Why the CPU loops: ``docs/design/batching.md``
(``benchmarks/operators.py --batch B N`` times both).
"""

import contextlib
from typing import Callable, Iterator, Literal

import jax
from jax import lax
from jax.custom_batching import custom_vmap

from ste_jax import _tuning
from ste_jax.ops._trace_option import trace_option

BatchingMode = Literal["auto", "loop", "vectorize"]
_MODES = ("auto", "loop", "vectorize")

# The backends on which ``"auto"`` runs a batch of kernel calls as a loop over items.
_LOOP_PLATFORMS_AUTO = _tuning.BATCH_LOOP_PLATFORMS

# The current mode, read by the batching rule while a computation is traced (part of JAX's cache
# keys where JAX supports it: :mod:`ste_jax.ops._trace_option`).
_current_mode, _set_mode = trace_option("ste_jax_batching_mode", "auto")


@contextlib.contextmanager
def batching_mode(mode: BatchingMode) -> Iterator[None]:
  """Context manager: how ``jax.vmap`` runs the closure and cover kernels of a batch.

  The STE kernels (Floyd--Warshall closure, tiled cover, the exact relations of
  :mod:`ste_jax.exact`) are written for one tournament; a batch (``jax.vmap``, or leading batch axes
  of ``P``) runs them either as a compiled loop over the items or with a leading batch axis.

  Args:
    mode: ``"auto"`` (the default outside any block): a loop on XLA:CPU and a batch axis on every
      other backend, chosen when the program is compiled (``lax.platform_dependent``).
      ``"loop"``: a loop over the items (``lax.map``) on every backend. ``"vectorize"``: a batch
      axis (plain ``jax.vmap``) on every backend.

  Yields:
    Nothing; the mode applies to the functions traced inside the block.

  The mode is read while a computation is *traced*: it applies to the functions traced inside the
  block. Where JAX has ``jax.make_user_context`` the mode is part of JAX's cache keys, so a
  ``jax.jit`` function called in another mode is traced and compiled again; on a JAX without it a
  cached trace is reused whatever the mode (call ``jax.clear_caches()`` between modes). An
  exported or AOT-compiled program (``jax.jit(f).lower(...).compile()``) keeps the mode it was
  lowered in. The setting is local to the thread that enters the block, and blocks nest.

  Raises:
    ValueError: if ``mode`` is not one of ``"auto"``, ``"loop"``, ``"vectorize"``.

  Examples:
    >>> import jax, jax.numpy as jnp
    >>> import ste_jax
    >>> P = jnp.full((3, 4, 4), 0.5)
    >>> with ste_jax.ops.batching_mode("vectorize"):  # the accelerator path, on any backend
    ...   s = jax.vmap(lambda p: ste_jax.ste_scores(p, tau=0.1))(P)
    >>> s.top_cycle.shape
    (3, 4)
  """
  if mode not in _MODES:
    raise ValueError(f"mode must be one of {_MODES}, got {mode!r}.")
  with _set_mode(mode):
    yield


def current_batching_mode() -> BatchingMode:
  """The mode set by the innermost enclosing :func:`batching_mode` block (``"auto"`` outside)."""
  return _current_mode()  # type: ignore[return-value]


def vmap_by_platform(fun: Callable) -> Callable:
  """``fun`` with a batching rule: a loop over items on CPU, a batch axis elsewhere.

  Args:
    fun: a function of positional array arguments (pytrees allowed) returning a pytree of arrays,
      written for one unbatched item.

  Returns:
    A function equal to ``fun``. Under ``jax.vmap`` its batch runs as ``lax.map`` over the items or
    as ``jax.vmap(fun)``, as :func:`batching_mode` says when the vmap is traced: by default a loop
    on CPU and a batch axis on every other backend. An argument that is not batched is shared by
    all items. Nested ``vmap``\\ s apply the same rule at every level. Differentiate it inside a
    ``jax.custom_jvp`` or ``jax.custom_vjp`` (``custom_vmap`` functions have no automatic
    derivative).
  """
  wrapped = custom_vmap(fun)

  @wrapped.def_vmap
  def rule(axis_size, in_batched, *args):
    leaves, treedef = jax.tree.flatten(list(args))
    batched = jax.tree.leaves(list(in_batched))
    out = run_batch(
      # Each item calls ``wrapped`` again, so an enclosing vmap meets this rule once more.
      lambda *leaves: wrapped(*treedef.unflatten(leaves)),
      lambda *leaves: fun(*treedef.unflatten(leaves)),
      leaves,
      batched,
      axis_size,
    )
    return out, jax.tree.map(lambda _: True, out)

  return wrapped


def run_batch(per_item: Callable, vectorizable: Callable, args, batched, axis_size: int):
  """A batch of ``per_item`` calls, as :func:`batching_mode` says when this is traced.

  Args:
    per_item: called on one item's arguments (a loop over items, ``lax.map``).
    vectorizable: computes what ``per_item`` computes and can be ``jax.vmap``-ed (the batch axis).
    args: flat list of arguments; those marked in ``batched`` carry the batch on axis 0, the others
      are shared by all items.
    batched: one bool per argument.
    axis_size: the batch size.

  Returns:
    The outputs with the batch on axis 0. In the ``"auto"`` mode the loop or the batch axis is
    chosen per backend when the program is lowered (``lax.platform_dependent``). Used by
    :func:`vmap_by_platform` and by the batching rules of primitives.
  """

  def merge(mapped, shared):
    mapped, shared = iter(mapped), iter(shared)
    return [next(mapped) if b else next(shared) for b in batched]

  def split(args):
    return [x for x, b in zip(args, batched) if b], [x for x, b in zip(args, batched) if not b]

  def looped(*args):
    mapped, shared = split(args)
    return lax.map(lambda item: per_item(*merge(item, shared)), mapped)

  def vectorized(*args):
    mapped, shared = split(args)
    return jax.vmap(lambda item: vectorizable(*merge(item, shared)), axis_size=axis_size)(mapped)

  mode = _current_mode()
  if mode == "loop":
    return looped(*args)
  if mode == "vectorize":
    return vectorized(*args)
  return lax.platform_dependent(
    *args, default=vectorized, **{platform: looped for platform in _LOOP_PLATFORMS_AUTO}
  )


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
