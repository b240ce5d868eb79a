"""Recovery metrics for set-valued scores (paper §6.1, appendix "Reproducibility Details").

Scores from STE sit on exact plateaus, so every rank-based metric here is defined under
*uniformly random tie-breaking* and computed as an exact expectation, not by sampling:

* Tie groups: scores are sorted in decreasing order and consecutive scores whose gap is at most
  ``tie_tol`` (default ``1e-12``) share a group (single linkage, so a chain of near-equal scores is
  one group).
* :func:`top_k_f1`: each agent's probability of being among the top ``k`` is ``1`` above the
  boundary group, ``0`` below, and ``r / g`` inside it (``r`` slots left for a group of size
  ``g``: the hypergeometric mean), so the expected F1 ``2 E[TP] / (k + |C|)`` is exact.
* :func:`auroc`: ties count ``1/2`` (midranks), which is also the expectation under random order.
* :func:`average_precision`: the expectation of average precision over random orders of each tie
  group, in closed form.

:func:`jittered_top_k_f1` is the Monte Carlo version (the paper's "randomized tie-breaking repeated
over small jitters"); it converges to :func:`top_k_f1`. All functions take one ``(n,)`` score
vector; use :func:`jax.vmap` for batches.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, default_float_dtype
from ste_jax._validation import validate_int


def _scores_labels(scores, labels):
  scores = as_float_array(scores, "scores")
  labels = jnp.asarray(labels)
  if scores.ndim != 1:
    raise ValueError(f"scores must have shape (n,); got {tuple(scores.shape)}.")
  if labels.shape != scores.shape:
    raise ValueError(f"labels must have the shape of scores {scores.shape}; got {labels.shape}.")
  if labels.dtype != jnp.bool_:
    labels = labels != jnp.zeros((), labels.dtype)
  return scores, labels


def _tie_groups(scores, tie_tol):
  """Decreasing sort with tie groups.

  Returns:
    ``(order, start, end)``: ``order`` sorts ``scores`` decreasingly (stable); for each sorted
    position ``t``, ``start[t]`` and ``end[t]`` (inclusive) delimit its tie group, as int32.
  """
  n = scores.shape[0]
  order = jnp.argsort(-scores, stable=True)
  s = scores[order]
  pos = jnp.arange(n, dtype=jnp.int32)
  gap = s[:-1] - s[1:]
  split = gap > tie_tol  # between t and t + 1
  true1 = jnp.ones((1,), dtype=bool)
  is_first = jnp.concatenate([true1, split])
  is_last = jnp.concatenate([split, true1])
  start = lax.cummax(jnp.where(is_first, pos, jnp.zeros_like(pos)), axis=0)
  end = lax.cummin(jnp.where(is_last, pos, jnp.full_like(pos, n - 1)), axis=0, reverse=True)
  return order, start, end


def _safe_div(num, den, empty_value):
  nonzero = den != jnp.zeros((), den.dtype)
  safe = jnp.where(nonzero, den, jnp.ones_like(den))
  return jnp.where(nonzero, num / safe, jnp.full_like(num, empty_value))


def top_k_selection_probability(
  scores: jax.typing.ArrayLike, *, k: jax.typing.ArrayLike, tie_tol: float = 1e-12
) -> jax.Array:
  """Probability that each agent is among the top ``k`` under uniformly random tie-breaking.

  Args:
    scores: ``(n,)`` scores, larger is better.
    k: number of agents selected (``0 <= k <= n``; may be traced).
    tie_tol: scores whose sorted gaps are ``<= tie_tol`` are tied (single linkage).

  Returns:
    ``(n,)`` probabilities in ``[0, 1]`` summing to ``k``: ``1`` for agents strictly above the
    boundary tie group, ``0`` below it, and ``(k - above) / size`` inside it.

  Examples:
    >>> import jax.numpy as jnp
    >>> top_k_selection_probability(jnp.array([3.0, 1.0, 1.0, 1.0]), k=2).tolist()
    [1.0, 0.3333333432674408, 0.3333333432674408, 0.3333333432674408]
  """
  scores = as_float_array(scores, "scores")
  if scores.ndim != 1:
    raise ValueError(f"scores must have shape (n,); got {tuple(scores.shape)}.")
  return _selection_probability_kernel(scores, k, tie_tol=float(tie_tol))


@functools.partial(jax.jit, static_argnames=("tie_tol",))
def _selection_probability_kernel(scores, k, *, tie_tol):
  order, start, end = _tie_groups(scores, tie_tol)
  k = jnp.asarray(k).astype(scores.dtype)
  size = (end - start + 1).astype(scores.dtype)
  prob_sorted = jnp.clip((k - start.astype(scores.dtype)) / size, 0, 1)
  return jnp.zeros_like(scores).at[order].set(prob_sorted)


def top_k_f1(
  scores: jax.typing.ArrayLike,
  labels: jax.typing.ArrayLike,
  *,
  k: jax.typing.ArrayLike | None = None,
  tie_tol: float = 1e-12,
) -> jax.Array:
  """Expected top-``k`` F1 under uniformly random tie-breaking (exact; the paper's headline metric).

  The method selects the ``k`` best-scored agents (``k = |C|``, the true core size, by default:
  the paper's oracle-size conversion). With ``TP`` true positives among them,
  ``F1 = 2 TP / (k + |C|)`` is linear in ``TP``, so its expectation over random tie orders is
  ``2 E[TP] / (k + |C|)`` with ``E[TP] = sum_{a in C} Pr(a selected)`` from
  :func:`top_k_selection_probability`.

  Args:
    scores: ``(n,)`` scores, larger is better.
    labels: ``(n,)`` bool (or 0/1) true membership ``C``.
    k: selected set size; default ``|C|`` (may be traced).
    tie_tol: tie tolerance (see the module docstring).

  Returns:
    Scalar expected F1 in ``[0, 1]``; ``0`` when ``k + |C| = 0``.

  Examples:
    >>> import jax.numpy as jnp
    >>> # the two tied agents share one slot: E[TP] = 1 + 1/2.
    >>> float(top_k_f1(jnp.array([0.9, 0.5, 0.5, 0.1]), jnp.array([1, 1, 0, 0])))
    0.75
  """
  scores, labels = _scores_labels(scores, labels)
  return _top_k_f1_kernel(scores, labels, k, tie_tol=float(tie_tol))


@functools.partial(jax.jit, static_argnames=("tie_tol",))
def _top_k_f1_kernel(scores, labels, k, *, tie_tol):
  num_pos = jnp.sum(labels).astype(scores.dtype)
  k = num_pos if k is None else jnp.asarray(k).astype(scores.dtype)
  prob = _selection_probability_kernel(scores, k, tie_tol=tie_tol)
  tp = jnp.sum(jnp.where(labels, prob, jnp.zeros_like(prob)))
  return _safe_div(2 * tp, k + num_pos, 0.0)


def jittered_top_k_f1(
  key: jax.Array,
  scores: jax.typing.ArrayLike,
  labels: jax.typing.ArrayLike,
  *,
  k: jax.typing.ArrayLike | None = None,
  num_repeats: int = 100,
  jitter: float = 0.0,
) -> jax.Array:
  """Monte Carlo top-``k`` F1: random tie-breaking by jitter, averaged over repeats.

  Each repeat draws ``u ~ U(0, 1)^n``, sorts agents by ``scores + jitter * u`` (decreasing) and
  then by ``u``, so exact ties are always broken uniformly at random even when ``jitter`` is below
  the dtype's resolution, and takes the top ``k``. With ``jitter = 0`` the average converges to
  :func:`top_k_f1` with exact ties (``tie_tol = 0``); a positive ``jitter`` (the paper's "small
  jitters", e.g. ``1e-9`` in float64) also reorders scores closer than about ``jitter``.

  Args:
    key: a typed PRNG key (``jax.random.key``).
    scores: ``(n,)`` scores.
    labels: ``(n,)`` bool (or 0/1) true membership.
    k: selected set size; default ``|C|``.
    num_repeats: number of random tie-breaks averaged (static).
    jitter: jitter amplitude ``>= 0``.

  Returns:
    Scalar mean F1 over the repeats.

  Examples:
    >>> import jax, jax.numpy as jnp
    >>> from ste_jax.stats import jittered_top_k_f1
    >>> scores, labels = jnp.array([0.9, 0.9, 0.1]), jnp.array([1, 0, 0])  # a tie at the cut
    >>> round(float(jittered_top_k_f1(jax.random.key(0), scores, labels, k=1)), 1)
    0.5
  """
  scores, labels = _scores_labels(scores, labels)
  if int(num_repeats) < 1:
    raise ValueError(f"num_repeats must be >= 1, got {num_repeats!r}.")
  return _jittered_top_k_f1_kernel(key, scores, labels, k, jitter, num_repeats=int(num_repeats))


@functools.partial(jax.jit, static_argnames=("num_repeats",))
def _jittered_top_k_f1_kernel(key, scores, labels, k, jitter, *, num_repeats):
  n = scores.shape[0]
  num_pos = jnp.sum(labels).astype(scores.dtype)
  k = num_pos if k is None else jnp.asarray(k).astype(scores.dtype)
  jitter = jnp.asarray(jitter).astype(scores.dtype)
  keys = jax.random.split(key, num_repeats)

  def one(key_r):
    u = jax.random.uniform(key_r, (n,), dtype=scores.dtype)
    perturbed = scores + jitter * u
    order = jnp.lexsort((-u, -perturbed))
    rank = jnp.zeros((n,), jnp.int32).at[order].set(jnp.arange(n, dtype=jnp.int32))
    selected = rank.astype(scores.dtype) < k
    tp = jnp.sum(selected & labels).astype(scores.dtype)
    return _safe_div(2 * tp, k + num_pos, 0.0)

  return jnp.mean(jax.vmap(one)(keys))


def auroc(
  scores: jax.typing.ArrayLike, labels: jax.typing.ArrayLike, *, tie_tol: float = 1e-12
) -> jax.Array:
  r"""Area under the ROC curve with tied scores counted ``1/2``.

  .. math::
    \mathrm{AUROC} = \frac{1}{|C| |\bar C|} \sum_{a \in C, b \notin C}
      \big([s_a > s_b] + \tfrac12 [s_a \approx s_b]\big),

  computed from midranks in ``O(n log n)`` (the Mann–Whitney statistic). Equals the expectation of
  the tie-free AUROC under random tie-breaking.

  Args:
    scores: ``(n,)`` scores.
    labels: ``(n,)`` bool (or 0/1) membership.
    tie_tol: tie tolerance (see the module docstring).

  Returns:
    Scalar in ``[0, 1]``; NaN when all labels are equal (AUROC is undefined).

  Examples:
    >>> import jax.numpy as jnp
    >>> float(auroc(jnp.array([0.9, 0.5, 0.5, 0.1]), jnp.array([1, 1, 0, 0])))
    0.875
  """
  scores, labels = _scores_labels(scores, labels)
  return _auroc_kernel(scores, labels, tie_tol=float(tie_tol))


@functools.partial(jax.jit, static_argnames=("tie_tol",))
def _auroc_kernel(scores, labels, *, tie_tol):
  n = scores.shape[0]
  dtype = scores.dtype
  order, start, end = _tie_groups(scores, tie_tol)
  # ascending 1-based midrank of the group at decreasing position t is n - (start + end) / 2.
  midrank_sorted = n - 0.5 * (start + end).astype(dtype)
  pos_sorted = labels[order]
  num_pos = jnp.sum(labels).astype(dtype)
  num_neg = n - num_pos
  rank_sum = jnp.sum(jnp.where(pos_sorted, midrank_sorted, jnp.zeros_like(midrank_sorted)))
  u_stat = rank_sum - num_pos * (num_pos + 1) / 2
  return _safe_div(u_stat, num_pos * num_neg, jnp.nan)


def average_precision(
  scores: jax.typing.ArrayLike, labels: jax.typing.ArrayLike, *, tie_tol: float = 1e-12
) -> jax.Array:
  r"""Average precision (AUPRC) in expectation over uniformly random orders within tie groups.

  Without ties this is ``(1/|C|) sum_{a in C} precision@rank(a)``, scikit-learn's
  ``average_precision_score``. For a positive in a tie group of size ``g`` with ``q`` positives,
  ``A`` agents and ``p`` positives strictly above it, its position ``J`` in the group is uniform
  on ``1..g`` and, given ``J``, the number of other positives before it is hypergeometric with mean
  ``(J - 1)(q - 1)/(g - 1)``; precision is linear in that count, so

  .. math::
    \mathbb E[\mathrm{AP}] = \frac{1}{|C|} \sum_{G} \frac{q_G}{g_G} \sum_{J=1}^{g_G}
      \frac{p_G + 1 + (J-1)(q_G-1)/(g_G-1)}{A_G + J}

  exactly. (scikit-learn instead treats a tie group as one threshold, which is not an
  expectation over orders.)

  Args:
    scores: ``(n,)`` scores.
    labels: ``(n,)`` bool (or 0/1) membership.
    tie_tol: tie tolerance (see the module docstring).

  Returns:
    Scalar in ``[0, 1]``; NaN when there is no positive.

  Examples:
    >>> import jax.numpy as jnp
    >>> round(float(average_precision(jnp.array([0.9, 0.1, 0.5]), jnp.array([1, 1, 0]))), 6)
    0.833333
  """
  scores, labels = _scores_labels(scores, labels)
  return _average_precision_kernel(scores, labels, tie_tol=float(tie_tol))


@functools.partial(jax.jit, static_argnames=("tie_tol",))
def _average_precision_kernel(scores, labels, *, tie_tol):
  n = scores.shape[0]
  dtype = scores.dtype
  order, start, end = _tie_groups(scores, tie_tol)
  pos_sorted = labels[order].astype(dtype)
  cum = jnp.concatenate([jnp.zeros((1,), dtype), jnp.cumsum(pos_sorted)])  # cum[t] = # pos before t
  pos_above = cum[start]
  q = cum[end + 1] - cum[start]
  g = (end - start + 1).astype(dtype)
  t = jnp.arange(n, dtype=dtype)
  j_minus_1 = t - start.astype(dtype)
  others_before = j_minus_1 * _safe_div(q - 1, g - 1, 0.0)
  term = (pos_above + 1 + others_before) / (t + 1)
  total = jnp.sum(q / g * term)
  return _safe_div(total, jnp.sum(pos_sorted), jnp.nan)


def threshold_f1(
  scores: jax.typing.ArrayLike, labels: jax.typing.ArrayLike, *, threshold: float = 0.5
) -> jax.Array:
  """F1 of the set ``{a : scores[a] > threshold}`` (the paper's fixed-threshold calibration check).

  Args:
    scores: ``(n,)`` scores (membership strengths).
    labels: ``(n,)`` bool (or 0/1) membership.
    threshold: strict threshold (``0.5`` in the paper).

  Returns:
    Scalar F1 ``2 TP / (|pred| + |C|)``; ``0`` when both sets are empty (scikit-learn's
    ``zero_division=0``).

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.stats import threshold_f1
    >>> float(threshold_f1(jnp.array([0.9, 0.4, 0.6]), jnp.array([1, 1, 0])))  # 1 TP, 1 FP, 1 FN
    0.5
  """
  scores, labels = _scores_labels(scores, labels)
  return _threshold_f1_kernel(scores, labels, threshold)


@jax.jit
def _threshold_f1_kernel(scores, labels, threshold):
  pred = scores > threshold
  dtype = scores.dtype
  tp = jnp.sum(pred & labels).astype(dtype)
  den = (jnp.sum(pred) + jnp.sum(labels)).astype(dtype)
  return _safe_div(2 * tp, den, 0.0)


def expected_calibration_error(
  probs: jax.typing.ArrayLike, labels: jax.typing.ArrayLike, *, num_bins: int = 10
) -> jax.Array:
  r"""Binned expected calibration error of predicted membership probabilities.

  .. math::
    \mathrm{ECE} = \sum_{b=1}^{B} \frac{n_b}{n} \big|\bar y_b - \bar p_b\big|
      = \frac1n \sum_b \Big|\sum_{i \in b} (y_i - p_i)\Big|

  with ``B`` equal-width bins ``[0, 1/B), ..., [(B-1)/B, 1]`` (values outside ``[0, 1]`` go to the
  end bins); empty bins contribute nothing.

  Args:
    probs: ``(n,)`` predicted probabilities.
    labels: ``(n,)`` bool (or 0/1) outcomes.
    num_bins: ``B`` (static).

  Returns:
    Scalar in ``[0, 1]``.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.stats import expected_calibration_error
    >>> probs, labels = jnp.array([0.9, 0.8, 0.3, 0.1]), jnp.array([1, 1, 0, 1])
    >>> round(float(expected_calibration_error(probs, labels, num_bins=2)), 3)  # (0.3 + 0.15) / 2
    0.225
  """
  probs, labels = _scores_labels(probs, labels)
  num_bins = validate_int(num_bins, "num_bins")
  return _expected_calibration_error_kernel(probs, labels, num_bins=num_bins)


@functools.partial(jax.jit, static_argnames=("num_bins",))
def _expected_calibration_error_kernel(probs, labels, *, num_bins):
  return binned_calibration_error(
    probs, labels.astype(probs.dtype), jnp.ones_like(probs), num_bins=num_bins
  )


def calibration_bins(probs: jax.Array, num_bins: int) -> jax.Array:
  """The bin (int32) of each probability among ``num_bins`` equal-width bins of ``[0, 1]``.

  Bins are ``[0, 1/B), ..., [(B-1)/B, 1]``; values outside ``[0, 1]`` go to the end bins. The
  assignment is piecewise constant, so it carries no gradient (``stop_gradient``).
  """
  return jnp.clip(jnp.floor(lax.stop_gradient(probs) * num_bins), 0, num_bins - 1).astype(jnp.int32)


def binned_calibration_error(
  probs: jax.Array, targets: jax.Array, weight: jax.Array, *, num_bins: int
) -> jax.Array:
  r"""The one binned ECE kernel of the package (weighted, differentiable in ``probs``).

  .. math::
    \frac{1}{\sum_i w_i} \sum_{b=1}^{B} \Big|\sum_{i \in b} w_i (y_i - p_i)\Big|

  over the bins of :func:`calibration_bins`; ``0`` when all weights are zero. Used by
  :func:`expected_calibration_error` (unit weights, 0/1 labels),
  :func:`ste_jax.training.calibration_regularizer` (paper §4.1, a loss term) and
  :func:`ste_jax.training.reliability_diagram`.

  Args:
    probs: ``(m,)`` predicted probabilities ``p`` (floating).
    targets: ``(m,)`` outcomes ``y`` in ``[0, 1]``, ``probs``' dtype.
    weight: ``(m,)`` weights ``w >= 0``, ``probs``' dtype.
    num_bins: ``B`` (static).

  Returns:
    Scalar in ``[0, 1]``.
  """
  gap = jax.ops.segment_sum(
    weight * (targets - probs), calibration_bins(probs, num_bins), num_segments=num_bins
  )
  total = jnp.sum(weight)
  positive = total > 0
  return jnp.where(
    positive, jnp.sum(jnp.abs(gap)) / jnp.where(positive, total, jnp.ones_like(total)), 0.0
  )


def jaccard(mask_a: jax.typing.ArrayLike, mask_b: jax.typing.ArrayLike) -> jax.Array:
  """Jaccard index ``|A & B| / |A | B|`` of two boolean (or 0/1) masks.

  Args:
    mask_a: ``(n,)`` mask.
    mask_b: ``(n,)`` mask.

  Returns:
    Scalar in ``[0, 1]`` in the default float dtype; ``1`` when both sets are empty.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.stats import jaccard
    >>> round(float(jaccard(jnp.array([True, True, False]), jnp.array([True, False, True]))), 3)
    0.333
  """
  a = jnp.asarray(mask_a)
  b = jnp.asarray(mask_b)
  if a.shape != b.shape:
    raise ValueError(f"mask_a and mask_b must have the same shape; got {a.shape} and {b.shape}.")
  a = a if a.dtype == jnp.bool_ else a != jnp.zeros((), a.dtype)
  b = b if b.dtype == jnp.bool_ else b != jnp.zeros((), b.dtype)
  dtype = default_float_dtype()
  inter = jnp.sum(a & b).astype(dtype)
  union = jnp.sum(a | b).astype(dtype)
  return _safe_div(inter, union, 1.0)


def score_gap(scores: jax.typing.ArrayLike, labels: jax.typing.ArrayLike) -> jax.Array:
  """Mean score over ``C`` minus mean score over the rest (the paper's Table 2 "TC gap").

  Args:
    scores: ``(n,)`` scores.
    labels: ``(n,)`` bool (or 0/1) membership.

  Returns:
    Scalar; NaN if ``C`` or its complement is empty.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.stats import score_gap
    >>> round(float(score_gap(jnp.array([0.9, 0.7, 0.2]), jnp.array([1, 1, 0]))), 2)  # 0.8 - 0.2
    0.6
  """
  scores, labels = _scores_labels(scores, labels)
  return _score_gap_kernel(scores, labels)


@jax.jit
def _score_gap_kernel(scores, labels):
  zeros = jnp.zeros_like(scores)
  num_pos = jnp.sum(labels).astype(scores.dtype)
  num_neg = scores.shape[0] - num_pos
  mean_in = _safe_div(jnp.sum(jnp.where(labels, scores, zeros)), num_pos, jnp.nan)
  mean_out = _safe_div(jnp.sum(jnp.where(labels, zeros, scores)), num_neg, jnp.nan)
  return mean_in - mean_out
