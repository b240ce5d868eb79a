"""Membership verdicts: clear-cut cases in the default suite, and (``slow``, ``make test-slow``) the
computation of ``benchmarks/verdicts.py --quick``: how often ``in`` / ``out`` verdicts at confidence
0.95 are wrong against the true hard Top Cycle and Uncovered Set of simulated data."""

import importlib.util
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import exact
from ste_jax.data import Comparisons
from ste_jax.evaluate._verdicts import membership_verdicts

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "verdicts.py"


def _load_script():
  spec = importlib.util.spec_from_file_location("_verdicts_script", SCRIPT)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)  # imports nothing heavy: the library loads inside the functions
  return module


def _cycle_on_top() -> np.ndarray:
  """5 agents: a 3-cycle 0 > 1 > 2 > 0 (0.8) above 3 > 4 (0.7); the top three beat the rest (0.9)."""
  P = np.full((5, 5), 0.5, dtype=np.float32)
  for a, b, p in ((0, 1, 0.8), (1, 2, 0.8), (2, 0, 0.8), (3, 4, 0.7)):
    P[a, b], P[b, a] = p, 1 - p
  for a in range(3):
    for b in (3, 4):
      P[a, b], P[b, a] = 0.9, 0.1
  return P


def test_membership_verdicts_clear_cases():
  # A stack of identical tournaments: every replica has the same hard cores, so p is 0 or 1.
  P = _cycle_on_top()
  v = membership_verdicts(jnp.stack([jnp.asarray(P)] * 10))
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
  v = membership_verdicts(c, num_replicas=10, key=jax.random.key(0), batch_size=None)  # auto: posterior
  assert v.top_cycle.verdict.tolist() == ["in", "out", "out", "out"]
  assert v.uncovered.verdict.tolist() == ["in", "out", "out", "out"]
  np.testing.assert_array_equal(v.top_cycle.probability, [1, 0, 0, 0])
  assert v.top_cycle.num_replicas == 10


@pytest.mark.slow
def test_verdict_calibration_quick():
  """Wrong-verdict shares at confidence 0.95, pooled over the quick settings, for what holds.

  Asserted (<= 5% pooled over settings): wrong ``out`` for the model estimator's Top Cycle and
  Uncovered Set and for the posterior estimator's Uncovered Set; wrong ``in`` for the model
  estimator's Uncovered Set (rarely issued). Not asserted because it does not hold (full run of
  ``python benchmarks/verdicts.py`` at commit 89328cb, 280 data sets, pooled): wrong ``in`` for
  the hard Top Cycle (posterior 0.61, model 0.54) and for the posterior Uncovered Set (0.52), and
  wrong ``out`` for the posterior Top Cycle (0.059). The hard Top Cycle of a sample (and of its bootstrap
  replicas) grows with every upset between a core agent and an outsider, so ``in`` verdicts for
  it are far from calibrated at small ``m``; with missing pairs the posterior estimator has no
  edge on them, so its hard cores are those of a partial relation, not of the true ``P``. The
  pooled model shares also hide settings above 5%: wrong ``out`` 0.12 for both sets at ``m = 5,
  mu = 0.3``, 0.13 (Top Cycle) and 0.07 (Uncovered Set) at ``m = 50, mu = 0.3``, 0.09 (Top Cycle)
  at ``m = 10, mu = 0.3`` and 0.08-0.09 for both at ``m = 5, mu = 0``.
  """
  script = _load_script()
  lo, hi = script.wilson(3, 10)  # a textbook value: 3/10 -> [0.108, 0.603]
  assert abs(lo - 0.1078) < 1e-3 and abs(hi - 0.6032) < 1e-3
  df, checks = script.run(script.QUICK)
  # The benchmark's compiled driver reproduces bootstrap_hard_memberships: exactly for the count-based
  # estimators; for the model up to a few replicas whose refits end elsewhere under other rounding.
  assert sorted(label.split()[0] for label in checks) == ["league", "planted"]
  for label, check in checks.items():
    for name, (differ, total, verdicts) in check["driver"].items():
      assert total > 0, (label, name)
      if name == "model":
        assert differ <= 0.1 * total and verdicts <= 2, (label, name, differ, total, verdicts)
      else:
        assert differ == 0 and verdicts == 0, (label, name, differ, total, verdicts)
  league = [c for label, c in checks.items() if label.startswith("league")][0]
  assert league["padding"] is not None  # the quick league trials differ in their numbers of pairs
  assert league["padding"]["posterior"] == 0 and league["padding"]["winrate"] == 0
  assert league["padding"]["model"] < 1e-2
  summary = script.summarize(df)
  pooled = summary[summary.setting == "all settings"].set_index(["estimator", "concept"])
  assert len(pooled) == 6 and (pooled.agents == pooled.agents.iloc[0]).all()

  def wrong(estimator, concept, verdict):
    r = pooled.loc[(estimator, concept)]
    return r[f"wrong_{verdict}"], r[verdict]

  for estimator, concept, verdict in (("model", "TC", "out"), ("model", "UC", "out"), ("model", "UC", "in"),
                                      ("posterior", "UC", "out")):
    k, total = wrong(estimator, concept, verdict)
    assert k <= 0.05 * total, (estimator, concept, verdict, k, total)
  for estimator, concept in (("model", "TC"), ("model", "UC")):  # not vacuous: many out verdicts
    assert wrong(estimator, concept, "out")[1] >= 100
