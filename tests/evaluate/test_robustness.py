"""Vote robustness of Top-Cycle membership against brute force and networkx oracles."""

import itertools

import jax
import networkx as nx
import numpy as np
import pytest

from ste_jax import InputError, OptionError
from ste_jax.data import Comparisons, pair_counts
from ste_jax.evaluate import PosteriorEdgeEstimator, WinRateEstimator
from ste_jax.evaluate._robustness import decisive_wins, vote_robustness

THRESHOLD = {"winrate": 0, "posterior": 1}


def random_comparisons(rng, n, max_votes, p_tie=0.25, min_votes=0):
  a, b, o = [], [], []
  for i, j in itertools.combinations(range(n), 2):
    for _ in range(rng.integers(min_votes, max_votes + 1)):
      a.append(i)
      b.append(j)
      o.append(0.5 if rng.random() < p_tie else float(rng.integers(0, 2)))
  if not a:  # at least one row
    a, b, o = [0], [1], [1.0]
  return Comparisons.from_arrays(a, b, o, agents=[f"m{i}" for i in range(n)])


def reach_all(edge):
  """(..., n) bool: agents reaching every agent, by repeated squaring of the closure."""
  n = edge.shape[-1]
  reach = edge | np.eye(n, dtype=bool)
  for _ in range(int(np.ceil(np.log2(max(n, 2))))):
    reach = np.einsum("...ij,...jk->...ik", reach.astype(np.int32), reach.astype(np.int32)) > 0
  return reach.all(axis=-1)


ACTIONS = {"reverse": ("flips_to_change", "flips"), "remove": ("removals_to_change", "removals")}


def relation(W, estimator):
  return (W - np.swapaxes(W, -1, -2)) >= THRESHOLD[estimator]


def brute_force(W, estimator, action="reverse"):
  """Per agent, the fewest reversed (removed) comparisons changing its membership (-1: none), by
  enumerating every set of them: per pair, how many of each side's wins are reversed (removed).
  Removing ties is left out: it changes no margin and only adds to the count."""
  n = W.shape[0]
  pairs = list(itertools.combinations(range(n), 2))
  options = [[(f, g) for f in range(W[i, j] + 1) for g in range(W[j, i] + 1)] for i, j in pairs]
  combos = np.array(list(itertools.product(*options)))  # (K, pairs, 2)
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
  base = reach_all(relation(W, estimator))
  changed = reach_all(relation(new, estimator)) != base  # (K, n)
  out = np.full(n, -1)
  for x in range(n):
    if changed[:, x].any():
      out[x] = cost[changed[:, x]].min()
  return out, base


def apply_flips(W, flips, action="reverse"):
  W = W.copy()
  for winner, loser, k in flips:
    assert W[winner, loser] >= k
    W[winner, loser] -= k
    if action == "reverse":
      W[loser, winner] += k
  return W


def check_against_brute_force(c, estimator):
  r = vote_robustness(c, estimator=estimator)
  W = decisive_wins(pair_counts(c))
  for action, (count_field, witness_field) in ACTIONS.items():
    counts, witnesses = getattr(r, count_field), getattr(r, witness_field)
    expected, base = brute_force(W, estimator, action)
    np.testing.assert_array_equal(r.members, base)
    for x in range(W.shape[0]):
      if not base.any():  # empty Top Cycle (posterior): joining is not computed
        assert counts[x] == -1 and witnesses[x] == ()
        continue
      assert counts[x] == expected[x], (x, W, estimator, action)
      if expected[x] >= 0:
        assert sum(k for _, _, k in witnesses[x]) == expected[x]
        after = reach_all(relation(apply_flips(W, witnesses[x], action), estimator))
        assert after[x] != base[x]
      else:
        assert witnesses[x] == ()


@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_brute_force_small(estimator):
  rng = np.random.default_rng(0)
  for _ in range(12):
    n = int(rng.integers(3, 5))
    check_against_brute_force(random_comparisons(rng, n, max_votes=3), estimator)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_brute_force_five_agents(estimator):
  rng = np.random.default_rng(1)
  for _ in range(20):
    check_against_brute_force(random_comparisons(rng, 5, max_votes=2), estimator)
  for _ in range(5):
    check_against_brute_force(random_comparisons(rng, 6, max_votes=1), estimator)


@pytest.mark.parametrize("tie_policy", ["half", "drop"])
def test_relation_matches_estimators(tie_policy):
  rng = np.random.default_rng(2)
  for _ in range(5):
    c = random_comparisons(rng, 6, max_votes=3)
    for est in (
      WinRateEstimator(tie_policy=tie_policy),
      PosteriorEdgeEstimator(tie_policy=tie_policy),
    ):
      edges = est.fit(jax.random.key(0), c).edges
      weak, _ = est.hard_relations(edges)
      top, _ = est.hard_memberships(edges)
      W = decisive_wins(pair_counts(c, tie_policy=tie_policy), tie_policy)
      np.testing.assert_array_equal(relation(W, est.name) & ~np.eye(6, dtype=bool), weak)
      r = vote_robustness(c, estimator=est)
      np.testing.assert_array_equal(r.members, np.asarray(top))


def networkx_oracle(W, estimator, action):
  n = W.shape[0]
  c = THRESHOLD[estimator]
  M = W - W.T
  step = 2 if action == "reverse" else 1  # margin moved by one reversal / removal
  G = nx.DiGraph()
  G.add_nodes_from(range(n))
  C = nx.DiGraph()
  C.add_nodes_from(range(n))
  for a in range(n):
    for b in range(n):
      if a == b:
        continue
      if M[a, b] >= c:
        G.add_edge(a, b)
        k = (M[a, b] - c) // step + 1
        C.add_edge(a, b, capacity=k if k <= W[a, b] else 10**9)
  top = [x for x in range(n) if len(nx.descendants(G, x)) == n - 1]
  H = nx.DiGraph()  # reversed graph with join costs
  for a in range(n):
    for b in range(n):
      if a != b:
        if M[a, b] >= c:
          H.add_edge(b, a, weight=0)
        elif -((M[a, b] - c) // step) <= W[b, a]:
          H.add_edge(b, a, weight=-((M[a, b] - c) // step))
  dist = nx.multi_source_dijkstra_path_length(H, top) if top else {}
  out = np.full(n, -1)
  for x in range(n):
    if x in top:
      value = min(nx.minimum_cut_value(C, x, t) for t in range(n) if t != x)
      out[x] = value if value < 10**9 else -1
    elif x in dist:
      out[x] = dist[x]
  return out, top


@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_networkx_larger(estimator):
  rng = np.random.default_rng(3)
  for n in (8, 14, 20):
    # every pair compared under winrate (an unobserved pair is an unremovable tie)
    c = random_comparisons(rng, n, max_votes=6, p_tie=0.1, min_votes=int(estimator == "winrate"))
    r = vote_robustness(c, estimator=estimator)
    W = decisive_wins(pair_counts(c))
    for action, (count_field, witness_field) in ACTIONS.items():
      expected, top = networkx_oracle(W, estimator, action)
      assert np.flatnonzero(r.members).tolist() == top
      counts = getattr(r, count_field)
      np.testing.assert_array_equal(counts, expected)
      for x in np.flatnonzero(counts >= 0):
        changes = getattr(r, witness_field)[x]
        assert sum(k for *_, k in changes) == counts[x]
        after = reach_all(relation(apply_flips(W, changes, action), estimator))
        assert after[x] != r.members[x]


def test_hand_example_and_frame():
  # a beat b twice, b beat c, c beat a: a 3-cycle; d lost to a three times, to b and c once.
  c = Comparisons.from_arrays(
    [0, 0, 1, 2, 0, 0, 0, 1, 2],
    [1, 1, 2, 0, 3, 3, 3, 3, 3],
    [1.0] * 9,
    agents=["a", "b", "c", "d"],
  )
  r = vote_robustness(c)
  assert r.members.tolist() == [True, True, True, False]
  # d joins by reversing its loss to b (or to c): margin -1 -> +1. Each member leaves with one
  # reversal, e.g. c by losing its only win over a member (over a): {c, d} then has no way out.
  assert r.flips_to_change.tolist() == [1, 1, 1, 1]
  assert r.flips[3] in (((1, 3, 1),), ((2, 3, 1),))
  assert sum(k for *_, k in r.flips[2]) == 1
  frame = r.to_frame()
  assert frame.loc["d", "flips"] in ("b>d x1", "c>d x1")
  assert frame["member"].tolist() == [True, True, True, False]
  # posterior: an unobserved pair is no edge; here every pair was compared, so the same relation
  # except ties (none): the same counts.
  p = vote_robustness(c, estimator="posterior")
  assert p.flips_to_change.tolist() == [1, 1, 1, 1]
  # Removals: under winrate no loser here has a win to keep, so no pair gets past a tie (which
  # is an edge both ways): no member leaves; d joins by removing b's (or c's) one win over it, a
  # tie. Under posterior an even split is no edge: removing c's win over a leaves {c, d} with
  # no way out; d has no win, so no removal gives it a majority.
  assert r.removals_to_change.tolist() == [-1, -1, -1, 1]
  assert r.removals[3] in (((1, 3, 1),), ((2, 3, 1),))
  assert p.removals_to_change.tolist() == [1, 1, 1, -1]
  assert p.removals[2] == ((2, 0, 1),)


def test_errors():
  c = Comparisons.from_arrays([0], [1], [0.3])
  with pytest.raises(InputError, match="whole numbers"):
    vote_robustness(c)
  with pytest.raises(OptionError, match="estimator"):
    vote_robustness(Comparisons.from_arrays([0], [1], [1.0]), estimator="nonsense")
  with pytest.raises(OptionError, match="missing"):
    vote_robustness(
      Comparisons.from_arrays([0], [1], [1.0]), estimator=WinRateEstimator(missing=0.4)
    )


def edited_comparisons(c, changes, action):
  """``c`` with ``votes`` rows won by ``winner`` over ``loser`` reversed (or dropped)."""
  a, b, o = np.asarray(c.a), np.asarray(c.b), np.asarray(c.outcome).copy()
  keep = np.ones(len(a), dtype=bool)
  for winner, loser, k in changes:
    rows = np.flatnonzero(
      ((a == winner) & (b == loser) & (o == 1)) | ((a == loser) & (b == winner) & (o == 0))
    )
    assert len(rows) >= k
    if action == "reverse":
      o[rows[:k]] = 1 - o[rows[:k]]
    else:
      keep[rows[:k]] = False
  return Comparisons.from_arrays(a[keep], b[keep], o[keep], agents=list(c.agents))


@pytest.mark.parametrize("estimator", [WinRateEstimator(), PosteriorEdgeEstimator()])
def test_witnesses_change_the_estimators_membership(estimator):
  """Edit the comparison rows as the witness says, refit the estimator: the membership changes."""
  rng = np.random.default_rng(4)
  checked = 0
  for _ in range(4):
    c = random_comparisons(rng, 6, max_votes=3)
    r = vote_robustness(c, estimator=estimator)
    before = np.asarray(estimator.hard_memberships(estimator.fit(jax.random.key(0), c).edges)[0])
    np.testing.assert_array_equal(r.members, before)
    for action, (count_field, witness_field) in ACTIONS.items():
      for x in np.flatnonzero(getattr(r, count_field) >= 0):
        edited = edited_comparisons(c, getattr(r, witness_field)[x], action)
        edges = estimator.fit(jax.random.key(0), edited).edges
        after = np.asarray(estimator.hard_memberships(edges)[0])
        assert after[x] != before[x], (action, x)
        checked += 1
  assert checked > 10


def held_states(W, edge, observed, i, j, action, margin=0):
  """``{(i -> j, j -> i): fewest changes}`` of pair ``{i, j}`` in a held relation, by enumerating
  how many of each side's wins are changed: none keeps ``edge``, any hands the pair to its record
  (``i -> j`` iff the new margin is ``>= margin``: 0 the weak relation, 1 the strict one); an
  uncompared pair keeps ``edge``."""
  out = {(bool(edge[i, j]), bool(edge[j, i])): 0}
  if not observed[i, j]:
    return out
  M = W[i, j] - W[j, i]
  for f in range(W[i, j] + 1):
    for g in range(W[j, i] + 1):
      if f + g:
        new = M + 2 * (g - f) if action == "reverse" else M - f + g
        state = (bool(new >= margin), bool(new <= -margin))
        out[state] = min(out.get(state, f + g), f + g)
  return out


def held_brute_force(W, edge, observed, action, core=reach_all, margin=0):
  """Per agent, the fewest changes of a held relation that change its membership in ``core``
  (default the Top Cycle of the weak relation), over every combination of pair states."""
  n = W.shape[0]
  pairs = list(itertools.combinations(range(n), 2))
  options = [list(held_states(W, edge, observed, i, j, action, margin).items()) for i, j in pairs]
  index = np.array(list(itertools.product(*[range(len(o)) for o in options])))  # (K, pairs)
  rel = np.zeros((len(index), n, n), dtype=bool)
  cost = np.zeros(len(index), dtype=np.int64)
  for p, ((i, j), opts) in enumerate(zip(pairs, options)):
    fwd = np.array([st[0] for st, _ in opts])
    bwd = np.array([st[1] for st, _ in opts])
    rel[:, i, j], rel[:, j, i] = fwd[index[:, p]], bwd[index[:, p]]
    cost += np.array([c for _, c in opts])[index[:, p]]
  base = core(edge)
  changed = core(rel) != base
  out = np.full(n, -1)
  for x in range(n):
    if changed[:, x].any():
      out[x] = cost[changed[:, x]].min()
  return out, base


def held_after(W, edge, observed, changes, action, margin=0):
  """The held relation after ``changes``: the changed pairs decided by their records (margin as
  in :func:`held_states`)."""
  W = apply_flips(W, changes, action)
  rel = edge.copy()
  for winner, loser, k in changes:
    assert observed[winner, loser] and k > 0
    M = W[winner, loser] - W[loser, winner]
    rel[winner, loser], rel[loser, winner] = M >= margin, M <= -margin
  return rel


def random_held_relation(rng, c):
  """A random relation on the pairs of ``c`` (orientations often against the records)."""
  n = c.num_agents
  edge = np.zeros((n, n), dtype=bool)
  for i, j in itertools.combinations(range(n), 2):
    state = rng.choice(3, p=[0.45, 0.45, 0.1])
    edge[i, j], edge[j, i] = state != 1, state != 0
  return edge


def check_held_relation(W, edge, observed):
  from ste_jax.evaluate._robustness import held_relation_changes

  for action in ("reverse", "remove"):
    members, counts, witnesses = held_relation_changes(W, edge, observed, action)
    expected, base = held_brute_force(W, edge, observed, action)
    np.testing.assert_array_equal(members, base)
    for x in range(W.shape[0]):
      assert counts[x] == expected[x], (x, W, edge, action)
      if expected[x] >= 0:
        assert sum(k for _, _, k in witnesses[x]) == expected[x]
        assert reach_all(held_after(W, edge, observed, witnesses[x], action))[x] != base[x]
      else:
        assert witnesses[x] == ()


@pytest.mark.parametrize("n, max_votes", [(3, 3), (4, 3), (5, 2)])
def test_held_relation_brute_force(n, max_votes):
  """Model relation, imputed pairs held fixed: exact against every set of changed votes."""
  rng = np.random.default_rng(n)
  for _ in range(8 if n < 5 else 3):
    c = random_comparisons(rng, n, max_votes=max_votes)
    counts = pair_counts(c)
    check_held_relation(
      decisive_wins(counts), random_held_relation(rng, c), np.asarray(counts.totals) > 0
    )


def test_model_vote_robustness_on_its_fit():
  """The model estimator: its own hard Top Cycle and Uncovered Set, the held counts of both (the
  Uncovered Set's against the brute force of tests/evaluate/test_uncovered_robustness.py), and
  the leaderboard label."""
  from ste_jax.evaluate import ModelEstimator
  from ste_jax.evaluate._robustness import MODEL_RELATION
  from tests.evaluate.test_uncovered_robustness import uncovered_brute

  rng = np.random.default_rng(7)
  c = random_comparisons(rng, 5, max_votes=2, min_votes=0)
  est = ModelEstimator(ranks=(0,), strength_l2=(0.3,), num_folds=2, num_steps=60)
  fitted = est.fit(jax.random.key(0), c)
  assert vote_robustness(c, estimator=est, fitted=fitted).uc_members is None
  r = vote_robustness(c, estimator=est, fitted=fitted, uncovered=True)
  assert r.relation == MODEL_RELATION and r.estimator == "model"
  strict = np.asarray(est.hard_relations(fitted.edges)[1])
  np.testing.assert_array_equal(r.uc_members, np.asarray(est.hard_memberships(fitted.edges)[1]))
  weak = np.asarray(est.hard_relations(fitted.edges)[0])
  np.testing.assert_array_equal(r.members, np.asarray(est.hard_memberships(fitted.edges)[0]))
  counts = pair_counts(c)
  observed = np.asarray(counts.totals) > 0
  assert not observed.all()  # some imputed pairs, held fixed
  W = decisive_wins(counts)
  for action, (count_field, _) in ACTIONS.items():
    expected, _ = held_brute_force(W, weak, observed, action)
    np.testing.assert_array_equal(getattr(r, count_field), expected)
    expected, base = held_brute_force(W, strict, observed, action, uncovered_brute, margin=1)
    np.testing.assert_array_equal(r.uc_members, base)
    np.testing.assert_array_equal(getattr(r, f"uc_{count_field}"), expected)
    np.testing.assert_array_equal(getattr(r, f"uc_{count_field.split('_')[0]}_lower"), expected)
  assert (r.uc_flips_to_change > 0).any() and (r.uc_removals_to_change > 0).any()
  assert r.to_frame().attrs["relation"] == MODEL_RELATION
  with pytest.raises(InputError, match="comparisons"):
    vote_robustness(counts, estimator=est, fitted=fitted)
  with pytest.raises(OptionError, match="fitted"):
    vote_robustness(c, estimator=est)
