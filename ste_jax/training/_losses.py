"""Training losses (paper §4.1 and §4.5): Eqs. ``cross_entropy_loss``, ``sharpness_regularizer``,
the ECE-style calibration term and Eq. ``full_objective``.

All functions are pure, work under ``jit``/``grad``/``vmap`` and follow the dtype of their first
floating argument (float32 by default, float64 under x64); other inputs are cast to it explicitly.
"""

import jax
import jax.numpy as jnp

from ste_jax._checks import as_float_array
from ste_jax._results import result_type
from ste_jax._validation import validate_int
from ste_jax.stats._metrics import binned_calibration_error


def _safe_weighted_mean(values, weight):
  """``sum(w v) / sum(w)``, and ``0`` (with zero gradient, no NaN) when ``sum(w) = 0``."""
  total = jnp.sum(weight)
  positive = total > 0
  return jnp.where(positive, jnp.sum(weight * values) / jnp.where(positive, total, 1.0), 0.0)


def _like(x, ref: jax.Array, name: str) -> jax.Array:
  x = jnp.asarray(x)
  if x.shape != ref.shape:
    raise ValueError(
      f"{name} must have the shape of the logits {tuple(ref.shape)}; got {tuple(x.shape)}."
    )
  return x.astype(ref.dtype)


def pairwise_cross_entropy(
  logits: jax.typing.ArrayLike,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike | None = None,
) -> jax.Array:
  r"""Weighted binary cross-entropy on pairwise logits (paper Eq. ``cross_entropy_loss``).

  .. math::
    \mathcal{L}_{\mathrm{CE}} = -\frac{\sum_i w_i \big[y_i \log\sigma(h_i)
      + (1 - y_i)\log\sigma(-h_i)\big]}{\sum_i w_i}

  computed with ``log_sigmoid`` (no ``log(1 - sigmoid)``), so it is finite and has finite
  gradients for any finite logit. A tie is ``y = 1/2``; fractional outcomes are allowed.

  Args:
    logits: ``(m,)`` (any shape) logits ``h`` with ``P(a > b) = sigmoid(h)``.
    outcome: same shape, ``y`` in ``[0, 1]`` (1 = ``a`` won, 0 = ``b`` won, 1/2 = tie).
    weight: same shape, ``>= 0`` row weights; ``None`` means ones.

  Returns:
    Scalar weighted mean log-loss (natural log); ``0`` when all weights are zero.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import pairwise_cross_entropy
    >>> loss = pairwise_cross_entropy(jnp.array([0.0, 2.0]), jnp.array([1.0, 1.0]))
    >>> round(float(loss), 4)  # (log 2 + log(1 + e^-2)) / 2
    0.41
  """
  logits = as_float_array(logits, "logits")
  y = _like(outcome, logits, "outcome")
  per_row = -(y * jax.nn.log_sigmoid(logits) + (1.0 - y) * jax.nn.log_sigmoid(-logits))
  if weight is None:
    return jnp.mean(per_row)
  return _safe_weighted_mean(per_row, _like(weight, logits, "weight"))


def sharpness_regularizer(scores: jax.typing.ArrayLike, *, eps: float | None = None) -> jax.Array:
  r"""Mean binary entropy of membership scores (paper Eq. ``sharpness_regularizer``).

  .. math::
    \mathcal{R}_{\mathrm{sharp}} = \frac{1}{n}\sum_a \big[-s(a)\log(s(a) + \epsilon)
      - (1 - s(a))\log(1 - s(a) + \epsilon)\big]

  ``s`` is ``t_tau`` or ``u_tau`` (e.g. a field of :func:`~ste_jax.ste_scores`). The term is
  largest (``log 2``) at ``s = 1/2`` and ``0`` at ``s`` in ``{0, 1}``; minimizing it sharpens the
  scores. Use it cautiously: too much weight gives overconfident cores under sparse data.

  Args:
    scores: ``(..., n)`` scores in ``[0, 1]``.
    eps: ``epsilon > 0``; default the dtype's machine epsilon. Finite values and gradients at
      ``s`` in ``{0, 1}``.

  Returns:
    ``(...)`` mean entropy over the last axis.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import sharpness_regularizer
    >>> round(float(sharpness_regularizer(jnp.array([0.0, 0.5, 1.0]))), 4)  # log(2) / 3
    0.231
  """
  s = as_float_array(scores, "scores")
  eps = jnp.finfo(s.dtype).eps if eps is None else eps
  tiny = jnp.finfo(s.dtype).tiny
  # maximum(., tiny) keeps the log finite if rounding pushes a score a hair above 1.
  ent = -(
    s * jnp.log(jnp.maximum(s + eps, tiny)) + (1.0 - s) * jnp.log(jnp.maximum(1.0 - s + eps, tiny))
  )
  return jnp.mean(ent, axis=-1)


def calibration_regularizer(
  scores: jax.typing.ArrayLike,
  labels: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike | None = None,
  *,
  num_bins: int = 10,
) -> jax.Array:
  r"""Expected-calibration-error term :math:`\mathcal{R}_{\mathrm{calib}}` (paper §4.1).

  .. math::
    \mathcal{R}_{\mathrm{calib}} = \sum_{m=1}^{M} \frac{|B_m|}{N}\,
      \big|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)\big|
      = \frac{1}{\sum_i w_i} \sum_m \Big|\sum_{i \in B_m} w_i (y_i - s_i)\Big|

  over ``M`` equal-width bins of ``[0, 1]``. The bin assignment is piecewise constant (no gradient);
  the gradient flows through the scores inside each bin. Use it only where membership labels (or
  targets such as bootstrap inclusion frequencies) exist, e.g. in synthetic experiments; with 0/1
  labels and unit weights it equals :func:`ste_jax.stats.expected_calibration_error`.

  Args:
    scores: predicted membership scores ``s`` in ``[0, 1]``, any shape (all entries are pooled).
    labels: same shape, targets ``y`` in ``[0, 1]`` (bool or float).
    weight: same shape, ``>= 0``; ``None`` means ones.
    num_bins: ``M`` (static).

  Returns:
    Scalar in ``[0, 1]``; ``0`` when all weights are zero.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import calibration_regularizer
    >>> scores, labels = jnp.array([0.9, 0.8, 0.3, 0.1]), jnp.array([1, 1, 0, 1])
    >>> round(float(calibration_regularizer(scores, labels, num_bins=2)), 3)  # (0.3 + 0.15) / 2
    0.225
  """
  s = as_float_array(scores, "scores")
  num_bins = validate_int(num_bins, "num_bins")
  y = _like(labels, s, "labels").reshape(-1)
  w = jnp.ones_like(y) if weight is None else _like(weight, s, "weight").reshape(-1)
  s = s.reshape(-1)
  return binned_calibration_error(s, y, w, num_bins=num_bins)


@result_type
class ObjectiveTerms:
  """The terms of Eq. ``full_objective`` (all scalars).

  Attributes:
    total: ``L_CE + lambda_s R_sharp + lambda_c R_calib``.
    cross_entropy: ``L_CE``.
    sharpness: ``R_sharp`` (``0`` when no scores were given).
    calibration: ``R_calib`` (``0`` when no scores or labels were given).
  """

  total: jax.Array
  cross_entropy: jax.Array
  sharpness: jax.Array
  calibration: jax.Array


def ste_objective(
  logits: jax.typing.ArrayLike,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike | None = None,
  *,
  scores: jax.typing.ArrayLike | None = None,
  membership: jax.typing.ArrayLike | None = None,
  sharpness_weight: jax.typing.ArrayLike = 0.0,
  calibration_weight: jax.typing.ArrayLike = 0.0,
  num_bins: int = 10,
  eps: float | None = None,
) -> ObjectiveTerms:
  r"""The full STE training objective (paper Eq. ``full_objective``).

  .. math::
    \mathcal{L}(\theta) = \mathcal{L}_{\mathrm{CE}}(\theta) + \lambda_s \mathcal{R}_{\mathrm{sharp}}
      + \lambda_c \mathcal{R}_{\mathrm{calib}}

  Args:
    logits: ``(m,)`` pairwise logits of a batch.
    outcome: ``(m,)`` outcomes in ``[0, 1]`` (ties ``1/2``).
    weight: ``(m,)`` row weights or ``None``.
    scores: ``(n,)`` membership scores ``t_tau`` or ``u_tau`` of the model's marginal tournament
      (needed when ``sharpness_weight`` or ``calibration_weight`` is non-zero).
    membership: ``(n,)`` membership labels in ``[0, 1]`` for the calibration term.
    sharpness_weight: ``lambda_s`` (float or traced scalar).
    calibration_weight: ``lambda_c`` (float or traced scalar).
    num_bins: bins of the calibration term (static).
    eps: ``epsilon`` of the sharpness term.

  Returns:
    :class:`ObjectiveTerms`.

  Raises:
    ValueError: if a non-zero weight is given (as a Python number) without the inputs it needs.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import ste_objective
    >>> terms = ste_objective(jnp.array([0.0, 2.0]), jnp.array([1.0, 1.0]))
    >>> round(float(terms.total), 4), float(terms.sharpness)  # no regularizer: the log-loss
    (0.41, 0.0)
  """
  ce = pairwise_cross_entropy(logits, outcome, weight)
  zero = jnp.zeros((), ce.dtype)

  def nonzero(lam):
    return not (isinstance(lam, (int, float)) and lam == 0)

  if scores is None and (nonzero(sharpness_weight) or nonzero(calibration_weight)):
    raise ValueError("sharpness_weight / calibration_weight are non-zero but no scores were given.")
  if membership is None and nonzero(calibration_weight):
    raise ValueError("calibration_weight is non-zero but no membership labels were given.")
  sharp = (
    zero if scores is None else jnp.mean(sharpness_regularizer(scores, eps=eps)).astype(ce.dtype)
  )
  calib = zero
  if scores is not None and membership is not None:
    calib = calibration_regularizer(scores, membership, num_bins=num_bins).astype(ce.dtype)
  total = (
    ce
    + jnp.asarray(sharpness_weight).astype(ce.dtype) * sharp
    + jnp.asarray(calibration_weight).astype(ce.dtype) * calib
  )
  return ObjectiveTerms(total=total, cross_entropy=ce, sharpness=sharp, calibration=calib)
