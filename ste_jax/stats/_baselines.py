"""Ranking baselines on a wins matrix: win rate, Elo, HodgeRank and Rank Centrality.

All functions take plain arrays so they do not depend on the data layer: a wins matrix
``wins[a, b]`` = (weighted) number of times ``a`` beat ``b`` (ties added by the caller as ``1/2``
to both sides; the diagonal is ignored), or, for the online Elo rating, the comparison sequence
``(a, b, outcome)``. Bradley–Terry lives in :mod:`ste_jax.stats._bradley_terry`.
"""

import functools
import math

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array
from ste_jax._results import result_type
from ste_jax.stats._graph import connected_components, is_strongly_connected

_HODGE_FLOWS = ("log_odds", "win_fraction")
_HODGE_WEIGHTS = ("games", "uniform")


def _square_wins(wins) -> jax.Array:
  """Float ``(n, n)`` wins with a zeroed diagonal; raises at trace time on a wrong shape."""
  wins = as_float_array(wins, "wins")
  if wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
    raise ValueError(f"wins must have shape (n, n); got {tuple(wins.shape)}.")
  off = ~jnp.eye(wins.shape[0], dtype=bool)
  return jnp.where(off, wins, jnp.zeros_like(wins))


@result_type
class WinRateResult:
  """Output of :func:`win_rate`.

  Attributes:
    rates: ``(n,)`` fraction of games won; ``0.5`` for agents without games.
    num_games: ``(n,)`` total (weighted) games played by each agent.
    has_games: ``(n,)`` bool, ``num_games > 0``.
  """

  rates: jax.Array
  num_games: jax.Array
  has_games: jax.Array


def win_rate(wins: jax.typing.ArrayLike) -> WinRateResult:
  """Empirical win rate ``sum_b w_ab / sum_b (w_ab + w_ba)`` (the paper's win-rate baseline).

  Args:
    wins: ``(n, n)`` nonnegative wins matrix; the diagonal is ignored.

  Returns:
    A :class:`WinRateResult`. NaN-free: an agent without games gets rate ``0.5`` and
    ``has_games = False`` (the division is guarded with a double ``where``).

  Examples:
    >>> import jax.numpy as jnp
    >>> win_rate(jnp.array([[0.0, 3.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])).rates.tolist()
    [0.75, 0.25, 0.5]
  """
  wins = _square_wins(wins)
  won = jnp.sum(wins, axis=1)
  num_games = won + jnp.sum(wins, axis=0)
  has_games = num_games > 0
  safe_games = jnp.where(has_games, num_games, jnp.ones_like(num_games))
  rates = jnp.where(has_games, won / safe_games, jnp.full_like(won, 0.5))
  return WinRateResult(rates=rates, num_games=num_games, has_games=has_games)


def elo(
  a: jax.typing.ArrayLike,
  b: jax.typing.ArrayLike,
  outcome: jax.typing.ArrayLike,
  *,
  num_agents: int,
  k_factor: float = 32.0,
  scale: float = 400.0,
  initial: float = 1000.0,
  weight: jax.typing.ArrayLike | None = None,
) -> jax.Array:
  r"""Online Elo ratings after one pass over the comparisons in their given order.

  For each comparison ``i`` in order (a ``lax.scan``),

  .. math::
    E = \frac{1}{1 + 10^{(r_b - r_a)/\mathrm{scale}}}, \quad
    r_a \mathrel{+}= K w_i (o_i - E), \quad r_b \mathrel{-}= K w_i (o_i - E),

  with ``o_i = 1`` if ``a`` won, ``0`` if ``b`` won and ``1/2`` for a tie.

  Args:
    a: ``(m,)`` int indices of the first agent of each comparison.
    b: ``(m,)`` int indices of the second agent.
    outcome: ``(m,)`` float outcomes from ``a``'s point of view (1, 0 or 0.5). Its floating dtype
      sets the ratings' dtype.
    num_agents: number of agents ``n`` (static).
    k_factor: the K-factor (step size per game).
    scale: the logistic scale (400 in chess: a 400-point gap means 10:1 odds).
    initial: every agent's starting rating.
    weight: optional ``(m,)`` nonnegative weights multiplying ``k_factor`` per comparison.

  Returns:
    ``(num_agents,)`` ratings. Agents that never play keep ``initial``. Order matters: this is
    the online rating, not a fit.

  Examples:
    >>> import jax.numpy as jnp
    >>> elo(jnp.array([0]), jnp.array([1]), jnp.array([1.0]), num_agents=2).tolist()
    [1016.0, 984.0]
  """
  outcome = as_float_array(outcome, "outcome")
  dtype = outcome.dtype
  a = jnp.asarray(a)
  b = jnp.asarray(b)
  if not (jnp.issubdtype(a.dtype, jnp.integer) and jnp.issubdtype(b.dtype, jnp.integer)):
    raise TypeError(f"a and b must be integer arrays; got dtypes {a.dtype} and {b.dtype}.")
  if not (a.ndim == b.ndim == outcome.ndim == 1 and a.shape == b.shape == outcome.shape):
    raise ValueError(
      f"a, b and outcome must be 1-D of equal length; got {a.shape}, {b.shape}, {outcome.shape}."
    )
  if weight is None:
    weight = jnp.ones_like(outcome)
  else:
    weight = jnp.asarray(weight).astype(dtype)
    if weight.shape != outcome.shape:
      raise ValueError(f"weight must have shape {outcome.shape}; got {weight.shape}.")
  k = jnp.asarray(k_factor).astype(dtype)
  sc = jnp.asarray(scale).astype(dtype)
  ratings0 = jnp.full((int(num_agents),), initial, dtype=dtype)
  return _elo_scan(ratings0, a, b, outcome, weight, k, sc)


def _elo_step(carry, xs):
  ratings, k, scale = carry
  ai, bi, oi, wi = xs
  ten = jnp.asarray(10, ratings.dtype)
  expected = 1 / (1 + jnp.power(ten, (ratings[bi] - ratings[ai]) / scale))
  delta = k * wi * (oi - expected)
  ratings = ratings.at[ai].add(delta).at[bi].add(-delta)
  return (ratings, k, scale), None


@jax.jit
def _elo_scan(ratings0, a, b, outcome, weight, k, scale):
  (ratings, _, _), _ = lax.scan(_elo_step, (ratings0, k, scale), (a, b, outcome, weight))
  return ratings


@result_type
class HodgeRankResult:
  """Output of :func:`hodge_rank`.

  Attributes:
    scores: ``(n,)`` potentials ``s`` (the gradient component); mean zero within each connected
      component of the comparison graph.
    flow: ``(n, n)`` skew-symmetric edge flow ``Y`` (zero on unobserved pairs).
    residual: ``(n, n)`` skew-symmetric cyclic residual ``Y - grad s`` on observed pairs (its
      curl plus harmonic parts), zero elsewhere.
    cyclicity: scalar ``||residual||_w / ||Y||_w`` in ``[0, 1]``: ``0`` for a consistent
      (transitive, potential-driven) flow, close to ``1`` for a purely cyclic one; ``0`` when
      the flow is identically zero.
  """

  scores: jax.Array
  flow: jax.Array
  residual: jax.Array
  cyclicity: jax.Array


def hodge_rank(
  wins: jax.typing.ArrayLike,
  *,
  flow: str = "log_odds",
  pseudo_count: float = 0.5,
  edge_weights: str = "games",
) -> HodgeRankResult:
  r"""HodgeRank: least-squares potentials of a pairwise edge flow and its cyclic residual.

  On the comparison graph (pairs with at least one game) with edge flow ``Y_ab = -Y_ba`` and
  weights ``w_ab``, solves

  .. math::
    \min_s \sum_{a < b} w_{ab} (s_a - s_b - Y_{ab})^2,

  i.e. the weighted graph-Laplacian system ``L s = div Y`` (the Hodge decomposition's gradient
  component). The rest, ``Y - grad s``, is the cyclic (curl plus harmonic) component, and
  ``||Y - grad s||_w / ||Y||_w`` measures non-transitivity. Scores are pinned to mean zero inside
  each connected component by solving ``(L + Pi) s = div Y`` with ``Pi`` the projector onto
  component indicators (exact, positive definite, no pseudo-inverse).

  Args:
    wins: ``(n, n)`` nonnegative wins matrix; the diagonal is ignored.
    flow: ``"log_odds"``: ``Y_ab = log(w_ab + c) - log(w_ba + c)`` (consistent with a BTL model,
      where it equals ``s_a - s_b``); or ``"win_fraction"``: ``Y_ab = (w_ab - w_ba) / (w_ab +
      w_ba)``, in ``[-1, 1]``.
    pseudo_count: ``c >= 0`` added to both win counts of the log-odds flow (Haldane–Anscombe
      ``1/2`` by default). With ``c = 0`` a pair won by one side only has an infinite flow.
    edge_weights: ``"games"`` (``w_ab = w_ab + w_ba``, the number of games) or ``"uniform"``
      (``w = 1`` on every compared pair).

  Returns:
    A :class:`HodgeRankResult`.

  References:
    Jiang, Lim, Yao, Ye, "Statistical ranking and combinatorial Hodge theory", Math. Program. 127
    (2011).

  Examples:
    >>> import jax.numpy as jnp
    >>> W = jnp.array([[0.0, 8.0, 9.0], [2.0, 0.0, 7.0], [1.0, 3.0, 0.0]])  # wins[a, b]
    >>> from ste_jax.stats import hodge_rank
    >>> result = hodge_rank(W)
    >>> [int(i) for i in jnp.argsort(-result.scores)], abs(round(float(result.scores.sum()), 4))
    ([0, 1, 2], 0.0)
  """
  if flow not in _HODGE_FLOWS:
    raise ValueError(f"flow must be one of {_HODGE_FLOWS}, got {flow!r}.")
  if edge_weights not in _HODGE_WEIGHTS:
    raise ValueError(f"edge_weights must be one of {_HODGE_WEIGHTS}, got {edge_weights!r}.")
  c = float(pseudo_count)
  if not math.isfinite(c) or c < 0:
    raise ValueError(f"pseudo_count must be a finite number >= 0, got {pseudo_count!r}.")
  return _hodge_kernel(_square_wins(wins), flow=flow, pseudo_count=c, edge_weights=edge_weights)


@functools.partial(jax.jit, static_argnames=("flow", "pseudo_count", "edge_weights"))
def _hodge_kernel(wins, *, flow, pseudo_count, edge_weights):
  """The compiled kernel of :func:`hodge_rank` on a zero-diagonal float wins matrix."""
  c = pseudo_count
  dtype = wins.dtype
  games = wins + wins.T
  edge = games > 0
  zeros = jnp.zeros_like(wins)
  safe_games = jnp.where(edge, games, jnp.ones_like(games))
  if flow == "log_odds":
    y = jnp.log(wins + c) - jnp.log(wins.T + c)
  else:
    y = (wins - wins.T) / safe_games
  y = jnp.where(edge, y, zeros)
  omega = games if edge_weights == "games" else edge.astype(dtype)

  same = connected_components(edge).astype(dtype)
  projector = same / jnp.sum(same, axis=1, keepdims=True)
  laplacian = jnp.diag(jnp.sum(omega, axis=1)) - omega
  divergence = jnp.sum(omega * y, axis=1)
  scores = jnp.linalg.solve(laplacian + projector, divergence)

  residual = jnp.where(edge, y - (scores[:, None] - scores[None, :]), zeros)
  flow_sq = jnp.sum(omega * y * y)
  res_sq = jnp.sum(omega * residual * residual)
  nonzero = flow_sq > 0
  safe_flow_sq = jnp.where(nonzero, flow_sq, jnp.ones_like(flow_sq))
  cyclicity = jnp.where(nonzero, jnp.sqrt(res_sq / safe_flow_sq), jnp.zeros_like(flow_sq))
  return HodgeRankResult(scores=scores, flow=y, residual=residual, cyclicity=cyclicity)


@result_type
class RankCentralityResult:
  """Output of :func:`rank_centrality`.

  Attributes:
    scores: ``(n,)`` stationary distribution of the comparison random walk (nonnegative, sums to
      1); higher is stronger.
    irreducible: scalar bool, the walk is irreducible (its graph is strongly connected), so the
      stationary distribution is unique.
  """

  scores: jax.Array
  irreducible: jax.Array


def rank_centrality(
  wins: jax.typing.ArrayLike,
  *,
  pseudo_count: float = 0.0,
  num_squarings: int = 40,
) -> RankCentralityResult:
  r"""Rank Centrality: the stationary distribution of a random walk that follows wins.

  From agent ``a`` the walk moves to a compared opponent ``b`` with probability

  .. math::
    P_{ab} = \frac{1}{d_{\max}} \, \frac{w_{ba} + c}{w_{ab} + w_{ba} + 2c}, \qquad
    P_{aa} = 1 - \sum_{b \ne a} P_{ab},

  (the fraction of their games that ``b`` won; ``d_max`` is the largest number of distinct
  opponents), and the scores are its stationary distribution ``pi``. On noiseless BTL data
  (``w_ab / (w_ab + w_ba) = pi_a / (pi_a + pi_b)``) the walk is reversible and ``pi`` recovers the
  BTL strengths exactly.

  ``pi`` is computed as ``u^T M^(2^K)`` with ``u`` uniform and ``M = (I + P) / 2`` the lazy walk
  (same stationary distribution, aperiodic), by ``K = num_squarings`` matrix squarings with row
  renormalization: power iteration run for ``2^K`` steps at the cost of ``K`` products. For an
  irreducible walk this is the unique stationary distribution; otherwise it is the limit of the
  walk started from the uniform distribution (agents without games keep mass ``1/n``).

  Args:
    wins: ``(n, n)`` nonnegative wins matrix; the diagonal is ignored.
    pseudo_count: ``c >= 0`` added to both sides of every compared pair (the regularized variant
      of Negahban et al.; makes the walk irreducible whenever the comparison graph is connected).
    num_squarings: ``K`` (static); ``2^K`` walk steps. 40 is far beyond the mixing time of any
      walk with a spectral gap above ``1e-10``.

  Returns:
    A :class:`RankCentralityResult`.

  References:
    Negahban, Oh, Shah, "Rank Centrality: Ranking from pairwise comparisons", Oper. Res. 65
    (2017).

  Examples:
    >>> import jax.numpy as jnp
    >>> W = jnp.array([[0.0, 8.0, 9.0], [2.0, 0.0, 7.0], [1.0, 3.0, 0.0]])  # wins[a, b]
    >>> from ste_jax.stats import rank_centrality
    >>> result = rank_centrality(W)
    >>> [int(i) for i in jnp.argsort(-result.scores)], round(float(result.scores.sum()), 4)
    ([0, 1, 2], 1.0)
  """
  c = float(pseudo_count)
  if not math.isfinite(c) or c < 0:
    raise ValueError(f"pseudo_count must be a finite number >= 0, got {pseudo_count!r}.")
  if int(num_squarings) < 1:
    raise ValueError(f"num_squarings must be >= 1, got {num_squarings!r}.")
  return _rank_centrality_kernel(
    _square_wins(wins), pseudo_count=c, num_squarings=int(num_squarings)
  )


def _square_and_normalize(_, m):
  m = m @ m
  return m / jnp.sum(m, axis=1, keepdims=True)


@functools.partial(jax.jit, static_argnames=("pseudo_count", "num_squarings"))
def _rank_centrality_kernel(wins, *, pseudo_count, num_squarings):
  """The compiled kernel of :func:`rank_centrality` on a zero-diagonal float wins matrix."""
  c = pseudo_count
  dtype = wins.dtype
  n = wins.shape[0]
  games = wins + wins.T
  edge = games > 0
  safe_den = jnp.where(edge, games + 2 * c, jnp.ones_like(games))
  frac_lost = jnp.where(edge, (wins.T + c) / safe_den, jnp.zeros_like(games))
  degree = jnp.sum(edge, axis=1)
  d_max = jnp.maximum(jnp.max(degree), 1).astype(dtype)
  move = frac_lost / d_max
  eye = jnp.eye(n, dtype=dtype)
  transition = move + jnp.diag(1 - jnp.sum(move, axis=1))
  lazy = 0.5 * (eye + transition)

  limit = lax.fori_loop(0, num_squarings, _square_and_normalize, lazy)
  pi = jnp.mean(limit, axis=0)
  pi = pi / jnp.sum(pi)
  irreducible = is_strongly_connected(move > 0)
  return RankCentralityResult(scores=pi, irreducible=irreducible)
