"""``benchmarks/loading.py`` (issue 12): ``--quick`` end to end in a subprocess (``slow``): it
prints the Markdown table, one row per size and format (CSV, Parquet, PGN), with the planted bad
rows reported at their lines."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "loading.py"


@pytest.mark.slow
def test_loading_benchmark_quick():
  proc = subprocess.run(
    [sys.executable, str(SCRIPT), "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=600
  )
  assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
  lines = proc.stdout.splitlines()
  header = next(i for i, line in enumerate(lines) if line.startswith("| rows | format |"))
  assert lines[header + 1].startswith("|---:|")
  rows = [line.split("|")[1:-1] for line in lines[header + 2 :] if line.startswith("|")]
  assert [(int(r[0]), r[1].strip()) for r in rows] == [
    (n, fmt) for n in (10_000, 100_000) for fmt in ("csv", "parquet", "pgn")
  ]
  for r in rows:
    assert float(r[3]) > 0 and float(r[7]) > 0, r  # ste_jax and baseline load times
    assert "lines ok" in r[-1], r
