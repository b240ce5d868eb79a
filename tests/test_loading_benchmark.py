"""``benchmarks/loading.py`` (issue 12): ``--quick`` end to end in a subprocess (``slow``): it
prints the Markdown table, one row per size and format, with the planted bad rows reported."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "loading.py"


@pytest.mark.slow
def test_loading_benchmark_quick():
  proc = subprocess.run([sys.executable, str(SCRIPT), "--quick"], cwd=ROOT, capture_output=True,
                        text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
  lines = proc.stdout.splitlines()
  header = next(i for i, line in enumerate(lines) if line.startswith("| rows | format |"))
  assert lines[header + 1].startswith("|---:|")
  rows = [line.split("|")[1:-1] for line in lines[header + 2:] if line.startswith("|")]
  assert [(int(r[0]), r[1].strip()) for r in rows] == [
      (10_000, "csv"), (10_000, "parquet"), (100_000, "csv"), (100_000, "parquet")]
  for r in rows:
    assert float(r[3]) > 0 and float(r[7]) > 0, r  # ste_jax and pandas load times
    assert "lines ok" in r[-1], r
