"""Fit time and held-out log-loss of the model estimator with and without style controls and ties.

Input: a synthetic arena of ``--models`` agents and ``--battles`` battles (uniformly random
pairs), Bradley-Terry strengths ``N(0, 1)``, per-agent style (answer length, header, list and
bold counts drawn around agent-specific means), outcomes from a Davidson model (tie weight
``--nu``) whose logit is ``s_a - s_b + beta . z``: ``z`` the FastChat-normalized style
differences and ``beta = (0.6, 0.2, 0.1, 0.1)`` (length, header, list, bold). 90 % of the
battles are fitted, 10 % held out.

Rows of the table (each fit once to compile, then timed on a second call):

* ``uncontrolled``: :func:`~ste_jax.evaluate.fit_model_tournament` (pair counts, ties as half
  wins, 5-fold CV over ``ranks=(0, 1)`` and one ridge each, then the final fit);
* ``controlled``: :func:`~ste_jax.evaluate.fit_controlled_tournament` (the above, then the fit over
  the rows with the covariates and the Hessian of the coefficients' intervals); the ``row fit``
  column is its part after the uncontrolled fit;
* ``davidson``: :func:`~ste_jax.evaluate.fit_tie_tournament` (the uncontrolled fit, then the
  Davidson fit on the pair counts);
* ``controlled davidson``: :func:`~ste_jax.evaluate.fit_controlled_tournament` with
  ``tie_model="davidson"`` (ties and covariates in one likelihood, over the rows).

Held-out log-loss: the binary cross-entropy of the model's ``P(a wins)`` against the outcome (a tie
counts 1/2 each way), in nats per battle, from the model's own logits (no record bands), the
controlled model with its covariates; for Davidson, ``P(a wins | decisive)``, and in its own
column the three-outcome negative log-likelihood per battle.

Peer (``--arena-rank-python PY``, arena-rank's interpreter; without it the peer's line says "not
installed"): arena-rank's ``ContextualBradleyTerry`` (LMArena's style-controlled Bradley-Terry,
``benchmarks/_peers.py``) on the same fitted battles and the same normalized style differences
as the ``controlled`` row, written to a temporary Parquet file and fitted in a fresh process of
that interpreter. Its wall time covers the whole process (interpreter and JAX start, reading the
file, compiling, its L-BFGS fit in float64 and its sandwich intervals); ours are compiled
second calls. Its strengths are compared with the ``controlled`` row's ``s`` (a rank-0 controlled
fit instead, untimed, when cross-validation chose an intransitive term): Pearson and Spearman
correlations and the largest absolute difference after centering both, in logits; its
coefficients are printed beside our ``beta``. Settings matched: every row weighs 1 (not its
default inverse pair-count weights), the features as given (not its own standardization, which
would be the same one), ties as half a win (its outcome 1/2), ``reg=0`` (its ridge on the
coefficients; ours has none). Settings that differ: our ridge ``strength_l2 = 1`` on ``s`` over
the summed loss (arena-rank has no ridge on ratings; its loss is the mean over rows, so ours
equals a ridge of ``1 / m`` on its scale), which also fixes our strengths' common shift (theirs:
the L-BFGS start at 0); float32 (ours) against float64; the stopping rules (ours: Newton step
below 1e-3 standard errors; its ``gtol = ftol = 1e-9``). Its ratings are on its Elo scale
``1000 + alpha s``, ``alpha = 400 / ln 10``: divided by ``alpha`` (after centering) to compare.

Usage:
  python benchmarks/controls.py                       # 200 models, 2,000,000 battles
  python benchmarks/controls.py --battles 200000      # a quicker run
  python benchmarks/controls.py --arena-rank-python /tmp/arena_rank_venv/bin/python
"""

import argparse
import json
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks import _peers  # noqa: E402
from benchmarks._timing import machine_description  # noqa: E402
from benchmarks.cli import _child_env, measure  # noqa: E402
from ste_jax.data import Comparisons  # noqa: E402
from ste_jax.evaluate import (  # noqa: E402
  fit_controlled_tournament,
  fit_model_tournament,
  fit_tie_tournament,
  normalize_differences,
  style_difference,
)
from ste_jax.evaluate._ties import tie_log_probabilities  # noqa: E402
from ste_jax.models import intransitive_logits  # noqa: E402

BETA = np.array([0.6, 0.2, 0.1, 0.1])
# No record bands: the controlled tournament has none, and float32 fits with bands stall at
# this size (see benchmarks/RESULTS.md).
GRID = dict(ranks=(0, 1), strength_l2=(1.0,), skew_l2=(10.0,), record_tolerance=None)


def synthetic_arena(models: int, battles: int, nu: float, seed: int = 0):
  """``(a, b, outcome, raw style differences)`` of a Davidson arena with a style effect."""
  rng = np.random.default_rng(seed)
  s = rng.normal(size=models)
  a = rng.integers(0, models, battles)
  b = (a + rng.integers(1, models, battles)) % models
  mean_len = rng.lognormal(6.0, 0.5, models)
  means = {"header": rng.gamma(2.0, 1.0, models), "list": rng.gamma(2.0, 2.0, models)}
  means["bold"] = rng.gamma(2.0, 1.5, models)
  raw = {
    "length": style_difference(
      rng.gamma(4.0, mean_len[a] / 4.0).astype(int), rng.gamma(4.0, mean_len[b] / 4.0).astype(int)
    )
  }
  for k, mu in means.items():
    raw[k] = style_difference(rng.poisson(mu[a]), rng.poisson(mu[b]))
  z = np.asarray(normalize_differences(raw).diff, dtype=np.float64)
  h = s[a] - s[b] + z @ BETA
  p = np.stack([np.exp(h / 2), np.exp(-h / 2), np.full(battles, nu)], axis=1)
  p /= p.sum(axis=1, keepdims=True)
  u = rng.random(battles)
  y = np.where(u < p[:, 0], 1.0, np.where(u < p[:, 0] + p[:, 1], 0.0, 0.5))
  return a, b, y, raw


def _binary_log_loss(h, y) -> float:
  h = np.asarray(h, dtype=np.float64)
  return float(np.mean(y * np.logaddexp(0, -h) + (1 - y) * np.logaddexp(0, h)))


def _timed(fn):
  fn()  # compile
  t0 = time.perf_counter()
  out = fn()
  jax.block_until_ready(out.P)
  return out, time.perf_counter() - t0


def _centered(x) -> np.ndarray:
  x = np.asarray(x, dtype=np.float64)
  return x - x.mean()


def _spearman(x, y) -> float:
  from scipy.stats import spearmanr

  return float(spearmanr(x, y).statistic)


def arena_rank_contextual(python, agents, a, b, y, cov, timeout):
  """arena-rank's ``ContextualBradleyTerry`` on these battles in a fresh process of ``python``.

  Returns ``(wall s, peak RSS MB, strengths in logits in the order of agents, coefficients)``, the
  last two ``None`` if the run failed or timed out.
  """
  python = str(pathlib.Path(python).absolute())
  with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "battles.parquet"
    _peers.write_contextual(path, agents, a, b, y, cov.diff, cov.names)
    argv = [python, "-c", _peers.CONTEXTUAL_PROGRAM, str(path), "0", ",".join(cov.names)]
    wall, rss, out, code = measure(argv, _child_env(), pathlib.Path(tmp), "arena-rank", timeout)
  if code != 0:
    return wall, rss, None, None
  got = json.loads(out.strip().splitlines()[-1])
  index = {name: k for k, name in enumerate(got["competitors"])}
  ratings = np.array([got["ratings"][index[name]] for name in agents])
  return wall, rss, (ratings - got["offset"]) / got["alpha"], np.array(got["coeffs"])


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--models", type=int, default=200)
  parser.add_argument("--battles", type=int, default=2_000_000)
  parser.add_argument("--nu", type=float, default=0.5, help="Davidson tie weight of the data")
  parser.add_argument("--arena-rank-python", default=None, help="arena-rank's interpreter")
  parser.add_argument("--timeout", type=float, default=3600.0, help="the peer's limit (s)")
  args = parser.parse_args()

  a, b, y, raw = synthetic_arena(args.models, args.battles, args.nu)
  m = args.battles
  train = np.arange(m) < int(0.9 * m)
  test = ~train
  agents = tuple(str(i) for i in range(args.models))
  c = Comparisons.from_arrays(a[train], b[train], y[train], agents=agents)
  # The held-out rows are normalized with the training rows' mean and std (FastChat standardizes
  # over the rows it fits).
  raw_train = {k: v[train] for k, v in raw.items()}
  cov = normalize_differences(raw_train)
  z_test = np.stack([(v[test] - v[train].mean()) / v[train].std() for v in raw.values()], axis=1)
  at, bt, yt = jnp.asarray(a[test]), jnp.asarray(b[test]), y[test]
  key = jax.random.key(0)

  unc, t_unc = _timed(lambda: fit_model_tournament(key, c, **GRID))
  ctl, t_ctl = _timed(lambda: fit_controlled_tournament(key, c, cov, **GRID))
  dav, t_dav = _timed(lambda: fit_tie_tournament(key, c, model="davidson", **GRID))
  cdv, t_cdv = _timed(lambda: fit_controlled_tournament(key, c, cov, tie_model="davidson", **GRID))

  rows = []
  h = intransitive_logits(unc.params, at, bt)
  rows.append(("uncontrolled", t_unc, "", _binary_log_loss(h, yt), ""))
  h_ctl = np.asarray(intransitive_logits(ctl.params, at, bt), np.float64) + z_test @ np.asarray(
    ctl.beta, np.float64
  )
  rows.append(("controlled", t_ctl, f"{t_ctl - t_unc:.1f}", _binary_log_loss(h_ctl, yt), ""))
  h_dav = intransitive_logits(dav.params, at, bt)
  la, lb, lt = (
    np.asarray(x, np.float64) for x in tie_log_probabilities(h_dav, dav.tie_param, "davidson")
  )
  nll3 = -np.mean(np.where(yt == 1, la, np.where(yt == 0, lb, lt)))
  rows.append(("davidson", t_dav, "", _binary_log_loss(la - lb, yt), f"{nll3:.4f}"))
  h_cdv = np.asarray(intransitive_logits(cdv.params, at, bt), np.float64) + z_test @ np.asarray(
    cdv.beta, np.float64
  )
  la, lb, lt = (
    np.asarray(x, np.float64)
    for x in tie_log_probabilities(jnp.asarray(h_cdv), cdv.tie_param, "davidson")
  )
  nll3 = -np.mean(np.where(yt == 1, la, np.where(yt == 0, lb, lt)))
  rows.append(
    (
      "controlled davidson",
      t_cdv,
      f"{t_cdv - t_unc:.1f}",
      _binary_log_loss(la - lb, yt),
      f"{nll3:.4f}",
    )
  )

  print(
    f"{args.models} models, {m:,} battles ({int(train.sum()):,} fitted, {int(test.sum()):,} held "
    f"out), Davidson nu {args.nu}, planted beta {BETA.tolist()}"
  )
  print(f"machine: {machine_description()}")
  print()
  print("| fit | seconds (compiled) | row fit (s) | held-out log-loss | held-out 3-outcome NLL |")
  print("|---|---:|---:|---:|---:|")
  for name, t, extra, loss, nll in rows:
    print(f"| {name} | {t:.1f} | {extra} | {loss:.4f} | {nll} |")
  print()
  lo, hi = ctl.beta_intervals()
  print(
    "controlled beta: "
    + "; ".join(
      f"{n} {float(v):+.3f} [{lo_:+.3f}, {hi_:+.3f}] (planted {p:+.2f})"
      for n, v, lo_, hi_, p in zip(ctl.names, np.asarray(ctl.beta), lo, hi, BETA)
    )
  )
  print(f"Davidson nu: {dav.tie_parameter:.3f} (planted {args.nu})")
  lo, hi = cdv.beta_intervals()
  print(
    "controlled davidson beta: "
    + "; ".join(
      f"{n} {float(v):+.3f} [{lo_:+.3f}, {hi_:+.3f}] (planted {p:+.2f})"
      for n, v, lo_, hi_, p in zip(cdv.names, np.asarray(cdv.beta), lo, hi, BETA)
    )
    + f"; nu {float(np.exp(float(cdv.tie_param))):.3f}"
  )
  print()
  peer_version = _peers.version(args.arena_rank_python, "arena-rank")
  if peer_version is None:
    print("arena-rank ContextualBradleyTerry: not installed")
    return
  label = f"arena-rank {peer_version} ContextualBradleyTerry"
  ours, ours_label = ctl, "controlled"
  if ctl.chosen.rank != 0:
    grid = dict(GRID, ranks=(0,))
    ours = fit_controlled_tournament(key, c, cov, **grid)
    ours_label = f"rank-0 controlled (the controlled row chose rank {ctl.chosen.rank})"
  wall, rss, theirs, coeffs = arena_rank_contextual(
    args.arena_rank_python, agents, a[train], b[train], y[train], cov, args.timeout
  )
  s_ours = _centered(ours.params.strength)
  print(
    f"{label} on the {int(train.sum()):,} fitted battles against our {ours_label} strengths "
    "(both centered, logits; its ratings / (400 / ln 10)):"
  )
  print()
  print("| peer | seconds (fresh process) | peak RSS (MB) | Pearson | Spearman | max abs diff |")
  print("|---|---:|---:|---:|---:|---:|")
  if theirs is None:
    print(f"| {label} | {wall:.1f} | {rss:.0f} | failed | | |")
    return
  s_theirs = _centered(theirs)
  print(
    f"| {label} | {wall:.1f} | {rss:.0f} | {np.corrcoef(s_ours, s_theirs)[0, 1]:.6f} | "
    f"{_spearman(s_ours, s_theirs):.6f} | {np.max(np.abs(s_ours - s_theirs)):.2e} |"
  )
  print()
  print(
    "coefficients, arena-rank (ours): "
    + "; ".join(
      f"{n} {t:+.4f} ({float(o):+.4f})" for n, t, o in zip(cov.names, coeffs, np.asarray(ours.beta))
    )
    + f"; max abs diff {np.max(np.abs(coeffs - np.asarray(ours.beta, np.float64))):.2e}"
  )


if __name__ == "__main__":
  main()
