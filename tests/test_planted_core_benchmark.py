"""``benchmarks/planted_core.py --quick`` runs end to end (issue 5): STE beats BTL at m = 50, mu = 0."""

import pathlib
import subprocess
import sys

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "planted_core.py"


def test_planted_core_quick(tmp_path):
  out = tmp_path / "planted_core"
  proc = subprocess.run(
      [sys.executable, str(SCRIPT), "--quick", "--no-progress", "--out", str(out)],
      cwd=ROOT,
      capture_output=True,
      text=True,
      timeout=600,
  )
  assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
  assert "Table 2" in proc.stdout and "Table 5" in proc.stdout

  grid = pd.read_csv(out / "grid.csv")
  cell = grid[(grid.m == 50) & (grid.mu == 0.0)]
  f1 = cell.groupby("method").f1.mean()
  assert f1["STE-post"] > f1["BTL"], f1.to_dict()

  oracle = pd.read_csv(out / "oracle.csv")
  for col in ("tc_f1", "uc_f1", "tc_auroc", "uc_auroc"):
    assert (oracle[col] == 1.0).all(), oracle[["case", col]]
  assert oracle.hard_tc_is_core.all()

  for name in ("bootstrap.csv", "sensitivity.csv", "report.md", "fig_recovery_n50.png",
               "fig_method_summary.png", "fig_bootstrap_f1.png"):
    assert (out / name).is_file(), name
