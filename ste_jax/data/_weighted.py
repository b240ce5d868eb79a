"""Weighted probabilistic tournaments (paper Appendix, "Extension to Weighted Tournaments").

A weighted probabilistic tournament is a pair ``(P, W)``: a probabilistic tournament ``P`` and a
symmetric non-negative weight matrix ``W`` giving the confidence in each comparison. Estimated
from data, the natural confidence is the amount of evidence behind ``P[a, b]``: the (weighted)
number of comparisons of the pair. The weighted soft majority edge is

.. math::

  D_\\tau(a, b; W) = \\sigma\\left(\\frac{W_{ab} (P_{ab} - 1/2)}{\\tau}\\right),

so that pairs with little evidence get edges near 1/2 both ways.
"""

import jax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, as_temperature, check_square, eye_mask
from ste_jax._results import result_type

from ._comparisons import Comparisons
from ._counts import PairCounts, pair_counts, win_rate_tournament

CONFIDENCES = ("count", "sqrt", "normalized")


@result_type
class WeightedTournament:
  """A weighted probabilistic tournament ``(P, W)``, each of shape ``(..., n, n)``.

  Attributes:
    P: the win-rate tournament (see :func:`~ste_jax.data.win_rate_tournament`).
    W: symmetric confidence weights ``>= 0``, zero on the diagonal and for unobserved pairs.
  """

  P: jax.Array
  W: jax.Array


def weighted_tournament(
  data: Comparisons | PairCounts,
  *,
  confidence: str = "count",
  missing: float = 0.5,
  tie_policy: str | None = None,
  by_context: bool = False,
) -> WeightedTournament:
  """A weighted probabilistic tournament ``(P, W)`` from comparisons (paper Appendix).

  ``P`` is :func:`~ste_jax.data.win_rate_tournament` of the same data; ``W`` measures the
  evidence behind each pair from ``totals[a, b]`` (weighted comparisons counted under the tie
  policy):

  * ``"count"``: ``W = totals``. Then ``W_ab (P_ab - 1/2) = (w_ab - w_ba) / 2`` is half the win
    margin in comparisons.
  * ``"sqrt"``: ``W = sqrt(totals)``, so ``2 W_ab (P_ab - 1/2)`` is the z-statistic of the win
    rate against 1/2 (its standard error is ``1 / (2 sqrt(totals))``).
  * ``"normalized"``: ``W = totals / max(totals)`` in ``[0, 1]`` (per tournament; all zeros if
    nothing was observed).

  Args:
    data: a :class:`Comparisons` or a :class:`PairCounts`.
    confidence: ``"count"``, ``"sqrt"`` or ``"normalized"`` (static).
    missing: value of ``P`` for unobserved pairs (their weight is 0 anyway).
    tie_policy: as in :func:`~ste_jax.data.win_rate_tournament`.
    by_context: one weighted tournament per context, shapes ``(num_contexts, n, n)``.

  Returns:
    A :class:`WeightedTournament` ``(P, W)``.
  """
  if confidence not in CONFIDENCES:
    raise ValueError(f"confidence must be one of {CONFIDENCES}, got {confidence!r}.")
  if isinstance(data, PairCounts):
    if tie_policy is not None or by_context:
      raise ValueError("tie_policy and by_context apply when counting; pass them to pair_counts().")
    counts = data
  else:
    counts = pair_counts(
      data, tie_policy="half" if tie_policy is None else tie_policy, by_context=by_context
    )
  p = win_rate_tournament(counts, missing=missing)
  totals = counts.totals
  if confidence == "count":
    w = totals
  elif confidence == "sqrt":
    w = jnp.sqrt(totals)
  else:
    top = jnp.max(totals, axis=(-2, -1), keepdims=True)
    w = totals / jnp.where(top > 0, top, jnp.ones_like(top))
  n = totals.shape[-1]
  diag = jnp.broadcast_to(jnp.eye(n, dtype=bool), w.shape)
  return WeightedTournament(P=p, W=jnp.where(diag, jnp.zeros_like(w), w))


def weighted_soft_majority_edges(
  P: jax.typing.ArrayLike, W: jax.typing.ArrayLike, *, tau: jax.typing.ArrayLike
) -> jax.Array:
  """Weighted soft majority edges ``D_tau(a, b; W) = sigma(W_ab (P_ab - 1/2) / tau)``.

  Paper Appendix, "Extension to Weighted Tournaments"; with ``W = 1`` it is the soft majority
  edge of paper §3.2 (:func:`ste_jax.ops.soft_majority_edges`). An unobserved pair
  (``W_ab = 0``) gets 1/2 both ways; the diagonal is 0. ``P`` must be finite (a NaN ``missing``
  value times a zero weight is still NaN).

  Args:
    P: ``(..., n, n)`` probabilistic tournament.
    W: ``(..., n, n)`` symmetric non-negative weights (same dtype as ``P``).
    tau: edge temperature ``tau > 0`` (traced scalar; a new value does not recompile).

  Returns:
    ``D`` of shape ``(..., n, n)`` with values in ``(0, 1)`` off the diagonal.
  """
  p = as_float_array(P, "P")
  w = as_float_array(W, "W")
  check_square(p, "P")
  if w.shape != p.shape or w.dtype != p.dtype:
    raise ValueError(
      f"W must have P's shape {p.shape} and dtype {p.dtype}; got {w.shape} and {w.dtype}."
    )
  t = as_temperature(tau, p, "tau")
  d = jax.nn.sigmoid(w * (p - 0.5) / t)
  return jnp.where(eye_mask(d), jnp.zeros_like(d), d)
