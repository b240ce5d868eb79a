"""Membership verdicts: the certificate against a brute-force oracle (every tournament consistent
with the sure edges), clear-cut cases in the default suite, and (``slow``, ``make test-slow``) the
computation of ``benchmarks/verdicts.py --quick``: how often ``in`` / ``out`` verdicts at confidence
0.95 are wrong against the true hard Top Cycle and Uncovered Set of simulated data."""

import importlib.util
import itertools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import exact
from ste_jax.data import Comparisons
from ste_jax.evaluate._verdicts import (
  membership_verdicts,
  orientation_certificates,
  replica_core_candidates,
)
from tests.oracles import brute_uncovered_set, nx_top_cycle

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "verdicts.py"


def _load_script():
  spec = importlib.util.spec_from_file_location("_verdicts_script", SCRIPT)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)  # imports nothing heavy: the library loads inside the functions
  return module


def _cycle_on_top() -> np.ndarray:
  """5 agents: a 3-cycle 0 > 1 > 2 > 0 (0.8) above 3 > 4 (0.7); the top three beat the rest
  (0.9)."""
  P = np.full((5, 5), 0.5, dtype=np.float32)
  for a, b, p in ((0, 1, 0.8), (1, 2, 0.8), (2, 0, 0.8), (3, 4, 0.7)):
    P[a, b], P[b, a] = p, 1 - p
  for a in range(3):
    for b in (3, 4):
      P[a, b], P[b, a] = 0.9, 0.1
  return P


def _completions(sure):
  """Every tournament ``P`` (0/1 off the diagonal) containing the sure edges."""
  n = sure.shape[0]
  pairs = [(a, b) for a, b in itertools.combinations(range(n), 2)]
  options = [
    [(a, b)] if sure[a, b] else [(b, a)] if sure[b, a] else [(a, b), (b, a)] for a, b in pairs
  ]
  for choice in itertools.product(*options):
    P = np.full((n, n), 0.5)
    for w, l in choice:
      P[w, l], P[l, w] = 1.0, 0.0
    yield P


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_certificate_is_membership_in_every_consistent_tournament(n):
  """``in`` = member of every tournament containing the sure edges; ``out`` = member of none.

  Oracle: enumerate those tournaments (all orientations of the pairs sure neither way) and apply
  the paper's definitions by brute force (tests/oracles.py).
  """
  rng = np.random.default_rng(n)
  for _ in range(12 if n > 2 else 3):
    u = rng.uniform(size=(n, n))
    beats = np.triu(u, 1)  # a -> b with probability u, b -> a with 1 - u - (tie share)
    beats = beats + np.tril((1 - u.T) * 0.98, -1)
    beats[rng.uniform(size=(n, n)) < 0.3] = 0.0  # some pairs unobserved
    np.fill_diagonal(beats, 0.0)
    m = orientation_certificates(jnp.asarray(beats, jnp.float32), 0.8)
    sure = (beats >= 0.8) & ~np.eye(n, dtype=bool)
    tcs = np.array([nx_top_cycle(P) for P in _completions(sure)])
    ucs = np.array([brute_uncovered_set(P) for P in _completions(sure)])
    np.testing.assert_array_equal(np.asarray(m.top_cycle_in), tcs.all(axis=0))
    np.testing.assert_array_equal(np.asarray(m.top_cycle_possible), tcs.any(axis=0))
    np.testing.assert_array_equal(np.asarray(m.uncovered_in), ucs.all(axis=0))
    np.testing.assert_array_equal(np.asarray(m.uncovered_possible), ucs.any(axis=0))


def test_certificate_jits_vmaps_and_checks_input():
  beats = jax.random.uniform(jax.random.key(1), (6, 7, 7))
  conf = jnp.asarray([0.6, 0.7, 0.8, 0.9, 0.95, 0.99])
  batched = jax.jit(jax.vmap(orientation_certificates))(beats, conf)
  for i in range(6):
    one = orientation_certificates(beats[i], float(conf[i]))
    for x, y in zip(jax.tree.leaves(batched), jax.tree.leaves(one)):
      np.testing.assert_array_equal(x[i], y)
  with pytest.raises(TypeError, match="beats"):
    orientation_certificates(jnp.ones((3, 3), bool), 0.9)
  with pytest.raises(ValueError, match="beats"):
    orientation_certificates(jnp.ones((3, 4)), 0.9)


def test_membership_verdicts_clear_cases():
  # A stack of identical tournaments: every replica has the same hard cores, so p is 0 or 1.
  P = _cycle_on_top()
  v = membership_verdicts(None, jnp.stack([jnp.asarray(P)] * 10))
  assert v.top_cycle.verdict.tolist() == ["in"] * 3 + ["out"] * 2
  np.testing.assert_array_equal(v.top_cycle.probability, [1, 1, 1, 0, 0])
  uc = np.asarray(exact.uncovered_set(jnp.asarray(P)))
  assert uc.tolist() == [True] * 3 + [False] * 2
  assert v.uncovered.verdict.tolist() == ["in" if x else "out" for x in uc]
  assert v.top_cycle.num_replicas == 10 and v.top_cycle.confidence == 0.95

  # A Condorcet winner: w beats everyone, x beats y and z, y beats z, 20 games a pair, no upsets.
  a, b = [], []
  for i in range(4):
    for j in range(i + 1, 4):
      a += [i] * 20
      b += [j] * 20
  c = Comparisons.from_arrays(a, b, np.ones(len(a), dtype=np.float32), agents=list("wxyz"))
  v = membership_verdicts(jax.random.key(0), c, num_replicas=10, batch_size=None)  # posterior
  assert v.top_cycle.verdict.tolist() == ["in", "out", "out", "out"]
  assert v.uncovered.verdict.tolist() == ["in", "out", "out", "out"]
  np.testing.assert_array_equal(v.top_cycle.probability, [1, 0, 0, 0])
  assert v.top_cycle.num_replicas == 10


@pytest.mark.slow
def test_verdict_calibration_quick():
  """Wrong-verdict shares at confidence 0.95, pooled over the quick settings.

  Asserted: certified verdicts (what the leaderboard reports) are wrong in at most 5% of the
  ``in`` and of the ``out`` verdicts, for every estimator and both sets, and the model estimator
  issues many ``out`` verdicts (not vacuous). Also asserted, as the reason for the certificate: the
  earlier share-of-replicas rule gives wrong Top-Cycle ``in`` verdicts far above 5% (an upset
  between a core agent and an outsider pulls the outsider into the sample's Top Cycle, and the
  bootstrap resamples around the sample).
  """
  script = _load_script()
  lo, hi = script.wilson(3, 10)  # a textbook value: 3/10 -> [0.108, 0.603]
  assert abs(lo - 0.1078) < 1e-3 and abs(hi - 0.6032) < 1e-3
  df, checks = script.run(script.QUICK)
  league = [c for label, c in checks.items() if label.startswith("league")][0]
  assert league["padding"] is not None  # the quick league trials differ in their numbers of pairs
  assert league["padding"]["posterior"] == 0 and league["padding"]["winrate"] == 0
  assert league["padding"]["model"] < 1e-2
  summary = script.summarize(df)
  pooled = summary[summary.setting == "all settings"].set_index(["rule", "estimator", "concept"])
  assert (
    len(pooled) == 17 and (pooled.agents == pooled.agents.iloc[0]).all()
  )  # (3 + 1 + 3) x 2 sets + 3 answer (TC)
  for estimator in ("posterior", "model", "winrate"):
    for concept in ("TC", "UC"):
      r = pooled.loc[("certified", estimator, concept)]
      assert r.wrong_in <= 0.05 * r["in"], (estimator, concept, r.wrong_in, r["in"])
      assert r.wrong_out <= 0.05 * r.out, (estimator, concept, r.wrong_out, r.out)
  # Not vacuous: dense planted cores give certified verdicts both ways.
  certified = pooled.xs("certified", level="rule")
  assert certified["in"].sum() >= 10 and certified.out.sum() >= 30, certified
  for estimator in ("posterior", "winrate"):
    r = pooled.loc[("share", estimator, "TC")]
    assert r["in"] >= 50 and r.wrong_in > 0.3 * r["in"], (estimator, r.wrong_in, r["in"])


def _candidates_by_loops(m, level):
  """The definition of ``replica_core_candidates``, literally: prefixes of the agents by
  decreasing share."""
  R, n = m.shape
  p = [sum(m[r, i] for r in range(R)) / R for i in range(n)]
  order = sorted(range(n), key=lambda i: (-p[i], i))
  for k in range(n + 1):
    taken = set(order[:k])
    share = sum(all(i in taken for i in range(n) if m[r, i]) for r in range(R)) / R
    if share >= level - 1e-12:
      while 0 < k < n and p[order[k]] == p[order[k - 1]]:
        k += 1
      taken = set(order[:k])
      share = sum(all(i in taken for i in range(n) if m[r, i]) for r in range(R)) / R
      return order[:k], share
  raise AssertionError("unreachable: all agents hold every core")


@pytest.mark.parametrize("seed", range(6))
def test_core_candidates_follow_their_definition(seed):
  rng = np.random.default_rng(seed)
  R, n = int(rng.integers(1, 30)), int(rng.integers(1, 9))
  # Cores of 0-3 agents, skewed toward low indices, some replicas with an empty core.
  m = (rng.random((R, n)) < rng.uniform(0.05, 0.6, size=n)[None, :]) & (rng.random((R, 1)) < 0.9)
  for level in (0.3, 0.5, 0.9, 0.95, 1.0):
    got = replica_core_candidates(m, level)
    members, share = _candidates_by_loops(m, level)
    assert (
      got.members.tolist() == members and got.share == pytest.approx(share) and got.level == level
    )
    assert got.share >= level - 1e-12
    p = m.mean(axis=0)
    if got.members.size:  # every member is at least as often in a core as every non-member
      assert p[got.members].min() >= np.delete(p, got.members).max(initial=0.0)


def test_core_candidates_edge_cases_and_bad_input():
  assert replica_core_candidates(np.zeros((4, 3), bool), 0.95).members.size == 0
  one = replica_core_candidates(np.array([[True, False, False]] * 10), 0.95)
  assert one.members.tolist() == [0] and one.share == 1.0
  # Two agents equally often in the replicas' cores are taken together.
  tied = replica_core_candidates(np.array([[True, False], [False, True]]), 0.5)
  assert tied.members.tolist() == [0, 1] and tied.share == 1.0
  with pytest.raises(ValueError, match="memberships"):
    replica_core_candidates(np.zeros((4, 3)), 0.9)
  with pytest.raises(ValueError, match="memberships"):
    replica_core_candidates(np.zeros((0, 3), bool), 0.9)
  with pytest.raises(ValueError, match="level"):
    replica_core_candidates(np.zeros((4, 3), bool), 0.0)


def test_membership_verdicts_carry_the_candidates():
  """On a stack of tournaments: the candidates of the replicas' Top Cycles (networkx) and
  Uncovered Sets."""
  rng = np.random.default_rng(3)
  stack = []
  for _ in range(
    40
  ):  # a 3-cycle {0, 1, 2} on top of 3 > 4, with the 0-1 edge reversed in some replicas
    P = np.triu(np.ones((5, 5)), 1)
    P[0, 1], P[1, 2], P[0, 2] = rng.random() < 0.8, 1.0, 0.0
    stack.append(P + np.tril(1.0 - P.T, -1) + 0.5 * np.eye(5))
  stack = np.stack(stack)
  v = membership_verdicts(None, stack)
  tc = np.array([nx_top_cycle(P) for P in stack])
  uc = np.array([[bool(x) for x in brute_uncovered_set(P)] for P in stack])
  for got, masks in ((v.top_cycle.candidates, tc), (v.uncovered.candidates, uc)):
    want = replica_core_candidates(masks, 0.95)
    assert (
      got.members.tolist() == want.members.tolist()
      and got.share == want.share
      and got.level == 0.95
    )
  assert set(v.top_cycle.candidates.members.tolist()) <= {0, 1, 2}
