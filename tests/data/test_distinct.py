"""Distinct rows (``ste_jax/data/_distinct.py``): checking each distinct row once, counted as
often as it occurs, gives exactly what checking the rows one by one gives."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from ste_jax.data import _distinct, _winner_rows, from_dataframe, load_comparisons
from ste_jax.data._distinct import CodedColumn, distinct_rows, factorize_cells
from ste_jax.data._report import BadRowsWarning


def test_factorize_cells_keeps_types_apart():
  cells = np.array(["x", None, float("nan"), "x", pd.NA, None, "nan"], dtype=object)
  codes, k = factorize_cells(cells)
  assert codes.tolist() == [0, 2, 3, 0, 4, 2, 1] and k == 5
  mixed = np.array([1, 1.0, True, "1", 1], dtype=object)  # equal under ==, not the same cell
  codes, k = factorize_cells(mixed)
  assert len(set(codes[:4].tolist())) == 4 and k == 5
  lists = np.array([["x"], ["x"], "x"], dtype=object)
  assert factorize_cells(lists)[0].tolist() == [0, 1, 2]
  floats = np.array([0.5, float("nan"), 0.5, float("nan")], dtype=object)
  assert factorize_cells(floats)[0].tolist() == [0, 1, 0, 1]
  coded = CodedColumn(np.array([2, 0, 2]), np.array(["a", "b", "c"], dtype=object))
  assert factorize_cells(coded)[0].tolist() == [2, 0, 2]


def test_distinct_rows_groups_equal_rows_and_keeps_apart_rows_alone():
  a = np.array(["x", "y", "x", "x"], dtype=object)
  b = np.array(["y", "x", "y", "y"], dtype=object)
  d = distinct_rows([a, b], apart=np.array([False, False, False, True]))
  assert d.first.tolist() == [0, 1, 3]
  assert d.inverse.tolist() == [0, 1, 0, 2]
  assert d.count.tolist() == [2, 1, 1]
  assert d.expand(np.array([True, False, True])).tolist() == [0, 2, 3]


def _one_by_one(columns, *, apart=None):
  """The oracle: every row its own distinct row (the loader as it checked rows before)."""
  n = len(columns[0])
  return _distinct.DistinctRows(np.arange(n), np.arange(n), np.ones(n, dtype=np.int64))


def _messy_battles(seed: int, num_rows: int) -> pd.DataFrame:
  rng = np.random.default_rng(seed)
  names = np.array(
    ["gpt-4", " gpt-4", "claude\u200b", "llama", "Llama", "mistral", "", None], object
  )
  winners = np.array(
    ["model_a", "model_b", "tie", "tie (bothbad)", "MODEL_A", "a", "bogus", "", None, "gpt-4"],
    object,
  )
  contexts = np.array(["x", "y", "", None, float("nan")], dtype=object)
  weights = np.array([1, 2, 0.5, -1, float("nan"), "abc", None], dtype=object)
  pick = lambda v: v[rng.integers(0, len(v), num_rows)]  # noqa: E731
  return pd.DataFrame(
    {
      "model_a": pick(names),
      "model_b": pick(names),
      "winner": pick(winners),
      "category": pick(contexts),
      "w": pick(weights),
    }
  )


def _load(monkeypatch, *, one_by_one, **kwargs):
  if one_by_one:
    monkeypatch.setattr(_winner_rows, "distinct_rows", _one_by_one)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", BadRowsWarning)
    try:
      out = kwargs.pop("load")(**kwargs)
    except Exception as e:  # noqa: BLE001 - the same refusal is the expected result
      out = repr(e)
  monkeypatch.undo()
  return out


def _same(x, y):
  if isinstance(x, str) or isinstance(y, str):
    assert x == y
    return
  (cx, rx), (cy, ry) = x, y
  for field in ("a", "b", "outcome", "context", "weight"):
    np.testing.assert_array_equal(np.asarray(getattr(cx, field)), np.asarray(getattr(cy, field)))
  assert (cx.agents, cx.contexts) == (cy.agents, cy.contexts)
  assert dataclasses.asdict(rx) == dataclasses.asdict(ry)
  assert rx.summary(max_lines=10**6) == ry.summary(max_lines=10**6)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
  "options",
  [
    dict(context="category"),
    dict(context="category", weight="w"),
    dict(context=False, tie="drop", both_bad="drop"),
    dict(context="category", strict=True),
  ],
)
def test_distinct_rows_give_the_rows_one_by_one(monkeypatch, seed, options):
  frame = _messy_battles(seed, 400)
  kwargs = dict(load=from_dataframe, df=frame, skip_bad_rows=not options.get("strict"), **options)
  _same(
    _load(monkeypatch, one_by_one=False, **kwargs), _load(monkeypatch, one_by_one=True, **kwargs)
  )


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_files_give_the_rows_one_by_one(monkeypatch, tmp_path, fmt):
  frame = _messy_battles(7, 600).drop(columns=["w"])
  frame = frame.astype({"model_a": "string", "model_b": "string", "winner": "string"})
  path = tmp_path / f"battles.{fmt}"
  frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, row_group_size=100)
  kwargs = dict(load=load_comparisons, path=path, skip_bad_rows=True, context="category")
  ours = _load(monkeypatch, one_by_one=False, **kwargs)
  _same(ours, _load(monkeypatch, one_by_one=True, **kwargs))
  assert not isinstance(ours, str) and ours[1].rows_read == 600
  assert ours[1].rows_read == ours[1].rows_used + len(ours[1].rejected)


def test_distinct_batches_merge_to_the_whole_tables_distinct_rows():
  rng = np.random.default_rng(3)
  columns = [rng.integers(0, k, 500) for k in (4, 3, 50)]
  apart = rng.random(500) < 0.1
  whole = distinct_rows([c.astype(object) for c in columns], apart=apart)
  for size in (1, 7, 64, 500):
    batches = _distinct.DistinctBatches(3)
    for start in range(0, 500, size):
      part = slice(start, start + size)
      batches.add([c[part] for c in columns], apart=apart[part])
    rows, codes = batches.result()
    np.testing.assert_array_equal(rows.first, whole.first)
    np.testing.assert_array_equal(rows.inverse, whole.inverse)
    np.testing.assert_array_equal(rows.count, whole.count)
    for j, c in enumerate(columns):
      np.testing.assert_array_equal(codes[:, j], c[whole.first])


def test_growing_cells_code_the_same_cell_alike_in_every_batch():
  column = _distinct.GrowingCells()
  first = column.codes(np.array(["x", None, float("nan"), 1, 1.0, "x"], dtype=object))
  second = column.codes(np.array([float("nan"), 1.0, True, "x", None], dtype=object))
  assert first.tolist() == [0, 1, 2, 3, 4, 0]
  assert second.tolist() == [2, 4, 5, 0, 1]
  cells = column.cells()
  assert [type(v) for v in cells] == [str, type(None), float, int, float, bool]


def _messy_file_frame(seed: int, num_rows: int, fmt: str) -> pd.DataFrame:
  """Battles with every kind of bad cell, in the column types each format stores."""
  rng = np.random.default_rng(seed)
  frame = _messy_battles(seed, num_rows)
  if fmt == "parquet":
    frame = frame.astype({"model_a": "string", "model_b": "string", "winner": "string"})
    ints = pd.array(rng.integers(-1, 3, num_rows), dtype="Int64")
    ints[rng.random(num_rows) < 0.1] = pd.NA
    frame["w"] = ints  # integer weights with nulls: pandas reads them as floats
    frame["f"] = np.where(rng.random(num_rows) < 0.1, np.nan, rng.integers(0, 3, num_rows) - 0.5)
  else:
    frame["w"] = frame["w"].astype(str)
  return frame


def _write(frame: pd.DataFrame, path, fmt: str, row_group: int) -> None:
  if fmt == "parquet":
    frame.to_parquet(path, row_group_size=row_group, index=False)
  else:
    text = frame.to_csv(index=False)
    lines = text.splitlines()
    # malformed records, a blank line and a repeated header among the rows
    lines[5] += ",extra"
    lines[9] = lines[9].rsplit(",", 1)[0]
    lines.insert(12, "")
    lines.insert(20, lines[0])
    lines.append("only,three,fields")
    path.write_text("\n".join(lines) + "\n")


def _whole_file(monkeypatch, path, kwargs):
  """The oracle: the whole file read at once (no batch reader), rows checked one by one."""
  from ste_jax.data import _schemas

  monkeypatch.setattr(_winner_rows, "distinct_rows", _one_by_one)
  real = _schemas.load_table

  def whole(header, column, *args, **kw):
    if hasattr(column, "distinct"):
      column.distinct = lambda names: None
    return real(header, column, *args, **kw)

  monkeypatch.setattr(_schemas, "load_table", whole)
  from ste_jax.data import _tabular

  monkeypatch.setattr(_tabular, "load_table", whole)
  return _load(monkeypatch, one_by_one=False, load=load_comparisons, path=path, **kwargs)


def _same_bytes(x, y):
  _same(x, y)
  if not isinstance(x, str):
    for field in ("a", "b", "outcome", "context", "weight"):
      ax, ay = np.asarray(getattr(x[0], field)), np.asarray(getattr(y[0], field))
      assert ax.dtype == ay.dtype and ax.tobytes() == ay.tobytes()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize(
  "options",
  [
    dict(context="category", weight="w"),
    dict(context="category", weight="f", policy=dict(tie="drop")),
    dict(context=False, policy=dict(both_bad="drop"), agents=("gpt-4", "llama", "mistral")),
    dict(context="category", strict=True),
  ],
)
def test_files_read_in_batches_give_the_whole_file(monkeypatch, tmp_path, fmt, options):
  from ste_jax.data import _tabular

  if fmt == "csv" and options.get("weight") == "f":
    options = dict(options, weight="w")
  path = tmp_path / f"battles.{fmt}"
  _write(_messy_file_frame(11, 300, fmt), path, fmt, row_group=37)
  kwargs = dict(skip_bad_rows=not options.get("strict"), **options)
  expected = _whole_file(monkeypatch, path, kwargs)
  assert isinstance(expected, str) == bool(options.get("strict")), expected
  calls = []
  real = _distinct.DistinctBatches.add

  def add(self, *args, **kw):
    calls.append(len(args[0][0]))
    return real(self, *args, **kw)

  for size in (1, 5, 37, 50, 10**6):
    monkeypatch.setattr(_tabular, "_BATCH_ROWS", size)
    monkeypatch.setattr(_distinct.DistinctBatches, "add", add)
    calls.clear()
    got = _load(monkeypatch, one_by_one=False, load=load_comparisons, path=path, **kwargs)
    _same_bytes(got, expected)
    # it read in batches (a CSV batch also holds the malformed records between its lines)
    assert calls and max(calls) <= size + (3 if fmt == "csv" else 0) and sum(calls) >= 300
  if not isinstance(expected, str):
    report = expected[1]
    assert report.rows_read == report.rows_used + len(report.rejected)
    assert {r.reason for r in report.rejected} >= {"missing field", "unknown winner label"}
