"""The soft cover (and the STE scores) of one large tournament, its rows split over a mesh.

:func:`sharded_cover_scores` computes ``cover[c, a]`` (paper §3.4, Eqs. ``soft_cover_violation``,
``soft_cover_score``) with the covering agents ``c`` (the rows) split over one axis of a
``jax.sharding.Mesh`` by ``jax.shard_map``: every device holds the whole ``D`` (replicated) and
computes the rows ``c`` of its own block, in tiles of rows ``c`` (``(rows, n, n)`` witness terms at
a time). Each row ``c`` needs all of ``D`` (its witnesses ``b`` range over every agent, the covered
agents ``a`` too), so the rows are the axis that splits without communication in the value.

Per device: ``D`` itself (``n x n``, replicated), its block of rows and of the result
(``n^2 / devices`` each) and one tile. A tile is rematerialized in reverse mode
(``jax.checkpoint``), so reverse mode keeps that memory (plus the cotangent of the replicated ``D``,
``n x n``, summed over the devices), instead of storing the ``n^3 / devices`` weights. Forward and
reverse mode, and second order, are JAX's own derivatives of :func:`~ste_jax.ops.normalized_smax`
(soft) and of ``jnp.max`` over the real witnesses (the exact maximum at ``gamma_c = 0``, whose
subgradient splits evenly among tied maximizers, as the single-device kernels do). The
single-device kernels (:mod:`ste_jax.ops._cover_kernels`) are not reused: they compute every pair
``(c, a)`` of one square tournament, not a block of rows.

:func:`sharded_ste_scores` adds the closure: the exact max-min closure (``reach_gamma = 0``) is
replicated (``O(n^2)`` memory), the smooth closure (``reach_gamma > 0``, ``K`` products of ``n^3``
terms) is split by its rows ``a`` in the same way, each row's scan over path lengths needing only
that row and ``D`` (:func:`~ste_jax.ops._reachability._soft_path_scan`).
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ste_jax import _tuning
from ste_jax._checks import (
  as_float_array,
  as_temperature,
  check_square,
  eye_mask,
  is_static_zero,
  split_temperature,
  static_path_length,
)
from ste_jax._errors import InputError, OptionError
from ste_jax.ops._edges import soft_majority_edges
from ste_jax.ops._extrema import normalized_smax, normalized_softmin
from ste_jax.ops._reachability import _soft_path_scan, tournament_reachability
from ste_jax.ops._scores import STEScores, _check_temperatures, _check_tournament

# Witness terms of one tile, ``(rows c, n, n)``: the value kernel's budget
# (:data:`ste_jax._tuning.COVER_TILE_ELEMENTS`); a row ``c`` per tile once ``n^2`` exceeds it.
_TILE_ELEMENTS = _tuning.COVER_TILE_ELEMENTS


def _tile_rows(n: int, devices: int) -> int:
  """Rows ``c`` per tile: ``tile_rows * n^2`` within :data:`_TILE_ELEMENTS`, at most a block."""
  return min(-(-n // devices), max(1, _TILE_ELEMENTS // (n * n)))


def _block_rows(n: int, devices: int, tile_rows: int) -> int:
  """Rows ``c`` per device: ``n / devices`` rounded up to a multiple of ``tile_rows``."""
  per_device = -(-n // devices)
  return -(-per_device // tile_rows) * tile_rows


def _block_cover(D, D_rows, g, *, axis_name, tile_rows, hard):
  """``cover[c, a]`` for this device's rows ``c``: ``D`` ``(n, n)`` (zero diagonal), ``D_rows``
  ``(block, n)`` its rows ``c`` (padded rows: zeros), ``g`` the scalar temperature."""
  block, n = D_rows.shape
  first = lax.axis_index(axis_name) * block
  c = first + jnp.arange(block, dtype=jnp.int32)  # the rows' agent indices (padded: >= n)
  cols = jnp.arange(n, dtype=jnp.int32)
  not_a = ~jnp.eye(n, dtype=bool)  # [a, b]: b != a

  @functools.partial(jax.checkpoint, prevent_cse=False)
  def tile(D, g, d_c, c):
    """``(tile_rows, n)`` rows of the cover: ``d_c`` the rows ``D[c]``, ``c`` their indices."""
    is_c = cols[None, :] == c[:, None]  # [c, b]: b == c
    y = jnp.where(is_c, jnp.zeros_like(d_c), 1.0 - d_c)  # Y[c, b] = 1 - D[c, b], Y[c, c] = 0
    term = D[None, :, :] * y[:, None, :]  # [c, a, b] = D[a, b] (1 - D[c, b])
    witnesses = not_a[None, :, :] & ~is_c[:, None, :]  # b not in {a, c}
    # The exact maximum: the excluded witnesses as -1, below every term (in [0, 1]), so that its
    # subgradient splits among the tied real witnesses only (normalized_smax's own exact maximum
    # fills them with the maximum itself, which dilutes it). n >= 3: no pair without witnesses.
    v = jnp.max(jnp.where(witnesses, term, jnp.full_like(term, -1.0)), axis=-1)  # [c, a]
    if not hard:  # double where: a traced g too small for the soft kernel gives the exact maximum
      positive, g_safe = split_temperature(g)
      soft = normalized_smax(term, gamma=g_safe, axis=-1, where=witnesses)
      v = jnp.where(positive, soft, v)
    cover = d_c * (1.0 - v)
    return jnp.where(is_c, jnp.zeros_like(cover), cover)  # cover(a, a) = 0

  tiles = block // tile_rows
  out = lax.map(
    lambda x: tile(D, g, *x),
    (D_rows.reshape(tiles, tile_rows, n), c.reshape(tiles, tile_rows)),
  )
  return out.reshape(block, n)


@functools.partial(jax.jit, static_argnames=("mesh", "axis_name", "tile_rows", "hard"))
def _sharded_cover(D, g, *, mesh, axis_name, tile_rows, hard):
  n = D.shape[-1]
  devices = mesh.shape[axis_name]
  block = _block_rows(n, devices, tile_rows)
  # A mesh of Explicit axes types the arrays' shardings, and shard_map wants them as its in_specs.
  explicit = all(t == AxisType.Explicit for t in mesh.axis_types)

  def place(x, spec):
    return jax.reshard(x, NamedSharding(mesh, spec)) if explicit else x

  D = jnp.where(eye_mask(D), jnp.zeros_like(D), D)
  D_rows = jnp.pad(D, ((0, block * devices - n), (0, 0)))  # rows c, padded with zero rows
  D, D_rows, g = place(D, P()), place(D_rows, P(axis_name, None)), place(g, P())
  cover = jax.shard_map(
    functools.partial(_block_cover, axis_name=axis_name, tile_rows=tile_rows, hard=hard),
    mesh=mesh,
    in_specs=(P(), P(axis_name, None), P()),
    out_specs=P(axis_name, None),
  )(D, D_rows, g)
  if block * devices != n:  # a split axis does not slice unevenly (Explicit axes): replicate first
    replicated = NamedSharding(mesh, jax.sharding.PartitionSpec())  # P: the tournament here
    cover = (
      jax.reshard(cover, replicated)
      if explicit
      else lax.with_sharding_constraint(cover, replicated)
    )
  return cover[:n]


def _check_mesh(mesh, axis_name) -> None:
  if not isinstance(mesh, Mesh):
    raise TypeError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}.")
  if not isinstance(axis_name, str) or axis_name not in mesh.axis_names:
    raise OptionError(f"axis_name {axis_name!r} must name an axis of the mesh {mesh.axis_names}.")


def _cover(D, g, *, mesh, axis_name, hard):
  """The cover of ``D`` (checked, ``(n, n)``), its rows split over ``axis_name``."""
  n = D.shape[-1]
  if n <= 2:  # no witnesses: v = 0 (the maximum over an empty set), cover = D off the diagonal
    return jnp.where(eye_mask(D), jnp.zeros_like(D), D)
  tile_rows = _tile_rows(n, mesh.shape[axis_name])
  return _sharded_cover(D, g, mesh=mesh, axis_name=axis_name, tile_rows=tile_rows, hard=hard)


def _block_reach(D, D_rows, g, *, axis_name, tile_rows, K):
  """Soft reachability ``R[a, :]`` (Eqs. ``soft_path_length_k``, ``soft_reachability``) of this
  device's rows ``a``: ``D`` ``(n, n)`` (zero diagonal), ``D_rows`` ``(block, n)`` its rows."""
  block, n = D_rows.shape
  first = lax.axis_index(axis_name) * block
  a = first + jnp.arange(block, dtype=jnp.int32)
  cols = jnp.arange(n, dtype=jnp.int32)

  def tile(d_a, a):  # the K-step scan of these rows, its steps rematerialized in reverse mode
    R = _soft_path_scan(D, g, K, rows=d_a)
    return jnp.where(cols[None, :] == a[:, None], jnp.zeros_like(R), R)  # R(a, a) = 0

  tiles = block // tile_rows
  out = lax.map(
    lambda x: tile(*x), (D_rows.reshape(tiles, tile_rows, n), a.reshape(tiles, tile_rows))
  )
  return out.reshape(block, n)


def _sharded_soft_reach(D, g, *, mesh, axis_name, K):
  """The soft closure of ``D`` (``(n, n)``, zero diagonal), its rows split over ``axis_name``."""
  n = D.shape[-1]
  devices = mesh.shape[axis_name]
  tile_rows = _tile_rows(n, devices)
  block = _block_rows(n, devices, tile_rows)
  explicit = all(t == AxisType.Explicit for t in mesh.axis_types)

  def place(x, spec):
    return jax.reshard(x, NamedSharding(mesh, spec)) if explicit else x

  D_rows = jnp.pad(D, ((0, block * devices - n), (0, 0)))  # padded rows: zeros, dropped below
  D, D_rows, g = place(D, P()), place(D_rows, P(axis_name, None)), place(g, P())
  R = jax.shard_map(
    functools.partial(_block_reach, axis_name=axis_name, tile_rows=tile_rows, K=K),
    mesh=mesh,
    in_specs=(P(), P(axis_name, None), P()),
    out_specs=P(axis_name, None),
  )(D, D_rows, g)
  if block * devices != n:  # as in _sharded_cover: replicate before dropping the padding
    replicated = NamedSharding(mesh, jax.sharding.PartitionSpec())
    R = jax.reshard(R, replicated) if explicit else lax.with_sharding_constraint(R, replicated)
  return R[:n]


def sharded_cover_scores(
  D: jax.typing.ArrayLike,
  *,
  gamma_c: jax.typing.ArrayLike,
  mesh: Mesh,
  axis_name: str,
) -> jax.Array:
  r"""Soft covering relation ``cover[c, a]`` of one tournament, its rows ``c`` split over a mesh.

  The values of :func:`~ste_jax.ops.soft_cover_scores` (Eqs. ``soft_cover_violation``,
  ``soft_cover_score``):

  .. math::
    v(c, a) = \mathrm{smax}_{\gamma_c}\big(\{D(a, b)\,(1 - D(c, b)) :
      b \in \mathcal{A} \setminus \{a, c\}\}\big), \qquad
    \mathrm{cover}(c, a) = D(c, a)\,\big(1 - v(c, a)\big),

  with ``cover(a, a) = 0`` and the maximum over an empty set (``n <= 2``) ``0``. The rows ``c``
  (the covering agents) are split in equal blocks over the ``axis_name`` devices of ``mesh`` with
  ``jax.shard_map``; ``n`` is padded to a multiple of the device count and the padding dropped, so
  any ``n`` works. Replicated on every device: ``D`` and ``gamma_c``; split: the rows ``c`` of ``D``
  and of the result. Memory per device: ``D`` (``n^2``), ``O(n^2 / devices)`` for its rows and
  one tile of ``(rows, n, n)`` witness terms (at most ``2^18`` elements, or ``n^2`` for a single
  row), in every mode; the values are those of the single-device kernels to rounding, computed with
  :func:`~ste_jax.ops.normalized_smax` (soft) and ``jnp.max`` (exact) instead. For the
  Uncovered-Set score (Eq. ``soft_uncovered_set_score``,
  :func:`~ste_jax.ops.soft_uncovered_score`) take
  ``1 - normalized_smax(cover, gamma=gamma_c, axis=-2, where=off_diagonal)`` of the result.

  Differentiable in ``D`` and ``gamma_c`` in every mode (``jax.grad``, ``jax.jvp``, second order):
  JAX's derivatives through ``jax.shard_map``, each tile rematerialized in reverse mode; the
  cotangent of ``D`` is summed over the devices. At ``gamma_c = 0`` the maximum is exact, with a
  subgradient split evenly among tied maximizers (a literal ``0`` skips the soft computation).
  Compiled once per shape, dtype, mesh and axis (``jax.jit``); usable inside a user's ``jit``.

  Args:
    D: soft adjacency of shape ``(n, n)`` (one tournament, no batch), entries in ``[0, 1]``; its
      diagonal is ignored. From a probabilistic tournament ``P``, use
      :func:`~ste_jax.ops.soft_majority_edges` first.
    gamma_c: covering temperature ``>= 0`` (traced scalar); ``0``, traced or literal, is the exact
      maximum. A concrete negative or non-finite value raises ``ValueError``.
    mesh: the ``jax.sharding.Mesh`` whose devices share the rows.
    axis_name: the mesh axis the rows are split over (other mesh axes replicate the work).

  Returns:
    ``(n, n)`` array indexed ``[c, a]``, entries in ``[0, 1]``, zero diagonal. Its rows stay split
    over ``axis_name`` when no padding was needed (the rows per device, ``n / devices``, a multiple
    of the tile's rows); otherwise the padding is dropped from a replicated copy (``n^2`` on each
    device). With a mesh of Explicit axes, operations on the result outside ``jit`` need the mesh
    set (``jax.set_mesh``), as for any array sharded over it.

  Raises:
    InputError: ``D`` is not one square matrix ``(n, n)``.
    OptionError: ``axis_name`` is not an axis of ``mesh``.
    TypeError: ``mesh`` is not a ``jax.sharding.Mesh``.

  Examples:
    >>> import jax, numpy as np, jax.numpy as jnp
    >>> from jax.sharding import AxisType, Mesh, NamedSharding
    >>> mesh = Mesh(np.array(jax.devices()[:1]), ("rows",))
    >>> D = jnp.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    >>> C = sharded_cover_scores(D, gamma_c=0.0, mesh=mesh, axis_name="rows")
    >>> [float(x) for x in C[0]]  # agent 0 covers agents 1 and 2
    [0.0, 1.0, 1.0]
  """
  _check_mesh(mesh, axis_name)
  D = as_float_array(D, "D")
  if D.ndim != 2:
    raise InputError(f"D must be one tournament of shape (n, n), got shape {tuple(D.shape)}.")
  check_square(D, "D")
  g = as_temperature(gamma_c, D, "gamma_c", allow_zero=True)
  return _cover(D, g, mesh=mesh, axis_name=axis_name, hard=is_static_zero(gamma_c))


@functools.partial(
  jax.jit,
  static_argnames=(
    "mesh",
    "axis_name",
    "max_path_length",
    "hard_gamma",
    "hard_cover",
    "hard_reach",
  ),
)
def _sharded_ste(
  P,
  tau,
  gamma,
  gamma_c,
  reach_gamma,
  *,
  mesh,
  axis_name,
  max_path_length,
  hard_gamma,
  hard_cover,
  hard_reach,
):
  D = soft_majority_edges(P, tau=tau)
  if hard_reach:
    R = tournament_reachability(P, tau, max_path_length)  # replicated: every device, all of R
  else:  # the smooth products: O(n^3) per path length, rows split as the cover's
    D0 = jnp.where(eye_mask(D), jnp.zeros_like(D), D)
    R = _sharded_soft_reach(D0, reach_gamma, mesh=mesh, axis_name=axis_name, K=max_path_length)
  off_diagonal = ~eye_mask(R)
  top_cycle = normalized_softmin(R, gamma=0.0 if hard_gamma else gamma, axis=-1, where=off_diagonal)
  gamma_c = 0.0 if hard_cover else gamma_c
  cover = _cover(D, gamma_c, mesh=mesh, axis_name=axis_name, hard=hard_cover)
  q = normalized_smax(cover, gamma=gamma_c, axis=-2, where=off_diagonal)
  replicated = NamedSharding(mesh, jax.sharding.PartitionSpec())  # P: the tournament here
  if all(t == AxisType.Explicit for t in mesh.axis_types):
    return STEScores(
      top_cycle=jax.reshard(top_cycle, replicated), uncovered=jax.reshard(1.0 - q, replicated)
    )
  return STEScores(
    top_cycle=lax.with_sharding_constraint(top_cycle, replicated),
    uncovered=lax.with_sharding_constraint(1.0 - q, replicated),
  )


def sharded_ste_scores(
  P: jax.typing.ArrayLike,
  *,
  mesh: Mesh,
  axis_name: str,
  tau: jax.typing.ArrayLike = 0.05,
  gamma: jax.typing.ArrayLike | None = None,
  gamma_c: jax.typing.ArrayLike | None = None,
  max_path_length: int | None = None,
  reach_gamma: jax.typing.ArrayLike = 0.0,
  validate: bool = True,
) -> STEScores:
  r""":func:`~ste_jax.ops.ste_scores` of one large tournament, the soft cover split over a mesh.

  The same scores as :func:`~ste_jax.ops.ste_scores` (paper §3.2-3.4):
  ``D = soft_majority_edges(P, tau)``, the reachability ``R`` (Eqs. ``soft_path_length_k``,
  ``soft_reachability``: the exact max-min closure at ``reach_gamma = 0``, the smooth products
  above), ``t(a) = smin_gamma({R(a, b) : b != a})`` (Eq. ``soft_top_cycle_score``) and
  ``u(a) = 1 - smax_gamma_c({cover(c, a) : c != a})`` (Eqs. ``soft_cover_violation`` to
  ``soft_uncovered_set_score``).

  What is split and what is replicated: the cover ``cover[c, a]``, the ``n^3`` witness terms, is
  computed by :func:`sharded_cover_scores`, its rows ``c`` split in equal blocks over the
  ``axis_name`` devices of ``mesh`` (``n`` padded to a multiple of the device count, so any ``n``
  works). The closure ``R``:

  * ``reach_gamma = 0`` (a literal ``0``): **replicated**, the exact max-min closure of ``P``
    (``O(n^3)`` time, ``O(n^2)`` memory) on every device;
  * ``reach_gamma > 0``: **split by rows** like the cover. Its ``K - 1`` smooth products
    ``Q^(k) = Q^(k-1) (x) D`` cost ``n^3`` each (``O(K n^3)`` in all, more than the cover), and
    row ``a`` of ``Q^(k)`` needs only row ``a`` of ``Q^(k-1)`` and ``D``: each device runs the
    whole scan over ``k`` for its block of rows, in tiles of ``(rows, n, n)`` terms, with no
    communication; the rows of ``R`` are gathered before the Top-Cycle score.

  The edges ``D`` and the two ``O(n)``-output aggregations are replicated: every device holds
  ``P``, ``D`` and ``R``. Memory per device: a few ``n x n`` arrays plus a block of rows and one
  tile (with ``reach_gamma > 0`` in reverse mode, also the scan's ``K`` carries of its block of
  rows, ``O(K n^2 / devices)``). The result is replicated.

  Differentiable in ``P`` and in each temperature, in forward and reverse mode (``jax.jvp``,
  ``jax.grad``): JAX's derivatives through ``jax.shard_map`` for the cover, the closure's own
  custom JVP rule for ``R``; gradients equal those of :func:`~ste_jax.ops.ste_scores` to rounding.
  A literal ``0`` temperature selects the exact extremum, as in :func:`~ste_jax.ops.ste_scores`.
  Compiled once per shape, dtype, mesh, axis and static argument (``jax.jit``).

  Args:
    P: probabilistic tournament of shape ``(n, n)`` (one tournament, no batch; ``P + P^T = 1``).
    mesh: the ``jax.sharding.Mesh`` whose devices share the cover's rows; it may span several
      processes (``jax.distributed``), ``P`` then being the same on every process.
    axis_name: the mesh axis the rows are split over (other mesh axes replicate the work).
    tau: edge temperature ``>= 0`` (traced).
    gamma: Top-Cycle softmin temperature ``>= 0`` (traced); defaults to ``tau``.
    gamma_c: covering temperature ``>= 0`` (traced); defaults to ``gamma``.
    max_path_length: ``K`` (static); ``None`` means ``n - 1`` (exact reachability).
    reach_gamma: smooth-product temperature ``>= 0`` (traced); a literal ``0`` (default) is the
      exact max-min closure (replicated), anything else the smooth products (split by rows).
    validate: check a concrete ``P``'s values first, as :func:`~ste_jax.ops.ste_scores` does.

  Returns:
    :class:`~ste_jax.ops.STEScores` with fields of shape ``(n,)`` in ``[0, 1]``.

  Raises:
    InputError: ``P`` is not one square matrix ``(n, n)``, or ``validate`` and a concrete ``P``
      with an invalid entry.
    OptionError: ``axis_name`` is not an axis of ``mesh``; a concrete temperature that is negative
      or not finite.
    TypeError: ``mesh`` is not a ``jax.sharding.Mesh``.

  Examples:
    >>> import jax, numpy as np, jax.numpy as jnp
    >>> from jax.sharding import Mesh
    >>> mesh = Mesh(np.array(jax.devices()[:1]), ("rows",))
    >>> P = jnp.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.9], [0.1, 0.1, 0.5]])  # 0 > 1 > 2, 0 > 2
    >>> s = sharded_ste_scores(P, mesh=mesh, axis_name="rows", tau=0.0)
    >>> [float(x) for x in s.top_cycle], [float(x) for x in s.uncovered]
    ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0])
  """
  _check_mesh(mesh, axis_name)
  P = as_float_array(P, "P")
  if P.ndim != 2:
    raise InputError(f"P must be one tournament of shape (n, n), got shape {tuple(P.shape)}.")
  n = check_square(P, "P")
  _check_tournament({"P": P, "validate": validate})
  _check_temperatures(gamma=gamma, gamma_c=gamma_c, reach_gamma=reach_gamma)
  gamma = tau if gamma is None else gamma
  gamma_c = gamma if gamma_c is None else gamma_c
  return _sharded_ste(
    P,
    as_temperature(tau, P, "tau", allow_zero=True),
    as_temperature(gamma, P, "gamma", allow_zero=True),
    as_temperature(gamma_c, P, "gamma_c", allow_zero=True),
    as_temperature(reach_gamma, P, "reach_gamma", allow_zero=True),
    mesh=mesh,
    axis_name=axis_name,
    max_path_length=static_path_length(max_path_length, n),
    hard_gamma=is_static_zero(gamma),
    hard_cover=is_static_zero(gamma_c),
    hard_reach=is_static_zero(reach_gamma),
  )
