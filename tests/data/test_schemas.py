"""Tests for the input schemas (issue 12): every fixture loads to hand-computed pair counts,
auto-detection, every outcome policy, the ``(none)`` context, rejection reasons with line
numbers, the name-normalization report and the position-bias report.

The fixtures in ``tests/data/fixtures`` were written by hand from each loader's documented
convention; the expected counts below are worked out by hand in the comments.
"""

import json

import numpy as np
import pandas as pd
import pytest

from ste_jax.data import (
  OutcomePolicy,
  detect_schema,
  from_dataframe,
  load_comparisons,
)
from tests.data.loaded import FIX, skipping
from tests.data.loaded import rejected_lines as _reasons
from tests.data.loaded import wins_by_pair as _wins

# These tests check the reports of inputs with planted bad rows: the loaders skip them (the default,
# refusing, is tested in test_bad_rows.py), and the BadRowsWarning is checked by ``skipping``.
from_dataframe = skipping(from_dataframe)
load_comparisons = skipping(load_comparisons)


def _invariant(report):
  assert report.rows_read == report.rows_used + len(report.rejected)


# ----------------------------------------------------------------------------- Chatbot Arena


def test_arena_battles_counts_position_bias_and_names():
  c, report = load_comparisons(FIX / "arena_battles.csv")
  assert report.schema == "arena" and c.agents == ("claude", "gpt-4", "llama")
  # line 2: gpt-4 > claude; 3: gpt-4 > claude; 4: gpt-4 = llama; 5, 6: both-bad llama = claude;
  # 7: 'llama ' (trailing space) > gpt-4.
  assert _wins(c) == {
    ("gpt-4", "claude"): 2,
    ("gpt-4", "llama"): 0.5,
    ("llama", "gpt-4"): 1.5,
    ("llama", "claude"): 1,
    ("claude", "llama"): 1,
  }
  assert (report.rows_read, report.rows_used, report.ties, report.rejected) == (6, 6, 3, ())
  bias = report.position_bias  # model_a won lines 2 and 7, model_b line 3
  assert (bias.first_wins, bias.second_wins, bias.ties) == (2, 1, 3)
  assert bias.share == pytest.approx(2 / 3)
  assert report.renamed == (("llama ", "llama", 1),)
  assert report.merged == (("llama", ("llama", "llama ")),)
  text = report.summary()
  assert "schema: arena" in text and "'llama ' -> 'llama'" in text and "merged names" in text
  assert "position bias: first position won 66.7%" in text
  assert any("'tie (bothbad)' -> both bad" in m for m in report.mappings)


def test_arena_tie_and_both_bad_policies_are_separate():
  c, report = load_comparisons(FIX / "arena_battles.csv", policy=OutcomePolicy(tie="drop"))
  assert _reasons(report) == [(4, "dropped by policy")] and report.bad_rows == ()
  assert _wins(c)[("llama", "gpt-4")] == 1 and ("gpt-4", "llama") not in _wins(c)
  assert _wins(c)[("llama", "claude")] == 1  # both-bad ties still count half
  c, report = load_comparisons(FIX / "arena_battles.csv", policy={"both_bad": "drop"})
  assert _reasons(report) == [(5, "dropped by policy"), (6, "dropped by policy")]
  assert "both_bad=drop" in report.rejected[0].detail
  assert ("llama", "claude") not in _wins(c) and _wins(c)[("gpt-4", "llama")] == 0.5
  _invariant(report)
  with pytest.raises(ValueError, match="tie='never'"):
    OutcomePolicy(tie="never")
  with pytest.raises(ValueError, match="strong_weight"):
    OutcomePolicy(strong_weight=0)


def test_partly_empty_context_goes_to_none():
  c, report = load_comparisons(FIX / "arena_battles.csv", context="language")
  assert c.contexts == ("(none)", "de", "en") and report.rejected == ()
  assert _wins(c, by_context=True)[("gpt-4", "llama", "(none)")] == 0.5
  assert any("empty or NaN on 2 of 6 rows" in m for m in report.mappings)


def test_all_empty_context_column_is_not_a_rejection(tmp_path):
  path = tmp_path / "b.csv"
  path.write_text("a,b,winner,context\n" + "x,y,a,\n" * 3 + "y,x,a,\n")
  c, report = load_comparisons(path)
  assert c.contexts == ("(none)",) and report.rows_used == 4 and report.rejected == ()
  assert any("every row" in m for m in report.mappings)
  df = pd.DataFrame(
    {"a": ["x", "y"], "b": ["y", "x"], "winner": ["a", "b"], "context": [None, np.nan]},
    dtype=object,
  )
  c, report = from_dataframe(df)
  assert c.contexts == ("(none)",) and report.rows_used == 2


def test_arena_55k_one_hot():
  c, report = load_comparisons(FIX / "arena_55k.csv")
  assert report.schema == "arena"
  # 1: gpt-4 > claude; 2: tie; 3: gpt-4 (model_b) > llama; 4: two winners -> rejected.
  assert _wins(c) == {("gpt-4", "claude"): 1.5, ("claude", "gpt-4"): 0.5, ("gpt-4", "llama"): 1}
  assert _reasons(report) == [(5, "inconsistent record")]
  assert "1/1/0" in report.rejected[0].detail
  bias = report.position_bias
  assert (bias.first_wins, bias.second_wins, bias.ties) == (1, 1, 1)


# ----------------------------------------------------------------------------- MT-Bench


def test_mtbench_default_inconsistent_is_tie():
  c, report = load_comparisons(FIX / "mtbench_pair.jsonl")
  assert report.schema == "mtbench"
  # 1: gpt-4 > vicuna both orders; 2: orders disagree -> tie; 3: tie/tie; 4: disagree -> tie;
  # 5: judge error (rejected); 6: vicuna > llama both orders.
  assert _wins(c) == {
    ("gpt-4", "vicuna-13b"): 1.5,
    ("vicuna-13b", "gpt-4"): 0.5,
    ("vicuna-13b", "llama-13b"): 1.5,
    ("llama-13b", "vicuna-13b"): 0.5,
    ("llama-13b", "gpt-4"): 0.5,
    ("gpt-4", "llama-13b"): 0.5,
  }
  assert _reasons(report) == [(5, "judge error")] and report.ties == 3
  # Individual verdicts of lines 1-4 and 6 by position: first wins 1+2+2+1, second 1+1, ties 2.
  bias = report.position_bias
  assert (bias.first_wins, bias.second_wins, bias.ties) == (6, 2, 2)
  _invariant(report)


def test_mtbench_order_swap_policies():
  c, report = load_comparisons(
    FIX / "mtbench_pair.jsonl", policy=OutcomePolicy(order_swap="consistent")
  )
  assert _reasons(report) == [
    (2, "dropped by policy"),
    (4, "dropped by policy"),
    (5, "judge error"),
  ]
  assert c.num_comparisons == 3 and report.ties == 1
  assert _wins(c)[("gpt-4", "vicuna-13b")] == 1 and ("gpt-4", "llama-13b") not in _wins(c)
  c, report = load_comparisons(FIX / "mtbench_pair.jsonl", policy={"order_swap": "separate"})
  assert c.num_comparisons == 10 and report.rows_used == 5
  assert _wins(c) == {
    ("gpt-4", "vicuna-13b"): 3,
    ("vicuna-13b", "gpt-4"): 1,
    ("vicuna-13b", "llama-13b"): 3,
    ("llama-13b", "vicuna-13b"): 1,
    ("llama-13b", "gpt-4"): 1,
    ("gpt-4", "llama-13b"): 1,
  }
  c, _ = load_comparisons(FIX / "mtbench_pair.jsonl", context="turn")
  assert c.contexts == ("1", "2")


# ----------------------------------------------------------------------------- Arena-Hard


def test_arena_hard_separate_games_and_strong_weight():
  c, report = load_comparisons(FIX / "arena_hard.jsonl")
  assert report.schema == "arena-hard" and c.agents == ("gpt-4-0314", "model-x", "model-y")
  # model-x: q1 B>>A (x, x3) + A>B (x = A in game 2); q2 A>B (baseline) + A>B (x).
  # model-y: q1 A=B (tie) + B>>A (baseline = B in game 2, x3); q2 has a null verdict: rejected.
  assert _wins(c) == {
    ("gpt-4-0314", "model-x"): 1,
    ("model-x", "gpt-4-0314"): 5,
    ("gpt-4-0314", "model-y"): 3.5,
    ("model-y", "gpt-4-0314"): 0.5,
  }
  assert _reasons(report) == [(4, "unknown winner label")]
  assert "game 2" in report.rejected[0].detail and c.num_comparisons == 6
  bias = report.position_bias  # answer shown as A won 3, as B 2, one tie
  assert (bias.first_wins, bias.second_wins, bias.ties) == (3, 2, 1)
  c, _ = load_comparisons(FIX / "arena_hard.jsonl", policy=OutcomePolicy(strong_weight=1))
  assert _wins(c)[("model-x", "gpt-4-0314")] == 3 and _wins(c)[("gpt-4-0314", "model-y")] == 1.5
  c, report = load_comparisons(
    FIX / "arena_hard.jsonl", policy={"order_swap": "tie"}, baseline="ignored-when-unused"
  )
  assert c.agents[0] == "ignored-when-unused"
  # q1-x: both games x -> x wins (weights 3 and 1 differ: weight 1); q2-x, q1-y disagree: ties.
  assert _wins(c) == {
    ("ignored-when-unused", "model-x"): 0.5,
    ("model-x", "ignored-when-unused"): 1.5,
    ("ignored-when-unused", "model-y"): 0.5,
    ("model-y", "ignored-when-unused"): 0.5,
  }


# ----------------------------------------------------------------------------- AlpacaEval


def test_alpacaeval_soft_outcomes_and_policies():
  path = FIX / "alpacaeval_annotations.json"
  c, report = load_comparisons(path)
  assert report.schema == "alpacaeval"
  # 1: pref 2 -> model-x; 2: pref 1 -> gpt4_turbo; 3: 1.5 tie; 4: 1.25 -> 0.75 for gpt4_turbo;
  # 5: 0 = draw; 6: null -> rejected.
  expect = {
    ("gpt4_turbo", "model-x"): 1.5,
    ("model-x", "gpt4_turbo"): 1.5,
    ("gpt4_turbo", "model-y"): 1.25,
    ("model-y", "gpt4_turbo"): 0.75,
  }
  assert _wins(c) == expect and report.ties == 2 and c.num_comparisons == 5
  assert _reasons(report) == [(6, "missing field")] and report.position_bias is None
  c, report = load_comparisons(path, policy={"fractional": "weights"})
  assert _wins(c) == expect and c.num_comparisons == 6 and report.rows_used == 5
  np.testing.assert_allclose(sorted(np.asarray(c.weight).tolist()), [0.25, 0.75, 1, 1, 1, 1])
  c, _ = load_comparisons(path, policy={"fractional": "round"})
  assert _wins(c)[("gpt4_turbo", "model-y")] == 1.5 and _wins(c)[("model-y", "gpt4_turbo")] == 0.5
  c, report = load_comparisons(path, policy={"tie": "drop"}, context="dataset")
  assert [line for line, r in _reasons(report) if r == "dropped by policy"] == [3, 5]
  assert c.contexts == ("helpful_base", "koala")


# ----------------------------------------------------------------------------- per-sample logs


def test_inspect_sample_table():
  c, report = load_comparisons(FIX / "inspect_samples.csv")
  assert report.schema == "inspect" and c.contexts == ("arc", "gsm8k")
  # gsm8k: id1 C > I (gpt-4o), id2 I = I, id3 P < C (claude); id4 only claude. arc: id1 C = C.
  assert _wins(c, by_context=True) == {
    ("openai/gpt-4o", "anthropic/claude", "gsm8k"): 1.5,
    ("anthropic/claude", "openai/gpt-4o", "gsm8k"): 1.5,
    ("openai/gpt-4o", "anthropic/claude", "arc"): 0.5,
    ("anthropic/claude", "openai/gpt-4o", "arc"): 0.5,
  }
  assert _reasons(report) == [(8, "no opponent on task"), (11, "invalid score")]
  assert c.num_comparisons == 4 and report.ties == 2
  _invariant(report)
  with pytest.raises(ValueError, match="score column 'nope' not found.*'score_match'"):
    load_comparisons(FIX / "inspect_samples.csv", metric="nope")


def test_lm_eval_folder_and_metric():
  folder = FIX / "lm_eval"
  c, report = load_comparisons(folder)
  assert report.schema == "lm-eval" and c.agents == ("model-x", "model-y")
  assert c.contexts == ("arc_easy",)
  # acc: doc0 1 > 0, doc1 0 = 0, doc2 1 = 1 (the 'strict' filter line of model-y is dropped).
  assert _wins(c) == {("model-x", "model-y"): 2, ("model-y", "model-x"): 1}
  (dropped,) = report.rejected
  assert dropped.reason == "dropped by policy" and dropped.line == 4
  assert dropped.source.startswith("model-y") and "strict" in dropped.detail
  c, _ = load_comparisons(folder, metric="acc_norm")  # doc0 1 = 1, doc1 1 > 0, doc2 0 < 1
  assert _wins(c) == {("model-x", "model-y"): 1.5, ("model-y", "model-x"): 1.5}
  c, report = load_comparisons(folder, policy={"tie": "drop"})
  assert _wins(c) == {("model-x", "model-y"): 1} and report.rows_used == 2


def test_tasks_long_table_file_line_numbers(tmp_path):
  path = tmp_path / "runs.csv"
  path.write_text("agent,task,score,env\nA,t1,1,os\nB,t1,0,os\nC,t2,1,\nA,t3,1,db\nB,t3,yes,db\n")
  c, report = load_comparisons(path, schema="tasks", context="env")
  assert _wins(c) == {("A", "B"): 1}
  assert _reasons(report) == [
    (4, "no opponent on task"),
    (5, "no opponent on task"),
    (6, "invalid score"),
  ]


# ----------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
  "name, schema",
  [
    ("arena_battles.csv", "arena"),
    ("arena_55k.csv", "arena"),
    ("mtbench_pair.jsonl", "mtbench"),
    ("arena_hard.jsonl", "arena-hard"),
    ("alpacaeval_annotations.json", "alpacaeval"),
    ("inspect_samples.csv", "inspect"),
  ],
)
def test_auto_detection_picks_the_schema(name, schema):
  _, report = load_comparisons(FIX / name)
  assert report.schema == schema


def test_detection_refuses_ambiguous_and_names_schemas(tmp_path):
  assert detect_schema(["model_a", "model_b", "winner", "judge"], "x") == "arena"
  assert detect_schema(["doc_id", "acc"], "x") == "lm-eval"
  assert detect_schema(["p", "q"], "x") is None
  path = tmp_path / "both.csv"
  path.write_text("model_a,model_b,a,b,winner\nx,y,x,y,a\n")
  with pytest.raises(ValueError, match=r"ambiguous schema.*arena \(model_a.*simple \(a, b"):
    load_comparisons(path)
  c, report = load_comparisons(path, schema="simple")
  assert report.schema == "simple" and c.num_comparisons == 1
  path.write_text("p,q,r\n1,2,3\n")
  with pytest.raises(ValueError, match="not found.*Known schemas: arena: model_a"):
    load_comparisons(path)
  with pytest.raises(ValueError, match="unknown schema 'excel'"):
    load_comparisons(path, schema="excel")


# ----------------------------------------------------------------------------- bad rows


def test_bad_rows_every_schema_have_line_numbers(tmp_path):
  cases = {
    "arena.csv": (
      "model_a,model_b,winner\nx,y,model_a\nx,x,tie\ny,z,draw\nx,y,NaN\n"
      "model_a,model_b,winner\nz,,model_b\n",
      [
        (3, "self-comparison"),
        (4, "unknown winner label"),
        (5, "NaN"),
        (6, "malformed record"),
        (7, "missing field"),
      ],
    ),
    "mt.jsonl": (
      '{"model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": "tie"}\n'
      '{"model_1": "x", "model_2": "x", "g1_winner": "tie", "g2_winner": "tie"}\n'
      '{"model_1": "x", "model_2": "y", "g1_winner": "A", "g2_winner": "tie"}\n'
      '{"model_1": "x", "model_2": "y", "g1_winner": NaN, "g2_winner": "tie"}\n'
      "not json\n",
      [(2, "self-comparison"), (3, "unknown winner label"), (4, "NaN"), (5, "malformed record")],
    ),
    "ah.jsonl": (
      '{"model": "m", "games": [{"score": "A>B"}, {"score": "B>A"}]}\n'
      '{"model": "m", "games": [{"score": "A>>>B"}, {"score": "B>A"}]}\n'
      '{"model": "m", "games": "none"}\n',
      [(2, "unknown winner label"), (3, "unknown winner label")],
    ),
    "ae.json": (
      json.dumps(
        [
          {"generator_1": "r", "generator_2": "m", "preference": 1.2},
          {"generator_1": "r", "generator_2": "m", "preference": 3},
          {"generator_1": "r", "generator_2": "r", "preference": 1},
        ]
      ),
      [(2, "unknown winner label"), (3, "self-comparison")],
    ),
  }
  for name, (text, expected) in cases.items():
    path = tmp_path / name
    path.write_text(text)
    c, report = load_comparisons(path)
    assert _reasons(report) == expected, name
    _invariant(report)
    assert c.num_comparisons >= 1


def test_empty_file_duplicated_header_and_missing_column(tmp_path):
  for name, text, pattern in [
    ("empty.jsonl", "", "no comparisons"),
    ("dup.csv", "model_a,model_b,winner,winner\nx,y,model_a,model_a\n", "duplicated column"),
    ("mt.jsonl", '{"model_1": "x", "model_2": "y", "g1_winner": "tie"}\n', "column 'model_a'"),
  ]:
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=pattern):
      load_comparisons(tmp_path / name)


def test_all_rejected_error_names_top_reasons_with_first_lines(tmp_path):
  path = tmp_path / "b.csv"
  path.write_text("a,b,winner\n" + "x,,a\n" * 3 + "x,y,maybe\n")
  with pytest.raises(ValueError) as info:
    load_comparisons(path)
  first = str(info.value).splitlines()[0]
  assert "all 4 rows were rejected" in first
  assert "missing field: 3 (first at line 2" in first
  assert "unknown winner label: 1 (first at line 5" in first


def test_case_variants_are_reported_not_merged():
  df = pd.DataFrame({"a": ["GPT-4", "gpt-4"], "b": ["x", "x"], "winner": ["a", "b"]})
  c, report = from_dataframe(df)
  assert c.agents == ("GPT-4", "gpt-4", "x") and report.merged == ()
  assert any("differ only in case" in m and "'GPT-4' / 'gpt-4'" in m for m in report.mappings)
