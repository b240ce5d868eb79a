"""The paper's planted-core benchmark (§6.1-6.4, Tables 2-5, Figures "recovery at n = 50",
"method summary" and "bootstrap F1"; issue 5), with our numbers next to the published ones.

Methods (each scored per trial from the sampled win counts ``w``; the ranked STE score is the
Top-Cycle score ``t``):

* ``STE-post``: STE-posterior-edge, ``D = posterior_edges(w)`` (Jeffreys prior, paper Eq.
  ``posterior_edge_estimator``), exact max-min reachability, ``gamma = 0.01``
  (``ste_scores_from_edges``).
* ``STE-win``: STE on the empirical win-rate tournament (``win_rate_tournament``, an unobserved pair
  is 1/2), ``tau = gamma = 0.01``, exact max-min reachability (``ste_scores``). Not in the paper's
  Tables 3-4; compared in Table 5 with the paper's "STE-weighted-mean", whose definition the paper
  does not give.
* ``STE-model``: STE on the model tournament ``P̂`` of ``fit_model_tournament`` (Bradley-Terry plus
  a low-rank intransitive term chosen by cross-validation over unit comparisons, fitted on the win
  counts; it predicts every pair, observed or not), ``tau = gamma = 0.01``, exact max-min
  reachability (``ste_scores(P̂)``). Tables 3-4 only, and only on a slice of the grid (``model_ns``
  agents, the first ``model_seeds`` seeds; the fit is a cross-validated L-BFGS solve per trial and
  compiles once per data shape): its rows there pool fewer trials than the other methods', and the
  table "STE-model on its slice" compares it with STE-post and BTL on the same trials (paired
  differences).
* ``BTL``: Bradley-Terry maximum likelihood (``bradley_terry``; its documented prior when the data
  are not identifiable).
* ``Win``: empirical win rate (``win_rate``).

Every method is converted to an oracle-size top-|C| set. Metrics (``ste_jax.stats``): top-|C| F1 in
exact expectation under uniformly random tie-breaking (scores within 1e-12 tie; the paper's
"tie-randomized" F1), AUROC with ties 1/2, AUPRC under random tie order, fixed-threshold F1 at 0.5
(a calibration diagnostic, STE only). Intervals: mean +- 1.96 sd / sqrt(N) over the trial rows (over
the seeds in Table 5), as in the paper.

Generator (``planted_core_tournament`` / ``sample_comparisons``, issue 5's specification): core
  beats
outsiders by 1/2 + U(0.20, 0.30), a regular rotation inside the core, outsiders in a random strict
order (1/2 + U(0.12, 0.45)), exactly round(mu * n(n-1)/2) missing pairs, m games per kept pair with
label noise eta = 0.02. Each trial has its own key (derived from n, |C|, m, mu, seed), so trials are
independent; the sensitivity sweep reuses the keys of the main grid, so its rows are paired with
the main grid's (same uniforms, shifted margins).

Sensitivity sweep (beyond the paper): the core->outsider margin range shifted by -0.04, -0.02,
+0.02, +0.04, and outsiders as a random (cyclic) tournament instead of a random order, on the
n = 50, m >= 5 slice.

Float64 (``jax_enable_x64``) by default, so that the 1e-12 tie rule means what it says (in float32
many saturated posterior edges round to exactly 1); ``--float32`` to compare.

A thin driver: the experiments, tables and figures live in :mod:`ste_jax.benchmarking` (the
installed ``ste-jax planted`` runs the same code); this script only sets its default output folder
and its name in the report.

Usage:
  python benchmarks/planted_core.py                # full grid (5-7 min on 2 CPU cores)
  python benchmarks/planted_core.py --quick        # a small slice, well under a minute
  python benchmarks/planted_core.py --out DIR      # default benchmarks/out/planted_core/

Outputs in ``--out``: ``grid.csv`` (one row per trial and method), ``oracle.csv``, ``bootstrap.csv``
(one row per seed and method), ``sensitivity.csv``, ``report.md`` (the printed tables) and the
figures ``fig_recovery_n50.png``, ``fig_method_summary.png``, ``fig_bootstrap_f1.png``.
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ste_jax.benchmarking import _planted_core  # noqa: E402
from ste_jax.benchmarking._planted_experiments import (  # noqa: E402,F401  (re-exported for tests)
  FULL,
  METHODS,
  MODEL_METHOD,
  QUICK,
  RECOVERY_METHODS,
  Config,
)

COMMAND = "python benchmarks/planted_core.py"
DEFAULT_OUT = str(ROOT / "benchmarks" / "out" / "planted_core")


def parse_args(argv=None):
  return _planted_core.parse_args(argv, prog=COMMAND, default_out=DEFAULT_OUT)


def main(argv=None):
  return _planted_core.main(argv, command=COMMAND, default_out=DEFAULT_OUT)


if __name__ == "__main__":
  sys.exit(main())
