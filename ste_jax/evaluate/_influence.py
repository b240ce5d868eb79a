"""Influence of each comparison on the soft cores: ``d score / d weight``, through the estimator.

A comparison's *influence* on an agent's soft Top-Cycle (Uncovered) score is the derivative of that
score with respect to the comparison's weight, the whole pipeline differentiated: the weighted
pair counts, the estimator's edges and the STE operators (paper §4, the soft scores
``ste_scores`` / ``ste_scores_from_edges``). Removing a comparison of weight ``w`` changes the score
by about ``-w * influence`` (a first-order leave-one-out); adding one more copy of it by
``+influence``.

How each estimator is differentiated:

* ``winrate`` (and any custom estimator whose :meth:`replica_edges` is differentiable): reverse-mode
  autodiff of :meth:`~ste_jax.evaluate.TournamentEstimator.replica_edges` in the weights.
* ``posterior``: autodiff of the counts and the operators; the posterior-edge evidence ``D`` needs
  the derivative of the regularized incomplete beta ``I_{1/2}(a, b)`` in its *parameters*, which
  JAX does not provide, so each entry's two partials ``dD_ab / dw_ab`` and ``dD_ab / dw_ba`` are
  central differences of :func:`~ste_jax.data.posterior_edges` with the relative step
  ``eps^(1/3)`` (error ``O(eps^(2/3))``: about ``2e-5`` relative in float32, ``4e-11`` in float64).
  At an evenly split pair, where ``D`` has a kink, this is the mean of the two one-sided slopes.
* ``model``: implicit differentiation at the fit (the implicit function theorem). The fitted
  parameters ``theta*`` are first refined by ``num_steps`` more warm-started L-BFGS steps (so the
  stationarity ``grad_theta L(theta*, w) = 0`` holds to the solver's accuracy), then
  ``d theta* / dw = -H^+ d_w grad_theta L`` with ``H`` the Hessian of the penalized likelihood in
  ``theta`` (pseudo-inverted on its range: the model's gauge directions, such as rotations of the
  intransitive factors, change no probability). The edges depend on ``w`` through ``theta*`` and
  directly through the observed pairs' record bands; both parts are included. With record bands
  (the default) the pipeline is smooth except where a pair's fitted logit lies *on* its band's
  edge: there the profiled likelihood's curvature jumps (from ``n sigma'(h)`` inside the band to 0
  outside) and the table's ``P = sigmoid(clip(h, lo, hi))`` has a kink, so ``theta*(w)`` and the
  scores are only one-sided differentiable. Off the edges -- whether a pair is inside its band or
  clipped to it -- the implicit derivative is exact (the tests check both against central
  differences). :func:`comparison_influence` warns, and says in
  :attr:`ComparisonInfluence.method`, when some pair's refined logit lies within
  :data:`BAND_EDGE_TOLERANCE` of its band's edge: the influence reported is then the derivative on
  the side autodiff takes (inside the band), and a finite difference across the edge averages two
  slopes. Without bands (``record_tolerance=None``) the pipeline is smooth. With covariates
  (:class:`~ste_jax.evaluate.Covariates`) or a Davidson / Rao-Kupper tie model, ``theta`` also
  holds ``beta`` and the tie parameter, ``L`` is the joint likelihood the fit maximizes (over the
  rows with covariates, over the pairs' win / tie / loss counts without), and the edges are the
  controlled tournament the estimator reports (every feature difference zero;
  ``P(a wins | decisive)`` with a tie model); these fits have no record bands.

Where two edges of the max-min paths behind the soft Top Cycle are equal (common with integer
counts: two pairs with the same record), the soft scores have a kink and the influence is the
derivative along the path autodiff takes.

Each requested agent costs one reverse pass per score (Top Cycle, Uncovered), ``vmap``-ed over the
agents.
"""

import dataclasses
import functools
from typing import TYPE_CHECKING, Any
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._errors import InputError, OptionError
from ste_jax._results import result_type, static
from ste_jax.data import Comparisons, pair_counts, posterior_edges
from ste_jax.evaluate._controlled import (
  _fit_covariate_ties_jit,
  _fit_covariates_jit,
  _ridge,
  _row_logits,
  tie_row_loss,
)
from ste_jax.evaluate._estimators import ModelEstimator, PosteriorEdgeEstimator, as_estimator
from ste_jax.evaluate._model_estimator import (
  _penalized_nll,
  banded_tournament,
  fit_intransitive,
  pair_wins,
  record_band,
)
from ste_jax.evaluate._protocol import FittedTournament, TournamentEstimator
from ste_jax.evaluate._ties import (
  TieRefitState,
  _fit_tie_jit,
  pair_outcome_counts,
  tie_log_probabilities,
  tie_tournament,
)
from ste_jax.models import IntransitiveParams
from ste_jax.models._intransitive import intransitive_logits, intransitive_tournament

if TYPE_CHECKING:
  import pandas as pd

SCORES = ("top_cycle", "uncovered")
DEFAULT_NUM_AGENTS = 3
BAND_EDGE_TOLERANCE = 1e-6
"""Logit distance (relative to ``1 + |h|``) within which a pair sits on its record band's edge."""


@result_type
class ComparisonInfluence:
  """Per-comparison influence on the soft scores of some agents.

  Row ``i`` of the data is comparison ``a[i]`` vs ``b[i]`` with outcome ``outcome[i]`` and weight
  ``weight[i]``; ``top_cycle[k, i]`` is ``d tc_score[agents[k]] / d weight[i]`` at the data.

  Attributes:
    agents: ``(k,)`` int64 indices of the agents whose scores are differentiated.
    top_cycle: ``(k, m)`` influence of each row on each agent's soft Top-Cycle score.
    uncovered: ``(k, m)`` influence on the soft Uncovered score.
    top_cycle_score, uncovered_score: ``(k,)`` the agents' soft scores at the data.
    a, b, outcome, weight: ``(m,)`` the rows (as given to :func:`comparison_influence`).
    names: the agent names. Static.
    estimator: the estimator's name. Static.
    method: how the estimator was differentiated (see the module docstring); for the model,
      ending ``one-sided: ...`` where some pair lies on its record band's edge. Static.
    line: ``(m,)`` int64 input line of each row (:attr:`~ste_jax.data.Comparisons.line`), or
      ``None`` where the comparisons carry none.
  """

  agents: np.ndarray
  top_cycle: np.ndarray
  uncovered: np.ndarray
  top_cycle_score: np.ndarray
  uncovered_score: np.ndarray
  a: np.ndarray
  b: np.ndarray
  outcome: np.ndarray
  weight: np.ndarray
  names: tuple[str, ...] = static()
  estimator: str = static()
  method: str = static()
  line: np.ndarray | None = None

  def to_frame(self, num: int = 10, *, distinct: bool = True) -> "pd.DataFrame":
    """The ``num`` largest-``|influence|`` rows per agent and score, largest first.

    Args:
      num: rows per agent and score.
      distinct: list each distinct ``(a, b, outcome, influence)`` once, ``rows`` saying how many
        rows share it (identical votes have identical influence); ``False``: every row.

    Returns:
      A DataFrame with columns ``agent``, ``score`` (``top_cycle`` / ``uncovered``), ``value``
      (the agent's score), ``row`` (the first such row), ``rows``, ``a``, ``b`` (names),
      ``outcome``, ``weight`` (of one row), ``influence`` and ``removal_effect``
      (``-weight * influence``: the first-order change of the score if that row were removed);
      where the rows carry input lines, also ``line`` (of the first such row) after ``row``.
    """
    import pandas as pd

    columns = ["agent", "score", "value", "row", "rows", "a", "b", "outcome", "weight"]
    columns += ["influence", "removal_effect"]
    if self.line is not None:
      columns.insert(4, "line")
    parts = []
    for k, agent in enumerate(np.asarray(self.agents)):
      for score in SCORES:
        infl = np.asarray(getattr(self, score))[k]
        rows = pd.DataFrame(
          dict(
            row=np.arange(infl.size),
            a=np.asarray(self.a),
            b=np.asarray(self.b),
            outcome=np.asarray(self.outcome, dtype=np.float64),
            weight=np.asarray(self.weight, dtype=np.float64),
            influence=infl.astype(np.float64),
          )
        )
        if distinct:
          keys = ["a", "b", "outcome", "weight", "influence"]
          rows = rows.groupby(keys, sort=False, as_index=False).agg(
            row=("row", "first"), rows=("row", "size")
          )
        else:
          rows["rows"] = 1
        if self.line is not None:
          rows["line"] = np.asarray(self.line, dtype=np.int64)[rows["row"].to_numpy()]
        rows = rows.iloc[np.argsort(-np.abs(rows["influence"].to_numpy()), kind="stable")[:num]]
        rows = rows.assign(
          agent=self.names[agent],
          score=score,
          value=float(np.asarray(getattr(self, f"{score}_score"))[k]),
          a=[self.names[int(i)] for i in rows["a"]],
          b=[self.names[int(i)] for i in rows["b"]],
          removal_effect=-rows["weight"] * rows["influence"],
        )
        parts.append(rows[columns])
    frame = pd.concat(parts, ignore_index=True)
    frame.attrs.update(estimator=self.estimator, method=self.method)
    return frame


def _entry_partials(wins: jax.Array, alpha: float) -> tuple[jax.Array, jax.Array]:
  """``(own, cross)``: ``dD_xy / dw_xy`` and ``dD_xy / dw_yx`` by central differences."""
  n = wins.shape[-1]
  step = jnp.cbrt(jnp.finfo(wins.dtype).eps) * (alpha + wins)  # < alpha + wins: a stays > 0
  upper = jnp.triu(jnp.ones((n, n), dtype=bool), 1)
  lower = upper.T

  def diff(mask):
    h = jnp.where(mask, step, 0)
    return posterior_edges(wins + h, prior=(alpha, alpha)) - posterior_edges(
      wins - h, prior=(alpha, alpha)
    )

  d_upper, d_lower = diff(upper), diff(lower)
  two_h, two_ht = 2 * step, 2 * step.T
  own = jnp.where(upper, d_upper / two_h, d_lower / two_h)
  cross = jnp.where(lower, d_upper / two_ht, d_lower / two_ht)
  off = ~jnp.eye(n, dtype=bool)
  return jnp.where(off, own, 0), jnp.where(off, cross, 0)


def differentiable_posterior_edges(wins: jax.Array, alpha: float) -> jax.Array:
  """:func:`~ste_jax.data.posterior_edges` with a derivative in the counts (module docstring).

  Args:
    wins: ``(n, n)`` non-negative weighted win counts.
    alpha: the symmetric prior's ``alpha > 0``.

  Returns:
    ``(n, n)`` posterior edges ``D``, the same values as ``posterior_edges(wins)``; its JVP is
    ``own * dw + cross * dw.T`` with the entrywise central-difference partials.
  """

  @jax.custom_jvp
  def edges(w):
    return posterior_edges(w, prior=(alpha, alpha))

  @edges.defjvp
  def _(primals, tangents):
    (w,), (dw,) = primals, tangents
    own, cross = _entry_partials(w, alpha)
    return edges(w), own * dw + cross * dw.T

  return edges(wins)


def _default_agents(scores: np.ndarray, num_agents: int) -> np.ndarray:
  return np.argsort(-scores, kind="stable")[:num_agents].astype(np.int64)


def _check_agents(agents: Any, names: tuple[str, ...]) -> np.ndarray:
  out = []
  for x in agents:
    if isinstance(x, str):
      if x not in names:
        raise InputError(f"agents: {x!r} is not an agent of the comparisons.")
      out.append(names.index(x))
    else:
      i = int(x)
      if not 0 <= i < len(names):
        raise InputError(f"agents: index {i} is not in [0, {len(names)}).")
      out.append(i)
  if not out:
    raise InputError("agents must name at least one agent.")
  return np.asarray(out, dtype=np.int64)


def _model_pipeline(est: ModelEstimator, fitted: FittedTournament, comparisons: Comparisons):
  """``(theta*, edges(theta, w), grad_theta L(theta, w), L, band-edge pairs)`` of the model.

  ``theta*`` is refined by ``est.num_steps`` warm-started L-BFGS steps. With covariates or a tie
  model, :func:`_joint_pipeline`.
  """
  if isinstance(fitted.state, (dict, TieRefitState)):
    return _joint_pipeline(est, fitted, comparisons)
  params, pairs, settings = fitted.state
  outcome = comparisons.outcome
  mask = params.mask
  n, K = params.u.shape

  def unflatten(x):
    return x[:n], x[n : n + n * K].reshape(n, K), x[n + n * K :].reshape(n, K)

  def counts(w):
    w_ij, w_ji = pair_wins(pairs, outcome, w)
    return w_ij, w_ji, record_band(w_ij, w_ji, settings[2])

  def loss(theta, w):
    w_ij, w_ji, band = counts(w)
    return _penalized_nll(unflatten(theta), mask, pairs, w_ij, w_ji, band, settings[0], settings[1])

  def edges(theta, w):
    _, _, band = counts(w)
    return banded_tournament(IntransitiveParams(*unflatten(theta), mask), pairs, band)

  w_ij, w_ji, _ = counts(comparisons.weight)
  refined = fit_intransitive(
    params, pairs, w_ij, w_ji, settings[0], settings[1], settings[2], num_steps=est.num_steps
  )
  theta = jnp.concatenate([refined.strength, refined.u.reshape(-1), refined.v.reshape(-1)])
  _, _, band = counts(comparisons.weight)
  h = intransitive_logits(refined, pairs.i, pairs.j)
  return theta, edges, jax.grad(loss, argnums=0), loss, band_edge_pairs(h, band.lo, band.hi)


def _joint_pipeline(est: ModelEstimator, fitted: FittedTournament, comparisons: Comparisons):
  """:func:`_model_pipeline` of a model with covariates and/or a tie model (no record bands).

  ``theta = (s, U, V[, t][, beta])``: the strengths, the intransitive factors, the tie parameter
  (Davidson or Rao-Kupper) and the covariate coefficients. The loss is the penalized negative
  log-likelihood the fit minimizes (over the rows with covariates, over the pairs' win / tie /
  loss counts without), the ridges fixed at the chosen ones; the edges are the controlled
  tournament (every feature difference zero) of ``P(a wins | decisive)`` with a tie model, which
  depend on ``w`` only through ``theta``.
  """
  state = fitted.state
  outcome = comparisons.outcome
  if isinstance(state, TieRefitState):
    params, tie, settings, pairs, model = (
      state.params,
      state.tie_param,
      state.settings,
      state.pairs,
      state.model,
    )
    beta, diff = None, None
  else:
    model = state["tie_model"].name
    refit = state["refit"]
    params, beta, settings = refit[:3]
    tie = refit[3] if model != "half" else None
    pairs, diff = state["pairs"], state["diff"]
    if diff.shape[0] != comparisons.num_comparisons:
      raise InputError(
        f"comparisons: {comparisons.num_comparisons} rows, but the controlled fit has "
        f"{diff.shape[0]}: pass the comparisons the estimator was fitted on."
      )
  mask = params.mask
  n, K = params.u.shape
  d = 0 if beta is None else beta.shape[0]
  has_tie = model != "half"
  split = n + 2 * n * K

  def unflatten(x):
    s, u, v = x[:n], x[n : n + n * K].reshape(n, K), x[n + n * K : split].reshape(n, K)
    t = x[split] if has_tie else None
    return IntransitiveParams(s, u, v, mask), t, x[split + int(has_tie) :]

  def loss(theta, w):
    pr, t, b = unflatten(theta)
    if diff is None:  # a tie model on the pairs' counts
      w_ij, w_ji, ties = pair_outcome_counts(pairs, outcome, w)
      la, lb, lt = tie_log_probabilities(intransitive_logits(pr, pairs.i, pairs.j), t, model)
      nll = -jnp.sum(w_ij * la + w_ji * lb + ties * jnp.where(ties > 0, lt, 0))
    else:
      h = _row_logits(pr, b, pairs, diff.T)
      rows = tie_row_loss(h, t, outcome, model) if has_tie else jax.nn.softplus(h) - outcome * h
      nll = jnp.sum(w * rows)
    return nll + _ridge(pr, settings[0], settings[1])

  def edges(theta, w):
    del w
    pr, t, _ = unflatten(theta)
    return tie_tournament(pr, t, model) if has_tie else intransitive_tournament(pr)

  weight = comparisons.weight
  steps = est.num_steps
  if diff is None:
    counts = pair_outcome_counts(pairs, outcome, weight)
    args = (settings[0], settings[1])
    params, tie = _fit_tie_jit(params, tie, pairs, counts, *args, model=model, num_steps=steps)
  elif has_tie:
    args = (pairs, outcome, weight, diff, settings[0], settings[1])
    params, tie, beta = _fit_covariate_ties_jit(
      params, tie, beta, *args, model=model, num_steps=steps
    )
  else:
    args = (pairs, outcome, weight, diff, settings[0], settings[1])
    params, beta = _fit_covariates_jit(params, beta, *args, num_steps=steps)
  parts = [params.strength, params.u.reshape(-1), params.v.reshape(-1)]
  parts += [jnp.reshape(tie, (1,))] if has_tie else []
  parts += [beta] if d else []
  theta = jnp.concatenate(parts)
  return theta, edges, jax.grad(loss, argnums=0), loss, np.zeros((0,), np.int64)


def band_edge_pairs(h: np.typing.ArrayLike, lo: np.typing.ArrayLike, hi: np.typing.ArrayLike):
  """Indices of the pairs whose logit ``h`` lies on an edge of its band ``[lo, hi]``.

  Args:
    h, lo, hi: ``(Q,)`` logits and band edges (``-inf`` / ``inf`` where open).

  Returns:
    ``(k,)`` int64 indices: ``|h - lo|`` or ``|h - hi|`` at most
    ``BAND_EDGE_TOLERANCE * (1 + |h|)`` (where the pipeline is only one-sided differentiable).
  """
  h, lo, hi = (np.asarray(x, dtype=np.float64) for x in (h, lo, hi))
  tol = BAND_EDGE_TOLERANCE * (1 + np.abs(h))
  with np.errstate(invalid="ignore"):
    near = (np.abs(h - lo) <= tol) | (np.abs(h - hi) <= tol)
  return np.flatnonzero(near).astype(np.int64)


_HESSIAN_BLOCK_ELEMENTS = 2**24  # tangents per block x comparisons: bounds the Hessian's memory


def _joint_method(model: Any) -> str:
  """What :func:`_joint_pipeline` differentiated, for :attr:`ComparisonInfluence.method`."""
  tie = getattr(model, "tie_model", getattr(model, "model", "half"))
  names = getattr(model, "names", ())
  parts = ["strengths, factors"] + (["tie parameter"] if tie != "half" else [])
  parts += ["beta"] if names else []
  edges = "P(a wins | decisive)" if tie != "half" else "P"
  where = f" at zero {', '.join(names)} difference" if names else ""
  return f" (theta: {', '.join(parts)}; edges {edges}{where})"


def _hessian_by_blocks(loss, theta: jax.Array, weight: jax.Array) -> jax.Array:
  """``(d, d)`` Hessian of ``loss(theta, weight)`` in ``theta``, built from Hessian-vector products.

  ``jax.hessian`` pushes all ``d`` basis tangents through the reverse pass at once, which holds
  ``d`` copies of every per-comparison intermediate (``d * m`` values); here they go through in
  blocks (``lax.map`` with a batch size), so the extra memory is a block's,
  ``_HESSIAN_BLOCK_ELEMENTS`` values, whatever ``d``.
  """
  d = theta.shape[0]
  grad = jax.grad(loss, argnums=0)
  batch = max(1, min(d, _HESSIAN_BLOCK_ELEMENTS // max(1, weight.shape[0])))

  def column(e):
    return jax.jvp(lambda th: grad(th, weight), (theta,), (e,))[1]

  return jax.lax.map(column, jnp.eye(d, dtype=theta.dtype), batch_size=batch)


def _pseudo_inverse(hessian: jax.Array) -> jax.Array:
  """The symmetric pseudo-inverse on the eigenvalues above ``d * eps`` of the largest."""
  values, vectors = jnp.linalg.eigh(hessian)
  tol = hessian.shape[0] * jnp.finfo(hessian.dtype).eps * jnp.max(jnp.abs(values))
  inv = jnp.where(jnp.abs(values) > tol, 1 / jnp.where(values == 0, 1, values), 0)
  return (vectors * inv[None, :]) @ vectors.T


@functools.partial(jax.jit, static_argnames=("estimator", "tau", "gamma"))
def _count_influence(comparisons, state, cot, *, estimator, tau, gamma):
  """``(2, k, m)`` VJPs of the scores ``(2, n)`` with the cotangents ``cot`` ``(2, k, 2, n)``."""

  def scores(w):
    c = dataclasses.replace(comparisons, weight=w)
    if isinstance(estimator, PosteriorEdgeEstimator):
      counts = pair_counts(c, tie_policy=estimator.tie_policy)
      edges = differentiable_posterior_edges(counts.wins, float(estimator.prior[0]))
    else:
      edges = estimator.replica_edges(state, c)
    s = estimator.soft_scores(edges, tau=tau, gamma=gamma)
    return jnp.stack([s.top_cycle, s.uncovered])

  _, vjp = jax.vjp(scores, comparisons.weight)
  return jax.vmap(jax.vmap(lambda ct: vjp(ct)[0]))(cot)


def comparison_influence(
  key: jax.Array,
  comparisons: Comparisons,
  estimator: "str | TournamentEstimator" = "auto",
  *,
  fitted: FittedTournament | None = None,
  agents: Any = None,
  num_agents: int = DEFAULT_NUM_AGENTS,
  tau: float = 0.01,
  gamma: float | None = None,
) -> ComparisonInfluence:
  """``d score / d weight`` of every comparison, for the soft Top-Cycle and Uncovered scores.

  The derivative of the soft scores (``estimator.soft_scores`` of the estimator's edges, paper
  §4) with respect to each row's ``weight``, through the weighted counts, the estimator and the
  STE operators (the module docstring says how each estimator is differentiated). ``jax.vjp``
  once, then one reverse pass per agent and score, ``vmap``-ed.

  Args:
    key: PRNG key of the fit (only the model estimator draws random numbers: its folds).
    comparisons: the data, ``m`` rows (their weights are the point of differentiation).
    estimator: a registry name (``"auto"``, ``"posterior"``, ``"winrate"``, ``"model"``) or a
      :class:`~ste_jax.evaluate.TournamentEstimator`; ``auto`` is resolved on the data.
    fitted: the estimator's fit on ``comparisons`` (default: fitted here).
    agents: the agents (names or indices) whose scores are differentiated; default the
      ``num_agents`` with the highest soft Top-Cycle score.
    num_agents: how many top agents when ``agents`` is not given, ``>= 1``.
    tau: edge temperature (the leaderboard's default).
    gamma: Top-Cycle and covering temperature (default ``tau``).

  Returns:
    :class:`ComparisonInfluence`.

  Warns:
    UserWarning: the model estimator with a pair's refined logit on its record band's edge
    (:func:`band_edge_pairs`), where the scores have a kink: the influence is one-sided there
    (the module docstring; :attr:`ComparisonInfluence.method` says so too).

  Raises:
    InputError: no comparisons, or an unknown agent.
    OptionError: ``num_agents < 1``.

  Example:
    >>> c = Comparisons.from_arrays([0, 1, 2, 0] * 5, [1, 2, 0, 3] * 5, [1.0] * 20)
    >>> infl = comparison_influence(jax.random.key(0), c, "winrate", agents=[3])
    >>> bool(np.all(np.isfinite(infl.top_cycle))), infl.top_cycle.shape
    (True, (1, 20))
  """
  if comparisons.num_comparisons == 0:
    raise InputError("comparisons: no comparisons to differentiate.")
  if isinstance(num_agents, bool) or int(num_agents) < 1:
    raise OptionError(f"num_agents must be an integer >= 1, got {num_agents!r}.")
  est, _ = as_estimator(estimator).resolve(comparisons)
  gamma = tau if gamma is None else gamma
  weight = comparisons.weight

  def scores_of(edges):
    s = est.soft_scores(edges, tau=tau, gamma=gamma)
    return jnp.stack([s.top_cycle, s.uncovered])

  if isinstance(est, ModelEstimator):
    if fitted is None:
      fitted = est.fit(key, comparisons)
    theta, edges_of, grad_theta, loss, on_edge = _model_pipeline(est, fitted, comparisons)
    h_plus = _pseudo_inverse(jax.jit(_hessian_by_blocks, static_argnums=0)(loss, theta, weight))
    method = "implicit differentiation at the refined model fit"
    if isinstance(fitted.state, (dict, TieRefitState)):
      method += _joint_method(fitted.model)
    if on_edge.size:
      names = comparisons.agents
      i, j = np.asarray(fitted.state[1].i), np.asarray(fitted.state[1].j)
      shown = ", ".join(f"{names[i[q]]}-{names[j[q]]}" for q in on_edge[:5])
      method += (
        f"; one-sided: {on_edge.size} pair(s) on their record band's edge ({shown}), where the "
        "pipeline has a kink"
      )
      warnings.warn(
        f"comparison_influence: {on_edge.size} pair(s) of the model fit lie on their record "
        f"band's edge ({shown}); the scores have a kink there and the influence is the "
        "derivative on one side (record_tolerance=None: no bands, a smooth pipeline).",
        stacklevel=2,
      )

    def f(th, w):
      return scores_of(edges_of(th, w))

    values, vjp_f = jax.vjp(f, theta, weight)
    _, vjp_g = jax.vjp(lambda w: grad_theta(theta, w), weight)

    def pull(cot):
      g_theta, g_w = vjp_f(cot)
      return g_w - vjp_g(h_plus @ g_theta)[0]  # d theta*/dw = -H^+ d_w grad_theta L

  else:
    fitted = est.fit(key, comparisons) if fitted is None else fitted
    values = scores_of(fitted.edges)
    method = (
      "autodiff; posterior edges by central differences in the counts"
      if isinstance(est, PosteriorEdgeEstimator)
      else "autodiff"
    )

    def pull_all(cot):
      return _count_influence(comparisons, fitted.state, cot, estimator=est, tau=tau, gamma=gamma)

  values = np.asarray(values)
  if agents is None:
    chosen = _default_agents(values[0], min(int(num_agents), comparisons.num_agents))
  else:
    chosen = _check_agents(agents, comparisons.agents)
  k, n = chosen.size, comparisons.num_agents
  cot = np.zeros((2, k, 2, n), dtype=values.dtype)
  cot[0, np.arange(k), 0, chosen] = 1
  cot[1, np.arange(k), 1, chosen] = 1
  if isinstance(est, ModelEstimator):
    grads = jax.vmap(jax.vmap(pull))(jnp.asarray(cot))
  else:
    grads = pull_all(jnp.asarray(cot))
  grads = np.asarray(grads)
  return ComparisonInfluence(
    agents=chosen,
    top_cycle=grads[0],
    uncovered=grads[1],
    top_cycle_score=values[0, chosen],
    uncovered_score=values[1, chosen],
    a=np.asarray(comparisons.a),
    b=np.asarray(comparisons.b),
    outcome=np.asarray(comparisons.outcome),
    weight=np.asarray(weight),
    names=comparisons.agents,
    estimator=est.name,
    method=method,
    line=None if comparisons.line is None else np.asarray(comparisons.line, dtype=np.int64),
  )
