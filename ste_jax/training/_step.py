"""The pure, jit-compiled train step (paper Algorithm ``ste_training``, one inner iteration).

Built on the functional NNX API and optax directly (no ``nnx.Optimizer``)::

  graphdef, params, rest = nnx.split(model, nnx.Param, ...)
  opt_state = tx.init(params)
  step = make_train_step(graphdef, tx, loss_fn=make_ste_loss(...), schedule=..., rest=rest)
  for t in range(num_steps):
    params, opt_state, metrics = step(params, opt_state, batch, t)
  nnx.update(model, params)

Temperatures are computed *inside* the step from the step counter, so they are traced values:
neither a second call nor a new step (hence a new temperature) recompiles.
"""

from collections.abc import Callable
from typing import Any

from flax import nnx
import jax
import jax.numpy as jnp
import optax

from ste_jax.models._tournament import marginal_tournament, pairwise_logits
from ste_jax.ops import ste_scores
from ste_jax.training._losses import pairwise_cross_entropy, ste_objective
from ste_jax.training._schedules import Temperatures, temperature_schedule

LossFn = Callable[[Any, Any, Temperatures], tuple[jax.Array, dict]]

_SCORES = ("top_cycle", "uncovered")


def _global_norm(tree) -> jax.Array:
  """L2 norm of all leaves (``optax.global_norm`` is deprecated, ``optax.tree.norm`` is recent)."""
  return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree)))


def make_ste_loss(
  *,
  context_features: jax.typing.ArrayLike | None = None,
  context_weights: jax.typing.ArrayLike | None = None,
  sharpness_weight: jax.typing.ArrayLike = 0.0,
  sharpness_score: str = "top_cycle",
  calibration_weight: jax.typing.ArrayLike = 0.0,
  membership: jax.typing.ArrayLike | None = None,
  num_bins: int = 10,
  max_path_length: int | None = None,
  reach_gamma: jax.typing.ArrayLike | None = None,
  num_agents: int | None = None,
) -> LossFn:
  """The default loss of the train step: Eq. ``full_objective`` on a minibatch.

  For a batch ``(a, b, x, y)`` (Algorithm ``ste_training``): the pairwise log-loss of the batch
  (Eq. ``cross_entropy_loss``); if a regularizer is on, the marginal tournament ``P`` over the
  context set (Eq. ``marginal_tournament``), its STE scores at the current temperatures
  (:func:`~ste_jax.ste_scores`) and the sharpness / calibration terms on ``t`` or ``u``.

  Args:
    context_features: ``(num_contexts, d)`` feature table indexed by ``Comparisons.context``;
      ``None`` for a model without context features. Also the context set ``Q`` of the marginal
      tournament.
    context_weights: ``(num_contexts,)`` weights of ``Q``; ``None`` means uniform.
    sharpness_weight: ``lambda_s``; ``0`` skips the tournament entirely (plain log-loss training).
    sharpness_score: ``"top_cycle"`` (``t``) or ``"uncovered"`` (``u``).
    calibration_weight: ``lambda_c``; needs ``membership``.
    membership: ``(n,)`` membership labels in ``[0, 1]`` (synthetic ground truth, bootstrap
      inclusion frequencies).
    num_bins: bins of the calibration term.
    max_path_length: ``K`` of the reachability (static); ``None`` means ``n - 1``.
    reach_gamma: smooth max-min temperature of the reachability. ``None`` (default) follows the
      softmin temperature ``gamma`` of the schedule: the smoothed operators of the paper's §3, which
      its end-to-end training uses (§6.1: "End-to-end differentiable training uses the smoothed
      operators"); their memory is ``O(n^3)`` per path-length step. ``0.0``: the exact max-min
      closure (``O(n^2)`` memory, subgradients through the bottleneck edges; the paper's
      planted-core evaluation), the choice for large ``n``.
    num_agents: ``n``; default ``model.num_agents``.

  Returns:
    ``loss_fn(model, batch, temperatures) -> (loss, metrics)`` with scalar metrics
    ``cross_entropy``, ``sharpness`` and ``calibration``.

  Examples:
    >>> import numpy as np
    >>> from flax import nnx
    >>> from ste_jax.data import Comparisons
    >>> from ste_jax.models import BradleyTerryLogit
    >>> c = Comparisons.from_arrays(
    ...   np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 1.0, 0.0])
    ... )
    >>> model = BradleyTerryLogit(3, rngs=nnx.Rngs(0))
    >>> import jax.numpy as jnp
    >>> from ste_jax.training import Temperatures, make_ste_loss
    >>> loss_fn = make_ste_loss(sharpness_weight=0.1)
    >>> loss, terms = loss_fn(model, c, Temperatures(tau=0.1, gamma=0.1, gamma_c=0.1))
    >>> bool(jnp.isclose(loss, terms["cross_entropy"] + 0.1 * terms["sharpness"]))
    True
  """
  if sharpness_score not in _SCORES:
    raise ValueError(f"sharpness_score must be one of {_SCORES}, got {sharpness_score!r}.")
  for name, lam in (
    ("sharpness_weight", sharpness_weight),
    ("calibration_weight", calibration_weight),
  ):
    if not float(lam) >= 0:
      raise ValueError(f"{name} must be >= 0, got {lam!r}.")
  if float(calibration_weight) > 0 and membership is None:
    raise ValueError("calibration_weight > 0 needs membership labels (membership=).")
  use_scores = float(sharpness_weight) > 0 or float(calibration_weight) > 0

  def loss_fn(model, batch, temperatures: Temperatures):
    logits = pairwise_logits(model, batch, context_features=context_features)
    scores = None
    if use_scores:
      P = marginal_tournament(
        model, contexts=context_features, weights=context_weights, num_agents=num_agents
      )
      rg = temperatures.gamma if reach_gamma is None else reach_gamma
      s = ste_scores(
        P,
        tau=temperatures.tau,
        gamma=temperatures.gamma,
        gamma_c=temperatures.gamma_c,
        max_path_length=max_path_length,
        reach_gamma=rg,
      )
      scores = getattr(s, sharpness_score)
    terms = ste_objective(
      logits,
      batch.outcome,
      batch.weight,
      scores=scores,
      membership=membership if use_scores else None,
      sharpness_weight=sharpness_weight,
      calibration_weight=calibration_weight,
      num_bins=num_bins,
    )
    metrics = {
      "cross_entropy": terms.cross_entropy,
      "sharpness": terms.sharpness,
      "calibration": terms.calibration,
    }
    return terms.total, metrics

  return loss_fn


def make_train_step(
  graphdef: nnx.GraphDef,
  tx: optax.GradientTransformation,
  *,
  loss_fn: LossFn | None = None,
  schedule: Callable[[jax.typing.ArrayLike], Temperatures] | None = None,
  rest: nnx.State | None = None,
) -> Callable[
  [nnx.State, optax.OptState, Any, jax.typing.ArrayLike],
  tuple[nnx.State, optax.OptState, dict[str, jax.Array]],
]:
  """A pure, jit-compiled train step.

  ``(params, opt_state, batch, step) -> (params, opt_state, metrics)``.

  Inside: ``nnx.merge(graphdef, params, rest)``, the loss and its gradient w.r.t. ``params``,
  ``tx.update`` and :func:`optax.apply_updates`. Nothing is mutated; the caller calls
  ``nnx.update(model, params)`` when done.

  Static versus traced: ``graphdef``, ``tx``, ``loss_fn`` and ``schedule`` are fixed when the step
  is made; ``params``, ``opt_state``, ``batch`` and ``step`` are traced, and the temperatures are
  computed from ``step`` inside the compiled function. So calling again, with a new step and
  hence new temperatures, does not recompile (as long as shapes and dtypes stay the same: keep
  the batch size fixed).

  Args:
    graphdef: from ``nnx.split(model, nnx.Param, ...)``.
    tx: an optax gradient transformation (e.g. ``optax.adam(1e-2)``).
    loss_fn: ``loss_fn(model, batch, temperatures) -> (scalar loss, dict of scalar metrics)``;
      default :func:`make_ste_loss` ``()`` (plain log-loss). A user's loss may call any method of
      the merged model, e.g. one that calls :func:`~ste_jax.ste_scores`.
    schedule: ``step -> Temperatures`` (see :func:`temperature_schedule`); default constant
      ``tau = gamma = gamma_c = 0.05``.
    rest: the non-parameter state from ``nnx.split`` (the ``...`` part), or ``None`` when empty.
      It is read-only inside the step (a constant of the compiled function), so modules with
      mutable non-parameter state (batch statistics, dropout RNG counters) are not supported.

  Returns:
    The jitted step. ``batch`` is any pytree ``loss_fn`` understands (a
    :class:`~ste_jax.data.Comparisons` for the default loss); ``step`` is an integer scalar (pass
    it consistently as a Python ``int``, or consistently as an int32 array: switching between the
    two changes the abstract signature and compiles once more). The
    metrics are the loss's metrics plus ``loss``, ``grad_norm``, ``tau``, ``gamma`` and
    ``gamma_c``.

  Examples:
    >>> import numpy as np
    >>> from flax import nnx
    >>> from ste_jax.data import Comparisons
    >>> from ste_jax.models import BradleyTerryLogit
    >>> c = Comparisons.from_arrays(
    ...   np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 1.0, 0.0])
    ... )
    >>> model = BradleyTerryLogit(3, rngs=nnx.Rngs(0))
    >>> import optax
    >>> from ste_jax.training import make_log_loss_fn, make_train_step
    >>> graphdef, params = nnx.split(model, nnx.Param)
    >>> tx = optax.adam(0.1)
    >>> step = make_train_step(graphdef, tx)
    >>> new_params, opt_state, metrics = step(params, tx.init(params), c, 0)
    >>> log_loss = make_log_loss_fn(graphdef)
    >>> bool(log_loss(new_params, c) < log_loss(params, c))
    True
  """
  loss_fn = make_ste_loss() if loss_fn is None else loss_fn
  schedule = temperature_schedule(0.05) if schedule is None else schedule
  extra = () if rest is None else (rest,)

  def objective(params, batch, temperatures):
    model = nnx.merge(graphdef, params, *extra)
    return loss_fn(model, batch, temperatures)

  def train_step(params, opt_state, batch, step):
    temperatures = schedule(step)
    (loss, metrics), grads = jax.value_and_grad(objective, has_aux=True)(
      params, batch, temperatures
    )
    # Optax's internals rely on standard promotion (e.g. Adam's bias correction computes
    # `python_float ** int32_count`), which fails under `jax_numpy_dtype_promotion="strict"`. Our
    # own math above runs under the caller's setting; only the optimizer update is scoped to
    # "standard" (a trace-time context, it does not leak out of the step).
    with jax.numpy_dtype_promotion("standard"):
      updates, opt_state = tx.update(grads, opt_state, params)
      params = optax.apply_updates(params, updates)
    metrics = dict(metrics)
    metrics.update(
      loss=loss,
      grad_norm=_global_norm(grads),
      tau=temperatures.tau,
      gamma=temperatures.gamma,
      gamma_c=temperatures.gamma_c,
    )
    return params, opt_state, metrics

  return jax.jit(train_step)


def make_log_loss_fn(
  graphdef: nnx.GraphDef,
  *,
  context_features: jax.typing.ArrayLike | None = None,
  rest: nnx.State | None = None,
) -> Callable[[nnx.State, Any], jax.Array]:
  """A jitted ``(params, comparisons) -> scalar`` weighted pairwise log-loss (for held-out data).

  Eq. ``cross_entropy_loss`` of the model ``nnx.merge(graphdef, params, rest)`` on every row.

  Args:
    graphdef: the model's graph definition, from ``nnx.split(model, nnx.Param, ...)``.
    context_features: ``(num_contexts, d)`` feature table indexed by ``Comparisons.context``;
      ``None`` for a model without context features.
    rest: the model's non-parameter state from the same split, or ``None``.

  Returns:
    A jitted function of ``(params, comparisons)``, the latter a
    :class:`~ste_jax.data.Comparisons` with ``m`` rows, returning the scalar weighted mean
    log-loss.

  Examples:
    >>> import numpy as np
    >>> from flax import nnx
    >>> from ste_jax.data import Comparisons
    >>> from ste_jax.models import BradleyTerryLogit
    >>> c = Comparisons.from_arrays(
    ...   np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 1.0, 0.0])
    ... )
    >>> graphdef, params = nnx.split(BradleyTerryLogit(3, rngs=nnx.Rngs(0)), nnx.Param)
    >>> make_log_loss_fn(graphdef)(params, c).shape
    ()
  """
  extra = () if rest is None else (rest,)

  def log_loss(params, comparisons):
    model = nnx.merge(graphdef, params, *extra)
    logits = pairwise_logits(model, comparisons, context_features=context_features)
    return pairwise_cross_entropy(logits, comparisons.outcome, comparisons.weight)

  return jax.jit(log_loss)
