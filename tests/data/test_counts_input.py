"""The ``counts`` schema and ``from_counts``: aggregated wins per pair read as weighted comparisons.

The oracle is the raw battles the counts summarize: the same battles loaded one row each (the
arena loader) must give the same pair counts and the same leaderboard table.
"""

import warnings

import jax
import numpy as np
import pandas as pd
import pytest

from ste_jax import InputError, OptionError
from ste_jax.data import (
  BadRowsWarning,
  detect_schema,
  from_counts,
  from_dataframe,
  load_comparisons,
  pair_counts,
)
from ste_jax.evaluate import ModelEstimator, leaderboard

AGENTS = ("alpha", "beta", "gamma", "delta")


def _battles(seed: int = 0, num: int = 600) -> pd.DataFrame:
  """Random arena battles with ties, two contexts, agent 'delta' strongest."""
  rng = np.random.default_rng(seed)
  a = rng.integers(0, len(AGENTS), num)
  b = (a + rng.integers(1, len(AGENTS), num)) % len(AGENTS)
  skill = np.array([0.0, 0.3, -0.4, 0.8])
  p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
  u = rng.random(num)
  winner = np.where(u < 0.15, "tie", np.where(u < 0.15 + 0.85 * p, "model_a", "model_b"))
  return pd.DataFrame(
    {
      "model_a": np.array(AGENTS)[a],
      "model_b": np.array(AGENTS)[b],
      "winner": winner,
      "category": rng.choice(["code", "math"], num),
    }
  )


def _aggregate_pandas(df: pd.DataFrame, context: bool = False) -> pd.DataFrame:
  """The counts by hand (pandas groupby): the independent oracle of the DuckDB SQL."""
  keys = ["model_a", "model_b"] + (["category"] if context else [])
  g = df.assign(
    wins_a=(df.winner == "model_a").astype(int),
    wins_b=(df.winner == "model_b").astype(int),
    ties=(df.winner == "tie").astype(int),
  )
  return g.groupby(keys, as_index=False)[["wins_a", "wins_b", "ties"]].sum()


SQL = """
  SELECT model_a, model_b, {ctx}
         SUM(CASE WHEN winner = 'model_a' THEN 1 ELSE 0 END) AS wins_a,
         SUM(CASE WHEN winner = 'model_b' THEN 1 ELSE 0 END) AS wins_b,
         SUM(CASE WHEN winner = 'tie' THEN 1 ELSE 0 END) AS ties
  FROM read_parquet('{path}')
  GROUP BY ALL
"""


def _duckdb_counts(path, tmp_path, context: bool):
  duckdb = pytest.importorskip("duckdb")
  out = tmp_path / ("counts_ctx.parquet" if context else "counts.parquet")
  ctx = "category AS context," if context else ""
  query = SQL.format(ctx=ctx, path=path)
  duckdb.sql(f"COPY ({query}) TO '{out}' (FORMAT parquet)")
  return out


def _tables(seed, data, estimator="winrate", **kw):
  """The leaderboard's tables without ``elo``: online Elo depends on the order of the battles,
  which counts do not keep (its one step of weight ``k`` is not ``k`` unit steps)."""
  board = leaderboard(jax.random.key(seed), data, estimator, num_replicas=0, **kw)
  return [(t.context, t.to_frame().drop(columns="elo")) for t in board]


def _assert_tables_equal(left, right):
  assert len(left) == len(right)
  for (cx, x), (cy, y) in zip(left, right):
    assert cx == cy
    pd.testing.assert_frame_equal(x, y)


@pytest.mark.parametrize("context", [False, True])
def test_duckdb_counts_parquet_equals_raw_battles(tmp_path, context):
  """A Parquet file of battles aggregated with DuckDB, loaded as counts = the raw file."""
  raw_path = tmp_path / "battles.parquet"
  df = _battles()
  df.to_parquet(raw_path)
  counts_path = _duckdb_counts(raw_path, tmp_path, context)
  kw = {"context": "category"} if context else {"context": False}
  raw, raw_report = load_comparisons(raw_path, **kw)
  counts, report = load_comparisons(counts_path)  # auto-detected: wins_a, wins_b
  assert report.schema == "counts" and raw_report.schema == "arena"
  assert counts.agents == raw.agents and counts.contexts == raw.contexts
  # The counts file has at most 4 * 3 (* 2) rows, the raw one 600.
  assert report.rows_read <= 24 < raw_report.rows_read == 600
  for field in ("wins", "ties", "totals"):
    np.testing.assert_array_equal(
      getattr(pair_counts(counts, by_context=context), field),
      getattr(pair_counts(raw, by_context=context), field),
    )
  # Oracle independent of both loaders: the pandas aggregation, total games per ordered pair.
  by_hand = _aggregate_pandas(df)
  games = np.zeros((4, 4))
  index = {name: k for k, name in enumerate(raw.agents)}
  for r in by_hand.itertuples():
    i, j = index[r.model_a], index[r.model_b]
    games[i, j] += r.wins_a + r.wins_b + r.ties
    games[j, i] += r.wins_a + r.wins_b + r.ties
  np.testing.assert_array_equal(np.asarray(pair_counts(counts).totals), games)
  # The leaderboard table (no bootstrap): identical.
  _assert_tables_equal(_tables(0, counts, by_context=context), _tables(0, raw, by_context=context))


# The single-candidate grids already compare the cross-validation tables (the same folds, the same
# held-out log-losses); the default grid (eight candidates in two stages, the slowest case: about
# 13 s on 2 cores) adds that the one-standard-error choice among them agrees too: `make test-slow`.
@pytest.mark.parametrize(
  "grid",
  [
    "one candidate, rank 0",
    "one candidate, rank 1",
    pytest.param("default", marks=pytest.mark.slow),
  ],
)
def test_model_estimator_point_table_equals_raw(grid):
  """The model estimator's count-weighted likelihood: the same fit and table from counts.

  The cross-validation folds are drawn on the pairs' count cells, so the default grid's choice is
  the same too (the same folds, the same held-out log-losses).
  """
  df = _battles(seed=1, num=400)
  counts, _ = from_counts(_aggregate_pandas(df))
  raw, _ = from_dataframe(df, context=False)
  model = (
    ModelEstimator()
    if grid == "default"
    else ModelEstimator(ranks=(int(grid[-1]),), strength_l2=(0.3,), skew_l2=(1.0,))
  )
  _assert_tables_equal(_tables(3, counts, model), _tables(3, raw, model))
  fit_c = model.fit(jax.random.key(4), counts)
  fit_r = model.fit(jax.random.key(4), raw)
  np.testing.assert_array_equal(np.asarray(fit_c.edges), np.asarray(fit_r.edges))
  assert fit_c.model.cv_table == fit_r.model.cv_table


def test_poisson_replicas_equal_in_distribution_not_draw_for_draw():
  """Counts' Poisson replicas: pair counts with the same mean and variance as the raw rows'."""
  from ste_jax.evaluate._replicas import resample_unit_weights

  df = _battles(seed=2, num=300)
  counts, _ = from_counts(_aggregate_pandas(df))
  raw, _ = from_dataframe(df, context=False)
  reps = 4000

  def total_games(comps, key):
    w = resample_unit_weights(key, comps.weight, reps)
    return np.asarray(w).sum(axis=1)  # Poisson(total games) per replica

  t_counts = total_games(counts, jax.random.key(0))
  t_raw = total_games(raw, jax.random.key(0))
  assert not np.array_equal(t_counts, t_raw)  # not the same draws for the same key
  # Both Poisson(300): mean 300, sd sqrt(300) = 17.3; standard errors 0.27 (mean) and 0.19 (sd).
  for t in (t_counts, t_raw):
    assert abs(t.mean() - 300) < 1.5 and abs(t.std() - np.sqrt(300)) < 1.2


def test_rows_become_weighted_comparisons_by_hand():
  c, report = from_counts(
    {
      "a": ["x", "x", "y"],
      "b": ["y", "z", "z"],
      "wins_a": [3, 0, 0],
      "wins_b": [1, 2, 0],
      "ties": [2, 0, 0],
    }
  )
  assert c.agents == ("x", "y", "z") and report.rows_read == 3 and report.rows_used == 2
  # Row 1 -> (x won, 3), (y won, 1), (tie, 2); row 2 -> (z won, 2); row 3 (all 0) -> nothing.
  assert sorted(zip(np.asarray(c.outcome).tolist(), np.asarray(c.weight).tolist())) == [
    (0.0, 1.0),
    (0.0, 2.0),
    (0.5, 2.0),
    (1.0, 3.0),
  ]


def test_zero_rows_fine_and_agents_by_hand():
  c, report = from_counts(
    {"a": ["x", "x", "y"], "b": ["y", "z", "w"], "wins_a": [3, 0, 0], "wins_b": [1, 2, 0]}
  )
  # 'w' is named only by the all-zero row: read, not an agent, not refused.
  assert c.agents == ("x", "y", "z")
  assert report.rows_read == 3 and report.rows_used == 2 and not report.bad_rows
  wins = np.asarray(pair_counts(c).wins)
  # x beat y 3 times, y beat x once, z beat x twice.
  expected = np.zeros((3, 3))
  expected[0, 1], expected[1, 0], expected[2, 0] = 3, 1, 2
  np.testing.assert_array_equal(wins, expected)
  assert "counts: 6 unit comparisons in the rows used (a won 3, b won 3)" in report.mappings


@pytest.mark.parametrize(
  "cell, line",
  [(2.5, 2), (-1, 2), (float("nan"), 2), ("three", 2), (None, 2)],
)
def test_bad_counts_refused_with_line_numbers(cell, line):
  frame = pd.DataFrame(
    {
      "model_a": ["x", "y", "x"],
      "model_b": ["y", "z", "z"],
      "wins_a": pd.Series([1, cell, 4], dtype=object),
      "wins_b": [2, 0, 1],
    }
  )
  with pytest.raises(InputError, match=f"1 bad row of 3: .*first at line {line}"):
    from_counts(frame)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    c, report = from_counts(frame, skip_bad_rows=True)
  assert any(issubclass(w.category, BadRowsWarning) for w in caught)
  assert [r.line for r in report.bad_rows] == [line] and report.rows_used == 2
  assert float(np.asarray(c.weight).sum()) == 1 + 2 + 4 + 1


def test_tie_drop_policy_and_options():
  data = {"a": ["x", "x"], "b": ["y", "z"], "wins_a": [1, 0], "wins_b": [0, 0], "ties": [2, 3]}
  c, report = from_counts(data, policy={"tie": "drop"})
  assert float(np.asarray(c.weight).sum()) == 1 and not report.bad_rows
  assert report.rows_used == 1 and c.agents == ("x", "y")
  with pytest.raises(OptionError, match=r"counts \(wins_a, wins_b, ties\) are the weights"):
    from_counts(data, weight="w")
  with pytest.raises(InputError, match="'model_b'"):
    from_counts({"model_a": ["x"], "wins_a": [1], "wins_b": [0]})
  with pytest.raises(TypeError, match="DataFrame or a mapping"):
    from_counts([1, 2])


def test_detection_and_explicit_format(tmp_path):
  assert detect_schema(["model_a", "model_b", "wins_a", "wins_b"], "t") == "counts"
  assert detect_schema(["a", "b", "wins_a", "wins_b", "ties", "context"], "t") == "counts"
  path = tmp_path / "c.csv"
  pd.DataFrame({"p": ["x"], "q": ["y"], "wins_a": [2], "wins_b": [1]}).to_csv(path, index=False)
  c, report = load_comparisons(path, schema="counts", a="p", b="q")
  assert report.schema == "counts" and c.agents == ("x", "y")
  c2, _ = load_comparisons(path, a="p", b="q")  # auto: wins_a, wins_b -> counts
  np.testing.assert_array_equal(pair_counts(c2).wins, [[0.0, 2.0], [1.0, 0.0]])


def test_bootstrap_on_counts_close_to_raw():
  """With replicas (Poisson, winrate): the counts' intervals match the raw rows' up to MC error."""
  df = _battles(seed=4, num=600)
  counts, _ = from_counts(_aggregate_pandas(df))
  raw, _ = from_dataframe(df, context=False)
  frames = [
    leaderboard(jax.random.key(5), c, "winrate", num_replicas=400).table().to_frame()
    for c in (counts, raw)
  ]
  # The point columns are identical; p_tc (share of replicas' Top Cycles; here about 0.98, 0.04,
  # 0.01, 0) differs by Monte Carlo error only: 400 replicas, standard error of the difference
  # of two shares near 0.04 is sqrt(2 * 0.04 * 0.96 / 400) = 0.014, so 0.06 is over 4 of them.
  np.testing.assert_array_equal(frames[0]["win_rate"], frames[1]["win_rate"])
  np.testing.assert_allclose(frames[0]["p_tc"], frames[1]["p_tc"], atol=0.06)
