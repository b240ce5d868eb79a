"""Comparisons built from checked rows: each carries its input row's line (Comparisons.line)."""

import csv

import numpy as np
import pandas as pd
import pytest

from ste_jax.data import BadRowsWarning, Comparisons, from_dataframe, load_comparisons


def file_rows(path):
  """``{line: row dict}`` of a CSV read with the csv module (the header is line 1)."""
  with open(path, newline="") as f:
    reader = csv.DictReader(f)
    return {reader.line_num: row for row in reader}


def test_lines_point_at_the_rows_past_bad_and_repeated_rows(tmp_path):
  path = tmp_path / "battles.csv"
  rng = np.random.default_rng(0)
  names = ["x", "y", "z", "w"]
  body = ["a,b,winner", "x,,a", "y,y,a", "x,y,a", "z,x,b", "x,y,a", ",z,tie"]
  for _ in range(40):  # repeated rows (one distinct row stands for many) and more bad ones
    i, j = rng.choice(4, size=2, replace=rng.random() < 0.1)
    body.append(f"{names[i]},{names[j]},{rng.choice(['a', 'b', 'tie'])}")
  path.write_text("\n".join(body) + "\n")
  with pytest.warns(BadRowsWarning):
    c, report = load_comparisons(path, skip_bad_rows=True)
  rows = file_rows(path)
  line = np.asarray(c.line)
  assert len(report.bad_rows) >= 3 and len(line) == c.num_comparisons == report.rows_used
  assert np.all(np.diff(line) > 0)  # one comparison per row, in input order
  assert set(line).isdisjoint(r.line for r in report.rejected)
  outcome = {"a": 1.0, "b": 0.0, "tie": 0.5}
  for k, ln in enumerate(line):
    row = rows[int(ln)]
    assert (row["a"], row["b"]) == (c.agents[int(c.a[k])], c.agents[int(c.b[k])])
    assert outcome[row["winner"]] == float(c.outcome[k])


def test_a_counts_row_gives_its_line_to_every_comparison(tmp_path):
  path = tmp_path / "counts.csv"
  path.write_text(
    "model_a,model_b,wins_a,wins_b,ties\nx,y,2,1,0\nx,,1,1,1\ny,z,0,0,0\ny,z,1,0,2\nz,x,0,3,1\n"
  )
  with pytest.warns(BadRowsWarning):
    c, _ = load_comparisons(path, skip_bad_rows=True)
  rows = file_rows(path)
  line = np.asarray(c.line)
  assert line.tolist() == [2, 2, 5, 5, 6, 6]  # 3: bad, 4: no games
  for k, ln in enumerate(line):
    row = rows[int(ln)]
    assert (row["model_a"], row["model_b"]) == (c.agents[int(c.a[k])], c.agents[int(c.b[k])])
    column = {1.0: "wins_a", 0.0: "wins_b", 0.5: "ties"}[float(c.outcome[k])]
    assert float(row[column]) == float(c.weight[k])


def test_data_frame_rows_are_numbered_from_one_and_arrays_have_none():
  df = pd.DataFrame({"a": ["x", "y", "x"], "b": ["y", "y", "z"], "winner": ["a", "a", "b"]})
  with pytest.warns(BadRowsWarning):
    c, _ = from_dataframe(df, skip_bad_rows=True)
  assert np.asarray(c.line).tolist() == [1, 3]
  assert Comparisons.from_arrays([0], [1], [1.0]).line is None
  with pytest.raises(ValueError, match="line"):
    Comparisons.from_arrays([0, 1], [1, 0], [1.0, 0.0], line=[1, 0])
