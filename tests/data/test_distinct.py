"""Distinct rows (``ste_jax/data/_distinct.py``): checking each distinct row once, counted as
often as it occurs, gives exactly what checking the rows one by one gives."""

import csv
import dataclasses
import gzip
import io
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
  for field in ("a", "b", "outcome", "context", "weight", "line"):
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
  if fmt.startswith("quoted"):  # cells with quotes, delimiters and newlines (rows span lines)
    odd = np.array(['say "hi"', "a,b", "two\nlines", "crlf\r\nin", "gpt-4"], dtype=object)
    for name in ("model_a", "model_b", "category"):
      where = rng.random(num_rows) < 0.15
      frame.loc[where, name] = odd[rng.integers(0, len(odd), int(where.sum()))]
    frame.loc[rng.random(num_rows) < 0.1, "winner"] = "model_a\n"
  return frame


def _write(frame: pd.DataFrame, path, fmt: str, row_group: int) -> None:
  if fmt == "parquet":
    frame.to_parquet(path, row_group_size=row_group, index=False)
  elif fmt.startswith("quoted"):
    # every field quoted, CRLF records, a BOM; malformed records, a blank line and a repeated
    # header (with spaces) among them
    out = io.StringIO(newline="")
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    records = [list(frame.columns)] + frame.astype(object).where(frame.notna(), "").values.tolist()
    records[5] = records[5] + ["extra"]
    records[9] = records[9][:-1]
    records.insert(20, [f" {c} " for c in frame.columns])
    writer.writerows(records[:12])
    out.write("\r\n")
    writer.writerows(records[12:])
    out.write('"only","three","fields"')  # the last record without a newline
    data = b"\xef\xbb\xbf" + out.getvalue().encode("utf-8")
    path.write_bytes(gzip.compress(data) if fmt.endswith("gz") else data)
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


def _csv_whole(path, opener, delimiter):
  """The oracle CSV reader: the whole text read at once by the ``csv`` module, each record's
  line its first physical line, blank lines skipped, a wrong number of fields or a repeated
  header line a malformed record."""
  with (opener or open)(path, "rb") as f:
    text = f.read().decode("utf-8-sig")
  reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
  header = [h.strip() for h in next(reader)]
  records, lines, prev = [], [], reader.line_num
  for record in reader:
    start, prev = prev + 1, reader.line_num
    if record:
      records.append(record)
      lines.append(start)
  width = len(header)
  pre = np.full(len(records), None, dtype=object)
  for k, r in enumerate(records):
    if len(r) != width:
      pre[k] = ("malformed record", f"expected {width} fields, got {len(r)}")
    elif [c.strip() for c in r] == header:
      pre[k] = ("malformed record", "a repeated header line")

  def column(name):
    j = header.index(name)
    out = np.empty(len(records), dtype=object)
    out[:] = [r[j] if len(r) == width else None for r in records]
    return out

  return header, column, np.asarray(lines, dtype=np.int64), pre


def _whole_file(monkeypatch, path, kwargs, *, oracle=True):
  """The oracle: the whole file read at once (no batch reader), rows checked one by one; with
  ``oracle=False``, the loader's own reader asked for whole columns instead of batches."""
  from ste_jax.data import _schemas

  monkeypatch.setattr(_winner_rows, "distinct_rows", _one_by_one)
  if oracle and not str(path).endswith(".parquet"):
    from ste_jax.data import _tabular

    monkeypatch.setattr(_tabular, "_read_csv", _csv_whole)
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
    for field in ("a", "b", "outcome", "context", "weight", "line"):
      ax, ay = np.asarray(getattr(x[0], field)), np.asarray(getattr(y[0], field))
      assert ax.dtype == ay.dtype and ax.tobytes() == ay.tobytes()


@pytest.mark.parametrize("fmt", ["parquet", "csv", "quoted", "quoted.gz"])
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

  if fmt != "parquet" and options.get("weight") == "f":
    options = dict(options, weight="w")
  path = tmp_path / ("battles.csv.gz" if fmt.endswith("gz") else f"battles.{fmt}")
  path = path.with_suffix(".csv") if fmt == "quoted" else path
  _write(_messy_file_frame(11, 300, fmt), path, fmt, row_group=37)
  kwargs = dict(skip_bad_rows=not options.get("strict"), **options)
  expected = _whole_file(monkeypatch, path, kwargs)
  assert isinstance(expected, str) == bool(options.get("strict")), expected
  calls = []
  real = _distinct.DistinctBatches.add

  def add(self, *args, **kw):
    calls.append(len(args[0][0]))
    return real(self, *args, **kw)

  def whole(*args):
    raise AssertionError("the file was read whole")

  for size in (1, 5, 37, 50, 10**6):
    monkeypatch.setattr(_tabular, "_BATCH_ROWS", size)
    monkeypatch.setattr(_tabular, "_CHUNK", 61)  # blocks cut across the file's reads
    monkeypatch.setattr(_tabular, "_read_bytes", whole)
    # repeated header lines found from the parsed column (0) or from the raw bytes
    monkeypatch.setattr(_tabular, "_REPEATED_HEADER_SCAN", 0 if size in (5, 50) else 10_000)
    monkeypatch.setattr(_distinct.DistinctBatches, "add", add)
    calls.clear()
    got = _load(monkeypatch, one_by_one=False, load=load_comparisons, path=path, **kwargs)
    _same_bytes(got, expected)
    # it read in batches (a CSV batch also holds the malformed records between its lines)
    assert calls and max(calls) <= size and sum(calls) >= 300
    if size in (1, 37):  # whole columns, read in blocks too
      monkeypatch.setattr(_tabular, "_BATCH_ROWS", size)
      monkeypatch.setattr(_tabular, "_CHUNK", 61)
      _same_bytes(_whole_file(monkeypatch, path, kwargs, oracle=False), expected)
  if not isinstance(expected, str):
    report = expected[1]
    assert report.rows_read == report.rows_used + len(report.rejected)
    assert {r.reason for r in report.rejected} >= {"missing field", "unknown winner label"}


def test_line_blocks_cut_the_file_into_whole_lines(monkeypatch, tmp_path):
  from ste_jax.data import _tabular

  body = b"".join(b"x" * (i % 7) + (b"\r\n" if i % 3 else b"\n") for i in range(40)) + b"tail"
  path = tmp_path / "lines.csv"
  for bom, opener in ((b"\xef\xbb\xbf", None), (b"", gzip.open)):
    path.write_bytes(gzip.compress(bom + body) if opener else bom + body)
    for chunk, size in ((1, 1), (5, 3), (61, 7), (1 << 22, 1000)):
      monkeypatch.setattr(_tabular, "_CHUNK", chunk)
      blocks = list(_tabular._line_blocks(str(path), opener, size))
      assert b"".join(b for b, _ in blocks) == body
      assert all(b.count(b"\n") == size for b, _ in blocks[:-1])
      assert blocks[-1][0].count(b"\n") <= size
      # each block's first line number: one more than the newlines before it
      before = np.cumsum([0] + [b.count(b"\n") for b, _ in blocks[:-1]])
      assert [line for _, line in blocks] == (before + 1).tolist()


@pytest.mark.parametrize("batch", [1, 2, 10**6])
def test_a_quoted_row_across_lines_is_reported_at_its_first_line(monkeypatch, tmp_path, batch):
  from ste_jax.data import _tabular

  monkeypatch.setattr(_tabular, "_BATCH_ROWS", batch)
  path = tmp_path / "battles.csv"
  path.write_bytes(
    b"\xef\xbb\xbfa,b,winner\r\n"  # line 1
    b'x,"y\r\nz",a\r\n'  # lines 2-3
    b'"p ""q""","p ""q""",tie\r\n'  # line 4: self-comparison
    b"\r\n"  # line 5: blank
    b'"u\nv\nw",x,"bogus\n"\r\n'  # lines 6-9: unknown winner
    b"x,y,a,extra\r\n"  # line 10: malformed
    b'x,"y\r\nz",b'  # lines 11-12, no final newline
  )
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", BadRowsWarning)
    c, report = load_comparisons(path, skip_bad_rows=True)
  assert [(r.line, r.reason) for r in report.rejected] == [
    (4, "self-comparison"),
    (6, "unknown winner label"),
    (10, "malformed record"),
  ]
  assert (report.rows_read, report.rows_used) == (5, 2)
  assert sorted(c.agents) == ["x", "y\r\nz"] and np.asarray(c.outcome).tolist() == [1.0, 0.0]
