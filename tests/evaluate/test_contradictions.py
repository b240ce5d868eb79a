"""Head-to-head records that contradict a table's tournament: binomial tails, Benjamini-Hochberg."""

import jax
import numpy as np
import pytest
from scipy import stats

from ste_jax.evaluate import (
  LeaderboardSettings,
  WinRateEstimator,
  core_table,
  head_to_head_contradictions,
)
from ste_jax.stats import sparse_league
from tests.evaluate._data import from_wins


def _bh_oracle(p, fdr):
  """Benjamini-Hochberg by its definition: reject the k smallest, k = max{i : p_(i) <= i q / m}."""
  m = len(p)
  ranked = sorted(range(m), key=lambda t: p[t])
  k = max([i + 1 for i in range(m) if p[ranked[i]] <= (i + 1) * fdr / m], default=0)
  return set(ranked[:k])


def test_p_values_are_binomial_tails_at_the_tables_probability_and_bh_matches_its_definition():
  rng = np.random.default_rng(0)
  n = 12
  P = np.full((n, n), 0.5)
  wins = np.zeros((n, n))
  expected_p, pairs = [], []
  for i in range(n):
    for j in range(i + 1, n):
      P[i, j] = rng.uniform(0.05, 0.95)
      P[j, i] = 1 - P[i, j]
      t = int(rng.integers(1, 25))
      w = int(rng.binomial(t, 0.5 if rng.random() < 0.7 else 0.95))  # some lopsided records
      wins[i, j], wins[j, i] = w, t - w
      x, y = (i, j) if P[i, j] > 0.5 else (j, i)
      w_y = wins[y, x]
      expected_p.append(stats.binom.sf(w_y - 1, t, P[y, x]) if w_y > 0 else 1.0)
      pairs.append((x, y, w_y, t))
  for fdr in (0.05, 0.2):
    found = head_to_head_contradictions(wins, P, fdr=fdr)
    rejected = _bh_oracle(expected_p, fdr)
    want = {(str(pairs[k][1]), str(pairs[k][0])) for k in rejected if 2 * pairs[k][2] > pairs[k][3]}
    assert {(c.winner, c.loser) for c in found} == want
    for c in found:
      k = next(k for k, (x, y, _, _) in enumerate(pairs) if (str(y), str(x)) == (c.winner, c.loser))
      np.testing.assert_allclose(c.p_value, expected_p[k], rtol=1e-9)
      assert c.table_probability > 0.5 and 2 * c.record_wins > c.games
    assert [c.p_value for c in found] == sorted(c.p_value for c in found)
  assert head_to_head_contradictions(wins, P, fdr=0.2)  # the seed holds lopsided upsets


def test_agreeing_records_ties_and_unobserved_pairs_are_never_reported():
  P = np.array([[0.5, 0.9, 0.5], [0.1, 0.5, 0.5], [0.5, 0.5, 0.5]])
  wins = np.array(
    [[30.0, 30.0, 0.0], [0.0, 0.0, 40.0], [0.0, 0.0, 0.0]]
  )  # 0 >> 1 agrees; 1-2 tied in P
  assert head_to_head_contradictions(wins, P) == ()
  assert head_to_head_contradictions(np.zeros((1, 1)), np.full((1, 1), 0.5)) == ()


def test_among_restricts_the_family_of_tests():
  rng = np.random.default_rng(5)
  n = 40
  s = np.linspace(2.0, -2.0, n)
  P = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
  wins = np.zeros((n, n))
  for i in range(n):
    for j in range(i + 1, n):
      w = rng.binomial(6, P[i, j])
      wins[i, j], wins[j, i] = w, 6 - w
  wins[2, 0], wins[0, 2] = 10, 0  # agent 2 beat agent 0 ten times; the table says 0 > 2 at 0.55
  P_table = P.copy()
  P_table[0, 2], P_table[2, 0] = 0.55, 0.45
  top = np.arange(n) < 5
  found = head_to_head_contradictions(wins, P_table, fdr=0.05, among=top)
  assert [(c.winner, c.loser) for c in found] == [("2", "0")]
  # Among all 780 observed pairs, p = 0.45^10 = 3.4e-4 misses the Benjamini-Hochberg bar 0.05 / 780.
  assert head_to_head_contradictions(wins, P_table, fdr=0.05) == ()
  with pytest.raises(ValueError, match="among must be a boolean mask"):
    head_to_head_contradictions(wins, P_table, among=np.arange(n))


def test_fractional_wins_interpolate_the_binomial_tail():
  P = np.array([[0.5, 0.8], [0.2, 0.5]])
  found = [
    head_to_head_contradictions(np.array([[0.0, 1.0], [w, 0.0]]), P, fdr=0.99)
    for w in (9.0, 9.5, 10.0)
  ]
  p = [f[0].p_value for f in found]
  assert p[0] > p[1] > p[2]  # more (half) wins for the underdog: a smaller p-value


@pytest.mark.parametrize(
  "kwargs, match",
  [
    (dict(wins=np.zeros((2, 3)), tournament=np.zeros((2, 3))), "wins must be a square"),
    (dict(wins=np.zeros((2, 2)), tournament=np.zeros((3, 3))), "tournament must have the shape"),
    (dict(wins=-np.ones((2, 2)), tournament=np.full((2, 2), 0.5)), "wins must be finite"),
    (
      dict(wins=np.ones((2, 2)), tournament=np.full((2, 2), 1.5)),
      "tournament must hold probabilities",
    ),
    (dict(wins=np.ones((2, 2)), tournament=np.full((2, 2), 0.5), fdr=1.0), "fdr must be"),
    (
      dict(wins=np.ones((2, 2)), tournament=np.full((2, 2), 0.5), agents=["a"]),
      "agents must hold 2",
    ),
  ],
)
def test_bad_input_names_the_argument(kwargs, match):
  with pytest.raises(ValueError, match=match):
    head_to_head_contradictions(**kwargs)


def _transitive_wins_with_one_upset(n=10, games=20, upset=(8, 1)):
  """A transitive round robin (agent 0 strongest) in which the weak agent 8 beat agent 1 in every
  game."""
  rng = np.random.default_rng(1)
  s = np.linspace(2.0, -2.0, n)
  wins = np.zeros((n, n))
  for i in range(n):
    for j in range(i + 1, n):
      w = rng.binomial(games, 1 / (1 + np.exp(-(s[i] - s[j]))))
      wins[i, j], wins[j, i] = w, games - w
  lo, hi = upset
  wins[lo, hi], wins[hi, lo] = games, 0
  return wins


def test_table_warns_when_the_displayed_tournament_contradicts_a_record(monkeypatch):
  wins = _transitive_wins_with_one_upset()
  # Win rates follow the records: no contradiction for the record-based estimators.
  no_replicas = LeaderboardSettings(num_replicas=0)
  table = core_table(jax.random.key(0), from_wins(wins), "winrate", no_replicas)
  assert table.diagnostics.contradictions == ()
  # A displayed tournament that keeps the transitive order (here the true one) is contradicted by
  # the upset: the table lists it, warns, and writes it to the JSON diagnostics.
  s = np.linspace(2.0, -2.0, 10)
  P = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
  monkeypatch.setattr(WinRateEstimator, "display_tournament", lambda *args: P)
  table = core_table(
    jax.random.key(0),
    from_wins(wins, agents=[f"m{i}" for i in range(10)]),
    WinRateEstimator(),
    no_replicas,
  )
  found = table.diagnostics.contradictions
  assert [(c.winner, c.loser, c.record_wins, c.games) for c in found] == [("m8", "m1", 20.0, 20.0)]
  assert any(
    w.startswith(
      "1 observed pair among the table's top 10 agents contradicts the table's tournament"
    )
    and "m8 beat m1 20 of 20" in w
    for w in table.diagnostics.warnings
  )
  assert table.diagnostics.to_dict()["contradictions"][0]["winner"] == "m8"


@pytest.mark.slow  # a 200-agent model fit, about 14 s on 2 cores
def test_no_contradiction_in_a_bradley_terry_league():
  league = sparse_league(jax.random.key(3), num_agents=200, num_comparisons=6000)
  table = core_table(
    jax.random.key(0), league.comparisons, "model", LeaderboardSettings(num_replicas=0)
  )
  assert table.estimator == "model"
  assert table.diagnostics.contradictions == ()
  assert not any("contradict" in w for w in table.diagnostics.warnings)
