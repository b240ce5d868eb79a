"""Tests for the game-result schemas (``ste_jax/data/_games.py``) and the PGN reader.

Fixtures (``tests/data/fixtures``), written by hand in the public files' layouts:
``atp_matches.csv`` (Jeff Sackmann's tennis match files), ``football_results.csv``
(international football results, with a ``neutral`` column), ``engine_games.pgn`` (a
cutechess-style engine tournament) and ``lichess_games.csv`` (the lichess export's ``white_id,
black_id, winner``). Expected counts are worked out by hand in the comments.
"""

import gzip
import json
import re

import numpy as np
import pytest

from ste_jax.data import OutcomePolicy, detect_schema, load_comparisons
from tests.data.loaded import FIX, skipping
from tests.data.loaded import rejected_lines as _reasons
from tests.data.loaded import wins_by_pair as _wins

# These tests check the reports of inputs with planted bad rows: the loaders skip them (the default,
# refusing, is tested in test_bad_rows.py), and the BadRowsWarning is checked by ``skipping``.
load_comparisons = skipping(load_comparisons)


def _bias(report):
  b = report.position_bias
  return None if b is None else (b.first_wins, b.second_wins, b.ties, b.first)


def test_tennis_winner_loser_rows():
  # Lines 2-7: Ana>Bo, Cy>Dee, Ana>Cy, Bo>Ana (clay), Dee vs an empty loser (walkover), Bo>Dee.
  c, report = load_comparisons(FIX / "atp_matches.csv")
  assert report.schema == "winner-loser"
  assert _wins(c) == {
    ("Ana Reyes", "Bo Lind"): 1,
    ("Cy Park", "Dee Moss"): 1,
    ("Ana Reyes", "Cy Park"): 1,
    ("Bo Lind", "Ana Reyes"): 1,
    ("Bo Lind", "Dee Moss"): 1,
  }
  assert _reasons(report) == [(6, "missing field")]
  assert "'loser_name'" in report.rejected[0].detail
  assert report.position_bias is None  # the files record no order of play
  c, _ = load_comparisons(FIX / "atp_matches.csv", context="surface")
  assert _wins(c, by_context=True) == {
    ("Ana Reyes", "Bo Lind", "Hard"): 1,
    ("Cy Park", "Dee Moss", "Hard"): 1,
    ("Ana Reyes", "Cy Park", "Hard"): 1,
    ("Bo Lind", "Ana Reyes", "Clay"): 1,
    ("Bo Lind", "Dee Moss", "Clay"): 1,
  }


def test_winner_loser_columns_match_without_case(tmp_path):
  path = tmp_path / "tennis_data.csv"  # tennis-data.co.uk spells them Winner, Loser
  path.write_text(
    "ATP,Surface,Winner,Loser,WRank,LRank\n1,Hard,Ann,Bob,3,9\n1,Grass,Bob,Ann,9,3\n"
    "1,Grass,Bob,Bob,9,9\n"
  )
  c, report = load_comparisons(path)
  assert report.schema == "winner-loser"
  assert _wins(c) == {("Ann", "Bob"): 1, ("Bob", "Ann"): 1}
  assert _reasons(report) == [(4, "self-comparison")]
  assert "'Winner' beat 'Loser'" in report.mappings[0]


def test_football_scores_ties_and_home_advantage():
  # l2 Aland 2-1 Borvia; l3 Borvia 0-0 Cantor; l4 Cantor 1-3 Aland (neutral); l5 Aland 1-1 Cantor;
  # l6 NA-NA (not played); l7 4-"two"; l8 Cantor 3-0 Borvia.
  c, report = load_comparisons(FIX / "football_results.csv")
  assert report.schema == "scores"
  assert _wins(c) == {
    ("Aland", "Borvia"): 1,
    ("Borvia", "Cantor"): 0.5,
    ("Cantor", "Borvia"): 1.5,
    ("Aland", "Cantor"): 1.5,
    ("Cantor", "Aland"): 0.5,
  }
  assert _reasons(report) == [(6, "invalid score"), (7, "invalid score")]
  assert "'away_score' = 'two'" in report.rejected[1].detail
  # Home side over the non-neutral valid games l2 (win), l3 (tie), l5 (tie), l8 (win).
  assert _bias(report) == (2, 0, 2, "home team")
  assert "home team won 100.0% of 2 decisive" in report.position_bias.describe()
  c, report = load_comparisons(FIX / "football_results.csv", policy=OutcomePolicy(tie="drop"))
  assert _wins(c) == {("Aland", "Borvia"): 1, ("Aland", "Cantor"): 1, ("Cantor", "Borvia"): 1}
  assert [r.line for r in report.rejected if r.reason == "dropped by policy"] == [3, 5]


def test_team1_team2_scores(tmp_path):
  path = tmp_path / "nfl.csv"  # FiveThirtyEight's layout: no neutral column, every row counts
  path.write_text(
    "date,team1,team2,score1,score2\n2031-09-01,KC,BUF,27,20\n2031-09-08,BUF,KC,31,31\n"
    "2031-09-15,KC,DEN,,\n2031-09-22,DEN,BUF,3.5,-1\n"
  )
  c, report = load_comparisons(path)
  assert report.schema == "scores"
  assert _wins(c) == {("KC", "BUF"): 1.5, ("BUF", "KC"): 0.5, ("DEN", "BUF"): 1}
  assert _reasons(report) == [(4, "missing field")]
  assert _bias(report) == (2, 0, 1, "home team")


def test_pgn_engine_games():
  # Games start at lines 1, 12, 22, 31, 40: SF-Lc0 draw; Lc0 beats Komodo (white); "*" (rejected);
  # Komodo beats SF with black; a game without a Black tag (rejected).
  c, report = load_comparisons(FIX / "engine_games.pgn")
  assert report.schema == "chess"
  komodo = 'Komodo "Dragon" 4'  # the tag's escaped quotes are read back
  assert _wins(c) == {
    ("Stockfish-Dev", "Lc0 v0.40"): 0.5,
    ("Lc0 v0.40", "Stockfish-Dev"): 0.5,
    ("Lc0 v0.40", komodo): 1,
    (komodo, "Stockfish-Dev"): 1,
  }
  assert _reasons(report) == [(22, "unknown winner label"), (40, "missing field")]
  assert "'*'" in report.rejected[0].detail
  assert _bias(report) == (1, 1, 1, "white")
  c, _ = load_comparisons(FIX / "engine_games.pgn", context="Event")
  assert c.contexts == ("Blitz Side", "Engine League 7")
  assert _wins(c, by_context=True)[(komodo, "Stockfish-Dev", "Blitz Side")] == 1


def test_pgn_records_line_endings_and_stray_text(tmp_path):
  games = (
    '[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 1-0\n\n'
    '[White "B"]\n[Black "A"]\n[Result "1/2-1/2"]\n'  # no movetext: the next tag repeats
    '[White "A"]\n[Black "C"]\n[Result "0-1"]\n'
  )
  path = tmp_path / "g.pgn"
  path.write_text("garbage line\n\n" + games)
  c, report = load_comparisons(path)
  assert _wins(c) == {("A", "B"): 1.5, ("B", "A"): 0.5, ("C", "A"): 1}
  assert _reasons(report) == [(1, "malformed record")]
  assert [r for r in report.rejected][0].detail == "text before the first PGN tag pair"
  assert report.rows_read == 4 and report.rows_used == 3
  crlf = tmp_path / "crlf.pgn.gz"
  with gzip.open(crlf, "wt", newline="") as f:
    f.write(games.replace("\n", "\r\n"))
  c2, report2 = load_comparisons(crlf)
  assert _wins(c2) == {("A", "B"): 1.5, ("B", "A"): 0.5, ("C", "A"): 1}
  assert report2.rejected == ()
  empty = tmp_path / "empty.pgn"
  empty.write_text("1. e4 e5 *\n")
  with pytest.raises(ValueError, match="no comparisons"):
    load_comparisons(empty)


def _reference_pgn(text):
  """An independent line-by-line PGN reader: ``(games as dicts, first-tag lines, line of text before
  the first tag or None)``, the rules of ``_read_pgn`` stated one line at a time."""
  tag = re.compile(r'^[ \t]*\[([A-Za-z0-9_]+)[ \t]+"((?:[^"\\]|\\.)*)"[ \t]*\][ \t]*$')
  games, lines, stray = [], [], None
  current, after_text = None, False
  for number, raw in enumerate(text.split("\n"), start=1):
    line = raw[:-1] if raw.endswith("\r") else raw
    m = tag.match(line)
    if m:
      name, value = m.group(1), re.sub(r"\\(.)", r"\1", m.group(2))
      if current is None or after_text or name in current:
        current = {}
        games.append(current)
        lines.append(number)
      current[name] = value
      after_text = False
    elif line.strip():
      if current is None and stray is None:
        stray = number
      after_text = True
  return games, lines, stray


def test_pgn_reader_equals_a_line_by_line_reader_on_random_files(tmp_path, monkeypatch):
  """Random PGN-like files read as a line-by-line reader reads them.

  Tag lines (repeats, escapes, spaces, no movetext between games), movetext, blank lines, stray
  text first, CRLF, no final newline; records and lines as the reference's (every other file read
  two runs of tags per chunk, so that games and names span chunks).
  """
  from ste_jax.data import _tabular
  from ste_jax.data._tabular import _read_pgn

  rng = np.random.default_rng(0)
  names, values = (
    ["White", "Black", "Result", "Event"],
    ["A", "B b", 'say \\"hi\\"', "c:\\\\d", "", "1-0"],
  )
  for trial in range(60):
    out = []
    for _ in range(rng.integers(1, 30)):
      kind = rng.choice(["tag", "tag", "tag", "move", "blank", "junk"])
      if kind == "tag":
        pad = rng.choice(["", " ", "\t"])
        out.append(f'{pad}[{rng.choice(names)} "{rng.choice(values)}"]{pad}')
      elif kind == "move":
        out.append("1. e4 e5 2. Nf3 1-0")
      elif kind == "junk":
        out.append('[Broken "no end')
      else:
        out.append("")
    text = ("\r\n" if trial % 3 == 0 else "\n").join(out) + ("" if trial % 4 == 0 else "\n")
    games, lines, stray = _reference_pgn(text)
    monkeypatch.setattr(_tabular, "_PGN_RUNS_PER_CHUNK", 2 if trial % 2 else 1 << 15)
    path = tmp_path / f"t{trial}.pgn"
    path.write_bytes(text.encode())
    if not games:
      if text.strip():
        with pytest.raises(ValueError, match="no PGN tag pair"):
          _read_pgn(str(path), None)
      continue
    keys, column, got_lines, pre = _read_pgn(str(path), None)
    offset = stray is not None
    assert got_lines.tolist() == ([stray] if offset else []) + lines, text
    assert (pre[0] is not None) == offset and all(x is None for x in pre[offset:])
    cols = {k: column(k) for k in keys}
    got = [
      {k: v[i] for k, v in cols.items() if v[i] is not None} for i in range(offset, len(got_lines))
    ]
    assert got == games, text


def test_lichess_export_white_black_draw():
  # g1 ann beats bob (white); g2 cid beats bob (black); g3 cid beats ann (white); g4 ann-cid draw;
  # g5 "unknown" (line 6) rejected.
  c, report = load_comparisons(FIX / "lichess_games.csv")
  assert report.schema == "chess"
  assert _wins(c) == {
    ("ann", "bob"): 1,
    ("cid", "bob"): 1,
    ("cid", "ann"): 1.5,
    ("ann", "cid"): 0.5,
  }
  assert _reasons(report) == [(6, "unknown winner label")]
  assert _bias(report) == (2, 1, 1, "white")


def test_game_schemas_are_detected_and_named_in_errors(tmp_path):
  assert (
    detect_schema(["tourney_id", "winner_id", "winner_name", "loser_id", "loser_name"], "x")
    == "winner-loser"
  )
  assert (
    detect_schema(["date", "home_team", "away_team", "home_score", "away_score"], "x") == "scores"
  )
  assert detect_schema(["Event", "White", "Black", "Result"], "x") == "chess"
  assert detect_schema(["white_id", "black_id", "winner"], "x") == "chess"
  path = tmp_path / "t.csv"
  path.write_text("home_team,away_team,home_score\nA,B,1\n")
  with pytest.raises(
    ValueError,
    match=r"scores schema needs the columns home_team, away_team, home_score, "
    r"away_score or team1",
  ):
    load_comparisons(path, schema="scores")
  path.write_text("p,q\n1,2\n")
  with pytest.raises(ValueError, match=r"Known schemas: .*chess: White, Black, Result"):
    load_comparisons(path)


def test_cli_scores_a_pgn_file(tmp_path):
  from tests.test_cli import run  # pylint: disable=g-import-not-at-top

  games = []
  for g in range(10):  # Alpha beats Beta and Gamma every game, Beta and Gamma draw
    for white, black, result in (
      ("Alpha", "Beta", "1-0"),
      ("Gamma", "Alpha", "0-1"),
      ("Beta", "Gamma", "1/2-1/2"),
    ):
      games.append(
        f'[Event "Rapid"]\n[Round "{g}"]\n[White "{white}"]\n[Black "{black}"]\n'
        f'[Result "{result}"]\n\n1. e4 {result}\n'
      )
  path = tmp_path / "league.pgn"
  path.write_text("\n".join(games))
  code, out, err = run(
    "score", path, "--estimator", "winrate", "--bootstrap", "0", "--output", "json"
  )
  assert code == 0, err
  doc = json.loads(out)
  (table,) = doc["tables"]
  assert table["top_cycle"] == ["Alpha"]
  assert doc["load"]["schema"] == "chess" and doc["load"]["position_bias"]["first"] == "white"
