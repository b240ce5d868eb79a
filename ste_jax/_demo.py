"""``python -m ste_jax demo``: the STE core table on the bundled real dataset.

Until the full command-line interface lands (issue 6), this is the one-command tour: load a real
battles file, estimate the tournament, compute STE core scores with bootstrap uncertainty, and
print them next to win rate, Bradley--Terry and Elo.
"""

import importlib.resources
import time

import jax
import jax.numpy as jnp
import numpy as np

DATASET = "vicuna80_qlora_human"


def bundled_dataset_path():
  """Path of the bundled ``comparisons.csv`` (Vicuna-80 human votes, MIT; see its README.md)."""
  return importlib.resources.files("ste_jax") / "_bundled" / DATASET / "comparisons.csv"


def score_table(comparisons, *, tau=0.01, num_replicas=200, seed=0):
  """Per-agent STE scores, hard cores, bootstrap summaries and baselines, as a dict of arrays.

  STE uses the paper's STE-posterior-edge estimator (§6.1): Jeffreys-prior posterior-edge
  evidence ``D``, exact max-min reachability and ``gamma = gamma_c = tau``. Hard Top Cycle /
  Uncovered Set are those of the win-rate tournament (ties count half; missing pairs 1/2).
  """
  from ste_jax import exact, ops
  from ste_jax.data import pair_counts, posterior_edges, win_rate_tournament
  from ste_jax.stats import (
      bootstrap_scores,
      bradley_terry,
      elo,
      inclusion_frequency,
      percentile_intervals,
      ste_score_fn,
      win_rate,
  )

  counts = pair_counts(comparisons)
  P = win_rate_tournament(counts)
  D = posterior_edges(counts.wins)
  ste = ops.ste_scores_from_edges(D, gamma=tau)
  score_fn = ste_score_fn(estimator="posterior", tau=tau)
  replicas = bootstrap_scores(jax.random.key(seed), comparisons, score_fn, num_replicas=num_replicas, batch_size=8)
  tc_ci = percentile_intervals(replicas.top_cycle)
  uc_ci = percentile_intervals(replicas.uncovered)
  bt = bradley_terry(counts.wins)
  return {
      "agent": np.array(comparisons.agents),
      "top_cycle": np.asarray(ste.top_cycle),
      "tc_lo": np.asarray(tc_ci.lower),
      "tc_hi": np.asarray(tc_ci.upper),
      "p_in_tc": np.asarray(inclusion_frequency(replicas.top_cycle, threshold=0.5)),
      "uncovered": np.asarray(ste.uncovered),
      "uc_lo": np.asarray(uc_ci.lower),
      "uc_hi": np.asarray(uc_ci.upper),
      "p_in_uc": np.asarray(inclusion_frequency(replicas.uncovered, threshold=0.5)),
      "hard_tc": np.asarray(exact.top_cycle(P)),
      "hard_uc": np.asarray(exact.uncovered_set(P)),
      "win_rate": np.asarray(win_rate(counts.wins).rates),
      "bradley_terry": np.asarray(bt.scores),
      "bt_identifiable": bool(bt.identifiable),
      "elo": np.asarray(elo(comparisons.a, comparisons.b, comparisons.outcome, num_agents=comparisons.num_agents)),
      "games": np.asarray(jnp.sum(counts.totals, axis=-1)),
  }


def format_table(t) -> str:
  # Scores are in [0, 1] up to rounding; print -1e-9 as 0.000, not -0.000.
  t = {k: (np.round(v, 3) + 0.0 if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v) for k, v in t.items()}
  order = np.lexsort((-t["win_rate"], -t["uncovered"], -t["top_cycle"]))
  head = (
      f"{'agent':<16} {'TC score [95% CI]':>22} {'P(TC)':>6} {'UC score [95% CI]':>22} {'P(UC)':>6} "
      f"{'hardTC':>6} {'hardUC':>6} {'winrate':>7} {'BT':>6} {'Elo':>6} {'games':>6}"
  )
  lines = [head, "-" * len(head)]
  for i in order:
    lines.append(
        f"{t['agent'][i]:<16} {t['top_cycle'][i]:6.3f} [{t['tc_lo'][i]:.3f}, {t['tc_hi'][i]:.3f}] {t['p_in_tc'][i]:6.2f} "
        f"{t['uncovered'][i]:6.3f} [{t['uc_lo'][i]:.3f}, {t['uc_hi'][i]:.3f}] {t['p_in_uc'][i]:6.2f} "
        f"{'yes' if t['hard_tc'][i] else '-':>6} {'yes' if t['hard_uc'][i] else '-':>6} {t['win_rate'][i]:7.3f} "
        f"{t['bradley_terry'][i]:6.2f} {t['elo'][i]:6.0f} {t['games'][i]:6.0f}"
    )
  return "\n".join(lines)


def run_demo(*, num_replicas: int = 200, seed: int = 0, tau: float = 0.01) -> int:
  from ste_jax.data import load_comparisons

  start = time.perf_counter()
  path = bundled_dataset_path()
  comparisons, report = load_comparisons(path)
  print(f"ste_jax demo: {DATASET} (bundled; human crowd votes between 8 chatbots, MIT licence)")
  print(report.summary())
  print(
      f"conventions: ties count 1/2 to each side; STE-posterior-edge estimator (Jeffreys prior), exact max-min "
      f"reachability, tau = gamma = gamma_c = {tau}; bootstrap: {num_replicas} multinomial replicas, seed {seed}; "
      f"hard TC/UC of the win-rate tournament (missing pairs = 1/2)."
  )
  table = score_table(comparisons, tau=tau, num_replicas=num_replicas, seed=seed)
  print()
  print(format_table(table))
  print()
  core = ", ".join(table["agent"][table["hard_tc"]])
  print(f"hard Top Cycle: {{{core}}}   ({time.perf_counter() - start:.1f} s)")
  return 0
