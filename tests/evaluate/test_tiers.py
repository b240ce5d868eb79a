"""Tier intervals against a brute force over every completion of the sure edges (networkx tiers)."""

import importlib.util
import itertools
import pathlib

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest

from ste_jax.evaluate import orientation_certificates, tier_intervals

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "tier_intervals.py"


def _tiers_networkx(T: np.ndarray) -> np.ndarray:
  """Tiers of a complete relation: position of the component in the condensation's order."""
  g = nx.DiGraph()
  g.add_nodes_from(range(len(T)))
  g.add_edges_from(zip(*np.nonzero(T)))
  cond = nx.condensation(g)
  order = list(nx.topological_sort(cond))
  tier = np.empty(len(T), dtype=int)
  for position, c in enumerate(order, start=1):
    tier[list(cond.nodes[c]["members"])] = position
  return tier


def _completions(sure: np.ndarray, ties: bool):
  """Every complete relation between the sure and the possible edges."""
  n = len(sure)
  undecided = [(a, b) for a in range(n) for b in range(a + 1, n) if not sure[a, b] | sure[b, a]]
  states = ((1, 0), (0, 1), (1, 1)) if ties else ((1, 0), (0, 1))
  for choice in itertools.product(states, repeat=len(undecided)):
    T = sure.copy()
    for (a, b), (ab, ba) in zip(undecided, choice):
      T[a, b], T[b, a] = ab, ba
    yield T


def _random_beats(rng, n: int, num_undecided: int) -> np.ndarray:
  """A strict random tournament's sure edges (0.99) with ``num_undecided`` pairs left open."""
  beats = np.zeros((n, n))
  pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
  open_ = set(rng.choice(len(pairs), size=min(num_undecided, len(pairs)), replace=False).tolist())
  for k, (a, b) in enumerate(pairs):
    p = rng.uniform(0.3, 0.7) if k in open_ else (0.99 if rng.random() < 0.5 else 0.01)
    beats[a, b], beats[b, a] = p, 1 - p
  return beats


@pytest.mark.parametrize("ties", [False, True])
def test_intervals_equal_brute_force_over_completions(ties):
  rng = np.random.default_rng(0)
  for trial in range(40):
    n = int(rng.integers(2, 7))
    beats = _random_beats(rng, n, int(rng.integers(0, 6)))
    sure = beats >= 0.95
    np.fill_diagonal(sure, False)
    tiers = np.array([_tiers_networkx(T) for T in _completions(sure, ties)])
    got = tier_intervals(jnp.asarray(beats), 0.95, ties=ties)
    np.testing.assert_array_equal(np.asarray(got.best), tiers.min(axis=0), err_msg=f"{trial}")
    np.testing.assert_array_equal(np.asarray(got.worst), tiers.max(axis=0), err_msg=f"{trial}")
    always_above = np.all(tiers[:, :, None] < tiers[:, None, :], axis=0)
    np.testing.assert_array_equal(np.asarray(got.above), always_above, err_msg=f"{trial}")
    np.testing.assert_array_equal(np.asarray(got.top_group), tiers.min(axis=0) == 1)


def test_tier_one_matches_the_top_cycle_verdicts():
  rng = np.random.default_rng(1)
  beats = jnp.asarray(np.stack([_random_beats(rng, 7, 6) for _ in range(20)]))
  got = jax.jit(jax.vmap(lambda b: tier_intervals(b, 0.95)))(beats)
  cert = orientation_certificates(beats, 0.95)
  np.testing.assert_array_equal(np.asarray(got.worst == 1), np.asarray(cert.top_cycle_in))
  np.testing.assert_array_equal(np.asarray(got.best == 1), np.asarray(cert.top_cycle_possible))
  assert bool(jnp.all(got.best <= got.worst))


def test_rejects_integer_beats():
  with pytest.raises(TypeError, match="beats"):
    tier_intervals(jnp.zeros((3, 3), jnp.int32), 0.95)


@pytest.mark.slow
def test_intervals_hold_the_true_tier_at_the_stated_rate():
  """``benchmarks/tier_intervals.py --quick``: per setting and estimator, the share of agents whose
  true tier lies in its interval is not significantly below the confidence (Wilson upper bound),
  and the certified top group holds the true Top Cycle at least as often."""
  spec = importlib.util.spec_from_file_location("_tier_script", SCRIPT)
  script = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(script)
  for row in script.run(quick=True):
    assert row["cover_ci"][1] >= script.CONFIDENCE, row
    assert row["top"] >= script.CONFIDENCE, row
