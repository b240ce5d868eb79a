"""Tournament estimators behind the leaderboard: one interface for posterior, win-rate and model.

An estimator turns comparisons (and, for the bootstrap, reweighted rows) into *edges*: the
posterior-edge evidence ``D`` (paper §6.1, Eq. ``posterior_edge_estimator``), the empirical
win-rate tournament ``P`` or the model tournament ``P̂`` (:mod:`ste_jax.evaluate._model_estimator`).
The soft STE scores, the hard relation and the hard columns of a table are all computed from
those same edges, so one table shows one tournament:

* ``posterior``: soft scores ``ste_scores_from_edges(D)``; hard relation ``a -> b`` iff
  ``D_ab > 0`` (a strict posterior majority). An unobserved or evenly split pair has
  ``D = 0`` both ways: *no edge* in either direction, soft or hard.
* ``winrate``: soft scores ``ste_scores(P, tau)``; hard relation the strict majority ``P > 1/2``
  with ties and unobserved pairs (``P = 1/2``) counted both ways (the Smith-set convention, the
  zero-temperature limit of ``D_tau = 1/2``).
* ``model``: soft scores ``ste_scores(P̂, tau)``; hard relation ``P̂ > 1/2``, every pair
  predicted by the model, an observed pair's ``P̂`` kept within its record band;
  ``|P̂ - 1/2|`` within 16 machine epsilons is a tie (equal fitted strengths), counted both ways.

The hard Top Cycle is the set of agents that reach every other agent through the *weak* relation
(strict edges, plus ties where they count both ways), the hard Uncovered Set the agents no one
covers in the *strict* relation, and the tier of an agent its depth in the condensation of the weak
relation (tier 1 = the Top Cycle for complete relations).
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import exact
from ste_jax.data import Comparisons, pair_counts, posterior_edges, win_rate_tournament
from ste_jax.evaluate._model_estimator import fit_model_tournament, refit_tournament
from ste_jax.ops import ste_scores, ste_scores_from_edges

ESTIMATORS = ("auto", "posterior", "winrate", "model")

CONVENTIONS = {
  "posterior": "STE-posterior-edge (Jeffreys Beta(1/2,1/2) prior): D_ab = max(0, 2 Pr(theta_ab > 1/2) - 1); "
  "an unobserved or evenly split pair has D = 0 both ways (no edge); hard relation a -> b iff D_ab > 0",
  "winrate": "win-rate tournament P (ties count 1/2 to each side); an unobserved pair is P = 1/2, a tie "
  "counted both ways; hard relation P > 1/2 (ties both ways: Smith set)",
  "model": "model tournament P = sigmoid(h) of a pairwise model fitted to the observed comparisons, "
  "predicting every pair (structured matrix completion; ties count 1/2 to each side); hard relation P > 1/2",
}


def hard_relations(edges, estimator: str) -> tuple[jax.Array, jax.Array]:
  """``(weak, strict)`` boolean ``(..., n, n)`` relations of an estimator's edges (zero diagonal).

  Args:
    edges: ``(..., n, n)`` posterior-edge ``D`` or a tournament ``P``.
    estimator: ``"posterior"``, ``"winrate"`` or ``"model"``.
  """
  n = edges.shape[-1]
  off = jnp.broadcast_to(~jnp.eye(n, dtype=bool), edges.shape)
  if estimator == "posterior":
    strict = (edges > 0) & off
    return strict, strict
  # A model tournament is computed, not counted: two agents with equal fitted strengths get
  # P = 1/2 up to rounding, so |P - 1/2| within a few ulps is a tie (both ways), not a coin flip
  # of the floating-point rounding. Win rates are exact ratios and need no tolerance.
  tol = 16 * jnp.finfo(edges.dtype).eps if estimator == "model" else 0.0
  return (edges >= 0.5 - tol) & off, (edges > 0.5 + tol) & off


def hard_memberships(edges, estimator: str) -> tuple[jax.Array, jax.Array]:
  """Hard Top Cycle and Uncovered Set ``(..., n)`` of an estimator's edges (pure, vmaps)."""
  weak, strict = hard_relations(edges, estimator)
  return exact.reach_all(weak), exact.uncovered_in_relation(strict)


def soft_scores(edges, estimator: str, *, tau, gamma):
  """STE scores of an estimator's edges (:class:`~ste_jax.ops.STEScores`)."""
  if estimator == "posterior":
    return ste_scores_from_edges(edges, gamma=gamma)
  return ste_scores(edges, tau=tau, gamma=gamma)


def display_tournament(edges, estimator: str, counts) -> jax.Array:
  """A complementary ``(n, n)`` tournament for figures and witnesses.

  ``P`` itself for ``winrate``/``model``; for ``posterior`` the win-rate tournament of ``counts``
  (its strict majority ``P > 1/2`` is exactly ``D > 0``, and unobserved or evenly split pairs are
  ``1/2``, which the posterior treats as no edge).
  """
  if estimator == "posterior":
    return win_rate_tournament(counts)
  return edges


def resolve_estimator(estimator: str, comparisons: Comparisons) -> tuple[str, str]:
  """``(name, reason)``: ``auto`` picks ``posterior`` when every pair was compared, else ``model``."""
  if estimator not in ESTIMATORS:
    raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}.")
  if estimator != "auto":
    return estimator, "requested"
  n = comparisons.num_agents
  totals = np.asarray(pair_counts(comparisons).totals)
  observed = int(np.count_nonzero(np.triu(totals > 0, 1)))
  pairs = n * (n - 1) // 2
  if observed == pairs:
    return "posterior", "auto: every pair was compared"
  return "model", f"auto: {pairs - observed} of {pairs} pairs never compared"


@dataclasses.dataclass(frozen=True)
class EdgeEstimator:
  """A resolved estimator bound to its data: point edges and a pure replica function.

  Attributes:
    name: ``"posterior"``, ``"winrate"`` or ``"model"``.
    edges: ``(n, n)`` point edges (``D`` or ``P``).
    model: the :class:`~ste_jax.evaluate.ModelTournament` for ``model``, else ``None``.
  """

  name: str
  edges: jax.Array
  model: object = None

  @property
  def refit_steps(self) -> int:
    """L-BFGS steps of a model refit (``0`` for the count-based estimators)."""
    return 0 if self.model is None else int(self.model.refit_steps)

  def replica_state(self):
    """The arrays :func:`replica_edges` needs: the model's refit state, or ``None``."""
    return None if self.model is None else self.model.refit_state()

  def replica_edges(self, comparisons: Comparisons) -> jax.Array:
    """Edges of reweighted comparisons (same rows, new ``weight``): pure, vmaps over replicas."""
    return replica_edges(self.name, self.replica_state(), comparisons, refit_steps=self.refit_steps)


def replica_edges(name: str, state, comparisons: Comparisons, *, refit_steps: int = 0) -> jax.Array:
  """An estimator's edges of reweighted comparisons (pure; jit with ``name``, ``refit_steps`` static).

  Args:
    name: ``"posterior"``, ``"winrate"`` or ``"model"``.
    state: :meth:`EdgeEstimator.replica_state` (the model's warm start and ridges, else ``None``).
    comparisons: the fitted rows with a replica's ``weight``.
    refit_steps: L-BFGS steps of a model refit.

  Returns:
    ``(n, n)`` posterior edges ``D`` or tournament ``P``.
  """
  if name == "model":
    return refit_tournament(state, comparisons.outcome, comparisons.weight, num_steps=refit_steps)
  counts = pair_counts(comparisons)
  if name == "posterior":
    return posterior_edges(counts.wins)
  return win_rate_tournament(counts)


def build_estimator(
  name: str, comparisons: Comparisons, *, key=None, model_options=None
) -> EdgeEstimator:
  """The :class:`EdgeEstimator` of a resolved estimator name on ``comparisons``."""
  if name == "model":
    fit = fit_model_tournament(comparisons, key=key, **(model_options or {}))
    return EdgeEstimator("model", fit.P, fit)
  counts = pair_counts(comparisons)
  if name == "posterior":
    return EdgeEstimator("posterior", posterior_edges(counts.wins))
  if name == "winrate":
    return EdgeEstimator("winrate", win_rate_tournament(counts))
  raise ValueError(f"unknown estimator {name!r}; expected one of {ESTIMATORS[1:]}.")
