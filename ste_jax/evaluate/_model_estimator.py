"""The model-based tournament estimator (paper Stage 1; appendix "Handling Sparse Data").

A pairwise model is fitted to the observed comparisons and its predicted win probability is used
for *every* pair, observed or not: structured matrix completion. The model is Bradley-Terry plus a
low-rank skew-symmetric intransitive term (:mod:`ste_jax.models._intransitive`), fitted by
penalized maximum likelihood (ties count half a win to each side):

.. math::

  \\min_{s, U, V}\\ \\sum_{\\{a,b\\}} \\big[w_{ab}\\,\\mathrm{softplus}(-h_{ab}) + w_{ba}\\,
  \\mathrm{softplus}(h_{ab})\\big] + \\tfrac{\\lambda_s}{2}\\lVert s\\rVert^2
  + \\tfrac{\\lambda_k}{2}\\big(\\lVert U\\rVert^2 + \\lVert V\\rVert^2\\big).

The ridge ``lambda_s`` is a Gaussian prior on the strengths: an agent with one won match gets a
modest strength instead of an infinite one, so it cannot top the table on one game.

*Head-to-head records.* A global low-rank model can smooth over a cycle confined to a few
well-observed agents (three leaders who beat each other 10-0 in turn among hundreds of agents).
So every observed pair ``{a, b}`` with ``n_ab`` games, ``w_ab`` of them won by ``a``, may
deviate from the model by a pair effect ``d_ab`` (``h_ab + d_ab``; ``d_ba = -d_ab``, unobserved
pairs ``d = 0``) under an L1 penalty ``lambda_ab |d_ab|`` with
``lambda_ab = (c / 2) sqrt(n_ab)``, ``c`` = ``record_tolerance`` (default 2): ``c`` standard
deviations of the pair's win count at ``P = 1/2``. The pair effects have a closed form, so they
are profiled out: the optimal ``h_ab + d_ab`` is ``h_ab`` clipped to the pair's *record band*
``[logit((w_ab - lambda_ab)/n_ab), logit((w_ab + lambda_ab)/n_ab)]`` (the probabilities under
which the record is within ``lambda_ab`` wins of its expectation), and the profiled loss of a
pair is the logistic loss at the clipped logit plus ``lambda_ab`` times the clipping distance: a
convex, continuously differentiable Huber-like loss whose gradient in ``h_ab`` is the logistic
gradient clipped to ``[-lambda_ab, lambda_ab]``. Hence a pair's influence on the strengths is
bounded (a robust Bradley-Terry), and the table's ``P`` of an observed pair never leaves its band:
a pair with one to three games is (nearly) unconstrained and follows the model, a pair with a
long record follows its record, and an edge is oriented against a head-to-head record only when
the record is within ``c`` standard deviations of a coin flip. With many games per pair the model
estimator's observed edges tend to the pairs' own win rates (those of ``--estimator posterior``).
Cross-validation fits each candidate with the bands but scores the model's own predictions of the
held-out comparisons (no bands): the rank and ridges are chosen on the model's predictive merit
-- banded predictions would make plain Bradley-Terry look nearly as good on a cycle the records
already show, and the table's probabilities of that cycle would then sit on the edges of its
bands, shrunk toward a coin flip -- and the bands only guard the records in the table.

*Model selection.* The ridge on the strengths and then the rank and ridge of the intransitive term
are chosen by ``k``-fold cross-validated log-likelihood (folds over unit comparisons). The folds
are drawn on the counts, not on the rows: when every weight is an integer, the rows are first
merged into one cell per (unordered pair, outcome for its lower agent), contexts pooled
(:func:`pair_cells`), and each cell's ``k`` unit comparisons are split among the folds by one
multinomial draw -- the same distribution as splitting the rows one by one, at O(cells) instead
of O(rows), and a fit that depends on the data only through the counts (the same for the rows in
any order, for a file of counts and for its raw battles). A row of fractional weight goes to one
random fold as a whole, so with fractional weights the rows are split as given.
The intransitive term is kept only when its held-out log-likelihood beats
Bradley-Terry's by more than one standard error of the paired per-fold difference (the
one-standard-error rule): a cycle must be supported by held-out evidence before it enters the
core. Each stage fits every (fold, candidate) pair in one compiled ``lax.map`` of an L-BFGS solve
(:func:`~ste_jax.evaluate._lbfgs.minimize_lbfgs`, a fixed number of steps). The held-out
log-loss of the best rank-0 candidate (plain Bradley-Terry with the chosen ridge) is reported
beside the chosen model's.

*Uncertainty.* :meth:`ModelTournament.refit` refits the chosen model on reweighted comparisons (a
bootstrap replica), warm-started at the full-data fit; it is pure and vmaps over replicas.

Everything works on the observed unordered pairs (``Q`` of them, ``Q <= m``), so the cost of one
objective evaluation is ``O(Q K)``, not ``O(n^2)``.
"""

from collections.abc import Sequence
import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._compiler_options import gather_friendly_jit
from ste_jax._host_random import numpy_generator
from ste_jax._results import result_type
from ste_jax._validation import validate_number
from ste_jax.data import Comparisons, merge_into_cells
from ste_jax.evaluate._lbfgs import minimize_lbfgs
from ste_jax.models._intransitive import (
  IntransitiveParams,
  init_intransitive_params,
  intransitive_logits,
  intransitive_tournament,
)

# The record bands' half-width ``c``, in standard deviations of a pair's win count at ``P = 1/2``.
DEFAULT_RECORD_TOLERANCE = 2.0
DEFAULT_STRENGTH_L2 = (0.1, 0.3, 1.0, 3.0)
DEFAULT_RANKS = (0, 1, 2)
DEFAULT_SKEW_L2 = (1.0, 10.0)


class PairIndex(NamedTuple):
  """The observed unordered pairs of a :class:`~ste_jax.data.Comparisons` (static structure).

  Attributes:
    i: ``(Q,)`` int32 lower agent index of each observed pair.
    j: ``(Q,)`` int32 higher agent index (``i < j``).
    row_pair: ``(m,)`` int32 pair of each comparison row.
    row_forward: ``(m,)`` bool, ``True`` where the row's ``a`` is the pair's ``i``.
  """

  i: jax.Array
  j: jax.Array
  row_pair: jax.Array
  row_forward: jax.Array


def observed_pairs(comparisons: Comparisons) -> PairIndex:
  """The :class:`PairIndex` of ``comparisons`` (eager; rows with any weight count as observed)."""
  n = comparisons.num_agents
  a = np.asarray(comparisons.a, dtype=np.int64)
  b = np.asarray(comparisons.b, dtype=np.int64)
  lo, hi = np.minimum(a, b), np.maximum(a, b)
  keys, row_pair = np.unique(lo * n + hi, return_inverse=True)
  return PairIndex(
    i=jnp.asarray(keys // n, dtype=jnp.int32),
    j=jnp.asarray(keys % n, dtype=jnp.int32),
    row_pair=jnp.asarray(row_pair.reshape(-1), dtype=jnp.int32),
    row_forward=jnp.asarray(a == lo),
  )


def pair_wins(
  pairs: PairIndex, outcome: jax.typing.ArrayLike, weight: jax.typing.ArrayLike
) -> tuple[jax.Array, jax.Array]:
  """Weighted wins ``(w_ij, w_ji)`` per observed pair, shapes ``(Q,)`` (ties count 1/2 each way).

  Args:
    pairs: the :class:`PairIndex`.
    outcome: ``(m,)`` share of each comparison won by its ``a``.
    weight: ``(m,)`` row weights (a bootstrap replica changes only these).
  """
  q = pairs.i.shape[0]
  won_by_i = jnp.where(pairs.row_forward, outcome, 1 - outcome)
  w_ij = jax.ops.segment_sum(weight * won_by_i, pairs.row_pair, num_segments=q)
  w_ji = jax.ops.segment_sum(weight * (1 - won_by_i), pairs.row_pair, num_segments=q)
  return w_ij, w_ji


class RecordBand(NamedTuple):
  """Each observed pair's record band on the logit scale (see the module docstring).

  Attributes:
    lo, hi: ``(Q,)`` band of the logit ``h_ij`` (``-inf`` / ``inf`` where unbounded).
    slack: ``(Q,)`` L1 weight ``lambda_ij = (c / 2) sqrt(n_ij)`` of the pair effect (0 where the
      band is unbounded both ways).
  """

  lo: jax.Array
  hi: jax.Array
  slack: jax.Array


def record_band(
  w_ij: jax.typing.ArrayLike, w_ji: jax.typing.ArrayLike, tolerance: jax.typing.ArrayLike
) -> RecordBand:
  """The :class:`RecordBand` of pairs with weighted wins ``(w_ij, w_ji)`` (pure; data only).

  Args:
    w_ij, w_ji: ``(Q,)`` weighted wins of each pair's ``i`` and ``j`` (ties count 1/2 each).
    tolerance: scalar ``c > 0``; ``inf`` switches the bands off (every band unbounded).

  Returns:
    The :class:`RecordBand`: ``h`` in ``[lo, hi]`` iff
    ``|n_ij sigmoid(h) - w_ij| <= (c/2) sqrt(n_ij)``.
  """
  games = w_ij + w_ji
  dtype = games.dtype
  tolerance = jnp.asarray(tolerance, dtype)
  on = jnp.isfinite(tolerance) & (games > 0)
  slack = jnp.where(on, 0.5 * jnp.where(jnp.isfinite(tolerance), tolerance, 0) * jnp.sqrt(games), 0)
  safe_games = jnp.where(games > 0, games, 1)
  q_lo, q_hi = (w_ij - slack) / safe_games, (w_ij + slack) / safe_games
  inf = jnp.asarray(jnp.inf, dtype)
  finfo = jnp.finfo(dtype)

  def logit(q):  # clipped into (0, 1): an open bound's value is computed, finite, and not selected
    return jax.scipy.special.logit(jnp.clip(q, finfo.tiny, 1 - finfo.epsneg))

  lo = jnp.where(on & (q_lo > 0), logit(q_lo), -inf)
  hi = jnp.where(on & (q_hi < 1), logit(q_hi), inf)
  return RecordBand(lo, hi, slack)


def banded_pair_nll(
  h: jax.typing.ArrayLike, w_ij: jax.typing.ArrayLike, w_ji: jax.typing.ArrayLike, band: RecordBand
) -> jax.Array:
  """``(Q,)`` profiled loss ``min_d [logistic loss at h + d] + lambda |d|`` of each pair.

  The minimizing ``h + d`` is ``clip(h, lo, hi)``; the loss is convex and continuously
  differentiable in ``h`` with gradient ``clip(n sigmoid(h) - w_ij, -lambda, lambda)``.
  """
  hc = jnp.clip(h, band.lo, band.hi)
  return w_ij * jax.nn.softplus(-hc) + w_ji * jax.nn.softplus(hc) + band.slack * jnp.abs(h - hc)


def _penalized_nll(
  theta, mask, pairs: PairIndex, w_ij, w_ji, band: RecordBand, l2_strength, l2_skew
):
  """Profiled negative log-likelihood plus ridges, over the total weight (for conditioning)."""
  s, u, v = theta
  h = intransitive_logits(IntransitiveParams(s, u, v, mask), pairs.i, pairs.j)
  nll = jnp.sum(banded_pair_nll(h, w_ij, w_ji, band))
  um, vm = u * mask[None, :], v * mask[None, :]
  reg = 0.5 * l2_strength * jnp.sum(s * s) + 0.5 * l2_skew * (jnp.sum(um * um) + jnp.sum(vm * vm))
  total = jnp.maximum(jnp.sum(w_ij + w_ji), jnp.ones((), w_ij.dtype))
  return (nll + reg) / total


def _leading_components(params: IntransitiveParams, k: int) -> IntransitiveParams:
  """``params`` with only its first ``k`` intransitive components (``u, v (n, k)``)."""
  return IntransitiveParams(params.strength, params.u[:, :k], params.v[:, :k], params.mask[:k])


def _heldout_nll(params: IntransitiveParams, pairs: PairIndex, w_ij, w_ji) -> jax.Array:
  """Summed held-out negative log-likelihood (natural log) of the counts ``w`` under the model's
  own predictions (no record bands: a setting is chosen on how well the model predicts)."""
  h = intransitive_logits(params, pairs.i, pairs.j)
  return jnp.sum(w_ij * jax.nn.softplus(-h) + w_ji * jax.nn.softplus(h))


def fit_intransitive(
  params0: IntransitiveParams,
  pairs: PairIndex,
  w_ij: jax.typing.ArrayLike,
  w_ji: jax.typing.ArrayLike,
  l2_strength: jax.typing.ArrayLike,
  l2_skew: jax.typing.ArrayLike,
  record_tolerance: jax.typing.ArrayLike = jnp.inf,
  *,
  num_steps: int,
  warm_start: bool = False,
) -> IntransitiveParams:
  """Penalized (profiled) maximum likelihood by ``num_steps`` L-BFGS steps (pure; vmaps).

  The curvature of the objective in an agent's parameters grows with its number of games (from a
  handful to thousands in a sports tour), so the solver works in diagonally preconditioned
  coordinates: each parameter of agent ``a`` is divided by ``sqrt(ridge + games_a / 4)``, the
  diagonal of the Hessian at ``h = 0`` (for the factors, with unit-size partner factors). This is
  a change of variables only: the minimizer is the same.

  With ``warm_start`` (a refit from a nearby fit, as in :func:`refit_tournament`) the coordinates
  are further divided by ``sqrt(W)``, ``W`` the total weight the objective is divided by, so that
  its Hessian in them is near the identity. The first L-BFGS step, which has no curvature pairs
  yet, is then near a Newton step; without it optax's line search first has to grow a step that
  starts about ``1/W`` too short. Fits from the initial parameters (the point fit
  and the cross-validation) keep the coordinates without ``sqrt(W)``, so that their fixed number
  of steps takes the same path as before this option existed.

  Args:
    params0: initial :class:`IntransitiveParams` (its ``mask`` sets the rank).
    pairs: the :class:`PairIndex`.
    w_ij, w_ji: ``(Q,)`` weighted wins of each pair's ``i`` and ``j``.
    l2_strength: ridge on the strengths (scalar, traced).
    l2_skew: ridge on the intransitive factors (scalar, traced).
    record_tolerance: ``c`` of the pairs' record bands (scalar, traced; ``inf`` = plain likelihood).
    num_steps: L-BFGS iterations (static).
    warm_start: ``params0`` is near the minimizer: coordinates scaled for a near-Newton first
      step (above; static).

  Returns:
    The fitted :class:`IntransitiveParams` (the pair effects are implicit: :func:`record_band`).
  """
  mask = params0.mask
  n, K = params0.u.shape

  def unflatten(x):
    return x[:n], x[n : n + n * K].reshape(n, K), x[n + n * K :].reshape(n, K)

  games = jax.ops.segment_sum(w_ij + w_ji, pairs.i, num_segments=n) + jax.ops.segment_sum(
    w_ij + w_ji, pairs.j, num_segments=n
  )
  scale_s = jax.lax.rsqrt(l2_strength + 0.25 * games)
  scale_f = jnp.broadcast_to(jax.lax.rsqrt(l2_skew + 0.25 * games)[:, None], (n, K)).reshape(-1)
  scale = jnp.concatenate([scale_s, scale_f, scale_f])
  if warm_start:  # the objective's own normalization (``_penalized_nll``)
    scale = scale * jnp.sqrt(jnp.maximum(jnp.sum(w_ij + w_ji), jnp.ones((), w_ij.dtype)))

  band = record_band(w_ij, w_ji, record_tolerance)

  def loss(z):
    return _penalized_nll(unflatten(z * scale), mask, pairs, w_ij, w_ji, band, l2_strength, l2_skew)

  x0 = jnp.concatenate([params0.strength, params0.u.reshape(-1), params0.v.reshape(-1)])
  z = minimize_lbfgs(loss, x0 / scale, num_steps=num_steps)
  return IntransitiveParams(*unflatten(z * scale), mask)


@result_type
class Candidate:
  """One model setting: rank of the intransitive term and the two ridges."""

  rank: int
  l2_strength: float
  l2_skew: float


@dataclasses.dataclass(frozen=True)
class ModelTournament:
  """A fitted model tournament and how it was chosen.

  Attributes:
    P: ``(n, n)`` the model's win probabilities for every pair (diagonal 1/2).
    params: the fitted :class:`~ste_jax.models.IntransitiveParams`.
    chosen: the selected :class:`Candidate`.
    cv_log_loss: held-out log-loss (nats per comparison) of the chosen candidate.
    bt_cv_log_loss: held-out log-loss of the best plain Bradley-Terry candidate (rank 0).
    candidates: every candidate tried, with ``cv_table`` its held-out log-loss (same order).
    num_folds: folds of the cross-validation.
    pairs: the :class:`PairIndex` of the data.
    num_steps: L-BFGS steps of each fit; ``refit_steps`` of each warm-started bootstrap refit.
    record_tolerance: ``c`` of the observed pairs' record bands (``inf``: none).
  """

  P: jax.Array
  params: IntransitiveParams
  chosen: Candidate
  cv_log_loss: float
  bt_cv_log_loss: float
  candidates: tuple[Candidate, ...]
  cv_table: tuple[float, ...]
  num_folds: int
  pairs: PairIndex
  num_steps: int
  refit_steps: int
  record_tolerance: float = DEFAULT_RECORD_TOLERANCE

  def describe(self) -> str:
    """One line: the chosen model and its held-out log-loss next to Bradley-Terry's."""
    c = self.chosen
    model = (
      "Bradley-Terry"
      if c.rank == 0
      else f"Bradley-Terry + {c.rank} intransitive component{'s' if c.rank > 1 else ''} "
      f"(skew-symmetric rank {2 * c.rank})"
    )
    settings = (
      f"{model} (strength ridge {c.l2_strength:g}"
      + (f", intransitive ridge {c.l2_skew:g}" if c.rank else "")
      + ")"
    )
    if math.isfinite(self.record_tolerance):
      settings += (
        f"; each observed pair's P kept within its record band ({self.record_tolerance:g} sd of "
        "its "
        "win count at P = 1/2)"
      )
    if not self.num_folds:
      return settings + (
        ", the first candidate of the grid: too few comparisons for cross-validation (a fold "
        "would hold none), so no held-out log-loss"
      )
    return (
      settings + f", chosen by {self.num_folds}-fold CV with the one-standard-error rule: held-out "
      f"log-loss {self.cv_log_loss:.4f} vs {self.bt_cv_log_loss:.4f} for Bradley-Terry"
    )

  def refit_state(self) -> tuple:
    """``(params, pairs, settings)``: the arrays (a pytree) :func:`refit_tournament` needs.

    The parameters keep only the chosen rank's components: the grid's other components are
    masked out (their logits and gradients are zero), so the refits give the same model with
    fewer parameters and less work per step.
    """
    c = self.chosen
    settings = jnp.asarray([c.l2_strength, c.l2_skew, self.record_tolerance], dtype=self.P.dtype)
    return _leading_components(self.params, c.rank), self.pairs, settings

  def refit(self, outcome: jax.typing.ArrayLike, weight: jax.typing.ArrayLike) -> jax.Array:
    """The model tournament refitted on reweighted rows (pure; vmap over ``weight``).

    Args:
      outcome: ``(m,)`` row outcomes (those of the fitted comparisons).
      weight: ``(m,)`` row weights, e.g. a bootstrap replica's.

    Returns:
      ``(n, n)`` refitted tournament.
    """
    return refit_tournament(self.refit_state(), outcome, weight, num_steps=self.refit_steps)


def refit_tournament(
  state: tuple, outcome: jax.typing.ArrayLike, weight: jax.typing.ArrayLike, *, num_steps: int
) -> jax.Array:
  """A model tournament refitted on reweighted rows, warm-started at a fit (pure; vmaps).

  Args:
    state: ``(params, pairs, settings)`` of :meth:`ModelTournament.refit_state`: the fitted
      parameters (the warm start), the :class:`PairIndex` and the ``(3,)`` strength ridge,
      intransitive ridge and record tolerance.
    outcome: ``(m,)`` row outcomes (those of the fitted comparisons).
    weight: ``(m,)`` row weights, e.g. a bootstrap replica's.
    num_steps: L-BFGS steps (static).

  Returns:
    ``(n, n)`` refitted tournament (diagonal 1/2; observed pairs within the replica's record bands).
  """
  params, pairs, settings = state
  w_ij, w_ji = pair_wins(pairs, outcome, weight)
  params = fit_intransitive(
    params,
    pairs,
    w_ij,
    w_ji,
    settings[0],
    settings[1],
    settings[2],
    num_steps=num_steps,
    warm_start=True,
  )
  return banded_tournament(params, pairs, record_band(w_ij, w_ji, settings[2]))


def banded_tournament(params: IntransitiveParams, pairs: PairIndex, band: RecordBand) -> jax.Array:
  """The table's tournament: the model's ``P``, each observed pair's logit clipped to its band.

  Args:
    params: fitted :class:`IntransitiveParams`.
    pairs: the :class:`PairIndex` of the observed pairs.
    band: their :class:`RecordBand`.

  Returns:
    ``(n, n)`` complementary tournament, diagonal 1/2.
  """
  P = intransitive_tournament(params)
  n = P.shape[-1]
  h = jnp.clip(intransitive_logits(params, pairs.i, pairs.j), band.lo, band.hi)
  P = P.at[pairs.i, pairs.j].set(jax.nn.sigmoid(h)).at[pairs.j, pairs.i].set(jax.nn.sigmoid(-h))
  return jnp.where(jnp.eye(n, dtype=bool), jnp.asarray(0.5, P.dtype), P)


def check_grid(values: Sequence[float], name: str, *, integer: bool = False) -> tuple:
  values = tuple(values)
  if not values:
    raise ValueError(f"{name} must hold at least one value.")
  for v in values:
    bad = isinstance(v, bool) or (integer and (not isinstance(v, (int, np.integer)) or v < 0))
    bad = bad or (
      not integer and not (isinstance(v, (int, float, np.number)) and math.isfinite(v) and v > 0)
    )
    if bad:
      raise ValueError(
        f"{name} must hold {'integers >= 0' if integer else 'finite numbers > 0'}, got {v!r}."
      )
  return tuple(int(v) for v in values) if integer else tuple(float(v) for v in values)


@jax.jit
def _fold_wins(pairs: PairIndex, outcome, held):
  """``(F, Q)`` training and held-out wins per fold; ``held``: ``(F, m)`` held-out row weight."""
  total = jnp.sum(held, axis=0)

  def one(h):
    return pair_wins(pairs, outcome, total - h), pair_wins(pairs, outcome, h)

  return jax.vmap(one)(held)


def pair_cells(comparisons: Comparisons) -> Comparisons:
  """The rows as count cells of unordered pairs ``(i < j, outcome for i)``, contexts pooled.

  Args:
    comparisons: ``m`` rows (any orientation, any contexts).

  Returns:
    :func:`~ste_jax.data.merge_into_cells` of the rows turned so that ``a < b`` (outcome
    ``1 - o`` for a turned row) in one context: the model's likelihood, and its folds, depend on
    the data only through these cells.

  Example:
    >>> c = Comparisons.from_arrays([0, 1, 0], [1, 0, 1], [1.0, 0.0, 0.5])
    >>> cells = pair_cells(c)
    >>> [(int(a), int(b), float(o), float(w)) for a, b, o, w in
    ...  zip(cells.a, cells.b, cells.outcome, cells.weight)]
    [(0, 1, 0.5, 1.0), (0, 1, 1.0, 2.0)]
  """
  a, b = comparisons.a, comparisons.b
  forward = a < b
  turned = Comparisons(
    a=jnp.minimum(a, b),
    b=jnp.maximum(a, b),
    outcome=jnp.where(forward, comparisons.outcome, 1 - comparisons.outcome),
    context=jnp.zeros_like(comparisons.context),
    weight=comparisons.weight,
    agents=comparisons.agents,
    contexts=comparisons.contexts[:1],
  )
  return merge_into_cells(turned, by_outcome=True)


def _fold_weights(key, weight, num_folds: int) -> np.ndarray:
  """``(F, m)`` held-out weight of each row per fold: folds over unit comparisons.

  A row of integer weight ``w`` counts as ``w`` comparisons whose folds are drawn uniformly
  (multinomially), so aggregated rows (one row per pair with ``weight`` = wins) are split like unit
  rows; a row with a fractional weight goes to one random fold as a whole.
  """
  w = np.asarray(weight, dtype=np.float64)
  rng = numpy_generator(key)
  rounded = np.rint(w)
  integer = np.isclose(w, rounded) & (rounded >= 0)
  held = np.zeros((num_folds, w.size))
  counts = rng.multinomial(
    np.where(integer, rounded, 0).astype(np.int64), [1.0 / num_folds] * num_folds
  )
  held[:, integer] = counts[integer].T
  whole = np.flatnonzero(~integer)
  held[rng.integers(0, num_folds, whole.size), whole] = w[whole]
  return held


def _cv_stage(
  params0, pairs, train, test, grid: list[Candidate], tolerance, num_steps: int, size: int
):
  """Held-out log-loss per candidate: one fit per (fold, candidate), in one compiled call.

  The grid is padded to ``size`` candidates (repeating the last). The fits carry only the
  components some candidate uses (``max rank``; none in the Bradley-Terry stage): masked-out
  components add nothing to a logit or a gradient, only work.
  """
  dtype = params0.strength.dtype
  K = max(c.rank for c in grid)
  params0 = _leading_components(params0, K)
  padded = list(grid) + [grid[-1]] * (size - len(grid))
  masks = jnp.asarray([[1.0 if r < c.rank else 0.0 for r in range(K)] for c in padded], dtype)
  l2s = jnp.asarray([c.l2_strength for c in padded], dtype)
  l2k = jnp.asarray([c.l2_skew for c in padded], dtype)
  nll = _cv_fits(
    params0, pairs, train, test, masks, l2s, l2k, jnp.asarray(tolerance, dtype), num_steps=num_steps
  )  # (F, C)
  heldout = jnp.sum(test[0] + test[1], axis=-1)  # (F,)
  per_fold = (
    np.asarray(nll, dtype=np.float64)[:, : len(grid)]
    / np.asarray(heldout, dtype=np.float64)[:, None]
  )
  return per_fold


def _cv_fits_impl(params0, pairs, train, test, masks, l2s, l2k, tolerance, *, num_steps):
  """``(F, C)`` held-out NLL of every (fold, candidate) fit, fitted one after another.

  A ``lax.map`` over the ``F * C`` fits, not a ``vmap``: a batched gather's transpose (the
  scatter in each gradient) costs more per fit on XLA:CPU than an unbatched one
  (``benchmarks/model_fit.py``). Compiled with
  :func:`~ste_jax._compiler_options.gather_friendly_jit`.
  """
  F, C = train[0].shape[0], masks.shape[0]

  def one(k):  # fit k: fold k // C, candidate k % C (indexed, so no data is copied per fit)
    f, c = k // C, k % C
    w_train, w_test = jax.tree.map(lambda x: x[f], (train, test))
    p = fit_intransitive(
      dataclasses.replace(params0, mask=masks[c]),
      pairs,
      w_train[0],
      w_train[1],
      l2s[c],
      l2k[c],
      tolerance,
      num_steps=num_steps,
    )
    return _heldout_nll(p, pairs, w_test[0], w_test[1])

  return jax.lax.map(one, jnp.arange(F * C)).reshape(F, C)


_cv_fits = gather_friendly_jit(_cv_fits_impl, static_argnames=("num_steps",))
_fit_jit = gather_friendly_jit(fit_intransitive, static_argnames=("num_steps",))


def fit_model_tournament(
  key: jax.Array | None,
  comparisons: Comparisons,
  *,
  ranks: Sequence[int] = DEFAULT_RANKS,
  strength_l2: Sequence[float] = DEFAULT_STRENGTH_L2,
  skew_l2: Sequence[float] = DEFAULT_SKEW_L2,
  num_folds: int = 5,
  num_steps: int = 50,
  refit_steps: int = 12,
  record_tolerance: float | None = DEFAULT_RECORD_TOLERANCE,
) -> ModelTournament:
  """Fits the model-based tournament, choosing its settings by cross-validation.

  Stage 1 chooses the strength ridge among ``strength_l2`` for plain Bradley-Terry (rank 0);
  stage 2 keeps it and chooses the rank among ``ranks`` and, for ranks above 0, the intransitive
  ridge among ``skew_l2``. Each stage is one compiled ``lax.map`` over folds and candidates. The
  chosen setting is refitted on all comparisons.

  Args:
    comparisons: the data (contexts are pooled: a context-free model).
    key: PRNG key for the folds and the initial factors (``None``: ``jax.random.key(0)``).
    ranks: candidate numbers of skew-symmetric components (``0`` = Bradley-Terry).
    strength_l2: candidate ridges on the strengths.
    skew_l2: candidate ridges on the intransitive factors.
    num_folds: cross-validation folds (``>= 2``) over unit comparisons. With too few comparisons
      for every fold to hold one (fewer than ``num_folds``, or a split of few comparisons that
      leaves a fold empty), no CV is run: the first candidate of the grid (``ranks[0]``,
      ``strength_l2[0]``, ``skew_l2[0]``) is fitted, ``num_folds`` is 0 on the result, its
      log-losses are NaN and :meth:`ModelTournament.describe` says so.
    num_steps: L-BFGS steps per fit.
    refit_steps: L-BFGS steps of each warm-started :meth:`ModelTournament.refit`.
    record_tolerance: ``c > 0``: each observed pair's probability stays within its record band,
      the probabilities under which its win count is within ``c`` standard deviations (at
      ``P = 1/2``) of its expectation (module docstring); ``None`` fits the model alone.

  Returns:
    A :class:`ModelTournament`.

  Raises:
    ValueError: empty grids, non-positive ridges, negative ranks, ``num_folds < 2``, step
      counts ``< 1`` or a ``record_tolerance`` that is not a finite number ``> 0``.

  Examples:
    >>> c = Comparisons.from_arrays([0, 1, 2] * 30, [1, 2, 0] * 30, [1.0] * 90)  # a 3-cycle
    >>> fit = fit_model_tournament(jax.random.key(0), c, ranks=(0, 1))
    >>> cycle = bool(fit.P[0, 1] > 0.5) and bool(fit.P[1, 2] > 0.5) and bool(fit.P[2, 0] > 0.5)
    >>> fit.chosen.rank, cycle
    (1, True)
  """
  ranks = check_grid(ranks, "ranks", integer=True)
  strength_l2 = check_grid(strength_l2, "strength_l2")
  skew_l2 = check_grid(skew_l2, "skew_l2")
  for value, name, lo in (
    (num_folds, "num_folds", 2),
    (num_steps, "num_steps", 1),
    (refit_steps, "refit_steps", 1),
  ):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
      raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}.")
  if record_tolerance is None:
    tolerance = math.inf
  else:
    tolerance = validate_number(record_tolerance, "record_tolerance", low=0.0, low_open=True)
  key = jax.random.key(0) if key is None else key
  k_fold, k_init = jax.random.split(key)
  n = comparisons.num_agents
  K = max(max(ranks), 1)
  dtype = comparisons.weight.dtype
  params0 = init_intransitive_params(k_init, n, K, dtype=dtype)
  pairs = observed_pairs(comparisons)
  outcome, weight = comparisons.outcome, comparisons.weight

  # Cross-validation needs every fold to hold some comparison (a fold with none has no held-out
  # log-loss): with fewer comparisons than that, the first candidate is used, and said so.
  held = None
  folded, fold_pairs = comparisons, pairs
  w = np.asarray(weight)
  if np.all(w == np.round(w)):
    folded = pair_cells(comparisons)
    fold_pairs = observed_pairs(folded)  # the same pairs, in the same order, as ``pairs``
  if float(np.sum(w)) >= num_folds:
    held = _fold_weights(k_fold, folded.weight, num_folds)
    held = held if np.all(held.sum(axis=1) > 0) else None
  if held is not None:
    held = jnp.asarray(held, dtype=weight.dtype)
    train, test = _fold_wins(fold_pairs, folded.outcome, held)
    stage1 = [Candidate(0, l2, skew_l2[0]) for l2 in strength_l2]
    positive = [r for r in ranks if r > 0]
    size = max(len(stage1), len(positive) * len(skew_l2))
    fold1 = _cv_stage(params0, pairs, train, test, stage1, tolerance, num_steps, size)
    bt_index = int(np.argmin(fold1.mean(axis=0)))
    bt = stage1[bt_index]
    stage2 = [Candidate(r, bt.l2_strength, l2k) for r in positive for l2k in skew_l2]
    fold2 = (
      _cv_stage(params0, pairs, train, test, stage2, tolerance, num_steps, size)
      if stage2
      else np.zeros((num_folds, 0))
    )
    candidates = tuple(stage1 + stage2)
    table = tuple(float(x) for x in np.concatenate([fold1.mean(axis=0), fold2.mean(axis=0)]))
    chosen, cv_loss = bt, table[bt_index]
    if stage2:
      best2 = int(np.argmin(fold2.mean(axis=0)))
      # One-standard-error rule on the paired per-fold difference: the intransitive term is kept
      # only when it beats Bradley-Terry by more than one standard error (or BT is not allowed).
      diff = fold1[:, bt_index] - fold2[:, best2]
      se = float(np.std(diff, ddof=1) / math.sqrt(num_folds))
      if 0 not in ranks or diff.mean() > se:
        chosen, cv_loss = stage2[best2], table[len(stage1) + best2]
    bt_loss = table[bt_index]
  else:
    chosen = Candidate(ranks[0], strength_l2[0], skew_l2[0])
    candidates, table, cv_loss, bt_loss = (chosen,), (math.nan,), math.nan, math.nan
    num_folds = 0
  mask = (jnp.arange(K) < chosen.rank).astype(dtype)
  w_ij, w_ji = pair_wins(pairs, outcome, weight)
  params = _fit_jit(
    dataclasses.replace(params0, mask=mask),
    pairs,
    w_ij,
    w_ji,
    jnp.asarray(chosen.l2_strength, dtype),
    jnp.asarray(chosen.l2_skew, dtype),
    jnp.asarray(tolerance, dtype),
    num_steps=num_steps,
  )
  return ModelTournament(
    P=banded_tournament(params, pairs, record_band(w_ij, w_ji, tolerance)),
    params=params,
    chosen=chosen,
    cv_log_loss=cv_loss,
    bt_cv_log_loss=bt_loss,
    candidates=candidates,
    cv_table=table,
    num_folds=num_folds,
    pairs=pairs,
    num_steps=num_steps,
    refit_steps=refit_steps,
    record_tolerance=tolerance,
  )
