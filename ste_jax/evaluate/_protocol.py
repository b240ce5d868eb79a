"""The tournament-estimator protocol that the leaderboard, the verdicts and the CLI speak.

An estimator turns comparisons into *edges*, an ``(n, n)`` array from which the soft STE scores,
the hard relation (weak and strict), the hard cores and the tiers of a table are all computed, so
one table shows one tournament. It also recomputes its edges on resampled comparisons (bootstrap
replicas: the same rows with new weights, or new outcomes drawn from its own edges), as a pure
function that ``jax.vmap`` / ``lax.map`` run over replicas.

:class:`TournamentEstimator` is the abstract base: a subclass implements
:meth:`~TournamentEstimator.fit`, :meth:`~TournamentEstimator.replica_edges` and
:meth:`~TournamentEstimator.conventions`; the rest
has defaults for edges that are a complementary tournament ``P`` (``P_ab + P_ba = 1``). Subclasses
are frozen dataclasses holding their own settings: an instance is a static argument of compiled
functions, so it must be hashable and compare by value (or by identity, ``eq=False``).

Example:
  >>> import dataclasses, jax
  >>> from ste_jax.data import Comparisons, pair_counts, win_rate_tournament
  >>> @dataclasses.dataclass(frozen=True)
  ... class WinRates(TournamentEstimator):
  ...   name = "my-winrate"
  ...   def fit(self, key, comparisons):
  ...     return FittedTournament(self.replica_edges(None, comparisons))
  ...   def replica_edges(self, state, comparisons):
  ...     return win_rate_tournament(pair_counts(comparisons))
  ...   def conventions(self):
  ...     return "win rates"
  >>> c = Comparisons.from_arrays([0, 1, 2], [1, 2, 0], [1.0, 1.0, 1.0])
  >>> fitted = WinRates().fit(jax.random.key(0), c)
  >>> [bool(x) for x in WinRates().hard_memberships(fitted.edges)[0]]  # a 3-cycle: all in the TC
  [True, True, True]
"""

import abc
from collections.abc import Callable
import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from ste_jax import exact
from ste_jax._errors import OptionError
from ste_jax.data import Comparisons, PairCounts
from ste_jax.ops import STEScores, ste_scores

RESAMPLING = ("auto", "poisson", "parametric")


@dataclasses.dataclass(frozen=True)
class FittedTournament:
  """An estimator's fit on comparisons: its point edges and what its replicas need.

  Attributes:
    edges: ``(n, n)`` point edges (a tournament ``P`` or edge evidence such as ``D``).
    state: a pytree of arrays passed to :meth:`TournamentEstimator.replica_edges` (e.g. a warm
      start), or ``None``.
    model: a description of the fitted model (anything with a ``describe() -> str`` method, such
      as :class:`~ste_jax.evaluate.ModelTournament`), or ``None``.
  """

  edges: jax.Array
  state: Any = None
  model: Any = None


jax.tree_util.register_dataclass(
  FittedTournament, data_fields=["edges", "state"], meta_fields=["model"]
)


@dataclasses.dataclass(frozen=True)
class ParametricDesign:
  """The rows a parametric bootstrap redraws, when the edges alone do not give their outcomes.

  A model whose probability of a battle depends on more than its pair (per-battle covariates) or
  whose battles have more than two outcomes (a tie model) supplies its own replica rows and draws
  (:meth:`TournamentEstimator.parametric_design`).

  Attributes:
    comparisons: the ``m'`` rows the replicas redraw.
    state: the :meth:`TournamentEstimator.replica_edges` state for those rows.
    draw: ``draw(key, num_replicas)`` -> ``(R, m')`` host array of the replicas' ``field``.
    field: ``"outcome"`` (the draws replace the rows' outcomes) or ``"weight"`` (their weights).
  """

  comparisons: Comparisons
  state: Any
  draw: Callable[[jax.Array, int], Any]
  field: str = "outcome"


class TournamentEstimator(abc.ABC):
  """Comparisons -> edges -> hard relation, hard cores and soft scores (abstract base).

  Attributes:
    name: the name shown in tables and JSON output.
    tie_tolerance_ulps: ``|P - 1/2|`` within this many machine epsilons is a tie (a computed
      tournament rounds equal strengths to ``1/2 +- ulp``); ``0`` for exact ratios.
    redraws_outcomes: whether the parametric bootstrap can redraw outcomes from the edges (edges
      are win probabilities of a fitted model that :meth:`replica_edges` refits).
    ties_connect: whether a tie (``P = 1/2``) is an edge both ways in the weak relation.
    uses_tau: whether the edge temperature ``tau`` enters the soft scores.
    edge_legend: how to read ``A > B (p)`` in a witness chain of this estimator's tournament.
  """

  name: ClassVar[str] = "custom"
  tie_tolerance_ulps: ClassVar[int] = 0
  redraws_outcomes: ClassVar[bool] = False
  ties_connect: ClassVar[bool] = True
  uses_tau: ClassVar[bool] = True
  edge_legend: ClassVar[str] = "'A > B (p)': A beats B with probability p in the tournament"

  @abc.abstractmethod
  def fit(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    """Fits the estimator: point edges ``(n, n)`` and the state its replicas need.

    Args:
      key: PRNG key (for estimators that draw random numbers, e.g. cross-validation folds).
      comparisons: the data.

    Returns:
      :class:`FittedTournament`.
    """

  @abc.abstractmethod
  def replica_edges(self, state: Any, comparisons: Comparisons) -> jax.Array:
    """``(n, n)`` edges of resampled comparisons (same rows; new ``weight`` or ``outcome``).

    Pure and traceable: the bootstrap runs it under ``jit`` and ``lax.map`` over replicas.

    Args:
      state: :attr:`FittedTournament.state` of the fit on the original comparisons.
      comparisons: the rows with a replica's weights or outcomes.
    """

  def replica_state(self, state: Any, comparisons: Comparisons) -> Any:
    """The state :meth:`replica_edges` needs for rows ``comparisons`` instead of the fit's rows.

    The bootstrap resamples the fit's rows merged into count cells
    (:func:`~ste_jax.data.merge_into_cells`: the same pairs, fewer rows). An estimator whose
    state indexes rows rebuilds that index here; the default returns ``state`` unchanged.

    Args:
      state: :attr:`FittedTournament.state` of the fit.
      comparisons: the rows the replicas will reweight or redraw.
    """
    del comparisons
    return state

  def parametric_design(
    self, fitted: FittedTournament, comparisons: Comparisons, *, merge_rows: bool = True
  ) -> ParametricDesign | None:
    """The rows and draws of a parametric replica, or ``None``: redraw each row from the edges.

    ``None`` (the default) means the edges are the fitted model's win probabilities of every
    battle of a pair, so a replica redraws each row's (or count cell's) wins from ``edges[a, b]``
    (:func:`~ste_jax.evaluate._replicas.resample_model_outcomes`). An estimator whose model has
    more (per-battle covariates, tie outcomes) returns its own :class:`ParametricDesign`.

    Args:
      fitted: the estimator's fit on ``comparisons``.
      comparisons: the fitted rows.
      merge_rows: whether rows may be merged into count cells first (same distribution).
    """
    del fitted, comparisons, merge_rows
    return None

  @abc.abstractmethod
  def conventions(self) -> str:
    """One phrase: what the edges are, how a missing pair counts, what the hard relation is."""

  def resolve(self, comparisons: Comparisons) -> tuple["TournamentEstimator", str]:
    """``(estimator, reason)``: the estimator to use on ``comparisons`` and why.

    A concrete estimator returns itself (``"requested"``); a rule such as ``auto`` returns the
    estimator it picks.
    """
    del comparisons
    return self, "requested"

  def hard_relations(self, edges: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(weak, strict)`` boolean ``(..., n, n)`` relations of the edges (zero diagonal; pure).

    Default, for a tournament ``P``: strict ``P > 1/2``, weak ``P >= 1/2`` (a tie both ways), with
    :attr:`tie_tolerance_ulps` machine epsilons of slack.
    """
    n = edges.shape[-1]
    off = jnp.broadcast_to(~jnp.eye(n, dtype=bool), edges.shape)
    tol = self.tie_tolerance_ulps * jnp.finfo(edges.dtype).eps
    return (edges >= 0.5 - tol) & off, (edges > 0.5 + tol) & off

  def hard_memberships(self, edges: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Hard Top Cycle (reach all in the weak relation) and Uncovered Set (strict), ``(..., n)``."""
    weak, strict = self.hard_relations(edges)
    return exact.reach_all(weak), exact.uncovered_in_relation(strict)

  def soft_scores(self, edges: jax.Array, *, tau: float, gamma: float, **options: Any) -> STEScores:
    """STE scores of the edges (default: :func:`~ste_jax.ste_scores` of a tournament ``P``).

    Args:
      edges: ``(..., n, n)`` edges (a leading batch, e.g. contexts, is scored per slice).
      tau: edge temperature.
      gamma: Top-Cycle aggregation temperature.
      **options: further operator settings (``gamma_c``, ``max_path_length``, ``reach_gamma``),
        forwarded to the operator; an override must accept and forward them.
    """
    return ste_scores(edges, tau=tau, gamma=gamma, **options)

  def display_tournament(self, edges: jax.Array, counts: PairCounts) -> jax.Array:
    """A complementary ``(n, n)`` tournament for figures, witnesses, solutions (default: edges)."""
    del counts
    return edges

  def resolve_resampling(self, resampling: str) -> str:
    """``"poisson"`` or ``"parametric"``: what ``resampling`` means for this estimator.

    ``"auto"`` is parametric where :attr:`redraws_outcomes` (a Poisson replica reweights the
    observed comparisons, so a few-game perfect record stays perfect in every replica and the
    refitted model keeps that agent on top), else Poisson.

    Raises:
      ValueError: an unknown ``resampling``, or ``"parametric"`` for an estimator that cannot
        redraw outcomes.
    """
    if resampling not in RESAMPLING:
      raise OptionError(f"resampling must be one of {RESAMPLING}, got {resampling!r}.")
    if resampling == "auto":
      return "parametric" if self.redraws_outcomes else "poisson"
    if resampling == "parametric" and not self.redraws_outcomes:
      raise OptionError(
        f"resampling='parametric' redraws outcomes from a fitted model; the {self.name} "
        "estimator has none (use estimator='model' or resampling='poisson')."
      )
    return resampling
