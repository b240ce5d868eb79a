"""Bootstrap resampling of comparisons with fixed shapes (paper §6, Table 5).

*Resampling.* A replica keeps the ``m`` rows of a :class:`~ste_jax.data.Comparisons` and changes
only ``weight``: each row's weight is multiplied by an integer multiplicity, drawn either as the
counts of ``m`` uniform draws with replacement (``method="multinomial"``, the classical
bootstrap: multiplicities sum to ``m``) or as independent ``Poisson(1)`` counts
(``method="poisson"``, the Poisson bootstrap: the total varies around ``m``). Shapes never change,
so the user's ``score_fn`` is traced once and every replica runs in one ``jax.vmap``-ed,
``jax.jit``-compiled computation (or ``jax.lax.map`` with a ``batch_size`` to bound memory, or
sharded over the devices of a ``jax.sharding.Mesh``).

*Units.* Rows are the resampling units. A row that aggregates several comparisons
(``weight = 5``) is resampled as one block; expand it into unit rows first if each underlying
comparison should be resampled on its own.

*Keys.* Replica ``r`` uses ``jax.random.split(key, num_replicas)[r]`` and nothing else, so
``bootstrap_scores(key, c, f, num_replicas=R)[r]`` equals
``f(resample_comparisons(jax.random.split(key, R)[r], c))`` whatever the batching or sharding.

Summaries of the replicas (Table 5: inclusion frequencies, intervals, Jaccard, entropy) live in
:mod:`ste_jax.stats._summaries`.
"""

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Any, Callable

import jax
from jax import lax
import jax.numpy as jnp
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ste_jax._errors import OptionError
from ste_jax._placement import place as _place
from ste_jax._validation import validate_int, validate_path_length, validate_temperature
from ste_jax.data import Comparisons
from ste_jax.ops import STEScores

if TYPE_CHECKING:
  from ste_jax.evaluate._protocol import TournamentEstimator

METHODS = ("multinomial", "poisson")


# --------------------------------------------------------------------------------------------
# Resampling


def _check_method(method) -> None:
  if method not in METHODS:
    raise ValueError(f"method must be one of {METHODS}, got {method!r}.")


def _as_typed_key(key) -> jax.Array:
  """A scalar typed PRNG key; a legacy ``uint32[2]`` key is wrapped (not copied or reused)."""
  key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
  if not jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
    if key.dtype == jnp.uint32 and key.ndim == 1:
      key = jax.random.wrap_key_data(key)
    else:
      raise TypeError(
        f"key must be a PRNG key from jax.random.key(seed), got dtype {key.dtype} and shape "
        f"{tuple(key.shape)}."
      )
  if key.ndim != 0:
    raise ValueError(
      f"key must be a single (scalar) PRNG key, got a key array of shape {tuple(key.shape)}."
    )
  return key


def _multiplicities(key, m: int, method: str, dtype) -> jax.Array:
  """Integer row multiplicities of one replica, as ``dtype`` values, shape ``(m,)``."""
  if m == 0:
    return jnp.zeros((0,), dtype=dtype)
  if method == "multinomial":
    draws = jax.random.randint(key, (m,), 0, m, dtype=jnp.int32)
    counts = jnp.zeros((m,), dtype=jnp.int32).at[draws].add(jnp.ones((m,), dtype=jnp.int32))
  else:
    counts = jax.random.poisson(key, 1.0, (m,), dtype=jnp.int32)
  return counts.astype(dtype)


def _block_multiplicities(keys, m: int, method: str, dtype) -> jax.Array:
  """``(B, m)`` multiplicities, row ``r`` equal to ``_multiplicities(keys[r], ...)``.

  The multinomial counts of the whole block are one flat scatter-add over ``B * m`` offsets (rather
  than a vmapped scatter).
  """
  num = keys.shape[0]
  if method != "multinomial" or m == 0 or num * m > 2**31 - 1:
    return jax.vmap(lambda k: _multiplicities(k, m, method, dtype))(keys)
  draws = jax.vmap(lambda k: jax.random.randint(k, (m,), 0, m, dtype=jnp.int32))(keys)
  flat = (draws + (jnp.arange(num, dtype=jnp.int32) * m)[:, None]).reshape(num * m)
  counts = jnp.zeros((num * m,), dtype=jnp.int32).at[flat].add(jnp.ones_like(flat))
  return counts.reshape(num, m).astype(dtype)


def resample_comparisons(
  key: jax.Array, comparisons: Comparisons, *, method: str = "multinomial"
) -> Comparisons:
  """One bootstrap replica of ``comparisons``: same rows, weights times integer multiplicities.

  ``method="multinomial"``: the multiplicities are the counts of ``m`` rows drawn uniformly with
  replacement (they sum to ``m``; the classical bootstrap). ``method="poisson"``: independent
  ``Poisson(1)`` multiplicities (mean 1 per row; the Poisson bootstrap, whose rows are resampled
  independently). The new weight of row ``i`` is ``weight[i] * multiplicity[i]``; shapes, agents
  and contexts are unchanged, so anything computed from the result jits once for all replicas.

  Args:
    key: a typed PRNG key (``jax.random.key(seed)``); consumed.
    comparisons: the data (``m`` rows).
    method: ``"multinomial"`` or ``"poisson"`` (static).

  Returns:
    A :class:`~ste_jax.data.Comparisons` with the same ``a``, ``b``, ``outcome`` and ``context``.

  Raises:
    ValueError: an unknown ``method`` or a non-scalar key. TypeError: ``key`` is not a key.

  Examples:
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 1, 2, 0], [1, 2, 0, 2], [1.0, 1.0, 0.0, 0.5])
    >>> r = resample_comparisons(jax.random.key(0), c)
    >>> float(r.weight.sum())  # multinomial: as many draws as rows
    4.0
  """
  _check_method(method)
  if not isinstance(comparisons, Comparisons):
    raise TypeError(f"comparisons must be a Comparisons, got {type(comparisons).__name__}.")
  key = _as_typed_key(key)
  return _reweight(key, comparisons, method)


def _reweight(key, comparisons: Comparisons, method: str) -> Comparisons:
  w = comparisons.weight
  mult = _multiplicities(key, w.shape[-1], method, w.dtype)
  return dataclasses.replace(comparisons, weight=w * mult)


def _mesh_axes(mesh, mesh_axis) -> tuple[tuple[str, ...], int]:
  """The mesh axes the replicas are sharded over and the number of devices along them."""
  if not isinstance(mesh, Mesh):
    raise TypeError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}.")
  if mesh_axis is None:
    axes = tuple(mesh.axis_names)
  elif isinstance(mesh_axis, str):
    axes = (mesh_axis,)
  else:
    axes = tuple(mesh_axis)
  unknown = [ax for ax in axes if ax not in mesh.axis_names]
  if unknown or not axes:
    raise ValueError(f"mesh_axis {mesh_axis!r} must name axes of the mesh {mesh.axis_names}.")
  return axes, math.prod(mesh.shape[ax] for ax in axes)


def bootstrap_scores(
  key: jax.Array,
  comparisons: Comparisons,
  score_fn: Callable[[Comparisons], Any],
  *,
  num_replicas: int,
  method: str = "multinomial",
  batch_size: int | None = None,
  mesh: Mesh | None = None,
  mesh_axis: str | tuple[str, ...] | None = None,
) -> Any:
  """Bootstrap replicas of ``score_fn(comparisons)``, all in one compiled computation.

  Replica ``r`` is ``score_fn(resample_comparisons(keys[r], comparisons, method=method))`` with
  ``keys = jax.random.split(key, num_replicas)``: the rows keep their shapes and only ``weight``
  changes (see :func:`resample_comparisons`), so ``score_fn`` is traced once and the replicas run
  as one ``jax.vmap`` inside one ``jax.jit``.

  * ``batch_size``: replicas are computed ``batch_size`` at a time with
    ``jax.lax.map(..., batch_size=batch_size)``, bounding memory to about ``batch_size`` replicas'
    intermediates (with a mesh: per device).
  * ``mesh``: the replica keys are placed with ``NamedSharding(mesh, PartitionSpec(axes))`` and the
    comparisons replicated, and ``jit`` partitions the work: each device computes its share of
    the replicas. ``num_replicas`` is padded to a multiple of the device count with extra keys
    whose replicas are dropped. The same code runs on one CPU, a multi-GPU host or a TPU slice.

  The results do not depend on ``batch_size`` or ``mesh`` (up to floating-point reassociation by
  the compiler), only on ``key``.

  Choosing ``batch_size``: on a GPU the STE kernels of a batch run with a batch axis (see
  ``ste_jax.ops._batching``), and the largest batch that fits in memory is fastest (``None``:
  all replicas at once); ``batch_size`` trades speed for memory. On XLA:CPU the kernels of a
  batch run as a loop whatever ``batch_size`` is, and ``batch_size=1`` (a compiled sequential
  loop) keeps memory lowest at about the same speed. ``benchmarks/bootstrap.py`` measures both
  (figures in ``benchmarks/RESULTS.md``).

  Args:
    key: a typed PRNG key (``jax.random.key(seed)``); consumed (split into the replica keys).
    comparisons: the data, a :class:`~ste_jax.data.Comparisons` with ``m`` rows.
    score_fn: ``score_fn(comparisons) -> pytree of arrays``, pure and jit-able, e.g.
      :func:`ste_score_fn` (win counts -> tournament -> STE scores). It is a static argument of
      the compiled computation: reuse the same function object to reuse the compilation. For an
      :class:`STEScoreFn` only its settings other than the temperatures ``tau``, ``gamma``,
      ``gamma_c`` are static: a new temperature does not recompile.
    num_replicas: number of bootstrap replicas ``R >= 1`` (static).
    method: ``"multinomial"`` (default; multiplicities sum to ``m``) or ``"poisson"``.
    batch_size: ``None`` (all replicas of a device in one ``vmap``) or an integer ``>= 1``.
    mesh: optional ``jax.sharding.Mesh`` to shard the replicas over.
    mesh_axis: the mesh axis name (or tuple of names) to shard over; default all of them.

  Returns:
    The pytree of ``score_fn``'s outputs, each leaf with a leading replica axis of size
    ``num_replicas``.

  Raises:
    ValueError: ``num_replicas`` or ``batch_size`` not an integer ``>= 1``, an unknown
      ``method``, a non-scalar key or an unknown ``mesh_axis``. TypeError: ``key`` not a PRNG key,
      ``comparisons`` not a ``Comparisons``, ``score_fn`` not callable or ``mesh`` not a ``Mesh``.

  Examples:
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 1, 2] * 20, [1, 2, 0] * 20, [1.0, 1.0, 1.0] * 20)
    >>> s = bootstrap_scores(jax.random.key(0), c, ste_score_fn(tau=0.01), num_replicas=8)
    >>> s.top_cycle.shape  # a 3-cycle: every agent is in the top cycle in every replica
    (8, 3)
  """
  validate_int(num_replicas, "num_replicas")
  _check_method(method)
  validate_int(batch_size, "batch_size", allow_none=True)
  if not isinstance(comparisons, Comparisons):
    raise TypeError(f"comparisons must be a Comparisons, got {type(comparisons).__name__}.")
  if not callable(score_fn):
    raise TypeError(f"score_fn must be callable, got {type(score_fn).__name__}.")
  key = _as_typed_key(key)
  num_replicas = int(num_replicas)
  # An STEScoreFn's temperatures are traced arguments of the compiled driver, its other settings
  # static; any other score_fn is static as a whole.
  score_leaves, score_def = (
    jax.tree.flatten(score_fn) if isinstance(score_fn, STEScoreFn) else ([], score_fn)
  )
  keys = jax.random.split(key, num_replicas)
  if mesh is None:
    return _bootstrap(
      keys,
      comparisons,
      score_leaves,
      score_fn=score_def,
      method=method,
      batch_size=batch_size,
      mesh=None,
      axes=(),
    )
  axes, num_devices = _mesh_axes(mesh, mesh_axis)
  # The partitioner places the replicas (Auto axes), so that score_fn needs no sharding
  # annotations even when the caller's mesh has Explicit axes (jax.make_mesh's default).
  mesh = Mesh(mesh.devices, mesh.axis_names, axis_types=(AxisType.Auto,) * len(mesh.axis_names))
  pad = -num_replicas % num_devices
  if pad:
    # Padding keys are fresh key objects (not copies of the replica keys); their replicas are
    # dropped below.
    filler = jax.random.wrap_key_data(
      jnp.zeros((pad, *jax.random.key_data(key).shape), dtype=jnp.uint32),
      impl=jax.random.key_impl(key),
    )
    keys = jnp.concatenate([keys, filler])
  impl = jax.random.key_impl(keys)
  keys = jax.random.wrap_key_data(
    _place(jax.random.key_data(keys), NamedSharding(mesh, P(axes))), impl=impl
  )
  comparisons = jax.tree.map(lambda x: _place(x, NamedSharding(mesh, P())), comparisons)
  out = _bootstrap(
    keys,
    comparisons,
    score_leaves,
    score_fn=score_def,
    method=method,
    batch_size=batch_size,
    mesh=mesh,
    axes=axes,
  )
  return jax.tree.map(lambda x: x[:num_replicas], out) if pad else out


@functools.partial(jax.jit, static_argnames=("score_fn", "method", "batch_size", "mesh", "axes"))
def _bootstrap(keys, comparisons, score_leaves, *, score_fn, method, batch_size, mesh, axes):
  """The compiled driver: ``keys`` ``(R,)`` -> pytree of ``(R, ...)`` outputs.

  ``score_fn`` is the user's function, or the tree structure of an :class:`STEScoreFn` whose
  temperatures are ``score_leaves`` (traced: a new temperature reuses the compilation).
  """
  if isinstance(score_fn, jax.tree_util.PyTreeDef):
    score_fn = jax.tree.unflatten(score_fn, score_leaves)

  # The maps run over raw key data, re-wrapped inside: each replica key is still used exactly once,
  # and JAX's key-reuse checker does not misfire on a vmap of lax.map (scan) over typed keys.
  impl = jax.random.key_impl(keys)
  keys = jax.random.key_data(keys)
  base = comparisons.weight

  def chunk(ks):
    """A block of replicas: multiplicities for the whole block, then ``score_fn`` vmapped."""
    mult = _block_multiplicities(
      jax.random.wrap_key_data(ks, impl=impl), base.shape[-1], method, base.dtype
    )
    return jax.vmap(lambda w: score_fn(dataclasses.replace(comparisons, weight=base * w)))(mult)

  def many(ks):
    num = ks.shape[0]
    if batch_size is None or batch_size >= num:
      return chunk(ks)
    # lax.map(chunk, ..., batch_size) by hand, so that each chunk draws its multiplicities at once.
    num_chunks, rest = divmod(num, batch_size)
    main = ks[: num_chunks * batch_size].reshape(num_chunks, batch_size, *ks.shape[1:])
    out = jax.tree.map(
      lambda x: x.reshape(num_chunks * batch_size, *x.shape[2:]), lax.map(chunk, main)
    )
    if rest:
      out = jax.tree.map(
        lambda x, y: jnp.concatenate([x, y]), out, chunk(ks[num_chunks * batch_size :])
      )
    return out

  if mesh is None:
    return many(keys)
  # (R,) -> (devices, R / devices): each device maps over its own block of replicas.
  num_devices = math.prod(mesh.shape[ax] for ax in axes)
  blocks = keys.reshape(num_devices, keys.shape[0] // num_devices, *keys.shape[1:])
  blocks = lax.with_sharding_constraint(blocks, NamedSharding(mesh, P(axes, None)))
  out = jax.vmap(many)(blocks)

  def merge(x):
    x = x.reshape(x.shape[0] * x.shape[1], *x.shape[2:])
    return lax.with_sharding_constraint(x, NamedSharding(mesh, P(axes)))

  return jax.tree.map(merge, out)


# --------------------------------------------------------------------------------------------
# A ready-made score function for STE


@dataclasses.dataclass(frozen=True)
class STEScoreFn:
  """``comparisons -> STEScores``: a tournament estimator's edges, then its STE scores.

  Build it with :func:`ste_score_fn`. Instances are hashable and compare by value. It is also a
  pytree whose leaves are the temperatures ``tau``, ``gamma``, ``gamma_c`` (the other fields,
  the estimator among them, are static; ``reach_gamma`` too, since ``0`` selects the exact
  closure, another algorithm), so :func:`bootstrap_scores` traces them: configurations that
  differ only in these temperatures share one compilation.
  """

  estimator: "TournamentEstimator"
  tau: float
  gamma: float | None
  gamma_c: float | None
  max_path_length: int | None
  reach_gamma: float
  by_context: bool

  def __call__(self, comparisons: Comparisons) -> STEScores:
    est = self.estimator
    if self.by_context:
      # One context's edges: the comparisons with the other contexts' weights set to zero.
      def context_edges(k):
        weight = jnp.where(comparisons.context == k, comparisons.weight, 0)
        return est.replica_edges(None, dataclasses.replace(comparisons, weight=weight))

      edges = jax.vmap(context_edges)(jnp.arange(comparisons.num_contexts))
    else:
      edges = est.replica_edges(None, comparisons)
    return est.soft_scores(
      edges,
      tau=self.tau,
      gamma=self.tau if self.gamma is None else self.gamma,
      gamma_c=self.gamma_c,
      max_path_length=self.max_path_length,
      reach_gamma=self.reach_gamma,
    )


jax.tree_util.register_dataclass(
  STEScoreFn,
  data_fields=["tau", "gamma", "gamma_c"],
  meta_fields=["estimator", "max_path_length", "reach_gamma", "by_context"],
)


def ste_score_fn(
  *,
  estimator: "str | TournamentEstimator" = "posterior",
  tau: float = 0.05,
  gamma: float | None = None,
  gamma_c: float | None = None,
  max_path_length: int | None = None,
  reach_gamma: float = 0.0,
  by_context: bool = False,
) -> STEScoreFn:
  """A ``score_fn`` for :func:`bootstrap_scores`: comparisons -> tournament -> STE scores.

  The returned function computes the estimator's edges of the (reweighted) comparisons,
  ``estimator.replica_edges(None, comparisons)``, and their scores,
  ``estimator.soft_scores(edges, tau=tau, gamma=gamma, gamma_c=..., max_path_length=...,
  reach_gamma=...)``:

  * ``"posterior"``, :class:`~ste_jax.evaluate.PosteriorEdgeEstimator` (the paper's
    STE-posterior-edge, §6.1): the posterior-edge evidence ``D`` (Eq.
    ``posterior_edge_estimator``, Jeffreys prior by default) and
    :func:`~ste_jax.ste_scores_from_edges` ``(D, gamma=gamma, ...)``. ``tau`` plays no role here
    except as the default of ``gamma``.
  * ``"winrate"``, :class:`~ste_jax.evaluate.WinRateEstimator`: the win-rate tournament ``P`` (an
    unobserved pair is ``missing``, 1/2 by default) and :func:`~ste_jax.ste_scores`
    ``(P, tau=tau, gamma=gamma, ...)``.

  The prior, the tie policy and the value of a missing pair are settings of the estimator, e.g.
  ``ste_score_fn(estimator=PosteriorEdgeEstimator(prior=(1.0, 1.0)))``. The estimator must
  compute its replica edges without a fitted state (``replica_edges(None, comparisons)``), as the
  count-based estimators do.

  The paper's bootstrap experiment (Table 5) uses the posterior-edge estimator with max-min
  reachability (``reach_gamma=0``) and ``tau = gamma = 0.01``.

  Args:
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` or a name of the registry
      :data:`ste_jax.evaluate.ESTIMATORS` (resolved with
      :func:`~ste_jax.evaluate.estimator_named`; default ``"posterior"``).
    tau: edge temperature of the win-rate path, and the default ``gamma``.
    gamma: Top-Cycle aggregation temperature; defaults to ``tau``.
    gamma_c: covering temperature; defaults to ``gamma``.
    max_path_length: ``K`` (``None``: ``n - 1``, exact reachability).
    reach_gamma: smooth-product temperature (``0``: exact max-min closure).
    by_context: score each context separately (each context's edges from its own rows): outputs
      of shape ``(num_contexts, n)``.

  Returns:
    An :class:`STEScoreFn`, a hashable callable ``comparisons -> STEScores`` (fields ``(n,)``, or
    ``(num_contexts, n)`` with ``by_context``).

  Raises:
    ValueError: an unknown estimator name, the ``auto`` or ``model`` estimator (their edges need a
      fitted state), a temperature that is not a positive number or ``max_path_length < 1``.
    TypeError: ``estimator`` neither a name nor a ``TournamentEstimator``.

  Examples:
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 1, 2] * 5, [1, 2, 0] * 5, [1.0] * 15)  # a 3-cycle
    >>> [round(float(x), 2) for x in ste_score_fn(tau=0.01)(c).top_cycle]  # all in the top cycle
    [0.99, 0.99, 0.99]
  """
  # The registry lives with the estimators in ste_jax.evaluate, which loads Optax; importing it
  # here, on use, keeps ``import ste_jax.stats`` light.
  from ste_jax.evaluate._estimators import AutoEstimator, ModelEstimator, as_estimator

  estimator = as_estimator(estimator)
  if isinstance(estimator, (AutoEstimator, ModelEstimator)):  # their edges need a fitted state
    raise OptionError(
      f"ste_score_fn needs an estimator whose edges need no fitted state (posterior, winrate or a "
      f"custom one), got {estimator.name!r}: the model's replicas refit a fitted model, see "
      "ste_jax.evaluate.bootstrap_hard_memberships or leaderboard."
    )
  tau = validate_temperature(tau, "tau")
  gamma = None if gamma is None else validate_temperature(gamma, "gamma", allow_zero=True)
  gamma_c = None if gamma_c is None else validate_temperature(gamma_c, "gamma_c", allow_zero=True)
  reach_gamma = validate_temperature(reach_gamma, "reach_gamma", allow_zero=True)
  validate_path_length(max_path_length)
  max_path_length = None if max_path_length is None else int(max_path_length)
  return STEScoreFn(
    estimator=estimator,
    tau=tau,
    gamma=gamma,
    gamma_c=gamma_c,
    max_path_length=max_path_length,
    reach_gamma=reach_gamma,
    by_context=bool(by_context),
  )
