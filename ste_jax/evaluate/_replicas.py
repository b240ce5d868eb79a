"""Bootstrap replicas of an estimator's edges: their hard cores and edge orientations.

The leaderboard's ``p_tc`` / ``p_uc`` columns and the certified verdicts
(:mod:`ste_jax.evaluate._verdicts`) both come from :func:`bootstrap_hard_memberships`: each replica
reweights the comparisons (Poisson bootstrap over unit comparisons) or redraws their outcomes from
the fitted model (parametric bootstrap), recomputes the estimator's edges
(:mod:`ste_jax.evaluate._estimators`; a warm-started refit for the model estimator), and keeps its
hard Top Cycle and Uncovered Set and its strict hard relation (summed into ``beats``); optionally
its soft scores too.

*Cluster bootstrap.* Comparisons that share a prompt, a judge or a conversation are not
independent; resampling them one by one understates the spread of the cores. With per-row cluster
ids (``clusters``; the settings' ``cluster_column`` names the column they come from), each replica
draws one ``Poisson(1)`` count per cluster and multiplies every row of the cluster by it
(:func:`resample_cluster_weights`): whole clusters are kept, dropped or repeated together. This is
Poisson resampling only: the parametric bootstrap redraws each outcome independently from the
fitted model, which has no within-cluster dependence to carry over, so it is refused with clusters
(``resampling="auto"`` means the cluster Poisson bootstrap for every estimator then).
"""

from collections.abc import Callable
import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import _tuning
from ste_jax._compiler_options import gather_friendly_jit
from ste_jax._errors import InputError, OptionError
from ste_jax._host_random import numpy_generator
from ste_jax._options import (
  at_least,
  check_options,
  in_range,
  open_interval,
  option,
  parse_nonnegative_int,
  parse_open_interval,
)
from ste_jax._results import result_type
from ste_jax.data import Comparisons, merge_into_cells
from ste_jax.evaluate._mesh_replicas import replica_mesh, sharded_replica_chunk
from ste_jax.evaluate._protocol import RESAMPLING, FittedTournament, TournamentEstimator

REPLICA_CHUNK = _tuning.REPLICA_CHUNK  # replicas per key of the chunked draws
_REPLICA_BATCH_CPU = _tuning.REPLICA_BATCH_CPU
_REPLICA_BATCH_ACCELERATOR = _tuning.REPLICA_BATCH_ACCELERATOR
# The hard limit on bootstrap replicas: far more than a 95% interval needs (its Monte-Carlo error at
# 1e5 replicas is below 1e-3), and (R, n) memberships of that many replicas still fit in memory.
MAX_REPLICAS = 100_000


def _batch_size_check(value: Any, name: str) -> None:
  if value != "auto" and value is not None:
    at_least(1)(value, name)


@dataclasses.dataclass(frozen=True)
class ResamplingSettings:
  """Bootstrap replicas and verdicts: how many, which resampling, at what confidence.

  Each field is declared once (:func:`~ste_jax._options.option`): its default, check and CLI flag.

  Attributes:
    num_replicas: bootstrap replicas (``0``: no verdicts, no ``P(TC)``), at most
      :data:`MAX_REPLICAS`.
    confidence: the verdicts' level in ``(0.5, 1)``.
    resampling: ``"auto"`` (parametric for an estimator that redraws outcomes from its fitted
      model, else Poisson over unit comparisons), ``"poisson"`` or ``"parametric"``.
    certify_imputed: let a model's predictions on pairs never compared count as evidence for the
      verdicts (default: such pairs are sure neither way; :mod:`ste_jax.evaluate._verdicts`).
    batch_size: replicas per compiled step (``"auto"``: 1 on CPU, 8 on accelerators; ``None``: a
      whole chunk at once).
    cluster_column: the column whose value groups the comparisons into clusters resampled
      together (a prompt, judge or conversation id; :func:`bootstrap_hard_memberships`'s
      ``clusters``), or ``None``: every comparison on its own.
  """

  num_replicas: int = option(
    200,
    flag="--bootstrap",
    aliases=("--replicas",),
    parse=parse_nonnegative_int,
    check=in_range(0, MAX_REPLICAS),
    metavar="N",
    help="bootstrap replicas for verdicts and intervals, 0 for none",
  )
  confidence: float = option(
    0.95,
    parse=parse_open_interval(0.5, 1.0),
    check=open_interval(0.5, 1.0),
    help="verdict level: in = reaches every agent through comparisons whose winner is the same "
    "in at least this share of bootstrap replicas, out = cannot even through the ones not "
    "surely reversed",
  )
  resampling: str = option(
    "auto",
    choices=RESAMPLING,
    help="bootstrap: parametric (each comparison's outcome redrawn from the fitted model, which "
    "is refitted; model estimator only), poisson (comparisons reweighted) or auto (parametric "
    "for the model estimator, where a Poisson replica keeps every few-game perfect record "
    "perfect, poisson otherwise)",
  )
  certify_imputed: bool = option(
    False,
    help="let the model's predictions for pairs never compared count as evidence for the "
    "verdicts (default: such pairs are decided neither way)",
  )
  batch_size: int | str | None = option(
    "auto", flag=None, check=_batch_size_check, help="replicas per compiled bootstrap step"
  )
  cluster_column: str | None = option(
    None,
    metavar="COL",
    help="bootstrap by cluster: every comparison with the same value in this column (a prompt, "
    "judge or conversation id) gets the same Poisson(1) weight in a replica, so clusters are "
    "resampled whole (Poisson resampling; none: each comparison on its own)",
  )

  def __post_init__(self):
    check_options(self)


def resample_model_outcomes(
  key: jax.Array, probability: np.typing.ArrayLike, weight: np.typing.ArrayLike, num_replicas: int
) -> np.ndarray:
  """``(R, m)`` parametric-bootstrap outcomes: each row's games redrawn from the model (host).

  A row of weight ``w`` stands for ``max(1, round(w))`` games between its agents ``a`` and ``b``;
  the replica's outcome is the share of them ``a`` wins, ``Binomial(games, P̂[a, b]) / games``
  (``probability``: ``(m,)``, ``P̂`` at each row's pair). Weights stay as they are, so the design
  (which pairs met, how often) is the data's; a tie is redrawn as a win or a loss. Drawn with
  NumPy from :func:`~ste_jax._host_random.numpy_generator` of ``key``, in ``weight``'s dtype.
  """
  weight = np.asarray(weight)
  games = np.maximum(np.rint(weight), 1).astype(np.int64)
  p = np.clip(np.asarray(probability, dtype=np.float64), 0.0, 1.0)
  wins = numpy_generator(key).binomial(games, p, (num_replicas,) + weight.shape)
  return (wins / games).astype(weight.dtype)


def resample_unit_weights(
  key: jax.Array, weight: np.typing.ArrayLike, num_replicas: int
) -> np.ndarray:
  """``(R, m)`` Poisson-bootstrap weights over unit comparisons: row weight ``w`` -> ``Poisson(w)``.

  A row of weight ``w`` stands for ``w`` comparisons; resampling each of them ``Poisson(1)`` times
  gives the row ``Poisson(w)`` (a sum of independent Poissons), so aggregated rows (one row per pair
  with ``weight`` = wins) are resampled like the unit rows they summarize. For unit rows this is the
  classical Poisson bootstrap. Drawn with NumPy from
  :func:`~ste_jax._host_random.numpy_generator` of ``key``, in ``weight``'s dtype.
  """
  weight = np.asarray(weight)
  rate = np.broadcast_to(weight.astype(np.float64), (num_replicas,) + weight.shape)
  return numpy_generator(key).poisson(rate).astype(weight.dtype)


def resample_cluster_weights(
  key: jax.Array,
  weight: np.typing.ArrayLike,
  num_replicas: int,
  *,
  clusters: np.ndarray,
  num_clusters: int,
) -> np.ndarray:
  """``(R, m)`` cluster-bootstrap weights: row weight ``w`` times its cluster's ``Poisson(1)``.

  Each replica draws one ``Poisson(1)`` count per cluster, ``(R, C)``, from
  :func:`~ste_jax._host_random.numpy_generator` of ``key`` (the draws of
  :func:`resample_unit_weights` for ``C`` unit rows, so singleton clusters numbered in row order
  are exactly the unit-row Poisson bootstrap), and every row of cluster ``c`` gets ``w * count_c``:
  a row of weight ``w`` stands for ``w`` comparisons of the same cluster, kept or dropped together.

  Args:
    key: PRNG key.
    weight: ``(m,)`` row weights.
    num_replicas: ``R``.
    clusters: ``(m,)`` int cluster index of each row, in ``[0, num_clusters)``.
    num_clusters: ``C``.

  Returns:
    ``(R, m)`` weights in ``weight``'s dtype.

  Example:
    >>> w = resample_cluster_weights(
    ...   jax.random.key(0), np.ones(4), 3, clusters=np.array([0, 0, 1, 1]), num_clusters=2
    ... )
    >>> bool(np.all(w[:, 0] == w[:, 1]) and np.all(w[:, 2] == w[:, 3]))
    True
  """
  weight = np.asarray(weight)
  counts = resample_unit_weights(key, np.ones(num_clusters), num_replicas)
  return (weight[None, :].astype(np.float64) * counts[:, clusters]).astype(weight.dtype)


def cluster_codes(clusters: np.typing.ArrayLike, num_rows: int) -> tuple[np.ndarray, int]:
  """``(codes, C)``: ``(m,)`` cluster indices ``0..C-1`` in sorted order of the ids, and ``C``.

  Raises:
    InputError: ``clusters`` is not one id per row.
  """
  ids = np.asarray(clusters)
  if ids.ndim != 1 or ids.shape[0] != num_rows:
    raise InputError(f"clusters must hold one id per comparison ({num_rows}), got {ids.shape}.")
  values, codes = np.unique(ids, return_inverse=True)
  return codes.reshape(-1).astype(np.int64), int(values.size)


def merge_within_clusters(
  comparisons: Comparisons, codes: np.ndarray
) -> tuple[Comparisons, np.ndarray]:
  """Count cells within clusters: rows merged by ``(cluster, context, a, b, outcome)`` (eager).

  Rows of one cell and one cluster always get the same replica multiplier, so the merged rows'
  replicas are the rows' replicas exactly (same weighted sums); rows of different clusters are
  never merged.

  Returns:
    ``(cells, cell_codes)``: the merged :class:`Comparisons` and each cell's cluster index.
  """
  num_contexts = max(comparisons.num_contexts, 1)
  joint = codes * num_contexts + np.asarray(comparisons.context, dtype=np.int64)
  if joint.size and joint.max() >= np.iinfo(np.int32).max:
    raise InputError(f"too many clusters x contexts to merge ({int(joint.max()) + 1}).")
  tagged = dataclasses.replace(comparisons, context=jnp.asarray(joint, dtype=jnp.int32))
  cells = merge_into_cells(tagged, by_outcome=True)
  joint = np.asarray(cells.context, dtype=np.int64)
  cells = dataclasses.replace(
    cells, context=jnp.asarray(joint % num_contexts, dtype=comparisons.context.dtype)
  )
  return cells, joint // num_contexts


def resampling_unit(
  estimator: TournamentEstimator, resampling: str, clusters: bool, column: str | None = None
) -> str:
  """``"parametric"``, ``"poisson"`` or ``"clusters"``: the bootstrap the settings mean.

  Raises:
    OptionError: ``"parametric"`` with clusters (see the module docstring), or as
      :meth:`~ste_jax.evaluate.TournamentEstimator.resolve_resampling`.
  """
  if clusters:
    if resampling == "parametric":
      where = f" of {column!r}" if column else ""
      raise OptionError(
        f"resampling='parametric' redraws every outcome independently from the fitted model, "
        f"which keeps no dependence within clusters{where}: use resampling='poisson' (or 'auto') "
        "with a cluster column."
      )
    if resampling not in RESAMPLING:
      estimator.resolve_resampling(resampling)  # raises the usual message
    return "clusters"
  return estimator.resolve_resampling(resampling)


@result_type
class BootstrapMemberships:
  """Hard core memberships and edge orientations of ``R`` bootstrap replicas.

  Attributes:
    top_cycle: ``(R, n)`` boolean hard Top-Cycle membership per replica.
    uncovered: ``(R, n)`` boolean hard Uncovered-Set membership per replica.
    beats: ``(n, n)`` share of replicas whose strict hard relation has ``a -> b`` (the input of
      :func:`~ste_jax.evaluate.orientation_certificates`).
    soft_top_cycle, soft_uncovered: ``(R, n)`` soft scores per replica, or ``None``.
  """

  top_cycle: np.ndarray
  uncovered: np.ndarray
  beats: np.ndarray
  soft_top_cycle: np.ndarray | None = None
  soft_uncovered: np.ndarray | None = None


@functools.partial(
  gather_friendly_jit,
  static_argnames=("estimator", "batch", "with_soft", "parametric"),
)
def _bootstrap_chunk(
  draws,
  comparisons,
  state,
  num_valid,
  tau,
  gamma,
  *,
  estimator,
  batch,
  with_soft,
  parametric,
):
  """Replicas of ``draws`` ``(chunk, m)``: memberships ``(chunk, n)``, orientation counts of the
  first ``num_valid``.

  Module level with the fit's arrays as arguments (the estimator, hashable, is static), so it
  compiles once per shape and estimator, not once per table. ``parametric``: ``draws`` are
  outcomes; else weights.
  """

  def replica(draw):
    field = "outcome" if parametric else "weight"
    edges = estimator.replica_edges(state, dataclasses.replace(comparisons, **{field: draw}))
    top_cycle, uncovered = estimator.hard_memberships(edges)
    out = (top_cycle, uncovered, estimator.hard_relations(edges)[1])
    if with_soft:
      s = estimator.soft_scores(edges, tau=tau, gamma=gamma)
      out = out + (s.top_cycle, s.uncovered)
    return out

  outs = jax.lax.map(replica, draws, batch_size=batch)
  valid = jnp.arange(draws.shape[0]) < num_valid
  beats = jnp.sum(outs[2] & valid[:, None, None], axis=0, dtype=jnp.int32)
  return outs[:2] + (beats,) + outs[3:]


def default_batch_size() -> int:
  """Replicas per compiled bootstrap step when ``batch_size="auto"``: 1 on CPU, 8 on accelerators.

  The sizes are :data:`ste_jax._tuning.REPLICA_BATCH_CPU` and
  :data:`~ste_jax._tuning.REPLICA_BATCH_ACCELERATOR`. On XLA:CPU a batch of replicas is no faster
  per replica than one at a time and compiles more slowly (``benchmarks/model_fit.py``); an
  accelerator runs a batch with a batch axis.

  Returns:
    The batch size for the default backend.
  """
  if jax.default_backend() == "cpu":
    return _REPLICA_BATCH_CPU
  return _REPLICA_BATCH_ACCELERATOR


def _design_draw(design, key, *, weight, num_replicas):
  del weight  # the design's own draws
  return design.draw(key, num_replicas)


def _integer_weights(comparisons: Comparisons) -> bool:
  w = np.asarray(comparisons.weight)
  return bool(np.all(w == np.round(w)))


def bootstrap_hard_memberships(
  key: jax.Array,
  comparisons: Comparisons,
  estimator: TournamentEstimator,
  fitted: FittedTournament,
  *,
  num_replicas: int,
  batch_size: int | str | None = "auto",
  soft: tuple[float, float] | None = None,
  progress: Callable[[int], object] | None = None,
  resampling: str = "auto",
  merge_rows: bool = True,
  clusters: np.typing.ArrayLike | None = None,
  mesh: "jax.sharding.Mesh | None" = None,
) -> BootstrapMemberships:
  """Hard core memberships (and optionally soft scores) of bootstrap replicas of ``comparisons``.

  Replicas either reweight the rows by :func:`resample_unit_weights` (Poisson bootstrap over unit
  comparisons) or redraw their outcomes from the fitted model by :func:`resample_model_outcomes`
  (parametric bootstrap; :meth:`~ste_jax.evaluate.TournamentEstimator.resolve_resampling`); each
  replica recomputes the estimator's edges
  (a warm-started refit for the model estimator), its hard cores and its strict hard relation
  (summed into ``beats``), ``batch_size`` replicas per compiled ``lax.map`` step. Replica ``r``
  uses ``jax.random.split(key, num_chunks)[r // REPLICA_CHUNK]``. Compiled once per data shape and
  estimator (the estimator's arrays are arguments).

  By default the rows are first merged into count cells (:func:`~ste_jax.data.merge_into_cells`,
  by outcome for the Poisson bootstrap, by pair for the parametric one) and the cells are
  resampled: ``Poisson(k)`` for a cell of weight ``k``, ``Binomial(k, P̂)`` wins for ``k`` unit
  games. That is the row bootstrap exactly in distribution (a sum of independent Poissons is
  Poisson; of binomials with one ``P̂``, binomial) at O(cells) per replica instead of O(rows).
  The parametric bootstrap merges only when every weight is an integer (a row of weight ``w``
  stands for ``max(1, round(w))`` games, which merging fractional weights would change). A model
  with covariates or tie outcomes redraws the rows of its own
  :meth:`~ste_jax.evaluate.TournamentEstimator.parametric_design` instead (each battle's outcome
  from the fitted model with its covariates; wins, ties and losses from the tie model).

  Args:
    key: PRNG key.
    comparisons: the data.
    estimator: a resolved :class:`~ste_jax.evaluate.TournamentEstimator`.
    fitted: its :class:`~ste_jax.evaluate.FittedTournament` on ``comparisons``.
    num_replicas: ``R >= 1``.
    batch_size: replicas per compiled batch (memory bound); ``"auto"``: :func:`default_batch_size`;
      ``None``: a whole chunk at once.
    soft: ``None``, or ``(tau, gamma)`` to also return the replicas' soft scores.
    progress: optional ``progress(num_done)`` callable.
    resampling: ``"auto"`` (parametric for the model estimator, else Poisson), ``"poisson"`` or
      ``"parametric"`` (model estimator only).
    merge_rows: resample count cells (default) or, ``False``, the rows as given (the same
      distribution, other draws: a different result for the same key). With ``clusters``, rows
      are merged only within a cluster (:func:`merge_within_clusters`: the same replicas exactly).
    clusters: ``(m,)`` cluster id of each row (any sortable ids): the cluster bootstrap
      (:func:`resample_cluster_weights`; Poisson only, the module docstring says why), or
      ``None``: rows (unit comparisons) resampled on their own.
    mesh: a ``jax.sharding.Mesh`` (it may span processes, ``jax.distributed``) to split each
      chunk's replicas over all its devices (:mod:`ste_jax.evaluate._mesh_replicas`), or ``None``:
      the default device. The same replicas and results for the same key either way; with several
      processes every process passes the same arguments and gets the whole result.

  Returns:
    :class:`BootstrapMemberships`.
  """
  unit = resampling_unit(estimator, resampling, clusters is not None)
  parametric = unit == "parametric"
  if num_replicas < 1:
    raise ValueError(f"num_replicas must be >= 1, got {num_replicas}.")
  chunk = min(num_replicas, REPLICA_CHUNK)
  if batch_size == "auto":
    batch_size = default_batch_size()
  batch = min(batch_size or chunk, chunk)
  dtype = fitted.edges.dtype
  tau, gamma = (1.0, 1.0) if soft is None else soft
  state = fitted.state
  # A model with covariates or tie outcomes redraws its own rows (ParametricDesign).
  design = None
  if parametric:
    design = estimator.parametric_design(fitted, comparisons, merge_rows=merge_rows)
  if design is not None:
    comparisons, state = design.comparisons, design.state
    parametric = design.field == "outcome"
  elif unit == "clusters":
    codes, num_clusters = cluster_codes(clusters, comparisons.num_comparisons)
    if merge_rows:
      comparisons, codes = merge_within_clusters(comparisons, codes)
      state = estimator.replica_state(state, comparisons)
  elif merge_rows and (not parametric or _integer_weights(comparisons)):
    comparisons = merge_into_cells(comparisons, by_outcome=not parametric)
    state = estimator.replica_state(state, comparisons)
  static = dict(
    estimator=estimator,
    batch=batch,
    with_soft=soft is not None,
    parametric=parametric,
  )
  if design is not None:
    draw = functools.partial(_design_draw, design)
  elif parametric:
    p_hat = np.asarray(fitted.edges)[np.asarray(comparisons.a), np.asarray(comparisons.b)]
    draw = functools.partial(resample_model_outcomes, probability=p_hat)
  elif unit == "clusters":
    draw = functools.partial(resample_cluster_weights, clusters=codes, num_clusters=num_clusters)
  else:
    draw = resample_unit_weights
  parts, beats = [], np.zeros(fitted.edges.shape, dtype=np.int64)
  if mesh is not None:
    mesh, axes = replica_mesh(mesh)
  for c, k in enumerate(jax.random.split(key, -(-num_replicas // chunk))):
    valid = min(chunk, num_replicas - c * chunk)
    args = (draw(k, weight=comparisons.weight, num_replicas=chunk), comparisons, state)
    if mesh is None:
      out = _bootstrap_chunk(
        *args,
        jnp.asarray(valid, jnp.int32),
        jnp.asarray(tau, dtype),
        jnp.asarray(gamma, dtype),
        **static,
      )
    else:
      out = sharded_replica_chunk(
        _bootstrap_chunk,
        *args,
        valid,
        np.asarray(tau, dtype),
        np.asarray(gamma, dtype),
        mesh=mesh,
        axes=axes,
        **static,
      )
    beats += np.asarray(out[2])
    parts.append([np.asarray(x)[:valid] for i, x in enumerate(out) if i != 2])
    if progress is not None:
      progress(valid)
  stacked = [np.concatenate(xs) for xs in zip(*parts)]
  soft_out = stacked[2:] if soft is not None else [None, None]
  return BootstrapMemberships(stacked[0], stacked[1], beats / num_replicas, *soft_out)
