"""The planted-core experiments (paper §6.1-6.4): configuration, compiled kernels and trial rows.

Methods (each scored per trial from the sampled win counts ``w``; the ranked STE score is the
Top-Cycle score ``t``):

* ``STE-post``: STE-posterior-edge, ``D = posterior_edges(w)`` (Jeffreys prior, paper Eq.
  ``posterior_edge_estimator``), exact max-min reachability, ``gamma = 0.01``
  (``ste_scores_from_edges``).
* ``STE-win``: STE on the empirical win-rate tournament (``win_rate_tournament``, an unobserved pair
  is 1/2), ``tau = gamma = 0.01``, exact max-min reachability (``ste_scores``).
* ``STE-model``: STE on the model tournament of ``fit_model_tournament`` (Tables 3-4 only, on the
  slice ``model_ns`` x first ``model_seeds`` seeds of the main grid).
* ``BTL``: Bradley-Terry maximum likelihood (``bradley_terry``).
* ``Win``: empirical win rate (``win_rate``).

Every trial has its own key (derived from n, |C|, m, mu, seed), so trials are independent; the
sensitivity sweep reuses the keys of the main grid, so its rows are paired with the main grid's.
The functions return plain rows (dicts); :mod:`ste_jax.benchmarking._planted_tables` turns them
into the report's tables.
"""

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.data import Comparisons, PairCounts, pair_counts, posterior_edges, win_rate_tournament
from ste_jax.exact import top_cycle, uncovered_set
from ste_jax.ops import ste_scores, ste_scores_from_edges
from ste_jax.stats import (
  auroc,
  average_precision,
  bootstrap_scores,
  bradley_terry,
  core_masks,
  pairwise_jaccard,
  planted_core_tournament,
  sample_comparisons,
  score_gap,
  threshold_f1,
  top1_entropy,
  top_k_f1,
  win_rate,
)

METHODS = ("STE-post", "STE-win", "BTL", "Win")
MODEL_METHOD = "STE-model"  # Tables 3-4 only, on the slice (model_ns, model_seeds) of the main grid
RECOVERY_METHODS = ("STE-post", MODEL_METHOD, "STE-win", "BTL", "Win")
TAU = 0.01
GAMMA = 0.01
ROOT_SEED = 20251126


@dataclasses.dataclass(frozen=True)
class Config:
  """The benchmark's grid: recovery grid, oracle cases, bootstrap, sensitivity, STE-model slice."""

  ns: tuple = (30, 50, 100)
  core_sizes: tuple = (3, 5, 7)
  ms: tuple = (1, 2, 5, 10, 20, 50)
  mus: tuple = (0.0, 0.1, 0.3, 0.5)
  num_seeds: int = 40
  oracle_cases: tuple = (
    ("Transitive singleton", 30, 1),
    ("Planted 3-core", 30, 3),
    ("Planted 5-core", 50, 5),
    ("Planted 7-core (extra)", 100, 7),
  )
  oracle_seeds: int = 40
  boot_n: int = 40
  boot_core: int = 5
  boot_m: int = 20
  boot_mu: float = 0.1
  boot_replicas: int = 400
  boot_seeds: int = 8
  boot_batch: int = 8
  sweep_n: int = 50
  sweep_ms: tuple = (5, 10, 20, 50)
  sweep_mus: tuple = (0.0, 0.1, 0.3, 0.5)
  sweep_seeds: int = 40
  sweep_shifts: tuple = (-0.04, -0.02, 0.0, 0.02, 0.04)
  sweep_modes: tuple = ("random_order", "random_tournament")
  eval_chunk: int = 80
  model_ns: tuple = (30,)
  model_seeds: int = 10


FULL = Config()
QUICK = Config(
  ns=(30,),
  core_sizes=(3,),
  ms=(5, 50),
  mus=(0.0, 0.3),
  num_seeds=8,
  oracle_cases=(("Transitive singleton", 30, 1), ("Planted 3-core", 30, 3)),
  oracle_seeds=4,
  boot_replicas=32,
  boot_seeds=2,
  sweep_n=30,
  sweep_ms=(5, 50),
  sweep_mus=(0.0, 0.3),
  sweep_seeds=8,
  sweep_shifts=(-0.04, 0.0, 0.04),
  eval_chunk=16,
  model_seeds=2,
)


# --------------------------------------------------------------------------------------------
# Kernels


def trial_key(base, values):
  """``fold_in`` of ``base`` with each of ``values`` in turn."""
  key = base
  for v in values:
    key = jax.random.fold_in(key, v)
  return key


@jax.jit
def trial_keys(base, n, s, mu_milli, ms, seeds):
  """Keys of the trials ``(n, |C|, m, mu, seed)``: ``fold_in`` chains, vectorized over (m, seed)."""
  head = trial_key(base, (n, s))
  return jax.vmap(lambda m, sd: trial_key(head, (m, mu_milli, sd)))(ms, seeds)


def generate(keys, ms, core_lo, core_hi, *, n, core_size, mu, outsiders):
  """``(B,)`` keys and games per pair -> (P, core mask, wins), each with a leading batch axis.

  An eager ``jax.vmap`` over the library's own compiled kernels (``planted_core_tournament`` and
  ``sample_comparisons`` are jitted with the core size, margins, outsider mode and missing count
  traced), so the generator compiles once per (n, batch size) whatever |C|, mu, margins or mode;
  wrapping it in a jit of our own would make |C| and mu static (Python-level arguments of the
  public functions) and cost one compilation (several seconds) per setting.
  """

  def one(key, m):
    k_p, k_s = jax.random.split(key)
    planted = planted_core_tournament(
      k_p, n=n, core_size=core_size, core_margin=(core_lo, core_hi), outsiders=outsiders
    )
    P, core = planted.P, planted.core_mask
    wins = sample_comparisons(k_s, P, per_pair=m, missing_rate=mu).wins
    return P, core, wins

  return jax.vmap(one)(keys, ms)


def method_scores(wins):
  """The four methods' scores of one ``(n, n)`` wins matrix (one compiled graph for all)."""
  D = posterior_edges(wins)
  t_post = ste_scores_from_edges(D, gamma=GAMMA, reach_gamma=0.0).top_cycle
  counts = PairCounts(wins=wins, ties=jnp.zeros_like(wins), totals=wins + wins.T)
  P_hat = win_rate_tournament(counts, missing=0.5)
  t_win = ste_scores(P_hat, tau=TAU, gamma=GAMMA, reach_gamma=0.0).top_cycle
  btl = bradley_terry(wins).scores
  rate = win_rate(wins).rates
  return (t_post, t_win, btl, rate)


def _method_metrics(wins, core):
  scores = method_scores(wins)
  f1 = jnp.stack([top_k_f1(s, core) for s in scores])
  roc = jnp.stack([auroc(s, core) for s in scores])
  prc = jnp.stack([average_precision(s, core) for s in scores])
  thr = jnp.stack([threshold_f1(s, core) for s in scores[:2]])
  return f1, roc, prc, thr


@jax.jit
def evaluate(wins, core):
  """Batched metrics: f1, auroc, auprc ``(B, 4)``; threshold F1 of the STE methods ``(B, 2)``."""
  return jax.vmap(_method_metrics)(wins, core)


@jax.jit
def oracle(P, core):
  """STE on the true P: TC/UC F1 and AUROC against the hard solutions, TC gap, hard TC == core."""

  def one(P, core):
    s = ste_scores(P, tau=TAU, gamma=GAMMA, reach_gamma=0.0)
    tc, uc = top_cycle(P), uncovered_set(P)
    return (
      top_k_f1(s.top_cycle, tc),
      top_k_f1(s.uncovered, uc),
      auroc(s.top_cycle, tc),
      auroc(s.uncovered, uc),
      score_gap(s.top_cycle, core),
      jnp.all(tc == core),
      jnp.sum(uc),
    )

  return jax.vmap(one)(P, core)


@jax.jit
def model_metrics(P_hat, core):
  """STE-model metrics of one fitted model tournament: f1, auroc, auprc, threshold F1."""
  t = ste_scores(P_hat, tau=TAU, gamma=GAMMA, reach_gamma=0.0).top_cycle
  return top_k_f1(t, core), auroc(t, core), average_precision(t, core), threshold_f1(t, core)


# --------------------------------------------------------------------------------------------
# Experiments


def counts_to_comparisons(wins) -> Comparisons:
  """Aggregated comparisons of an ``(n, n)`` win-count matrix: for each compared pair ``a < b`` the
  rows ``(a, b, 1)`` with weight ``wins[a, b]`` and ``(a, b, 0)`` with weight ``wins[b, a]``.

  ``fit_model_tournament`` splits a row of integer weight ``w`` into ``w`` unit comparisons for its
  cross-validation folds, so this fits as one row per game would, and the row count (twice the
  kept pairs, fixed by n and mu) is the same for every m and seed: one compilation per (n, mu).
  """
  w = np.asarray(wins)
  a, b = np.nonzero(np.triu(w + w.T > 0, k=1))
  return Comparisons.from_arrays(
    np.repeat(a, 2),
    np.repeat(b, 2),
    np.tile(np.asarray([1.0, 0.0], dtype=w.dtype), a.size),
    agents=[str(i) for i in range(w.shape[0])],
    weight=np.stack([w[a, b], w[b, a]], axis=1).reshape(-1),
  )


def model_trial(key, wins, core):
  """STE-model on one trial: ``(f1, auroc, auprc, threshold F1, chosen rank)``.

  ``fit_model_tournament`` on the trial's comparisons (``counts_to_comparisons``), then the STE
  Top-Cycle score of its tournament.
  """
  from ste_jax.evaluate import fit_model_tournament  # Flax and Optax: only when STE-model runs

  fit = fit_model_tournament(key, counts_to_comparisons(wins))
  f1, roc, prc, thr = (float(v) for v in model_metrics(fit.P, core))
  return f1, roc, prc, thr, int(fit.chosen.rank)


def run_grid(
  cfg: Config,
  *,
  ns,
  core_sizes,
  ms,
  mus,
  num_seeds,
  shift=0.0,
  mode="random_order",
  progress=None,
  tag="main",
  with_model=False,
  model_time=None,
) -> list[dict]:
  """Rows (dicts) for every (n, |C|, mu) block, vmapped over (m, seed) in ``cfg.eval_chunk`` chunks.

  Every chunk has the same batch size (the last one padded by repeating a trial), so the generator
  and the compiled evaluation run with one compilation per n. With ``with_model``, the trials with
  ``n`` in ``cfg.model_ns`` and seed ``< cfg.model_seeds`` also get an ``STE-model`` row (one model
  fit each, keyed by ``fold_in(trial key, 1)``); ``model_time`` (a dict) accumulates its seconds
  and fits.
  """
  base = jax.random.key(ROOT_SEED)
  lo = jnp.asarray(0.20 + shift)
  hi = jnp.asarray(0.30 + shift)
  chunk = cfg.eval_chunk
  rows = []
  for n in ns:
    for s in core_sizes:
      for mu in mus:
        mm, ss = np.meshgrid(np.asarray(ms), np.arange(num_seeds), indexing="ij")
        mm, ss = mm.ravel(), ss.ravel()
        b = mm.size
        pad = -b % chunk
        mm_p = np.concatenate([mm, np.repeat(mm[:1], pad)])
        ss_p = np.concatenate([ss, np.repeat(ss[:1], pad)])
        keys = trial_keys(
          base,
          n,
          s,
          int(round(mu * 1000)),
          jnp.asarray(mm_p, dtype=jnp.int32),
          jnp.asarray(ss_p, dtype=jnp.int32),
        )
        outs = []
        model_rows = []
        for i in range(0, b + pad, chunk):
          _, core, wins = generate(
            keys[i : i + chunk],
            jnp.asarray(mm_p[i : i + chunk]).astype(lo.dtype),
            lo,
            hi,
            n=n,
            core_size=s,
            mu=float(mu),
            outsiders=mode,
          )
          outs.append(evaluate(wins, core))
          if with_model and n in cfg.model_ns:
            t0 = time.perf_counter()
            for j in range(min(chunk, b - i)):
              if ss[i + j] >= cfg.model_seeds:
                continue
              f1_m, roc_m, prc_m, thr_m, rank = model_trial(
                jax.random.fold_in(keys[i + j], 1), wins[j], core[j]
              )
              model_rows.append(
                dict(
                  experiment=tag,
                  outsiders=mode,
                  core_shift=shift,
                  n=n,
                  core_size=s,
                  m=int(mm[i + j]),
                  mu=float(mu),
                  seed=int(ss[i + j]),
                  method=MODEL_METHOD,
                  f1=f1_m,
                  auroc=roc_m,
                  auprc=prc_m,
                  threshold_f1=thr_m,
                  model_rank=rank,
                )
              )
            if model_time is not None:
              model_time["seconds"] = model_time.get("seconds", 0.0) + time.perf_counter() - t0
              model_time["fits"] = model_time.get("fits", 0) + sum(
                ss[i : i + min(chunk, b - i)] < cfg.model_seeds
              )
          if progress is not None:
            progress.update(min(chunk, b - i))
        f1, roc, prc, thr = (np.concatenate([np.asarray(o[j]) for o in outs])[:b] for j in range(4))
        for i in range(b):
          for j, meth in enumerate(METHODS):
            rows.append(
              dict(
                experiment=tag,
                outsiders=mode,
                core_shift=shift,
                n=n,
                core_size=s,
                m=int(mm[i]),
                mu=float(mu),
                seed=int(ss[i]),
                method=meth,
                f1=float(f1[i, j]),
                auroc=float(roc[i, j]),
                auprc=float(prc[i, j]),
                threshold_f1=float(thr[i, j]) if j < 2 else float("nan"),
              )
            )
        rows += model_rows
  return rows


def run_oracle(cfg: Config) -> list[dict]:
  """Table 2 rows: STE on the true planted tournaments of ``cfg.oracle_cases``."""
  base = jax.random.fold_in(jax.random.key(ROOT_SEED), 999)
  rows = []
  for case, n, s in cfg.oracle_cases:
    keys = jnp.stack([trial_key(base, (n, s, sd)) for sd in range(cfg.oracle_seeds)])
    planted = jax.vmap(lambda k: planted_core_tournament(k, n=n, core_size=s))(keys)
    out = jax.device_get(oracle(planted.P, planted.core_mask))
    for sd in range(cfg.oracle_seeds):
      tc_f1, uc_f1, tc_roc, uc_roc, gap, tc_ok, uc_size = (o[sd] for o in out)
      rows.append(
        dict(
          case=case,
          n=n,
          core_size=s,
          seed=sd,
          tc_f1=float(tc_f1),
          uc_f1=float(uc_f1),
          tc_auroc=float(tc_roc),
          uc_auroc=float(uc_roc),
          tc_gap=float(gap),
          hard_tc_is_core=bool(tc_ok),
          uc_size=int(uc_size),
        )
      )
  return rows


def _boot_score_fn(comparisons):
  """Bootstrap score function: all four methods from one replica (module level: hashable)."""
  return method_scores(pair_counts(comparisons).wins)


def run_bootstrap(cfg: Config, progress=None) -> list[dict]:
  """Table 5: per seed, ``boot_replicas`` game-level multinomial bootstrap replicas."""
  base = jax.random.fold_in(jax.random.key(ROOT_SEED), 777)
  n, s, m, mu = cfg.boot_n, cfg.boot_core, cfg.boot_m, cfg.boot_mu

  @jax.jit
  def summarize(scores, core, key):
    f1 = jnp.mean(jax.vmap(lambda x: top_k_f1(x, core))(scores))
    roc = jnp.mean(jax.vmap(lambda x: auroc(x, core))(scores))
    jac = pairwise_jaccard(core_masks(key, scores, core_size=s))
    ent = top1_entropy(scores)
    return f1, jac, roc, ent

  rows = []
  seed_keys = [
    jax.random.split(trial_key(base, (n, s, m, int(mu * 1000), sd)), 3)
    for sd in range(cfg.boot_seeds)
  ]
  _, cores, winss = generate(
    jnp.stack([k[0] for k in seed_keys]),
    jnp.full((cfg.boot_seeds,), float(m)),
    jnp.asarray(0.20),
    jnp.asarray(0.30),
    n=n,
    core_size=s,
    mu=float(mu),
    outsiders="random_order",
  )
  for sd in range(cfg.boot_seeds):
    _, k_boot, k_tie = seed_keys[sd]
    core, w = np.asarray(cores[sd]), np.asarray(winss[sd])
    a, b = np.nonzero(w > 0)  # one row per game: w[a, b] rows "a beat b"
    reps = w[a, b].astype(np.int64)
    comps = Comparisons.from_arrays(
      np.repeat(a, reps),
      np.repeat(b, reps),
      np.ones(int(reps.sum())),
      agents=[str(i) for i in range(n)],
    )
    scores = bootstrap_scores(
      k_boot, comps, _boot_score_fn, num_replicas=cfg.boot_replicas, batch_size=cfg.boot_batch
    )
    tie_keys = jax.random.split(k_tie, len(METHODS))
    for j, meth in enumerate(METHODS):
      f1, jac, roc, ent = (float(v) for v in summarize(scores[j], jnp.asarray(core), tie_keys[j]))
      rows.append(
        dict(
          seed=sd,
          method=meth,
          n=n,
          core_size=s,
          m=m,
          mu=mu,
          replicas=cfg.boot_replicas,
          bootstrap_f1=f1,
          pairwise_jaccard=jac,
          bootstrap_auroc=roc,
          top1_entropy=ent,
        )
      )
    if progress is not None:
      progress.update(1)
  return rows
