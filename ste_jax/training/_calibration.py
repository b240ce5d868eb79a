"""Calibration of pairwise probabilities (paper §4.1, "Interpretation and Calibration of Scores").

Temperature scaling (Guo et al., 2017) fitted on held-out comparisons, and the data of a
reliability diagram. Scaling every logit by ``1 / T`` does not change any ``sign(h)``, hence no
majority edge ``P_ab > 1/2`` of a single context; it only makes the probabilities honest.
"""

import functools

from flax import nnx
import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array
from ste_jax._results import result_type
from ste_jax._validation import validate_int
from ste_jax.data import Comparisons
from ste_jax.models._tournament import pairwise_logits
from ste_jax.stats._metrics import binned_calibration_error, calibration_bins
from ste_jax.training._losses import pairwise_cross_entropy


@result_type
class ReliabilityDiagram:
  """Binned calibration data of predicted probabilities (for a reliability plot).

  Attributes:
    bin_edges: ``(B + 1,)`` equal-width edges ``0, 1/B, ..., 1``.
    confidence: ``(B,)`` weighted mean predicted probability per bin (NaN for an empty bin).
    accuracy: ``(B,)`` weighted mean outcome per bin (NaN for an empty bin).
    weight: ``(B,)`` total weight per bin.
    ece: scalar expected calibration error ``sum_b (w_b / W) |accuracy_b - confidence_b|``.
  """

  bin_edges: jax.Array
  confidence: jax.Array
  accuracy: jax.Array
  weight: jax.Array
  ece: jax.Array


def _vectors(values, outcome, weight, name: str):
  values = as_float_array(values, name)
  if values.ndim != 1:
    raise ValueError(f"{name} must be 1-D, got shape {tuple(values.shape)}.")
  y = jnp.asarray(outcome)
  if y.shape != values.shape:
    raise ValueError(f"outcome must have shape {tuple(values.shape)}, got {tuple(y.shape)}.")
  w = jnp.ones_like(values) if weight is None else jnp.asarray(weight)
  if w.shape != values.shape:
    raise ValueError(f"weight must have shape {tuple(values.shape)}, got {tuple(w.shape)}.")
  return values, y.astype(values.dtype), w.astype(values.dtype)


def reliability_diagram(
  probs: jax.typing.ArrayLike,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike | None = None,
  *,
  num_bins: int = 10,
) -> ReliabilityDiagram:
  """Reliability-diagram data of pairwise win probabilities.

  Args:
    probs: ``(m,)`` predicted ``P(a > b)``.
    outcome: ``(m,)`` outcomes in ``[0, 1]`` (ties ``1/2``).
    weight: ``(m,)`` row weights, or ``None`` for ones.
    num_bins: ``B`` equal-width bins (static).

  Returns:
    :class:`ReliabilityDiagram`.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import reliability_diagram
    >>> probs, outcome = jnp.array([0.9, 0.8, 0.3, 0.1]), jnp.array([1.0, 1.0, 0.0, 1.0])
    >>> diagram = reliability_diagram(probs, outcome, num_bins=2)
    >>> [round(float(x), 2) for x in diagram.accuracy], round(float(diagram.ece), 3)
    ([0.5, 1.0], 0.225)
  """
  num_bins = validate_int(num_bins, "num_bins")
  p, y, w = _vectors(probs, outcome, weight, "probs")
  bins = calibration_bins(p, num_bins)
  count, conf_sum, acc_sum = (
    jax.ops.segment_sum(v, bins, num_segments=num_bins) for v in (w, w * p, w * y)
  )
  nonempty = count > 0
  safe = jnp.where(nonempty, count, 1.0)
  confidence = jnp.where(nonempty, conf_sum / safe, jnp.nan)
  accuracy = jnp.where(nonempty, acc_sum / safe, jnp.nan)
  ece = binned_calibration_error(p, y, w, num_bins=num_bins)
  edges = jnp.linspace(0.0, 1.0, num_bins + 1, dtype=p.dtype)
  return ReliabilityDiagram(
    bin_edges=edges, confidence=confidence, accuracy=accuracy, weight=count, ece=ece
  )


def fit_temperature(
  logits: jax.typing.ArrayLike,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike | None = None,
  *,
  num_iters: int = 50,
) -> jax.Array:
  r"""Temperature ``T > 0`` minimizing the weighted log-loss of ``sigmoid(h / T)``.

  The loss is convex in ``beta = 1 / T`` (the logits enter linearly), so ``num_iters`` safeguarded
  Newton steps on ``beta`` (each step kept within a factor 10 of the current value and ``beta`` in
  ``[1e-4, 1e4]``) converge from ``beta = 1``.

  Args:
    logits: ``(m,)`` held-out logits ``h``.
    outcome: ``(m,)`` outcomes in ``[0, 1]``.
    weight: ``(m,)`` weights or ``None``.
    num_iters: Newton iterations (static).

  Returns:
    Scalar ``T``; ``T > 1`` softens over-confident probabilities, ``T < 1`` sharpens them.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import fit_temperature
    >>> T = fit_temperature(jnp.full((4,), 2.0), jnp.array([1.0, 1.0, 1.0, 0.0]))
    >>> round(float(T), 3)  # sigmoid(2 / T) = 3/4, T = 2 / log(3)
    1.82
  """
  num_iters = validate_int(num_iters, "num_iters")
  h, y, w = _vectors(logits, outcome, weight, "logits")
  return _fit_temperature_kernel(h, y, w, num_iters=num_iters)


@functools.partial(jax.jit, static_argnames=("num_iters",))
def _fit_temperature_kernel(h, y, w, *, num_iters):
  w = w / jnp.maximum(jnp.sum(w), jnp.finfo(h.dtype).tiny)
  tiny = jnp.finfo(h.dtype).tiny

  def newton(_, beta):
    p = jax.nn.sigmoid(beta * h)
    grad = jnp.sum(w * (p - y) * h)
    hess = jnp.sum(w * p * (1.0 - p) * h * h)
    new = beta - grad / jnp.maximum(hess, tiny)
    new = jnp.clip(new, beta / 10.0, beta * 10.0)
    return jnp.clip(new, 1e-4, 1e4)

  beta = lax.fori_loop(0, num_iters, newton, jnp.ones((), h.dtype))
  return 1.0 / beta


@result_type
class TemperatureScaling:
  """Output of :func:`calibrate_temperature`.

  Attributes:
    temperature: fitted scalar ``T``; calibrated probabilities are ``sigmoid(h / T)``.
    log_loss_before: held-out log-loss at ``T = 1``.
    log_loss_after: held-out log-loss at the fitted ``T`` (never larger, up to rounding).
    before: :class:`ReliabilityDiagram` of the raw probabilities.
    after: :class:`ReliabilityDiagram` of the calibrated probabilities.
  """

  temperature: jax.Array
  log_loss_before: jax.Array
  log_loss_after: jax.Array
  before: ReliabilityDiagram
  after: ReliabilityDiagram


def calibrate_temperature(
  model: nnx.Module,
  heldout: Comparisons,
  *,
  context_features: jax.typing.ArrayLike | None = None,
  num_bins: int = 10,
) -> TemperatureScaling:
  """Fits temperature scaling of a pairwise model on held-out comparisons.

  Args:
    model: a pairwise model ``model(a, b, x) -> h``.
    heldout: held-out :class:`~ste_jax.data.Comparisons` (e.g. ``fit(...).heldout``).
    context_features: ``(num_contexts, d)`` feature table, as in :func:`~ste_jax.training.fit`.
    num_bins: bins of the reliability diagrams.

  Returns:
    :class:`TemperatureScaling`.

  Examples:
    >>> import numpy as np
    >>> from flax import nnx
    >>> from ste_jax.data import Comparisons
    >>> from ste_jax.models import BradleyTerryLogit
    >>> c = Comparisons.from_arrays(
    ...   np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 1.0, 0.0])
    ... )
    >>> model = BradleyTerryLogit(3, rngs=nnx.Rngs(0))
    >>> from ste_jax.training import calibrate_temperature
    >>> scaling = calibrate_temperature(model, c)
    >>> bool(scaling.log_loss_after <= scaling.log_loss_before)
    True
  """
  if heldout.num_comparisons < 1:
    raise ValueError("heldout is empty: temperature scaling needs held-out comparisons.")
  num_bins = validate_int(num_bins, "num_bins")
  table = None if context_features is None else as_float_array(context_features, "context_features")
  graphdef, state = nnx.split(model)
  return _calibrate_kernel(graphdef, state, heldout, table, num_bins=num_bins)


@functools.partial(jax.jit, static_argnames=("graphdef", "num_bins"))
def _calibrate_kernel(graphdef, state, heldout, table, *, num_bins):
  h = pairwise_logits(nnx.merge(graphdef, state), heldout, context_features=table)
  y, w = heldout.outcome.astype(h.dtype), heldout.weight.astype(h.dtype)
  T = _fit_temperature_kernel(h, y, w, num_iters=50)
  scaled = h / T
  return TemperatureScaling(
    temperature=T,
    log_loss_before=pairwise_cross_entropy(h, y, w),
    log_loss_after=pairwise_cross_entropy(scaled, y, w),
    before=reliability_diagram(jax.nn.sigmoid(h), y, w, num_bins=num_bins),
    after=reliability_diagram(jax.nn.sigmoid(scaled), y, w, num_bins=num_bins),
  )
