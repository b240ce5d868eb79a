"""Summaries of bootstrap replicas for the paper's Table 5.

Paper §6, "Robustness to Missingness and Bootstrap Resampling".

Pure, jit-able functions of replica scores stacked on axis 0 (as returned by
:func:`~ste_jax.stats.bootstrap_scores`): :func:`inclusion_frequency`, :func:`percentile_intervals`,
:func:`core_masks`, :func:`pairwise_jaccard` and :func:`top1_entropy`. Ties: scores whose sorted
gaps are at most ``tie_tol`` (default ``1e-12``) are tied (single linkage, as in the
:mod:`ste_jax.stats` metrics), and a top-``k`` core with ties at the cut-off is taken in expectation
over uniformly random tie-breaking.
"""

from typing import Any

import jax
from jax import lax
import jax.numpy as jnp
from jax.scipy.special import xlogy
import numpy as np

from ste_jax._checks import as_float_array, default_float_dtype
from ste_jax._results import result_type
from ste_jax._validation import validate_number
from ste_jax.stats._bootstrap import _as_typed_key

DEFAULT_TIE_TOL = 1e-12


def _replica_scores(scores, name: str = "scores") -> jax.Array:
  scores = as_float_array(scores, name)
  if scores.ndim < 2:
    raise ValueError(
      f"{name} must have shape (num_replicas, ..., n) (replicas on axis 0); "
      f"got {tuple(scores.shape)}."
    )
  if scores.shape[-1] < 1:
    raise ValueError(
      f"{name} must have at least one agent (last axis), got shape {tuple(scores.shape)}."
    )
  return scores


def _tie_groups(scores, tie_tol: float):
  """Decreasing stable sort along the last axis with single-linkage tie groups.

  Returns:
    ``(order, start, end)`` of shape ``scores.shape``: ``order`` sorts each row decreasingly and
    ``start[..., t]``, ``end[..., t]`` (inclusive, int32) delimit the tie group of sorted
    position ``t``.
  """
  n = scores.shape[-1]
  order = jnp.argsort(-scores, axis=-1, stable=True)
  s = jnp.take_along_axis(scores, order, axis=-1)
  split = (s[..., :-1] - s[..., 1:]) > tie_tol
  edge = jnp.ones((*s.shape[:-1], 1), dtype=bool)
  pos = jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32), s.shape)
  start = lax.cummax(
    jnp.where(jnp.concatenate([edge, split], -1), pos, jnp.zeros_like(pos)), axis=s.ndim - 1
  )
  end = lax.cummin(
    jnp.where(jnp.concatenate([split, edge], -1), pos, jnp.full_like(pos, n - 1)),
    axis=s.ndim - 1,
    reverse=True,
  )
  return order, start, end


def _unsort(sorted_values, order):
  """Inverse of ``take_along_axis(x, order, -1)``."""
  return jnp.take_along_axis(sorted_values, jnp.argsort(order, axis=-1), axis=-1)


def _check_k(core_size, n: int):
  if isinstance(core_size, (bool, np.bool_)):
    raise ValueError(f"core_size must be an integer in [0, {n}], got {core_size!r}.")
  if isinstance(core_size, (int, np.integer)) and not 0 <= core_size <= n:
    raise ValueError(f"core_size must be in [0, {n}], got {core_size}.")


def _one_of(core_size, threshold) -> None:
  if (core_size is None) == (threshold is None):
    raise ValueError("pass exactly one of core_size (top-|C| core) and threshold (score cut-off).")


def _top_k_probability(scores, k, tie_tol):
  order, start, end = _tie_groups(scores, tie_tol)
  k = jnp.asarray(k).astype(scores.dtype)
  size = (end - start + 1).astype(scores.dtype)
  return _unsort(jnp.clip((k - start.astype(scores.dtype)) / size, 0, 1), order)


def inclusion_frequency(
  scores: jax.typing.ArrayLike,
  *,
  core_size: jax.typing.ArrayLike | None = None,
  threshold: jax.typing.ArrayLike | None = None,
  tie_tol: float = DEFAULT_TIE_TOL,
) -> jax.Array:
  """Bootstrap inclusion frequency ``P(a in core)`` per agent.

  The core of a replica is either its top-``core_size`` set (``core_size = |C|``) or the agents
  whose score exceeds ``threshold`` (strictly, as the paper's fixed-threshold check). With a
  top-``k`` core, agents tied at the cut-off (scores within ``tie_tol``, single linkage) count by
  their expected membership under uniformly random tie-breaking: ``r / g`` for a tie group of
  size ``g`` with ``r`` places left, so each replica contributes exactly ``k`` in total.

  Args:
    scores: ``(num_replicas, ..., n)`` replica scores, e.g. ``bootstrap_scores(...).top_cycle``.
    core_size: ``|C|``, an integer in ``[0, n]`` (may be traced).
    threshold: a score cut-off (may be traced). Exactly one of ``core_size``, ``threshold``.
    tie_tol: tie tolerance for the top-``k`` core.

  Returns:
    ``(..., n)`` frequencies in ``[0, 1]``, in the scores' dtype (summing to ``core_size`` over
    agents with a top-``k`` core).

  Examples:
    >>> s = jnp.array([[3.0, 2.0, 1.0], [1.0, 2.0, 2.0]])  # replica 2 ties agents 1 and 2
    >>> inclusion_frequency(s, core_size=1).tolist()
    [0.5, 0.25, 0.25]
  """
  scores = _replica_scores(scores)
  _one_of(core_size, threshold)
  if threshold is not None:
    member = (scores > jnp.asarray(threshold).astype(scores.dtype)).astype(scores.dtype)
  else:
    _check_k(core_size, scores.shape[-1])
    member = _top_k_probability(scores, core_size, float(tie_tol))
  return jnp.mean(member, axis=0)


def core_masks(
  key: jax.Array | None,
  scores: jax.typing.ArrayLike,
  *,
  core_size: jax.typing.ArrayLike | None = None,
  threshold: jax.typing.ArrayLike | None = None,
  tie_tol: float = DEFAULT_TIE_TOL,
) -> jax.Array:
  """Boolean core of each replica: its top-``core_size`` set or the agents above ``threshold``.

  A top-``k`` core has exactly ``k`` agents: ties at the cut-off (scores within ``tie_tol``,
  single linkage) are broken uniformly at random with ``key``, or, with ``key=None``, in favour of
  the lower agent index (deterministic, but it favours low indices on score plateaus).

  Args:
    key: typed PRNG key for random tie-breaking (top-``k`` only; consumed), or ``None``.
    scores: ``(num_replicas, ..., n)`` or any ``(..., n)`` scores.
    core_size: ``|C|`` in ``[0, n]`` (may be traced).
    threshold: strict score cut-off (may be traced). Exactly one of ``core_size``, ``threshold``.
    tie_tol: tie tolerance.

  Returns:
    A boolean array of the scores' shape.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.stats import core_masks
    >>> [bool(x) for x in core_masks(None, jnp.array([0.9, 0.2, 0.7, 0.1]), core_size=2)]
    [True, False, True, False]
  """
  scores = as_float_array(scores, "scores")
  if scores.ndim < 1:
    raise ValueError("scores must have at least one axis (agents last).")
  _one_of(core_size, threshold)
  if threshold is not None:
    return scores > jnp.asarray(threshold).astype(scores.dtype)
  n = scores.shape[-1]
  _check_k(core_size, n)
  order, start, _ = _tie_groups(scores, float(tie_tol))
  group = _unsort(start, order)  # tie-group id per agent: its first sorted position
  if key is None:
    tiebreak = jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32), scores.shape)
  else:
    tiebreak = jax.random.uniform(_as_typed_key(key), scores.shape, dtype=scores.dtype)
  rank = jnp.argsort(jnp.lexsort((tiebreak, group), axis=-1), axis=-1)
  return rank < jnp.asarray(core_size).astype(rank.dtype)


def pairwise_jaccard(core_masks: jax.typing.ArrayLike) -> jax.Array:
  """Mean Jaccard index ``|A_r & A_s| / |A_r | A_s|`` over all pairs ``r < s`` of replicate cores.

  Computed from one ``(R, R)`` intersection matrix (a matrix product), with no loop over pairs;
  two empty cores have Jaccard 1.

  Args:
    core_masks: ``(num_replicas, ..., n)`` boolean (or 0/1) core memberships, e.g. from
      :func:`core_masks`; at least two replicas.

  Returns:
    ``(...)`` mean pairwise Jaccard in ``[0, 1]``, in the default float dtype.

  Examples:
    >>> m = jnp.array([[1, 1, 0], [1, 0, 1], [1, 1, 0]], dtype=bool)
    >>> round(float(pairwise_jaccard(m)), 4)  # pairs: 1/3, 1, 1/3
    0.5556
  """
  masks = jnp.asarray(core_masks)
  if masks.ndim < 2:
    raise ValueError(
      f"core_masks must have shape (num_replicas, ..., n); got {tuple(masks.shape)}."
    )
  r = masks.shape[0]
  if r < 2:
    raise ValueError(f"pairwise Jaccard needs at least two replicas, got {r}.")
  if masks.dtype != jnp.bool_:
    masks = masks != jnp.zeros((), masks.dtype)
  m = jnp.moveaxis(masks, 0, -2).astype(default_float_dtype())  # (..., R, n)
  inter = jnp.einsum("...rn,...sn->...rs", m, m, precision=lax.Precision.HIGHEST)
  size = jnp.sum(m, axis=-1)
  union = size[..., :, None] + size[..., None, :] - inter
  nonempty = union > 0
  jac = jnp.where(
    nonempty, inter / jnp.where(nonempty, union, jnp.ones_like(union)), jnp.ones_like(union)
  )
  # The diagonal is exactly 1 (J(A, A) = 1, empty or not); average the off-diagonal pairs.
  return (jnp.sum(jac, axis=(-2, -1)) - r) / (r * (r - 1))


def top1_entropy(
  scores: jax.typing.ArrayLike, *, tie_tol: float = DEFAULT_TIE_TOL, base: float | None = None
) -> jax.Array:
  """Entropy of the bootstrap distribution of the top-scoring agent.

  Each replica gives one unit of mass to its argmax agent, split evenly among the agents whose
  score is within ``tie_tol`` of the maximum; ``p[a]`` is the average over replicas and the
  result is ``-sum_a p[a] log p[a]`` (0 when the same agent is always on top, ``log n`` at most).

  Args:
    scores: ``(num_replicas, ..., n)`` replica scores.
    tie_tol: scores within this distance of the maximum tie for first place.
    base: logarithm base; ``None`` (default) gives nats, ``2`` bits.

  Returns:
    ``(...)`` entropy in the scores' dtype.

  Examples:
    >>> s = jnp.array([[2.0, 1.0], [1.0, 2.0], [2.0, 2.0], [2.0, 1.0]])
    >>> round(float(top1_entropy(s, base=2)), 4)  # p = (5/8, 3/8)
    0.9544
  """
  scores = _replica_scores(scores)
  top = scores >= jnp.max(scores, axis=-1, keepdims=True) - jnp.asarray(tie_tol, dtype=scores.dtype)
  share = top.astype(scores.dtype)
  share = share / jnp.sum(share, axis=-1, keepdims=True)
  p = jnp.mean(share, axis=0)
  h = -jnp.sum(xlogy(p, p), axis=-1)
  if base is not None:
    h = h / jnp.log(
      jnp.asarray(validate_number(base, "base", low=0.0, low_open=True), dtype=h.dtype)
    )
  return h


@result_type
class PercentileInterval:
  """Lower and upper percentile bounds, each a pytree like one replica of the scores."""

  lower: Any
  upper: Any


def percentile_intervals(
  scores: jax.typing.ArrayLike, *, level: jax.typing.ArrayLike = 0.95
) -> PercentileInterval:
  """Percentile bootstrap intervals: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles.

  Quantiles over the replica axis (axis 0) with linear interpolation (NumPy's default), leaf by
  leaf, so a whole :class:`~ste_jax.STEScores` can be passed.

  Args:
    scores: a pytree of ``(num_replicas, ...)`` arrays, e.g. the output of
      :func:`bootstrap_scores`.
    level: coverage in ``(0, 1)`` (may be traced).

  Returns:
    :class:`PercentileInterval` ``(lower, upper)``, each with ``scores``' tree structure and
    leaves of shape ``(...)``.

  Raises:
    ValueError: a concrete ``level`` outside ``(0, 1)`` or a leaf without a replica axis.

  Examples:
    >>> s = jnp.arange(101.0)[:, None]  # 101 replicas of one agent: 0, 1, ..., 100
    >>> interval = percentile_intervals(s, level=0.5)
    >>> interval.lower.tolist(), interval.upper.tolist()
    ([25.0], [75.0])
  """
  if isinstance(level, (int, float, np.number)) and not 0 < float(level) < 1:
    raise ValueError(f"level must be in (0, 1), got {level}.")

  def quantiles(x):
    x = as_float_array(x, "scores")
    if x.ndim < 1:
      raise ValueError("each scores leaf needs a leading replica axis.")
    lvl = jnp.asarray(level).astype(x.dtype)
    return jnp.quantile(x, jnp.stack([(1 - lvl) / 2, (1 + lvl) / 2]), axis=0)

  q = jax.tree.map(quantiles, scores)
  return PercentileInterval(
    lower=jax.tree.map(lambda t: t[0], q), upper=jax.tree.map(lambda t: t[1], q)
  )
