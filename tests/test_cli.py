"""The ``ste-jax`` command line (issue 6): score, explain, demo, planted, errors.

Commands run in-process through ``main(argv)`` (one subprocess test covers the entry point), with
small bootstrap counts; results of the real datasets are cached per module, so each dataset is
scored once per output format. Vicuna-80 is the copy bundled with the package (the same file as
``../shared/data/vicuna80_qlora_human/comparisons.csv``), so its tests run without ``../shared``;
LLMFAO is not bundled and its tests skip when ``../shared`` is absent. Hard cores and witnesses
are checked against oracles computed here from the raw rows with pandas and networkx.
"""

import contextlib
import functools
import io
import itertools
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ste_jax import _cli, _render
from ste_jax._cli import main
from tests.oracles import brute_uncovered_set, nx_reach_all, nx_top_cycle

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DATASETS = ("vicuna80_qlora_human", "llmfao_crowd")
# The estimator each dataset's CLI tests use (both have independent oracles for the hard
# columns):
# posterior -> hard relation D > 0 = strict win-rate majority, unobserved pairs no edge;
# winrate -> Smith set with unobserved pairs as ties. The model estimator is tested in
# tests/evaluate.
ESTIMATOR = {"vicuna80_qlora_human": "posterior", "llmfao_crowd": "winrate"}
BOOT = "20"
# LLMFAO (59 agents, 10-17 s per command on 2 cores) runs in `make test-slow`; the bundled
# Vicuna-80 runs the same checks by default.
SCORED_DATASETS = ("vicuna80_qlora_human", pytest.param("llmfao_crowd", marks=pytest.mark.slow))


def run(*argv):
  """``(exit status, stdout, stderr)`` of ``main(argv)`` in-process."""
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main([str(a) for a in argv])
  return code, out.getvalue(), err.getvalue()


def dataset(name) -> pathlib.Path:
  """The ``comparisons.csv`` of a real dataset: the bundled copy of Vicuna-80, others from
  ``../shared``."""
  if name == _cli.DEMO_DATASET:
    path = pathlib.Path(str(_cli.bundled_dataset_path()))
    assert path.is_file(), f"bundled dataset {path} missing from the package"
    return path
  path = SHARED / name / "comparisons.csv"
  if not path.is_file():
    pytest.skip(f"shared dataset {path} not present")
  return path


@functools.cache
def scored(name, output, *extra):
  code, out, err = run(
    "score",
    dataset(name),
    "--estimator",
    ESTIMATOR[name],
    "--bootstrap",
    BOOT,
    "--output",
    output,
    *extra,
  )
  assert code == 0, err
  return out, err


def oracle_tournament(df: pd.DataFrame):
  """``(agents, P, games)`` from raw rows: ties 1/2 each, missing pairs 1/2 (the CLI's
  conventions)."""
  agents = sorted(set(df.a) | set(df.b))
  index = {name: i for i, name in enumerate(agents)}
  n = len(agents)
  wins = np.zeros((n, n))
  for a, b, w in zip(df.a, df.b, df.winner):
    i, j = index[a], index[b]
    share = {"a": 1.0, "b": 0.0, "tie": 0.5}[w]
    wins[i, j] += share
    wins[j, i] += 1.0 - share
  games = wins + wins.T
  with np.errstate(invalid="ignore", divide="ignore"):
    P = np.where(games > 0, wins / np.where(games > 0, games, 1.0), 0.5)
  np.fill_diagonal(P, 0.5)
  return agents, P, games


@functools.cache
def oracle(name, context=None, estimator=None):
  """Hard cores from the raw rows: Smith set (winrate) or strict-majority reach-all (posterior)."""
  estimator = estimator or ESTIMATOR[name]
  df = pd.read_csv(dataset(name), dtype=str, keep_default_na=False)
  if context is not None:
    df = df[df.context == context]
  agents, P, games = oracle_tournament(df)
  strict = (P > 0.5) & ~np.eye(len(agents), dtype=bool)
  tc = dict(zip(agents, nx_top_cycle(P) if estimator == "winrate" else nx_reach_all(strict)))
  uc = dict(zip(agents, brute_uncovered_set(P)))
  return agents, P, games, tc, uc


def check_rows(rows, name, context=None, *, bootstrap=True, soft_intervals=True):
  """Hard cores equal the oracle; scores, probabilities and verdicts consistent; one row per
  agent."""
  agents, _, games, tc, uc = oracle(name, context)
  assert sorted(r["agent"] for r in rows) == agents
  for r in rows:
    assert r["hard_tc"] == tc[r["agent"]], r
    assert r["hard_uc"] == uc[r["agent"]], r
    assert r["games"] == pytest.approx(games[agents.index(r["agent"])].sum())
    for col in ("tc_score", "uc_score", "win_rate"):
      assert 0.0 <= r[col] <= 1.0
    if bootstrap:
      for col in ("p_tc", "p_uc"):
        assert r[col] is not None and 0.0 <= r[col] <= 1.0, (col, r)
      # Certified verdicts (sure edges in >= 95% of replicas) agree with the point estimate here
      # (dense data: the replicas' sure edges are edges of the point estimate's relation).
      for hard, v in ((r["hard_tc"], r["tc_verdict"]), (r["hard_uc"], r["uc_verdict"])):
        assert v in ("in", "out", "undetermined"), r
        assert v != ("out" if hard else "in"), r
      if soft_intervals:
        for col in ("tc_lo", "tc_hi", "uc_lo", "uc_hi"):
          assert r[col] is not None and 0.0 <= r[col] <= 1.0, (col, r)
        assert r["tc_lo"] <= r["tc_hi"] and r["uc_lo"] <= r["uc_hi"]
  assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
  # Tier, then soft Top-Cycle score; with replicas, agents with a higher P(TC) than every member of
  # the hard Top Cycle first.
  bar = max((r["p_tc"] for r in rows if r["hard_tc"]), default=0.0) if bootstrap else 0.0
  keys = [
    ((-max(r["p_tc"], bar),) if bootstrap else ()) + (r["tier"], -r["tc_score"]) for r in rows
  ]
  assert keys == sorted(keys)
  assert all(r["tier"] == 1 for r in rows if r["hard_tc"])


def csv_rows(text):
  df = pd.read_csv(io.StringIO(text), dtype={"agent": str, "context": str}, keep_default_na=False)
  rows = []
  for rec in df.to_dict("records"):
    rec = {k: (None if v == "" else v) for k, v in rec.items()}
    for k in ("hard_tc", "hard_uc", "bt_identifiable"):
      rec[k] = {True: True, False: False, "true": True, "false": False}[rec[k]]
    rows.append(rec)
  return df, rows


# --------------------------------------------------------------------------------------------
# score


@pytest.mark.parametrize("name", SCORED_DATASETS)
def test_score_json(name):
  out, _ = scored(name, "json")
  doc = json.loads(out)
  assert doc["settings"]["num_replicas"] == int(BOOT)
  (table,) = doc["tables"]
  assert table["estimator"] == ESTIMATOR[name] and "unobserved" in table["conventions"]
  assert table["diagnostics"]["num_agents"] == len(table["rows"])
  check_rows(table["rows"], name)
  # The hard Top Cycle has the highest P(TC) here, so no agent is listed above it: the tier order.
  keys = [(r["tier"], -r["tc_score"]) for r in table["rows"]]
  assert keys == sorted(keys)
  _, _, _, tc, uc = oracle(name)
  assert set(table["top_cycle"]) == {a for a, v in tc.items() if v}
  assert set(table["uncovered_set"]) == {a for a, v in uc.items() if v}
  if table["bt_identifiable"]:
    assert all(isinstance(r["bradley_terry"], float) for r in table["rows"])
  # The crosstable of the first 10 rows: the records counted from the raw rows.
  agents, P, games, _, _ = oracle(name)
  h = table["head_to_head"]
  assert h["agents"] == [r["agent"] for r in table["rows"][:10]]
  idx = [agents.index(a) for a in h["agents"]]
  np.testing.assert_allclose(
    h["wins"], (P * games)[np.ix_(idx, idx)] * (1 - np.eye(len(idx))), atol=1e-9
  )
  np.testing.assert_allclose(h["games"], games[np.ix_(idx, idx)], atol=1e-9)
  # The answer: its case follows the rows' verdicts and shares; its first agent's record against the
  # other first rows is recounted from the raw rows.
  a, rows = table["answer"], table["rows"]
  verdict = {r["agent"]: r["tc_verdict"] for r in rows}
  share = {r["agent"]: r["p_tc"] for r in rows}
  certified = [r["agent"] for r in rows if r["tc_verdict"] == "in"]
  if certified:
    assert a["members"] == certified
    assert a["status"] == (
      "partly certified" if "undetermined" in verdict.values() else "certified"
    )
  else:  # the three agents most often in the replicas' Top Cycles, with their shares
    assert a["status"] == "not settled" and len(a["members"]) == 3
    assert (
      a["shares"] == sorted(share.values(), reverse=True)[:3] == [share[x] for x in a["members"]]
    )
    assert all(
      f"{x} {share[x]:.2f}" in a["lines"][0] for x in a["members"]
    )  # as the P(TC) column prints it
  lead = agents.index(a["members"][0])
  others = [agents.index(x) for x in h["agents"] if x != a["members"][0]]
  assert a["opponents"] == len(others) and a["met"] == int((games[lead, others] > 0).sum())
  assert a["games"] == pytest.approx(games[lead, others].sum())
  assert a["wins"] == pytest.approx((P * games)[lead, others].sum())
  assert a["lines"][0].startswith("answer: ")


@pytest.mark.parametrize("name", SCORED_DATASETS)
def test_score_csv(name):
  out, err = scored(name, "csv")
  assert err.startswith("conventions: estimator: " + ESTIMATOR[name])
  df, rows = csv_rows(out)
  assert list(df.columns[:3]) == ["context", "rank", "agent"]
  assert (df.context == "all").all()
  check_rows(rows, name)
  json_rows = json.loads(scored(name, "json")[0])["tables"][0]["rows"]
  for r, j in zip(rows, json_rows):  # same numbers in both formats
    assert r["agent"] == j["agent"]
    assert r["tc_score"] == pytest.approx(j["tc_score"], rel=1e-5, abs=1e-6)
    assert r["p_uc"] == pytest.approx(j["p_uc"], rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("name", SCORED_DATASETS)
def test_score_table_and_markdown(name):
  agents, *_, tc, _ = oracle(name)
  default, _ = scored(name, "table")
  assert max(map(len, default.splitlines())) <= 120
  assert "conventions:" not in default and "head-to-head" not in default
  lines = default.splitlines()
  assert any(line.startswith("method: estimator " + ESTIMATOR[name]) for line in lines)
  assert any(line.startswith("evidence: ") for line in lines)
  title = next(k for k, line in enumerate(lines) if line.startswith("all data: "))
  assert lines[title + 1].startswith("answer: ")  # the answer first, under the title
  assert any(
    line.lstrip().startswith("#") and all(h in line for h in ("TC score [95% CI]", "P(TC)", "BT"))
    for line in lines
  )
  text, _ = scored(name, "table", "--details")
  lines = text.splitlines()
  assert lines[: lines.index("")] == default.splitlines()[: lines.index("")]  # same answer
  assert any(line.startswith("conventions: estimator: " + ESTIMATOR[name]) for line in lines)
  k = next(k for k, line in enumerate(lines) if line.startswith("hard Top Cycle (point estimate):"))
  wrapped = [lines[k]] + [
    line.strip() for line in itertools.takewhile(lambda line: line.startswith("  "), lines[k + 1 :])
  ]  # the text is wrapped at 120 columns: continuation lines are indented
  core_line = " ".join(wrapped)
  listed = core_line.split(": ", 1)[1].strip("{}").split(", ")
  core = {a for a, v in tc.items() if v}
  more = re.fullmatch(r"\.\.\. and (\d+) more", listed[-1])
  if more:  # long sets are truncated: 25 names, then a count
    listed = listed[:-1]
    assert len(listed) + int(more.group(1)) == len(core)
  assert set(listed) <= core and (more or set(listed) == core)
  shown = _render.short_names(agents)  # long names are shortened in text tables only
  for a in agents:
    assert re.search(rf"^\s*\d+\s+{re.escape(shown[a])}\s", text, re.M), a
  # The crosstable of the first rows: one line per row, its cells the records (row's wins-losses).
  rows = [r["agent"] for r in json.loads(scored(name, "json")[0])["tables"][0]["rows"][:10]]
  title = lines.index(
    f"head-to-head among the first {len(rows)} rows: "
    + next(line for line in lines if line.startswith("head-to-head")).split(" rows: ", 1)[1]
  )
  _, P, games, _, _ = oracle(name)
  legend = next(k for k in range(title, len(lines)) if lines[k].lstrip().startswith("#  agent"))
  for i, line in enumerate(lines[legend + 1 : legend + 1 + len(rows)]):
    assert line.split()[0] == str(i + 1) and _render.short_names(rows, 20)[rows[i]] in line
    x = agents.index(rows[i])
    for j, cell in enumerate(line.split()[-len(rows) :]):  # names may hold spaces, cells do not
      y = agents.index(rows[j])
      expect = (
        "-"
        if i == j
        else "."
        if games[x, y] == 0
        else f"{round(P[x, y] * games[x, y], 6):g}-{round(P[y, x] * games[x, y], 6):g}"
      )
      assert cell.rstrip("!") == expect, (rows[i], rows[j])
  md, _ = scored(name, "markdown")
  blocks = [
    [line for line in block.splitlines() if line.startswith("|")] for block in md.split("\n\n")
  ]
  table_lines, crosstable = [b for b in blocks if b]
  assert table_lines[0].startswith("| # | agent | tier | TC |")
  assert len(table_lines) == 2 + len(agents)
  md_lines = md.splitlines()  # the answer first, the conventions after the table (as in the text)
  answer_at = next(k for k, line in enumerate(md_lines) if line.startswith("> answer: "))
  conventions_at = next(k for k, line in enumerate(md_lines) if line.startswith("_conventions: "))
  assert answer_at < md_lines.index(table_lines[0])
  assert md_lines.index(table_lines[-1]) < conventions_at
  assert crosstable[0] == "| # | agent | " + " | ".join(str(j + 1) for j in range(len(rows))) + " |"
  assert len(crosstable) == 2 + len(rows)
  from ste_jax._render import HEAD_TO_HEAD_ROWS

  assert _cli.build_parser().parse_args(["score", "f.csv"]).head_to_head == HEAD_TO_HEAD_ROWS == 10


def _sparse_long_names_csv(path, n=40, m=160, seed=3):
  """``m`` comparisons of random pairs of ``n`` agents whose names are 50 characters long and
  differ only after their first 13 (most pairs never compared)."""
  rng = np.random.default_rng(seed)
  names = [f"organization-{i:02d}/model-family-instruct-long-suffix-v2" for i in range(n)]
  rows = ["model_a,model_b,winner"]
  for _ in range(m):
    a, b = rng.choice(n, size=2, replace=False)
    rows.append(f"{names[a]},{names[b]},{rng.choice(['model_a', 'model_b', 'tie'])}")
  path.write_text("\n".join(rows) + "\n")
  return names


def _same_words(text: str) -> str:
  return " ".join(text.split())


@pytest.mark.parametrize("which", ["bundled", "sparse"])
def test_default_text_fits_120_columns_and_details_keep_everything(which, tmp_path):
  """The default ``score`` text is at most 120 columns wide: the answer, then the table, the method
  and evidence lines; ``--details`` and ``--output json`` still carry the full conventions, the
  head-to-head crosstable and every label's explanation; long agent names are shortened in the
  text only (CSV and JSON keep them whole)."""
  if which == "bundled":
    path, names, extra = dataset(_cli.DEMO_DATASET), None, ("--estimator", "posterior")
  else:
    path = tmp_path / "sparse.csv"
    # winrate: this test is about the text, and the model estimator's fit would dominate it
    names, extra = _sparse_long_names_csv(path), ("--estimator", "winrate")
  argv = ("score", path, "--bootstrap", "5", *extra)
  code, text, err = run(*argv)
  assert code == 0, err
  lines = text.splitlines()
  assert max(map(len, lines)) <= 120, max(lines, key=len)
  answer = next(k for k, line in enumerate(lines) if line.startswith("answer: "))
  header = next(k for k, line in enumerate(lines) if line.lstrip().startswith("#  agent"))
  method = next(k for k, line in enumerate(lines) if line.startswith("method: estimator "))
  evidence = next(k for k, line in enumerate(lines) if line.startswith("evidence: "))
  assert answer < header < method < evidence
  assert "conventions:" not in text and "head-to-head" not in text
  code, details, err = run(*argv, "--details")
  assert code == 0, err
  code, out, err = run(*argv, "--output", "json")
  assert code == 0, err
  (table,) = json.loads(out)["tables"]
  flat = _same_words(details)
  assert _same_words("conventions: " + table["conventions"]) in flat
  assert table["head_to_head"]["agents"] and "head-to-head among the first" in details
  first = table["head_to_head"]["agents"][0]
  labels = table["labels"]
  assert {"in", "out", "?", "tier", ".", "!"} <= set(labels)
  assert "neither connect the agent to every other agent" in labels["?"]
  for label, explanation in labels.items():
    assert _same_words(f"{label}: {explanation}") in flat, label
  rows = [line for line in lines[header + 2 :] if re.match(r"\s*\d+\s", line)]
  assert len(rows) == table["num_agents"]
  if names is None:
    assert first in details
    return
  # Long names: shortened (unique, start and end kept) in the text, whole in JSON and CSV.
  assert {r["agent"] for r in table["rows"]} == set(names)
  shown = [line.split()[1] for line in rows]
  assert len(set(shown)) == len(names) and all(len(x) < len(names[0]) for x in shown)
  assert all("..." in x and x.startswith("organization-") and x.endswith("-v2") for x in shown)
  assert not any(name in line for line in rows for name in names)  # the answer names them whole
  code, csv_text, err = run(*argv, "--output", "csv")
  assert code == 0, err
  assert set(pd.read_csv(io.StringIO(csv_text)).agent) == set(names)
  ranks = {r["agent"]: r["rank"] for r in table["rows"]}
  for line, x in zip(rows, shown):  # each shortened name stands for the agent of its rank
    full = next(a for a, k in ranks.items() if k == int(line.split()[0]))
    assert full.startswith(x.split("...")[0]) and full.endswith(x.split("...")[1])


def test_columns_flag_adds_columns_and_refuses_unknown_names():
  path = dataset(_cli.DEMO_DATASET)
  base = ("score", path, "--estimator", "posterior", "--bootstrap", "0")
  code, text, err = run(*base, "--columns", "elo,hard_tc")
  assert code == 0, err
  header = next(line for line in text.splitlines() if line.startswith("#  agent"))
  assert "Elo" in header and "hardTC" in header and "UC score" not in header
  code, text, err = run(*base, "--columns", "all")
  assert code == 0, err
  header = next(line for line in text.splitlines() if line.startswith("#  agent"))
  assert all(h in header for h in ("UC score", "hardTC", "hardUC", "Elo"))
  code, _, err = run(*base, "--columns", "nope")
  assert code == 2 and "--columns" in err and "unknown column 'nope'" in err


@pytest.mark.slow  # about 18 s on 2 cores (one plot per context)
def test_score_by_context_csv(tmp_path):
  name = "vicuna80_qlora_human"
  plot = tmp_path / "ctx.png"
  code, out, err = run(
    "score",
    dataset(name),
    "--by-context",
    "--bootstrap",
    "5",
    "--output",
    "csv",
    "--estimator",
    "posterior",
    "--plot",
    plot,
  )
  assert code == 0, err
  df, rows = csv_rows(out)
  contexts = sorted(pd.read_csv(dataset(name)).context.unique())
  assert sorted(df.context.unique()) == contexts
  for context in contexts:
    check_rows([r for r in rows if r["context"] == context], name, context)
    png = tmp_path / f"ctx_{context}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_rows_shown_and_crosstable_sizes():
  path = dataset(_cli.DEMO_DATASET)
  code, text, err = run(
    "score", path, "--estimator", "posterior", "--bootstrap", "0", "--top", "0", "--details"
  )
  assert code == 0, err
  assert "... 8 more agents" in text and "hard Top Cycle (point estimate)" in text
  assert (
    "head-to-head among the first 8 rows: 28 of 28 pairs compared" in text
  )  # 10 asked, 8 agents
  code, hidden, err = run(
    "score",
    path,
    "--estimator",
    "posterior",
    "--bootstrap",
    "0",
    "--top",
    "0",
    "--head-to-head",
    "0",
    "--details",
  )
  assert code == 0, err
  remaining = iter(text.splitlines())  # the same lines, less the crosstable
  assert "head-to-head" not in hidden and all(line in remaining for line in hidden.splitlines())
  code, md, err = run(
    "score",
    path,
    "--estimator",
    "posterior",
    "--bootstrap",
    "0",
    "--top",
    "0",
    "--output",
    "markdown",
    "--head-to-head",
    "1",
  )
  assert code == 0, err
  assert "head-to-head" not in md  # one row: no pair
  table_lines = [
    line for line in md.splitlines() if line.startswith("|")
  ]  # header and separator only
  assert len(table_lines) == 2 and table_lines[0].startswith("| # | agent | tier")


def test_score_plot_and_winrate_estimator(tmp_path):
  name = "vicuna80_qlora_human"
  plot = tmp_path / "out.png"
  code, out, err = run(
    "score",
    dataset(name),
    "--estimator",
    "winrate",
    "--tau",
    "0.05",
    "--gamma",
    "0.02",
    "--bootstrap",
    "0",
    "--output",
    "json",
    "--plot",
    plot,
  )
  assert code == 0, err
  doc = json.loads(out)
  conventions = doc["tables"][0]["conventions"]
  assert (
    "win-rate tournament" in conventions
    and "tau = 0.05" in conventions
    and "no bootstrap" in conventions
  )
  agents, _, _, tc, _ = oracle(name, None, "winrate")
  assert {r["agent"] for r in doc["tables"][0]["rows"] if r["hard_tc"]} == {
    a for a in agents if tc[a]
  }
  assert all(r["tc_lo"] is None for r in doc["tables"][0]["rows"])
  assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
  assert f"plot written to {plot}" in err


def _separable_csv(path):
  """Core {c0, c1, c2} cyclic (c0 > c1 > c2 > c0 always); core beats outsiders always; outsiders
  tie."""
  rows = ["a,b,winner"]
  core, outs = ["c0", "c1", "c2"], ["o0", "o1", "o2", "o3"]
  for _ in range(6):
    rows += ["c0,c1,a", "c1,c2,a", "c2,c0,a"]
    rows += [f"{c},{o},a" for c in core for o in outs]
    rows += [f"{o},{p},tie" for i, o in enumerate(outs) for p in outs[i + 1 :]]
  path.write_text("\n".join(rows) + "\n")
  return path


@pytest.mark.slow  # about 17 s on 2 cores (three runs, one a model fit)
def test_separable_data_core_and_bt_not_identifiable(tmp_path):
  path = _separable_csv(tmp_path / "sep.csv")
  code, out, err = run(
    "score", path, "--bootstrap", "10", "--output", "json", "--estimator", "winrate"
  )
  assert code == 0, err
  (table,) = json.loads(out)["tables"]
  assert set(table["top_cycle"]) == {"c0", "c1", "c2"}
  assert table["bt_identifiable"] is False and "separable" in table["bt_note"]
  rows = table["rows"]
  assert {r["agent"] for r in rows[:3]} == {"c0", "c1", "c2"}
  for r in rows:
    assert r["bradley_terry"] is None
    assert np.isfinite(r["tc_score"]) and np.isfinite(r["uc_score"])
    assert r["hard_tc"] == r["agent"].startswith("c")
  assert min(r["tc_score"] for r in rows[:3]) > 0.9 > 0.1 > max(r["tc_score"] for r in rows[3:])
  code, text, _ = run("score", path, "--bootstrap", "0", "--estimator", "winrate", "--details")
  assert code == 0
  assert (
    "hard Top Cycle (point estimate): {c0, c1, c2}" in text
    and "Bradley-Terry: not identifiable" in text
  )
  table_text, crosstable = text.split("head-to-head among the first 7 rows: ")
  agent_rows = [line for line in table_text.splitlines() if re.match(r"\s*\d+\s+[co]\d\s", line)]
  assert len(agent_rows) == 7
  assert all(line.split()[-2] == "n/i" for line in agent_rows)  # BT, then games
  # The model estimator finds the same cycle (every pair observed, a strong cyclic signal).
  code, out, err = run(
    "score", path, "--bootstrap", "0", "--output", "json", "--estimator", "model"
  )
  assert code == 0, err
  (table,) = json.loads(out)["tables"]
  assert (
    set(table["top_cycle"]) == {"c0", "c1", "c2"} and table["model"]["rank"] >= 1
  )  # no invented BT gaps
  assert (
    table["model"]["record_tolerance"] == 2.0 and "record band" in table["model"]["description"]
  )
  code, out, err = run(
    "score",
    path,
    "--bootstrap",
    "0",
    "--output",
    "json",
    "--estimator",
    "model",
    "--record-tolerance",
    "none",
  )
  assert code == 0, err
  (table,) = json.loads(out)["tables"]
  assert (
    table["model"]["record_tolerance"] is None
    and "record band" not in table["model"]["description"]
  )


def test_score_tasks_format(tmp_path):
  path = tmp_path / "tasks.csv"
  rows = ["agent,task,score,family"]
  for t in range(12):
    rows += [
      f"alpha,t{t},1,f{t % 2}",
      f"beta,t{t},{t % 3 == 0:d},f{t % 2}",
      f"gamma,t{t},0,f{t % 2}",
    ]
  path.write_text("\n".join(rows) + "\n")
  code, out, err = run(
    "score",
    path,
    "--format",
    "tasks",
    "--context-column",
    "family",
    "--bootstrap",
    "0",
    "--output",
    "json",
  )
  assert code == 0, err
  (table,) = json.loads(out)["tables"]
  assert table["top_cycle"] == ["alpha"]
  code, out, err = run("score", path, "--format", "tasks", "--score-column", "nope")
  assert code == 1 and "'nope'" in err and len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------------------------
# explain


def _check_witnesses(name, agent, w):
  agents, P, _, tc, uc = oracle(name)
  i = agents.index(agent)
  assert w["in_top_cycle"] == tc[agent] and w["in_uncovered_set"] == uc[agent]
  reached = set()
  for chain in w["chains"]:
    assert chain[0]["agent"] == agent
    for prev, step in zip(chain, chain[1:]):
      p = P[agents.index(prev["agent"]), agents.index(step["agent"])]
      assert p == pytest.approx(step["p"], abs=1e-6)
      if step["tie"]:
        assert p == 0.5
      else:
        assert p > 0.5, (prev, step)  # a majority win in the data
      reached.add(step["agent"])
  if tc[agent]:
    assert reached == set(agents) - {agent} and not w["unreached"]
  else:
    assert w["unreached"] and tc[w["unreached"][0]]
    assert reached == set(agents) - {agent} - set(w["unreached"])
  strict = (P > 0.5) & ~np.eye(len(agents), dtype=bool)
  for c in w["coverers"]:
    j = agents.index(c["agent"])
    assert strict[j, i] and all(strict[j, b] for b in np.flatnonzero(strict[i]))
  assert bool(w["coverers"]) == (not uc[agent])
  for r in w["refutations"]:
    j, b = agents.index(r["agent"]), agents.index(r["misses"])
    assert strict[j, i] and strict[i, b] and not strict[j, b]


@pytest.mark.parametrize(
  "name", SCORED_DATASETS
)  # LLMFAO (about 10 s on 2 cores) in `make test-slow`
def test_explain_json_witnesses(name):
  agents, P, _, tc, uc = oracle(name)
  pick = [a for a in agents if tc[a]][:2] + [a for a in agents if not tc[a] and uc[a]][:1]
  pick += [a for a in agents if not uc[a]][:2]
  for agent in pick:
    code, out, err = run(
      "explain", dataset(name), agent, "--output", "json", "--estimator", ESTIMATOR[name]
    )
    assert code == 0, err
    _check_witnesses(name, agent, json.loads(out))


@pytest.mark.slow  # about 14 s on 2 cores (LLMFAO, skipped without ../shared)
def test_explain_text_chains_are_majority_wins():
  name = "llmfao_crowd"
  agents, P, _, tc, uc = oracle(name)
  for agent in [a for a in agents if tc[a]][:1] + [a for a in agents if not uc[a]][:1]:
    code, out, err = run("explain", dataset(name), agent, "--estimator", ESTIMATOR[name])
    assert code == 0, err
    lines = out.splitlines()
    chains = [line.strip() for line in lines if line.startswith("  " + agent + " ")]
    assert chains
    for chain in chains:
      names = [agent] + re.findall(r" [>=] (.+?) \(\d\.\d\d\)", chain)
      for x, y in zip(names, names[1:]):
        assert P[agents.index(x), agents.index(y)] >= 0.5, (x, y)
      assert all(
        P[agents.index(x), agents.index(y)] > 0.5
        for x, y, op in zip(names, names[1:], re.findall(r" ([>=]) ", chain))
        if op == ">"
      )
    for line in lines:
      m = re.match(r"  covered by (.+?): beats", line)
      if m:
        c, i = agents.index(m.group(1)), agents.index(agent)
        beaten = [b for b in range(len(agents)) if P[i, b] > 0.5 and b != i]
        assert P[c, i] > 0.5 and all(P[c, b] > 0.5 for b in beaten)
    assert ("covered by" in out) == (not uc[agent])


# --------------------------------------------------------------------------------------------
# demo, planted, errors, entry point


@pytest.mark.slow  # about 17 s on 2 cores (`make demo` runs it too)
def test_demo_writes_plot(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  code, out, err = run("demo", "--bootstrap", BOOT)
  assert code == 0, err
  assert max(map(len, out.splitlines())) <= 120
  assert "answer: the Top Cycle is {gpt-4}, certified at 0.95" in out
  assert "method: estimator posterior" in out and "conventions:" not in out
  png = tmp_path / _cli.DEMO_PLOT
  assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  assert f"plot written to {png}" in out


def test_planted_runs_the_package_module_never_benchmarks():
  """``ste-jax planted`` passes its options to ``ste_jax.benchmarking`` and imports no top-level
  ``benchmarks`` package (an installed CLI has none). The run itself is stubbed here; the benchmark
  runs end to end in ``tests/test_planted_core_benchmark.py`` (slow)."""
  code = (
    "import sys\n"
    "from ste_jax.benchmarking import _planted_core\n"
    "calls = []\n"
    "_planted_core.main = lambda argv, **kw: calls.append((argv, kw)) or 0\n"
    "from ste_jax._cli import main\n"
    "assert main(['planted', '--quick', '--out', 'somewhere', '--no-progress']) == 0\n"
    "assert calls == [(['--out', 'somewhere', '--quick', '--no-progress'], "
    "{'command': 'ste-jax planted', 'default_out': 'planted_core'})], calls\n"
    "assert not [m for m in sys.modules if m == 'benchmarks' or m.startswith('benchmarks.')]\n"
    "print('ok')"
  )
  proc = subprocess.run(
    [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
  )  # benchmarks/ importable here
  assert proc.stdout.split() == ["ok"], proc.stderr[-2000:]


def _one_line_error(argv, *expected, code=1):
  got, out, err = run(*argv)
  assert got == code, (argv, got, out, err)
  lines = err.strip().splitlines()
  assert len(lines) == 1, err
  assert "Traceback" not in err and "error" in lines[0]
  for text in expected:
    assert text in lines[0], (text, lines[0])
  return lines[0]


def test_errors_are_one_line(tmp_path):
  good = _separable_csv(tmp_path / "good.csv")
  _one_line_error(["score", tmp_path / "missing.csv"], "file not found", "missing.csv")
  (tmp_path / "data.xlsx").write_text("a,b,winner\nx,y,a\n")
  _one_line_error(["score", tmp_path / "data.xlsx"], "data.xlsx", "format")
  bad = tmp_path / "bad.csv"
  bad.write_text("a,b,winner\nx,y,a\ny,z,b\nx,z\nz,x,a\nx,y,nobody\n")
  _one_line_error(
    ["score", bad],
    "2 bad rows of 5",
    "malformed record: 1 (first at line 4",
    "unknown winner label: 1 (first at line 6",
    "--skip-bad-rows",
  )
  code, out, err = run("score", bad, "--skip-bad-rows", "--bootstrap", "0", "--output", "csv")
  assert code == 0 and "line 4" in err and len(pd.read_csv(io.StringIO(out))) == 3
  (tmp_path / "empty.csv").write_text("")
  _one_line_error(["score", tmp_path / "empty.csv"], "no comparisons")
  (tmp_path / "header.csv").write_text("a,b,winner\n")
  _one_line_error(["score", tmp_path / "header.csv"], "no comparisons")
  (tmp_path / "cols.csv").write_text("p,q,r\n1,2,3\n")
  _one_line_error(["score", tmp_path / "cols.csv"], "column", "not found")
  _one_line_error(["score", good, "--format", "arena"], "model_a")
  _one_line_error(["explain", good, "c00"], "unknown agent 'c00'", "did you mean 'c0'")
  _one_line_error(["explain", good, "zz"], "unknown agent 'zz'", "agents: c0, c1, c2, o0")
  _one_line_error(["explain", good, "c0", "--context", "nope"], "unknown context 'nope'")
  _one_line_error(["score", good, "--tau", "-1"], "--tau", code=2)
  _one_line_error(["score", good, "--bootstrap", "many"], "--bootstrap", code=2)
  _one_line_error(["score", good, "--output", "xml"], "--output", code=2)
  _one_line_error(["score", good, "--confidence", "0.3"], "--confidence", code=2)
  _one_line_error(["score", good, "--record-tolerance", "0"], "--record-tolerance", code=2)
  _one_line_error(["explain", good, "c0", "--record-tolerance", "-1"], "--record-tolerance", code=2)
  _one_line_error(
    ["score", good, "--solutions", "bipartisan,nope"], "unknown solution 'nope'", code=2
  )
  _one_line_error(["score", good, "--estimator", "elo"], "--estimator", code=2)
  _one_line_error(["score", good, "--format", "excel"], "--format", code=2)
  _one_line_error(["frobnicate"], "frobnicate", code=2)
  _one_line_error(["score"], "FILE", code=2)


def test_entry_point_subprocess(tmp_path):
  """``python -m ste_jax`` (and the ``ste-jax`` script when installed) run and fail cleanly."""
  script = pathlib.Path(sys.executable).with_name("ste-jax")
  cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "ste_jax"]
  proc = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0 and "score" in proc.stdout and "explain" in proc.stdout
  proc = subprocess.run(
    [sys.executable, "-m", "ste_jax", "score", str(tmp_path / "nope.csv")],
    capture_output=True,
    text=True,
    timeout=120,
    cwd=ROOT,
  )
  assert proc.returncode == 1
  assert proc.stderr.strip() == f"ste-jax score: error: file not found: {tmp_path / 'nope.csv'}"


@pytest.mark.slow  # two fresh processes, each compiling (about 20 s on 2 cores)
def test_compilation_cache_is_filled_then_reused_and_can_be_turned_off(tmp_path):
  """The CLI keeps compiled programs in STE_JAX_COMPILATION_CACHE; a second run reads them."""
  data = tmp_path / "battles.csv"
  data.write_text("a,b,winner\n" + "x,y,a\ny,z,a\nz,x,a\nx,w,a\n" * 3)
  env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
  cmd = [sys.executable, "-m", "ste_jax", "score", str(data), "--bootstrap", "5", "--output"]

  def score(cache):
    proc = subprocess.run(
      cmd + ["csv"],
      capture_output=True,
      text=True,
      timeout=300,
      cwd=ROOT,
      env=dict(env, STE_JAX_COMPILATION_CACHE=cache, XDG_CACHE_HOME=str(tmp_path / "xdg")),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout

  first = score(str(tmp_path / "cache"))
  stored = sorted(p.name for p in (tmp_path / "cache").iterdir())
  assert len(stored) > 5
  assert score(str(tmp_path / "cache")) == first  # same key, same numbers from cached programs
  assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == stored  # nothing recompiled
  assert score("off") == first
  assert not (tmp_path / "xdg").exists()


# --------------------------------------------------------------------------------------------
# input schemas (issue 12)

FIXTURES = ROOT / "tests" / "data" / "fixtures"


def test_score_each_schema_end_to_end():
  """``ste-jax score FILE --format X`` on the hand-written fixtures: schema, counts, mappings."""
  runs = [
    ("mtbench_pair.jsonl", "mtbench", ["--skip-bad-rows"], 5, "mtbench"),
    (
      "arena_hard.jsonl",
      "arena-hard",
      ["--skip-bad-rows", "--strong-weight", "1"],
      6,
      "arena-hard",
    ),
    ("lm_eval", "lm-eval", [], 3, "lm-eval"),
    (
      "alpacaeval_annotations.json",
      "auto",
      ["--skip-bad-rows", "--fractional", "weights"],
      6,
      "alpacaeval",
    ),
    (
      "atp_matches.csv",
      "auto",
      ["--skip-bad-rows", "--context-column", "surface"],
      5,
      "winner-loser",
    ),
    ("football_results.csv", "scores", ["--skip-bad-rows"], 5, "scores"),
    ("engine_games.pgn", "auto", ["--skip-bad-rows"], 3, "chess"),
  ]
  for name, fmt, extra, comparisons, schema in runs:
    code, out, err = run(
      "score",
      FIXTURES / name,
      "--format",
      fmt,
      "--estimator",
      "winrate",
      "--bootstrap",
      "0",
      "--output",
      "json",
      *extra,
    )
    assert code == 0, (name, err)
    load = json.loads(out)["load"]
    assert load["comparisons"] == comparisons, (name, load)
    assert load["rows_read"] == load["rows_used"] + load["rejected"]
    assert load["mappings"] and load["schema"] == schema
  code, out, err = run(
    "score",
    FIXTURES / "mtbench_pair.jsonl",
    "--order-swap",
    "consistent",
    "--estimator",
    "winrate",
    "--bootstrap",
    "0",
    "--output",
    "json",
    "--skip-bad-rows",
  )
  load = json.loads(out)["load"]
  assert (
    code == 0
    and load["comparisons"] == 3
    and load["rejected_by_reason"] == {"dropped by policy": 2, "judge error": 1}
  )
  assert load["position_bias"] == {
    "first_wins": 6,
    "second_wins": 2,
    "ties": 2,
    "first": "first position",
  }


def test_score_policy_drops_are_not_bad_rows_and_table_shows_mappings():
  code, out, err = run(
    "score",
    FIXTURES / "arena_battles.csv",
    "--ties",
    "drop",
    "--context-column",
    "language",
    "--estimator",
    "winrate",
    "--bootstrap",
    "0",
  )
  assert code == 0, err
  assert (
    "schema: arena" in out and "position bias" in out and "merged names: 'llama', 'llama '" in out
  )
  assert max(map(len, out.splitlines())) <= 120  # the load report too, wrapped
  assert "rejected 1 (dropped by policy: 1)" in _same_words(out) and "'(none)'" in out
  code, out, err = run(
    "score",
    FIXTURES / "arena_battles.csv",
    "--ties",
    "drop",
    "--both-bad",
    "drop",
    "--estimator",
    "winrate",
    "--bootstrap",
    "0",
    "--output",
    "json",
  )
  assert code == 0 and json.loads(out)["load"]["rejected_by_reason"] == {"dropped by policy": 3}
  _one_line_error(
    ["score", FIXTURES / "mtbench_pair.jsonl"], "1 bad row of 6", "judge error: 1 (first at line 5"
  )
  _one_line_error(["score", FIXTURES / "arena_battles.csv", "--format", "simple"], "column 'a'")
  _one_line_error(["score", FIXTURES / "arena_battles.csv", "--ties", "never"], "--ties", code=2)


# about 10 s on 2 cores; the same columns are checked through core_table by default
@pytest.mark.slow
def test_score_solutions_columns():
  """``--solutions`` adds the named solutions of the estimator's tournament as columns (bundled
  data)."""
  code, out, _ = run(
    "score",
    dataset(_cli.DEMO_DATASET),
    "--bootstrap",
    "0",
    "--output",
    "csv",
    "--solutions",
    "bipartisan,mcs,ml",
  )
  assert code == 0
  df = pd.read_csv(io.StringIO(out), keep_default_na=False)
  assert list(df.columns[-3:]) == ["bipartisan", "mcs", "ml"]
  assert abs(df.ml.sum() - 1) < 1e-4
  # gpt-4 is a Condorcet winner of the Vicuna-80 votes: every solution is {gpt-4}.
  for col in ("bipartisan", "mcs"):
    assert df.agent[df[col].astype(str).str.lower() == "true"].tolist() == ["gpt-4"]
  assert df.agent[df.ml.idxmax()] == "gpt-4" and df.ml.max() > 0.999


def test_explain_schwartz_witness_for_an_outside_agent(tmp_path):
  """w > x > y by strict wins, z ties everyone and w-y is never compared (a tie): the Smith set is
  everyone, the Schwartz set {w, z}; y is out, witnessed by the strict chain w > x > y."""
  path = tmp_path / "schwartz.csv"
  path.write_text("a,b,winner\nw,x,a\nw,x,a\nx,y,a\nx,y,a\nz,w,tie\nz,x,tie\nz,y,tie\n")
  code, out, err = run("explain", path, "y", "--estimator", "winrate")
  assert code == 0, err
  assert max(map(len, out.splitlines())) <= 120
  assert (
    "Schwartz set (w, z): y is out: w, a member, reaches it by strict wins, w > x (1.00) > y "
    "(1.00), "
    "and no chain of strict wins leads from y back to w"
  ) in _same_words(out)
  code, out, err = run("explain", path, "y", "--estimator", "winrate", "--output", "json")
  assert code == 0, err
  assert [s["agent"] for s in json.loads(out)["schwartz"]["chain"]] == ["w", "x", "y"]


# --------------------------------------------------------------------------------------------
# vote robustness (issue 36)


def test_score_robustness_columns_equal_vote_robustness(tmp_path):
  """``--robustness`` adds flips_tc / removals_tc: the exact counts of vote_robustness."""
  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import vote_robustness

  path = dataset(_cli.DEMO_DATASET)
  code, out, err = run(
    "score", path, "--estimator", "posterior", "--bootstrap", "0", "--robustness", "--output", "csv"
  )
  assert code == 0, err
  frame = pd.read_csv(io.StringIO(out)).set_index("agent")
  comparisons, _ = load_comparisons(path)
  r = vote_robustness(comparisons, estimator="posterior").to_frame()
  assert frame["flips_tc"].to_dict() == r["flips_to_change"].to_dict()
  assert frame["removals_tc"].to_dict() == r["removals_to_change"].to_dict()
  assert "flips_tc / removals_tc" in err  # the conventions say what the columns are


def test_robustness_cells_tell_none_from_not_computed():
  """-1 (no set of comparisons changes the membership) reads "none"; a missing count "-"."""
  from ste_jax._render import _extra_cell

  assert [_extra_cell("flips_tc", v) for v in (-1, None, 3, "1..3")] == ["none", "-", "3", "1..3"]


def test_score_robustness_for_the_model_holds_the_imputed_pairs_fixed(tmp_path):
  """The model estimator: flips_tc / removals_tc and flips_uc / removals_uc of its relations,
  imputed pairs held fixed, labelled."""
  import jax

  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import ModelEstimator, vote_robustness

  data = tmp_path / "battles.csv"
  data.write_text("a,b,winner\n" + "x,y,a\ny,z,a\nz,x,a\nx,w,a\ny,w,a\n" * 2)
  code, out, err = run(
    "score", data, "--estimator", "model", "--bootstrap", "0", "--robustness", "--output", "csv"
  )
  assert code == 0, err
  frame = pd.read_csv(io.StringIO(out), dtype={"flips_uc": str, "removals_uc": str})
  frame = frame.set_index("agent")
  comparisons, _ = load_comparisons(data)
  k_fit, _ = jax.random.split(jax.random.key(0))  # the table's fit key (seed 0)
  est = ModelEstimator()
  fitted = est.fit(k_fit, comparisons)
  r = vote_robustness(comparisons, estimator=est, fitted=fitted, uncovered=True).to_frame()
  assert frame["flips_tc"].to_dict() == r["flips_to_change"].to_dict()
  assert frame["removals_tc"].to_dict() == r["removals_to_change"].to_dict()
  assert frame["flips_uc"].notna().all() and frame["removals_uc"].notna().all()
  for column, prefix in (("flips_uc", "uc_flips"), ("removals_uc", "uc_removals")):
    for agent, cell in frame[column].items():
      lo, hi = r.loc[agent, f"{prefix}_lower"], r.loc[agent, f"{prefix}_to_change"]
      assert cell == (str(hi) if lo == hi else f"{lo}..{hi}")
  assert (r["uc_flips_to_change"] > 0).any()
  assert "imputed pairs held fixed" in err  # the report line and the conventions
  assert "not computed for the model" not in err


def test_explain_model_robustness_is_labelled(tmp_path):
  import jax

  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import ModelEstimator, vote_robustness
  from ste_jax.evaluate._robustness import MODEL_RELATION

  data = tmp_path / "battles.csv"
  data.write_text("a,b,winner\n" + "x,y,a\ny,z,a\nz,x,a\nx,w,a\ny,w,a\n" * 2)
  code, out, err = run("explain", data, "w", "--estimator", "model", "--output", "json")
  assert code == 0, err
  got = json.loads(out)["robustness"]
  comparisons, _ = load_comparisons(data)
  k_fit, _ = jax.random.split(jax.random.key(0))
  est = ModelEstimator()
  fitted = est.fit(k_fit, comparisons)
  r = vote_robustness(comparisons, estimator=est, fitted=fitted, uncovered=True)
  w = comparisons.agents.index("w")
  assert got["relation"] == MODEL_RELATION
  assert got["flips_to_change"] == r.flips_to_change[w] and got["change"] == "join"
  assert "imputed pairs held fixed" in got["text"]
  assert got["uncovered"]["reverse"]["upper"] == r.uc_flips_to_change[w]
  assert got["uncovered"]["remove"]["upper"] == r.uc_removals_to_change[w]
  assert "Uncovered Set" in got["text"] and "strict relation" in got["text"]


INFLUENCE_BATTLES = (
  "a,b,winner\n"
  + "x,y,a\ny,z,a\nz,x,a\nx,w,a\ny,w,a\nw,z,a\nx,y,b\ny,z,a\nz,x,a\nx,w,a\nz,w,b\nx,z,a\n"
)


@pytest.mark.parametrize("estimator", ["winrate", "posterior"])
def test_score_influence_lists_the_largest_and_leave_one_out_agrees(tmp_path, estimator):
  """``--influence K``: per top agent and score, the K largest |d score / d weight| of
  comparison_influence; removing the top comparison moves the score the way stated."""
  import jax

  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import comparison_influence

  data = tmp_path / "battles.csv"
  data.write_text(INFLUENCE_BATTLES)
  flags = ("--estimator", estimator, "--bootstrap", "0", "--tau", "0.1")
  code, out, err = run("score", data, *flags, "--influence", "2", "--output", "json")
  assert code == 0, err
  table = json.loads(out)["tables"][0]
  listed = table["influence"]
  comparisons, _ = load_comparisons(data)
  names = list(comparisons.agents)
  agents = list(dict.fromkeys(r["agent"] for r in listed))
  infl = comparison_influence(
    jax.random.key(0), comparisons, estimator, agents=agents, tau=0.1, gamma=0.1
  )
  assert len(agents) == 3
  for k, agent in enumerate(agents):
    for score in ("top_cycle", "uncovered"):
      rows = [r for r in listed if r["agent"] == agent and r["score"] == score]
      full = getattr(infl, score)[k]
      votes = {}  # identical votes (same a, b, outcome) have one influence, listed once
      for i in range(comparisons.num_comparisons):
        vote = (int(comparisons.a[i]), int(comparisons.b[i]), float(comparisons.outcome[i]))
        votes[vote] = abs(float(full[i]))
      distinct = np.sort(list(votes.values()))[::-1]
      got = [abs(r["influence"]) for r in rows]
      np.testing.assert_allclose(got, distinct[: len(got)], rtol=1e-4, atol=1e-7)  # float32
      for r in rows:
        i = r["comparison"]
        assert (names[comparisons.a[i]], names[comparisons.b[i]]) == (r["a"], r["b"])
        assert r["influence"] == pytest.approx(float(full[i]), rel=1e-4, abs=1e-7)
  # leave one out: drop the file line of the top agent's most influential Top-Cycle comparison
  top = next(r for r in listed if r["score"] == "top_cycle")
  lines = INFLUENCE_BATTLES.splitlines()
  edited = tmp_path / "edited.csv"
  edited.write_text("\n".join(lines[: top["comparison"] + 1] + lines[top["comparison"] + 2 :]))
  before = {r["agent"]: r["tc_score"] for r in table["rows"]}
  code, out, err = run("score", edited, *flags, "--output", "json")
  assert code == 0, err
  after = {r["agent"]: r["tc_score"] for r in json.loads(out)["tables"][0]["rows"]}
  change = after[top["agent"]] - before[top["agent"]]
  assert abs(top["removal_effect"]) > 1e-3 and np.sign(change) == np.sign(top["removal_effect"])
  code, out, err = run("score", data, *flags, "--influence", "1")
  assert code == 0 and "if removed" in out and f"{top['comparison'] + 1}" in out


def test_score_influence_names_the_input_lines(tmp_path):
  """``--influence K`` with bad rows before the influential ones: each listed comparison's
  ``line`` is the file line holding its agents and outcome (JSON and the text table)."""
  import csv

  data = tmp_path / "battles.csv"
  body = INFLUENCE_BATTLES.splitlines()
  data.write_text("\n".join([body[0], "x,,a", "y,y,b", "x,y,maybe", *body[1:]]) + "\n")
  flags = ("--estimator", "winrate", "--bootstrap", "0", "--tau", "0.1", "--skip-bad-rows")
  code, out, err = run("score", data, *flags, "--influence", "2", "--output", "json")
  assert code == 0, err
  listed = json.loads(out)["tables"][0]["influence"]
  with open(data, newline="") as f:
    reader = csv.DictReader(f)
    rows = {reader.line_num: row for row in reader}
  assert listed and all(r["line"] == r["comparison"] + 5 for r in listed)  # 3 bad rows skipped
  for r in listed:
    row = rows[r["line"]]
    assert (row["a"], row["b"]) == (r["a"], r["b"])
    assert {"a": 1.0, "b": 0.0, "tie": 0.5}[row["winner"]] == r["outcome"]
  code, out, err = run("score", data, *flags, "--influence", "1")
  assert code == 0, err
  header = next(line for line in out.splitlines() if "if removed" in line and "line" in line)
  assert header.split()[:4] == ["agent", "score", "comparison", "line"]
  first = out.splitlines()[out.splitlines().index(header) + 1].split()
  top = listed[0]
  assert first[4 if top["rows"] == 1 else 5] == str(top["line"])  # "TC 0.915" is two words
  assert "line = that comparison's line in the input file" in " ".join(out.split())


def test_explain_reports_the_votes_that_change_membership():
  path = dataset(_cli.DEMO_DATASET)
  code, out, err = run("explain", path, "bard", "--estimator", "winrate", "--output", "json")
  assert code == 0, err
  r = json.loads(out)["robustness"]
  assert r["change"] == "join"
  assert sum(v["votes"] for v in r["flips"]) == r["flips_to_change"] > 0
  assert sum(v["votes"] for v in r["removals"]) == r["removals_to_change"] > 0
  code, out, _ = run("explain", path, "gpt-4", "--estimator", "posterior")
  assert code == 0 and "vote robustness: for gpt-4 to leave the hard Top Cycle, reverse" in out


def test_score_tier_intervals_columns_agree_with_the_verdicts():
  """``--tier-intervals`` adds tier_best / tier_worst; tier 1 matches the certified verdicts."""
  path = dataset(_cli.DEMO_DATASET)
  code, out, err = run(
    "score",
    path,
    "--estimator",
    "winrate",
    "--bootstrap",
    "50",
    "--tier-intervals",
    "--output",
    "csv",
  )
  assert code == 0, err
  frame = pd.read_csv(io.StringIO(out))
  assert (frame["tier_best"] <= frame["tier_worst"]).all() and (frame["tier_best"] >= 1).all()
  assert ((frame["tier_worst"] == 1) == (frame["tc_verdict"] == "in")).all()
  assert ((frame["tier_best"] == 1) == (frame["tc_verdict"] != "out")).all()
  assert "tier_best / tier_worst" in err


def test_score_robustness_uncovered_columns_equal_vote_robustness():
  """``--robustness`` also adds flips_uc / removals_uc: vote_robustness's Uncovered-Set counts."""
  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import vote_robustness

  path = dataset(_cli.DEMO_DATASET)
  code, out, err = run(
    "score", path, "--estimator", "winrate", "--bootstrap", "0", "--robustness", "--output", "csv"
  )
  assert code == 0, err
  frame = pd.read_csv(io.StringIO(out), dtype={"flips_uc": str, "removals_uc": str})
  frame = frame.set_index("agent")
  comparisons, _ = load_comparisons(path)
  r = vote_robustness(comparisons, estimator="winrate", uncovered=True).to_frame()
  for column, prefix in (("flips_uc", "uc_flips"), ("removals_uc", "uc_removals")):
    for agent, cell in frame[column].items():
      lo, hi = r.loc[agent, f"{prefix}_lower"], r.loc[agent, f"{prefix}_to_change"]
      assert cell == (str(hi) if lo == hi else f"{lo}..{hi}")
  code, out, err = run("score", path, "--estimator", "winrate", "--bootstrap", "0", "--robustness")
  assert code == 0 and "flips_uc" in out


def test_score_task_mix_columns_bracket_the_uniform_mix(tmp_path):
  """``--task-mix-radius`` adds tc_mix_min / tc_mix_max / hard_tc_mix on per-task data."""
  import jax

  from ste_jax.data import from_task_results
  from ste_jax.evaluate import task_mix_robustness

  path = tmp_path / "tasks.csv"
  rows = ["agent,task,score,family"]
  for t in range(12):  # alpha leads family f0, beta family f1
    rows += [
      f"alpha,t{t},{int(t % 2 == 0 or t % 3 == 0)},f{t % 2}",
      f"beta,t{t},{int(t % 2 == 1 or t % 4 == 0)},f{t % 2}",
      f"gamma,t{t},{int(t % 5 == 0)},f{t % 2}",
    ]
  path.write_text("\n".join(rows) + "\n")
  args = ("--format", "tasks", "--context-column", "family", "--bootstrap", "0")
  code, out, err = run("score", path, *args, "--task-mix-radius", "0.3", "--output", "csv")
  assert code == 0, err
  frame = pd.read_csv(io.StringIO(out)).set_index("agent")
  assert (frame["tc_mix_min"] <= frame["tc_mix_max"]).all()
  comparisons, _ = from_task_results(pd.read_csv(path), context="family")
  r = task_mix_robustness(jax.random.key(0), comparisons, radius=0.3, tau=0.01, gamma=0.01)
  uniform = dict(zip(comparisons.agents, np.asarray(r.score, dtype=float)))
  for agent, row in frame.iterrows():
    assert row["tc_mix_min"] - 1e-3 <= uniform[agent] <= row["tc_mix_max"] + 1e-3
  assert "tc_mix_min / tc_mix_max" in err
  code, out, err = run("score", path, *args[:2], "--bootstrap", "0", "--task-mix-radius", "0.3")
  assert code == 0 and "not computed, the data hold 1 task" in out + err
  code, _, err = run("score", path, *args, "--task-mix-radius", "1.5")
  assert code != 0 and "task_mix_radius" in err.replace("-", "_")


def test_explain_reports_the_uncovered_set_votes():
  """``explain`` adds the Uncovered-Set counts: vote_robustness(uncovered=True) for that agent."""
  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import vote_robustness

  path = dataset(_cli.DEMO_DATASET)
  comparisons, _ = load_comparisons(path)
  r = vote_robustness(comparisons, estimator="winrate", uncovered=True)
  for agent in ("bard", "gpt-4"):
    code, out, err = run("explain", path, agent, "--estimator", "winrate", "--output", "json")
    assert code == 0, err
    uc = json.loads(out)["robustness"]["uncovered"]
    i = comparisons.agents.index(agent)
    assert uc["change"] == ("leave" if r.uc_members[i] else "join")
    assert uc["reverse"]["upper"] == r.uc_flips_to_change[i]
    assert uc["remove"]["upper"] == r.uc_removals_to_change[i]
    assert sum(v["votes"] for v in uc["reverse"]["votes"]) == uc["reverse"]["upper"]
  code, out, _ = run("explain", path, "gpt-4", "--estimator", "winrate")
  assert code == 0 and "the hard Uncovered Set: reverse" in _same_words(out)
