"""Membership verdicts at a stated confidence: certified from the edges' resampling distribution.

A verdict says whether an agent is in the Top Cycle (or Uncovered Set) of the *true* tournament,
the one the comparisons were drawn from. It is derived from ``beats[a, b]``, the share of resampled
tournaments (bootstrap replicas, or draws from a posterior) whose strict hard relation has
``a -> b``, in two relations at confidence ``c``:

* *sure* edges ``a -> b`` with ``beats[a, b] >= c``;
* *possible* edges ``a -> b`` unless ``b -> a`` is sure (every pair is possible at least one way).

If every sure edge is a true edge, the true (strict) tournament lies between the two relations, and
since "reaches everyone" (Top Cycle) and "reaches everyone in two steps" (a king: the Uncovered
Set of a tournament) only grow with edges (:func:`~ste_jax.exact.reach_all`,
:func:`~ste_jax.exact.kings_in_relation`):

* ``"in"``: the agent reaches every agent through *sure* edges (in two steps for the Uncovered Set),
  so it does in the true tournament;
* ``"out"``: it does not reach every agent even through *possible* edges, so it does not in the
  true tournament;
* ``"undetermined"`` otherwise.

An ``in`` verdict is thus backed by a path of confidently oriented edges to every other agent, an
``out`` verdict by a group of agents that confidently beats everybody outside it (the agent
included). A pair never compared is sure neither way, for every estimator: it blocks ``in``
verdicts through it and keeps ``out`` verdicts open. The model estimator predicts such pairs, and
its bootstrap refits agree on the prediction, but the agreement measures sampling noise, not
whether the model's structure (Bradley-Terry plus a low-rank cyclic term) is right for pairs it has
never seen: on planted cores with pairs missing, the model's wrong sure edges are imputed ones,
and certifying with them makes Top-Cycle ``in`` verdicts wrong (``benchmarks/verdicts.py``, rule
``certified+imputed``, measures how often). So
imputed orientations certify nothing unless asked for (``observed=None`` here,
``certify_imputed=True`` in the leaderboard, ``--certify-imputed`` on the command line), while the
model still sharpens the observed pairs (a pair with one game, between agents whose other results
are far apart, can be sure).

Why not threshold the share of replicas whose hard core holds the agent (the ``p_tc`` / ``p_uc``
columns, kept as descriptive figures)? Because it is not calibrated: an upset between a core
agent and an outsider in the sample pulls the outsider into the sample's Top Cycle, and the
bootstrap resamples around the sample, so such Top-Cycle ``in`` verdicts are wrong far more often
than ``1 - confidence`` (``benchmarks/verdicts.py``). How often the certified verdicts are wrong
on simulated data with a known core is measured by the same script; the figures are in
``benchmarks/RESULTS.md``.
"""

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax import exact
from ste_jax._checks import check_square
from ste_jax._results import result_type
from ste_jax.data import Comparisons, pair_counts
from ste_jax.evaluate._estimators import WinRateEstimator, fit_estimator
from ste_jax.evaluate._protocol import TournamentEstimator
from ste_jax.evaluate._replicas import ResamplingSettings, bootstrap_hard_memberships

VERDICTS = ("in", "out", "undetermined")


def _check_confidence(confidence) -> float:
  try:
    c = float(confidence)
  except (TypeError, ValueError):
    raise ValueError(f"confidence must be a number in (0.5, 1), got {confidence!r}.") from None
  if not 0.5 < c < 1:
    raise ValueError(f"confidence must be in (0.5, 1), got {confidence!r}.")
  return c


@result_type
class OrientationCertificates:
  """Certified memberships of :func:`orientation_certificates` (each Boolean ``(..., n)``).

  Attributes:
    top_cycle_in: reaches every agent through sure edges (verdict ``in``).
    top_cycle_possible: reaches every agent through possible edges (``False``: verdict ``out``).
    uncovered_in: reaches every agent in at most two sure edges (verdict ``in``).
    uncovered_possible: the same through possible edges (``False``: verdict ``out``).
  """

  top_cycle_in: jax.Array
  top_cycle_possible: jax.Array
  uncovered_in: jax.Array
  uncovered_possible: jax.Array


def orientation_certificates(
  beats: jax.typing.ArrayLike, confidence: jax.typing.ArrayLike
) -> OrientationCertificates:
  """Top-Cycle and Uncovered-Set certificates at ``confidence`` from edge-orientation probabilities.

  Sure edges are ``beats[a, b] >= confidence``; possible edges are all pairs whose reverse is not
  sure. ``in`` = reaching everyone through sure edges (within two steps for the Uncovered Set),
  ``out`` = not reaching everyone through possible edges (see the module docstring for why this is
  sound whenever the sure edges are true edges). Pure: jit, vmap (e.g. over simulated runs) and
  traced ``confidence`` work.

  Args:
    beats: ``(..., n, n)`` floating, the probability (or share of resampled tournaments) that ``a``
      beats ``b`` in the strict majority relation; ``beats + beats^T <= 1`` (the rest is ties).
      The diagonal is ignored.
    confidence: level ``c`` in ``(0.5, 1)`` (scalar, may be traced).

  Returns:
    :class:`OrientationCertificates`; ``top_cycle_in`` implies ``top_cycle_possible`` (same for the
    Uncovered Set).

  Examples:
    >>> import jax.numpy as jnp
    >>> beats = jnp.array([[0.0, 0.99, 0.99], [0.01, 0.0, 0.6], [0.01, 0.4, 0.0]])
    >>> m = orientation_certificates(beats, 0.95)  # 0 surely beats 1 and 2; 1 vs 2 is open
    >>> m.top_cycle_in.tolist(), m.top_cycle_possible.tolist()
    ([True, False, False], [True, False, False])
  """
  beats = jnp.asarray(beats)
  if not jnp.issubdtype(beats.dtype, jnp.floating):
    raise TypeError(
      f"beats must be a floating array of orientation probabilities, got dtype {beats.dtype}."
    )
  check_square(beats, "beats")
  sure = beats >= jnp.asarray(confidence, beats.dtype)
  possible = ~jnp.swapaxes(sure, -1, -2)
  return OrientationCertificates(
    exact.reach_all(sure),
    exact.reach_all(possible),
    exact.kings_in_relation(sure),
    exact.kings_in_relation(possible),
  )


def certificate_labels(is_in: jax.typing.ArrayLike, possible: jax.typing.ArrayLike) -> np.ndarray:
  """``"in"`` where ``is_in``, ``"out"`` where not ``possible``, else ``"undetermined"``."""
  is_in, possible = np.asarray(is_in, dtype=bool), np.asarray(possible, dtype=bool)
  out = np.full(is_in.shape, "undetermined", dtype=object)
  out[is_in] = "in"
  out[~possible] = "out"
  return out


@result_type
class ReplicaCoreCandidates:
  """The agents most often in the replicas' hard cores: see :func:`replica_core_candidates`.

  Attributes:
    members: ``(k,)`` agent indices, by decreasing share of replicas whose core holds them.
    share: the share of replicas whose whole hard core is among ``members`` (``>= level``).
    level: the level asked for.
  """

  members: np.ndarray
  share: float
  level: float


def replica_core_candidates(
  memberships: jax.typing.ArrayLike, level: float
) -> ReplicaCoreCandidates:
  """The fewest agents, by decreasing share, that hold the whole core of ``level`` of the replicas.

  Agents are ordered by ``p_i``, the share of replicas whose hard core holds agent ``i`` (ties by
  index), and taken in that order until the taken set contains the *whole* core of at least a
  share ``level`` of the replicas; agents with the same ``p_i > 0`` as the last one taken are
  taken too, so the set does not depend on the agents' order. Where every replica's core is
  empty, the set is empty.

  This is a statement about the replicas, not a confidence set for the true core: the bootstrap
  resamples around the sample, so its coverage of the true core is measured, not promised
  (``benchmarks/sparse_candidates.py``). Its use is on sparse data, where the certified verdicts
  are all ``undetermined`` and the point estimate's core is one agent among many that the
  data cannot tell apart: it narrows the field to the agents worth comparing.

  Args:
    memberships: ``(R, n)`` boolean hard-core membership of ``R >= 1`` replicas.
    level: share in ``(0, 1]``.

  Returns:
    :class:`ReplicaCoreCandidates`.
  """
  m = np.asarray(memberships)
  if m.ndim != 2 or m.dtype != bool or m.shape[0] < 1:
    raise ValueError(
      f"memberships must be a boolean array of shape (num_replicas >= 1, n); got {m.dtype} "
      f"{m.shape}."
    )
  level = float(level)
  if not 0.0 < level <= 1.0:
    raise ValueError(f"level must be in (0, 1], got {level}.")
  p = m.mean(axis=0)
  order = np.argsort(-p, kind="stable")
  position = np.empty(m.shape[1], dtype=np.int64)
  position[order] = np.arange(m.shape[1])
  # A replica's core is inside the first k agents iff its last member (in that order) is before k.
  last = np.where(m, position[None, :], -1).max(axis=1)
  covered = (
    np.cumsum(np.bincount(last + 1, minlength=m.shape[1] + 1)) / m.shape[0]
  )  # [k]: share with last < k
  k = int(np.argmax(covered >= level - 1e-12))
  if k > 0:
    k = int(np.searchsorted(-p[order], -p[order[k - 1]], side="right"))
  return ReplicaCoreCandidates(order[:k], float(covered[k]), level)


@dataclasses.dataclass(frozen=True)
class ConceptVerdicts:
  """The verdicts of one solution concept (the Top Cycle or the Uncovered Set).

  Attributes:
    probability: ``(n,)`` share of replicas whose hard core holds the agent (descriptive; the
      verdict does not threshold it, see the module docstring).
    verdict: ``(n,)`` object array of ``"in"``, ``"out"`` or ``"undetermined"`` (certified).
    confidence: the confidence level used.
    num_replicas: number of replicas behind ``probability`` and the edge orientations.
    candidates: :class:`ReplicaCoreCandidates` at level ``confidence``.
  """

  probability: np.ndarray
  verdict: np.ndarray
  confidence: float
  num_replicas: int
  candidates: ReplicaCoreCandidates


@dataclasses.dataclass(frozen=True)
class MembershipVerdicts:
  """The Top-Cycle and Uncovered-Set :class:`ConceptVerdicts` of the same replicas.

  Attributes:
    top_cycle, uncovered: :class:`ConceptVerdicts`.
    beats: ``(n, n)`` share of replicas with the strict edge ``a -> b``.
  """

  top_cycle: ConceptVerdicts
  uncovered: ConceptVerdicts
  beats: np.ndarray


def verdicts_from_replicas(
  top_cycle: jax.typing.ArrayLike,
  uncovered: jax.typing.ArrayLike,
  beats: jax.typing.ArrayLike,
  *,
  confidence: float = 0.95,
  observed: jax.typing.ArrayLike | None = None,
) -> MembershipVerdicts:
  """Verdicts from replicas' hard memberships and their edge orientations.

  Args:
    top_cycle: ``(R, n)`` boolean hard Top-Cycle membership of ``R`` replicas.
    uncovered: ``(R, n)`` boolean hard Uncovered-Set membership.
    beats: ``(n, n)`` share of the replicas with the strict edge ``a -> b``.
    confidence: level ``c`` in ``(0.5, 1)``.
    observed: optional ``(n, n)`` boolean, the pairs compared at least once; the others are sure
      neither way (their orientation is the model's imputation, not evidence). ``None``: use
      ``beats`` as given.

  Returns:
    :class:`MembershipVerdicts` (``beats`` as used, i.e. zero on unobserved pairs when masked).
  """
  c = _check_confidence(confidence)
  ms = []
  for name, m in (("top_cycle", top_cycle), ("uncovered", uncovered)):
    m = np.asarray(m)
    if m.ndim != 2 or m.dtype != bool:
      raise ValueError(
        f"{name} must be a boolean array of shape (num_replicas, n); got {m.dtype} {m.shape}."
      )
    ms.append(m)
  beats = np.asarray(beats, dtype=np.float64)
  n = ms[0].shape[1]
  if beats.shape != (n, n) or ms[1].shape != ms[0].shape:
    raise ValueError(
      f"beats must be ({n}, {n}) and the memberships of equal shapes; got {beats.shape}, "
      f"{ms[0].shape}, {ms[1].shape}."
    )
  if observed is not None:
    observed = np.asarray(observed, dtype=bool)
    if observed.shape != (n, n):
      raise ValueError(f"observed must be a ({n}, {n}) boolean mask, got shape {observed.shape}.")
    beats = np.where(observed, beats, 0.0)
  cert = orientation_certificates(jnp.asarray(beats), c)
  out = [
    ConceptVerdicts(
      m.mean(axis=0),
      certificate_labels(is_in, possible),
      c,
      int(m.shape[0]),
      replica_core_candidates(m, c),
    )
    for m, is_in, possible in (
      (ms[0], cert.top_cycle_in, cert.top_cycle_possible),
      (ms[1], cert.uncovered_in, cert.uncovered_possible),
    )
  ]
  return MembershipVerdicts(*out, beats)


@jax.jit
def _stack_memberships(P):
  """Hard cores (ties both ways) and orientation shares of a ``(R, n, n)`` stack (compiled)."""
  relation = WinRateEstimator()  # strict P > 1/2, ties both ways in the weak relation
  tc, uc = jax.vmap(relation.hard_memberships)(P)
  _, strict = relation.hard_relations(P)
  return tc, uc, jnp.mean(strict, axis=0, dtype=P.dtype)


def membership_verdicts(
  key: jax.Array | None,
  data: "Comparisons | jax.typing.ArrayLike",
  estimator: "str | TournamentEstimator" = "auto",
  *,
  confidence: float = 0.95,
  settings: ResamplingSettings | None = None,
  **options: Any,
) -> MembershipVerdicts:
  """Per-agent Top-Cycle and Uncovered-Set verdicts (``in`` / ``out`` / ``undetermined``).

  Args:
    data: one of

    key: PRNG key of the estimator's fit and the bootstrap (comparisons; ``None`` for a stack).
    data: one of

      * a :class:`~ste_jax.data.Comparisons`: the estimator's edges are bootstrapped
        (``num_replicas`` replicas: by default outcomes redrawn from the fitted model and the model
        refitted for the model estimator, Poisson replicas over unit comparisons otherwise);
      * a ``(R, n, n)`` stack of resampled tournaments ``P`` (e.g. draws from your own posterior):
        strict edges ``P > 1/2``; hard cores with ties counted both ways;
    estimator: a :class:`~ste_jax.evaluate.TournamentEstimator` or a registry name
      (comparisons only).
    confidence: level ``c`` in ``(0.5, 1)``.
    settings: :class:`~ste_jax.evaluate.ResamplingSettings` (comparisons only; its
      ``confidence`` is replaced by ``confidence``).
    **options: fields of :class:`~ste_jax.evaluate.ResamplingSettings` (``num_replicas``,
      ``resampling``, ``certify_imputed``, ``batch_size``; comparisons only).

  Returns:
    :class:`MembershipVerdicts`: verdicts certified from the replicas' edge orientations
    (:func:`orientation_certificates`), with the share of replicas whose hard core holds each agent.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.6], [0.1, 0.4, 0.5]])
    >>> v = membership_verdicts(None, jnp.stack([P] * 20))
    >>> v.top_cycle.verdict.tolist()
    ['in', 'out', 'out']
  """
  if isinstance(data, Comparisons):
    if key is None:
      raise ValueError("key must be a PRNG key when data are comparisons (it draws replicas).")
    s = dataclasses.replace(settings or ResamplingSettings(), confidence=confidence, **options)
    est, _, fitted, k_boot = fit_estimator(key, data, estimator)
    boot = bootstrap_hard_memberships(
      k_boot,
      data,
      est,
      fitted,
      num_replicas=s.num_replicas,
      batch_size=s.batch_size,
      resampling=s.resampling,
    )
    observed = None if s.certify_imputed else np.asarray(pair_counts(data).totals) > 0
    return verdicts_from_replicas(
      boot.top_cycle, boot.uncovered, boot.beats, confidence=s.confidence, observed=observed
    )
  if options or settings is not None:
    raise TypeError("a stack of tournaments takes no resampling settings: it is the replicas.")
  P = jnp.asarray(data)
  if P.ndim != 3 or P.shape[-1] != P.shape[-2]:
    raise ValueError(
      f"data must be Comparisons or a (R, n, n) stack of tournaments; got shape {tuple(P.shape)}."
    )
  if not jnp.issubdtype(P.dtype, jnp.floating):
    raise TypeError(f"data must be a floating (R, n, n) stack of tournaments, got dtype {P.dtype}.")
  tc, uc, beats = _stack_memberships(P)
  return verdicts_from_replicas(
    np.asarray(tc), np.asarray(uc), np.asarray(beats), confidence=confidence
  )
