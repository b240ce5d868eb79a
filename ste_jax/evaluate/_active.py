"""Active comparisons: the pairs to compare next so that the core certifies with few comparisons.

The verdicts of :func:`~ste_jax.evaluate.orientation_certificates` are certified by *sure* edges
(posterior probability of the orientation ``>= c``) and refuted through *possible* edges (all pairs
whose reverse is not sure). A comparison can only change a verdict by making an *open* pair (sure
neither way) sure one way, which adds one sure edge ``i -> j`` and removes one possible edge
``j -> i``. :func:`suggest_pairs` scores every open pair by two terms and draws ``k`` distinct
pairs with inclusion probabilities proportional to the score.

* *Look-ahead* (exact, for every pair at once): the number of undetermined agents whose verdict is
  decided as soon as the pair becomes sure, for each orientation, weighted by the posterior
  probability of that orientation. With ``R`` the reflexive-transitive closure of the sure relation,
  a new sure edge ``i -> j`` makes ``x`` reach everyone (Top Cycle ``in``) iff ``R[x, i]`` and
  ``R[x] | R[j]`` is everyone: one matrix product. Removing the possible edge ``j -> i`` takes ``x``
  (in the possible top component) out iff ``x`` no longer reaches ``i``: iff ``x`` does not reach
  ``i`` avoiding agent ``j`` and ``j`` does not reach ``i`` through another out-neighbour avoiding
  ``j``; the closures avoiding each agent are one batched fixed-point iteration (``O(n^4)``
  operations, ``O(n^3)`` memory). For the Uncovered Set (kings, two steps) the changes are counts of
  two-step paths (``O(n^3)``). ``tests/evaluate/test_active.py`` checks all four against recomputing
  the verdicts pair by pair.
* *Relevance* (Thompson sampling): in a tournament drawn from the pairs' posteriors (sure edges
  kept), the core is certified by the pairs that touch the core: every core member against every
  outsider (this makes every outsider ``out``) and the pairs inside the core (paths for the
  ``in`` verdicts). The relevance of a pair is the share of ``num_draws`` posterior tournaments in
  whose core it has an endpoint, counted only while an endpoint is undetermined. This focuses the
  comparisons on the ``O(n |C|)`` pairs that a certificate needs (the Top Cycle can be found with
  ``O(n k + n log n)`` queries when it has at most ``k`` members, against ``Omega(n^2)`` in
  general: Maiti & Dey, arXiv 1611.06189) long before any single pair decides a verdict. On
  sparse data the posterior tournaments are a poor guide (a pair never compared is a coin flip,
  so their cores hold nearly everyone); the caller may then pass the cores of other plausible
  tournaments (``plausible_cores``: ``ste-jax suggest`` passes those of the model estimator's
  bootstrap replicas).

The score of an open pair is look-ahead + relevance; sure pairs score 0, and so does every pair
once the verdicts are certified (no undetermined agent is left). The draw is *systematic PPS
sampling*: the inclusion probabilities ``pi = min(1, lambda * score)`` sum to ``k`` (a pair with a
zero score gets a tiny share, so that ``k`` pairs are always drawn), the pairs are put in a random
order (required pairs first, with ``pi = 1``) and the pairs whose interval of the cumulative sum
holds one of ``u, u + 1, ..., u + k - 1`` are taken. Each pair is drawn with probability exactly
``pi`` (the reported ``probability``), at most once. The posterior draws use a fixed internal key
(common random numbers), so the scores are a deterministic function of the counts and all the
randomness of the draw is in ``key``: inverse-probability weights ``1 / pi`` are exact.

*Which level the edges need* (``correction``). ``confidence`` is the probability that the whole
certified core is right, not that one pair is. Every verdict is right as soon as every sure edge is
a true edge (see :mod:`ste_jax.evaluate._verdicts`), so by the union bound over the ``num_pairs = n
(n - 1) / 2`` pairs an edge level ``1 - (1 - confidence) / num_pairs`` keeps the chance that any
sure edge is wrong, hence that the certified core is wrong, below ``1 - confidence``
(``correction="bonferroni"``, the default). The per-pair level (``correction="none"``, edge level =
``confidence``, as in ``ste-jax score`` and :func:`~ste_jax.evaluate.membership_verdicts`) is not
enough here: adaptive sampling stops comparing a pair as soon as it looks sure and the run stops at
the first certification, so the sure edges are exactly the pairs whose early flukes are never
corrected: in ``benchmarks/active.py`` the per-pair level certifies a wrong core far more often
than ``1 - confidence``, the Bonferroni level does not (figures in ``benchmarks/RESULTS.md``).
The union bound is conservative and the Beta
posteriors are a model, not a frequentist guarantee under optional stopping: the benchmark measures
the wrong share.

Everything is pure and static-shaped: :func:`suggest_pairs` works under ``jax.jit`` (``k``,
``target`` and ``num_draws`` static) and ``jax.vmap``, so a simulation of many runs
(:func:`simulate_certification`) is one compiled computation.
"""

from collections.abc import Sequence
import dataclasses
import functools
from typing import NamedTuple

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np

from ste_jax._options import (
  at_least,
  open_interval,
  option,
  parse_nonnegative_int,
  parse_open_interval,
)
from ste_jax._results import result_type
from ste_jax.data import Comparisons, PairCounts
from ste_jax.evaluate._leaderboard import replica_cores
from ste_jax.evaluate._protocol import TournamentEstimator
from ste_jax.evaluate._replicas import ResamplingSettings

TARGETS = ("top_cycle", "uncovered")
CORRECTIONS = ("bonferroni", "none")


@dataclasses.dataclass(frozen=True)
class SuggestSettings:
  """The options of :func:`suggest_pairs` and ``ste-jax suggest``, each declared once.

  :func:`suggest_pairs` takes them as keywords with these defaults; the command line derives its
  flags from the fields (:func:`~ste_jax._options.add_arguments`).

  Attributes:
    k: number of distinct pairs to draw.
    target: the core whose verdicts to certify, ``"top_cycle"`` or ``"uncovered"``.
    confidence: the verdicts' level in ``(0.5, 1)``.
    correction: ``"bonferroni"`` (edge level ``1 - (1 - confidence) / num_pairs``) or ``"none"``.
    prior: ``alpha`` of every pair's symmetric ``Beta(alpha, alpha)`` prior.
    num_draws: posterior tournaments behind the relevance term.

  Example:
    >>> SuggestSettings().k, SuggestSettings(target="uncovered").correction
    (20, 'bonferroni')
  """

  k: int = option(
    20, help="number of pairs to suggest", parse=parse_nonnegative_int, check=at_least(1)
  )
  target: str = option(
    "top_cycle", help="core whose verdicts to certify: top_cycle or uncovered", choices=TARGETS
  )
  confidence: float = option(
    0.95,
    help="probability that the whole certified core is right; with --correction bonferroni an "
    "edge is sure when its posterior orientation probability is >= 1 - (1 - confidence) / #pairs",
    parse=parse_open_interval(0.5, 1.0),
    check=open_interval(0.5, 1.0),
  )
  correction: str = option(
    "bonferroni",
    help="bonferroni: split 1 - confidence over the n(n-1)/2 pairs (union bound), as adaptive "
    "sampling that stops at the first certification needs; none: confidence per pair, the level "
    "of `score` verdicts",
    choices=CORRECTIONS,
  )
  prior: float = option(0.5, flag=None, help="alpha of each pair's Beta(alpha, alpha) prior")
  num_draws: int = option(
    32, flag=None, help="posterior tournaments behind the relevance term", check=at_least(1)
  )


_SUGGEST = SuggestSettings()  # the keyword defaults of suggest_pairs
POLICIES = ("active", "uniform", "arena")
_COUNT = jnp.float32  # {0, 1} products and integer counts <= n^2: exact in float32
_DRAW_SEED = 0x5E1EC7  # the posterior draws' common random numbers (see the module docstring)


@result_type
class SuggestedPairs:
  """Output of :func:`suggest_pairs` (a pytree of arrays; batched under ``jax.vmap``).

  Attributes:
    pairs: ``(k, 2)`` int32 agent indices ``(a, b)`` with ``a < b``, the pairs to compare next,
      highest score first; distinct.
    probability: ``(k,)`` the probability that each pair was drawn (its inclusion probability;
      ``1`` for required pairs).
    score: ``(k,)`` how much the pair's outcome can change the verdicts: expected number of
      verdicts decided at once (look-ahead) + share of posterior tournaments whose core
      certificate needs the pair (relevance); ``0`` for a sure pair and for every pair once
      ``certified``.
    decides: ``(k, n)`` bool, the agents whose verdict is decided as soon as the pair is sure
      (either orientation).
    inclusion: ``(n, n)`` symmetric inclusion probability of every pair (sums to ``2 k``).
    scores: ``(n, n)`` symmetric score of every pair.
    is_in: ``(n,)`` bool, verdict ``in`` (certified member of the target core).
    is_out: ``(n,)`` bool, verdict ``out``.
    certified: scalar bool, no agent undetermined.
    edge_level: scalar, the posterior orientation probability an edge needs to be sure (see
      :func:`edge_level`: ``1 - (1 - confidence) / num_pairs`` with the default Bonferroni
      correction, ``confidence`` with ``correction="none"``).
    beats: ``(n, n)`` the posterior orientation probabilities (:func:`posterior_beats`) behind the
      verdicts.
  """

  pairs: jax.Array
  probability: jax.Array
  score: jax.Array
  decides: jax.Array
  inclusion: jax.Array
  scores: jax.Array
  is_in: jax.Array
  is_out: jax.Array
  certified: jax.Array
  edge_level: jax.Array
  beats: jax.Array

  def verdicts(self) -> np.ndarray:
    """``"in"`` / ``"out"`` / ``"undetermined"`` per agent (object array of shape ``(..., n)``)."""
    from ._verdicts import certificate_labels

    return certificate_labels(np.asarray(self.is_in), ~np.asarray(self.is_out))


# --------------------------------------------------------------------------------------------
# Posterior orientations and certificates


def posterior_beats(wins: jax.typing.ArrayLike, *, prior: float = 0.5) -> jax.Array:
  """``beats[a, b] = Pr(theta_ab > 1/2)`` with ``theta_ab ~ Beta(prior + w_ab, prior + w_ba)``.

  From :func:`~ste_jax.data.posterior_edges` (``D = max(0, Pr(>) - Pr(<))``): ``beats = (1 + D -
  D^T) / 2``, zero diagonal. An unobserved pair is ``1/2`` both ways.

  Args:
    wins: ``(..., n, n)`` win counts (ties as halves), or a :class:`~ste_jax.data.PairCounts`.
    prior: ``alpha`` of the symmetric ``Beta(alpha, alpha)`` prior (default Jeffreys, 1/2).

  Returns:
    ``(..., n, n)`` orientation probabilities in ``wins``' float dtype.
  """
  from ste_jax._checks import eye_mask
  from ste_jax.data import posterior_edges

  D = posterior_edges(wins, prior=(prior, prior))
  beats = 0.5 * (1.0 + D - jnp.swapaxes(D, -1, -2))
  return jnp.where(eye_mask(beats), jnp.zeros_like(beats), beats)


def edge_level(
  confidence: jax.typing.ArrayLike, num_agents: int, correction: str = "bonferroni"
) -> jax.typing.ArrayLike:
  """The level at which an orientation is *sure*, so that the whole core holds at ``confidence``.

  ``correction="bonferroni"``: ``1 - (1 - confidence) / num_pairs`` with ``num_pairs = n (n - 1)
  / 2`` (union bound over the pairs; see the module docstring for why adaptive sampling needs
  it); ``"none"``: ``confidence`` itself (the per-pair level of ``ste-jax score``).

  Args:
    confidence: probability in ``(0.5, 1)`` that the certified core is right (may be traced).
    num_agents: ``n`` (static).
    correction: ``"bonferroni"`` or ``"none"`` (static).

  Returns:
    A Python float for a Python number, else a scalar array.

  Examples:
    >>> round(edge_level(0.95, 30), 6), edge_level(0.95, 30, "none")  # 435 pairs
    (0.999885, 0.95)
  """
  if correction not in CORRECTIONS:
    raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}.")
  if correction == "none":
    return confidence
  num_pairs = max(1, num_agents * (num_agents - 1) // 2)
  return 1 - (1 - confidence) / num_pairs


def _certificate(beats, confidence, target):
  """``(sure, possible, is_in, is_out)`` of one ``(n, n)`` orientation matrix."""
  from ._verdicts import orientation_certificates

  n = beats.shape[-1]
  c = jnp.asarray(confidence).astype(beats.dtype)
  sure = (beats >= c) & ~jnp.eye(n, dtype=bool)
  possible = ~sure.T & ~jnp.eye(n, dtype=bool)
  m = orientation_certificates(beats, c)
  if target == "top_cycle":
    return sure, possible, m.top_cycle_in, ~m.top_cycle_possible
  return sure, possible, m.uncovered_in, ~m.uncovered_possible


def _closure(R0, E, allowed):
  """Least fixed point of ``R = R0 | (R E)`` restricted to ``allowed`` (``R0`` ``(..., n, n)``).

  With ``R0`` the identity this is the reflexive-transitive closure of ``E``; one matrix product
  per path length, until nothing changes (at most ``n`` products).
  """
  n = E.shape[-1]
  Ef = E.astype(_COUNT)

  def cond(state):
    return state[1]

  def body(state):
    R, _ = state
    step = (jnp.matmul(R.reshape(-1, n).astype(_COUNT), Ef) > 0).reshape(R.shape)
    new = (R | step) & allowed
    return new, jnp.any(new != R)

  R, _ = lax.while_loop(cond, body, (R0 & allowed, jnp.ones((), bool)))
  return R


class _Lookahead(NamedTuple):
  """Per-orientation look-ahead of one certificate (``[i, j]`` = "``i -> j`` becomes sure").

  ``gain[i, j]`` counts the undetermined agents decided; ``decided(i, j)`` is their ``(n,)`` mask.
  """

  gain: jax.Array
  parts: tuple


def _top_cycle_lookahead(sure, possible, und) -> _Lookahead:
  n = sure.shape[-1]
  eye = jnp.eye(n, dtype=bool)
  # "in": a sure edge i -> j gives x (reaching i) everything j reaches.
  R = _closure(eye, sure, jnp.ones((n, n), bool))
  Rf = R.astype(_COUNT)
  size = jnp.sum(Rf, axis=1)
  union = size[:, None] + size[None, :] - jnp.matmul(Rf, Rf.T)  # |R[x] | R[j]|
  completes = (union > n - 0.5) & und[:, None]  # [x, j]
  gain_in = jnp.matmul(Rf.T, completes.astype(_COUNT))  # [i, j] = sum_x R[x, i] completes[x, j]
  # "out": removing the possible edge j -> i. An agent x of the possible top component still
  # reaches everyone iff it still reaches i: by a path avoiding j, or through j and another
  # out-neighbour u of j that reaches i avoiding j (``via[j, i]``).
  keep = ~eye  # keep[j, v]: v is not the removed agent j
  avoid = _closure(eye[None, :, :] & keep[:, None, :], possible, keep[:, None, :])  # [j, x, v]
  avoid_f = avoid.astype(_COUNT)
  pf = possible.astype(_COUNT)
  via = (jnp.einsum("ju,jui->ji", pf, avoid_f) - pf) > 0.5  # u = i is the removed edge itself
  und_f = und.astype(_COUNT)
  still = jnp.einsum("x,jxi->ji", und_f, avoid_f)
  lost = jnp.where(via, jnp.zeros_like(still), jnp.sum(und_f) - still)  # [j, i]
  return _Lookahead(gain_in + lost.T, (R, completes, avoid, via, und))


def _top_cycle_decided(parts, i, j):
  R, completes, avoid, via, und = parts
  return (R[:, i] & completes[:, j]) | (und & ~avoid[j, :, i] & ~via[j, i])


def _uncovered_lookahead(sure, possible, und) -> _Lookahead:
  n = sure.shape[-1]
  eye = jnp.eye(n, dtype=bool)
  sf = sure.astype(_COUNT)
  # "in" (king by sure edges): x != i with x -> i gains j; i itself gains j and all j beats.
  within = eye | sure | (jnp.matmul(sf, sf) > 0)
  missing = ~within
  num_missing = jnp.sum(missing, axis=1, dtype=jnp.int32)
  only_j = und[:, None] & (num_missing == 1)[:, None] & missing  # [x, j]
  gain_other = jnp.matmul(sf.T, only_j.astype(_COUNT))  # [i, j]
  left = jnp.matmul(missing.astype(_COUNT), (~(sure | eye)).astype(_COUNT).T)  # [i, j]
  self_in = und[:, None] & (left < 0.5)
  # "out" (not a king by possible edges) after removing j -> i: x != j loses i when j was its
  # only middle agent; j loses i when it has no other two-step path, and loses y when j -> i -> y
  # was its only way to y.
  pf = possible.astype(_COUNT)
  two = jnp.matmul(pf, pf)
  only_via = und[:, None] & ~possible & (jnp.abs(two - 1) < 0.5) & ~eye  # [x, i]
  gain_lost_other = jnp.matmul(
    only_via.astype(_COUNT).T, pf
  )  # [i, j] = sum_x only_via[x, i] Q[x, j]
  single = ~possible & (jnp.abs(two - 1) < 0.5) & ~eye  # [j, y]
  through_i = jnp.matmul(single.astype(_COUNT), pf.T)  # [j, i] = sum_y single[j, y] Q[i, y]
  self_out = und[:, None] & ((two < 0.5) | (through_i > 0.5))  # [j, i]
  gain = gain_other + self_in.astype(_COUNT) + gain_lost_other + self_out.T.astype(_COUNT)
  return _Lookahead(gain, (sure, only_j, self_in, only_via, possible, self_out))


def _uncovered_decided(parts, i, j):
  sure, only_j, self_in, only_via, possible, self_out = parts
  agents = jnp.arange(sure.shape[-1])
  return (
    (sure[:, i] & only_j[:, j])
    | ((agents == i) & self_in[i, j])
    | (only_via[:, i] & possible[:, j])
    | ((agents == j) & self_out[j, i])
  )


_LOOKAHEAD = {
  "top_cycle": (_top_cycle_lookahead, _top_cycle_decided),
  "uncovered": (_uncovered_lookahead, _uncovered_decided),
}


def _posterior_cores(beats, sure, target, num_draws):
  """``(num_draws, n)`` cores of tournaments drawn from the pairs' posteriors (sure edges kept)."""
  from ste_jax import exact

  n = beats.shape[-1]
  upper = jnp.triu(jnp.ones((n, n), bool), k=1)
  u = jax.random.uniform(jax.random.key(_DRAW_SEED), (num_draws, n, n), dtype=beats.dtype)
  forward = sure[None] | (~sure.T[None] & (u < beats[None]))  # orientation of a < b
  T = (upper[None] & forward) | (upper.T[None] & ~jnp.swapaxes(forward, -1, -2))
  return exact.reach_all(T) if target == "top_cycle" else exact.kings_in_relation(T)


def _relevance(cores):
  """``[a, b]``: share of the ``(R, n)`` plausible cores that hold ``a`` or ``b``."""
  cf = cores.astype(_COUNT)
  p = jnp.mean(cf, axis=0)
  both = jnp.matmul(cf.T, cf) / cores.shape[0]
  return p[:, None] + p[None, :] - both


# --------------------------------------------------------------------------------------------
# Sampling k distinct pairs with given inclusion probabilities


def _inclusion(weight, free, required, k):
  """``pi = min(1, lambda * weight)`` on ``free`` pairs (sum ``k - #required``); 1 if required.

  ``weight`` must be positive on ``free`` pairs (``(P,)`` each). Exact water-filling: with the
  weights sorted, the number ``m`` of capped pairs is the smallest with ``lambda_m w_(m) <= 1``.
  """
  wf = jnp.where(free, weight, jnp.zeros_like(weight))
  slots = (k - jnp.sum(required, dtype=jnp.int32)).astype(weight.dtype)
  ws = -jnp.sort(-wf)
  m = jnp.arange(k + 1)
  tail = jnp.concatenate([jnp.cumsum(ws[::-1])[::-1], jnp.zeros((1,), ws.dtype)])[
    m
  ]  # small terms first
  lam = (slots - m.astype(ws.dtype)) / jnp.maximum(tail, jnp.finfo(ws.dtype).tiny)
  below = lam * ws[jnp.minimum(m, ws.shape[0] - 1)] <= 1 + 1e-6
  above = (m == 0) | (lam * ws[jnp.maximum(m - 1, 0)] >= 1 - 1e-6)
  valid = below & above & (m.astype(ws.dtype) < slots)
  best = jnp.argmax(valid)
  pi = jnp.minimum(lam[best] * wf, jnp.ones_like(wf))
  capped = pi >= 1
  rest = jnp.sum(jnp.where(capped, jnp.zeros_like(pi), pi))
  scale = (slots - jnp.sum(capped, dtype=jnp.int32).astype(pi.dtype)) / jnp.maximum(
    rest, jnp.finfo(pi.dtype).tiny
  )
  pi = jnp.where(capped, pi, pi * scale)  # exact sum despite rounding in lambda
  num_free = jnp.sum(free, dtype=jnp.int32).astype(weight.dtype)
  pi = jnp.where(num_free <= slots, free.astype(weight.dtype), pi)  # every free pair is needed
  pi = jnp.where(slots > 0, pi, jnp.zeros_like(pi))
  return jnp.where(required, jnp.ones_like(pi), pi)


def _systematic(key, pi, required, k):
  """``k`` distinct indices, each drawn with probability ``pi`` (systematic sampling)."""
  k_order, k_start = jax.random.split(key)
  order = jnp.argsort(jnp.where(required, -1.0, jax.random.uniform(k_order, pi.shape)))
  edges = jnp.cumsum(pi[order])
  points = jax.random.uniform(k_start, (), dtype=pi.dtype) + jnp.arange(k, dtype=pi.dtype)
  idx = jnp.minimum(jnp.searchsorted(edges, points, side="right"), pi.shape[0] - 1)
  return order[idx]


def _draw_pairs(key, weight, free, required, is_open, k):
  """Inclusion probabilities and ``k`` drawn pair indices for ``(P,)`` nonnegative ``weight``.

  A tiny floor (open pairs twice the others) keeps ``k`` pairs drawable when fewer than ``k``
  pairs have a positive weight; it never changes the order of positive weights.
  """
  floor = 1e-6 * (1.0 + jnp.max(jnp.where(free, weight, jnp.zeros_like(weight))))
  w = weight + floor * (1.0 + is_open.astype(weight.dtype))
  pi = _inclusion(w, free, required, k)
  return pi, _systematic(key, pi, required, k)


# --------------------------------------------------------------------------------------------
# The policy


@functools.partial(jax.jit, static_argnames=("k", "target", "num_draws", "prior"))
def _suggest(key, wins, exclude, require, level, cores=None, *, k, target, num_draws, prior):
  """The policy at edge level ``level`` (the caller applies the correction: one compilation).

  ``cores``: ``(R, n)`` plausible cores behind the relevance term, or ``None`` for ``num_draws``
  posterior draws."""
  n = wins.shape[-1]
  rows, cols = np.triu_indices(n, k=1)
  beats = posterior_beats(wins, prior=prior)
  level = jnp.asarray(level, beats.dtype)
  sure, possible, is_in, is_out = _certificate(beats, level, target)
  und = ~is_in & ~is_out
  certified = ~jnp.any(und)
  is_open = ~sure & ~sure.T & ~jnp.eye(n, dtype=bool)
  lookahead_fn, decided_fn = _LOOKAHEAD[target]
  look = lookahead_fn(sure, possible, und)
  expected = beats.astype(_COUNT) * look.gain
  expected = expected + expected.T
  if cores is None:
    cores = _posterior_cores(beats, sure, target, num_draws)
  relevance = _relevance(cores) * (und[:, None] | und[None, :]).astype(_COUNT)
  scores = jnp.where(is_open, expected + relevance, jnp.zeros_like(expected)).astype(beats.dtype)
  excluded = exclude | exclude.T
  required = (require | require.T) & ~excluded
  free = ~excluded[rows, cols] & ~required[rows, cols]
  pi, chosen = _draw_pairs(
    key, scores[rows, cols], free, required[rows, cols], is_open[rows, cols], k
  )
  a, b = jnp.asarray(rows)[chosen], jnp.asarray(cols)[chosen]
  score = scores[a, b]
  first = jnp.argsort(-score, stable=True)
  a, b, score = a[first], b[first], score[first]
  decides = jax.vmap(lambda i, j: decided_fn(look.parts, i, j) | decided_fn(look.parts, j, i))(a, b)
  decides = decides & is_open[a, b][:, None]
  inclusion = jnp.zeros((n, n), pi.dtype).at[rows, cols].set(pi)
  return SuggestedPairs(
    pairs=jnp.stack([a, b], axis=1).astype(jnp.int32),
    probability=pi[chosen][first],
    score=score,
    decides=decides,
    inclusion=inclusion + inclusion.T,
    scores=scores,
    is_in=is_in,
    is_out=is_out,
    certified=certified,
    edge_level=level,
    beats=beats,
  )


def _pair_mask(spec, n: int, names, what: str):
  """A ``(n, n)`` bool mask from ``None``, a mask or a sequence of ``(a, b)`` pairs."""
  if spec is None:
    return jnp.zeros((n, n), bool)
  if isinstance(spec, jax.Array) or (isinstance(spec, np.ndarray) and spec.ndim == 2):
    mask = jnp.asarray(spec)
    if mask.shape != (n, n) or mask.dtype != jnp.bool_:
      raise ValueError(
        f"{what} must be a ({n}, {n}) boolean mask or a sequence of pairs; got "
        f"{mask.dtype} {tuple(mask.shape)}."
      )
    return mask
  if not isinstance(spec, Sequence) and not isinstance(spec, np.ndarray):
    raise ValueError(
      f"{what} must be a ({n}, {n}) boolean mask or a sequence of (a, b) pairs; got {spec!r}."
    )
  index = {name: i for i, name in enumerate(names or ())}
  mask = np.zeros((n, n), bool)
  for pair in spec:
    try:
      x, y = pair
    except (TypeError, ValueError):
      raise ValueError(f"{what}: each entry must be a pair (a, b), got {pair!r}.") from None
    ij = []
    for agent in (x, y):
      if isinstance(agent, str):
        if agent not in index:
          raise ValueError(f"{what}: unknown agent {agent!r}.")
        ij.append(index[agent])
      elif isinstance(agent, (int, np.integer)) and 0 <= int(agent) < n:
        ij.append(int(agent))
      else:
        raise ValueError(f"{what}: agent {agent!r} is not a name or an index in [0, {n}).")
    if ij[0] == ij[1]:
      raise ValueError(f"{what}: ({x!r}, {y!r}) is not a pair of two agents.")
    mask[ij[0], ij[1]] = True
  return jnp.asarray(mask)


def _is_concrete(x) -> bool:
  return not isinstance(x, jax.core.Tracer)


def _as_wins(data):
  """``(wins, agent names or None)`` from comparisons, pair counts or a wins matrix."""
  from ste_jax._checks import as_float_array, check_square
  from ste_jax.data import Comparisons, PairCounts, pair_counts

  names = None
  if isinstance(data, Comparisons):
    names = data.agents
    data = pair_counts(data)
  if isinstance(data, PairCounts):
    data = data.wins
  wins = as_float_array(data, "counts_or_comparisons")
  if wins.ndim != 2:
    raise ValueError(
      f"counts_or_comparisons must be Comparisons, PairCounts or an (n, n) wins matrix; got "
      f"shape {tuple(wins.shape)} (use jax.vmap for a batch)."
    )
  check_square(wins, "counts_or_comparisons")
  return wins, names


def suggest_pairs(
  key: jax.Array,
  counts_or_comparisons: "Comparisons | PairCounts | jax.typing.ArrayLike",
  *,
  k: int = _SUGGEST.k,
  target: str = _SUGGEST.target,
  confidence: "float | jax.Array" = _SUGGEST.confidence,
  correction: str = _SUGGEST.correction,
  exclude: "jax.typing.ArrayLike | Sequence | None" = None,
  require: "jax.typing.ArrayLike | Sequence | None" = None,
  prior: float = _SUGGEST.prior,
  num_draws: int = _SUGGEST.num_draws,
  plausible_cores: jax.typing.ArrayLike | None = None,
  estimator: "TournamentEstimator | str | None" = None,
  resampling: "ResamplingSettings | None" = None,
) -> SuggestedPairs:
  """The ``k`` pairs to compare next so that the core's membership verdicts certify soonest.

  The verdicts are those of :func:`~ste_jax.evaluate.orientation_certificates` on the per-pair Beta
  posteriors (``beats[a, b] = Pr(theta_ab > 1/2)``, ``theta_ab ~ Beta(prior + w_ab, prior + w_ba)``)
  at the edge level :func:`edge_level` ``(confidence, n, correction)``, reported as ``edge_level``.
  ``confidence`` is meant for the *whole core*: by default (``correction="bonferroni"``) an edge is
  sure at ``1 - (1 - confidence) / num_pairs``, ``num_pairs = n (n - 1) / 2``, so that by the union
  bound all sure edges, hence all verdicts, are right with probability about ``confidence``. A
  per-pair level is not enough when the comparisons are chosen adaptively and collection stops at
  the first certification: a pair is no longer compared once it looks sure, so an early fluke is
  never corrected (``benchmarks/active.py`` measures how often the per-pair and the corrected
  levels certify a wrong core). ``correction="none"`` uses ``confidence``
  per pair, the level of ``ste-jax score`` and :func:`~ste_jax.evaluate.membership_verdicts`, whose
  verdicts are therefore per-pair-level (not corrected) and can differ from these. Every open pair
  (sure neither way) gets a score: the expected number of undetermined agents whose verdict it
  decides at once when it becomes sure (exact look-ahead over both orientations, weighted by their
  posterior probabilities) plus the share of plausible tournaments whose core certificate needs it
  (Thompson sampling; by default tournaments drawn from the pairs' posteriors, or the cores given as
  ``plausible_cores``); see the module docstring. ``k`` distinct pairs are drawn with inclusion
  probabilities proportional to the score (capped at 1, summing to ``k``). Once every verdict is
  certified every score is 0 and the pairs drawn (uniformly among the allowed ones, open pairs
  first) cannot change any verdict.

  Pure: ``jax.jit`` (with ``k``, ``target``, ``prior``, ``num_draws`` static) and ``jax.vmap``
  (over keys and ``(n, n)`` win matrices; masks for ``exclude`` / ``require``) work, and
  ``confidence`` may be traced.

  The keywords ``k``, ``target``, ``confidence``, ``correction``, ``prior`` and ``num_draws`` are
  the fields of :class:`SuggestSettings`, with its defaults.

  Args:
    key: PRNG key (the draw's only randomness).
    counts_or_comparisons: a :class:`~ste_jax.data.Comparisons` (ties count half a win each), a
      :class:`~ste_jax.data.PairCounts` or an ``(n, n)`` wins matrix ``wins[a, b]``.
    k: number of distinct pairs to draw (static), ``1 <= k <=`` number of allowed pairs.
    target: ``"top_cycle"`` or ``"uncovered"`` (static).
    confidence: level ``c`` in ``(0.5, 1)`` of the verdicts: the probability that the whole
      certified core is right with the default correction, per pair with ``correction="none"``.
    correction: ``"bonferroni"`` (default; edge level ``1 - (1 - c) / num_pairs``) or ``"none"``
      (edge level ``c``); static.
    exclude: pairs never to propose: ``None``, an ``(n, n)`` bool mask (either orientation
      excludes the pair) or a sequence of ``(a, b)`` pairs of indices or agent names.
    require: pairs always proposed (probability 1), in the same forms; at most ``k``.
    prior: ``alpha`` of the symmetric ``Beta(alpha, alpha)`` prior of every pair (static).
    num_draws: posterior tournaments behind the relevance term (static).
    plausible_cores: optional ``(R, n)`` boolean, the ``target`` cores of ``R`` plausible
      tournaments, used by the relevance term instead of the posterior draws: e.g. the hard cores
      of a fitted model's bootstrap replicas (``ste-jax suggest`` on data with pairs never
      compared). On sparse data the posterior of a pair never compared is a coin flip, so the
      drawn tournaments' cores hold nearly every agent and the relevance is the same for nearly
      every pair (the draw is then close to uniform); a model's replicas put it on the pairs that
      touch the agents most often on top. The verdicts and the look-ahead stay those of the
      pairs' posteriors.
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` (or a registry name) whose
      bootstrap replicas' hard ``target`` cores are the plausible cores: with
      ``k_cores, k_draw = jax.random.split(key)``, ``plausible_cores =``
      :func:`~ste_jax.evaluate.replica_cores` ``(k_cores, comparisons, estimator, resampling,
      target=target)`` and the draw uses ``k_draw``. Needs :class:`~ste_jax.data.Comparisons`
      and concrete values (not under ``jit``); exclusive with ``plausible_cores``.
    resampling: the replicas of ``estimator`` (default
      :class:`~ste_jax.evaluate.ResamplingSettings`: 200 replicas).

  Returns:
    :class:`SuggestedPairs`.

  Raises:
    ValueError: a bad ``k``, ``target``, ``confidence``, pair specification, or too few allowed
      pairs (checked when the values are concrete).

  Examples:
    >>> import jax, jax.numpy as jnp
    >>> wins = jnp.array([[0, 9, 9, 1], [0, 0, 9, 0], [0, 0, 0, 9], [0, 9, 0, 0]], jnp.float32)
    >>> s = suggest_pairs(jax.random.key(0), wins, k=2)
    >>> round(float(s.edge_level), 5)  # 1 - 0.05 / 6 pairs
    0.99167
    >>> s.verdicts().tolist(), bool(s.certified)  # 0 > 1, 2 and 1 > 2 > 3 > 1 are sure
    (['in', 'undetermined', 'undetermined', 'undetermined'], False)
    >>> s.pairs[0].tolist(), s.decides[0].tolist()  # 0 vs 3 decides 1, 2 and 3 either way
    ([0, 3], [False, True, True, True])
  """
  if target not in TARGETS:
    raise ValueError(f"target must be one of {TARGETS}, got {target!r}.")
  if estimator is not None:
    if plausible_cores is not None:
      raise ValueError("give plausible_cores or an estimator, not both.")
    if not isinstance(counts_or_comparisons, Comparisons):
      raise TypeError("suggest_pairs(estimator=...) needs Comparisons (the estimator fits them).")
    key, k_draw = jax.random.split(key)
    plausible_cores = replica_cores(
      key,
      counts_or_comparisons,
      estimator,
      ResamplingSettings() if resampling is None else resampling,
      target=target,
    )
    key = k_draw
  elif resampling is not None:
    raise ValueError("resampling configures the replicas of an estimator: give one.")
  if correction not in CORRECTIONS:
    raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}.")
  wins, names = _as_wins(counts_or_comparisons)
  n = wins.shape[-1]
  num_pairs = n * (n - 1) // 2
  if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= num_pairs:
    raise ValueError(
      f"k must be an integer in [1, {num_pairs}] (the number of pairs of {n} agents), got {k!r}."
    )
  if (
    isinstance(num_draws, bool)
    or not isinstance(num_draws, (int, np.integer))
    or int(num_draws) < 1
  ):
    raise ValueError(f"num_draws must be a positive integer, got {num_draws!r}.")
  if _is_concrete(confidence):
    from ._verdicts import _check_confidence

    confidence = _check_confidence(confidence)
  exclude = _pair_mask(exclude, n, names, "exclude")
  require = _pair_mask(require, n, names, "require")
  if _is_concrete(exclude) and _is_concrete(require):
    ex = np.asarray(exclude) | np.asarray(exclude).T
    req = (np.asarray(require) | np.asarray(require).T) & ~np.eye(n, dtype=bool)
    if np.any(ex & req):
      raise ValueError("a pair is both excluded and required.")
    num_required = int(np.triu(req, 1).sum())
    num_allowed = int(np.triu(~ex, 1).sum())
    if num_required > k:
      raise ValueError(f"{num_required} required pairs do not fit in k={k}.")
    if num_allowed < k:
      raise ValueError(
        f"only {num_allowed} pairs are not excluded; k={k} distinct pairs cannot be drawn."
      )
  if plausible_cores is not None:
    plausible_cores = jnp.asarray(plausible_cores)
    if (
      plausible_cores.ndim != 2
      or plausible_cores.shape[1] != n
      or plausible_cores.shape[0] < 1
      or plausible_cores.dtype != jnp.bool_
    ):
      raise ValueError(
        f"plausible_cores must be a boolean array of shape (R >= 1, {n}); got "
        f"{plausible_cores.dtype} {plausible_cores.shape}."
      )
  level = edge_level(jnp.asarray(confidence, wins.dtype), n, correction)
  return _suggest(
    key,
    wins,
    exclude,
    require,
    level,
    plausible_cores,
    k=int(k),
    target=target,
    num_draws=int(num_draws),
    prior=float(prior),
  )


# --------------------------------------------------------------------------------------------
# Baseline policies and the simulator


def arena_weights(wins: jax.typing.ArrayLike) -> jax.Array:
  """Pair weights of the Chatbot Arena sampling rule on a Bradley--Terry fit (its paper, Eq. 9).

  ``f(a) = sqrt(Sigma_aa / n_a) - sqrt(Sigma_aa / (n_a + 1))`` with ``Sigma`` the covariance of
  the BT scores (inverse Fisher information, shift pinned to mean zero) and ``n_a`` the number of
  comparisons of ``a``; the weight of pair ``{a, b}`` is ``f(a) + f(b)``.

  Args:
    wins: ``(n, n)`` float win counts.

  Returns:
    ``(n, n)`` symmetric nonnegative weights, zero diagonal.

  References:
    Chiang et al., "Chatbot Arena: An Open Platform for Evaluating LLMs by Human Preference",
    ICML 2024, Eq. 9.
  """
  from ste_jax.stats import bradley_terry

  n = wins.shape[-1]
  s = bradley_terry(wins).scores
  games = wins + wins.T
  p = jax.nn.sigmoid(s[:, None] - s[None, :])
  info = games * p * (1 - p)
  laplacian = jnp.diag(jnp.sum(info, axis=1)) - info
  center = jnp.full((n, n), 1.0 / n, wins.dtype)
  sigma = jnp.linalg.inv(laplacian + center) - center
  var = jnp.maximum(jnp.diagonal(sigma), jnp.zeros((n,), wins.dtype))
  count = jnp.maximum(jnp.sum(games, axis=1), jnp.ones((n,), wins.dtype))
  f = jnp.sqrt(var / count) - jnp.sqrt(var / (count + 1))
  w = f[:, None] + f[None, :]
  return jnp.where(jnp.eye(n, dtype=bool), jnp.zeros_like(w), w)


@result_type
class SimulationResult:
  """Output of :func:`simulate_certification` (batched under ``jax.vmap``).

  Attributes:
    comparisons: int32, comparisons spent (warm-up included) when the verdicts first certified,
      or at the end of the budget.
    certified: bool, the verdicts certified within the budget.
    correct: bool, the certified core is the true core (``False`` when not certified).
    core: ``(n,)`` bool, the ``in`` verdicts when the run stopped.
  """

  comparisons: jax.Array
  certified: jax.Array
  correct: jax.Array
  core: jax.Array


def true_core(P: jax.typing.ArrayLike, target: str = "top_cycle") -> jax.Array:
  """The target core of the strict majority tournament ``P > 1/2`` (``(n,)`` bool)."""
  from ste_jax import exact

  strict = P > 0.5
  return exact.reach_all(strict) if target == "top_cycle" else exact.kings_in_relation(strict)


@functools.partial(
  jax.jit, static_argnames=("policy", "k", "warmup", "target", "num_draws", "correction")
)
def simulate_certification(
  key: jax.Array,
  P: jax.typing.ArrayLike,
  *,
  policy: str,
  k: int,
  max_rounds: int,
  warmup: int = 1,
  target: str = "top_cycle",
  confidence: jax.typing.ArrayLike = 0.95,
  correction: str = "bonferroni",
  num_draws: int = 32,
) -> SimulationResult:
  """One run of an active-comparison policy against a ground-truth tournament, until certified.

  ``warmup`` games per pair are drawn from ``P`` (``wins[a, b] ~ Binomial(warmup, P[a, b])``, the
  same for every policy given ``key``); then each round the policy picks ``k`` distinct pairs, one
  game each is drawn from ``P`` and the verdicts are recomputed; the run stops when they certify
  or after ``max_rounds`` rounds. Pure and compiled once per static configuration; ``jax.vmap``
  over keys (and ``P``) runs many seeds as one computation.

  Args:
    key: PRNG key of the run.
    P: ``(n, n)`` true win probabilities.
    policy: ``"active"`` (:func:`suggest_pairs`), ``"uniform"`` (uniformly random distinct pairs)
      or ``"arena"`` (:func:`arena_weights`, pairs drawn with inclusion probabilities
      proportional to them).
    k: pairs per round (static).
    max_rounds: budget in rounds (may be traced: one compilation serves every budget).
    warmup: games per pair before the first round (static).
    target: ``"top_cycle"`` or ``"uncovered"`` (static).
    confidence: verdict level, for the whole core with the default correction (may be traced).
    correction: ``"bonferroni"`` (default) or ``"none"``, as in :func:`suggest_pairs`; every
      policy stops at the same edge level (static).
    num_draws: posterior draws of the active policy (static).

  Returns:
    :class:`SimulationResult`.
  """
  if policy not in POLICIES:
    raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}.")
  if correction not in CORRECTIONS:
    raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}.")
  n = P.shape[-1]
  rows, cols = np.triu_indices(n, k=1)
  num_pairs = rows.size
  truth = true_core(P, target)
  k_warm, k_loop = jax.random.split(key)
  w_up = jax.random.binomial(k_warm, jnp.asarray(warmup, P.dtype), P[rows, cols], dtype=P.dtype)
  wins0 = jnp.zeros((n, n), P.dtype).at[rows, cols].set(w_up).at[cols, rows].set(warmup - w_up)
  no_pairs = jnp.zeros((n, n), bool)
  none = jnp.zeros((num_pairs,), bool)
  c = jnp.asarray(confidence, P.dtype)
  level = edge_level(c, n, correction)

  def verdicts(wins):
    _, _, is_in, is_out = _certificate(posterior_beats(wins), level, target)
    return is_in, ~jnp.any(~is_in & ~is_out)

  def pick(key_r, wins):
    if policy == "active":
      s = _suggest(
        key_r, wins, no_pairs, no_pairs, level, k=k, target=target, num_draws=num_draws, prior=0.5
      )
      return s.pairs[:, 0], s.pairs[:, 1]
    if policy == "uniform":
      weight = jnp.ones((num_pairs,), P.dtype)
    else:
      weight = arena_weights(wins)[rows, cols]
    _, chosen = _draw_pairs(key_r, weight, ~none, none, ~none, k)
    return jnp.asarray(rows)[chosen], jnp.asarray(cols)[chosen]

  def cond(state):
    r, _, _, _, done = state
    return ~done & (r < max_rounds)

  def body(state):
    r, key_r, wins, _, _ = state
    key_r, k_pick, k_game = jax.random.split(key_r, 3)
    a, b = pick(k_pick, wins)
    won = jax.random.bernoulli(k_game, P[a, b]).astype(P.dtype)
    wins = wins.at[a, b].add(won).at[b, a].add(1 - won)
    core, done = verdicts(wins)
    return r + 1, key_r, wins, core, done

  core0, done0 = verdicts(wins0)
  r, _, _, core, done = lax.while_loop(
    cond, body, (jnp.zeros((), jnp.int32), k_loop, wins0, core0, done0)
  )
  comparisons = (warmup * num_pairs + k * r).astype(jnp.int32)
  return SimulationResult(comparisons, done, done & jnp.all(core == truth), core)
