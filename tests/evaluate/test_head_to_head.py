"""The head-to-head crosstable of a table's first rows (``ste_jax.evaluate._head_to_head``)."""

import numpy as np
import pandas as pd
import pytest

from ste_jax.data import Comparisons, pair_counts
from ste_jax.evaluate import head_to_head

# 0 beat 1 3-1 (the table has 1 beating 0); 1 and 2 tied once and 2 beat 1 once; 3 never played.
WINS = np.array(
  [[0.0, 3.0, 0.0, 0.0], [1.0, 0.0, 0.5, 0.0], [0.0, 1.5, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
)
P = np.array(
  [[0.5, 0.4, 0.6, 0.7], [0.6, 0.5, 0.4, 0.8], [0.4, 0.6, 0.5, 0.9], [0.3, 0.2, 0.1, 0.5]]
)
NAMES = ["a", "b", "c", "d"]


def test_crosstable_follows_the_table_order():
  h = head_to_head(WINS, P, order=[1, 0, 3, 2], agents=NAMES, k=3)
  assert h.agents == ("b", "a", "d")
  # Rows/columns: b, a, d. b won 1 of 4 against a, nothing against d.
  np.testing.assert_array_equal(h.wins, [[0, 1, 0], [3, 0, 0], [0, 0, 0]])
  np.testing.assert_array_equal(h.games, [[0, 4, 0], [4, 0, 0], [0, 0, 0]])
  np.testing.assert_array_equal(h.probability, [[0.5, 0.6, 0.8], [0.4, 0.5, 0.7], [0.2, 0.3, 0.5]])
  np.testing.assert_array_equal(
    h.compared, [[False, True, False], [True, False, False], [False, False, False]]
  )
  # a leads its record against b 3-1 while the table has P(a beats b) = 0.4.
  np.testing.assert_array_equal(
    h.against_table, [[False, False, False], [True, False, False], [False, False, False]]
  )
  assert h.summary() == (
    "1 of 3 pairs compared (4 games per compared pair, median); "
    "1 record led by the agent the table has losing (!)"
  )
  assert h.to_dict() == {
    "agents": ["b", "a", "d"],
    "wins": h.wins.tolist(),
    "games": h.games.tolist(),
    "probability": h.probability.tolist(),
  }


def test_ties_count_half_and_the_size_is_clipped():
  h = head_to_head(WINS, P, order=[2, 1, 0, 3], agents=NAMES, k=10)
  assert h.agents == ("c", "b", "a", "d")
  assert h.wins[0, 1] == 1.5 and h.wins[1, 0] == 0.5 and h.games[0, 1] == 2.0
  assert not h.against_table[0, 1]  # c leads 1.5-0.5 and the table has P(c beats b) = 0.6
  assert h.summary().startswith("2 of 6 pairs compared (3 games per compared pair, median)")
  empty = head_to_head(WINS, P, order=[0, 1, 2, 3], agents=NAMES, k=0)
  assert (
    empty.agents == () and empty.wins.shape == (0, 0) and empty.summary() == "0 of 0 pairs compared"
  )


@pytest.mark.parametrize(
  "kwargs, match",
  [
    (dict(wins=WINS[:3]), "wins must be a square"),
    (dict(wins=-WINS), "nonnegative"),
    (dict(tournament=P[:3, :3]), "tournament must have the shape"),
    (dict(order=[0, 1, 1, 3]), "order must be a permutation"),
    (dict(agents=NAMES[:3]), "agents must hold 4 names"),
    (dict(k=-1), "k must be a nonnegative integer"),
    (dict(k=2.0), "k must be a nonnegative integer"),
  ],
)
def test_bad_arguments_name_the_argument(kwargs, match):
  args = dict(wins=WINS, tournament=P, order=[0, 1, 2, 3], agents=NAMES, k=2) | kwargs
  with pytest.raises(ValueError, match=match):
    head_to_head(**args)


def test_crosstable_of_counted_comparisons_equals_records_counted_from_the_rows():
  rng = np.random.default_rng(3)
  n, rows = 7, 120
  a = rng.integers(n, size=rows)
  b = (a + rng.integers(1, n, size=rows)) % n
  outcome = rng.choice([0.0, 0.5, 1.0], size=rows, p=[0.4, 0.2, 0.4])
  comps = Comparisons.from_arrays(a, b, outcome, agents=[f"m{i}" for i in range(n)])
  order, table_p = rng.permutation(n), rng.random((n, n))
  h = head_to_head(np.asarray(pair_counts(comps).wins), table_p, order, comps.agents, 5)
  assert list(h.agents) == [comps.agents[i] for i in order[:5]]
  # Independent count: each row's points for its first agent, summed per ordered pair of names.
  df = pd.DataFrame({"x": np.array(comps.agents)[a], "y": np.array(comps.agents)[b], "o": outcome})
  points = pd.concat(
    [
      df.rename(columns={"x": "p", "y": "q"}).assign(s=df.o),
      df.rename(columns={"y": "p", "x": "q"}).assign(s=1.0 - df.o),
    ]
  )
  record = points.groupby(["p", "q"]).s.sum()
  for i, x in enumerate(h.agents):
    for j, y in enumerate(h.agents):
      expect = record.get((x, y), 0.0) if i != j else 0.0
      assert h.wins[i, j] == pytest.approx(expect), (x, y)
  np.testing.assert_array_equal(h.probability, table_p[np.ix_(order[:5], order[:5])])
