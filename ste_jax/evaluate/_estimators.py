"""The tournament estimators behind the leaderboard: posterior-edge, win-rate, model and auto.

Each is a frozen dataclass implementing :class:`~ste_jax.evaluate.TournamentEstimator`; its edges
give the soft STE scores, the hard relation and the hard columns of a table:

* :class:`PosteriorEdgeEstimator`: the posterior-edge evidence ``D`` (paper §6.1, Eq.
  ``posterior_edge_estimator``); soft scores ``ste_scores_from_edges(D)``; hard relation
  ``a -> b`` iff ``D_ab > 0``. An unobserved or evenly split pair has ``D = 0`` both ways: *no
  edge* in either direction, soft or hard.
* :class:`WinRateEstimator`: the empirical win-rate tournament ``P``; hard relation ``P > 1/2``
  with ties and unobserved pairs (``P = 1/2``) counted both ways (the Smith-set convention).
* :class:`ModelEstimator`: the model tournament ``P̂`` (:mod:`ste_jax.evaluate._model_estimator`),
  every pair predicted, an observed pair's ``P̂`` kept within its record band; ``|P̂ - 1/2|``
  within 16 machine epsilons is a tie (equal fitted strengths), counted both ways.
* :class:`AutoEstimator`: posterior-edge when every pair was compared, else its model estimator.

The hard Top Cycle is the set of agents that reach every other agent through the *weak* relation,
the hard Uncovered Set the agents no one covers in the *strict* relation, and the tier of an agent
its depth in the condensation of the weak relation.

:data:`ESTIMATORS` is the one registry of the names the CLI and ``leaderboard(estimator=...)``
accept; :func:`estimator_named` maps a name to an instance.
"""

from collections.abc import Callable
import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._errors import OptionError
from ste_jax._options import check_options, option, parse_positive_or_none, positive_finite
from ste_jax._validation import validate_symmetric_prior
from ste_jax.data import (
  Comparisons,
  PairCounts,
  pair_counts,
  posterior_edges,
  win_rate_tournament,
)
from ste_jax.evaluate._controlled import (
  ControlledTournament,
  check_covariates,
  controlled_replica_edges,
  controlled_replica_state,
  fit_controlled_tournament,
  map_rows_to_cells,
  verdict_changes,
)
from ste_jax.evaluate._covariates import Covariates
from ste_jax.evaluate._model_estimator import (
  DEFAULT_RANKS,
  DEFAULT_RECORD_TOLERANCE,
  DEFAULT_SKEW_L2,
  DEFAULT_STRENGTH_L2,
  check_grid,
  fit_model_tournament,
  observed_pairs,
  refit_tournament,
)
from ste_jax.evaluate._parametric import (
  battle_units,
  outcome_probabilities,
  tie_outcome_draws,
  tie_outcome_rows,
  unit_logits,
)
from ste_jax.evaluate._protocol import FittedTournament, ParametricDesign, TournamentEstimator
from ste_jax.evaluate._replicas import resample_model_outcomes
from ste_jax.evaluate._tie_choice import choose_tie_model, describe_tie_choice
from ste_jax.evaluate._ties import (
  TIE_MODEL_CHOICES,
  HalfWinChoice,
  TieModelTournament,
  TieRefitState,
  fit_tie_tournament,
  refit_tie_tournament,
)
from ste_jax.ops import STEScores, ste_scores_from_edges


@dataclasses.dataclass(frozen=True)
class PosteriorEdgeEstimator(TournamentEstimator):
  """Posterior-edge evidence ``D_ab = max(0, 2 Pr(theta_ab > 1/2) - 1)`` (paper §6.1).

  ``theta_ab ~ Beta(alpha + w_ab, alpha + w_ba)`` for the prior ``Beta(alpha, alpha)`` (default
  Jeffreys, ``alpha = 1/2``; ties count 1/2 to each side by default).

  Attributes:
    prior: the symmetric Beta prior ``(alpha, alpha)``, finite ``alpha > 0``.
    tie_policy: ``"half"`` or ``"drop"`` (see :func:`~ste_jax.data.pair_counts`).

  Example:
    >>> import jax
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 1, 2] * 5, [1, 2, 0] * 5, [1.0] * 15)
    >>> fitted = PosteriorEdgeEstimator().fit(jax.random.key(0), c)
    >>> round(float(fitted.edges[0, 1]), 3), float(fitted.edges[1, 0])
    (0.986, 0.0)
  """

  prior: tuple[float, float] = option(
    (0.5, 0.5), help="symmetric Beta prior of the posterior-edge estimator", flag=None
  )
  tie_policy: str = option(
    "half", choices=("half", "drop"), help="how a tie counts (pair_counts)", flag=None
  )

  name = "posterior"
  ties_connect = False
  uses_tau = False
  edge_legend = (
    "'A > B (p)': A won a share p of its comparisons with B (ties 1/2); a pair never compared "
    "or evenly split is no edge"
  )

  def __post_init__(self):
    check_options(self)
    object.__setattr__(self, "prior", validate_symmetric_prior(self.prior))

  def fit(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    """The point edges ``D`` (draws no random numbers: ``key`` is unused)."""
    del key
    return FittedTournament(self.replica_edges(None, comparisons))

  def replica_edges(self, state: Any, comparisons: Comparisons) -> jax.Array:
    """``(n, n)`` posterior edges ``D`` of (reweighted) comparisons (pure)."""
    del state
    counts = pair_counts(comparisons, tie_policy=self.tie_policy)
    return posterior_edges(counts.wins, prior=self.prior)

  def conventions(self) -> str:
    return (
      "STE-posterior-edge (Jeffreys Beta(1/2,1/2) prior): D_ab = max(0, 2 Pr(theta_ab > 1/2) - "
      "1); an unobserved or evenly split pair has D = 0 both ways (no edge); hard relation "
      "a -> b iff D_ab > 0"
    )

  def hard_relations(self, edges: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``a -> b`` iff ``D_ab > 0``, weak and strict alike (no tie is an edge)."""
    n = edges.shape[-1]
    strict = (edges > 0) & jnp.broadcast_to(~jnp.eye(n, dtype=bool), edges.shape)
    return strict, strict

  def soft_scores(self, edges: jax.Array, *, tau: float, gamma: float, **options: Any) -> STEScores:
    """:func:`~ste_jax.ste_scores_from_edges` of ``D`` (``tau`` unused; ``options`` forwarded)."""
    del tau
    return ste_scores_from_edges(edges, gamma=gamma, **options)

  def display_tournament(self, edges: jax.Array, counts: PairCounts) -> jax.Array:
    """The win-rate tournament of ``counts``: its strict majority ``P > 1/2`` is ``D > 0``."""
    del edges
    return win_rate_tournament(counts)


@dataclasses.dataclass(frozen=True)
class WinRateEstimator(TournamentEstimator):
  """The empirical win-rate tournament ``P`` (ties 1/2 each way; an unobserved pair ``1/2``).

  Attributes:
    missing: the value of ``P`` at an unobserved pair, in ``[0, 1]`` or NaN.
    tie_policy: ``"half"`` or ``"drop"`` (see :func:`~ste_jax.data.pair_counts`).

  Example:
    >>> import jax
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 0, 1], [1, 1, 2], [1.0, 0.0, 1.0])
    >>> P = WinRateEstimator().fit(jax.random.key(0), c).edges
    >>> float(P[0, 1]), float(P[0, 2])  # one win of two; never compared
    (0.5, 0.5)
  """

  missing: float = option(
    0.5, help="win rate of a pair never compared (win-rate estimator)", flag=None
  )
  tie_policy: str = option(
    "half", choices=("half", "drop"), help="how a tie counts (pair_counts)", flag=None
  )

  name = "winrate"
  edge_legend = "'A > B (p)': A won a share p of its comparisons with B (ties 1/2)"

  def __post_init__(self):
    check_options(self)
    missing = float(self.missing)
    if not (missing != missing or 0 <= missing <= 1):
      raise OptionError(f"missing must be in [0, 1] or NaN, got {missing}.")
    object.__setattr__(self, "missing", missing)

  def fit(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    """The win-rate tournament (draws no random numbers: ``key`` is unused)."""
    del key
    return FittedTournament(self.replica_edges(None, comparisons))

  def replica_edges(self, state: Any, comparisons: Comparisons) -> jax.Array:
    """``(n, n)`` win-rate tournament of (reweighted) comparisons (pure)."""
    del state
    counts = pair_counts(comparisons, tie_policy=self.tie_policy)
    return win_rate_tournament(counts, missing=self.missing)

  def conventions(self) -> str:
    return (
      "win-rate tournament P (ties count 1/2 to each side); an unobserved pair is P = 1/2, a tie "
      "counted both ways; hard relation P > 1/2 (ties both ways: Smith set)"
    )


def _redraw_wins(p, weight, key, num_replicas):
  return resample_model_outcomes(key, p, weight, num_replicas)


def _redraw_outcomes(probabilities, weight, key, num_replicas):
  return tie_outcome_draws(key, probabilities, weight, num_replicas)


def _model_grid(values: tuple, name: str) -> tuple:
  return check_grid(values, name, integer=name == "ranks")


@dataclasses.dataclass(frozen=True)
class ModelEstimator(TournamentEstimator):
  """Bradley-Terry plus a low-rank intransitive term, CV-chosen, predicting every pair.

  The settings of :func:`~ste_jax.evaluate.fit_model_tournament` (see there); bootstrap replicas
  refit the chosen model warm-started at the full-data fit (``refit_steps`` L-BFGS steps), and the
  default resampling redraws outcomes from the fitted model (parametric bootstrap).

  Attributes:
    record_tolerance: ``c > 0`` of the observed pairs' record bands (``None``: the model alone).
    ranks, strength_l2, skew_l2: the cross-validation grid.
    num_folds, num_steps, refit_steps: folds and L-BFGS steps of a fit and of a refit.
    covariates: ``None``, or the :class:`~ste_jax.evaluate.Covariates` of the comparisons the
      estimator will be fitted on: the edges are then the controlled tournament
      (:func:`~ste_jax.evaluate.fit_controlled_tournament`), and a parametric replica redraws
      each battle from the fitted model with its covariate term (:meth:`parametric_design`).
    tie_model: ``"half"`` (ties count half a win), ``"davidson"`` or ``"rao-kupper"``
      (:func:`~ste_jax.evaluate.fit_tie_tournament`; a parametric replica redraws wins, ties and
      losses from the tie model), or ``"auto"``: the one of the three with the best
      cross-validated win/tie/loss log-likelihood
      (:func:`~ste_jax.evaluate._tie_choice.choose_tie_model`, which states how the half-win
      model is scored). A tie model combines with ``covariates`` (one likelihood,
      :func:`~ste_jax.evaluate._controlled.fit_covariate_tie_model`); with ``"auto"`` the
      cross-validation then compares the three with the covariates in every logit.

  Example:
    >>> import jax
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 1, 2] * 30, [1, 2, 0] * 30, [1.0] * 90)  # a 3-cycle
    >>> est = ModelEstimator(ranks=(0, 1))
    >>> fitted = est.fit(jax.random.key(0), c)
    >>> fitted.model.chosen.rank, [bool(x) for x in est.hard_memberships(fitted.edges)[0]]
    (1, [True, True, True])
  """

  record_tolerance: float | None = option(
    DEFAULT_RECORD_TOLERANCE,
    help="model estimator: each compared pair's P stays within its record band, the P under "
    "which its win count is within C standard deviations (at P = 1/2) of expectation, so the "
    "model never overrides a long head-to-head record; 'none': the model alone",
    parse=parse_positive_or_none,
    check=positive_finite,
    metavar="C",
  )
  ranks: tuple[int, ...] = option(
    DEFAULT_RANKS, help="candidate ranks of the intransitive term", flag=None
  )
  strength_l2: tuple[float, ...] = option(
    DEFAULT_STRENGTH_L2, help="candidate ridges on the strengths", flag=None
  )
  skew_l2: tuple[float, ...] = option(
    DEFAULT_SKEW_L2, help="candidate ridges on the intransitive factors", flag=None
  )
  num_folds: int = option(5, help="cross-validation folds", flag=None)
  num_steps: int = option(50, help="L-BFGS steps of a fit", flag=None)
  refit_steps: int = option(12, help="L-BFGS steps of a bootstrap refit", flag=None)
  covariates: Covariates | None = option(
    None,
    help="per-comparison feature differences to control for (a controlled model tournament, "
    "fit_controlled_tournament); row-aligned with the comparisons the estimator is fitted on",
    flag=None,
  )
  tie_model: str = option(
    "half",
    choices=TIE_MODEL_CHOICES,
    help="model estimator: how a tie counts: half (half a win to each side), davidson or "
    "rao-kupper (ties as their own outcome, the tie parameter fitted; edges P(a wins | decisive); "
    "parametric replicas redraw wins, ties and losses), or auto (the one with the best "
    "cross-validated win/tie/loss log-likelihood)",
  )

  name = "model"
  tie_tolerance_ulps = 16
  edge_legend = "'A > B (p)': A beats B with probability p in the model's tournament"

  def __post_init__(self):
    check_options(self)
    for name in ("ranks", "strength_l2", "skew_l2"):
      object.__setattr__(self, name, _model_grid(getattr(self, name), name))
    for name, low in (("num_folds", 2), ("num_steps", 1), ("refit_steps", 1)):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")

  redraws_outcomes = True  # from the fitted model, covariates and tie outcomes included

  def fit(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    """Cross-validated fit (``key``: folds and initial factors); ``model`` is the fit's record.

    With :attr:`covariates`, the edges are the controlled tournament and ``model`` the
    :class:`~ste_jax.evaluate.ControlledTournament` (its uncontrolled fit beside it, and the
    agents whose hard Top-Cycle / Uncovered verdict changes under control).
    """
    if self.covariates is not None:
      return self._fit_controlled(key, comparisons)
    if self.tie_model != "half":
      return self._fit_ties(key, comparisons)
    fit = fit_model_tournament(key, comparisons, **self._grid())
    return FittedTournament(fit.P, fit.refit_state(), fit)

  def _grid(self) -> dict:
    """The cross-validation grid and step counts, as keywords of every fitting function."""
    return dict(
      ranks=self.ranks,
      strength_l2=self.strength_l2,
      skew_l2=self.skew_l2,
      num_folds=self.num_folds,
      num_steps=self.num_steps,
      refit_steps=self.refit_steps,
      record_tolerance=self.record_tolerance,
    )

  def _choose_tie_model(self, key: jax.Array, comparisons: Comparisons, covariates):
    """``(tie model, half-win fit, report line)`` of ``tie_model="auto"``: the half-win model
    fitted, then :func:`~ste_jax.evaluate._tie_choice.choose_tie_model` (with ``covariates`` in
    every logit when not ``None``)."""
    half = fit_model_tournament(key, comparisons, **self._grid())
    model, table = choose_tie_model(
      jax.random.fold_in(key, 1),
      comparisons,
      half,
      covariates=covariates,
      num_folds=self.num_folds,
      num_steps=self.num_steps,
    )
    names = () if covariates is None else covariates.names
    return model, half, describe_tie_choice(model, table, self.num_folds, covariates=names)

  def _fit_controlled(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    model, uncontrolled, line = self.tie_model, None, ""
    if model == "auto":
      check_covariates(comparisons, self.covariates)
      model, uncontrolled, line = self._choose_tie_model(key, comparisons, self.covariates)
    fit = fit_controlled_tournament(
      key,
      comparisons,
      self.covariates,
      tie_model=model,
      uncontrolled=uncontrolled,
      **self._grid(),
    )
    before = fit.uncontrolled.P
    if model != "half":  # the same tie model without the covariates
      before = fit_tie_tournament(
        key, comparisons, model=model, half=fit.uncontrolled, **self._grid()
      ).P
    fit = dataclasses.replace(
      fit,
      tie_cv=line,
      verdict_changes=verdict_changes(
        self.hard_memberships(before),
        self.hard_memberships(fit.P),
        comparisons.agents,
      ),
    )
    return FittedTournament(fit.P, controlled_replica_state(fit, comparisons, self.covariates), fit)

  def _fit_ties(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    model, half, line = self.tie_model, None, ""
    if model == "auto":
      model, half, line = self._choose_tie_model(key, comparisons, None)
      if model == "half":
        fields = {f.name: getattr(half, f.name) for f in dataclasses.fields(half)}
        return FittedTournament(half.P, half.refit_state(), HalfWinChoice(**fields, tie_cv=line))
    fit = fit_tie_tournament(key, comparisons, model=model, half=half, **self._grid())
    fit = dataclasses.replace(fit, tie_cv=line)
    state = TieRefitState(*fit.refit_state(), observed_pairs(comparisons), model)
    return FittedTournament(fit.P, state, fit)

  def parametric_design(
    self, fitted: FittedTournament, comparisons: Comparisons, *, merge_rows: bool = True
  ) -> ParametricDesign | None:
    """The fitted model's own replica rows with covariates or a tie model, else ``None``.

    Without either, the edges are the model's win probabilities and the default redraw applies.
    With covariates, each battle (or unit of battles with equal features) is redrawn from
    ``sigmoid(h + beta . x)``; with a tie model, each unit's wins, ties and losses from the tie
    model's three probabilities (:mod:`ste_jax.evaluate._parametric`).
    """
    fit = fitted.model
    tie_model = fit.model if isinstance(fit, TieModelTournament) else "half"
    if isinstance(fit, ControlledTournament):
      tie_model = fit.tie_model
    if self.covariates is None and tie_model == "half":
      return None
    dtype = comparisons.weight.dtype
    diff = None
    if self.covariates is not None:
      check_covariates(comparisons, self.covariates)
      diff = np.asarray(self.covariates.diff)
    units = battle_units(comparisons, diff, merge=merge_rows)
    beta = None if self.covariates is None else fit.beta
    h = unit_logits(fit.params, beta, units)
    if tie_model == "half":
      p = 1.0 / (1.0 + np.exp(-h))
      rows = Comparisons(
        a=jnp.asarray(units.a, jnp.int32),
        b=jnp.asarray(units.b, jnp.int32),
        outcome=jnp.asarray(p, dtype),
        context=jnp.zeros(units.a.shape, jnp.int32),
        weight=jnp.asarray(units.weight, dtype),
        agents=comparisons.agents,
        contexts=comparisons.contexts[:1],
      )
      covariates = Covariates(jnp.asarray(units.diff, dtype), self.covariates.names)
      state = controlled_replica_state(fit, rows, covariates)
      return ParametricDesign(
        rows, state, functools.partial(_redraw_wins, p, units.weight), "outcome"
      )
    probabilities = outcome_probabilities(h, float(fit.tie_param), tie_model)
    rows = tie_outcome_rows(units, comparisons)
    if self.covariates is None:
      state = TieRefitState(*fit.refit_state(), observed_pairs(rows), tie_model)
    else:
      covariates = Covariates(
        jnp.asarray(np.tile(units.diff, (3, 1)), dtype), self.covariates.names
      )
      state = controlled_replica_state(fit, rows, covariates)
    draw = functools.partial(_redraw_outcomes, probabilities, units.weight)
    return ParametricDesign(rows, state, draw, "weight")

  def replica_edges(self, state: Any, comparisons: Comparisons) -> jax.Array:
    """The chosen model refitted on the replica's rows, warm-started at the fit (pure)."""
    if self.covariates is not None:
      return controlled_replica_edges(state, comparisons, num_steps=self.refit_steps)
    if isinstance(state, TieRefitState):  # the tie model is static in the state's structure
      return refit_tie_tournament(
        (state.params, state.tie_param, state.settings),
        state.pairs,
        comparisons.outcome,
        comparisons.weight,
        model=state.model,
        num_steps=self.refit_steps,
      )
    return refit_tournament(
      state, comparisons.outcome, comparisons.weight, num_steps=self.refit_steps
    )

  def replica_state(self, state: Any, comparisons: Comparisons) -> Any:
    """The fit's parameters and ridges with the pair index of ``comparisons`` (same pairs).

    With covariates, the state keeps the fit's rows and maps them to the cells of
    ``comparisons`` (:func:`~ste_jax.evaluate._controlled.map_rows_to_cells`).
    """
    if self.covariates is not None:
      return map_rows_to_cells(state, comparisons)
    if isinstance(state, TieRefitState):
      return dataclasses.replace(state, pairs=observed_pairs(comparisons))
    params, _, settings = state
    return params, observed_pairs(comparisons), settings

  def conventions(self) -> str:
    controlled = (
      ""
      if self.covariates is None
      else f", controlled for {', '.join(self.covariates.names)} (every feature difference 0)"
    )
    ties = "ties count 1/2 to each side"
    if self.tie_model == "auto":
      ties = "ties counted by the tie model cross-validation chooses, P = P(a wins | decisive)"
    elif self.tie_model != "half":
      ties = f"ties as their own outcome ({self.tie_model}), P = P(a wins | decisive)"
    return (
      "model tournament P = sigmoid(h) of a pairwise model fitted to the observed comparisons, "
      f"predicting every pair (structured matrix completion; {ties}){controlled}; hard relation "
      "P > 1/2"
    )


@dataclasses.dataclass(frozen=True)
class AutoEstimator(TournamentEstimator):
  """Posterior-edge when every pair was compared, else ``model`` (resolved per data set).

  Example:
    >>> from ste_jax.data import Comparisons
    >>> c = Comparisons.from_arrays([0, 1], [1, 2], [1.0, 1.0])  # 0 and 2 never met
    >>> est, reason = AutoEstimator().resolve(c)
    >>> type(est).__name__, reason
    ('ModelEstimator', 'auto: 1 of 3 pairs never compared')
  """

  model: ModelEstimator = ModelEstimator()

  name = "auto"

  def resolve(self, comparisons: Comparisons) -> tuple[TournamentEstimator, str]:
    n = comparisons.num_agents
    totals = np.asarray(pair_counts(comparisons).totals)
    observed = int(np.count_nonzero(np.triu(totals > 0, 1)))
    pairs = n * (n - 1) // 2
    if observed == pairs:
      return PosteriorEdgeEstimator(), "auto: every pair was compared"
    return self.model, f"auto: {pairs - observed} of {pairs} pairs never compared"

  @property
  def redraws_outcomes(self) -> bool:  # what "parametric" may mean once resolved
    return self.model.redraws_outcomes

  def fit(self, key: jax.Array, comparisons: Comparisons) -> FittedTournament:
    """The fit of the estimator :meth:`resolve` picks."""
    return self.resolve(comparisons)[0].fit(key, comparisons)

  def replica_edges(self, state: Any, comparisons: Comparisons) -> jax.Array:
    raise TypeError("AutoEstimator has no replicas of its own: resolve() it on the data first.")

  def conventions(self) -> str:
    return "auto: posterior when every pair was compared, else model"


# The one registry of estimator names (CLI ``--estimator``, ``leaderboard(estimator="...")``):
# name -> a factory taking the model estimator's settings.
ESTIMATORS: dict[str, Callable[[ModelEstimator], TournamentEstimator]] = {
  "auto": lambda model: AutoEstimator(model),
  "posterior": lambda model: PosteriorEdgeEstimator(),
  "winrate": lambda model: WinRateEstimator(),
  "model": lambda model: model,
}


def estimator_named(name: str, model: ModelEstimator | None = None) -> TournamentEstimator:
  """The estimator of a registry name (:data:`ESTIMATORS`).

  Args:
    name: ``"auto"``, ``"posterior"``, ``"winrate"`` or ``"model"``.
    model: the model estimator's settings, used by ``model`` and ``auto`` (default
      :class:`ModelEstimator`).

  Raises:
    ValueError: an unknown name.
  """
  if name not in ESTIMATORS:
    raise ValueError(f"estimator must be one of {tuple(ESTIMATORS)}, got {name!r}.")
  return ESTIMATORS[name](ModelEstimator() if model is None else model)


def as_estimator(estimator: "str | TournamentEstimator") -> TournamentEstimator:
  """An estimator instance from a registry name or an instance (checked)."""
  if isinstance(estimator, str):
    return estimator_named(estimator)
  if not isinstance(estimator, TournamentEstimator):
    raise TypeError(
      f"estimator must be one of {tuple(ESTIMATORS)} or a TournamentEstimator, got "
      f"{type(estimator).__name__}."
    )
  return estimator


@dataclasses.dataclass(frozen=True)
class EstimatorChoice:
  """The ``--estimator`` option: a registry name (its settings are the model estimator's)."""

  estimator: str = option(
    "auto",
    choices=tuple(ESTIMATORS),
    help="tournament estimator behind every column: auto (posterior when every pair was "
    "compared, else model), posterior (posterior-edge evidence, paper 6.1; an unobserved pair "
    "has no edge), winrate (empirical win rate; an unobserved pair is a tie) or model "
    "(Bradley-Terry + a low-rank intransitive term fitted to the comparisons, CV-chosen, "
    "predicting every pair; a compared pair kept within its record band, --record-tolerance)",
  )

  def __post_init__(self):
    check_options(self)

  def build(self, model: ModelEstimator | None = None) -> TournamentEstimator:
    """:func:`estimator_named` of this choice."""
    return estimator_named(self.estimator, model)


def fit_estimator(
  key: jax.Array, comparisons: Comparisons, estimator: "str | TournamentEstimator"
) -> tuple[TournamentEstimator, str, FittedTournament, jax.Array]:
  """``(estimator, reason, fit, bootstrap key)``: the resolved estimator, fitted with half a key.

  The other half of ``key`` is the key of the table's bootstrap replicas.
  """
  k_fit, k_boot = jax.random.split(key)
  est, reason = as_estimator(estimator).resolve(comparisons)
  return est, reason, est.fit(k_fit, comparisons), k_boot
