"""The controlled model tournament: the model estimator with per-comparison covariates.

The logit of row ``r`` (``a_r`` against ``b_r`` under features ``x_r``) is

.. math::

  h_r = s_{a_r} - s_{b_r} + \\mathrm{skew}(a_r, b_r) + \\beta \\cdot (f(a_r, x_r) - f(b_r, x_r)),

the intransitive model of :mod:`ste_jax.models._intransitive` plus a linear term in the feature
differences (:class:`~ste_jax.evaluate.Covariates`, normalized as FastChat's style control). It is
fitted by penalized maximum likelihood over the *rows* (ties count half a win each way; the
ridges on ``s`` and on the intransitive factors as in
:func:`~ste_jax.evaluate.fit_model_tournament`, none on ``beta``):

.. math::

  \\min_{s, U, V, \\beta}\\ \\sum_r w_r \\big[y_r\\,\\mathrm{softplus}(-h_r)
  + (1 - y_r)\\,\\mathrm{softplus}(h_r)\\big] + \\tfrac{\\lambda_s}{2}\\lVert s\\rVert^2
  + \\tfrac{\\lambda_k}{2}\\big(\\lVert U\\rVert^2 + \\lVert V\\rVert^2\\big).

The pair part of each logit is computed once per observed pair and gathered to the rows, so an
objective evaluation costs ``O(Q K + m d)``. Without covariates the pair-count path of
:mod:`ste_jax.evaluate._model_estimator` is used unchanged.

*Controlled tournament.* ``P = sigmoid(s_a - s_b + skew(a, b))``: the model with every feature
difference set to zero (equal style on both sides, no presentation-order advantage). It is the
model's own prediction for every pair: the record bands of the uncontrolled estimator are not
applied (a pair's record includes the very style effect being controlled). The uncontrolled
tournament (:func:`~ste_jax.evaluate.fit_model_tournament` on the same comparisons, which also
chooses the rank and ridges by cross-validation) is kept next to it.

*Ties as their own outcome.* With a Davidson or Rao-Kupper tie model
(:mod:`ste_jax.evaluate._ties`) the same ``h_r`` enters the three-outcome likelihood: a row at
``1/2`` contributes ``-log P(tie | h_r)``, any other outcome ``y`` contributes
``-y log P(a | h_r) - (1 - y) log P(b | h_r)``, and the tie parameter is fitted with the rest
(:func:`fit_covariate_tie_model`). The controlled tournament is then ``P(a wins | decisive)`` at
zero feature difference.

*Intervals of beta.* Wald intervals ``beta_k +- z se_k`` from the inverse of the exact Hessian of
the penalized negative log-likelihood at the fit (a Laplace approximation: the ridges act as
Gaussian priors on ``s``, ``U``, ``V``; ``beta`` is unpenalized). The Hessian is assembled from
per-pair sums, so its cost is that of ``O(n K)`` pair-level Hessian-vector products; a
pseudo-inverse handles the directions the likelihood does not identify (a common shift of ``s``
without a ridge), which ``beta`` does not depend on; the intransitive components the chosen rank
switches off are left out of the Hessian (null directions too, with the same result).

*Stopping.* The point fits (and their tie-model cross-validation) stop once the remaining Newton
step is below :data:`STOP_TOLERANCE` standard errors in every coordinate; bootstrap refits and the
influence's refinement take their fixed step counts.
"""

import dataclasses
import math
from statistics import NormalDist
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._compiler_options import gather_friendly_jit
from ste_jax._errors import InputError
from ste_jax.data import Comparisons
from ste_jax.evaluate._covariates import Covariates
from ste_jax.evaluate._lbfgs import minimize_lbfgs
from ste_jax.evaluate._model_estimator import (
  ModelTournament,
  PairIndex,
  _leading_components,
  fit_model_tournament,
  observed_pairs,
  pair_wins,
)
from ste_jax.evaluate._ties import (
  TIE_MODELS,
  three_outcome_log_probabilities,
  tie_log_probabilities,
  tie_tournament,
)
from ste_jax.models._intransitive import (
  IntransitiveParams,
  intransitive_logits,
  intransitive_tournament,
)


def _row_logits(params: IntransitiveParams, beta, pairs: PairIndex, diff_t) -> jax.Array:
  """``(m,)`` logits ``h_r``: each pair's model logit gathered to its rows plus ``beta . x_r``.

  ``diff_t`` is the ``(d, m)`` transpose of the differences: a feature-major matrix-vector
  product (and its transpose in the gradient) is about twice as fast on XLA:CPU as the row-major
  one.
  """
  g = intransitive_logits(params, pairs.i, pairs.j)
  sign = jnp.where(pairs.row_forward, 1, -1).astype(g.dtype)
  return sign * g[pairs.row_pair] + beta @ diff_t


_TINY = 1e-6  # keeps the preconditioner finite for an agent or a feature without weight


def _preconditioner(params0, pairs, outcome, weight, diff, l2_strength, l2_skew):
  """``(scale_s (n,), scale_f (n K,), scale_b (d,), total)``: the covariate fits' diagonal
  preconditioner (an agent's parameters by ``sqrt(ridge + games / 4)``, coefficient ``k`` by
  ``sqrt(sum_r w_r x_rk^2 / 4)``, all times ``sqrt(total)``) and the total weight the objective
  is divided by.

  With the factor ``sqrt(total)`` the Hessian of the objective (divided by ``total``) is near
  the identity in the solver's coordinates, as with ``warm_start`` in
  :func:`~ste_jax.evaluate._model_estimator.fit_intransitive`: the first L-BFGS step, which has no
  curvature pairs yet, is then near a Newton step, where it would otherwise start about
  ``1 / total`` too short and spend its line search's evaluations (each a pass over the rows)
  growing it."""
  n, K = params0.u.shape
  dtype = params0.strength.dtype
  w_ij, w_ji = pair_wins(pairs, outcome, weight)
  games = jax.ops.segment_sum(w_ij + w_ji, pairs.i, num_segments=n) + jax.ops.segment_sum(
    w_ij + w_ji, pairs.j, num_segments=n
  )
  tiny = jnp.asarray(_TINY, dtype)
  scale_s = jax.lax.rsqrt(l2_strength + 0.25 * games + tiny)
  scale_f = jnp.broadcast_to(jax.lax.rsqrt(l2_skew + 0.25 * games + tiny)[:, None], (n, K))
  scale_b = jax.lax.rsqrt(0.25 * jnp.sum(weight[:, None] * diff * diff, axis=0) + tiny)
  total = jnp.maximum(jnp.sum(weight), jnp.ones((), dtype))
  unit = jnp.sqrt(total)
  return scale_s * unit, scale_f.reshape(-1) * unit, scale_b * unit, total


STOP_TOLERANCE = 1e-3
"""The controlled point fits and their cross-validation stop once the remaining Newton step is at
most this many standard errors in every coordinate (``tolerance`` of :func:`fit_covariate_model`);
bootstrap refits and the influence's refinement take their fixed step counts."""


def _stopping_gradient(tolerance, total):
  """The gradient bound of :func:`~ste_jax.evaluate._lbfgs.minimize_lbfgs` for ``tolerance``
  standard errors: in the solver's coordinates the objective (divided by ``total``) has a Hessian
  near the identity (:func:`_preconditioner`), so the Newton step is about the gradient and a
  standard error about ``1 / sqrt(total)``."""
  return None if tolerance is None else tolerance * jax.lax.rsqrt(total)


def fit_covariate_model(
  params0: IntransitiveParams,
  beta0: jax.typing.ArrayLike,
  pairs: PairIndex,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike,
  diff: jax.typing.ArrayLike,
  l2_strength: jax.typing.ArrayLike,
  l2_skew: jax.typing.ArrayLike,
  *,
  num_steps: int,
  tolerance: jax.typing.ArrayLike | None = None,
) -> tuple[IntransitiveParams, jax.Array]:
  """Penalized maximum likelihood of the covariate model by ``num_steps`` L-BFGS steps (pure).

  Diagonally preconditioned like :func:`~ste_jax.evaluate._model_estimator.fit_intransitive`
  (an agent's parameters by ``sqrt(ridge + games / 4)``, coefficient ``k`` by
  ``sqrt(sum_r w_r x_rk^2 / 4)``, both times the square root of the total weight, for a
  near-Newton first step): a change of variables only.

  Args:
    params0: initial :class:`~ste_jax.models.IntransitiveParams` (its ``mask`` sets the rank).
    beta0: ``(d,)`` initial coefficients.
    pairs: the :class:`~ste_jax.evaluate._model_estimator.PairIndex` of the rows.
    outcome, weight: ``(m,)`` the rows' shares won by ``a`` and weights.
    diff: ``(m, d)`` feature differences.
    l2_strength, l2_skew: ridges on the strengths and on the factors (scalars, traced; ``0``
      allowed: an unpenalized fit).
    num_steps: L-BFGS iterations (static).
    tolerance: ``None`` (all ``num_steps``), or stop once the solver's gradient says the
      remaining Newton step is at most ``tolerance`` standard errors in every coordinate
      (:func:`_stopping_gradient`; :data:`STOP_TOLERANCE` in the point fits).

  Returns:
    ``(params, beta)`` at the last iterate.
  """
  mask = params0.mask
  n, K = params0.u.shape
  dtype = params0.strength.dtype
  scale_s, scale_f, scale_b, total = _preconditioner(
    params0, pairs, outcome, weight, diff, l2_strength, l2_skew
  )
  scale = jnp.concatenate([scale_s, scale_f, scale_f, scale_b])

  def unflatten(x):
    s, u, v = x[:n], x[n : n + n * K].reshape(n, K), x[n + n * K : n + 2 * n * K].reshape(n, K)
    return IntransitiveParams(s, u, v, mask), x[n + 2 * n * K :]

  diff_t = diff.T  # once, outside the solver's loop
  x0 = jnp.concatenate(
    [params0.strength, params0.u.reshape(-1), params0.v.reshape(-1), jnp.asarray(beta0, dtype)]
  )

  def row_losses(x):
    params, beta = unflatten(x)
    h = _row_logits(params, beta, pairs, diff_t)
    return jax.nn.softplus(h) - outcome * h

  # Each row's loss is taken relative to its value at the start: the same minimizer, but the sum
  # over millions of rows then rounds like the (small) changes instead of the whole log-loss, so a
  # float32 line search still sees its decrease.
  base = row_losses(x0)

  def loss(z):
    x = z * scale
    nll = jnp.sum(weight * (row_losses(x) - base))
    return (nll + _ridge(unflatten(x)[0], l2_strength, l2_skew)) / total

  z = minimize_lbfgs(
    loss, x0 / scale, num_steps=num_steps, tolerance=_stopping_gradient(tolerance, total)
  )
  return unflatten(z * scale)


def tie_row_loss(h: jax.Array, tie_param: jax.Array, outcome: jax.Array, model: str) -> jax.Array:
  """``(m,)`` negative log-likelihood of each row under a tie model (a row at 1/2 is a tie)."""
  la, lb, lt = tie_log_probabilities(h, tie_param, model)
  return -jnp.where(outcome == 0.5, lt, outcome * la + (1 - outcome) * lb)


def fit_covariate_tie_model(
  params0: IntransitiveParams,
  tie0: jax.typing.ArrayLike,
  beta0: jax.typing.ArrayLike,
  pairs: PairIndex,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike,
  diff: jax.typing.ArrayLike,
  l2_strength: jax.typing.ArrayLike,
  l2_skew: jax.typing.ArrayLike,
  *,
  model: str,
  num_steps: int,
  tolerance: jax.typing.ArrayLike | None = None,
) -> tuple[IntransitiveParams, jax.Array, jax.Array]:
  """Penalized maximum likelihood of a tie model with covariates (pure; module docstring).

  Preconditioned like :func:`fit_covariate_model`; the tie parameter by the square root of a
  quarter of the total weight (times the square root of the total weight, as the others).

  Args:
    params0, beta0: initial parameters and ``(d,)`` coefficients.
    tie0: scalar initial tie parameter (Davidson ``log nu``, Rao-Kupper ``rho``).
    pairs, outcome, weight, diff, l2_strength, l2_skew: as :func:`fit_covariate_model`.
    model: ``"davidson"`` or ``"rao-kupper"`` (static).
    num_steps: L-BFGS iterations (static).
    tolerance: as :func:`fit_covariate_model`.

  Returns:
    ``(params, tie_param, beta)`` at the last iterate.
  """
  mask = params0.mask
  n, K = params0.u.shape
  dtype = params0.strength.dtype
  scale_s, scale_f, scale_b, total = _preconditioner(
    params0, pairs, outcome, weight, diff, l2_strength, l2_skew
  )
  scale_t = jax.lax.rsqrt(0.25 * jnp.sum(weight, keepdims=True) + jnp.asarray(_TINY, dtype))
  scale_t = scale_t * jnp.sqrt(total)
  scale = jnp.concatenate([scale_s, scale_f, scale_f, scale_t, scale_b])
  split = n + 2 * n * K

  def unflatten(x):
    s, u, v = x[:n], x[n : n + n * K].reshape(n, K), x[n + n * K : split].reshape(n, K)
    return IntransitiveParams(s, u, v, mask), x[split], x[split + 1 :]

  diff_t = diff.T
  x0 = jnp.concatenate(
    [
      params0.strength,
      params0.u.reshape(-1),
      params0.v.reshape(-1),
      jnp.reshape(jnp.asarray(tie0, dtype), (1,)),
      jnp.asarray(beta0, dtype),
    ]
  )

  def row_losses(x):
    params, t, beta = unflatten(x)
    return tie_row_loss(_row_logits(params, beta, pairs, diff_t), t, outcome, model)

  base = row_losses(x0)  # relative row losses, as in fit_covariate_model

  def loss(z):
    x = z * scale
    nll = jnp.sum(weight * (row_losses(x) - base))
    return (nll + _ridge(unflatten(x)[0], l2_strength, l2_skew)) / total

  z = minimize_lbfgs(
    loss, x0 / scale, num_steps=num_steps, tolerance=_stopping_gradient(tolerance, total)
  )
  return unflatten(z * scale)


def penalized_tie_hessian(
  params: IntransitiveParams,
  tie_param: jax.typing.ArrayLike,
  beta: jax.typing.ArrayLike,
  pairs: PairIndex,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike,
  diff: jax.typing.ArrayLike,
  l2_strength: jax.typing.ArrayLike,
  l2_skew: jax.typing.ArrayLike,
  *,
  model: str,
) -> jax.Array:
  """Exact Hessian of the penalized tie-model NLL in ``(s, U, V, tie, beta)`` (pure).

  The pair-level surrogate of :func:`penalized_hessian` with the tie parameter ``t``: with
  ``l_h, l_hh, l_ht, l_tt`` the derivatives of row ``r``'s loss in ``(h_r, t)``, the extra sums
  ``D_q = sum sigma_r l_ht``, ``e = sum l_ht x_r`` and ``T = sum l_tt`` add
  ``dt sum_q D_q dg_q + dt e . b + T dt^2 / 2``.

  Returns:
    ``(p, p)`` Hessian, ``p = n + 2 n K + 1 + d``, in the order of
    :func:`fit_covariate_tie_model`'s vector (``beta`` last).
  """
  mask = params.mask
  n, K = params.u.shape
  q = pairs.i.shape[0]
  beta = jnp.asarray(beta)
  tie_param = jnp.asarray(tie_param)
  g0 = intransitive_logits(params, pairs.i, pairs.j)
  sign = jnp.where(pairs.row_forward, 1, -1).astype(g0.dtype)
  h = _row_logits(params, beta, pairs, diff.T)

  def grads(hr, yr):
    f = lambda hh, tt: tie_row_loss(hh, tt, yr, model)  # noqa: E731
    lh = jax.grad(f, 0)(hr, tie_param)
    hess = jax.hessian(f, (0, 1))(hr, tie_param)
    return lh, hess[0][0], hess[0][1], hess[1][1]

  lh, lhh, lht, ltt = jax.vmap(grads)(h, outcome)
  lh, lhh, lht, ltt = (weight * v for v in (lh, lhh, lht, ltt))
  G = jax.ops.segment_sum(sign * lh, pairs.row_pair, num_segments=q)
  C = jax.ops.segment_sum(lhh, pairs.row_pair, num_segments=q)
  X = jax.ops.segment_sum((sign * lhh)[:, None] * diff, pairs.row_pair, num_segments=q)
  D = jax.ops.segment_sum(sign * lht, pairs.row_pair, num_segments=q)
  e = lht @ diff
  T = jnp.sum(ltt)
  XX = (diff * lhh[:, None]).T @ diff
  split = n + 2 * n * K

  def surrogate(x):
    theta, dt, b = x[:split], x[split], x[split + 1 :]
    s, u, v = theta[:n], theta[n : n + n * K].reshape(n, K), theta[n + n * K :].reshape(n, K)
    pr = IntransitiveParams(s, u, v, mask)
    dg = intransitive_logits(pr, pairs.i, pairs.j) - g0
    pair_part = jnp.sum(G * (dg + g0) + 0.5 * C * dg * dg + dg * (X @ b) + D * dg * dt)
    extra = 0.5 * b @ XX @ b + dt * (e @ b) + 0.5 * T * dt * dt
    return pair_part + extra + _ridge(pr, l2_strength, l2_skew)

  x = jnp.concatenate(
    [
      params.strength,
      params.u.reshape(-1),
      params.v.reshape(-1),
      jnp.zeros((1,), g0.dtype),
      jnp.zeros_like(beta),
    ]
  )
  return jax.hessian(surrogate)(x)


def _held_out_row_nll(params, tie, beta, pairs, outcome, weight, diff, model, tau):
  """Summed three-outcome NLL of the rows of weight ``weight`` (``"half"``: with the constant
  tie probability ``tau``, :func:`~ste_jax.evaluate._ties.three_outcome_log_probabilities`)."""
  h = _row_logits(params, beta, pairs, diff.T)
  la, lb, lt = three_outcome_log_probabilities(h, tie, model, tau)
  return -jnp.sum(weight * jnp.where(outcome == 0.5, lt, outcome * la + (1 - outcome) * lb))


_held_out_row_nll_jit = jax.jit(_held_out_row_nll, static_argnames=("model",))


def covariate_tie_fold_nll(
  comparisons: Comparisons, covariates: Covariates, half: ModelTournament, num_steps: int
):
  """The held-out NLL of each tie model with the covariates in its logit, per fold.

  The function :func:`~ste_jax.evaluate._tie_choice.cross_validate_tie_models` calls: ties as half
  wins by :func:`fit_covariate_model`, Davidson and Rao-Kupper by
  :func:`fit_covariate_tie_model`, each on the training weights of the rows (warm-started at the
  half-win fit, its ridges), all scored on the held-out rows' win/tie/loss likelihood.

  Args:
    comparisons: ``m`` rows (an outcome of exactly 1/2 is a tie).
    covariates: their :class:`~ste_jax.evaluate.Covariates` (checked here).
    half: the uncontrolled ties-as-half-wins fit (rank, ridges, start).
    num_steps: L-BFGS steps of each fit.

  Returns:
    ``nll(train_w, test_w, tau) -> {model: summed held-out NLL}`` (``(m,)`` row weights).

  Raises:
    InputError: covariates of the wrong shape or with non-finite values.
  """
  check_covariates(comparisons, covariates)
  dtype = comparisons.weight.dtype
  diff = jnp.asarray(covariates.diff, dtype)
  pairs = observed_pairs(comparisons)
  outcome = comparisons.outcome
  c = half.chosen
  l2s, l2k = jnp.asarray(c.l2_strength, dtype), jnp.asarray(c.l2_skew, dtype)
  beta0 = jnp.zeros((covariates.num_features,), dtype)
  rows = (pairs, outcome)
  stop = dict(num_steps=num_steps, tolerance=STOP_TOLERANCE)

  def nll(train_w, test_w, tau):
    params, beta = _fit_covariates_jit(half.params, beta0, *rows, train_w, diff, l2s, l2k, **stop)
    zero = jnp.zeros((), dtype)
    score = _held_out_row_nll_jit(params, zero, beta, *rows, test_w, diff, "half", tau)
    out = {"half": float(score)}
    for model in TIE_MODELS[1:]:
      params, tie, beta = _fit_covariate_ties_jit(
        half.params, zero, beta0, *rows, train_w, diff, l2s, l2k, model=model, **stop
      )
      out[model] = float(_held_out_row_nll_jit(params, tie, beta, *rows, test_w, diff, model, tau))
    return out

  return nll


def _ridge(params: IntransitiveParams, l2_strength, l2_skew) -> jax.Array:
  um, vm = params.u * params.mask[None, :], params.v * params.mask[None, :]
  return 0.5 * l2_strength * jnp.sum(params.strength**2) + 0.5 * l2_skew * (
    jnp.sum(um * um) + jnp.sum(vm * vm)
  )


def penalized_hessian(
  params: IntransitiveParams,
  beta: jax.typing.ArrayLike,
  pairs: PairIndex,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike,
  diff: jax.typing.ArrayLike,
  l2_strength: jax.typing.ArrayLike,
  l2_skew: jax.typing.ArrayLike,
) -> jax.Array:
  """Exact Hessian of the penalized NLL (not divided by the weight) in ``(s, U, V, beta)`` (pure).

  The row sums are folded into per-pair sums: with ``l'_r``, ``l''_r`` the first and second
  derivatives of row ``r``'s loss in ``h_r`` and ``sigma_r = +-1`` its orientation,
  ``G_q = sum sigma_r l'_r``, ``C_q = sum l''_r`` and ``X_q = sum sigma_r l''_r x_r`` over the
  rows of pair ``q`` give the Hessian as that of the pair-level surrogate
  ``sum_q [G_q g_q + C_q (g_q - g_q^0)^2 / 2 + (g_q - g_q^0) X_q . b] + b' (X' L'' X) b / 2``
  plus the ridges, taken at ``b = 0``.

  Returns:
    ``(p, p)`` Hessian, ``p = n + 2 n K + d``, in the flat order of
    :func:`fit_covariate_model`'s vector.
  """
  mask = params.mask
  n, K = params.u.shape
  q = pairs.i.shape[0]
  beta = jnp.asarray(beta)
  g0 = intransitive_logits(params, pairs.i, pairs.j)
  sign = jnp.where(pairs.row_forward, 1, -1).astype(g0.dtype)
  p = jax.nn.sigmoid(_row_logits(params, beta, pairs, diff.T))
  d1 = weight * (p - outcome)
  d2 = weight * p * (1 - p)
  G = jax.ops.segment_sum(sign * d1, pairs.row_pair, num_segments=q)
  C = jax.ops.segment_sum(d2, pairs.row_pair, num_segments=q)
  X = jax.ops.segment_sum((sign * d2)[:, None] * diff, pairs.row_pair, num_segments=q)
  XX = (diff * d2[:, None]).T @ diff

  def surrogate(x):
    theta, b = x[: n + 2 * n * K], x[n + 2 * n * K :]
    s, u, v = theta[:n], theta[n : n + n * K].reshape(n, K), theta[n + n * K :].reshape(n, K)
    pr = IntransitiveParams(s, u, v, mask)
    dg = intransitive_logits(pr, pairs.i, pairs.j) - g0
    pair_part = jnp.sum(G * (dg + g0) + 0.5 * C * dg * dg + dg * (X @ b))
    return pair_part + 0.5 * b @ XX @ b + _ridge(pr, l2_strength, l2_skew)

  x = jnp.concatenate(
    [params.strength, params.u.reshape(-1), params.v.reshape(-1), jnp.zeros_like(beta)]
  )
  return jax.hessian(surrogate)(x)


_fit_covariates_jit = gather_friendly_jit(fit_covariate_model, static_argnames=("num_steps",))
_fit_covariate_ties_jit = gather_friendly_jit(
  fit_covariate_tie_model, static_argnames=("model", "num_steps")
)
_hessian_jit = jax.jit(penalized_hessian)
_tie_hessian_jit = jax.jit(penalized_tie_hessian, static_argnames=("model",))


@dataclasses.dataclass(frozen=True)
class ControlledTournament:
  """A fitted controlled model tournament, its coefficients and the uncontrolled fit beside it.

  Attributes:
    P: ``(n, n)`` the controlled tournament, ``sigmoid(s_a - s_b + skew(a, b))`` (every feature
      difference zero; diagonal 1/2).
    params: the fitted :class:`~ste_jax.models.IntransitiveParams`.
    beta: ``(d,)`` fitted coefficients (logit per unit of normalized difference).
    beta_se: ``(d,)`` their standard errors (inverse penalized Hessian; module docstring).
    names: the ``d`` covariate names.
    uncontrolled: the :class:`~ste_jax.evaluate.ModelTournament` without covariates (it chose
      the rank and ridges used here).
    num_steps: L-BFGS steps of the fit.
    verdict_changes: a report line naming the agents whose hard Top-Cycle / Uncovered verdict
      differs between the uncontrolled and the controlled tournament (set by
      :class:`~ste_jax.evaluate.ModelEstimator`; ``""`` when not computed).
    tie_model: ``"half"`` (ties count half a win), ``"davidson"`` or ``"rao-kupper"`` (ties as
      their own outcome; ``P`` is then ``P(a wins | decisive)`` at zero feature difference).
    tie_param: the fitted tie parameter (``None`` for ``"half"``).
    tie_cv: the line of :func:`~ste_jax.evaluate._tie_choice.choose_tie_model` when the tie
      model was chosen by cross-validation (``ModelEstimator(tie_model="auto")``), else ``""``.
  """

  P: jax.Array
  params: IntransitiveParams
  beta: jax.Array
  beta_se: jax.Array
  names: tuple[str, ...]
  uncontrolled: ModelTournament
  num_steps: int
  verdict_changes: str = ""
  tie_model: str = "half"
  tie_param: jax.Array | None = None
  tie_cv: str = ""

  @property
  def chosen(self):
    """The :class:`~ste_jax.evaluate.Candidate` (rank, ridges) used, chosen on the uncontrolled
    comparisons."""
    return self.uncontrolled.chosen

  def beta_intervals(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` two-sided Wald intervals of ``beta`` at ``level`` (float64 arrays)."""
    if not 0 < level < 1:
      raise ValueError(f"level must be in (0, 1), got {level!r}.")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    b = np.asarray(self.beta, dtype=np.float64)
    se = np.asarray(self.beta_se, dtype=np.float64)
    return b - z * se, b + z * se

  def describe_beta(self, level: float = 0.95) -> str:
    """One line: each coefficient with its interval."""
    lo, hi = self.beta_intervals(level)
    parts = [
      f"{name} {float(b):+.3f} [{float(l):+.3f}, {float(h):+.3f}]"
      for name, b, l, h in zip(self.names, np.asarray(self.beta), lo, hi)
    ]
    return (
      "covariate coefficients (logit per standard deviation of the normalized difference; "
      f"position: for being shown first; {level:.0%} Wald intervals from the inverse penalized "
      "Hessian): " + "; ".join(parts)
    )

  def describe(self) -> str:
    """One line: the uncontrolled model's description and the fitted coefficients."""
    ties = ""
    if self.tie_model != "half":
      t = float(self.tie_param)
      value = np.exp(t) if self.tie_model == "davidson" else np.exp(np.logaddexp(0.0, t))
      name = "Davidson nu" if self.tie_model == "davidson" else "Rao-Kupper theta"
      ties = f", ties by the {self.tie_model} tie model ({name} = {value:.3f})"
    line = (
      f"{self.uncontrolled.describe()}; controlled for {', '.join(self.names)} (tournament at "
      f"zero feature difference, no record bands{ties}): {self.describe_beta()}"
    )
    line += f"; {self.tie_cv}" if self.tie_cv else ""
    return line + (f"; {self.verdict_changes}" if self.verdict_changes else "")

  def refit_state(self) -> tuple:
    """``(params, beta, settings)`` (and the tie parameter with a tie model): the arrays of a
    warm-started refit."""
    c = self.chosen
    settings = jnp.asarray([c.l2_strength, c.l2_skew], dtype=self.P.dtype)
    if self.tie_model != "half":
      return self.params, self.beta, settings, self.tie_param
    return self.params, self.beta, settings


def refit_controlled(
  state: tuple,
  pairs: PairIndex,
  outcome: jax.typing.ArrayLike,
  weight: jax.typing.ArrayLike,
  diff: jax.typing.ArrayLike,
  *,
  num_steps: int,
  tie_model: str = "half",
) -> jax.Array:
  """The controlled tournament refitted on reweighted rows, warm-started (pure; vmaps).

  Args:
    state: :meth:`ControlledTournament.refit_state`.
    pairs: the :class:`~ste_jax.evaluate._model_estimator.PairIndex` of the rows.
    outcome, weight: ``(m,)`` the rows' outcomes and (replica) weights.
    diff: ``(m, d)`` feature differences of the rows.
    num_steps: L-BFGS steps (static).
    tie_model: the fit's tie model (static).

  Returns:
    ``(n, n)`` controlled tournament.
  """
  if tie_model != "half":
    params, beta, settings, tie = state
    params, tie, _ = fit_covariate_tie_model(
      params,
      tie,
      beta,
      pairs,
      outcome,
      weight,
      diff,
      settings[0],
      settings[1],
      model=tie_model,
      num_steps=num_steps,
    )
    return tie_tournament(params, tie, tie_model)
  params, beta, settings = state
  params, _ = fit_covariate_model(
    params, beta, pairs, outcome, weight, diff, settings[0], settings[1], num_steps=num_steps
  )
  return intransitive_tournament(params)


def check_covariates(comparisons: Comparisons, covariates: Covariates) -> None:
  """Raises :class:`~ste_jax.InputError` unless ``covariates`` has one finite row per comparison."""
  diff = np.asarray(covariates.diff)
  m = comparisons.num_comparisons
  if diff.ndim != 2 or diff.shape[0] != m or diff.shape[1] != len(covariates.names):
    raise InputError(
      f"covariates: diff must have shape ({m}, {len(covariates.names)}) (one row per comparison, "
      f"one column per name), got {diff.shape}."
    )
  bad = ~np.isfinite(diff).all(axis=1)
  if bad.any():
    rows = np.flatnonzero(bad)
    raise InputError(
      f"covariates: {rows.size} of {m} rows are not finite (first rows "
      f"{', '.join(str(int(r)) for r in rows[:5])})."
    )


def fit_controlled_tournament(
  key: jax.Array | None,
  comparisons: Comparisons,
  covariates: Covariates,
  *,
  num_steps: int = 100,
  tie_model: str = "half",
  uncontrolled: ModelTournament | None = None,
  **model_settings: Any,
) -> ControlledTournament:
  """Fits the controlled model tournament and, next to it, the uncontrolled one.

  The uncontrolled fit is :func:`~ste_jax.evaluate.fit_model_tournament` (``model_settings``
  forwarded: grids, folds, record tolerance); its chosen rank and ridges are refitted with the
  covariates on the rows (module docstring), warm-started at its parameters.

  Args:
    key: PRNG key of the uncontrolled fit (folds, initial factors).
    comparisons: ``m`` rows.
    covariates: their :class:`~ste_jax.evaluate.Covariates`, ``diff`` of shape ``(m, d)``.
    num_steps: L-BFGS steps of the controlled fit.
    tie_model: ``"half"`` (ties count half a win), ``"davidson"`` or ``"rao-kupper"`` (one
      likelihood with the covariates and ties as their own outcome; module docstring).
    uncontrolled: the uncontrolled fit of ``comparisons`` if already made (else fitted here).
    **model_settings: keyword arguments of :func:`~ste_jax.evaluate.fit_model_tournament`.

  Returns:
    A :class:`ControlledTournament`.

  Raises:
    InputError: covariates of the wrong shape or with non-finite values.
    ValueError: the settings errors of :func:`~ste_jax.evaluate.fit_model_tournament`, or
      ``num_steps < 1``.

  Example:
    >>> import numpy as np
    >>> from ste_jax.evaluate import normalize_differences
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 3, 600); b = (a + rng.integers(1, 3, 600)) % 3
    >>> length = rng.normal(size=600)  # the longer answer wins more often
    >>> won = rng.random(600) < 1 / (1 + np.exp(-1.5 * length))
    >>> c = Comparisons.from_arrays(a, b, won.astype(float))
    >>> fit = fit_controlled_tournament(
    ...   None, c, normalize_differences({"length": length}), ranks=(0,))
    >>> lo, hi = fit.beta_intervals()
    >>> bool(lo[0] < 1.5 < hi[0])
    True
  """
  if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)) or num_steps < 1:
    raise ValueError(f"num_steps must be an integer >= 1, got {num_steps!r}.")
  if tie_model not in TIE_MODELS:
    raise ValueError(f"tie_model must be one of {TIE_MODELS}, got {tie_model!r}.")
  check_covariates(comparisons, covariates)
  if uncontrolled is None:
    uncontrolled = fit_model_tournament(key, comparisons, **model_settings)
  dtype = comparisons.weight.dtype
  diff = jnp.asarray(covariates.diff, dtype)
  pairs = observed_pairs(comparisons)
  c = uncontrolled.chosen
  l2s, l2k = jnp.asarray(c.l2_strength, dtype), jnp.asarray(c.l2_skew, dtype)
  data = (pairs, comparisons.outcome, comparisons.weight, diff, l2s, l2k)
  beta0 = jnp.zeros((covariates.num_features,), dtype)
  if tie_model != "half":
    params, tie, beta = _fit_covariate_ties_jit(
      uncontrolled.params,
      jnp.zeros((), dtype),
      beta0,
      *data,
      model=tie_model,
      num_steps=num_steps,
      tolerance=STOP_TOLERANCE,
    )
    active = _leading_components(params, c.rank)  # the masked components are null directions
    H = _tie_hessian_jit(active, tie, beta, *data, model=tie_model)
    P = tie_tournament(params, tie, tie_model)
  else:
    params, beta = _fit_covariates_jit(
      uncontrolled.params, beta0, *data, num_steps=num_steps, tolerance=STOP_TOLERANCE
    )
    H = _hessian_jit(_leading_components(params, c.rank), beta, *data)
    P, tie = intransitive_tournament(params), None
  beta_se = beta_standard_errors(np.asarray(H, dtype=np.float64), covariates.num_features)
  return ControlledTournament(
    P=P,
    params=params,
    beta=beta,
    beta_se=jnp.asarray(beta_se, dtype),
    names=covariates.names,
    uncontrolled=uncontrolled,
    num_steps=num_steps,
    tie_model=tie_model,
    tie_param=tie,
  )


def beta_standard_errors(hessian: np.ndarray, num_features: int) -> np.ndarray:
  """``(d,)`` square roots of the last ``d`` diagonal entries of the pseudo-inverse Hessian.

  Eigenvalues below ``1e-10`` times the largest are treated as zero (unidentified directions);
  a coefficient that is itself unidentified (collinear covariates) gets ``inf``.
  """
  h = 0.5 * (hessian + hessian.T)
  vals, vecs = np.linalg.eigh(h)
  keep = vals > 1e-10 * max(float(vals.max()), 0.0)
  inv = (vecs[:, keep] / vals[keep]) @ vecs[:, keep].T
  var = np.diag(inv)[-num_features:]
  # A direction moving beta with no curvature: beta is not identified there.
  null = vecs[-num_features:, ~keep]
  unidentified = np.abs(null).max(axis=1) > 1e-6 if null.size else np.zeros(num_features, bool)
  return np.where(unidentified, math.inf, np.sqrt(np.maximum(var, 0.0)))


def verdict_changes(
  uncontrolled: tuple[jax.Array, jax.Array],
  controlled: tuple[jax.Array, jax.Array],
  agents: tuple[str, ...],
) -> str:
  """A report line: the agents entering or leaving each hard core once the controls apply.

  Args:
    uncontrolled, controlled: ``(top_cycle, uncovered)`` boolean ``(n,)`` memberships.
    agents: the agent names.

  Returns:
    E.g. ``"under control: Top Cycle leaves a, enters b; Uncovered unchanged"``.

  Example:
    >>> import numpy as np
    >>> t, f = np.array([True, False]), np.array([False, True])
    >>> verdict_changes((t, t), (f, t), ("a", "b"))
    'under control: Top Cycle leaves a, enters b; Uncovered unchanged'
  """
  parts = []
  for concept, before, after in zip(("Top Cycle", "Uncovered"), uncontrolled, controlled):
    before, after = np.asarray(before, bool), np.asarray(after, bool)
    left = [agents[i] for i in np.flatnonzero(before & ~after)]
    entered = [agents[i] for i in np.flatnonzero(after & ~before)]
    moves = ([f"leaves {', '.join(left)}"] if left else []) + (
      [f"enters {', '.join(entered)}"] if entered else []
    )
    parts.append(f"{concept} {', '.join(moves) if moves else 'unchanged'}")
  return "under control: " + "; ".join(parts)


@dataclasses.dataclass(frozen=True)
class StaticTieModel:
  """A tie model's name as a pytree with no leaves (static under ``jit`` and ``vmap``)."""

  name: str


jax.tree_util.register_dataclass(StaticTieModel, data_fields=[], meta_fields=["name"])


def controlled_replica_state(
  fit: ControlledTournament, comparisons: Comparisons, covariates: Covariates
) -> dict:
  """The state of the controlled estimator's bootstrap replicas (a pytree of arrays).

  It holds the fit's rows (pair index, outcomes, weights, feature differences), the warm start,
  the fit's tie model (static: a refit under ``jit`` knows its likelihood from the state) and a
  map of each row to the replica's cell: the identity until :func:`map_rows_to_cells`.
  """
  m = comparisons.num_comparisons
  dtype = comparisons.weight.dtype
  return {
    "refit": fit.refit_state(),
    "tie_model": StaticTieModel(fit.tie_model),
    "pairs": observed_pairs(comparisons),
    "outcome": comparisons.outcome,
    "weight": comparisons.weight,
    "diff": jnp.asarray(covariates.diff, dtype),
    "keys": jnp.asarray(
      np.stack(
        [np.asarray(comparisons.context), np.asarray(comparisons.a), np.asarray(comparisons.b)], 1
      )
    ),
    "row_cell": jnp.arange(m, dtype=jnp.int32),
    "share": jnp.ones((m,), dtype),
  }


def map_rows_to_cells(state: dict, cells: Comparisons) -> dict:
  """``state`` with each fit row mapped to its cell of ``cells`` (eager).

  The bootstrap resamples count cells (:func:`~ste_jax.data.merge_into_cells`); a controlled
  replica gives each row its cell's replica weight times the row's share of the cell's weight,
  so the cell totals are resampled and the covariate mix within a cell is kept.

  Raises:
    InputError: a row whose ``(context, a, b, outcome)`` is not a cell of ``cells``.
  """
  n = cells.num_agents
  keys = np.asarray(state["keys"], dtype=np.int64)
  outcome = np.asarray(state["outcome"])
  values = np.unique(np.concatenate([outcome, np.asarray(cells.outcome)]))

  def code(context, a, b, y):  # the cell key of merge_into_cells(..., by_outcome=True)
    return ((context * n + a) * n + b) * values.size + np.searchsorted(values, y)

  cell_code = code(
    np.asarray(cells.context, dtype=np.int64),
    np.asarray(cells.a, dtype=np.int64),
    np.asarray(cells.b, dtype=np.int64),
    np.asarray(cells.outcome),
  )
  row_code = code(keys[:, 0], keys[:, 1], keys[:, 2], outcome)
  order = np.argsort(cell_code, kind="stable")
  pos = np.clip(np.searchsorted(cell_code[order], row_code), 0, max(cell_code.size - 1, 0))
  row_cell = order[pos] if cell_code.size else np.zeros_like(row_code)
  if cell_code.size == 0 or np.any(cell_code[row_cell] != row_code):
    raise InputError("controlled bootstrap: the replica cells do not cover the fitted rows.")
  w = np.asarray(state["weight"], dtype=np.float64)
  cell_w = np.bincount(row_cell, weights=w, minlength=cell_code.size)
  rows = np.bincount(row_cell, minlength=cell_code.size)
  share = np.where(
    cell_w[row_cell] > 0, w / np.where(cell_w > 0, cell_w, 1.0)[row_cell], 1.0 / rows[row_cell]
  )
  dtype = state["weight"].dtype
  return {
    **state,
    "row_cell": jnp.asarray(row_cell, jnp.int32),
    "share": jnp.asarray(share, dtype),
  }


def controlled_replica_edges(state: dict, cells: Comparisons, *, num_steps: int) -> jax.Array:
  """``(n, n)`` controlled tournament refitted on a replica of the cells (pure).

  Each fit row takes its cell's replica weight times its share and its cell's outcome: a Poisson
  replica (cells merged by outcome) changes only the weights; a parametric one
  (:meth:`~ste_jax.evaluate.ModelEstimator.parametric_design`, one cell per row) the outcomes.
  """
  weight = cells.weight[state["row_cell"]] * state["share"]
  outcome = cells.outcome[state["row_cell"]]
  return refit_controlled(
    state["refit"],
    state["pairs"],
    outcome,
    weight,
    state["diff"],
    num_steps=num_steps,
    tie_model=state["tie_model"].name,
  )
