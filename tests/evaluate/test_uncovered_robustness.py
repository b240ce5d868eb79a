"""Vote robustness of Uncovered-Set membership against a brute force over all change sets."""

import itertools

import jax
import numpy as np
import pytest

from ste_jax import exact
from ste_jax.data import pair_counts
from ste_jax.evaluate import estimator_named
from ste_jax.evaluate._robustness import decisive_wins, vote_robustness
from ste_jax.evaluate._uncovered_robustness import held_uncovered_changes, uncovered_changes
from tests.evaluate.test_robustness import (
  apply_flips,
  held_after,
  held_brute_force,
  random_comparisons,
)
from tests.oracles import brute_uncovered_set


def uncovered_brute(strict):
  """(..., n) bool: the definition, vectorized: c covers a iff c > a and c > every b a beats."""
  n = strict.shape[-1]
  eye = np.eye(n, dtype=bool)
  A = strict & ~eye
  # ok[..., c, a, b]: b does not stop c from covering a
  ok = ~A[..., None, :, :] | A[..., :, None, :] | eye[:, None, :]
  covers = A & ok.all(axis=-1)
  return ~covers.any(axis=-2)


def brute_force(W, action):
  """Per agent, the fewest reversed (removed) comparisons changing its hard UC membership."""
  n = W.shape[0]
  pairs = list(itertools.combinations(range(n), 2))
  options = [[(f, g) for f in range(W[i, j] + 1) for g in range(W[j, i] + 1)] for i, j in pairs]
  combos = np.array(list(itertools.product(*options)))
  f, g = combos[..., 0], combos[..., 1]
  new = np.broadcast_to(W, (len(combos), n, n)).copy()
  rows = np.array([p[0] for p in pairs])
  cols = np.array([p[1] for p in pairs])
  if action == "reverse":
    new[:, rows, cols] += g - f
    new[:, cols, rows] += f - g
  else:
    new[:, rows, cols] -= f
    new[:, cols, rows] -= g
  cost = (f + g).sum(axis=1)
  base = uncovered_brute((W - W.T) >= 1)
  changed = uncovered_brute((new - np.swapaxes(new, -1, -2)) >= 1) != base
  out = np.full(n, -1)
  for x in range(n):
    if changed[:, x].any():
      out[x] = cost[changed[:, x]].min()
  return out, base


def check(W, action):
  got = uncovered_changes(W, action)
  expected, base = brute_force(W, action)
  np.testing.assert_array_equal(got.members, base)
  np.testing.assert_array_equal(got.upper, expected, err_msg=f"{W}\n{action}")
  np.testing.assert_array_equal(got.lower, expected)
  for x in np.flatnonzero(expected >= 0):
    assert sum(k for *_, k in got.changes[x]) == expected[x]
    after = apply_flips(W, got.changes[x], action)
    assert uncovered_brute((after - after.T) >= 1)[x] != base[x]


@pytest.mark.parametrize("action", ["reverse", "remove"])
def test_brute_force_small(action):
  rng = np.random.default_rng(0)
  for _ in range(12):
    n = int(rng.integers(3, 5))
    check(decisive_wins(pair_counts(random_comparisons(rng, n, max_votes=3))), action)


@pytest.mark.slow
@pytest.mark.parametrize("action", ["reverse", "remove"])
def test_brute_force_five_agents(action):
  rng = np.random.default_rng(1)
  for _ in range(15):
    check(decisive_wins(pair_counts(random_comparisons(rng, 5, max_votes=2))), action)


def test_oracle_and_members_match_the_library_relation():
  rng = np.random.default_rng(2)
  for name in ("winrate", "posterior"):
    for _ in range(4):
      c = random_comparisons(rng, 6, max_votes=3)
      W = decisive_wins(pair_counts(c))
      strict = (W - W.T) >= 1
      P = np.where(strict, 1.0, np.where(strict.T, 0.0, 0.5))
      np.testing.assert_array_equal(uncovered_brute(strict), brute_uncovered_set(P))
      est = estimator_named(name)
      _, uc = est.hard_memberships(est.fit(jax.random.key(0), c).edges)
      np.testing.assert_array_equal(uncovered_changes(W).members, np.asarray(uc))
      np.testing.assert_array_equal(
        uncovered_changes(W).members, np.asarray(exact.uncovered_set(P))
      )


def test_vote_robustness_reports_the_uncovered_counts():
  rng = np.random.default_rng(3)
  c = random_comparisons(rng, 4, max_votes=3)
  assert vote_robustness(c).uc_members is None
  r = vote_robustness(c, uncovered=True)
  W = decisive_wins(pair_counts(c))
  for action, field in (("reverse", "uc_flips_to_change"), ("remove", "uc_removals_to_change")):
    expected, base = brute_force(W, action)
    np.testing.assert_array_equal(getattr(r, field), expected)
    np.testing.assert_array_equal(r.uc_members, base)
  frame = r.to_frame()
  assert frame["uc_flips_to_change"].tolist() == r.uc_flips_to_change.tolist()


@pytest.mark.parametrize("action", ["reverse", "remove"])
def test_without_solver_time_the_bounds_bracket_the_minimum(action):
  rng = np.random.default_rng(4)
  for _ in range(10):
    W = decisive_wins(pair_counts(random_comparisons(rng, 4, max_votes=3)))
    got = uncovered_changes(W, action, time_limit=0.0)
    expected, base = brute_force(W, action)
    assert np.all(got.lower <= expected) and np.all(expected <= got.upper)
    for x in np.flatnonzero(expected >= 0):
      assert sum(k for *_, k in got.changes[x]) == got.upper[x]
      after = apply_flips(W, got.changes[x], action)
      assert uncovered_brute((after - after.T) >= 1)[x] != base[x]


def random_held_case(rng, n, max_votes):
  """Counts with at least one uncompared pair, and a random strict relation (often against the
  records; the uncompared pairs imputed either way or neither)."""
  c = random_comparisons(rng, n, max_votes=max_votes, min_votes=1)
  counts = pair_counts(c)
  W = decisive_wins(counts)
  observed = np.asarray(counts.totals) > 0
  i, j = rng.choice(n, size=2, replace=False)  # drop one pair: imputed
  W[i, j] = W[j, i] = 0
  observed[i, j] = observed[j, i] = False
  edge = np.zeros((n, n), dtype=bool)
  for i, j in itertools.combinations(range(n), 2):
    state = rng.choice(3, p=[0.4, 0.4, 0.2])
    edge[i, j], edge[j, i] = state == 0, state == 1
  return W, edge, observed


def check_held(W, edge, observed, action, time_limit=10.0):
  got = held_uncovered_changes(W, edge, observed, action, time_limit=time_limit)
  expected, base = held_brute_force(W, edge, observed, action, uncovered_brute, margin=1)
  np.testing.assert_array_equal(got.members, base)
  exact = time_limit > 0
  for x in range(W.shape[0]):
    if expected[x] < 0:
      assert got.upper[x] == -1 and got.changes[x] == (), (x, W, edge, action)
      continue
    if exact or base[x]:  # leaving is always exact; joining where the solver had time
      assert got.lower[x] == got.upper[x] == expected[x], (x, W, edge, action)
    else:
      assert 0 <= got.lower[x] <= expected[x] <= got.upper[x], (x, W, edge, action)
    assert sum(k for *_, k in got.changes[x]) == got.upper[x]
    after = held_after(W, edge, observed, got.changes[x], action, margin=1)
    assert uncovered_brute(after)[x] != base[x]


@pytest.mark.parametrize("action", ["reverse", "remove"])
@pytest.mark.parametrize("n, max_votes, cases", [(3, 3, 10), (4, 3, 10), (5, 2, 4)])
def test_held_relation_brute_force(action, n, max_votes, cases):
  """The model's strict relation, imputed pairs held fixed: exact against every change set."""
  rng = np.random.default_rng(10 * n + max_votes)
  for _ in range(cases):
    check_held(*random_held_case(rng, n, max_votes), action)


@pytest.mark.parametrize("action", ["reverse", "remove"])
def test_held_relation_bounds_without_solver_time(action):
  rng = np.random.default_rng(11)
  for _ in range(10):
    check_held(*random_held_case(rng, 4, 3), action, time_limit=0.0)


def test_held_relation_on_the_counts_own_relation_is_the_counts():
  """With every pair compared and the relation the counts' own, holding changes nothing."""
  rng = np.random.default_rng(12)
  for _ in range(6):
    c = random_comparisons(rng, 4, max_votes=3, min_votes=1)
    W = decisive_wins(pair_counts(c))
    for action in ("reverse", "remove"):
      held = held_uncovered_changes(W, (W - W.T) >= 1, np.ones((4, 4), dtype=bool), action)
      expected, _ = brute_force(W, action)
      np.testing.assert_array_equal(held.upper, expected)
