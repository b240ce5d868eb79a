"""Choosing the tie model (``tie_model="auto"``, :func:`choose_tie_model`) by cross-validation.

Ties as half wins, Davidson and Rao-Kupper (:mod:`ste_jax.evaluate._ties`) are compared by
``k``-fold cross-validated log-likelihood of the same three outcomes (win, tie, loss), at the
rank and ridges the half-win cross-validation chose, on folds over unit comparisons drawn like the
model estimator's. The half-win model predicts no tie
of its own, so it is scored as the three-outcome model it implies with a tie probability that does
not depend on the pair: ``P(a) = (1 - tau) sigmoid(h)``, ``P(b) = (1 - tau) sigmoid(-h)``,
``P(tie) = tau``, with ``tau = (ties + 1/2) / (comparisons + 1)`` of the training folds (the
maximum-likelihood constant, smoothed so that a held-out tie never has probability 0). Each model's
tie parameter is thus fitted on the training folds, and all three are scored on one likelihood;
the lowest mean held-out log-loss wins. On data without ties the three reduce to Bradley-Terry
and give the same tournament, whichever is chosen. With covariates
(:class:`~ste_jax.evaluate.Covariates`) the three are compared the same way with ``beta . x_r`` in
every logit (the controlled likelihoods of :mod:`ste_jax.evaluate._controlled`), on folds over
the comparisons (a count cell would pool rows of different features).
"""

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.data import Comparisons
from ste_jax.evaluate._controlled import covariate_tie_fold_nll
from ste_jax.evaluate._covariates import Covariates
from ste_jax.evaluate._model_estimator import ModelTournament, _fold_weights, pair_cells
from ste_jax.evaluate._ties import TIE_MODELS, _pair_count_fold_nll


def cross_validate_tie_models(
  key: jax.Array, outcome, weight, fold_nll, num_folds: int
) -> tuple[str, dict[str, float]]:
  """The fold loop of :func:`choose_tie_model`, whatever the likelihood's design.

  Args:
    key: PRNG key of the folds.
    outcome, weight: ``(m,)`` the units' outcomes (``1/2``: a tie) and weights; the folds split
      each unit's weight multinomially (:func:`~ste_jax.evaluate._model_estimator._fold_weights`).
    fold_nll: ``(train_w, test_w, tau) -> {model: summed held-out NLL}`` for every model of
      :data:`TIE_MODELS`, fitted on ``train_w``.
    num_folds: folds, ``>= 2``.

  Returns:
    ``(model, table)`` as :func:`choose_tie_model`.
  """
  w = np.asarray(weight, dtype=np.float64)
  if float(np.sum(w)) < num_folds:
    return "half", {}
  held = _fold_weights(key, w, num_folds)
  if not np.all(held.sum(axis=1) > 0):
    return "half", {}
  dtype = jnp.asarray(weight).dtype
  tie = np.asarray(outcome) == 0.5
  losses = {m: [] for m in TIE_MODELS}
  for f in range(num_folds):
    train_w = w - held[f]
    tau = jnp.asarray((float(np.sum(train_w[tie])) + 0.5) / (float(np.sum(train_w)) + 1.0), dtype)
    nll = fold_nll(jnp.asarray(train_w, dtype), jnp.asarray(held[f], dtype), tau)
    n_test = float(np.sum(held[f]))
    for m in TIE_MODELS:
      losses[m].append(nll[m] / n_test)
  table = {m: float(np.mean(v)) for m, v in losses.items()}
  return min(TIE_MODELS, key=lambda m: table[m]), table


def choose_tie_model(
  key: jax.Array | None,
  comparisons: Comparisons,
  half: ModelTournament,
  *,
  covariates: Covariates | None = None,
  num_folds: int = 5,
  num_steps: int = 100,
) -> tuple[str, dict[str, float]]:
  """The tie model with the best cross-validated three-outcome log-likelihood (module docstring).

  Without covariates the likelihood and its folds are over the count cells of the pairs
  (:func:`~ste_jax.evaluate._model_estimator.pair_cells`, integer weights); with covariates over
  the comparisons themselves, each model fitted with the covariate term in its logit
  (:func:`~ste_jax.evaluate._controlled.covariate_tie_fold_nll`): the same fold loop
  (:func:`cross_validate_tie_models`) and the same three-outcome scores.

  Args:
    key: PRNG key of the folds (``None``: ``jax.random.key(0)``).
    comparisons: the data (an outcome of exactly 1/2 is a tie).
    half: the ties-as-half-wins fit (its rank and ridges, record tolerance and start are used).
    covariates: ``None``, or the :class:`~ste_jax.evaluate.Covariates` of the comparisons (one
      row each): the three models are then compared with ``beta . x_r`` in every logit.
    num_folds: folds over unit comparisons (``>= 2``).
    num_steps: L-BFGS steps of each fold's fit.

  Returns:
    ``(model, table)``: the chosen name of :data:`TIE_MODELS` and each model's mean held-out
    log-loss (nats per comparison). With too few comparisons for every fold to hold one,
    ``("half", {})``.

  Example:
    >>> c = Comparisons.from_arrays([0, 1, 2, 0] * 40, [1, 2, 0, 2] * 40, [1, 0.5, 0.5, 1] * 40)
    >>> from ste_jax.evaluate import fit_model_tournament
    >>> model, table = choose_tie_model(None, c, fit_model_tournament(None, c, ranks=(0,)))
    >>> sorted(table) == sorted(TIE_MODELS)
    True
  """
  key = jax.random.key(0) if key is None else key
  if covariates is not None:
    fold_nll = covariate_tie_fold_nll(comparisons, covariates, half, num_steps)
    return cross_validate_tie_models(
      key, comparisons.outcome, comparisons.weight, fold_nll, num_folds
    )
  w = np.asarray(comparisons.weight)
  cells = pair_cells(comparisons) if np.all(w == np.round(w)) else comparisons
  fold_nll = _pair_count_fold_nll(cells, half, num_steps)
  return cross_validate_tie_models(key, cells.outcome, cells.weight, fold_nll, num_folds)


def describe_tie_choice(
  model: str, table: dict[str, float], num_folds: int, *, covariates: tuple[str, ...] = ()
) -> str:
  """The report line of :func:`choose_tie_model` (``covariates``: the names in every logit)."""
  if not table:
    return "tie model: half wins (too few comparisons to cross-validate the tie models)"
  scores = ", ".join(f"{m} {table[m]:.4f}" for m in TIE_MODELS)
  controlled = f", each with the covariates {', '.join(covariates)}" if covariates else ""
  return (
    f"tie model {model} chosen by {num_folds}-fold CV on the win/tie/loss likelihood{controlled} "
    f"(held-out log-loss {scores}; half wins scored with the training folds' tie rate)"
  )
