"""A tennis-like sparse league: many agents, heavy-tailed activity, matches between near equals.

:func:`sparse_league` simulates a sports tour in the shape of real match records (an ATP season,
a chess federation, a crowd-sourced arena): most agents play a handful of matches, a few play
hundreds, and matches are more often between agents of similar strength.
"""

import functools

import jax
import jax.numpy as jnp

from ste_jax._checks import default_float_dtype
from ste_jax._results import result_type
from ste_jax._validation import validate_int, validate_number
from ste_jax.data import Comparisons

_LOCAL_SCALE = 0.02  # Laplace scale of local pairing, as a share of the remaining activity mass


@result_type
class League:
  """Output of :func:`sparse_league`.

  Attributes:
    comparisons: the ``m`` matches as :class:`~ste_jax.data.Comparisons` (agent names
      ``"p0000"``, ``"p0001"``, ...; outcomes 0 or 1, no ties; one context ``"all"``).
    strength: ``(n,)`` true Bradley–Terry log-strengths ``s``.
    P: ``(n, n)`` true win probabilities (``P + P^T = 1`` exactly, diagonal ``1/2``).

  Examples:
    >>> import jax
    >>> from ste_jax.stats import sparse_league
    >>> league = sparse_league(jax.random.key(0), num_agents=20, num_comparisons=100)
    >>> league.comparisons.num_comparisons, league.strength.shape, league.P.shape
    (100, (20,), (20, 20))
  """

  comparisons: Comparisons
  strength: jax.Array
  P: jax.Array


def sparse_league(
  key: jax.Array,
  *,
  num_agents: int = 1200,
  num_comparisons: int = 30000,
  activity_shape: float = 1.2,
  strength_scale: float = 1.0,
  locality: float = 0.5,
  cycle_strength: float = 0.0,
  dtype: jax.typing.DTypeLike | None = None,
) -> League:
  """A random tennis-like league: heavy-tailed activity, local pairing, Bradley–Terry outcomes.

  The model, for ``n`` agents and ``m`` matches (all draws independent given the key):

  1. *strengths*: ``s_i ~ Normal(0, strength_scale^2)``, i.i.d.; agent names ``"p0000"``, ...
     carry no information about ``s``;
  2. *activity*: ``w_i = U_i^(-1/alpha) - 1`` with ``alpha = activity_shape`` and ``U_i`` uniform on
     ``[1/n, 1)``, i.i.d. and independent of ``s``: a Lomax (Pareto type II) variable,
     ``P(w > x) = (1 + x)^(-alpha)``, restricted to its lowest ``1 - 1/n`` quantiles. The Lomax form
     (starting at 0, not 1) is what makes most agents rare, and the truncation caps the busiest
     agent at ``n^(1/alpha) - 1``, about the typical maximum of ``n`` draws, so that no single agent
     takes over the league by chance. With the defaults (``alpha = 1.2``, ``n = 1200``,
     ``m = 30000``) about a quarter of the agents play 5 matches or fewer, the median agent plays
     about a dozen and the busiest few play thousands;
  3. *first player* of match ``k``: agent ``k`` for ``k < min(n, m)`` (every agent plays at least
     once when ``m >= n``), afterwards agent ``i`` with probability ``w_i / sum(w)``;
  4. *opponent*: agent ``j != i`` with probability ``w_j / (W - w_i)`` (``W = sum(w)``), or, with
     probability ``locality``, an activity-weighted near neighbour in strength. Precisely: sort the
     agents by strength and lay them on the segment ``[0, W)`` in that order, agent ``j`` occupying
     an interval of length ``w_j``; remove the first player's interval (a segment of length
     ``W - w_i`` remains, the first player at the point ``x`` where its interval was). The opponent
     is the agent whose interval holds the point ``y``: uniform on the segment (global pairing), or
     ``y = x + 0.02 (W - w_i) L`` with ``L`` standard Laplace, reflected back into the segment
     (local pairing: the opponent's activity-weighted strength quantile is the first player's plus a
     Laplace offset of scale 2%);
  5. the two players are put in the ``a`` / ``b`` columns in a random order (a fair coin) and the
     ``m`` matches are shuffled;
  6. *outcome*: ``a`` wins with probability ``P[a, b]``, no ties, where
     ``P[a, b] = sigmoid(s_a - s_b + c_ab)``. The cycle term ``c`` is zero except, when
     ``cycle_strength > 0``, among the three strongest agents ``t1, t2, t3`` (in decreasing
     strength), where it replaces the strength gap by a rock-paper-scissors of logit
     ``cycle_strength``: ``c_ab = cycle_strength - (s_a - s_b)`` for ``(a, b)`` in
     ``(t1, t2), (t2, t3), (t3, t1)`` and ``c_ba = -c_ab``. So ``t1`` beats ``t2``, ``t2`` beats
     ``t3`` and ``t3`` beats ``t1``, each with probability ``sigmoid(cycle_strength)``, and all
     three beat everyone else (they are the strongest): for ``strength_scale > 0`` the true hard Top
     Cycle of ``P`` is exactly ``{t1, t2, t3}`` (with ``cycle_strength = 0`` it is the strongest
     agent alone).

  Steps 1-6 are one compiled, vectorized kernel: the players are found by binary search in the
  cumulative activity (``O(m log n)``), and the ``(n, n)`` matrix ``P`` is the only quadratic cost.

  Pure and deterministic given ``key``; the eager wrapper checks the arguments, the simulation is
  one jitted kernel (compiled once per ``num_agents``, ``num_comparisons``, dtype and whether
  ``cycle_strength > 0``), and the matches are wrapped by
  :meth:`~ste_jax.data.Comparisons.from_arrays`.

  Args:
    key: PRNG key.
    num_agents: ``n >= 2`` (``>= 3`` when ``cycle_strength > 0``).
    num_comparisons: ``m >= 0`` matches.
    activity_shape: tail index ``alpha > 0`` of the Lomax activity: smaller is heavier (below 1
      a handful of agents play most matches).
    strength_scale: standard deviation ``>= 0`` of the log-strengths.
    locality: probability in ``[0, 1]`` that a match pairs near neighbours in strength rather than
      two agents drawn by activity alone.
    cycle_strength: logit ``>= 0`` of the rock-paper-scissors among the three strongest agents
      (``0``: no cycle, a pure Bradley–Terry league).
    dtype: float dtype of ``strength``, ``P`` and the outcomes; default float32, or float64
      under x64.

  Returns:
    A :class:`League` ``(comparisons, strength, P)``.

  Raises:
    ValueError: naming the argument, if a count is not an integer in range, a real parameter is
      not finite or out of range, or ``dtype`` is not a floating dtype.

  Examples:
    >>> import jax
    >>> league = sparse_league(jax.random.key(0), num_agents=50, num_comparisons=400)
    >>> league.comparisons.num_agents, league.comparisons.num_comparisons, league.P.shape
    (50, 400, (50, 50))
    >>> league.comparisons.agents[:3]
    ('p0000', 'p0001', 'p0002')
    >>> from ste_jax.exact import top_cycle
    >>> cyclic = sparse_league(jax.random.key(1), num_agents=50, cycle_strength=1.0)
    >>> int(top_cycle(cyclic.P).sum())  # t1 > t2 > t3 > t1
    3
  """
  n = validate_int(num_agents, "num_agents", minimum=2)
  m = validate_int(num_comparisons, "num_comparisons", minimum=0)
  alpha = validate_number(activity_shape, "activity_shape", low=0.0, low_open=True)
  scale = validate_number(strength_scale, "strength_scale", low=0.0)
  local = validate_number(locality, "locality", low=0.0, high=1.0)
  cycle = validate_number(cycle_strength, "cycle_strength", low=0.0)
  if cycle > 0 and n < 3:
    raise ValueError(f"num_agents must be >= 3 when cycle_strength > 0, got {num_agents!r}.")
  dtype = default_float_dtype() if dtype is None else jnp.dtype(dtype)
  if not jnp.issubdtype(dtype, jnp.floating):
    raise ValueError(f"dtype must be a floating dtype, got {dtype}.")
  params = tuple(jnp.asarray(x, dtype=dtype) for x in (alpha, scale, local, cycle))
  a, b, outcome, strength, P = _league_kernel(key, params, n=n, m=m, cyclic=cycle > 0, dtype=dtype)
  width = max(4, len(str(n - 1)))
  agents = tuple(f"p{i:0{width}d}" for i in range(n))
  comparisons = Comparisons.from_arrays(a, b, outcome, agents=agents)
  return League(comparisons=comparisons, strength=strength, P=P)


@functools.partial(jax.jit, static_argnames=("n", "m", "cyclic", "dtype"))
def _league_kernel(key, params, *, n, m, cyclic, dtype):
  """The compiled kernel of :func:`sparse_league`: ``(a, b, outcome, strength, P)``."""
  alpha, scale, locality, cycle = params
  keys = jax.random.split(key, 9)
  strength = scale * jax.random.normal(keys[0], (n,), dtype=dtype)
  u = jax.random.uniform(keys[1], (n,), dtype=dtype, minval=1 / n, maxval=1)
  activity = u ** (-1 / alpha) - 1  # Lomax(alpha) truncated at its 1 - 1/n quantile

  # Agents laid on [0, W) in increasing strength, agent order[k] on [lower[k], upper[k]).
  order = jnp.argsort(strength)
  rank = jnp.zeros((n,), dtype=jnp.int32).at[order].set(jnp.arange(n, dtype=jnp.int32))
  width = activity[order]
  upper = jnp.cumsum(width)
  lower = upper - width
  total = upper[-1]

  def locate(point):
    return jnp.clip(jnp.searchsorted(upper, point, side="right"), 0, n - 1).astype(jnp.int32)

  match = jnp.arange(m, dtype=jnp.int32)
  drawn = locate(jax.random.uniform(keys[2], (m,), dtype=dtype) * total)
  pos_a = jnp.where(match < n, rank[match % n], drawn)  # every agent plays at least once

  # The opponent: a point of [0, rest) with the first player's interval removed (it sits at x).
  rest = total - width[pos_a]
  x = lower[pos_a]
  y_global = jax.random.uniform(keys[3], (m,), dtype=dtype) * rest
  y_local = jnp.abs(x + _LOCAL_SCALE * rest * jax.random.laplace(keys[4], (m,), dtype=dtype))
  y_local = jnp.clip(rest - jnp.abs(rest - y_local), 0, rest)  # reflected into [0, rest]
  use_local = jax.random.bernoulli(keys[5], locality, (m,))
  y = jnp.where(use_local, y_local, y_global)
  pos_b = locate(jnp.where(y >= x, y + width[pos_a], y))
  neighbour = jnp.where(pos_a < n - 1, pos_a + 1, pos_a - 1)
  pos_b = jnp.where(pos_b == pos_a, neighbour, pos_b)  # guards float rounding at the edges

  swap = jax.random.bernoulli(keys[6], 0.5, (m,))
  first, second = order[pos_a], order[pos_b]
  a = jnp.where(swap, second, first)
  b = jnp.where(swap, first, second)

  logits = strength[:, None] - strength[None, :]
  if cyclic:
    winners = order[jnp.array([n - 1, n - 2, n - 3])]  # t1 beats t2, t2 beats t3, t3 beats t1
    losers = order[jnp.array([n - 2, n - 3, n - 1])]
    logits = logits.at[winners, losers].set(cycle).at[losers, winners].set(-cycle)
  sig = jax.nn.sigmoid(logits)
  i = jnp.arange(n)[:, None]
  j = jnp.arange(n)[None, :]
  half = jnp.full((n, n), 0.5, dtype=dtype)
  P = jnp.where(i < j, sig, jnp.where(i > j, 1 - sig.T, half))

  outcome = jax.random.bernoulli(keys[7], P[a, b]).astype(dtype)
  shuffle = jax.random.permutation(keys[8], m)
  return a[shuffle], b[shuffle], outcome[shuffle], strength, P
