"""The eager training driver :func:`fit` (paper Algorithm ``ste_training``)."""

from collections.abc import Callable
import dataclasses
import difflib
import functools
import math
from typing import Any

from flax import nnx
import jax
from jax import lax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm import tqdm

from ste_jax._options import option, specs
from ste_jax._results import result_type
from ste_jax._validation import validate_int, validate_number
from ste_jax.data import Comparisons
from ste_jax.training._schedules import exponential_anneal, temperature_schedule
from ste_jax.training._step import make_log_loss_fn, make_ste_loss, make_train_step


@result_type
class FitHistory:
  """Training history, as arrays.

  Attributes:
    step: ``(S,)`` int32 indices of the steps run (``S <= num_steps``; fewer after early stopping).
    metrics: dict of ``(S,)`` arrays, one entry per metric of the train step: ``loss``,
      ``grad_norm``, ``tau``, ``gamma``, ``gamma_c`` and the loss's own metrics
      (``cross_entropy``, ``sharpness``, ``calibration`` for the default loss).
    eval_step: ``(E,)`` int32 number of steps done at each held-out evaluation.
    heldout_log_loss: ``(E,)`` held-out weighted log-loss at each evaluation (empty without
      held-out data).
  """

  step: jax.Array
  metrics: dict
  eval_step: jax.Array
  heldout_log_loss: jax.Array


@result_type
class FitResult:
  """Output of :func:`fit`.

  Attributes:
    model: the input module, updated in place with ``params``.
    params: the returned parameters (``nnx.State``): the best held-out ones when there is held-out
      data, else the last ones.
    history: :class:`FitHistory`.
    best_step: number of steps done when ``params`` were taken.
    stopped_early: ``True`` when early stopping ended training before ``num_steps``.
    train: the comparisons trained on.
    heldout: the held-out comparisons (given or split off), or ``None``; use them for
      :func:`~ste_jax.training.calibrate_temperature`.
  """

  model: Any
  params: Any
  history: FitHistory
  best_step: int
  stopped_early: bool
  train: Comparisons
  heldout: Comparisons | None


@functools.partial(jax.jit, static_argnames=("size",))
def _take_batch(data: Comparisons, perm: jax.Array, start: jax.Array, *, size: int) -> Comparisons:
  idx = lax.dynamic_slice_in_dim(perm, start, size)
  return jax.tree.map(lambda x: jnp.take(x, idx, axis=0), data)


def _subset(data: Comparisons, idx: np.ndarray) -> Comparisons:
  idx = jnp.asarray(idx, dtype=jnp.int32)
  return jax.tree.map(lambda x: jnp.take(x, idx, axis=0), data)


def _check_key(key) -> None:
  if not (
    isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and key.ndim == 0
  ):
    raise ValueError(
      "key must be a single typed PRNG key from jax.random.key(seed), got "
      f"{getattr(key, 'dtype', type(key))}."
    )


def _check_context_features(model, data: Comparisons, context_features):
  d_model = getattr(model, "num_context_features", None)
  if context_features is None:
    if d_model:
      raise ValueError(
        f"the model expects {d_model} context features: pass context_features of shape "
        f"({data.num_contexts}, {d_model}) (one row per context of the comparisons)."
      )
    return None
  table = jnp.asarray(context_features)
  if not jnp.issubdtype(table.dtype, jnp.floating):
    raise ValueError(f"context_features must be a floating array, got dtype {table.dtype}.")
  if table.ndim != 2 or table.shape[0] != data.num_contexts:
    raise ValueError(
      f"context_features must have shape (num_contexts, d) = ({data.num_contexts}, d) to match the "
      f"comparisons' contexts {data.contexts}; got {tuple(table.shape)}."
    )
  if d_model is not None and table.shape[1] != d_model:
    raise ValueError(
      f"context_features has d = {table.shape[1]} columns but the model expects {d_model}."
    )
  if not bool(jnp.all(jnp.isfinite(table))):
    raise ValueError("context_features must be finite.")
  return table


def _check_context_weights(context_weights, num_contexts: int):
  """User-given ``Q`` weights as a validated float64 NumPy vector (or ``None``)."""
  if context_weights is None:
    return None
  w = np.asarray(context_weights, dtype=np.float64)
  if w.shape != (num_contexts,):
    raise ValueError(f"context_weights must have shape ({num_contexts},), got {w.shape}.")
  if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
    raise ValueError("context_weights must be finite, >= 0 and have a positive sum.")
  return w


def _empirical_context_weights(train: Comparisons, num_contexts: int) -> np.ndarray:
  """``Q`` = the (row-weighted) context frequencies of the training data."""
  w = np.bincount(
    np.asarray(train.context),
    weights=np.asarray(train.weight, dtype=np.float64),
    minlength=num_contexts,
  )
  return np.ones(num_contexts) if w.sum() <= 0 else w / w.sum()


def _int_at_least(minimum: int, *, allow_none: bool = False) -> Callable[[Any, str], int | None]:
  def check(value: Any, name: str) -> int | None:
    return validate_int(value, name, minimum=minimum, allow_none=allow_none)

  return check


def _number_in(**interval: Any) -> Callable[[Any, str], float]:
  def check(value: Any, name: str) -> float:
    return validate_number(value, name, **interval)

  return check


def _sharpness_score(value: Any, name: str) -> str:
  if value not in ("top_cycle", "uncovered"):
    raise ValueError(f"{name} must be 'top_cycle' or 'uncovered', got {value!r}.")
  return value


@dataclasses.dataclass(frozen=True)
class FitSettings:
  """The options of :func:`fit`, each declared once with its default, check and help text.

  The checks run when the settings are made (``FitSettings(batch_size=0)`` raises) and store
  integers and numbers as Python ``int`` / ``float``. The temperatures are checked by
  :func:`~ste_jax.training.temperature_schedule` when :func:`fit` builds the schedule.

  Attributes:
    num_steps: number of optimizer steps ``>= 1``.
    batch_size: minibatch size ``>= 1`` (capped at the number of training rows; static).
    learning_rate: Adam learning rate ``> 0`` (when ``optimizer`` is ``None``).
    optimizer: an optax transformation; overrides ``learning_rate``.
    heldout_fraction: in ``[0, 1)``: the share of the comparisons split off at random as
      held-out data when :func:`fit` gets no ``heldout``; ``0`` trains on everything without
      early stopping.
    tau: edge temperature: a number, or a schedule ``step -> scalar``; default
      ``exponential_anneal(1.0, 0.01, num_steps)`` (paper appendix). Used only by the
      regularizers.
    gamma: softmin temperature (number or schedule); default follows ``tau``.
    gamma_c: covering temperature; default follows ``gamma``.
    sharpness_weight: ``lambda_s >= 0`` of Eq. ``sharpness_regularizer`` (``0``: plain
      log-loss).
    sharpness_score: ``"top_cycle"`` or ``"uncovered"``.
    calibration_weight: ``lambda_c >= 0``; needs ``membership`` (an argument of :func:`fit`).
    max_path_length: reachability path length ``K`` (static); ``None`` means ``n - 1``.
    reach_gamma: smooth max-min temperature of the reachability; ``None`` (default) follows
      ``gamma`` (the smoothed operators of the paper's end-to-end training, ``O(n^3)`` memory per
      path-length step); ``0.0`` is the exact max-min closure (``O(n^2)`` memory, for large
      ``n``). See :func:`make_ste_loss`.
    loss_fn: custom ``loss_fn(model, batch, temperatures) -> (loss, metrics)``; overrides the
      regularizer options (see :func:`make_train_step`).
    eval_every: steps ``>= 1`` between held-out evaluations; ``None``: one epoch.
    patience: evaluations ``>= 1`` without improvement before stopping; ``None`` never stops
      early.
    progress: show a tqdm progress bar.

  Raises:
    ValueError: an option out of its range, naming it.

  Example:
    >>> settings = FitSettings(num_steps=200, sharpness_weight=0.1)
    >>> settings.num_steps, settings.batch_size
    (200, 1024)
  """

  num_steps: int = option(500, check=_int_at_least(1), help="optimizer steps")
  batch_size: int = option(1024, check=_int_at_least(1), help="minibatch size")
  learning_rate: float = option(
    1e-2, check=_number_in(low=0.0, low_open=True), help="Adam learning rate"
  )
  optimizer: optax.GradientTransformation | None = option(
    None, flag=None, help="an optax transformation (overrides learning_rate)"
  )
  heldout_fraction: float = option(
    0.1,
    check=_number_in(low=0.0, high=1.0, high_open=True),
    help="share of the comparisons held out for early stopping",
  )
  tau: float | Callable | None = option(None, flag=None, help="edge temperature or schedule")
  gamma: float | Callable | None = option(None, flag=None, help="softmin temperature")
  gamma_c: float | Callable | None = option(None, flag=None, help="covering temperature")
  sharpness_weight: float = option(
    0.0, check=_number_in(low=0.0), help="weight of the sharpness regularizer"
  )
  sharpness_score: str = option(
    "top_cycle", check=_sharpness_score, help="score the sharpness term uses"
  )
  calibration_weight: float = option(
    0.0, check=_number_in(low=0.0), help="weight of the calibration regularizer"
  )
  max_path_length: int | None = option(None, help="reachability path length (static)")
  reach_gamma: float | None = option(None, flag=None, help="reachability temperature")
  loss_fn: Callable | None = option(None, flag=None, help="custom loss (model, batch, temps)")
  eval_every: int | None = option(
    None, check=_int_at_least(1, allow_none=True), help="steps between held-out evaluations"
  )
  patience: int | None = option(
    10, check=_int_at_least(1, allow_none=True), help="evaluations without improvement"
  )
  progress: bool = option(True, flag=None, help="show a progress bar")

  def __post_init__(self) -> None:
    for name, spec in specs(type(self)).items():
      if spec.check is not None:  # the checks above return the value as a Python number
        object.__setattr__(self, name, spec.check(getattr(self, name), name))


_FIT_FIELDS = tuple(f.name for f in dataclasses.fields(FitSettings))


def fit(
  key: jax.Array,
  model: nnx.Module,
  data: Comparisons,
  settings: FitSettings | None = None,
  *,
  heldout: Comparisons | None = None,
  context_features: jax.typing.ArrayLike | None = None,
  context_weights: jax.typing.ArrayLike | None = None,
  membership: jax.typing.ArrayLike | None = None,
  **overrides: Any,
) -> FitResult:
  r"""Trains a pairwise model on comparisons (paper Algorithm ``ste_training``).

  Minimizes Eq. ``full_objective``. An eager driver around :func:`make_train_step`: validates
  the inputs, splits off held-out data, draws minibatches (a fresh permutation per epoch; the
  last incomplete batch of an epoch is dropped so every batch has the same shape and the step
  compiles once), anneals the temperatures, evaluates the held-out log-loss every
  ``eval_every`` steps, stops early after ``patience`` evaluations without improvement and
  restores the best parameters.

  Args:
    key: typed PRNG key (``jax.random.key``) for the held-out split and the minibatches.
    model: an NNX module following ``model(a, b, x) -> h`` (e.g.
      :class:`~ste_jax.models.PairwiseLogit`); updated in place.
    data: :class:`~ste_jax.data.Comparisons` to train on (``m`` rows).
    settings: the training options, a :class:`FitSettings` (default: its defaults).
    heldout: held-out comparisons over the same agents and contexts; if ``None``, a fraction
      ``heldout_fraction`` of ``data`` is split off at random.
    context_features: ``(num_contexts, d)`` table, row ``c`` = features of context ``c``.
    context_weights: ``(num_contexts,)`` weights of the context distribution ``Q`` of the
      marginal tournament; default: the (weighted) context frequencies of the training rows.
    membership: ``(n,)`` membership labels for the calibration term.
    **overrides: fields of :class:`FitSettings` replacing those of ``settings``
      (``fit(key, model, data, num_steps=200)``).

  Returns:
    :class:`FitResult`.

  Raises:
    TypeError: an override that is no field of :class:`FitSettings`.
    ValueError: for an invalid key, model, data set, option or shape, with a message naming
      the argument.

  Example:
    >>> import jax, numpy as np
    >>> from flax import nnx
    >>> from ste_jax.data import Comparisons
    >>> from ste_jax.models import BradleyTerryLogit
    >>> c = Comparisons.from_arrays(np.array([0, 1, 2] * 20), np.array([1, 2, 0] * 20),
    ...                             np.ones(60), agents=("x", "y", "z"))
    >>> result = fit(jax.random.key(0), BradleyTerryLogit(3, rngs=nnx.Rngs(0)), c,
    ...              num_steps=5, batch_size=16, progress=False)
    >>> result.history.step.shape, result.train.num_comparisons
    ((5,), 54)
  """
  if settings is None:
    settings = FitSettings()
  elif not isinstance(settings, FitSettings):
    raise TypeError(f"fit: settings must be a FitSettings or None, got {type(settings).__name__}.")
  for name in overrides:
    if name not in _FIT_FIELDS:
      close = difflib.get_close_matches(name, _FIT_FIELDS, n=1)
      hint = f" (did you mean {close[0]!r}?)" if close else ""
      raise TypeError(
        f"fit() got an unexpected keyword argument {name!r}{hint}; the training options are "
        f"the fields of FitSettings: {', '.join(_FIT_FIELDS)}."
      )
  if overrides:
    settings = dataclasses.replace(settings, **overrides)
  comparisons = data
  _check_key(key)
  if not isinstance(model, nnx.Module):
    raise ValueError(f"model must be a flax.nnx.Module, got {type(model).__name__}.")
  if not isinstance(comparisons, Comparisons):
    raise ValueError(
      f"comparisons must be a ste_jax.data.Comparisons, got {type(comparisons).__name__}."
    )
  n, m = comparisons.num_agents, comparisons.num_comparisons
  if m < 1:
    raise ValueError("comparisons is empty: nothing to train on.")
  model_n = getattr(model, "num_agents", None)
  if model_n is not None and model_n != n:
    raise ValueError(f"the model has num_agents={model_n} but the comparisons have {n} agents.")
  num_steps, batch_size = settings.num_steps, settings.batch_size
  eval_every, patience = settings.eval_every, settings.patience
  heldout_fraction = settings.heldout_fraction
  optimizer = settings.optimizer
  if optimizer is None:
    optimizer = optax.adam(settings.learning_rate)
  loss_fn = settings.loss_fn
  table = _check_context_features(model, comparisons, context_features)
  q_weights = _check_context_weights(context_weights, comparisons.num_contexts)
  if membership is not None:
    membership = jnp.asarray(membership)
    if membership.shape != (n,):
      raise ValueError(f"membership must have shape ({n},), got {tuple(membership.shape)}.")

  if settings.calibration_weight > 0 and membership is None and loss_fn is None:
    raise ValueError("calibration_weight > 0 needs membership labels (membership=).")
  num_heldout = 0
  if heldout is not None:
    if not isinstance(heldout, Comparisons):
      raise ValueError(f"heldout must be a ste_jax.data.Comparisons, got {type(heldout).__name__}.")
    if heldout.agents != comparisons.agents or heldout.contexts != comparisons.contexts:
      raise ValueError("heldout must have the same agents and contexts as comparisons.")
    if heldout.num_comparisons < 1:
      raise ValueError("heldout is empty.")
  elif heldout_fraction > 0:
    num_heldout = int(round(heldout_fraction * m))
    if num_heldout < 1 or num_heldout >= m:
      raise ValueError(
        f"heldout_fraction={heldout_fraction} of {m} comparisons leaves an empty train or held-out "
        "set; change it or pass heldout= explicitly."
      )

  tau = exponential_anneal(1.0, 0.01, num_steps) if settings.tau is None else settings.tau
  schedule = temperature_schedule(tau, settings.gamma, settings.gamma_c)  # validates them

  # All checks passed: only now consume the key.
  key_split, key_loop = jax.random.split(key)
  train = comparisons
  if num_heldout:
    perm = np.asarray(jax.random.permutation(key_split, m))
    heldout = _subset(comparisons, np.sort(perm[:num_heldout]))
    train = _subset(comparisons, np.sort(perm[num_heldout:]))

  graphdef, params, rest = nnx.split(model, nnx.Param, ...)
  param_dtypes = {x.dtype for x in jax.tree.leaves(params) if jnp.issubdtype(x.dtype, jnp.floating)}
  dtype = param_dtypes.pop() if len(param_dtypes) == 1 else comparisons.outcome.dtype
  if loss_fn is None:
    weights = None
    if table is not None:
      q = (
        _empirical_context_weights(train, comparisons.num_contexts)
        if q_weights is None
        else q_weights
      )
      weights = jnp.asarray(q.astype(np.dtype(dtype)))
    loss_fn = make_ste_loss(
      context_features=None if table is None else table.astype(dtype),
      context_weights=weights,
      sharpness_weight=settings.sharpness_weight,
      sharpness_score=settings.sharpness_score,
      calibration_weight=settings.calibration_weight,
      membership=membership,
      max_path_length=settings.max_path_length,
      reach_gamma=settings.reach_gamma,
      num_agents=n,
    )
  opt_state = optimizer.init(params)
  step_fn = make_train_step(graphdef, optimizer, loss_fn=loss_fn, schedule=schedule, rest=rest)
  eval_fn = None
  if heldout is not None:
    eval_fn = make_log_loss_fn(
      graphdef, context_features=None if table is None else table.astype(dtype), rest=rest
    )

  m_train = train.num_comparisons
  size = min(batch_size, m_train)
  steps_per_epoch = m_train // size
  eval_every = min(steps_per_epoch, num_steps) if eval_every is None else eval_every

  records, eval_steps, evals = [], [], []
  best_loss, best_params, best_step, bad, stopped_early = math.inf, params, 0, 0, False
  perm = None
  with tqdm(
    total=num_steps, disable=not settings.progress, desc="fit", unit="step", dynamic_ncols=True
  ) as bar:
    for t in range(num_steps):
      j = t % steps_per_epoch
      if j == 0:
        key_loop, key_perm = jax.random.split(key_loop)
        perm = jax.random.permutation(key_perm, m_train)
      batch = _take_batch(train, perm, j * size, size=size)
      params, opt_state, metrics = step_fn(params, opt_state, batch, t)
      records.append(metrics)
      bar.update(1)
      done = t + 1
      if eval_fn is not None and (done % eval_every == 0 or done == num_steps):
        value = float(eval_fn(params, heldout))
        eval_steps.append(done)
        evals.append(value)
        bar.set_postfix(loss=f"{float(metrics['loss']):.4f}", heldout=f"{value:.4f}", refresh=False)
        if value < best_loss:
          best_loss, best_params, best_step, bad = value, params, done, 0
        else:
          bad += 1
          if patience is not None and bad >= patience:
            stopped_early = done < num_steps
            break
  if eval_fn is None:
    best_params, best_step = params, len(records)

  metrics = jax.tree.map(lambda *xs: jnp.stack(xs), *records)
  history = FitHistory(
    step=jnp.arange(len(records), dtype=jnp.int32),
    metrics=metrics,
    eval_step=jnp.asarray(eval_steps, dtype=jnp.int32),
    heldout_log_loss=jnp.asarray(evals, dtype=dtype),
  )
  nnx.update(model, best_params)
  return FitResult(
    model=model,
    params=best_params,
    history=history,
    best_step=best_step,
    stopped_early=stopped_early,
    train=train,
    heldout=heldout,
  )
