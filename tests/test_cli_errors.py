"""Every bad option value of ``ste-jax`` ends in one stderr line naming the option (issue 40).

Table-driven, in-process through :func:`ste_jax._cli.main` with ``capsys``: each bad value gives a
non-zero exit status (2 where argparse refuses it, 1 where the command does), exactly one line on
stderr that names the option, and no traceback. An unexpected exception is a bug: its traceback,
then one line saying so, exit status 3. ``FILE -`` reads standard input (one subprocess run
through a real pipe).
"""

import io
import math
import pathlib
import subprocess
import sys

import pandas as pd
import pytest

import ste_jax
from ste_jax import _cli
from ste_jax._cli import main
from ste_jax.evaluate import LeaderboardSettings, ResamplingSettings
from ste_jax.evaluate._replicas import MAX_REPLICAS

ROOT = pathlib.Path(__file__).resolve().parents[1]
ROWS = "a,b,winner\nx,y,a\ny,z,a\nz,x,a\nx,y,b\nx,z,a\ny,z,b\nx,y,a\nw,x,b\nw,y,b\nw,z,a\n"
FLOAT32_MAX = 3.4028234663852886e38  # np.finfo(np.float32).max, written out


@pytest.fixture
def data(tmp_path) -> pathlib.Path:
  path = tmp_path / "battles.csv"
  path.write_text(ROWS)
  return path


def _run(capsys, argv) -> tuple[int, str, str]:
  code = main([str(a) for a in argv])
  captured = capsys.readouterr()
  return code, captured.out, captured.err


# (argv after FILE or the command, text the one stderr line must contain, exit status); "FILE" is
# replaced by the data file.
BAD_OPTIONS = [
  # temperatures: finite but beyond float32 (the scores' dtype), zero, NaN, empty
  (["score", "FILE", "--tau", "1e300"], ["--tau", "(0, 3.4e+38]", "1e+300"], 2),
  (["score", "FILE", "--tau", "3.5e38"], ["--tau", "(0, 3.4e+38]"], 2),
  (["score", "FILE", "--gamma", "1e39"], ["--gamma", "(0, 3.4e+38]"], 2),
  (["score", "FILE", "--tau", "0"], ["--tau", "> 0"], 2),
  (["score", "FILE", "--tau", "nan"], ["--tau"], 2),
  (["score", "FILE", "--tau", "inf"], ["--tau"], 2),
  (["score", "FILE", "--tau", ""], ["--tau"], 2),
  (["demo", "--tau", "1e300"], ["--tau", "(0, 3.4e+38]"], 2),
  # replicas: a hard limit declared once (ResamplingSettings.num_replicas)
  (["score", "FILE", "--bootstrap", "10000000000"], ["--bootstrap", "[0, 100,000]"], 2),
  (["score", "FILE", "--replicas", str(MAX_REPLICAS + 1)], ["--replicas", "100,000"], 2),
  (["score", "FILE", "--bootstrap", "-1"], ["--bootstrap"], 2),
  (["score", "FILE", "--bootstrap", "1e3"], ["--bootstrap"], 2),
  (["demo", "--bootstrap", "10000000000"], ["--bootstrap", "100,000"], 2),
  (["suggest", "FILE", "--replicas", "10000000000"], ["--replicas", "100,000"], 2),
  # seeds: jax keys keep 32 bits
  (["score", "FILE", "--seed", str(2**64 + 1)], ["--seed", "[0, 4294967295]"], 2),
  (["score", "FILE", "--seed", str(2**32)], ["--seed", "[0, 4294967295]"], 2),
  (["score", "FILE", "--seed", "-1"], ["--seed", "[0, 4294967295]"], 2),
  (["score", "FILE", "--seed", ""], ["--seed"], 2),
  (["explain", "FILE", "x", "--seed", "-1"], ["--seed"], 2),
  (["suggest", "FILE", "--seed", str(2**64)], ["--seed"], 2),
  (["demo", "--seed", "-3"], ["--seed"], 2),
  # resampling that needs a fitted model
  (
    ["score", "FILE", "--bootstrap", "3", "--resampling", "parametric", "--estimator", "winrate"],
    ["--resampling parametric", "winrate", "--estimator model"],
    1,
  ),
  (
    ["score", "FILE", "--bootstrap", "3", "--resampling", "parametric", "--estimator", "posterior"],
    ["--resampling parametric", "posterior"],
    1,
  ),
  (
    ["score", "FILE", "--bootstrap", "3", "--resampling", "parametric"],  # auto: every pair met
    ["--resampling parametric", "posterior", "auto"],
    1,
  ),
  (["score", "FILE", "--bootstrap", "3", "--resampling", "bogus"], ["--resampling"], 2),
  # figures
  (["score", "FILE", "--plot", "report.txt"], ["--plot", "'.txt'", ".png", ".pdf", ".svg"], 1),
  (["score", "FILE", "--plot", ""], ["--plot"], 1),
  (["demo", "--plot", "demo.docx"], ["--plot", "'.docx'", ".png"], 1),
  # other ranges
  (["score", "FILE", "--confidence", "1"], ["--confidence"], 2),
  (["score", "FILE", "--confidence", "nan"], ["--confidence"], 2),
  (["score", "FILE", "--top", "-1"], ["--top"], 2),
  (["score", "FILE", "--head-to-head", "-1"], ["--head-to-head"], 2),
  (["score", "FILE", "--record-tolerance", "nan"], ["--record-tolerance"], 2),
  (["score", "FILE", "--record-tolerance", "1e308"], ["--record-tolerance", "3.4e+38]"], 2),
  (["explain", "FILE", "x", "--record-tolerance", "1e39"], ["--record-tolerance"], 2),
  (["score", "FILE", "--solutions", "nope"], ["--solutions"], 2),
  (["score", "FILE", "--columns", ""], ["--columns"], 2),
  (["suggest", "FILE", "--k", "0"], ["--k", ">= 1"], 2),
  (["suggest", "FILE", "--k", str(10**30)], ["--k", "between 1 and 6"], 1),
  (["suggest", "FILE", "--confidence", "0.5"], ["--confidence"], 2),
  (
    ["suggest", "FILE", "--replicas", "0", "--plausible", "model", "--k", "1"],
    ["--replicas >= 1"],
    1,
  ),
  (["planted", "--out", "FILE/sub"], ["--out", "cannot create the folder"], 1),
  # input: a file without a known suffix, standard input without a file format
  (["score", "NOSUFFIX"], ["--file-format"], 1),
  (["score", "-"], ["--file-format", "csv"], 1),
]


@pytest.mark.parametrize(
  "argv,expected,code", BAD_OPTIONS, ids=lambda x: " ".join(x) if isinstance(x, list) else None
)
def test_bad_option_is_one_line_naming_it(argv, expected, code, data, capsys, monkeypatch):
  monkeypatch.chdir(data.parent)  # a figure that were written anyway lands in tmp_path
  nosuffix = data.parent / "battles"
  nosuffix.write_text(ROWS)
  argv = [{"FILE": str(data), "NOSUFFIX": str(nosuffix)}.get(a, a) for a in argv]
  argv = [a.replace("FILE/", f"{data}/") for a in argv]
  got, out, err = _run(capsys, argv)
  lines = err.strip().splitlines()
  assert got == code, (got, err)
  assert len(lines) == 1, err
  assert "Traceback" not in err and lines[0].startswith(f"ste-jax {argv[0]}: error: "), err
  for text in expected:
    assert text in lines[0], (text, lines[0])
  assert out == ""  # refused before anything was computed or written
  assert sorted(p.name for p in data.parent.iterdir()) == ["battles", "battles.csv"]


def test_an_unexpected_exception_is_a_bug_with_its_traceback(capsys, monkeypatch):
  def broken(args):
    raise RuntimeError("boom")

  monkeypatch.setitem(_cli.COMMANDS, "demo", broken)
  code, _, err = _run(capsys, ["demo"])
  lines = err.strip().splitlines()
  assert code == 3
  assert lines[0] == "Traceback (most recent call last):"
  assert lines[-2] == "RuntimeError: boom"
  assert lines[-1].startswith("ste-jax demo: this is a bug in ste-jax") and "report" in lines[-1]


@pytest.mark.parametrize(
  "error", [ste_jax.InputError("bad row\n  at line 3"), ste_jax.OptionError("--x out of range")]
)
def test_domain_errors_are_one_line_exit_1(error, capsys, monkeypatch):
  def failing(args):
    raise error

  monkeypatch.setitem(_cli.COMMANDS, "demo", failing)
  code, _, err = _run(capsys, ["demo"])
  text = " ".join(line.strip() for line in str(error).splitlines())
  assert (code, err) == (1, f"ste-jax demo: error: {text}\n")


def test_exit_statuses_are_in_the_help(capsys):
  code, out, _ = _run(capsys, ["--help"])
  assert code == 0 and "exit status" in out and "3 a bug" in " ".join(out.split())


def test_settings_refuse_what_the_flags_refuse():
  """The Python API has the same ranges: they are declared once, in the settings."""
  with pytest.raises(ste_jax.OptionError, match=r"tau must be in \(0, 3.4e\+38\]"):
    LeaderboardSettings(tau=1e300)
  with pytest.raises(ste_jax.OptionError, match="gamma"):
    LeaderboardSettings(gamma=math.inf)
  with pytest.raises(ste_jax.OptionError, match="num_replicas must be an integer in"):
    ResamplingSettings(num_replicas=MAX_REPLICAS + 1)
  assert LeaderboardSettings(tau=FLOAT32_MAX, num_replicas=MAX_REPLICAS).tau == FLOAT32_MAX


def _scores(capsys, argv) -> pd.DataFrame:
  code, out, err = _run(capsys, argv)
  assert code == 0, err
  return pd.read_csv(io.StringIO(out))


def test_the_largest_temperature_gives_the_limit_not_nan(data, capsys):
  """``tau = gamma`` = the largest float32: every edge is ``1/2``, so ``t = 1/2`` and, with the
  cover ``1/2 * (1 - 1/4)``, ``u = 5/8`` (the ``tau -> inf`` limit, by hand)."""
  argv = ["score", data, "--estimator", "winrate", "--bootstrap", "0", "--output", "csv"]
  table = _scores(capsys, argv + ["--tau", repr(FLOAT32_MAX)])
  assert table["tc_score"].to_numpy() == pytest.approx(0.5, abs=1e-6)
  assert table["uc_score"].to_numpy() == pytest.approx(0.625, abs=1e-6)


def test_stdin_reads_like_the_file(data, capsys, monkeypatch):
  argv = ["--bootstrap", "0", "--output", "csv", "--estimator", "winrate"]
  from_file = _run(capsys, ["score", data, *argv])
  for flag in ("--file-format", "--format"):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ROWS.encode())))
    from_stdin = _run(capsys, ["score", "-", flag, "csv", *argv])
    assert from_stdin == from_file
  monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ROWS.encode())))
  code, out, _ = _run(capsys, ["score", "-", "--format", "simple", "--format", "csv", *argv])
  assert (code, out) == (0, from_file[1])
  # copied in blocks: a stream larger than one block, and a text stream with no bytes beneath
  monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ROWS.encode())))
  monkeypatch.setattr(_cli.shutil, "COPY_BUFSIZE", 7)
  assert _run(capsys, ["score", "-", "--file-format", "csv", *argv]) == from_file
  monkeypatch.setattr(sys, "stdin", io.StringIO(ROWS))
  assert _run(capsys, ["score", "-", "--file-format", "csv", *argv]) == from_file


def test_stdin_names_itself_in_messages_and_reports(capsys, monkeypatch):
  bad = "a,b,winner\nx,y,a\nx,y\ny,z,b\n"
  monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.encode())))
  code, _, err = _run(capsys, ["score", "-", "--file-format", "csv", "--bootstrap", "0"])
  assert code == 1 and err.startswith("ste-jax score: error: <stdin>: 1 bad row of 3"), err
  assert "line 3" in err and "ste_jax_stdin_" not in err and len(err.splitlines()) == 1
  monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.encode())))
  argv = ["score", "-", "--file-format", "csv", "--bootstrap", "0", "--skip-bad-rows"]
  code, out, err = _run(capsys, [*argv, "--output", "json"])
  assert code == 0 and err.startswith("<stdin>: read 3 rows, used 2"), err
  assert '"source": "<stdin>"' in out


@pytest.mark.slow  # a fresh process importing JAX and compiling (about 20 s on 2 cores)
def test_a_real_pipe_into_the_entry_point(data):
  """``cat FILE | python -m ste_jax score - --format csv`` prints what ``score FILE`` prints."""
  argv = ["--bootstrap", "0", "--output", "csv", "--estimator", "winrate"]
  run = dict(capture_output=True, text=True, timeout=300, cwd=ROOT)
  piped = subprocess.run(
    [sys.executable, "-m", "ste_jax", "score", "-", "--format", "csv", *argv], input=ROWS, **run
  )
  assert piped.returncode == 0, piped.stderr
  table = pd.read_csv(io.StringIO(piped.stdout))
  # Oracle: win rates counted by hand from ROWS (no ties): w 1-2, x 4-2, y 3-3, z 2-3.
  rates = dict(zip(table["agent"], table["win_rate"]))
  assert rates == pytest.approx({"w": 1 / 3, "x": 4 / 6, "y": 3 / 6, "z": 2 / 5})
