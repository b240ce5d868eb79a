"""Wall time of the model estimator's fit and bootstrap refits on a large arena (``ste-jax score``'s
default estimator).

Input: the issue-6 synthetic arena battles of ``benchmarks/cli.py`` (uniformly random pairs, 10 %
ties, a planted 5-cycle on top of Bradley-Terry strengths), 1,000 agents and 100,000 battles by
default. Each source tree is measured in its own fresh process (``PYTHONPATH`` = the tree):

* ``fit``: ``ste_jax.evaluate.ModelEstimator().fit`` (:func:`~ste_jax.evaluate.fit_model_tournament`
  with its defaults: 5-fold cross-validation over 8 candidates, then the final fit), first call
  (with compilation) and second call (compiled);
* ``replica``: seconds per bootstrap replica of
  ``bootstrap_hard_memberships(key, c, est, fitted, ..., batch_size=B)`` for B = 8 and 1
  (parametric resampling, a warm-started refit and the hard cores per replica), second call of
  each (compiled), and the first call's compile-and-run time. A ``--before`` tree must have the
  estimator protocol (``ste_jax.evaluate.ModelEstimator``).

With ``--objective`` (this checkout only) it also times the penalized objective and its gradient
over the observed pairs compiled with XLA's default options and with
``ste_jax._compiler_options.GATHER_FRIENDLY`` (YNNPACK fusions off), in one process.

Usage:
  python benchmarks/model_fit.py --objective
  python benchmarks/model_fit.py --before /tmp/before     # git archive of an older revision
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._timing import machine_description  # noqa: E402
from benchmarks.cli import write_arena  # noqa: E402

CHILD = r"""
import json, sys, time
import jax, numpy as np, pandas as pd
from ste_jax.data import Comparisons
from ste_jax.evaluate import ModelEstimator, bootstrap_hard_memberships

path, replicas = sys.argv[1], int(sys.argv[2])
df = pd.read_csv(path)
names = sorted(set(df.a) | set(df.b))
index = {s: i for i, s in enumerate(names)}
outcome = np.where(df.winner == "a", 1.0, np.where(df.winner == "b", 0.0, 0.5))
c = Comparisons.from_arrays(df.a.map(index).values, df.b.map(index).values, outcome)
out = {}
for call in ("first", "second"):
  t = time.perf_counter()
  est = ModelEstimator()
  fitted = est.fit(jax.random.key(0), c)
  out["fit_" + call] = time.perf_counter() - t
out["chosen"] = fitted.model.describe().split(";")[0]
for batch in (8, 1):
  for call in ("first", "second"):
    t = time.perf_counter()
    bootstrap_hard_memberships(
      jax.random.key(1), c, est, fitted, num_replicas=replicas, batch_size=batch
    )
    out[f"boot{batch}_{call}"] = time.perf_counter() - t
print(json.dumps(out))
"""

OBJECTIVE = r"""
import json, sys, time
import jax, jax.numpy as jnp, numpy as np, pandas as pd
from ste_jax._compiler_options import GATHER_FRIENDLY
from ste_jax.data import Comparisons
from ste_jax.evaluate import _model_estimator as me
from ste_jax.models._intransitive import init_intransitive_params

df = pd.read_csv(sys.argv[1])
names = sorted(set(df.a) | set(df.b))
index = {s: i for i, s in enumerate(names)}
outcome = np.where(df.winner == "a", 1.0, np.where(df.winner == "b", 0.0, 0.5))
c = Comparisons.from_arrays(df.a.map(index).values, df.b.map(index).values, outcome)
pairs = me.observed_pairs(c)
w_ij, w_ji = me.pair_wins(pairs, c.outcome, c.weight)
band = me.record_band(w_ij, w_ji, 2.0)
p0 = init_intransitive_params(jax.random.key(1), c.num_agents, 2)
theta = (p0.strength, p0.u, p0.v)

def loss(theta):
  return me._penalized_nll(theta, p0.mask, pairs, w_ij, w_ji, band, 0.3, 1.0)

def best_ms(f, rounds=20):
  jax.block_until_ready(f(theta))
  times = []
  for _ in range(rounds):
    t = time.perf_counter()
    jax.block_until_ready(f(theta))
    times.append(time.perf_counter() - t)
  return 1e3 * float(np.median(times))

out = {"pairs": int(pairs.i.shape[0])}
for label, options in (("default", None), ("gather_friendly", GATHER_FRIENDLY)):
  kw = {} if options is None else {"compiler_options": options}
  out[label] = (best_ms(jax.jit(loss, **kw)), best_ms(jax.jit(jax.value_and_grad(loss), **kw)))
print(json.dumps(out))
"""


def child(code: str, source: pathlib.Path, *args) -> dict:
  env = dict(os.environ, PYTHONPATH=str(source))
  proc = subprocess.run(
    [sys.executable, "-c", code, *map(str, args)],
    cwd=source,
    env=env,
    capture_output=True,
    text=True,
  )
  if proc.returncode != 0:
    raise SystemExit(f"{source}: child failed:\n{proc.stderr[-2000:]}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--agents", type=int, default=1000)
  parser.add_argument("--comparisons", type=int, default=100_000)
  parser.add_argument("--replicas", type=int, default=16, help="bootstrap replicas per timed call")
  parser.add_argument(
    "--before", type=pathlib.Path, default=None, help="source tree of an older revision"
  )
  parser.add_argument("--objective", action="store_true", help="also time the objective both ways")
  args = parser.parse_args()
  with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "battles.csv"
    description = write_arena(path, args.agents, args.comparisons)
    print(f"machine: {machine_description()}")
    print(f"input: {description}")
    print()
    if args.objective:
      o = child(OBJECTIVE, ROOT, path)
      print(
        f"penalized objective over {o['pairs']} observed pairs (rank-2 model), median of 20 calls:"
      )
      print()
      print("| compiled with | objective (ms) | value and gradient (ms) |")
      print("|---|---:|---:|")
      for label in ("default", "gather_friendly"):
        value, grad = o[label]
        print(f"| {label.replace('_', '-')} options | {value:.2f} | {grad:.2f} |")
      ratio = o["default"][0] / o["gather_friendly"][0]
      print(f"\nobjective: default / gather-friendly = {ratio:.1f}x")
      print()
    sources = [("this checkout", ROOT)] + (
      [("before", args.before.resolve())] if args.before else []
    )
    r = args.replicas
    print(
      "| source | fit, first call (s) | fit, second call (s) | s per replica, batch 8 | s per "
      "replica, batch 1 "
      f"| first bootstrap call, batch 8 / 1 ({r} replicas, s) | chosen model |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    for label, source in sources:
      t = child(CHILD, source, path, r)
      print(
        f"| {label} | {t['fit_first']:.1f} | {t['fit_second']:.1f} | {t['boot8_second'] / r:.3f} | "
        f"{t['boot1_second'] / r:.3f} | {t['boot8_first']:.1f} / {t['boot1_first']:.1f} | "
        f"{t['chosen']} |",
        flush=True,
      )


if __name__ == "__main__":
  main()
