"""Bad input through the Python front door (issue 40): refused unless skipped, never a traceback.

Expected counts and line numbers are worked out by hand from the tables written here.
"""

import bz2
import csv
import gzip
import json
import lzma
import unicodedata
import warnings
import zlib

import jax
import numpy as np
import pandas as pd
import pytest

import ste_jax as ste
from ste_jax import OptionError
from ste_jax.data import BadRowsWarning, from_dataframe, from_task_results, load_comparisons


def _invariant(report):
  assert report.rows_read == report.rows_used + len(report.rejected)


def _issue_frame():
  """The issue's 8 rows: 3 unknown winner labels (rows 3, 5, 6) and a self-pair (row 8)."""
  return pd.DataFrame(
    {
      "model_a": list("xyzxyzxy"),
      "model_b": list("yzxyzxyy"),
      "winner": ["model_a", "model_b", "bogus", "tie", "nope", "zz", "model_a", "model_a"],
    }
  )


def test_leaderboard_refuses_the_bad_rows_of_a_frame():
  with pytest.raises(ste.InputError) as e:
    ste.leaderboard(jax.random.key(0), _issue_frame(), "winrate", num_replicas=0)
  text = str(e.value)
  assert "\n" not in text
  assert text.startswith(
    "the data frame: 4 bad rows of 8: unknown winner label: 3 (first at line 3"
  )
  assert "self-comparison: 1 (first at line 8" in text
  assert "skip_bad_rows=True" in text and "--skip-bad-rows" in text


def test_leaderboard_skips_with_a_warning_and_keeps_the_report():
  with pytest.warns(BadRowsWarning, match="4 bad rows of 8.*4 rows used") as caught:
    lb = ste.leaderboard(
      jax.random.key(0), _issue_frame(), "winrate", num_replicas=0, skip_bad_rows=True
    )
  assert caught[0].filename == __file__  # the warning points at the caller
  report = lb.load_report
  assert (report.rows_read, report.rows_used) == (8, 4)
  assert [(r.line, r.reason) for r in report.rejected] == [
    (3, "unknown winner label"),
    (5, "unknown winner label"),
    (6, "unknown winner label"),
    (8, "self-comparison"),
  ]
  assert lb.to_frame().attrs["load"] == report
  assert lb.table().num_comparisons == 4
  # The same report as the loader's (what the command line reads).
  with pytest.warns(BadRowsWarning):
    _, direct = from_dataframe(_issue_frame(), skip_bad_rows=True)
  assert direct == report


def test_leaderboard_reads_a_path_and_comparisons_have_no_report(tmp_path):
  path = tmp_path / "b.csv"
  path.write_text("a,b,winner\nx,y,a\ny,z,b\nz,x,a\nx,x,a\n")
  with pytest.raises(ste.InputError, match=r"b\.csv: 1 bad row of 4: self-comparison: 1 \(first"):
    ste.leaderboard(jax.random.key(0), path, "winrate", num_replicas=0)
  settings = ste.data.LoadSettings(skip_bad_rows=True)
  with pytest.warns(BadRowsWarning):
    lb = ste.leaderboard(
      jax.random.key(0), str(path), "winrate", num_replicas=0, load_settings=settings
    )
  assert (lb.load_report.rows_read, lb.load_report.rows_used) == (4, 3)
  good = ste.data.Comparisons.from_arrays([0, 1, 2], [1, 2, 0], [1.0, 1.0, 1.0])
  lb = ste.leaderboard(jax.random.key(0), good, "winrate", num_replicas=0)
  assert lb.load_report is None and "load" not in lb.to_frame().attrs
  with pytest.raises(TypeError, match="leaderboard: data must be"):
    ste.leaderboard(jax.random.key(0), [[0, 1]], "winrate", num_replicas=0)


def test_policy_drops_are_not_refused_and_clean_input_does_not_warn():
  df = pd.DataFrame({"a": ["x", "y", "x"], "b": ["y", "z", "z"], "winner": ["a", "tie", "b"]})
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    c, report = from_dataframe(df, policy={"tie": "drop"})
    assert (report.rows_used, [r.reason for r in report.rejected]) == (2, ["dropped by policy"])
    c2, report2 = from_dataframe(df)
  assert report2.rejected == () and c2.num_comparisons == 3


def test_task_results_refuse_and_skip():
  df = pd.DataFrame({"agent": ["x", "y", "x", "y"], "task": [1, 1, 2, 2], "score": [1, 0, "?", 1]})
  with pytest.raises(ste.InputError, match="2 bad rows of 4: invalid score: 1 .*line 3"):
    from_task_results(df)
  with pytest.warns(BadRowsWarning):
    c, report = from_task_results(df, skip_bad_rows=True)
  _invariant(report)
  assert [(r.line, r.reason) for r in report.rejected] == [
    (3, "invalid score"),
    (4, "no opponent on task"),
  ]


def test_strict_still_stops_at_the_first_bad_row():
  with pytest.raises(ste.InputError, match="bad row: line 3: unknown winner label"):
    from_dataframe(_issue_frame(), strict=True)


# ----------------------------------------------------------------------------- compressed files


ROWS = "a,b,winner\n" + "x,y,a\ny,z,b\nz,x,tie\n" * 3000  # 9,000 data lines


@pytest.mark.parametrize(
  "ext, compress, kind",
  [(".gz", gzip.compress, "gzip"), (".bz2", bz2.compress, "bz2"), (".xz", lzma.compress, "xz")],
)
@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_truncated_archives_are_one_line_errors(tmp_path, ext, compress, kind, suffix):
  text = (
    ROWS
    if suffix == ".csv"
    else "".join(
      json.dumps(dict(zip(("a", "b", "winner"), r.split(",")))) + "\n" for r in ROWS.split()[1:]
    )
  )
  data = compress(text.encode())
  path = tmp_path / f"t{suffix}{ext}"
  path.write_bytes(data[: len(data) // 2])
  with pytest.raises(ste.InputError) as e:
    load_comparisons(path)
  message = str(e.value)
  assert "\n" not in message
  assert message.startswith(f"{path}: damaged {kind} archive: ")
  lines = int(message.rsplit("after reading ", 1)[1].split()[0])
  assert 0 <= lines < text.count("\n")


def test_truncated_gzip_counts_the_lines_it_read(tmp_path):
  data = gzip.compress(ROWS.encode())
  cut = data[: len(data) * 3 // 4]
  path = tmp_path / "t.csv.gz"
  path.write_bytes(cut)
  # Oracle: zlib on the same bytes (gzip = header + raw deflate): the lines it can decompress.
  d = zlib.decompressobj(wbits=31)
  available = d.decompress(cut).count(b"\n")
  with pytest.raises(ste.InputError, match="Compressed file ended") as e:
    load_comparisons(path)
  lines = int(str(e.value).rsplit("after reading ", 1)[1].split()[0])
  assert 0 < lines <= available


def test_corrupt_gzip_is_a_damaged_archive(tmp_path):
  data = bytearray(gzip.compress(ROWS.encode()))
  data[40:80] = b"\xff" * 40
  path = tmp_path / "c.csv.gz"
  path.write_bytes(bytes(data))
  with pytest.raises(ste.InputError, match=r"c\.csv\.gz: damaged gzip archive: .* after reading"):
    load_comparisons(path)


def test_intact_archives_load_as_before(tmp_path):
  for ext, compress in ((".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)):
    path = tmp_path / f"t.csv{ext}"
    path.write_bytes(compress(ROWS.encode()))
    c, report = load_comparisons(path)
    assert (report.rows_read, report.rows_used, report.ties) == (9000, 9000, 3000)


# ----------------------------------------------------------------------------- long fields


def test_a_quoted_field_longer_than_the_csv_limit_loads(tmp_path):
  limit = csv.field_size_limit()
  path = tmp_path / "long.csv"
  path.write_text('a,b,winner,note\nx,y,a,"' + "z" * 200_000 + '"\ny,x,b,short\n')
  c, report = load_comparisons(path)
  assert (report.rows_read, report.rows_used) == (2, 2)
  assert csv.field_size_limit() == limit  # restored
  path.write_bytes(gzip.compress(path.read_bytes()))
  gz = tmp_path / "long.csv.gz"
  path.rename(gz)
  assert load_comparisons(gz)[1].rows_used == 2


# ----------------------------------------------------------------------------- names and cells


def test_nfc_and_invisible_characters_merge_and_are_reported():
  nfd = unicodedata.normalize("NFD", "café")
  assert nfd != "café"
  df = pd.DataFrame(
    {
      "a": ["café", nfd, "x\u200b", "\ufeffx", "x\u00ad", "y"],
      "b": ["y", "y", "y", "y", "y", "x\u200d"],
      "winner": ["a", "a", "a", "a", "a", "b"],
    }
  )
  c, report = from_dataframe(df)
  assert c.agents == ("café", "x", "y")
  _invariant(report)
  merged = dict(report.merged)
  assert merged["café"] == tuple(sorted(["café", nfd]))
  assert set(merged["x"]) == {"x\u200b", "\ufeffx", "x\u00ad", "x\u200d"}
  line = next(m for m in report.mappings if m.startswith("agent names: "))
  assert "invisible characters removed" in line and "Unicode NFC applied" in line
  assert "'cafe\\u0301'" in report.summary()  # the decomposed name shown with its escape


def test_whitespace_only_renames_keep_their_mapping_line():
  df = pd.DataFrame({"a": [" x", "y"], "b": ["y", "x "], "winner": ["a", "b"]})
  _, report = from_dataframe(df)
  assert any(m.startswith("agent names: surrounding whitespace removed: ") for m in report.mappings)


def test_list_and_dict_cells_are_rejected_with_their_line(tmp_path):
  df = pd.DataFrame(
    {
      "a": ["x", ["x"], "y", "z"],
      "b": ["y", "y", {"k": 1}, "x"],
      "winner": ["a", "a", "b", np.array(["a"])],
    }
  )
  with pytest.raises(ste.InputError, match="3 bad rows of 4: non-scalar cell: 3 .*line 2"):
    from_dataframe(df)
  with pytest.warns(BadRowsWarning):
    c, report = from_dataframe(df, skip_bad_rows=True)
  assert c.agents == ("x", "y")
  assert [(r.line, r.reason) for r in report.rejected] == [
    (2, "non-scalar cell"),
    (3, "non-scalar cell"),
    (4, "non-scalar cell"),
  ]
  assert "column 'a' holds a list ['x']" in report.rejected[0].detail
  path = tmp_path / "lists.parquet"  # a Parquet list column: every cell a list (an array here)
  df = pd.DataFrame({"a": [["x"], ["y"], ["x"]], "b": ["y", "z", "z"], "winner": ["a"] * 3})
  df.to_parquet(path)
  with pytest.raises(ste.InputError) as e:
    load_comparisons(path)
  assert "all 3 rows were rejected (non-scalar cell: 3 (first at line 1: column 'a' holds an " in (
    str(e.value)
  )
  assert "array ['x'], not a single value" in str(e.value)
  jl = tmp_path / "nested.jsonl"
  jl.write_text('{"a": "x", "b": "y", "winner": "a"}\n{"a": ["x"], "b": "y", "winner": "a"}\n')
  with pytest.warns(BadRowsWarning):
    _, report = load_comparisons(jl, skip_bad_rows=True)
  assert [(r.line, r.reason) for r in report.rejected] == [(2, "non-scalar cell")]


# ----------------------------------------------------------------------------- messages


@pytest.mark.parametrize(
  "header", ["a,b,result", "model_a,model_b", "a,b", "model_a,model_b,winnr"]
)
def test_a_missing_winner_column_is_named(tmp_path, header):
  path = tmp_path / "t.csv"
  path.write_text(header + "\n" + ",".join(["x", "y", "a"][: header.count(",") + 1]) + "\n")
  with pytest.raises(ste.InputError, match=r"column 'winner' \(winner\) not found"):
    load_comparisons(path)


def test_a_truncated_json_array_says_where(tmp_path):
  path = tmp_path / "t.json"
  path.write_text('[{"a": "x", "b": "y", "winner": "a"},\n {"a": "y", "b"')
  with pytest.raises(ste.InputError, match=r"cannot parse .*t\.json as JSON: .* at line 2 column"):
    load_comparisons(path)
  path.write_text('{"a": "x", "b": "y", "winner": "a"}\n{"a": "y", "b": "x", "winner": "b"}\n')
  assert load_comparisons(path)[1].rows_used == 2  # JSON lines in a .json file


def test_a_file_without_a_suffix_names_both_ways_to_give_the_format(tmp_path):
  path = tmp_path / "battles"
  path.write_text("a,b,winner\nx,y,a\n")
  with pytest.raises(ste.InputError, match="pass format= one of .*--file-format"):
    load_comparisons(path)
  assert load_comparisons(path, format="csv")[1].rows_used == 1


def test_a_damaged_parquet_file_is_an_input_error(tmp_path):
  path = tmp_path / "t.parquet"
  pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["a"]}).to_parquet(path)
  path.write_bytes(path.read_bytes()[:-20])
  with pytest.raises(ste.InputError, match="cannot parse .*t.parquet as Parquet"):
    load_comparisons(path)


def test_a_list_context_cell_is_rejected_not_a_context_name():
  df = pd.DataFrame(
    {"a": ["x", "y", "z"], "b": ["y", "z", "x"], "winner": ["a"] * 3, "context": ["c", ["d"], "c"]}
  )
  with pytest.warns(BadRowsWarning):
    c, report = from_dataframe(df, skip_bad_rows=True)
  assert c.contexts == ("c",)
  assert [(r.line, r.reason) for r in report.rejected] == [(2, "non-scalar cell")]


def test_a_frame_with_duplicated_column_names_is_refused():
  df = pd.DataFrame([["x", "y", "a", "b"]], columns=["a", "b", "winner", "winner"])
  with pytest.raises(ste.InputError, match=r"the data frame: duplicated column names \['winner'\]"):
    from_dataframe(df)


def test_more_agents_than_max_agents_is_refused_naming_the_option(tmp_path):
  path = tmp_path / "many.csv"
  rows = [f"a{i},a{i + 1},model_a" for i in range(12)]  # 13 agents
  path.write_text("model_a,model_b,winner\n" + "\n".join(rows) + "\n")
  comparisons, _ = load_comparisons(path, max_agents=13)
  assert comparisons.num_agents == 13
  with pytest.raises(OptionError, match=r"13 agents.*max_agents=12 \(--max-agents\)"):
    load_comparisons(path, max_agents=12)
  with pytest.raises(OptionError, match="max_agents"):
    load_comparisons(path, max_agents=1)
