"""Active comparisons (issue 13): comparisons until the verdicts certify the true core, by policy.

Policies: ``active`` (:func:`ste_jax.evaluate.suggest_pairs`), ``uniform`` (uniformly random
distinct pairs) and ``arena`` (the Chatbot Arena rule, its paper's Eq. 9 on a Bradley--Terry fit),
all from the same warm-up (one game per pair) and the same ground truth per seed; ``k`` distinct
pairs per round, one game each, until the Top-Cycle verdicts certify or the budget ends. All seeds
of one policy and ground truth run as one compiled computation (``jax.vmap`` over seeds of a
``lax.while_loop`` over rounds).

Columns: ``median`` comparisons to certify (warm-up included; ``>=`` when some runs hit the budget,
which then counts as their value), ``cert`` the share of runs certified within the budget,
``wrong`` the share of certified runs whose certified core is not the true one, and ``x uniform``
the ratio of the uniform median to the policy's (``>=`` when only uniform hit the budget). ``c``
is the confidence: ``0.95 core`` is the default of ``suggest_pairs`` (Bonferroni: an edge is sure
at ``1 - 0.05 / #pairs``, so that the whole certified core is right with probability about 0.95),
``0.95 pair`` is ``correction="none"`` (every edge at 0.95, the level of ``ste-jax score``), shown
to measure what adaptive sampling does to a per-pair level. Every policy stops at the same level.

Usage: python benchmarks/active.py [--quick | --medium] [--seeds S]
  --quick   planted n = 30, |C| = 5 at both levels, 8 seeds (under 2 minutes on 2 CPU cores)
  --medium  the full grid without n = 100 (the n = 100 rows take the longest)
  default planted n = 30 (|C| = 3, 5, 7) and n = 100 (|C| = 3, 7), Bradley--Terry with a 3-cycle on
            top (n = 30), and the Vicuna-80 win-rate matrix (real data, n = 8), 32 seeds (8 at n =
            100)
"""

import argparse
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax.evaluate._active import edge_level, simulate_certification, suggest_pairs
from ste_jax.stats import planted_core_tournament

ROOT = pathlib.Path(__file__).resolve().parents[1]
POLICIES = ("active", "uniform", "arena")


def planted(n, core, seeds):
  keys = jax.random.split(jax.random.key(1000 + 10 * n + core), seeds)
  return jax.vmap(lambda k: planted_core_tournament(k, n=n, core_size=core).P)(keys)


def bt_cycle(n, seeds, margin=1.0):
  """Bradley--Terry strengths ``N(0, 1)``; the top three form a 3-cycle (logit ``+-margin``)."""

  def one(key):
    s = jnp.sort(jax.random.normal(key, (n,)))[::-1] + jnp.where(jnp.arange(n) < 3, 1.0, 0.0)
    H = s[:, None] - s[None, :]
    top = jnp.zeros((n, n)).at[0, 1].set(1.0).at[1, 2].set(1.0).at[2, 0].set(1.0)
    H = jnp.where(
      (jnp.arange(n)[:, None] < 3) & (jnp.arange(n)[None, :] < 3), margin * (top - top.T), H
    )
    return jax.nn.sigmoid(H)

  return jax.vmap(one)(jax.random.split(jax.random.key(7), seeds))


def real_win_rates(seeds):
  """The win-rate matrix of the complete Vicuna-80 round robin (ties half), for every seed."""
  from ste_jax.data import load_comparisons, win_rate_tournament

  path = ROOT.parent / "shared" / "data" / "vicuna80_qlora_human" / "comparisons.csv"
  if not path.exists():
    path = ROOT / "ste_jax" / "_bundled" / "vicuna80_qlora_human" / "comparisons.csv"
  c, _ = load_comparisons(path)
  P = win_rate_tournament(c)
  return jnp.broadcast_to(P, (seeds,) + P.shape), c.agents


_COMPILED = {}


def _simulator(policy, k):
  """One compiled ``vmap`` of the simulator per policy and ``k`` (budget, edge level: traced)."""
  if (policy, k) not in _COMPILED:
    _COMPILED[policy, k] = jax.jit(
      jax.vmap(
        lambda key, p, level, rounds: simulate_certification(
          key, p, policy=policy, k=k, max_rounds=rounds, confidence=level, correction="none"
        ),
        in_axes=(0, 0, None, None),
      )
    )
  return _COMPILED[policy, k]


def run(P, *, k, rounds, confidence, correction, seeds, policies=POLICIES):
  keys = jax.random.split(jax.random.key(0), seeds)
  level = edge_level(
    confidence, P.shape[-1], correction
  )  # "none" below: the level is already corrected
  out = {}
  for policy in policies:
    start = time.perf_counter()
    r = jax.device_get(
      _simulator(policy, k)(keys, P, jnp.asarray(level, P.dtype), jnp.asarray(rounds, jnp.int32))
    )
    out[policy] = (r, time.perf_counter() - start)
  return out


def row(name, n, k, conf_name, results):
  cells = []
  uniform = results["uniform"][0]
  u_med, u_censored = np.median(uniform.comparisons), not np.all(uniform.certified)
  for policy in POLICIES:
    if policy not in results:
      continue
    r, secs = results[policy]
    med = np.median(r.comparisons)
    censored = not np.all(r.certified)
    cert = r.certified.mean()
    wrong = (r.certified & ~r.correct).sum() / max(1, r.certified.sum())
    ratio = u_med / med
    ratio_txt = f"{'>=' if u_censored and not censored else ''}{ratio:.1f}"
    cells.append(
      f"{'>=' if censored else ''}{med:.0f} / {cert:.2f} / {wrong:.2f}"
      + (f" / {ratio_txt}" if policy != "uniform" else "")
    )
  return f"| {name} | {n} | {k} | {conf_name} | " + " | ".join(cells) + " |"


def bench(name, P, *, k, rounds, correction="bonferroni", confidence=0.95):
  conf_name = f"{confidence:g} {'core' if correction == 'bonferroni' else 'pair'}"
  results = run(
    P, k=k, rounds=rounds, confidence=confidence, correction=correction, seeds=P.shape[0]
  )
  print(row(name, P.shape[-1], k, conf_name, results), flush=True)
  print(
    "  seconds (compile + run): "
    + ", ".join(f"{p} {secs:.0f}" for p, (_, secs) in results.items()),
    file=sys.stderr,
    flush=True,
  )
  return results


def timing(n=100):
  P = planted(n, 7, 1)[0]
  rows, cols = np.triu_indices(n, 1)
  w = jax.random.binomial(jax.random.key(3), 2.0, P[rows, cols])
  wins = jnp.zeros((n, n)).at[rows, cols].set(w).at[cols, rows].set(2.0 - w)
  out = {}
  for target in ("top_cycle", "uncovered"):
    jax.block_until_ready(suggest_pairs(jax.random.key(0), wins, k=20, target=target))
    start = time.perf_counter()
    for i in range(5):
      jax.block_until_ready(suggest_pairs(jax.random.key(i), wins, k=20, target=target))
    out[target] = (time.perf_counter() - start) / 5
  return out


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  size = parser.add_mutually_exclusive_group()
  size.add_argument(
    "--quick", action="store_true", help="n = 30, |C| = 5 only, 8 seeds (under 2 minutes)"
  )
  size.add_argument("--medium", action="store_true", help="the full grid without the n = 100 rows")
  parser.add_argument("--seeds", type=int, default=None)
  parser.add_argument(
    "--no-timing", action="store_true", help="skip the suggest_pairs timing at n = 100"
  )
  args = parser.parse_args(argv)
  seeds = args.seeds or (8 if args.quick else 32)
  print(
    "| truth | n | k | c | active: median comparisons / cert / wrong / x uniform | uniform: median "
    "/ cert / "
    "wrong | arena: median / cert / wrong / x uniform |"
  )
  print("|---|---|---|---|---|---|---|")
  start = time.perf_counter()
  P = planted(30, 5, seeds)
  bench("planted |C|=5", P, k=30, rounds=3000)
  bench("planted |C|=5", P, k=30, rounds=1500, correction="none")
  if not args.quick:
    for core in (3, 7):
      bench(f"planted |C|={core}", planted(30, core, seeds), k=30, rounds=3000)
    if not args.medium:
      for core in (3, 7):
        bench(f"planted |C|={core}", planted(100, core, max(4, seeds // 4)), k=100, rounds=1500)
    bench("BT + 3-cycle on top", bt_cycle(30, seeds), k=30, rounds=3000)
    P, _ = real_win_rates(seeds)
    bench("Vicuna-80 win rates (real)", P, k=4, rounds=3000)
  line = (
    f"whole run {time.perf_counter() - start:.0f} s, {seeds} seeds ({jax.devices()[0].platform})"
  )
  if not args.no_timing:
    t = timing()
    line = (
      f"one suggest_pairs call at n = 100 (k = 20, compiled): top_cycle {t['top_cycle']:.3f} s, "
      "uncovered "
      f"{t['uncovered']:.3f} s; " + line
    )
  print("\n" + line)


if __name__ == "__main__":
  main()
