"""Tie models of the model estimator: Davidson and Rao-Kupper likelihoods, ties as an outcome.

With ``h = h(a, b)`` the intransitive model's logit (:mod:`ste_jax.models._intransitive`),

* **Davidson** (1970): ``P(a) : P(b) : P(tie) = e^{h/2} : e^{-h/2} : nu`` (``nu = e^theta >= 0``,
  the tie propensity); a tie between equals has probability ``nu / (2 + nu)``.
* **Rao-Kupper** (1967): ``P(a) = sigmoid(h - eta)``, ``P(b) = sigmoid(-h - eta)``, the rest a
  tie (``eta = log(theta_RK) >= 0``; ``eta = 0`` is Bradley-Terry with no ties).

A row whose outcome is exactly ``1/2`` is a tie; any other outcome ``y`` counts ``y`` wins and
``1 - y`` losses. The tie parameter is fitted with the strengths and factors (ridges as in
:func:`~ste_jax.evaluate.fit_model_tournament`, none on the tie parameter), on the observed
pairs' counts; no record bands. The tournament edge is the probability that ``a`` wins given a
decisive result, ``P(a) / (P(a) + P(b))``: ``sigmoid(h)`` under Davidson, and
``sigmoid(h - eta) / (sigmoid(h - eta) + sigmoid(-h - eta))`` under Rao-Kupper (``1/2`` at
``h = 0`` and increasing in ``h``: the same strict relation as ``sigmoid(h)``).

*Choosing the tie model* (``tie_model="auto"``): :mod:`ste_jax.evaluate._tie_choice`.
"""

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._compiler_options import gather_friendly_jit
from ste_jax.data import Comparisons
from ste_jax.evaluate._lbfgs import minimize_lbfgs
from ste_jax.evaluate._model_estimator import (
  ModelTournament,
  PairIndex,
  _fit_jit,
  fit_model_tournament,
  observed_pairs,
)
from ste_jax.models._intransitive import IntransitiveParams, intransitive_logits

TIE_MODELS = ("half", "davidson", "rao-kupper")
# The values of ``ModelEstimator.tie_model``: a tie model, or "auto" (chosen by cross-validation).
TIE_MODEL_CHOICES = TIE_MODELS + ("auto",)


def pair_outcome_counts(
  pairs: PairIndex, outcome: jax.typing.ArrayLike, weight: jax.typing.ArrayLike
) -> tuple[jax.Array, jax.Array, jax.Array]:
  """``(wins_ij, wins_ji, ties)`` per observed pair, shapes ``(Q,)`` (a row at 1/2 is a tie)."""
  q = pairs.i.shape[0]
  tie = outcome == 0.5
  decisive = jnp.where(tie, jnp.zeros_like(weight), weight)
  won_by_i = jnp.where(pairs.row_forward, outcome, 1 - outcome)
  w_ij = jax.ops.segment_sum(decisive * won_by_i, pairs.row_pair, num_segments=q)
  w_ji = jax.ops.segment_sum(decisive * (1 - won_by_i), pairs.row_pair, num_segments=q)
  ties = jax.ops.segment_sum(jnp.where(tie, weight, 0), pairs.row_pair, num_segments=q)
  return w_ij, w_ji, ties


def tie_log_probabilities(h: jax.Array, tie_param: jax.Array, model: str):
  """``(log P(a), log P(b), log P(tie))`` of logits ``h`` under ``model`` (elementwise).

  ``tie_param`` is ``theta = log nu`` (Davidson) or ``rho`` with ``eta = softplus(rho)``
  (Rao-Kupper).
  """
  if model == "davidson":
    log_z = jnp.logaddexp(jnp.logaddexp(h / 2, -h / 2), tie_param)
    return h / 2 - log_z, -h / 2 - log_z, tie_param - log_z
  if model == "rao-kupper":
    eta = jax.nn.softplus(tie_param)
    la, lb = jax.nn.log_sigmoid(h - eta), jax.nn.log_sigmoid(-h - eta)
    # P(tie) = 1 - P(a) - P(b) = (e^{2 eta} - 1) sigmoid(h - eta) sigmoid(-h - eta), in logs.
    lt = jnp.log(jnp.expm1(2 * eta)) + la + lb
    return la, lb, lt
  raise ValueError(f"tie model must be one of {TIE_MODELS[1:]}, got {model!r}.")


def decisive_win_probability(h: jax.Array, tie_param: jax.Array, model: str) -> jax.Array:
  """``P(a wins | decisive) = P(a) / (P(a) + P(b))`` (the tournament edge)."""
  la, lb, _ = tie_log_probabilities(h, tie_param, model)
  return jax.nn.sigmoid(la - lb)


def fit_tie_model(
  params0: IntransitiveParams,
  tie0: jax.typing.ArrayLike,
  pairs: PairIndex,
  counts: tuple[jax.Array, jax.Array, jax.Array],
  l2_strength: jax.typing.ArrayLike,
  l2_skew: jax.typing.ArrayLike,
  *,
  model: str,
  num_steps: int,
) -> tuple[IntransitiveParams, jax.Array]:
  """Penalized maximum likelihood of a tie model by ``num_steps`` L-BFGS steps (pure).

  Args:
    params0: initial parameters (its ``mask`` sets the rank).
    tie0: scalar initial tie parameter.
    pairs: the :class:`~ste_jax.evaluate._model_estimator.PairIndex`.
    counts: :func:`pair_outcome_counts`.
    l2_strength, l2_skew: ridges (``0`` allowed).
    model: ``"davidson"`` or ``"rao-kupper"`` (static).
    num_steps: L-BFGS steps (static).

  Returns:
    ``(params, tie_param)``.
  """
  mask = params0.mask
  n, K = params0.u.shape
  w_ij, w_ji, ties = counts
  dtype = params0.strength.dtype
  games_pair = w_ij + w_ji + ties
  games = jax.ops.segment_sum(games_pair, pairs.i, num_segments=n) + jax.ops.segment_sum(
    games_pair, pairs.j, num_segments=n
  )
  tiny = jnp.asarray(1e-6, dtype)
  scale_s = jax.lax.rsqrt(l2_strength + 0.25 * games + tiny)
  scale_f = jnp.broadcast_to(jax.lax.rsqrt(l2_skew + 0.25 * games + tiny)[:, None], (n, K))
  scale_t = jax.lax.rsqrt(0.25 * jnp.sum(games_pair, keepdims=True) + tiny)
  scale = jnp.concatenate([scale_s, scale_f.reshape(-1), scale_f.reshape(-1), scale_t])
  total = jnp.maximum(jnp.sum(games_pair), jnp.ones((), dtype))

  def unflatten(x):
    s, u, v = x[:n], x[n : n + n * K].reshape(n, K), x[n + n * K : n + 2 * n * K].reshape(n, K)
    return IntransitiveParams(s, u, v, mask), x[-1]

  def loss(z):
    params, t = unflatten(z * scale)
    la, lb, lt = tie_log_probabilities(intransitive_logits(params, pairs.i, pairs.j), t, model)
    nll = -jnp.sum(w_ij * la + w_ji * lb + jnp.where(ties > 0, ties * lt, 0))
    um, vm = params.u * mask[None, :], params.v * mask[None, :]
    reg = 0.5 * l2_strength * jnp.sum(params.strength**2) + 0.5 * l2_skew * (
      jnp.sum(um * um) + jnp.sum(vm * vm)
    )
    return (nll + reg) / total

  x0 = jnp.concatenate(
    [
      params0.strength,
      params0.u.reshape(-1),
      params0.v.reshape(-1),
      jnp.reshape(jnp.asarray(tie0, dtype), (1,)),
    ]
  )
  z = minimize_lbfgs(loss, x0 / scale, num_steps=num_steps)
  return unflatten(z * scale)


_fit_tie_jit = gather_friendly_jit(fit_tie_model, static_argnames=("model", "num_steps"))


def tie_tournament(params: IntransitiveParams, tie_param: jax.Array, model: str) -> jax.Array:
  """``(n, n)`` tournament of decisive-win probabilities (diagonal 1/2)."""
  n = params.strength.shape[-1]
  idx = jnp.arange(n)
  a, b = jnp.meshgrid(idx, idx, indexing="ij")
  P = decisive_win_probability(intransitive_logits(params, a, b), tie_param, model)
  return jnp.where(jnp.eye(n, dtype=bool), jnp.asarray(0.5, P.dtype), P)


@dataclasses.dataclass(frozen=True)
class TieModelTournament:
  """A fitted tie-model tournament.

  Attributes:
    P: ``(n, n)`` decisive-win probabilities (module docstring).
    params: the fitted :class:`~ste_jax.models.IntransitiveParams`.
    tie_param: Davidson ``theta = log nu`` or Rao-Kupper ``rho`` (``eta = softplus(rho)``).
    model: ``"davidson"`` or ``"rao-kupper"``.
    uncontrolled: the ties-as-half-wins :class:`~ste_jax.evaluate.ModelTournament` (its rank and
      ridges are used here).
    tie_cv: the line of :func:`~ste_jax.evaluate._tie_choice.choose_tie_model` when the tie
      model was chosen by cross-validation, else ``""``.
  """

  P: jax.Array
  params: IntransitiveParams
  tie_param: jax.Array
  model: str
  uncontrolled: ModelTournament
  tie_cv: str = ""

  @property
  def chosen(self):
    """The rank and ridges used (chosen with ties as half wins)."""
    return self.uncontrolled.chosen

  @property
  def tie_parameter(self) -> float:
    """Davidson's ``nu`` or Rao-Kupper's ``theta`` (``>= 1``)."""
    t = float(self.tie_param)
    return float(np.exp(t)) if self.model == "davidson" else float(np.exp(np.logaddexp(0.0, t)))

  def refit_state(self) -> tuple:
    """``(params, tie_param, settings)``: the arrays of a warm-started refit."""
    c = self.chosen
    settings = jnp.asarray([c.l2_strength, c.l2_skew], dtype=self.P.dtype)
    return self.params, self.tie_param, settings

  def describe(self) -> str:
    """One line: the half-win model's description and the tie model's parameter."""
    name = "Davidson nu" if self.model == "davidson" else "Rao-Kupper theta"
    line = (
      f"{self.uncontrolled.describe()}; refitted with the {self.model} tie model ({name} = "
      f"{self.tie_parameter:.3f}; edges P(a wins | decisive), no record bands)"
    )
    return line + (f"; {self.tie_cv}" if self.tie_cv else "")


def fit_tie_tournament(
  key: jax.Array | None,
  comparisons: Comparisons,
  *,
  model: str = "davidson",
  num_steps: int = 100,
  half: ModelTournament | None = None,
  **model_settings: Any,
) -> TieModelTournament:
  """Fits a tie model at the rank and ridges that ties-as-half-wins cross-validation chooses.

  Args:
    key: PRNG key of the half-win fit.
    comparisons: the data (an outcome of exactly 1/2 is a tie).
    model: ``"davidson"`` or ``"rao-kupper"``.
    num_steps: L-BFGS steps of the tie-model fit.
    half: the half-win fit of ``comparisons`` if already made (else fitted here).
    **model_settings: keyword arguments of :func:`~ste_jax.evaluate.fit_model_tournament`.

  Returns:
    A :class:`TieModelTournament`.

  Raises:
    ValueError: an unknown ``model`` or the settings errors of ``fit_model_tournament``.

  Example:
    >>> c = Comparisons.from_arrays([0, 1, 0, 1] * 20, [1, 2, 2, 0] * 20, [1, 0.5, 1, 0.5] * 20)
    >>> fit = fit_tie_tournament(None, c, ranks=(0,))
    >>> bool(fit.P[0, 2] > 0.5), fit.tie_parameter > 0
    (True, True)
  """
  if model not in TIE_MODELS[1:]:
    raise ValueError(f"model must be one of {TIE_MODELS[1:]}, got {model!r}.")
  if half is None:
    half = fit_model_tournament(key, comparisons, **model_settings)
  dtype = comparisons.weight.dtype
  pairs = observed_pairs(comparisons)
  counts = pair_outcome_counts(pairs, comparisons.outcome, comparisons.weight)
  c = half.chosen
  params, tie = _fit_tie_jit(
    half.params,
    jnp.zeros((), dtype),
    pairs,
    counts,
    jnp.asarray(c.l2_strength, dtype),
    jnp.asarray(c.l2_skew, dtype),
    model=model,
    num_steps=num_steps,
  )
  return TieModelTournament(tie_tournament(params, tie, model), params, tie, model, half)


def refit_tie_tournament(
  state: tuple,
  pairs: PairIndex,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike,
  *,
  model: str,
  num_steps: int,
) -> jax.Array:
  """A tie-model tournament refitted on reweighted rows, warm-started (pure; vmaps).

  Args:
    state: :meth:`TieModelTournament.refit_state`.
    pairs: the :class:`~ste_jax.evaluate._model_estimator.PairIndex` of the rows.
    outcome, weight: ``(m,)`` outcomes and (replica) weights.
    model: ``"davidson"`` or ``"rao-kupper"`` (static).
    num_steps: L-BFGS steps (static).

  Returns:
    ``(n, n)`` tournament of decisive-win probabilities.
  """
  params, tie, settings = state
  counts = pair_outcome_counts(pairs, outcome, weight)
  params, tie = fit_tie_model(
    params, tie, pairs, counts, settings[0], settings[1], model=model, num_steps=num_steps
  )
  return tie_tournament(params, tie, model)


@dataclasses.dataclass(frozen=True)
class HalfWinChoice(ModelTournament):
  """The ties-as-half-wins :class:`~ste_jax.evaluate.ModelTournament` chosen by
  :func:`~ste_jax.evaluate._tie_choice.choose_tie_model` (its description adds the
  cross-validation line ``tie_cv``)."""

  tie_cv: str = ""

  def describe(self) -> str:
    return super().describe() + (f"; {self.tie_cv}" if self.tie_cv else "")


@dataclasses.dataclass(frozen=True)
class TieRefitState:
  """The warm start of a tie-model refit; ``model`` is static (a pytree meta field), so a refit
  under ``jit`` knows which likelihood to use from the state alone.

  Attributes:
    params, tie_param, settings: :meth:`TieModelTournament.refit_state`.
    pairs: the :class:`~ste_jax.evaluate._model_estimator.PairIndex` of the replica rows.
    model: ``"davidson"`` or ``"rao-kupper"``.
  """

  params: IntransitiveParams
  tie_param: jax.Array
  settings: jax.Array
  pairs: PairIndex
  model: str


jax.tree_util.register_dataclass(
  TieRefitState,
  data_fields=["params", "tie_param", "settings", "pairs"],
  meta_fields=["model"],
)


def three_outcome_log_probabilities(h: jax.Array, tie_param, model: str, tau):
  """``(log P(a), log P(b), log P(tie))`` of logits ``h`` under ``model``; ``"half"``: the
  three-outcome model it implies with the constant tie probability ``tau`` (module docstring)."""
  if model == "half":
    keep = jnp.log1p(-tau)
    return jax.nn.log_sigmoid(h) + keep, jax.nn.log_sigmoid(-h) + keep, jnp.log(tau)
  return tie_log_probabilities(h, tie_param, model)


def _three_outcome_nll(params, tie, pairs, counts, model, tau):
  """Summed NLL of held-out ``(wins_ij, wins_ji, ties)`` under ``model``."""
  w_ij, w_ji, ties = counts
  h = intransitive_logits(params, pairs.i, pairs.j)
  la, lb, lt = three_outcome_log_probabilities(h, tie, model, tau)
  return -jnp.sum(w_ij * la + w_ji * lb + jnp.where(ties > 0, ties * lt, 0))


_three_outcome_nll_jit = jax.jit(_three_outcome_nll, static_argnames=("model",))


def _pair_count_fold_nll(cells: Comparisons, half: ModelTournament, num_steps: int):
  """The held-out NLL of each tie model on the pair counts of ``cells`` (no covariates).

  Returns ``nll(train_w, test_w, tau) -> {model: summed held-out NLL}`` (weights per cell).
  """
  dtype = cells.weight.dtype
  pairs = observed_pairs(cells)
  c = half.chosen
  l2s, l2k = jnp.asarray(c.l2_strength, dtype), jnp.asarray(c.l2_skew, dtype)
  tolerance = jnp.asarray(half.record_tolerance, dtype)

  def nll(train_w, test_w, tau):
    train = pair_outcome_counts(pairs, cells.outcome, train_w)
    test = pair_outcome_counts(pairs, cells.outcome, test_w)
    half_params = _fit_jit(
      half.params,
      pairs,
      train[0] + 0.5 * train[2],
      train[1] + 0.5 * train[2],
      l2s,
      l2k,
      tolerance,
      num_steps=num_steps,
    )
    out = {"half": float(_three_outcome_nll_jit(half_params, 0.0, pairs, test, "half", tau))}
    for model in TIE_MODELS[1:]:
      params, tie = _fit_tie_jit(
        half.params, jnp.zeros((), dtype), pairs, train, l2s, l2k, model=model, num_steps=num_steps
      )
      out[model] = float(_three_outcome_nll_jit(params, tie, pairs, test, model, tau))
    return out

  return nll
