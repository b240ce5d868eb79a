"""The planted-core benchmark generator (paper §6.1, "Planted-Core Benchmark").

The paper leaves its generator open; this module implements the specification of issue 5, which
was calibrated to the published Tables 3–4 but does not reproduce them cell for cell
(``benchmarks/planted_core.py`` prints ours next to the published ones). The specification:

1. every core agent beats every outsider with ``P = 1/2 + U(0.20, 0.30)``, drawn per pair;
2. inside the core (odd size ``s``) a regular rotation: core agent ``i`` beats the next
   ``(s - 1)/2`` core agents cyclically, each edge ``1/2 + U(0.20, 0.30)``;
3. outsiders in a random strict order, each higher one beating each lower one with
   ``P = 1/2 + U(0.12, 0.45)``;
4. ``P_ba = 1 - P_ab``, diagonal ``1/2``, labels randomly permuted;
5. exactly ``round(mu * n (n - 1) / 2)`` unordered pairs are missing (no data at all);
6. for each kept pair ``w_ab ~ Binomial(m, eta/2 + (1 - eta) P_ab)`` with ``eta = 0.02`` (with
   probability ``eta`` the outcome is a fair coin), ``w_ba = m - w_ab``.

Items 1–4 are :func:`planted_core_tournament`, items 5–6 :func:`sample_comparisons`. Because every
core agent beats every outsider and the rotation is strongly connected, the hard Top Cycle of the
majority tournament ``P > 1/2`` is exactly the planted core.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._checks import as_float_array, default_float_dtype
from ste_jax._results import result_type

_OUTSIDER_MODES = ("random_order", "random_tournament")


@result_type
class PlantedCore:
  """Output of :func:`planted_core_tournament`.

  Attributes:
    P: ``(n, n)`` probabilistic tournament (``P + P^T = 1``, diagonal ``1/2``).
    core_mask: ``(n,)`` bool, ``True`` on the planted core (its hard Top Cycle).
  """

  P: jax.Array
  core_mask: jax.Array


@result_type
class SampledComparisons:
  """Output of :func:`sample_comparisons`.

  Attributes:
    wins: ``(n, n)`` float counts, ``wins[a, b]`` = number of the ``m`` games of pair ``{a, b}``
      that ``a`` won; ``wins + wins.T = m`` on observed pairs and ``0`` elsewhere (diagonal ``0``).
    observed: ``(n, n)`` symmetric bool, ``True`` on kept (non-missing) pairs, ``False`` on the
      diagonal.
  """

  wins: jax.Array
  observed: jax.Array


def _concrete_float(value):
  """``float(value)`` for concrete scalars, ``None`` for tracers (checked eagerly only)."""
  try:
    return float(value)
  except (TypeError, jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
    return None


def _check_margin(name, margin):
  lo, hi = margin
  lo_v, hi_v = _concrete_float(lo), _concrete_float(hi)
  if lo_v is not None and hi_v is not None and not 0 < lo_v <= hi_v <= 0.5:
    raise ValueError(f"{name} must be a range (lo, hi) with 0 < lo <= hi <= 1/2; got {margin!r}.")
  return lo, hi


def planted_core_tournament(
  key: jax.Array,
  *,
  n: int,
  core_size: int,
  core_margin: tuple[float, float] = (0.20, 0.30),
  cycle_margin: tuple[float, float] = (0.20, 0.30),
  outsider_margin: tuple[float, float] = (0.12, 0.45),
  outsiders: str = "random_order",
  dtype: jax.typing.DTypeLike | None = None,
) -> PlantedCore:
  """A random probabilistic tournament whose hard Top Cycle is a planted cyclic core.

  Builds the tournament on canonical labels (core ``0..s-1``, outsiders ``s..n-1``), then
  relabels all agents by a uniform random permutation ``sigma``: ``P[x, y] = P0[sigma(x),
  sigma(y)]``. Margins are drawn independently per unordered pair: ``P_ab = 1/2 + U(lo, hi)`` for
  the winner ``a``.

  * core vs outsider: the core agent wins, margin ``U(core_margin)``;
  * inside the core: regular rotation, agent ``i`` beats ``i+1, ..., i+(s-1)/2 (mod s)``, margin
    ``U(cycle_margin)`` (``s = 1`` is a Condorcet winner);
  * outsiders: ``"random_order"`` (default) a uniformly random strict (transitive) order, the higher
    agent winning with margin ``U(outsider_margin)``; ``"random_tournament"`` each pair's winner
    a fair coin, same margins (a cyclic outsider set, for the sensitivity sweep).

  Args:
    key: typed PRNG key.
    n: number of agents (static), ``n > core_size``.
    core_size: ``s`` (static), odd and ``>= 1``.
    core_margin: ``(lo, hi)``, ``0 < lo <= hi <= 1/2``, for core-beats-outsider pairs.
    cycle_margin: ``(lo, hi)`` for the rotation edges inside the core.
    outsider_margin: ``(lo, hi)`` for outsider-vs-outsider pairs.
    outsiders: ``"random_order"`` or ``"random_tournament"``.
    dtype: float dtype of ``P``; default float32, or float64 under x64.

  Returns:
    A :class:`PlantedCore` ``(P, core_mask)``.

  Raises:
    ValueError: if ``core_size`` is even or ``< 1``, ``n <= core_size``, a margin range is invalid
      or ``outsiders`` is unknown.

  Examples:
    >>> import jax
    >>> from ste_jax.stats import planted_core_tournament
    >>> planted = planted_core_tournament(jax.random.key(0), n=6, core_size=3)
    >>> planted.P.shape, int(planted.core_mask.sum()), float(planted.P[0, 0])
    ((6, 6), 3, 0.5)
  """
  n = int(n)
  s = int(core_size)
  if s < 1 or s % 2 == 0:
    raise ValueError(f"core_size must be odd and >= 1 (a regular rotation); got {core_size}.")
  if n <= s:
    raise ValueError(f"n must exceed core_size; got n={n}, core_size={core_size}.")
  if outsiders not in _OUTSIDER_MODES:
    raise ValueError(f"outsiders must be one of {_OUTSIDER_MODES}, got {outsiders!r}.")
  dtype = default_float_dtype() if dtype is None else jnp.dtype(dtype)
  ranges = [
    tuple(jnp.asarray(v).astype(dtype) for v in _check_margin(name, m))
    for name, m in (
      ("core_margin", core_margin),
      ("cycle_margin", cycle_margin),
      ("outsider_margin", outsider_margin),
    )
  ]
  core = jnp.asarray(s, dtype=jnp.int32)
  coin_outsiders = jnp.asarray(outsiders == "random_tournament")
  return _planted_kernel(key, ranges, core, coin_outsiders, n=n, dtype=dtype)


@functools.partial(jax.jit, static_argnames=("n", "dtype"))
def _planted_kernel(key, ranges, s, coin_outsiders, *, n, dtype):
  """The compiled kernel of :func:`planted_core_tournament` (core size and outsider mode traced)."""
  (core_lo, core_hi), (cyc_lo, cyc_hi), (out_lo, out_hi) = ranges
  k_margin, k_coin, k_perm = jax.random.split(key, 3)

  u = jax.random.uniform(k_margin, (n, n), dtype=dtype)
  i = jnp.arange(n, dtype=jnp.int32)[:, None]
  j = jnp.arange(n, dtype=jnp.int32)[None, :]
  upper = i < j
  in_core_i = i < s
  in_core_j = j < s
  both_core = in_core_i & in_core_j
  core_vs_out = in_core_i & ~in_core_j  # with i < j the core agent is always i
  margin = jnp.where(
    both_core,
    cyc_lo + (cyc_hi - cyc_lo) * u,
    jnp.where(core_vs_out, core_lo + (core_hi - core_lo) * u, out_lo + (out_hi - out_lo) * u),
  )
  half = (s - 1) // 2
  i_wins_rotation = (j - i) <= half  # for i < j inside the core
  # "random_order": canonical order (randomized by the relabeling); else a fair coin per pair.
  i_wins_outsider = jax.random.bernoulli(k_coin, 0.5, (n, n)) | ~coin_outsiders
  i_wins = jnp.where(both_core, i_wins_rotation, jnp.where(core_vs_out, True, i_wins_outsider))
  sign = jnp.where(i_wins, 1, -1).astype(dtype)
  p_upper = 0.5 + sign * margin
  half_p = jnp.full((n, n), 0.5, dtype=dtype)
  p0 = jnp.where(upper, p_upper, jnp.where(i > j, 1 - p_upper.T, half_p))

  sigma = jax.random.permutation(k_perm, n)
  p = p0[sigma][:, sigma]
  core_mask = sigma.astype(jnp.int32) < s
  return PlantedCore(P=p, core_mask=core_mask)


def sample_comparisons(
  key: jax.Array,
  P: jax.typing.ArrayLike,
  *,
  per_pair: int,
  missing_rate: float = 0.0,
  label_noise: float = 0.02,
) -> SampledComparisons:
  """Samples ``m`` noisy games on a random subset of pairs of a probabilistic tournament.

  Exactly ``round(missing_rate * n (n - 1) / 2)`` unordered pairs, chosen uniformly at random, are
  missing (no games; ``round`` is Python's, half to even, as in NumPy). For each kept pair
  ``a < b``, ``w_ab ~ Binomial(m, eta/2 + (1 - eta) P_ab)`` and ``w_ba = m - w_ab``: with
  probability ``eta`` a game is a fair coin flip.

  Args:
    key: typed PRNG key.
    P: ``(n, n)`` probabilistic tournament (only the strict upper triangle is read).
    per_pair: ``m >= 0`` games per kept pair (may be traced).
    missing_rate: ``mu`` in ``[0, 1]`` (static: it fixes the number of missing pairs).
    label_noise: ``eta`` in ``[0, 1]``.

  Returns:
    A :class:`SampledComparisons` ``(wins, observed)``; ``wins`` has ``P``'s float dtype.

  Raises:
    ValueError: if ``P`` is not square, ``missing_rate`` is not in ``[0, 1]`` or a concrete
      ``per_pair`` / ``label_noise`` is out of range.

  Examples:
    >>> import jax
    >>> from ste_jax.stats import planted_core_tournament, sample_comparisons
    >>> P = planted_core_tournament(jax.random.key(0), n=6, core_size=3).P
    >>> sampled = sample_comparisons(jax.random.key(1), P, per_pair=10)
    >>> sampled.wins.shape, float(sampled.wins[0, 1] + sampled.wins[1, 0])
    ((6, 6), 10.0)
  """
  P = as_float_array(P, "P")
  if P.ndim != 2 or P.shape[0] != P.shape[1]:
    raise ValueError(f"P must have shape (n, n); got {tuple(P.shape)}.")
  n = P.shape[0]
  mu = float(missing_rate)
  if not 0 <= mu <= 1:
    raise ValueError(f"missing_rate must be in [0, 1], got {missing_rate!r}.")
  eta = _concrete_float(label_noise)
  if eta is not None and not 0 <= eta <= 1:
    raise ValueError(f"label_noise must be in [0, 1], got {label_noise!r}.")
  m = _concrete_float(per_pair)
  if m is not None and (m < 0 or m != math.floor(m)):
    raise ValueError(f"per_pair must be a nonnegative integer, got {per_pair!r}.")
  num_pairs = n * (n - 1) // 2
  num_missing = int(round(mu * num_pairs))
  eta_arr = jnp.asarray(label_noise).astype(P.dtype)
  m_arr = jnp.asarray(per_pair).astype(P.dtype)
  return _sample_kernel(key, P, m_arr, eta_arr, jnp.asarray(num_missing, dtype=jnp.int32))


@jax.jit
def _sample_kernel(key, P, m_arr, eta_arr, num_missing):
  """The compiled kernel of :func:`sample_comparisons`."""
  dtype = P.dtype
  n = P.shape[0]
  num_pairs = n * (n - 1) // 2
  rows, cols = np.triu_indices(n, k=1)
  k_missing, k_games = jax.random.split(key)
  order = jax.random.permutation(k_missing, num_pairs)
  is_kept_rank = jnp.arange(num_pairs, dtype=jnp.int32) >= num_missing
  kept = jnp.zeros((num_pairs,), dtype=bool).at[order].set(is_kept_rank)
  p_game = eta_arr / 2 + (1 - eta_arr) * P[rows, cols]
  w = jax.random.binomial(k_games, m_arr, p_game, dtype=dtype)
  zero = jnp.zeros_like(w)
  w_ab = jnp.where(kept, w, zero)
  w_ba = jnp.where(kept, m_arr - w, zero)
  wins = jnp.zeros((n, n), dtype=dtype).at[rows, cols].set(w_ab).at[cols, rows].set(w_ba)
  observed_upper = jnp.zeros((n, n), dtype=bool).at[rows, cols].set(kept)
  return SampledComparisons(wins=wins, observed=observed_upper | observed_upper.T)
