"""Tests for the tabular loaders, the raw-format loaders and the load reports."""

import gzip
import itertools
import json
import os
from pathlib import Path
import subprocess
import sys

import jax
import numpy as np
import pandas as pd
import pytest

from ste_jax import InputError
from ste_jax.data import (
  LoadReport,
  RejectedRow,
  from_dataframe,
  from_task_results,
  load_comparisons,
  load_llmfao_raw,
  load_vicuna80_raw,
  pair_counts,
)
from tests.data.loaded import skipping

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
  not SHARED_DATA.is_dir(), reason=f"shared data folder {SHARED_DATA} is absent"
)

# These tests check the reports of inputs with planted bad rows: the loaders skip them (the default,
# refusing, is tested in test_bad_rows.py), and the BadRowsWarning is checked by ``skipping``.
from_dataframe = skipping(from_dataframe)
from_task_results = skipping(from_task_results)
load_comparisons = skipping(load_comparisons)
load_llmfao_raw = skipping(load_llmfao_raw)
load_vicuna80_raw = skipping(load_vicuna80_raw)


def _reasons(report):
  return [(r.line, r.reason) for r in report.rejected]


def _check_invariant(report):
  assert report.rows_read == report.rows_used + len(report.rejected)


# ----------------------------------------------------------------------------- data frames


def test_arena_schema_labels_and_names():
  df = pd.DataFrame(
    {
      "model_a": ["gpt", "llama", "gpt", "claude", "gpt"],
      "model_b": ["llama", "claude", "claude", "gpt", "llama"],
      "winner": ["model_a", "model_b", "tie", "tie (bothbad)", "llama"],
      "judge": ["u1"] * 5,
    }
  )
  c, report = from_dataframe(df)
  assert c.agents == ("claude", "gpt", "llama")  # sorted names
  np.testing.assert_array_equal(c.a, [1, 2, 1, 0, 1])
  np.testing.assert_array_equal(c.b, [2, 0, 0, 1, 2])
  np.testing.assert_array_equal(c.outcome, [1, 0, 0.5, 0.5, 0])  # last: winner named = b
  assert c.contexts == ("all",)
  assert (report.rows_read, report.rows_used, report.ties, report.rejected) == (5, 5, 2, ())


def test_simple_schema_is_detected_with_context():
  df = pd.DataFrame(
    {
      "a": ["x", "y", "x"],
      "b": ["y", "z", "z"],
      "winner": ["a", "B ", "tie"],
      "context": ["math", "code", "math"],
    }
  )
  c, report = from_dataframe(df)
  assert c.agents == ("x", "y", "z") and c.contexts == ("code", "math")
  np.testing.assert_array_equal(c.outcome, [1, 0, 0.5])
  np.testing.assert_array_equal(c.context, [1, 0, 1])
  c2, _ = from_dataframe(df, context=False)
  assert c2.contexts == ("all",)


def test_bad_rows_are_reported_with_row_numbers_never_dropped():
  df = pd.DataFrame(
    {
      "model_a": ["x", "x", "y", None, "x", "y", np.nan],
      "model_b": ["y", "x", "z", "y", "z", "x", "y"],
      "winner": ["model_a", "model_a", "draw", "model_b", np.nan, "", "tie"],
    },
    dtype=object,
  )  # object columns keep None distinct from NaN (pandas str columns do not)
  c, report = from_dataframe(df)
  assert _reasons(report) == [
    (2, "self-comparison"),
    (3, "unknown winner label"),
    (4, "missing field"),
    (5, "NaN"),
    (6, "missing field"),
    (7, "NaN"),
  ]
  assert "draw" in report.rejected[1].detail and "'winner'" in report.rejected[1].detail
  assert report.rows_used == 1 and c.num_comparisons == 1 and c.agents == ("x", "y")
  _check_invariant(report)
  with pytest.raises(ValueError, match=r"line 2: self-comparison"):
    from_dataframe(df, strict=True)


def test_fixed_agents_and_contexts_reject_unknown_names():
  df = pd.DataFrame(
    {
      "a": ["x", "y", "x"],
      "b": ["y", "q", "y"],
      "winner": ["a", "b", "b"],
      "context": ["k", "k", "other"],
    }
  )
  c, report = from_dataframe(df, agents=["y", "x", "unused"], contexts=["k"])
  assert c.agents == ("y", "x", "unused") and c.contexts == ("k",)
  np.testing.assert_array_equal(c.a, [1])
  assert _reasons(report) == [(2, "unknown agent"), (3, "unknown context")]
  assert "'q'" in report.rejected[0].detail
  with pytest.raises(ValueError, match="more than once"):
    from_dataframe(df, agents=["x", "y", "x"])


def test_weight_column():
  df = pd.DataFrame(
    {
      "a": ["x", "x", "y", "x"],
      "b": ["y", "y", "x", "y"],
      "winner": ["a", "b", "a", "a"],
      "w": [2.5, "1", -1, "heavy"],
    }
  )
  c, report = from_dataframe(df, weight="w")
  np.testing.assert_array_equal(c.weight, [2.5, 1.0])
  assert _reasons(report) == [(3, "invalid weight"), (4, "invalid weight")]


def test_missing_column_is_named():
  df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "result": ["model_a"]})
  with pytest.raises(ValueError, match="column 'winner'"):
    from_dataframe(df)
  with pytest.raises(ValueError, match="column 'model_a'"):
    from_dataframe(pd.DataFrame({"p": ["x"], "q": ["y"], "winner": ["a"]}))
  with pytest.raises(ValueError, match="column 'category'"):
    from_dataframe(df.rename(columns={"result": "winner"}), context="category")


def test_no_rows_and_all_rows_bad():
  empty = pd.DataFrame({"a": [], "b": [], "winner": []})
  with pytest.raises(ValueError, match="no comparisons"):
    from_dataframe(empty)
  bad = pd.DataFrame({"a": ["x", "y"], "b": ["x", "z"], "winner": ["a", "?"]})
  pattern = r"no comparisons(.|\n)*line 1: self-comparison(.|\n)*line 2"
  with pytest.raises(ValueError, match=pattern):
    from_dataframe(bad)


# ----------------------------------------------------------------------------- files

CSV_TEXT = (
  "a,b,winner,context\n"  # line 1
  "x,y,a,c1\n"  # 2
  "y,z,tie,c2\n"  # 3
  "\n"  # 4: blank, not a record
  'z,"x\nwith newline",b,c1\n'  # 5-6: quoted field spanning two lines (a new agent name)
  "x,x,a,c1\n"  # 7: self-comparison
  "x,y,maybe,c1\n"  # 8: unknown label
  "x,,a,c1\n"  # 9: missing field
  "x,y,NaN,c1\n"  # 10: NaN
  "x,y,a\n"  # 11: wrong number of fields
  "z,y,b,c2\n"  # 12
)


def test_csv_line_numbers(tmp_path):
  path = tmp_path / "battles.csv"
  path.write_text(CSV_TEXT)
  c, report = load_comparisons(path)
  assert _reasons(report) == [
    (7, "self-comparison"),
    (8, "unknown winner label"),
    (9, "missing field"),
    (10, "NaN"),
    (11, "malformed record"),
  ]
  assert all(r.source is None for r in report.rejected)
  assert report.source == str(path)
  assert (report.rows_read, report.rows_used, report.ties) == (9, 4, 1)
  assert c.agents == ("x", "x\nwith newline", "y", "z")
  np.testing.assert_array_equal(c.outcome, [1, 0.5, 0, 0])
  summary = report.summary()
  assert "read 9 rows" in summary and "line 8: unknown winner label" in summary
  with pytest.raises(ValueError, match=r"battles.csv: line 7: self-comparison"):
    load_comparisons(path, strict=True)


def test_formats_agree(tmp_path):
  df = pd.DataFrame(
    {
      "model_a": ["x", "y", "z", "x", "y"],
      "model_b": ["y", "z", "x", "z", "x"],
      "winner": ["model_a", "tie", "model_b", "tie (bothbad)", "model_a"],
    }
  )
  df.to_csv(tmp_path / "b.csv", index=False)
  df.to_csv(tmp_path / "b.tsv", index=False, sep="\t")
  with gzip.open(tmp_path / "b.csv.gz", "wt") as f:
    df.to_csv(f, index=False)
  df.to_json(tmp_path / "b.jsonl", orient="records", lines=True)
  df.to_json(tmp_path / "b.json", orient="records")
  df.to_json(tmp_path / "lines.json", orient="records", lines=True)  # JSON lines in a .json
  df.to_parquet(tmp_path / "b.parquet")
  expected_outcome = [1, 0.5, 0, 0.5, 1]
  for name in ["b.csv", "b.tsv", "b.csv.gz", "b.jsonl", "b.json", "lines.json", "b.parquet"]:
    c, report = load_comparisons(tmp_path / name)
    assert c.agents == ("x", "y", "z"), name
    np.testing.assert_array_equal(c.a, [0, 1, 2, 0, 1], err_msg=name)
    np.testing.assert_array_equal(c.outcome, expected_outcome, err_msg=name)
    assert (report.rows_read, report.rows_used, report.ties) == (5, 5, 2), name
  c, _ = load_comparisons(tmp_path / "lines.json", format="jsonl")  # explicit format
  assert c.num_comparisons == 5
  with pytest.raises(ValueError, match="format"):
    load_comparisons(tmp_path / "b.csv", format="xlsx")
  (tmp_path / "b.txt").write_text("x")
  with pytest.raises(InputError, match="cannot infer the file format.*format=.*--file-format"):
    load_comparisons(tmp_path / "b.txt")


def test_jsonl_line_numbers(tmp_path):
  lines = [
    json.dumps({"model_a": "x", "model_b": "y", "winner": "model_a"}),  # 1
    "",  # 2 blank
    "{not json",  # 3
    json.dumps({"model_a": "x", "winner": "model_a"}),  # 4 missing key
    json.dumps({"model_a": "x", "model_b": "y", "winner": None}),  # 5 null
    json.dumps([1, 2]),  # 6 not an object
    json.dumps({"model_a": "x", "model_b": "y", "winner": float("nan")}),  # 7 NaN
    json.dumps({"model_a": "y", "model_b": "y", "winner": "tie"}),  # 8 self
  ]
  path = tmp_path / "b.jsonl"
  path.write_text("\n".join(lines) + "\n")
  c, report = load_comparisons(path)
  assert _reasons(report) == [
    (3, "malformed record"),
    (4, "missing field"),
    (5, "missing field"),
    (6, "malformed record"),
    (7, "NaN"),
    (8, "self-comparison"),
  ]
  assert report.rows_read == 7 and c.num_comparisons == 1
  with pytest.raises(ValueError, match=r"line 3: malformed record"):
    load_comparisons(path, strict=True)


def test_json_array_record_numbers(tmp_path):
  path = tmp_path / "b.json"
  path.write_text(
    json.dumps(
      [
        {"model_a": "x", "model_b": "y", "winner": "model_b"},
        {"model_a": "x", "model_b": "y", "winner": "bogus"},
      ]
    )
  )
  c, report = load_comparisons(path)
  assert _reasons(report) == [(2, "unknown winner label")]
  np.testing.assert_array_equal(c.outcome, [0])


@pytest.mark.parametrize("content", ["", "a,b,winner\n", "[]", "\n\n"])
def test_empty_files(tmp_path, content):
  suffix = ".json" if content.startswith("[") else ".csv"
  if content == "\n\n":
    suffix = ".jsonl"
  path = tmp_path / f"empty{suffix}"
  path.write_text(content)
  with pytest.raises(ValueError, match="no comparisons"):
    load_comparisons(path)


def test_missing_column_in_file(tmp_path):
  path = tmp_path / "b.csv"
  path.write_text("model_a,model_b,outcome\nx,y,1\n")
  with pytest.raises(ValueError, match="column 'winner'.*b.csv"):
    load_comparisons(path)
  with pytest.raises(ValueError, match="column 'res'"):
    load_comparisons(path, winner="res")


def test_report_types_and_summary():
  report = LoadReport(
    rows_read=3,
    rows_used=1,
    ties=0,
    num_comparisons=1,
    source="f.csv",
    rejected=(
      RejectedRow(2, "NaN", "column 'winner' is NaN"),
      RejectedRow(3, "NaN", "", source="g.jsonl"),
    ),
  )
  assert report.reasons() == {"NaN": 2}
  text = report.summary(max_lines=1)
  assert text.startswith("f.csv: read 3 rows") and "line 2: NaN (column 'winner' is NaN)" in text
  assert "1 more" in text
  assert report.rejected[1].describe() == "g.jsonl line 3: NaN"


# ----------------------------------------------------------------------------- task results


def _pairwise_oracle(df):
  """(agent_i, agent_j, task) -> outcome for i<j by name, by brute force over each task."""
  out = {}
  for task, group in df.groupby("task"):
    rows = list(group.itertuples())
    for r, s in itertools.combinations(rows, 2):
      (r, s) = (r, s) if r.agent < s.agent else (s, r)
      outcome = 1.0 if r.score > s.score else 0.0 if r.score < s.score else 0.5
      out[(r.agent, s.agent, task)] = outcome
  return out


def test_from_task_results_matches_brute_force():
  rng = np.random.default_rng(1)
  rows = [
    (f"ag{i}", f"t{t}", float(rng.integers(0, 3)), f"fam{t % 2}")
    for t in range(12)
    for i in range(5)
    if rng.random() < 0.7
  ]
  df = pd.DataFrame(rows, columns=["agent", "task", "score", "family"])
  c, report = from_task_results(df, context="family")
  oracle = _pairwise_oracle(df[df.groupby("task")["agent"].transform("size") > 1])
  got = {}
  columns = (np.asarray(c.a), np.asarray(c.b), np.asarray(c.outcome), np.asarray(c.context))
  for a, b, o, k in zip(*columns):
    got.setdefault((c.agents[a], c.agents[b], c.contexts[k]), []).append(float(o))
  expect = {}
  fam = dict(zip(df.task, df.family))
  for (i, j, t), o in oracle.items():
    expect.setdefault((i, j, fam[t]), []).append(o)
  assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in expect.items()}
  assert report.num_comparisons == len(oracle) == c.num_comparisons
  assert report.ties == sum(o == 0.5 for o in oracle.values())
  lonely = int((df.groupby("task")["agent"].transform("size") == 1).sum())
  assert report.reasons().get("no opponent on task", 0) == lonely
  _check_invariant(report)


def test_from_task_results_hand_example_and_rejections():
  df = pd.DataFrame(
    {
      "agent": ["A", "B", "C", "A", "B", "C", "A", "B", " ", "A"],
      "task": ["t1", "t1", "t1", "t2", "t2", "t3", "t1", "t4", "t4", "t4"],
      "ok": [True, False, True, False, False, True, False, np.nan, True, "yes"],
    }
  )
  c, report = from_task_results(df, score="ok")
  assert c.agents == ("A", "B", "C")
  # t1: A>B, A=C, B<C ; t2: A=B
  got = sorted(
    zip(np.asarray(c.a).tolist(), np.asarray(c.b).tolist(), np.asarray(c.outcome).tolist())
  )
  assert got == [(0, 1, 0.5), (0, 1, 1.0), (0, 2, 0.5), (1, 2, 0.0)]
  assert _reasons(report) == [
    (6, "no opponent on task"),
    (7, "duplicate (agent, task)"),
    (8, "NaN"),
    (9, "missing field"),
    (10, "invalid score"),
  ]
  assert "row 1" in report.rejected[1].detail
  assert report.rows_used == 5 and report.ties == 2
  with pytest.raises(ValueError, match="line 6: no opponent"):
    from_task_results(df, score="ok", strict=True)
  with pytest.raises(ValueError, match="column 'score'"):
    from_task_results(df)


def test_from_task_results_inconsistent_context_and_no_pairs():
  df = pd.DataFrame(
    {
      "agent": ["A", "B", "C"],
      "task": ["t", "t", "t"],
      "score": [1, 0, 1],
      "env": ["os", "os", "db"],
    }
  )
  c, report = from_task_results(df, context="env")
  assert _reasons(report) == [(3, "inconsistent record")] and c.contexts == ("os",)
  c, report = from_task_results(df, agents=["C", "B", "A"])  # a fixed agent order
  assert c.agents == ("C", "B", "A")
  got = sorted(
    zip(np.asarray(c.a).tolist(), np.asarray(c.b).tolist(), np.asarray(c.outcome).tolist())
  )
  assert got == [(0, 1, 1.0), (0, 2, 0.5), (1, 2, 0.0)]  # C>B, C=A, B<A
  c, report = from_task_results(df, agents=["A", "B"])
  assert _reasons(report) == [(3, "unknown agent")] and c.num_comparisons == 1
  with pytest.raises(ValueError, match="no comparisons"):
    from_task_results(pd.DataFrame({"agent": ["A", "B"], "task": ["t", "u"], "score": [1, 0]}))


# ----------------------------------------------------------------------------- raw formats


def _write_jsonl(path, records):
  path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_vicuna80_raw_conversion_rules(tmp_path):
  ratings = tmp_path / "raw" / "ratings-human"
  ratings.mkdir(parents=True)
  _write_jsonl(
    tmp_path / "raw" / "vicuna_questions.jsonl",
    [{"question_id": 1, "category": "math"}, {"question_id": 2, "category": "coding"}],
  )
  _write_jsonl(
    ratings / "answer_gpt35-vs-answer_bard-human-reviewer_threeclass.jsonl",
    [
      {"question_id": 1, "score": 1},
      {"question_id": 2, "score": 2},
      {"question_id": 2, "score": 3},
      {"question_id": 7, "score": 1},
      {"question_id": 1, "score": 4},
    ],
  )
  _write_jsonl(
    ratings / "answer_claude-vs-answer_bard-human-reviewer_threeclass.jsonl",
    [{"question_id": 1, "score": 1}],
  )
  (ratings / "notes.txt").write_text("ignored")
  c, report = load_vicuna80_raw(tmp_path)
  assert c.agents == ("bard", "gpt-3.5-turbo") and c.contexts == ("coding", "math")
  np.testing.assert_array_equal(c.a, [1, 1, 1])
  np.testing.assert_array_equal(c.outcome, [1, 0, 0.5])
  np.testing.assert_array_equal(c.context, [1, 0, 0])
  name = "answer_gpt35-vs-answer_bard-human-reviewer_threeclass.jsonl"
  assert [(r.source, r.line, r.reason) for r in report.rejected] == [
    (name, 4, "unknown context"),
    (name, 5, "unknown winner label"),
  ]
  c2, _ = load_vicuna80_raw(tmp_path / "raw", exclude_agents=())
  assert c2.agents == ("bard", "claude", "gpt-3.5-turbo")


def test_llmfao_raw_conversion_rules(tmp_path):
  _write_jsonl(tmp_path / "prompts.jsonl", [{"id": 8, "slug": "k8s"}, {"id": 5, "slug": "qft"}])
  _write_jsonl(tmp_path / "models.jsonl", [{"id": 1, "name": "M one"}, {"id": 2, "name": "M two"}])
  (tmp_path / "crowd-comparisons.csv").write_text(
    "id,prompt,model_x,model_y,worker,winner,left,right\n"
    "0,8,1,2,10,left,M one,M two\n"
    "0,8,1,2,11,right,M two,M one\n"
    "1,5,1,2,12,tie,M one,M two\n"
    "1,9,1,2,12,tie,M one,M two\n"  # line 5: unknown prompt
    "1,5,1,2,13,both,M one,M two\n"  # line 6: unknown label
    "1,5,1,1,13,left,M one,M two\n"  # line 7: ids do not match names
  )
  c, report = load_llmfao_raw(tmp_path)
  assert c.agents == ("M one", "M two") and c.contexts == ("k8s", "qft")
  np.testing.assert_array_equal(c.a, [0, 1, 0])
  np.testing.assert_array_equal(c.outcome, [1, 0, 0.5])
  np.testing.assert_array_equal(c.context, [0, 0, 1])
  assert _reasons(report) == [
    (5, "unknown context"),
    (6, "unknown winner label"),
    (7, "inconsistent record"),
  ]


def _groupby_counts(df, agents, contexts):
  """Independent oracle: wins (ties as halves) and ties per (context, a, b) via pandas."""
  n, k = len(agents), len(contexts)
  ai = df["a"].map({x: i for i, x in enumerate(agents)}).to_numpy()
  bi = df["b"].map({x: i for i, x in enumerate(agents)}).to_numpy()
  ci = df["context"].map({x: i for i, x in enumerate(contexts)}).to_numpy()
  wins = np.zeros((k, n, n))
  ties = np.zeros((k, n, n))
  frame = pd.DataFrame({"c": ci, "a": ai, "b": bi, "w": df["winner"].to_numpy()})
  for (c, a, b, w), cnt in frame.groupby(["c", "a", "b", "w"]).size().items():
    if w == "a":
      wins[c, a, b] += cnt
    elif w == "b":
      wins[c, b, a] += cnt
    else:
      ties[c, a, b] += cnt
      ties[c, b, a] += cnt
  return wins + ties / 2, ties


@needs_shared  # the raw files are not bundled; the bundled CSV is tested below without ../shared
@pytest.mark.parametrize(
  "folder, loader, rows, ties, num_agents, num_contexts",
  [
    ("vicuna80_qlora_human", load_vicuna80_raw, 6720, 765, 8, 9),
    ("llmfao_crowd", load_llmfao_raw, 8931, 3471, 59, 13),
  ],
)
def test_shared_datasets_raw_equals_csv(folder, loader, rows, ties, num_agents, num_contexts):
  c_csv, rep_csv = load_comparisons(SHARED_DATA / folder / "comparisons.csv")
  c_raw, rep_raw = loader(SHARED_DATA / folder)
  for c, rep in ((c_csv, rep_csv), (c_raw, rep_raw)):
    assert (rep.rows_read, rep.rows_used, rep.ties, rep.rejected) == (rows, rows, ties, ())
    assert (c.num_agents, c.num_contexts) == (num_agents, num_contexts)
  assert c_raw.agents == c_csv.agents and c_raw.contexts == c_csv.contexts
  for by_context in (False, True):
    k_csv = pair_counts(c_csv, by_context=by_context)
    k_raw = pair_counts(c_raw, by_context=by_context)
    for x, y in zip(jax.tree.leaves(k_csv), jax.tree.leaves(k_raw)):
      np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
  # and both equal an independent pandas count of comparisons.csv
  df = pd.read_csv(SHARED_DATA / folder / "comparisons.csv", keep_default_na=False)
  wins, tie_counts = _groupby_counts(df, c_csv.agents, c_csv.contexts)
  k = pair_counts(c_raw, by_context=True)
  np.testing.assert_array_equal(np.asarray(k.wins), wins)
  np.testing.assert_array_equal(np.asarray(k.ties), tie_counts)


def _bundled_vicuna80():
  from ste_jax._cli import bundled_dataset_path

  return Path(str(bundled_dataset_path()))


def test_bundled_vicuna80_csv_counts():
  """The Vicuna-80 ``comparisons.csv`` bundled with the package (no ``../shared`` needed): all rows
  load, and the counts equal an independent pandas count of the file."""
  path = _bundled_vicuna80()
  c, rep = load_comparisons(path)
  assert (rep.rows_read, rep.rows_used, rep.ties, rep.rejected) == (6720, 6720, 765, ())
  assert (c.num_agents, c.num_contexts) == (8, 9)
  df = pd.read_csv(path, keep_default_na=False)
  wins, tie_counts = _groupby_counts(df, c.agents, c.contexts)
  k = pair_counts(c, by_context=True)
  np.testing.assert_array_equal(np.asarray(k.wins), wins)
  np.testing.assert_array_equal(np.asarray(k.ties), tie_counts)


@needs_shared
def test_bundled_vicuna80_equals_shared_copy():
  assert (
    _bundled_vicuna80().read_bytes()
    == (SHARED_DATA / "vicuna80_qlora_human" / "comparisons.csv").read_bytes()
  )


def test_import_does_not_load_pandas():
  code = "import sys, ste_jax.data; assert 'pandas' not in sys.modules, 'pandas imported'"
  root = Path(__file__).resolve().parents[2]
  env = dict(os.environ, JAX_PLATFORMS="cpu")
  proc = subprocess.run(
    [sys.executable, "-c", code],
    cwd=root,
    env=env,
    capture_output=True,
    text=True,
    timeout=120,
    check=False,
  )
  assert proc.returncode == 0, proc.stderr
