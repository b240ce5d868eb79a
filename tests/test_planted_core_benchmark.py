"""``benchmarks/planted_core.py``: a fast import check of its quick mode in the default suite, and
(``slow``, ``make test-slow``) ``--quick`` end to end in a subprocess (issue 5): STE beats BTL at
m = 50, mu = 0."""

import dataclasses
import importlib.util
import pathlib
import subprocess
import sys

import pandas as pd
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "planted_core.py"


def _load_script():
  spec = importlib.util.spec_from_file_location("_planted_core_script", SCRIPT)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)  # imports nothing heavy: jax and the library load inside main()
  return module


def test_planted_core_quick_mode_imports(tmp_path):
  script = _load_script()
  assert callable(script.main)
  args = script.parse_args(["--quick", "--no-progress", "--out", str(tmp_path)])
  assert args.quick and args.no_progress and args.out == str(tmp_path)
  quick, full = script.QUICK, script.FULL
  for field in dataclasses.fields(quick):  # the quick slice is a sub-grid of the full run
    q, f = getattr(quick, field.name), getattr(full, field.name)
    if isinstance(q, tuple):
      assert set(q) <= set(f), (field.name, q, f)
  assert quick.num_seeds < full.num_seeds and quick.boot_replicas < full.boot_replicas


@pytest.mark.slow
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
