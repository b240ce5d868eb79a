"""Pairwise counts and the empirical win-rate tournament.

All functions here are pure and jit-able: the number of agents ``n`` and of contexts come from
the static metadata of :class:`~ste_jax.data.Comparisons`, and counting is one segment sum over
the rows (no Python loop over rows or contexts), so a bootstrap that only changes
``Comparisons.weight`` reuses the same compiled computation.
"""

import jax
import jax.numpy as jnp

from ste_jax._results import result_type

from ._comparisons import Comparisons

TIE_POLICIES = ("half", "drop")


@result_type
class PairCounts:
  """Weighted counts per ordered pair of agents, shape ``(..., n, n)`` each.

  Attributes:
    wins: ``wins[a, b]`` = weighted number of comparisons ``a`` won against ``b``. Under the tie
      policy ``"half"`` a tie adds 1/2 to both ``wins[a, b]`` and ``wins[b, a]``; under
      ``"drop"`` ties are not in ``wins``. A fractional outcome ``o`` adds ``o`` to
      ``wins[a, b]`` and ``1 - o`` to ``wins[b, a]``. Zero diagonal.
    ties: ``ties[a, b] = ties[b, a]`` = weighted number of tied comparisons (outcome exactly
      1/2) between ``a`` and ``b``, whatever the tie policy.
    totals: ``totals[a, b] = wins[a, b] + wins[b, a]``: the comparisons that count under the tie
      policy (all of them for ``"half"``, the decisive ones for ``"drop"``). Symmetric.
  """

  wins: jax.Array
  ties: jax.Array
  totals: jax.Array


def _check_tie_policy(tie_policy: str) -> None:
  if tie_policy not in TIE_POLICIES:
    raise ValueError(f"tie_policy must be one of {TIE_POLICIES}, got {tie_policy!r}.")


def pair_counts(
  comparisons: Comparisons, *, tie_policy: str = "half", by_context: bool = False
) -> PairCounts:
  """Counts wins, ties and totals per ordered pair with one segment sum.

  A row ``(a, b, outcome o, weight w)`` with ``o != 1/2`` adds ``w * o`` to ``wins[a, b]`` and
  ``w * (1 - o)`` to ``wins[b, a]``; a tie (``o == 1/2``) adds ``w`` to ``ties[a, b]`` and
  ``ties[b, a]``, and, under ``tie_policy="half"``, ``w / 2`` to both ``wins[a, b]`` and
  ``wins[b, a]``.

  Args:
    comparisons: the comparisons (``m`` rows, ``n`` agents).
    tie_policy: ``"half"`` (a tie is half a win for each side) or ``"drop"`` (ties are left out
      of ``wins`` and ``totals``; they stay visible in ``ties``). Static.
    by_context: if ``True``, count each context separately (static).

  Returns:
    A :class:`PairCounts` of ``(n, n)`` matrices, or ``(num_contexts, n, n)`` stacks with
    ``by_context=True``, in the dtype of ``comparisons.outcome``.

  Raises:
    ValueError: an unknown ``tie_policy``, or more than ``2**31 - 1`` cells (int32 indices).

  Examples:
    >>> c = Comparisons.from_arrays([0, 0, 1], [1, 1, 2], [1.0, 0.5, 0.0], agents=["x", "y", "z"])
    >>> pair_counts(c).wins  # x beat y once and tied once; z beat y
    Array([[0. , 1.5, 0. ],
           [0.5, 0. , 0. ],
           [0. , 1. , 0. ]], dtype=float32)
  """
  _check_tie_policy(tie_policy)
  n = comparisons.num_agents
  num_blocks = comparisons.num_contexts if by_context else 1
  if num_blocks * n * n > 2**31 - 1:
    raise ValueError(f"{num_blocks} x {n} x {n} count cells exceed the int32 index range.")
  w = comparisons.weight
  o = comparisons.outcome
  tie = o == 0.5
  zero = jnp.zeros_like(w)
  win_ab = jnp.where(tie, zero, w * o)
  win_ba = jnp.where(tie, zero, w * (1 - o))
  tie_w = jnp.where(tie, w, zero)
  block = comparisons.context * (n * n) if by_context else jnp.zeros_like(comparisons.a)
  ab = block + comparisons.a * n + comparisons.b
  ba = block + comparisons.b * n + comparisons.a
  num_segments = num_blocks * n * n
  shape = (num_blocks, n, n)
  wins = jax.ops.segment_sum(
    jnp.concatenate([win_ab, win_ba]), jnp.concatenate([ab, ba]), num_segments=num_segments
  ).reshape(shape)
  ties = jax.ops.segment_sum(
    jnp.concatenate([tie_w, tie_w]), jnp.concatenate([ab, ba]), num_segments=num_segments
  ).reshape(shape)
  if tie_policy == "half":
    wins = wins + ties / 2
  totals = wins + jnp.swapaxes(wins, -1, -2)
  if not by_context:
    wins, ties, totals = wins[0], ties[0], totals[0]
  return PairCounts(wins=wins, ties=ties, totals=totals)


def win_rate_tournament(
  data: Comparisons | PairCounts,
  *,
  missing: float = 0.5,
  tie_policy: str | None = None,
  by_context: bool = False,
) -> jax.Array:
  """The empirical win-rate tournament ``P[a, b] = wins[a, b] / totals[a, b]``.

  ``P`` is a probabilistic tournament (paper §2.2): values in ``[0, 1]``, ``P[a, a] = 1/2`` and,
  for every compared pair, ``P[a, b] + P[b, a] = 1`` exactly (the lower triangle is computed as
  ``1 -`` the upper one).

  *Missing pairs.* A pair with no comparison at all gets ``P[a, b] = P[b, a] = missing``. The
  default 1/2 is the paper's explicit uninformative-prior convention for missing data (paper
  §3.2, "Missing data"): it keeps ``P`` a tournament but encodes "unknown" as "even", so report
  it. ``missing=float("nan")`` marks unobserved pairs instead (``P`` is then not a tournament
  until they are imputed).

  *Ties.* Under ``"half"`` a tie is half a win for each side. Under ``"drop"`` ties are ignored;
  a pair compared only through ties is then even (``P = 1/2``), not missing.

  Args:
    data: a :class:`Comparisons`, or a :class:`PairCounts` (of shape ``(..., n, n)``, e.g. from
      ``pair_counts(..., by_context=True)``) already counted under some tie policy.
    missing: the value for pairs never compared, in ``[0, 1]`` or NaN. Traced (no recompilation).
    tie_policy: ``"half"`` (default) or ``"drop"`` when ``data`` is a ``Comparisons``; must be
      ``None`` for ``PairCounts`` (the policy was applied when counting).
    by_context: with ``Comparisons``, one tournament per context, shape ``(num_contexts, n, n)``.

  Returns:
    ``P`` of shape ``(..., n, n)`` in the counts' dtype.

  Raises:
    ValueError: a bad ``tie_policy``, a ``tie_policy`` with ``PairCounts``, or ``missing``
      outside ``[0, 1]`` (when it is a concrete number).

  Examples:
    >>> c = Comparisons.from_arrays([0, 0, 1], [1, 1, 2], [1.0, 0.5, 0.0], agents=["x", "y", "z"])
    >>> win_rate_tournament(c)  # x-z never met: 1/2
    Array([[0.5 , 0.75, 0.5 ],
           [0.25, 0.5 , 0.  ],
           [0.5 , 1.  , 0.5 ]], dtype=float32)
  """
  if isinstance(data, PairCounts):
    if tie_policy is not None:
      raise ValueError(
        "tie_policy applies when counting: pass it to pair_counts(), not with PairCounts."
      )
    if by_context:
      raise ValueError("by_context applies when counting: use pair_counts(..., by_context=True).")
    counts = data
  else:
    counts = pair_counts(
      data, tie_policy="half" if tie_policy is None else tie_policy, by_context=by_context
    )
  if isinstance(missing, (int, float)) and not (missing != missing or 0 <= missing <= 1):
    raise ValueError(f"missing must be in [0, 1] or NaN, got {missing}.")
  wins, totals = counts.wins, counts.totals
  dtype = wins.dtype
  n = wins.shape[-1]
  decided = totals > 0
  observed = decided | (counts.ties > 0)
  rate = wins / jnp.where(decided, totals, jnp.ones_like(totals))
  rate = jnp.where(decided, rate, jnp.full_like(rate, 0.5))
  upper = jnp.broadcast_to(jnp.triu(jnp.ones((n, n), dtype=bool), k=1), rate.shape)
  diag = jnp.broadcast_to(jnp.eye(n, dtype=bool), rate.shape)
  p = jnp.where(upper, rate, 1 - jnp.swapaxes(rate, -1, -2))
  p = jnp.where(observed, p, jnp.asarray(missing, dtype=dtype))
  return jnp.where(diag, jnp.asarray(0.5, dtype=dtype), p)
