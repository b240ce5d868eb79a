"""``benchmarks/planted_core.py``: a fast import check of its quick mode in the default suite, and
(``slow``, ``make test-slow``) ``--quick`` end to end in a subprocess (issue 5): STE beats BTL at
m = 50, mu = 0, and the STE-model rows cover their slice of the grid."""

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
  spec.loader.exec_module(module)  # a thin driver: imports ste_jax.benchmarking, runs nothing
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
  assert quick.model_seeds <= full.model_seeds and set(full.model_ns) <= set(full.ns)
  assert script.MODEL_METHOD in script.RECOVERY_METHODS and set(script.METHODS) <= set(
    script.RECOVERY_METHODS
  )


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

  # STE-model (Tables 3-4 only): one row per trial of its slice, paired with the other methods'
  # rows.
  script = _load_script()
  quick = script.QUICK
  model = grid[grid.method == script.MODEL_METHOD]
  slice_ns = [n for n in quick.ns if n in quick.model_ns]
  seeds = min(quick.model_seeds, quick.num_seeds)
  expected = len(slice_ns) * len(quick.core_sizes) * len(quick.ms) * len(quick.mus) * seeds
  assert len(model) == expected > 0
  assert model.n.isin(slice_ns).all() and (model.seed < quick.model_seeds).all()
  assert model[["f1", "auroc", "auprc"]].apply(lambda x: x.between(0, 1)).all().all()
  keys = ["n", "core_size", "m", "mu", "seed"]
  paired = model[keys].merge(grid[grid.method == "STE-post"][keys], on=keys)
  assert len(paired) == len(model)
  assert "STE-model on its slice" in proc.stdout

  oracle = pd.read_csv(out / "oracle.csv")
  for col in ("tc_f1", "uc_f1", "tc_auroc", "uc_auroc"):
    assert (oracle[col] == 1.0).all(), oracle[["case", col]]
  assert oracle.hard_tc_is_core.all()

  for name in (
    "bootstrap.csv",
    "sensitivity.csv",
    "report.md",
    "fig_recovery_n50.png",
    "fig_method_summary.png",
    "fig_bootstrap_f1.png",
  ):
    assert (out / name).is_file(), name
