"""The planted-core benchmark (paper §6.1-6.4, Tables 2-5): run, write its files, print its report.

:func:`run_planted_core` computes the experiment rows (:mod:`._planted_experiments`);
:func:`main` is the command line shared by ``ste-jax planted`` and ``benchmarks/planted_core.py``:
it writes ``grid.csv``, ``oracle.csv``, ``bootstrap.csv``, ``sensitivity.csv``, ``report.md`` (the
printed tables, :mod:`._planted_tables`) and three figures (:mod:`._planted_figures`, skipped with
a note when matplotlib is not installed) into ``--out``.

Float64 by default (inside ``jax.enable_x64(True)``, nothing global is changed), so that the 1e-12
tie rule of the top-|C| F1 means what it says (in float32 many saturated posterior edges round to
exactly 1); ``--float32`` to compare.
"""

import argparse
from collections.abc import Sequence
import dataclasses
import pathlib
import sys
import time

import jax
import pandas as pd

from ste_jax.benchmarking._machine import machine_description
from ste_jax.benchmarking._planted_experiments import (
  FULL,
  QUICK,
  Config,
  run_bootstrap,
  run_grid,
  run_oracle,
)
from ste_jax.benchmarking._planted_figures import FIGURES, figures
from ste_jax.benchmarking._planted_tables import report_lines

DESCRIPTION = (
  "The paper's planted-core benchmark (§6.1-6.4, Tables 2-5), with our numbers next to the "
  "published ones."
)


@dataclasses.dataclass(frozen=True)
class PlantedCoreResult:
  """The experiment rows of one run (one row per trial and method, or per seed and method).

  Attributes:
    oracle: Table 2 (STE on the true tournaments).
    grid: the main recovery grid, Tables 3-4 (with the STE-model rows of its slice).
    sensitivity: the sensitivity sweep, with the main grid's unshifted slice it is paired with.
    bootstrap: Table 5.
    timings: seconds per stage.
  """

  oracle: pd.DataFrame
  grid: pd.DataFrame
  sensitivity: pd.DataFrame
  bootstrap: pd.DataFrame
  timings: dict


def run_planted_core(cfg: Config, *, progress: bool = True) -> PlantedCoreResult:
  """Runs every experiment of ``cfg``: the oracle cases, the main grid, the sweep and the bootstrap.

  Computes in the current JAX precision (:func:`main` runs it under ``jax.enable_x64``). ``QUICK``
  is a small slice of every table (the test suite runs it); ``FULL`` is the paper's grid
  (``benchmarks/planted_core.py`` times it; the figures are in ``benchmarks/RESULTS.md``).

  Args:
    cfg: the grid, e.g. :data:`~ste_jax.benchmarking.PLANTED_CORE_QUICK` or
      :data:`~ste_jax.benchmarking.PLANTED_CORE_FULL`.
    progress: show a tqdm bar on stderr.

  Returns:
    A :class:`PlantedCoreResult`: the experiment rows (pandas data frames) and the seconds per
    stage.
  """
  from tqdm import tqdm

  timings = {}
  num_main = len(cfg.ns) * len(cfg.core_sizes) * len(cfg.ms) * len(cfg.mus) * cfg.num_seeds
  sweep_settings = [
    (mode, sh)
    for mode in cfg.sweep_modes
    for sh in cfg.sweep_shifts
    if not (mode == "random_order" and sh == 0.0)
  ]
  num_sweep = (
    len(sweep_settings)
    * len(cfg.core_sizes)
    * len(cfg.sweep_ms)
    * len(cfg.sweep_mus)
    * cfg.sweep_seeds
  )
  total = num_main + num_sweep + cfg.boot_seeds
  bar = tqdm(
    total=total,
    unit="trial",
    desc="planted-core",
    disable=not progress,
    file=sys.stderr,
    smoothing=0.05,
  )

  t0 = time.perf_counter()
  orc = pd.DataFrame(run_oracle(cfg))
  timings["oracle (Table 2)"] = time.perf_counter() - t0

  t0 = time.perf_counter()
  model_time = {}
  grid = pd.DataFrame(
    run_grid(
      cfg,
      ns=cfg.ns,
      core_sizes=cfg.core_sizes,
      ms=cfg.ms,
      mus=cfg.mus,
      num_seeds=cfg.num_seeds,
      progress=bar,
      with_model=True,
      model_time=model_time,
    )
  )
  timings[
    f"main grid ({num_main} trials x 4 methods + {model_time.get('fits', 0)} STE-model fits)"
  ] = time.perf_counter() - t0
  timings["  of which STE-model fits (compilations included)"] = model_time.get("seconds", 0.0)

  t0 = time.perf_counter()
  sweep_rows = []
  for mode, shift in sweep_settings:
    sweep_rows += run_grid(
      cfg,
      ns=(cfg.sweep_n,),
      core_sizes=cfg.core_sizes,
      ms=cfg.sweep_ms,
      mus=cfg.sweep_mus,
      num_seeds=cfg.sweep_seeds,
      shift=shift,
      mode=mode,
      progress=bar,
      tag="sweep",
    )
  sweep = pd.DataFrame(sweep_rows)
  # The unshifted random-order setting is the main grid's slice (same keys).
  base_slice = grid[
    (grid.n == cfg.sweep_n)
    & grid.m.isin(cfg.sweep_ms)
    & grid.mu.isin(cfg.sweep_mus)
    & (grid.seed < cfg.sweep_seeds)
  ]
  sens = pd.concat([base_slice, sweep], ignore_index=True)
  timings[f"sensitivity sweep ({num_sweep} trials x 4 methods)"] = time.perf_counter() - t0

  t0 = time.perf_counter()
  boot = pd.DataFrame(run_bootstrap(cfg, progress=bar))
  timings[f"bootstrap (Table 5: {cfg.boot_seeds} seeds x {cfg.boot_replicas} replicas)"] = (
    time.perf_counter() - t0
  )
  bar.close()
  return PlantedCoreResult(oracle=orc, grid=grid, sensitivity=sens, bootstrap=boot, timings=timings)


def parse_args(
  argv=None, *, prog: str | None = None, default_out: str = "planted_core"
) -> argparse.Namespace:
  """The options of :func:`main`: ``--quick``, ``--out``, ``--float32``, ``--no-progress``."""
  p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
  p.add_argument("--quick", action="store_true", help="a small slice of every table")
  p.add_argument("--out", default=default_out, help=f"output folder (default {default_out})")
  p.add_argument("--float32", action="store_true", help="run in float32 instead of float64")
  p.add_argument("--no-progress", action="store_true", help="disable the tqdm progress bar")
  return p.parse_args(argv)


def main(
  argv: Sequence[str] | None = None,
  *,
  command: str = "ste-jax planted",
  default_out: str = "planted_core",
) -> int:
  """Runs the benchmark from command-line arguments, writes its files and prints its report.

  Args:
    argv: the arguments (default ``sys.argv[1:]``), see :func:`parse_args`.
    command: how the report's "Command:" line names the program.
    default_out: the output folder when ``--out`` is not given.

  Returns:
    The exit status, 0.
  """
  args = parse_args(argv, prog=command, default_out=default_out)
  t_start = time.perf_counter()
  cfg = QUICK if args.quick else FULL
  out = pathlib.Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  with jax.enable_x64(not args.float32):
    result = run_planted_core(cfg, progress=not args.no_progress)
  timings = dict(result.timings)

  t0 = time.perf_counter()
  result.grid.to_csv(out / "grid.csv", index=False)
  result.oracle.to_csv(out / "oracle.csv", index=False)
  result.bootstrap.to_csv(out / "bootstrap.csv", index=False)
  result.sensitivity.to_csv(out / "sensitivity.csv", index=False)
  try:
    figures(out, result.grid, result.bootstrap, cfg)
    written = list(FIGURES)
  except ImportError:
    print(
      "figures skipped: matplotlib is not installed (pip install ste_jax[plot])", file=sys.stderr
    )
    written = []
  timings["CSV + figures"] = time.perf_counter() - t0

  dtype = "float32" if args.float32 else "float64"
  lines = [
    f"Command: `{command}{' --quick' if args.quick else ''}{' --float32' if args.float32 else ''}` "
    f"({'quick slice' if args.quick else 'full grid'}, {dtype})",
    f"Machine: {machine_description()}",
    "",
  ]
  lines += report_lines(cfg, result.oracle, result.grid, result.bootstrap, result.sensitivity)
  timings["total"] = time.perf_counter() - t_start
  lines.append("### Runtime")
  lines.append("")
  lines += [f"- {k}: {v:.1f} s" for k, v in timings.items()]
  report = "\n".join(lines)
  (out / "report.md").write_text(report + "\n")
  print(report)
  print(
    f"\nOutputs in {out}: "
    + ", ".join(
      ["grid.csv", "oracle.csv", "bootstrap.csv", "sensitivity.csv", "report.md", *written]
    )
  )
  print(f"Total runtime: {timings['total']:.1f} s")
  return 0
