"""Fuzzed bad input (issue 40): random small tables with planted bad rows, in every file format.

Each example draws a table of one input schema (battles, per-task scores, preferences, judges,
games), some of whose rows are planted bad (an unknown label, a self-pair, an empty or NaN cell,
a wrong type, a repeated header line, a 200,000-character field), and writes it as CSV (quoted or
not), gzipped CSV (also truncated), JSONL, JSON and Parquet. The properties:

* the loaders (files, and :func:`~ste_jax.data.from_dataframe` on the same table) raise nothing
  but :class:`~ste_jax.InputError` / :class:`~ste_jax.OptionError`;
* ``rows read = used + rejected``, every rejected row has its own line, and every planted bad row
  is among them, at the line where it was written;
* without ``skip_bad_rows`` bad rows are refused, naming their count; with it, the result is the
  same report;
* ``leaderboard()`` and ``ste-jax score`` (in process) report what the loader reports.

The default run is small (``max_examples`` below); ``-m slow`` runs the larger profile.
"""

import csv
import gzip
import json
import math
import os
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import jax
import pandas as pd
import pytest

import ste_jax as ste
from ste_jax import _cli
from ste_jax.data import BadRowsWarning, from_dataframe, load_comparisons

NAMES = ("x", "y", "z", "w")
HUGE = "q" * 200_000  # longer than the csv module's default field limit (131,072)
NAN = float("nan")

# schema -> (columns, good row, {bad kind: row}); each bad row is certainly rejected.
SCHEMAS = {
  "simple": ("a", "b", "winner"),
  "tasks": ("agent", "task", "score"),
  "alpacaeval": ("generator_1", "generator_2", "preference"),
  "mtbench": ("model_1", "model_2", "g1_winner", "g2_winner"),
  "winner-loser": ("winner_name", "loser_name"),
}
BAD_KINDS = ("unknown", "self", "empty", "nan", "type", "huge", "header")


def _good(schema, draw):
  a, b = draw(st.sampled_from([(p, q) for p in NAMES for q in NAMES if p != q]))
  if schema == "simple":
    return [a, b, draw(st.sampled_from(["a", "b", "tie"]))]
  if schema == "tasks":
    return [a, draw(st.sampled_from(["t1", "t2", "t3"])), draw(st.sampled_from(["0", "1", "0.5"]))]
  if schema == "alpacaeval":
    return [a, b, draw(st.sampled_from(["1.0", "2.0", "1.5"]))]
  if schema == "mtbench":
    labels = st.sampled_from(["model_1", "model_2", "tie"])
    return [a, b, draw(labels), draw(labels)]
  return [a, b]


def _bad(schema, kind, row):
  """``row`` made bad by ``kind`` (``None`` when the kind does not apply to the schema)."""
  row = list(row)
  columns = SCHEMAS[schema]
  label = {"simple": 2, "tasks": 2, "alpacaeval": 2, "mtbench": 2}.get(schema)
  if kind == "header":
    return list(columns)
  if kind == "self":
    if schema == "tasks":
      return None
    row[1] = row[0]
  elif kind == "empty":
    row[0] = ""
  elif kind == "nan":
    row[label if label is not None else 1] = NAN
  elif kind == "unknown":
    if label is None:
      return None
    row[label] = "bogus"
  elif kind == "type":
    if label is None:
      return None
    row[label] = 7 if schema in ("simple", "mtbench") else "abc"
  elif kind == "huge":
    if label is None:
      return None
    row[label] = HUGE
  return row


@st.composite
def tables(draw, schema):
  """``(columns, rows, bad)``: ``bad[i]`` says whether row ``i`` is planted bad."""
  n = draw(st.integers(3, 10))
  rows, bad = [], []
  for _ in range(n):
    row = _good(schema, draw)
    kind = draw(st.sampled_from((None,) * 5 + BAD_KINDS))
    planted = None if kind is None else _bad(schema, kind, row)
    rows.append(row if planted is None else planted)
    bad.append(planted is not None and not (kind == "header" and schema == "winner-loser"))
  return list(SCHEMAS[schema]), rows, bad


def _write(fmt, path, columns, rows, quote_all=False):
  """Writes the table; returns the line of each row (``None``: the format cannot hold it)."""
  if fmt in ("csv", "csv.gz"):
    opener = gzip.open if fmt == "csv.gz" else open
    with opener(path, "wt", newline="", encoding="utf-8") as f:
      w = csv.writer(f, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
      w.writerow(columns)
      w.writerows(rows)
    return list(range(2, len(rows) + 2))
  records = [dict(zip(columns, r)) for r in rows]
  if fmt == "jsonl":
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
  elif fmt == "json":
    path.write_text(json.dumps(records))
  else:  # parquet: one type per column, so every cell is a string or missing
    frame = pd.DataFrame(
      {
        c: [None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in col]
        for c, col in zip(columns, zip(*rows))
      }
    )
    frame.to_parquet(path)
  return list(range(1, len(rows) + 1))


def _load(path, **kwargs):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", BadRowsWarning)
    return load_comparisons(path, **kwargs)


def _check_load(path, lines, bad):
  """The loader's properties on one file; returns its report (``None``: refused as a whole)."""
  try:
    _, report = _load(path, skip_bad_rows=True)
  except (ste.InputError, ste.OptionError) as e:
    assert str(e).startswith(("no comparisons", str(path))), str(e)
    return None
  assert report.rows_read == report.rows_used + len(report.rejected) == len(lines)
  rejected = [r.line for r in report.rejected]
  assert len(set(rejected)) == len(rejected) and set(rejected) <= set(lines)
  planted = {line for line, b in zip(lines, bad) if b}
  assert planted <= set(rejected), (planted, report.summary())
  if report.bad_rows:
    with pytest.raises(ste.InputError) as e:
      load_comparisons(path)
    n = len(report.bad_rows)
    assert str(e.value).startswith(f"{path}: {n} bad row{'s' if n > 1 else ''} of {len(lines)}: ")
    assert report.reason_summary(rows=report.bad_rows) in str(e.value)
  else:
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      assert load_comparisons(path)[1] == report
  return report


FORMATS = ("csv", "csv.gz", "jsonl", "json", "parquet")


def _fuzz_loaders(tmp_path, schema, table, quote_all):
  columns, rows, bad = table
  for fmt in FORMATS:
    path = tmp_path / f"t.{fmt}"
    lines = _write(fmt, path, columns, rows, quote_all=quote_all)
    _check_load(path, lines, bad)
  # The same table as a data frame: rows numbered from 1.
  frame = pd.DataFrame(rows, columns=columns)
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore", BadRowsWarning)
      _, report = from_dataframe(frame, skip_bad_rows=True)
  except (ste.InputError, ste.OptionError) as e:
    assert str(e).startswith("no comparisons"), str(e)
  else:
    assert report.rows_read == report.rows_used + len(report.rejected) == len(rows)
    lines = [r.line for r in report.rejected]
    assert len(set(lines)) == len(lines)
    assert {i + 1 for i, b in enumerate(bad) if b} <= set(lines)
    if report.bad_rows:
      with pytest.raises(ste.InputError, match=f"the data frame: {len(report.bad_rows)} bad row"):
        from_dataframe(frame)
  # Truncated archive: one line naming the file and how far it was read.
  data = (tmp_path / "t.csv.gz").read_bytes()
  cut = tmp_path / "cut.csv.gz"
  cut.write_bytes(data[: len(data) // 2])
  with pytest.raises(ste.InputError, match=r"cut\.csv\.gz: damaged gzip archive: .* after reading"):
    load_comparisons(cut)
  # A duplicated column name in the header.
  dup = tmp_path / "dup.csv"
  dup.write_text(",".join(columns + columns[:1]) + "\n" + ",".join(["v"] * (len(columns) + 1)))
  with pytest.raises(ste.InputError, match="duplicated column names"):
    load_comparisons(dup)


def _profile(default: int, large: int) -> pytest.MarkDecorator:
  """``max_examples``: ``default`` in the default run, ``large`` under ``-m slow``."""
  return pytest.mark.parametrize(
    "max_examples", [default, pytest.param(large, marks=pytest.mark.slow)], ids=["small", "large"]
  )


@_profile(10, 400)
@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_loaders_on_fuzzed_tables(tmp_path_factory, schema, max_examples):
  @settings(max_examples=max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
  @given(table=tables(schema), quote_all=st.booleans())
  def run(table, quote_all):
    _fuzz_loaders(tmp_path_factory.mktemp("fuzz"), schema, table, quote_all)

  run()


def _fuzz_front_doors(tmp_path, schema, table, capsys):
  columns, rows, bad = table
  path = tmp_path / "t.csv"
  lines = _write("csv", path, columns, rows)
  report = _check_load(path, lines, bad)
  key = jax.random.key(0)
  argv = ["score", str(path), "--estimator", "winrate", "--bootstrap", "0", "--output", "json"]
  capsys.readouterr()
  code = _cli.main(argv + ["--no-progress"])
  out, err = capsys.readouterr()
  if report is None:  # refused as a whole: by leaderboard() and by the command line
    with pytest.raises((ste.InputError, ste.OptionError)):
      with warnings.catch_warnings():
        warnings.simplefilter("ignore", BadRowsWarning)
        ste.leaderboard(key, path, "winrate", num_replicas=0, skip_bad_rows=True)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    return
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", BadRowsWarning)
    lb = ste.leaderboard(key, path, "winrate", num_replicas=0, skip_bad_rows=True)
  assert lb.load_report == report and lb.to_frame().attrs["load"] == report
  if report.bad_rows:  # refused by default, with the loader's count and reasons on one line
    with pytest.raises(ste.InputError, match=f"{len(report.bad_rows)} bad row"):
      ste.leaderboard(key, path, "winrate", num_replicas=0)
    assert code == 1, err
    (line,) = err.strip().splitlines()
    assert line.startswith("ste-jax score: error: ")
    assert f"{len(report.bad_rows)} bad row" in line
    assert report.reason_summary(rows=report.bad_rows) in line
    code, (out, err) = _cli.main(argv + ["--no-progress", "--skip-bad-rows"]), capsys.readouterr()
  assert code == 0, err
  load = json.loads(out)["load"]
  assert (load["rows_read"], load["rows_used"], load["rejected"]) == (
    report.rows_read,
    report.rows_used,
    len(report.rejected),
  )
  assert load["rejected_by_reason"] == report.reasons()
  if report.bad_rows:  # --skip-bad-rows: the report on stderr, as the loader writes it
    assert report.summary().replace(str(path), "") in err.replace(str(path), "")


@_profile(2, 50)
@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_leaderboard_and_cli_report_what_the_loader_reports(
  tmp_path_factory, capsys, schema, max_examples
):
  @settings(
    max_examples=max_examples,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
  )
  @given(table=tables(schema))
  def run(table):
    _fuzz_front_doors(tmp_path_factory.mktemp("front"), schema, table, capsys)

  run()


def test_the_planted_rows_are_written_where_the_lines_say(tmp_path):
  """The line bookkeeping the fuzz tests rely on, checked by reading the files back."""
  columns, rows = ["a", "b", "winner"], [["x", "y", "a"], ["x", "x", "a"], ["y", "z", HUGE]]
  path = tmp_path / "t.csv"
  assert _write("csv", path, columns, rows, quote_all=True) == [2, 3, 4]
  text = path.read_text().splitlines()
  assert text[2] == '"x","x","a"' and len(text[3]) > len(HUGE)
  assert os.path.getsize(path) > len(HUGE)
  assert _bad("tasks", "self", ["x", "t1", "1"]) is None
  assert _bad("simple", "huge", ["x", "y", "a"]) == ["x", "y", HUGE]
