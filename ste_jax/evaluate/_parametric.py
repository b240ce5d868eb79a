"""Parametric bootstrap rows of the model estimator with covariates or tie outcomes.

The default parametric replica redraws each count cell's wins from the edge ``P̂[a, b]``
(:func:`~ste_jax.evaluate._replicas.resample_model_outcomes`). That is the fitted model only when
every battle of a pair has the edge's win probability and two outcomes. Here the replicas redraw
from the fitted model itself:

* *Units.* A row of weight ``w`` stands for ``g = max(1, round(w))`` battles (as in the default
  bootstrap). With integer weights and merging allowed, rows with the same ``(a, b)`` and the
  same feature differences are merged first (weights summed, contexts pooled: the model is
  context-free), which changes no probability; e.g. a position control alone leaves one unit per
  ordered pair.
* *Covariates, ties as half wins* (:func:`covariate_units`): unit ``u``'s outcome is
  ``Binomial(g_u, p_u) / g_u`` with ``p_u = sigmoid(h(a, b) + beta . x_u)``, the covariate term
  included; the weights stay.
* *Tie models* (:func:`tie_outcome_draws`): each unit becomes three rows, outcomes ``1``, ``1/2``
  and ``0`` (a win, a tie, a loss of ``a``), whose replica weights are ``w / g`` times the counts
  of one ``Multinomial(g, (P(a), P(tie), P(b)))`` draw under the Davidson or Rao-Kupper model
  (with ``beta . x_u`` in ``h`` when there are covariates). The draw is the chain
  ``wins ~ Binomial(g, P(a))``, ``ties ~ Binomial(g - wins, P(tie) / (1 - P(a)))``.

Draws are made on the host with NumPy from :func:`~ste_jax._host_random.numpy_generator` of the
replica key, so the same key gives the same replicas.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._host_random import numpy_generator
from ste_jax.data import Comparisons
from ste_jax.evaluate._ties import tie_log_probabilities
from ste_jax.models._intransitive import IntransitiveParams, intransitive_logits


class Units(NamedTuple):
  """The battles a parametric replica redraws, grouped into units (eager, host arrays).

  Attributes:
    a, b: ``(u,)`` int agents of each unit, in the rows' orientation.
    diff: ``(u, d)`` feature differences of the unit's battles (``d = 0`` without covariates).
    weight: ``(u,)`` summed row weights.
  """

  a: np.ndarray
  b: np.ndarray
  diff: np.ndarray
  weight: np.ndarray


def battle_units(comparisons: Comparisons, diff: np.ndarray | None, *, merge: bool) -> Units:
  """The :class:`Units` of ``comparisons`` (rows merged by ``(a, b, diff)`` when ``merge``).

  Args:
    comparisons: ``m`` rows.
    diff: ``(m, d)`` feature differences, or ``None`` (no covariates).
    merge: merge rows with equal ``(a, b, diff)``; only done when every weight is an integer (a
      row of fractional weight ``w`` stands for ``max(1, round(w))`` battles).
  """
  a = np.asarray(comparisons.a, dtype=np.int64)
  b = np.asarray(comparisons.b, dtype=np.int64)
  weight = np.asarray(comparisons.weight)
  x = np.zeros((a.size, 0)) if diff is None else np.asarray(diff, dtype=np.float64)
  if not (merge and np.all(weight == np.round(weight))) or a.size == 0:
    return Units(a, b, x, weight)
  table = np.column_stack([a.astype(np.float64), b.astype(np.float64), x])
  keys, inverse = np.unique(table, axis=0, return_inverse=True)
  total = np.bincount(inverse.reshape(-1), weights=weight.astype(np.float64), minlength=len(keys))
  return Units(
    keys[:, 0].astype(np.int64),
    keys[:, 1].astype(np.int64),
    keys[:, 2:],
    total.astype(weight.dtype),
  )


def unit_logits(
  params: IntransitiveParams, beta: jax.typing.ArrayLike | None, units: Units
) -> np.ndarray:
  """``(u,)`` float64 model logits ``h(a, b) + beta . x`` of the units (eager)."""
  h = np.asarray(
    intransitive_logits(params, jnp.asarray(units.a), jnp.asarray(units.b)), dtype=np.float64
  )
  if beta is not None and units.diff.shape[1]:
    h = h + units.diff @ np.asarray(beta, dtype=np.float64)
  return h


def outcome_probabilities(h: np.ndarray, tie_param: float, model: str) -> np.ndarray:
  """``(u, 3)`` float64 ``(P(a), P(tie), P(b))`` of logits ``h`` under a tie model.

  ``model``: ``"davidson"`` or ``"rao-kupper"``
  (:func:`~ste_jax.evaluate._ties.tie_log_probabilities`).
  """
  la, lb, lt = tie_log_probabilities(
    jnp.asarray(h), jnp.asarray(tie_param, jnp.asarray(h).dtype), model
  )
  p = np.exp(np.stack([np.asarray(la), np.asarray(lt), np.asarray(lb)], axis=1).astype(np.float64))
  return p / p.sum(axis=1, keepdims=True)


def unit_games(weight: np.ndarray) -> np.ndarray:
  """``(u,)`` int64 battles a unit of weight ``w`` stands for: ``max(1, round(w))``."""
  return np.maximum(np.rint(np.asarray(weight, dtype=np.float64)), 1).astype(np.int64)


def tie_outcome_rows(units: Units, template: Comparisons) -> Comparisons:
  """The ``3u`` rows of a tie-model replica: each unit as a win, a tie and a loss of its ``a``.

  Rows ``[0, u)`` are the wins (outcome 1), ``[u, 2u)`` the ties (1/2), ``[2u, 3u)`` the losses
  (0); every weight is the unit's (the replicas replace them). Agents and the first context of
  ``template`` are kept.
  """
  dtype = template.weight.dtype
  u = units.a.size
  return Comparisons(
    a=jnp.asarray(np.tile(units.a, 3), jnp.int32),
    b=jnp.asarray(np.tile(units.b, 3), jnp.int32),
    outcome=jnp.asarray(np.repeat([1.0, 0.5, 0.0], u), dtype),
    context=jnp.zeros((3 * u,), jnp.int32),
    weight=jnp.asarray(np.tile(units.weight, 3), dtype),
    agents=template.agents,
    contexts=template.contexts[:1],
  )


def tie_outcome_draws(
  key: jax.Array, probabilities: np.ndarray, weight: np.ndarray, num_replicas: int
) -> np.ndarray:
  """``(R, 3u)`` replica weights of :func:`tie_outcome_rows`: multinomial wins, ties, losses.

  Args:
    key: PRNG key (host draws from :func:`~ste_jax._host_random.numpy_generator`).
    probabilities: ``(u, 3)`` ``(P(a), P(tie), P(b))`` per unit.
    weight: ``(u,)`` unit weights (``g = max(1, round(w))`` battles each).
    num_replicas: ``R``.

  Returns:
    ``(R, 3u)`` weights ``w / g`` times the drawn counts, in ``weight``'s dtype.

  Example:
    >>> w = tie_outcome_draws(jax.random.key(0), np.array([[0.5, 0.2, 0.3]]), np.array([10.0]), 2)
    >>> w.shape, bool(np.all(w.sum(axis=1) == 10))
    ((2, 3), True)
  """
  weight = np.asarray(weight)
  games = unit_games(weight)
  p = np.clip(np.asarray(probabilities, dtype=np.float64), 0.0, 1.0)
  rng = numpy_generator(key)
  shape = (num_replicas, games.size)
  wins = rng.binomial(games, p[:, 0], shape)
  rest = np.clip(1.0 - p[:, 0], 0.0, 1.0)
  tie_given_rest = np.where(rest > 0, np.clip(p[:, 1] / np.where(rest > 0, rest, 1.0), 0, 1), 0)
  ties = rng.binomial(games - wins, tie_given_rest)
  losses = games - wins - ties
  scale = weight.astype(np.float64) / games
  counts = np.concatenate([wins, ties, losses], axis=1)
  return (counts * np.tile(scale, 3)).astype(weight.dtype)
