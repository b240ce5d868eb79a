"""The planted-core benchmark's figures: recovery at n = 50, the method summary, bootstrap F1.

matplotlib is imported inside :func:`figures` (``pip install ste_jax[plot]``).
"""

import numpy as np

from ste_jax.benchmarking._planted_experiments import METHODS
from ste_jax.benchmarking._planted_paper import PAPER_POOLED_M5, PAPER_TABLE5
from ste_jax.benchmarking._planted_tables import mean_ci

FIGURES = ("fig_recovery_n50.png", "fig_method_summary.png", "fig_bootstrap_f1.png")


def figures(out, grid, boot, cfg) -> None:
  """Writes :data:`FIGURES` into the folder ``out`` from the main-grid and bootstrap rows."""
  from matplotlib.backends.backend_agg import FigureCanvasAgg
  from matplotlib.figure import Figure

  def subplots(figsize):
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()

  import matplotlib

  colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]

  # 1. Recovery vs m at n = 50 (or the smallest n in --quick), STE-post solid, BTL dashed.
  n_fig = 50 if 50 in grid.n.unique() else int(grid.n.min())
  fig, ax = subplots(figsize=(6.4, 4.2))
  sub = grid[grid.n == n_fig]
  for i, mu in enumerate(sorted(sub.mu.unique())):
    for meth, ls in (("STE-post", "-"), ("BTL", "--")):
      g = sub[(sub.mu == mu) & (sub.method == meth)]
      stats = [mean_ci(g[g.m == m].f1) for m in sorted(g.m.unique())]
      ax.errorbar(
        sorted(g.m.unique()),
        [s[0] for s in stats],
        yerr=[s[1] for s in stats],
        ls=ls,
        marker="o",
        ms=3,
        color=colors[i % len(colors)],
        capsize=2,
        label=f"{meth}, μ = {mu:.1f}",
      )
  ax.set_xscale("log")
  ticks = sorted(int(m) for m in sub.m.unique())
  ax.set_xticks(ticks, [str(m) for m in ticks])
  ax.minorticks_off()
  ax.set_xlabel("comparisons per observed pair m")
  ax.set_ylabel("top-|C| F1 (tie-randomized)")
  ax.set_title(
    f"Planted-core recovery at n = {n_fig}: STE-post solid, BTL dashed\n"
    "(mean ± 95% CI over |C| and seeds)",
    fontsize=10,
  )
  ax.legend(fontsize=7, ncol=2)
  ax.set_ylim(0, 1.02)
  fig.tight_layout()
  fig.savefig(out / "fig_recovery_n50.png", dpi=120)

  # 2. Method summary, m >= 5.
  fig, ax = subplots(figsize=(6.4, 4.0))
  sub = grid[grid.m >= 5]
  width = 0.25
  for k, metric in enumerate(("f1", "auprc", "auroc")):
    stats = [mean_ci(sub[sub.method == meth][metric]) for meth in METHODS]
    x = np.arange(len(METHODS)) + (k - 1) * width
    ax.bar(
      x,
      [s[0] for s in stats],
      width,
      yerr=[s[1] for s in stats],
      capsize=2,
      label=f"{metric.upper()} (ours)",
      color=colors[k],
    )
    for j, meth in enumerate(METHODS):
      pp = PAPER_POOLED_M5.get((meth, metric))
      if pp:
        ax.errorbar(
          [x[j]],
          [pp[0]],
          yerr=[pp[1]],
          fmt="k_",
          ms=12,
          capsize=0,
          label="paper" if (k == 0 and j == 0) else None,
        )
  ax.set_xticks(np.arange(len(METHODS)), METHODS)
  ax.set_ylim(0, 1.05)
  ax.set_ylabel("mean over the m ≥ 5 grid")
  ax.set_title("Method summary, m ≥ 5 (black: paper's pooled F1 / AUPRC)")
  ax.legend(fontsize=8, loc="lower right")
  fig.tight_layout()
  fig.savefig(out / "fig_method_summary.png", dpi=120)

  # 3. Bootstrap F1.
  fig, ax = subplots(figsize=(5.6, 3.8))
  stats = [mean_ci(boot[boot.method == meth].bootstrap_f1) for meth in METHODS]
  x = np.arange(len(METHODS))
  ax.bar(
    x,
    [s[0] for s in stats],
    0.6,
    yerr=[s[1] for s in stats],
    capsize=3,
    color=colors[0],
    label="ours",
  )
  pp = [PAPER_TABLE5[meth]["f1"] for meth in METHODS]
  ax.errorbar(
    x + 0.15,
    [p[0] for p in pp],
    yerr=[p[1] for p in pp],
    fmt="ko",
    ms=4,
    capsize=3,
    label="paper (STE-win ↔ STE-weighted-mean)",
  )
  ax.set_xticks(x, METHODS)
  ax.set_ylim(0, 1.05)
  ax.set_ylabel("bootstrap F1 to the planted core")
  ax.set_title(
    f"Bootstrap F1 (n={cfg.boot_n}, |C|={cfg.boot_core}, m={cfg.boot_m}, μ={cfg.boot_mu}, "
    f"{cfg.boot_replicas} replicas, {cfg.boot_seeds} seeds)",
    fontsize=8,
  )
  ax.legend(fontsize=8, loc="lower right")
  fig.tight_layout()
  fig.savefig(out / "fig_bootstrap_f1.png", dpi=120)
