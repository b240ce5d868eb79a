"""Wall time and peak memory of ``ste-jax score`` on large inputs, with the persistent compilation
cache cold and warm, next to peer libraries on the same file (issues 6, 10, 39).

Inputs (written whole-column with pandas / pyarrow to a temporary file):

* ``arena`` (default size: the issue-39 Chatbot-Arena-sized file): 2,000,000 battles among 200
  models, Parquet, columns ``model_a, model_b, winner`` with winner in ``model_a`` / ``model_b`` /
  ``tie``: uniformly random pairs, 10 % ties, Bradley-Terry strengths with a planted top tier of
  5 models that is a 5-cycle;
* ``sparse``: the same generator with 1,000 models and 100,000 battles;
* ``league``: a tennis-like sparse tour from :func:`ste_jax.stats.sparse_league` (CSV ``a, b,
  winner``) — 1,200 agents, 30,000 comparisons, heavy-tailed games per agent (many agents with 1-5
  matches, a few with thousands), opponents of similar strength preferred, no ties.

``--agents`` / ``--comparisons`` change the size, ``--format csv|csv-quoted|parquet`` the file
format (default Parquet for arena / sparse, CSV for league; ``csv-quoted``: every field in
quotes, the file the ``csv`` module reads record by record).

ste_jax: each estimator and each ``--replicas`` value is timed as a whole command in a fresh
process, ``python -m ste_jax score FILE --estimator E --bootstrap R --output csv --no-progress``
(interpreter start, JAX import, loading, compilation, model fit, bootstrap and baselines), twice:
"cold" with ``STE_JAX_COMPILATION_CACHE`` set to a fresh empty folder under the temporary
directory, then "warm" with the same folder again (the programs the cold run compiled are read
back from it). Peak RSS is the command's own maximum resident set (``os.wait4`` in a small
launcher process, so that it does not start from this script's peak). With ``--before PATH`` (a
checkout of an older revision, e.g. ``git worktree add /tmp/before 01191f0``) the same
commands run against that source tree too (an estimator it does not know shows "failed"; a tree
without the persistent cache ignores the variable, so its warm run compiles again).

Peers (``--peers``, default: those that import under their interpreter), timed the same way as a
fresh process that reads the same file, fits Bradley-Terry on all battles and on each of
``--peer-replicas`` bootstrap resamples, and prints the number of models (``benchmarks/_peers.py``):

* ``evalica`` (``--evalica-python``, default this interpreter): ``evalica.bradley_terry`` (its
  Rust solver), the battles resampled with NumPy;
* ``arena-rank`` (``--arena-rank-python``): ``arena_rank``'s ``PairDataset`` + ``BradleyTerry``
  with ``compute_ratings_and_cis(ci_method="bootstrap")`` (multinomial counts, a multiprocessing
  pool of one worker per CPU; peak RSS is the largest single process, not the pool's sum).

A peer that does not import shows "not installed". A command still running after ``--timeout``
seconds (default 3600) is killed with its process group and shows "timed out".

Peers' environments (arena-rank pins its own jax and numpy, so it lives in a venv of its own):
  .venv/bin/pip install evalica
  python3 -m venv /tmp/arena_rank_venv && /tmp/arena_rank_venv/bin/pip install arena-rank pyarrow

Usage:
  python benchmarks/cli.py                                  # arena, 2e6 battles, every estimator
  python benchmarks/cli.py --arena-rank-python /tmp/arena_rank_venv/bin/python
  python benchmarks/cli.py --input sparse --replicas 200 --estimators posterior
  python benchmarks/cli.py --input league --before /tmp/before --peers
"""

import argparse
import contextlib
import csv
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks import _peers  # noqa: E402
from benchmarks._timing import machine_description  # noqa: E402

ESTIMATORS = ("auto", "posterior", "winrate", "model")
CACHE_ENV = "STE_JAX_COMPILATION_CACHE"
SIZES = {"arena": (200, 2_000_000), "sparse": (1000, 100_000), "league": (1200, 30_000)}


def write_arena(path: pathlib.Path, n: int, m: int, file_format: str, seed: int = 0) -> str:
  """Arena battles (``model_a, model_b, winner``) among ``n`` models, ``m`` rows -> description."""
  rng = np.random.default_rng(seed)
  strength = rng.normal(size=n)
  strength[:5] = strength.max() + 3.0  # a planted top tier ...
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n  # never a self-pair
  logit = strength[a] - strength[b]
  cyc = (a < 5) & (b < 5)
  logit = np.where(
    cyc, np.where(np.isin((b - a) % 5, (1, 2)), 1.5, -1.5), logit
  )  # ... that is a 5-cycle
  p = 1.0 / (1.0 + np.exp(-logit))
  winner = np.where(rng.random(m) < 0.1, "tie", np.where(rng.random(m) < p, "model_a", "model_b"))
  names = np.array([f"model-{i:04d}" for i in range(n)], dtype=object)
  _write(path, file_format, {"model_a": names[a], "model_b": names[b], "winner": winner})
  return (
    f"synthetic arena battles ({file_format}, model_a/model_b/winner): {n} models, {m} battles, "
    f"random pairs, 10% ties, a planted 5-cycle on top"
  )


def write_league(path: pathlib.Path, n: int, m: int, file_format: str, seed: int = 0) -> str:
  """A :func:`ste_jax.stats.sparse_league` tour (``a, b, winner``) -> description."""
  import jax

  from ste_jax.stats import sparse_league

  c = sparse_league(jax.random.key(seed), num_agents=n, num_comparisons=m).comparisons
  names = np.array(c.agents, dtype=object)
  a, b, o = np.asarray(c.a), np.asarray(c.b), np.asarray(c.outcome)
  _write(path, file_format, {"a": names[a], "b": names[b], "winner": np.where(o == 1.0, "a", "b")})
  games = np.bincount(np.concatenate([a, b]), minlength=n)
  pairs = len(np.unique(np.minimum(a, b) * n + np.maximum(a, b)))
  return (
    f"sparse_league(key {seed}, {file_format}): {n} agents, {m} comparisons, {pairs} distinct "
    f"pairs ({pairs / (n * (n - 1) / 2):.1%} of all), games per agent min {games.min()} / median "
    f"{np.median(games):g} / max {games.max()}, {np.mean(games <= 5):.0%} of agents with <= 5"
  )


def _write(path: pathlib.Path, file_format: str, columns: dict) -> None:
  """Writes the columns whole (no per-row Python loop) as CSV or Parquet."""
  frame = pd.DataFrame(columns)
  if file_format == "parquet":
    frame.to_parquet(path, index=False, engine="pyarrow")
  else:
    frame.to_csv(path, index=False, quoting=csv.QUOTE_ALL if file_format == "csv-quoted" else None)


def _child_env(**extra) -> dict:
  """This environment without PYTHONPATH and the variables that steer a child's JAX cache."""
  env = {
    k: v
    for k, v in os.environ.items()
    if k not in ("JAX_COMPILATION_CACHE_DIR", CACHE_ENV, "PYTHONPATH")
  }
  env.update(extra)
  return env


# Linux keeps a process's peak RSS across exec, and a child started from this process begins with
# this process's peak (the memory it shares before exec): so the measured command is started from
# this small launcher instead (``python -I -S -c LAUNCHER REPORT ARGV...``), which times it, waits
# for it with ``os.wait4`` and writes ``wall s, ru_maxrss KB, wait status`` to REPORT.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as f:
  f.write(f"{wall} {usage.ru_maxrss} {status}")
os._exit(os.waitstatus_to_exitcode(status) % 256)
"""


def measure(
  argv: list, env: dict, cwd: pathlib.Path, label: str, timeout: float
) -> tuple[float, float, str, int | str]:
  """``(wall s, peak RSS MB, stdout, exit status)`` of the command ``argv`` in a fresh process.

  ``argv[0]`` is an absolute path. The command runs (through ``LAUNCHER``) in a session of its
  own; past ``timeout`` seconds its whole process group is killed and the status is ``"timed
  out"`` (wall time then: until the kill; peak RSS: unknown, ``nan``).
  """
  with (
    tempfile.TemporaryFile("w+") as out,
    tempfile.TemporaryFile("w+") as err,
    tempfile.TemporaryDirectory() as tmp,
  ):
    report = pathlib.Path(tmp) / "report"
    start = time.perf_counter()
    proc = subprocess.Popen(
      [sys.executable, "-I", "-S", "-c", LAUNCHER, str(report), *argv],
      stdout=out,
      stderr=err,
      cwd=cwd,
      env=env,
      start_new_session=True,
    )
    fired = threading.Event()

    def kill():
      fired.set()
      with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    proc.wait()
    timer.cancel()
    wall, rss, code = time.perf_counter() - start, float("nan"), "timed out"
    if not fired.is_set():
      if report.exists():
        wall_s, maxrss_kb, status = report.read_text().split()
        wall, rss = float(wall_s), int(maxrss_kb) / 1024.0
        code = os.waitstatus_to_exitcode(int(status))
      else:
        code = proc.returncode
    out.seek(0)
    err.seek(0)
    if code == "timed out":
      print(f"  ({label} timed out after {timeout:g} s)", file=sys.stderr)
    elif code != 0:
      print(f"  ({label} failed: {err.read().strip().splitlines()[-1:]})", file=sys.stderr)
    return wall, rss, out.read(), code


def run(args: list, source: pathlib.Path, cache: pathlib.Path, timeout: float) -> tuple:
  """:func:`measure` of ``python -m ste_jax ARGS`` in ``source`` with the XLA cache in ``cache``."""
  env = _child_env(PYTHONPATH=str(source), **{CACHE_ENV: str(cache)})
  label = f"{source}: {' '.join(args[2:])} ({CACHE_ENV}={cache})"
  return measure([sys.executable, "-m", "ste_jax", *args], env, source, label, timeout)


def _mb(rss: float) -> str:
  return "-" if np.isnan(rss) else f"{rss:.0f}"


def _failed(code) -> str:
  return code if code == "timed out" else "failed"


def row(*cells) -> str:
  return "| " + " | ".join(str(c) for c in cells) + " |"


def main():
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--input", choices=tuple(SIZES), default="arena")
  parser.add_argument(
    "--agents", type=int, default=None, help="default 200 (arena) / 1000 (sparse) / 1200 (league)"
  )
  parser.add_argument(
    "--comparisons",
    type=int,
    default=None,
    help="default 2000000 (arena) / 100000 (sparse) / 30000 (league)",
  )
  parser.add_argument(
    "--format",
    choices=("csv", "csv-quoted", "parquet"),
    default=None,
    help="file format (default parquet for arena / sparse, csv for league)",
  )
  parser.add_argument(
    "--replicas", type=int, nargs="+", default=[0, 200], help="--bootstrap values (default 0 200)"
  )
  parser.add_argument("--estimators", nargs="+", choices=ESTIMATORS, default=list(ESTIMATORS))
  parser.add_argument(
    "--before", type=pathlib.Path, default=None, help="source tree of an older revision"
  )
  parser.add_argument(
    "--peers",
    nargs="*",
    choices=tuple(_peers.PROGRAMS),
    default=None,
    help="peer libraries to time (default: those that import; none with a bare --peers)",
  )
  parser.add_argument(
    "--peer-replicas", type=int, nargs="+", default=[200], help="peers' bootstrap replicas"
  )
  parser.add_argument("--evalica-python", default=sys.executable, help="evalica's interpreter")
  parser.add_argument("--arena-rank-python", default=None, help="arena-rank's interpreter")
  parser.add_argument(
    "--timeout", type=float, default=3600.0, help="seconds per command (default 3600)"
  )
  args = parser.parse_args()
  n_default, m_default = SIZES[args.input]
  n = args.agents or n_default
  m = args.comparisons or m_default
  file_format = args.format or ("csv" if args.input == "league" else "parquet")
  pythons = {"evalica": args.evalica_python, "arena-rank": args.arena_rank_python}
  versions = {
    peer: _peers.version(pythons[peer], peer)
    for peer in (_peers.PROGRAMS if args.peers is None else args.peers)
  }
  peers = [p for p in versions if versions[p] or args.peers is not None]
  with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    suffix = file_format.removesuffix("-quoted")  # the file's suffix, as the peers read it
    path = tmp / f"battles.{suffix}"
    write = write_league if args.input == "league" else write_arena
    description = write(path, n, m, file_format)
    print(f"machine: {machine_description()}")
    print(f"input: {description} ({path.stat().st_size / 2**20:.2f} MB)")
    print()
    print(row("source", "estimator", "replicas", "cache", "wall s", "peak RSS MB", "rows out"))
    print("|---|---|---:|---|---:|---:|---:|")
    sources = [("this checkout", ROOT)] + (
      [("before", args.before.resolve())] if args.before else []
    )
    k = 0
    for estimator in args.estimators:
      for replicas in args.replicas:
        for label, source in sources:
          k += 1
          cache = tmp / f"xla-cache-{k}"  # fresh and empty: the cold run fills it
          cache.mkdir()
          cmd = [
            "score",
            str(path),
            "--estimator",
            estimator,
            "--bootstrap",
            str(replicas),
            "--output",
            "csv",
            "--no-progress",
          ]
          for state in ("cold", "warm"):
            wall, rss, out, code = run(cmd, source, cache, args.timeout)
            rows = max(0, len(out.strip().splitlines()) - 1) if code == 0 else _failed(code)
            print(row(label, estimator, replicas, state, f"{wall:.1f}", _mb(rss), rows))
            sys.stdout.flush()
    for peer in peers:
      for replicas in args.peer_replicas:
        label = f"{peer} {versions[peer]}" if versions[peer] else peer
        if not versions[peer]:
          print(row(label, "Bradley-Terry", replicas, "-", "not installed", "-", "-"), flush=True)
          continue
        argv = [pythons[peer], "-c", _peers.PROGRAMS[peer], str(path), suffix, str(replicas)]
        wall, rss, out, code = measure(
          argv, _child_env(), tmp, f"{peer} ({replicas} replicas)", args.timeout
        )
        models = out.strip().splitlines()[-1] if code == 0 and out.strip() else _failed(code)
        print(row(label, "Bradley-Terry", replicas, "-", f"{wall:.1f}", _mb(rss), models))
        sys.stdout.flush()


if __name__ == "__main__":
  main()
