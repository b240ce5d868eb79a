"""Membership verdicts at a stated confidence, from the resampling distribution of hard membership.

For each agent, ``p = `` the share of resampled tournaments (bootstrap replicas) whose hard Top
Cycle (or Uncovered Set) contains it. The verdict at confidence ``c`` is

* ``"in"`` when ``p >= c``, ``"out"`` when ``p <= 1 - c``, ``"undetermined"`` otherwise.

This is a percentile-bootstrap decision rule, and it is **not calibrated for every set and
estimator**: ``benchmarks/verdicts.py`` measures how often verdicts at 0.95 are wrong on simulated
data with a known core (planted cores, n = 20, |C| = 5, m = 5-50 games per pair, 0 or 30 % of pairs
missing; sparse 60-agent leagues with a 3-cycle on top; table in ``benchmarks/RESULTS.md``). In
that run, ``out`` verdicts were wrong in 0.1-5.9 % of cases pooled over all settings (Top Cycle
and Uncovered Set, model and posterior estimators; up to 13 % in single settings),
Uncovered-Set ``in`` verdicts of the model estimator never (0 of 62), but **Top-Cycle ``in`` verdicts were wrong in about half of the cases**
(every upset between a core agent and an outsider pulls the outsider into the sample's Top Cycle,
and the bootstrap resamples around the sample), and Uncovered-Set ``in`` verdicts of the posterior
estimator in about half of them when pairs are missing. Read ``in`` as "in the core of the
estimated tournament in nearly every replica", not as a calibrated probability of true membership.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

VERDICTS = ("in", "out", "undetermined")


def _check_confidence(confidence) -> float:
  try:
    c = float(confidence)
  except (TypeError, ValueError):
    raise ValueError(f"confidence must be a number in (0.5, 1), got {confidence!r}.") from None
  if not 0.5 < c < 1:
    raise ValueError(f"confidence must be in (0.5, 1), got {confidence!r}.")
  return c


def verdict_labels(probability, confidence: float) -> np.ndarray:
  """``"in"`` / ``"out"`` / ``"undetermined"`` per entry of ``probability`` (NumPy object array)."""
  c = _check_confidence(confidence)
  p = np.asarray(probability, dtype=np.float64)
  # A small slack keeps p = 0.95 exactly (e.g. 190 of 200 replicas) an "in" at confidence 0.95.
  eps = 1e-9
  out = np.full(p.shape, "undetermined", dtype=object)
  out[p >= c - eps] = "in"
  out[p <= 1 - c + eps] = "out"
  return out


@dataclasses.dataclass(frozen=True)
class Verdicts:
  """Verdicts for one solution concept.

  Attributes:
    probability: ``(n,)`` share of replicas in which the agent is a member.
    verdict: ``(n,)`` object array of ``"in"``, ``"out"`` or ``"undetermined"``.
    confidence: the confidence level used.
    num_replicas: number of replicas behind ``probability``.
  """

  probability: np.ndarray
  verdict: np.ndarray
  confidence: float
  num_replicas: int


@dataclasses.dataclass(frozen=True)
class MembershipVerdicts:
  """Top-Cycle and Uncovered-Set :class:`Verdicts` of the same replicas."""

  top_cycle: Verdicts
  uncovered: Verdicts


def verdicts_from_memberships(top_cycle, uncovered, *, confidence: float = 0.95) -> MembershipVerdicts:
  """Verdicts from stacked hard memberships.

  Args:
    top_cycle: ``(R, n)`` boolean hard Top-Cycle membership of ``R`` replicas.
    uncovered: ``(R, n)`` boolean hard Uncovered-Set membership.
    confidence: level ``c`` in ``(0.5, 1)``.

  Returns:
    :class:`MembershipVerdicts`.
  """
  c = _check_confidence(confidence)
  out = []
  for name, m in (("top_cycle", top_cycle), ("uncovered", uncovered)):
    m = np.asarray(m)
    if m.ndim != 2 or m.dtype != bool:
      raise ValueError(f"{name} must be a boolean array of shape (num_replicas, n); got {m.dtype} {m.shape}.")
    p = m.mean(axis=0)
    out.append(Verdicts(p, verdict_labels(p, c), c, int(m.shape[0])))
  return MembershipVerdicts(*out)


@jax.jit
def _stack_memberships(P):
  """Hard Top Cycle and Uncovered Set of a ``(R, n, n)`` stack (ties both ways), compiled once per shape."""
  from ste_jax.evaluate._estimators import hard_memberships

  return jax.vmap(lambda p: hard_memberships(p, "winrate"))(P)


def membership_verdicts(data, *, confidence: float = 0.95, estimator: str = "auto", num_replicas: int = 200,
                        key=None, batch_size: int | None = 8) -> MembershipVerdicts:
  """Per-agent Top-Cycle and Uncovered-Set verdicts (``in`` / ``out`` / ``undetermined``).

  Args:
    data: one of

      * a :class:`~ste_jax.data.Comparisons`: the estimator's edges are bootstrapped
        (``num_replicas`` multinomial replicas, refits for the model estimator) and each replica's
        hard core computed;
      * a ``(R, n, n)`` stack of resampled tournaments ``P`` (e.g. from your own posterior
        sampler): hard relation ``P > 1/2`` with ties counted both ways;
    confidence: level ``c`` in ``(0.5, 1)``.
    estimator: ``"auto"``, ``"posterior"``, ``"winrate"`` or ``"model"`` (comparisons only).
    num_replicas: bootstrap replicas (comparisons only).
    key: PRNG key (default ``jax.random.key(0)``).
    batch_size: replicas per compiled batch (memory bound; comparisons only).

  Returns:
    :class:`MembershipVerdicts` (probabilities and verdicts for both solutions).

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.6], [0.1, 0.4, 0.5]])
    >>> v = membership_verdicts(jnp.stack([P] * 20))
    >>> v.top_cycle.verdict.tolist()
    ['in', 'out', 'out']
  """
  from ste_jax.data import Comparisons
  from ste_jax.evaluate import _estimators

  if isinstance(data, Comparisons):
    from ste_jax.evaluate._leaderboard import bootstrap_hard_memberships

    name, _ = _estimators.resolve_estimator(estimator, data)
    key = jax.random.key(0) if key is None else key
    k_fit, k_boot = jax.random.split(key)
    est = _estimators.build_estimator(name, data, key=k_fit)
    tc, uc = bootstrap_hard_memberships(k_boot, data, est, num_replicas=num_replicas, batch_size=batch_size)
    return verdicts_from_memberships(tc, uc, confidence=confidence)
  P = jnp.asarray(data)
  if P.ndim != 3 or P.shape[-1] != P.shape[-2]:
    raise ValueError(f"data must be Comparisons or a (R, n, n) stack of tournaments; got shape {tuple(P.shape)}.")
  tc, uc = _stack_memberships(P)
  return verdicts_from_memberships(np.asarray(tc), np.asarray(uc), confidence=confidence)
