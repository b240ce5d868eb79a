"""Shared benchmark discipline: AOT compile time, warm-up, block_until_ready, peak RSS per process.

Each measurement runs in a fresh child process (``run_child``) so that the peak resident set size
(``ru_maxrss``, a high-water mark) belongs to that configuration alone.
"""

import contextlib
import json
import resource
import statistics
import subprocess
import sys
import time

import jax

from ste_jax.benchmarking import machine_description as machine_description  # noqa: F401  (re-export)


def peak_rss_mb() -> float:
  """Peak resident set size of this process so far, in MB."""
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def peak_device_mb() -> float | None:
  """Peak memory in use on the default accelerator so far, in MB (``None`` on CPU / unknown)."""
  if jax.default_backend() == "cpu":
    return None
  stats = jax.devices()[0].memory_stats() or {}
  peak = stats.get("peak_bytes_in_use")
  return None if peak is None else peak / 2**20


def memory_report() -> dict:
  """``{"peak_rss_mb": ..., "peak_device_mb": ...}`` of this process so far."""
  return {"peak_rss_mb": peak_rss_mb(), "peak_device_mb": peak_device_mb()}


def fmt_mb(x: float | None) -> str:
  return "—" if x is None else f"{x:.0f}"


def compile_and_time(fn, *args, reps: int = 3, min_time: float = 0.0):
  """Compiles ``fn`` ahead of time, warms it up, returns (compile_s, median run_s)."""
  t0 = time.perf_counter()
  compiled = jax.jit(fn).lower(*args).compile()
  compile_s = time.perf_counter() - t0
  jax.block_until_ready(compiled(*args))  # warm-up
  times = []
  while len(times) < reps or sum(times) < min_time:
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    times.append(time.perf_counter() - t0)
  times.sort()
  return compile_s, times[len(times) // 2]


@contextlib.contextmanager
def patched(module, **constants):
  """Sets module constants read at trace time (tile budgets, thresholds) inside a ``with`` block.

  JAX's caches are cleared on entry, so that functions traced inside see the new values, and the
  old values are restored on exit.
  """
  saved = {name: getattr(module, name) for name in constants}
  for name, value in constants.items():
    setattr(module, name, value)
  jax.clear_caches()
  try:
    yield
  finally:
    for name, value in saved.items():
      setattr(module, name, value)


def interleaved_medians(calls: dict, rounds: int) -> dict:
  """Median seconds of each zero-argument call, timed alternately for ``rounds`` rounds after a
  warm-up.

  Alternating the calls spreads this VM's drift over all of them; each result is waited for
  (``jax.block_until_ready``).
  """
  for call in calls.values():
    jax.block_until_ready(call())
  times = {key: [] for key in calls}
  for _ in range(rounds):
    for key, call in calls.items():
      t0 = time.perf_counter()
      jax.block_until_ready(call())
      times[key].append(time.perf_counter() - t0)
  return {key: statistics.median(t) for key, t in times.items()}


def run_child(script: str, args: list, timeout: float = 1800.0) -> dict:
  """Runs ``python script --child ARGS`` and parses the last stdout line as JSON.

  Returns ``{"error": ...}`` when the child fails (for example out of memory).
  """
  cmd = [sys.executable, script, "--child", *map(str, args)]
  try:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
  except subprocess.TimeoutExpired:
    return {"error": f"timeout after {timeout:.0f} s"}
  if out.returncode != 0:
    tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["?"]
    return {"error": f"exit {out.returncode}: {tail[0][:120]}"}
  return json.loads(out.stdout.strip().splitlines()[-1])
