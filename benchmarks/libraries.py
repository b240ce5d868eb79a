"""Hand-written code beside the well-kept library that does the same job (issue 35, item 6).

Three sections, each a Markdown table:

* **L-BFGS**: the hand-written L-BFGS ste_jax used before (``handwritten_lbfgs`` below: fixed
  steps, a parallel Armijo line search over a grid of step sizes) against ``optax.lbfgs()`` with
  its defaults (memory 10, zoom line search of at most 20 steps), driven by a fixed-step
  ``lax.fori_loop`` of the same number of iterations (what
  :func:`ste_jax.evaluate._lbfgs.minimize_lbfgs` now is) and by the usual ``lax.while_loop`` to a
  gradient-norm tolerance. The objective is the
  model estimator's own (``fit_intransitive``'s preconditioned, profiled penalized likelihood: the
  module's ``minimize_lbfgs`` is swapped for each solver) on ``sparse_league`` data (heavy-tailed
  activity, most agents with a handful of games), rank 1, strength ridge 0.3, intransitive ridge 1,
  record tolerance 2. Shapes, as the estimator runs them: one fit (50 steps); the 20 fits of a
  cross-validation stage (5 folds x 4 strength ridges, 50 steps) in one ``lax.map``; 8 bootstrap
  refits (multinomial row resamples, 12 steps warm-started at the full fit) in one ``vmap``.
  Reported: AOT compile time, median run time, mean final objective, its mean excess over the best
  of the three solvers on the same fit, and the largest gradient norm (in the model's parameters).
* **CSV**: the vectorized fast path ``_read_csv_unquoted``, the exact ``csv``-module reader
  ``_read_csv_records``, plain ``pandas.read_csv`` (C engine, every cell a string) and
  ``pyarrow.csv.read_csv`` on a battles file (``a,b,winner``), reading all three columns; then,
  on a small file with known malformed rows (too many and too few fields, a blank line), which
  line numbers each reader reports.
* **PGN**: the vectorized tag reader ``_read_pgn`` against ``chess.pgn.read_headers``
  (python-chess, if installed) on a generated file of games (7 tags and a short movetext each),
  reading every game's tags; then what each does with malformed tag sections.

Usage:
  python benchmarks/libraries.py --quick      # n = 50, one fit; 1e5 CSV rows; 1e4 games
  python benchmarks/libraries.py              # n = 50 and 200; 1e5 and 1e6 rows; 1e4 and 1e5 games
"""

import argparse
from collections.abc import Callable
import contextlib
import csv
import dataclasses
import os
import pathlib
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
from jax import lax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

from benchmarks._timing import machine_description, patched  # noqa: E402
from ste_jax._compiler_options import GATHER_FRIENDLY  # noqa: E402
from ste_jax.data import _tabular  # noqa: E402
from ste_jax.evaluate import _lbfgs  # noqa: E402
from ste_jax.evaluate import _model_estimator as me  # noqa: E402
from ste_jax.models._intransitive import init_intransitive_params  # noqa: E402
from ste_jax.stats import sparse_league  # noqa: E402

# ------------------------------------------------------------------------------------------------
# L-BFGS


# The hand-written solver's constants: the line search's step sizes and the Armijo factor.
HANDWRITTEN_STEP_GRID = (2.0, 1.0, 0.5, 0.25, 0.1, 0.03, 0.01, 1e-3)
HANDWRITTEN_ARMIJO = 1e-4


def handwritten_lbfgs(
  fun: Callable[[jax.Array], jax.Array], x0: jax.Array, *, num_steps: int, memory: int = 8
) -> jax.Array:
  """The hand-written L-BFGS ste_jax used before ``optax.lbfgs`` (kept for this comparison).

  Fixed steps; a parallel Armijo line search over ``HANDWRITTEN_STEP_GRID`` in one ``vmap``; a
  step without Armijo progress is skipped and pairs with ``s . y <= 0`` are not stored.
  """
  dtype = x0.dtype
  d = x0.shape[0]
  steps = jnp.asarray(HANDWRITTEN_STEP_GRID, dtype)
  value_and_grad = jax.value_and_grad(fun)
  tiny = jnp.asarray(jnp.finfo(dtype).tiny, dtype)

  def direction(g, S, Y, rho):
    # Two-loop recursion; slots with rho = 0 (unused or rejected) are no-ops. Newest pair last.
    def back(q, syr):
      s, y, r = syr
      alpha = r * jnp.dot(s, q)
      return q - alpha * y, alpha

    q, alphas = lax.scan(back, g, (S, Y, rho), reverse=True)
    sy = jnp.sum(S[-1] * Y[-1])
    yy = jnp.sum(Y[-1] * Y[-1])
    scale = jnp.where(
      (rho[-1] > 0) & (yy > 0),
      sy / jnp.maximum(yy, tiny),
      1.0 / jnp.maximum(jnp.linalg.norm(g), tiny),
    )

    def forward(r_vec, syra):
      s, y, r, alpha = syra
      beta = r * jnp.dot(y, r_vec)
      return r_vec + (alpha - beta) * s, None

    r_vec, _ = lax.scan(forward, scale * q, (S, Y, rho, alphas))
    return -r_vec

  def step(carry, _):
    x, f, g, S, Y, rho = carry
    p = direction(g, S, Y, rho)
    slope = jnp.dot(g, p)
    p = jnp.where(slope < 0, p, -g / jnp.maximum(jnp.linalg.norm(g), tiny))
    slope = jnp.dot(g, p)
    trial = jax.vmap(lambda t: fun(x + t * p))(steps)
    ok = jnp.isfinite(trial) & (trial <= f + HANDWRITTEN_ARMIJO * steps * slope)
    best = jnp.argmin(jnp.where(ok, trial, jnp.inf))
    moved = jnp.any(ok)
    t = jnp.where(moved, steps[best], jnp.zeros((), dtype))
    x_new = x + t * p
    f_new, g_new = value_and_grad(x_new)
    s, y = x_new - x, g_new - g
    sy = jnp.dot(s, y)
    accept = moved & (sy > 1e-10 * jnp.maximum(jnp.dot(y, y), tiny))
    S = jnp.where(accept, jnp.concatenate([S[1:], s[None]]), S)
    Y = jnp.where(accept, jnp.concatenate([Y[1:], y[None]]), Y)
    rho = jnp.where(accept, jnp.concatenate([rho[1:], (1.0 / jnp.maximum(sy, tiny))[None]]), rho)
    return (x_new, f_new, g_new, S, Y, rho), None

  f0, g0 = value_and_grad(x0)
  init = (
    x0,
    f0,
    g0,
    jnp.zeros((memory, d), dtype),
    jnp.zeros((memory, d), dtype),
    jnp.zeros((memory,), dtype),
  )
  (x, *_), _ = lax.scan(step, init, None, length=num_steps)
  return x


def optax_while(tol: float, max_steps: int):
  """``optax.lbfgs()`` in the usual ``lax.while_loop``: until the gradient norm is below ``tol``."""

  def solve(fun, x0, *, num_steps):
    del num_steps
    opt = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(fun)

    def body(carry):
      x, state = carry
      value, grad = value_and_grad(x, state=state)
      updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=fun)
      return optax.apply_updates(x, updates), state

    def cond(carry):
      _, state = carry
      count = optax.tree_utils.tree_get(state, "count")
      grad = optax.tree_utils.tree_get(state, "grad")
      err = optax.tree_utils.tree_norm(grad)
      return (count == 0) | ((count < max_steps) & (err >= tol))

    x, _ = lax.while_loop(cond, body, (x0, opt.init(x0)))
    return x

  return solve


def _league_problem(n: int, seed: int = 0):
  """The estimator's data on a ``sparse_league`` of ``n`` agents and ``25 n`` matches."""
  c = sparse_league(jax.random.key(seed), num_agents=n, num_comparisons=25 * n).comparisons
  pairs = me.observed_pairs(c)
  params0 = init_intransitive_params(jax.random.key(seed + 1), n, 2, dtype=c.weight.dtype)
  held = jnp.asarray(me._fold_weights(jax.random.key(seed + 2), c.weight, 5), c.weight.dtype)
  train, _ = me._fold_wins(pairs, c.outcome, held)
  full = me.pair_wins(pairs, c.outcome, c.weight)
  return c, pairs, params0, train, full


def _objective(params, pairs, w_ij, w_ji, l2s, l2k, tol):
  """The penalized objective at ``params`` and the norm of its gradient in ``(s, U, V)``."""
  band = me.record_band(w_ij, w_ji, tol)

  def f(theta):
    return me._penalized_nll(theta, params.mask, pairs, w_ij, w_ji, band, l2s, l2k)

  value, grad = jax.value_and_grad(f)((params.strength, params.u, params.v))
  return value, optax.tree_utils.tree_norm(grad)


def _time_compiled(fn, *args, reps: int, compiles: int):
  """(fastest of ``compiles`` AOT compilations, median of ``reps`` runs, the output) of ``fn``."""
  compile_times = []
  for _ in range(compiles):
    jax.clear_caches()  # a fresh trace, lowering and compilation each time
    t0 = time.perf_counter()
    compiled = jax.jit(fn, compiler_options=GATHER_FRIENDLY).lower(*args).compile()
    compile_times.append(time.perf_counter() - t0)
  compile_s = min(compile_times)
  out = jax.block_until_ready(compiled(*args))
  times = []
  for _ in range(reps):
    t0 = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    times.append(time.perf_counter() - t0)
  return compile_s, float(np.median(times)), out


def lbfgs_section(
  sizes,
  *,
  num_steps: int,
  refit_steps: int,
  num_replicas: int,
  reps: int,
  compiles: int,
  quick: bool,
) -> None:
  solvers = {
    "hand-written (before)": handwritten_lbfgs,
    "optax.lbfgs, fixed steps (`minimize_lbfgs` now)": _lbfgs.minimize_lbfgs,
    "optax.lbfgs, while_loop to grad norm < 1e-5 (max 500)": optax_while(1e-5, 500),
  }
  print("### L-BFGS on the model estimator's objective")
  print()
  print(
    "sparse_league(key 0), 25 matches per agent; rank 1, strength ridge 0.3, intransitive ridge "
    "1, record tolerance 2; float32. Compile: the fastest of "
    f"{compiles} AOT compilations (trace, lower, compile; caches cleared); run: median of {reps}. "
    "Excess: mean over fits of the objective minus the best of the three solvers on that fit."
  )
  print()
  print(
    "| n | shape | solver | compile (s) | run (ms) | mean objective | mean excess | max grad norm |"
  )
  print("|---:|---|---|---:|---:|---:|---:|---:|")
  for n in sizes:
    c, pairs, params0, train, full = _league_problem(n)
    dtype = c.weight.dtype
    mask = jnp.asarray([1.0, 0.0], dtype)
    p0 = dataclasses.replace(params0, mask=mask)
    l2s = jnp.asarray([0.1, 0.3, 1.0, 3.0], dtype)
    l2k, tol = jnp.asarray(1.0, dtype), jnp.asarray(2.0, dtype)
    F, C = train[0].shape[0], l2s.shape[0]

    def one_fit(p0, w_ij, w_ji):
      p = me.fit_intransitive(p0, pairs, w_ij, w_ji, l2s[1], l2k, tol, num_steps=num_steps)
      return _objective(p, pairs, w_ij, w_ji, l2s[1], l2k, tol)

    def cv_one(p0, train, k):
      f, cand = k // C, k % C
      w_ij, w_ji = train[0][f], train[1][f]
      p = me.fit_intransitive(p0, pairs, w_ij, w_ji, l2s[cand], l2k, tol, num_steps=num_steps)
      return _objective(p, pairs, w_ij, w_ji, l2s[cand], l2k, tol)

    # Bootstrap replicas: multinomial resamples of the rows, refitted warm-started at the full
    # fit by ``refit_steps`` steps, in one ``vmap`` (as ``ModelTournament.refit`` is run).
    fitted = me.fit_intransitive(p0, pairs, *full, l2s[1], l2k, tol, num_steps=num_steps)
    rng = np.random.default_rng(0)
    m = c.weight.shape[0]
    reps_w = jnp.asarray(rng.multinomial(m, np.full(m, 1.0 / m), size=num_replicas), dtype)

    def refit_one(fitted, weight):
      w_ij, w_ji = me.pair_wins(pairs, c.outcome, weight)
      p = me.fit_intransitive(fitted, pairs, w_ij, w_ji, l2s[1], l2k, tol, num_steps=refit_steps)
      return _objective(p, pairs, w_ij, w_ji, l2s[1], l2k, tol)

    shapes = {
      f"one fit, {num_steps} steps": (one_fit, (p0, *full)),
      f"CV stage, lax.map over {F * C} fits, {num_steps} steps": (
        lambda p0, train: lax.map(lambda k: cv_one(p0, train, k), jnp.arange(F * C)),
        (p0, train),
      ),
      f"{num_replicas} bootstrap refits, vmap, {refit_steps} steps, warm start": (
        lambda fitted, reps_w: jax.vmap(lambda w: refit_one(fitted, w))(reps_w),
        (fitted, reps_w),
      ),
    }
    if quick:  # one fit only
      shapes = dict(list(shapes.items())[:1])
    for shape, (fn, args) in shapes.items():
      rows = []
      for label, solver in solvers.items():
        with patched(me, minimize_lbfgs=solver):
          compile_s, run_s, (value, gnorm) = _time_compiled(fn, *args, reps=reps, compiles=compiles)
        rows.append((label, compile_s, run_s, np.atleast_1d(value), np.atleast_1d(gnorm)))
      best = np.min([r[3] for r in rows], axis=0)
      for label, compile_s, run_s, value, gnorm in rows:
        print(
          f"| {n} | {shape} | {label} | {compile_s:.2f} | {1e3 * run_s:.1f} | "
          f"{value.mean():.6f} | {(value - best).mean():.1e} | {gnorm.max():.1e} |",
          flush=True,
        )
  print()


# ------------------------------------------------------------------------------------------------
# CSV


def _median_read(read, path, reps: int):
  """``(median seconds of reps calls after a warm-up, the last result)`` of ``read(path)``.

  Host code (file readers), so no ``jax.block_until_ready``; the result is kept out of the timing.
  """
  read(path)  # warm-up: imports, caches
  times = []
  for _ in range(reps):
    t0 = time.perf_counter()
    out = read(path)
    times.append(time.perf_counter() - t0)
  return float(np.median(times)), out


def write_battles(path: pathlib.Path, rows: int, seed: int = 0) -> None:
  """``a,b,winner`` battles between 1,000 agents (no quotes: the fast path's case)."""
  rng = np.random.default_rng(seed)
  names = np.array([f"agent-{i:04d}" for i in range(1000)])
  a = rng.integers(0, 1000, rows)
  b = (a + rng.integers(1, 1000, rows)) % 1000
  winner = np.array(["a", "b", "tie"])[rng.integers(0, 3, rows)]
  body = "\n".join(np.char.add(np.char.add(np.char.add(names[a], ","), names[b]), "," + winner))
  path.write_text("a,b,winner\n" + body + "\n")


# Line numbers (1-based) of the malformed rows of the check file, and its text.
BAD_CSV_LINES = (4, 7)
BAD_CSV = "a,b,winner\nx,y,a\ny,z,b\nx,y,a,extra\nz,x,tie\n\ny,x\nx,z,a\n"


def _fast(path):
  header, column, lines, pre = _tabular._read_csv_unquoted(str(path), None, ",")
  column.prefetch(header)
  return [column(h) for h in header], lines, pre


def _exact(path):
  header, column, lines, pre = _tabular._read_csv_records(str(path), None, ",")
  return [column(h) for h in header], lines, pre


def _pandas(path, **kw):
  import pandas as pd  # pylint: disable=g-import-not-at-top

  frame = pd.read_csv(path, dtype=object, na_filter=False, engine="c", quoting=csv.QUOTE_NONE, **kw)
  return [frame[c].to_numpy(dtype=object) for c in frame.columns]


def _pyarrow(path, handler=None, use_threads=True, ignore_empty_lines=True):
  import pyarrow.csv as pacsv  # pylint: disable=g-import-not-at-top

  table = pacsv.read_csv(
    path,
    read_options=pacsv.ReadOptions(use_threads=use_threads),
    parse_options=pacsv.ParseOptions(
      invalid_row_handler=handler, ignore_empty_lines=ignore_empty_lines
    ),
    convert_options=pacsv.ConvertOptions(column_types={n: "string" for n in ("a", "b", "winner")}),
  )
  return [table.column(i).to_numpy(zero_copy_only=False) for i in range(table.num_columns)]


def _csv_line_check(path) -> dict:
  """What each reader says about the rows of ``BAD_CSV`` with the wrong number of fields."""
  out = {}
  _, lines, pre = _fast(path)
  out["fast path (`_read_csv_unquoted`)"] = "yes: lines " + ", ".join(
    str(int(lines[i])) for i, p in enumerate(pre) if p is not None
  )
  _, lines, pre = _exact(path)
  out["`csv` module (`_read_csv_records`)"] = "yes: lines " + ", ".join(
    str(int(lines[i])) for i, p in enumerate(pre) if p is not None
  )
  try:
    _pandas(path)
    said = "no error"
  except Exception as e:  # pylint: disable=broad-except
    said = f"raises at the first: {str(e).strip()!r}"
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cols = _pandas(path, on_bad_lines="warn")
  warned = " / ".join(str(w.message).strip().replace("\n", " ") for w in caught)
  padded = [list(r) for r in zip(*cols) if r[0] == "y" and r[1] == "x"]
  out["pandas C engine"] = (
    f"too many fields only: on_bad_lines='error' {said}; 'warn': {warned!r}; the 2-field line 7 "
    f"is read as {padded} without a report; callables need engine='python'"
  )
  try:
    import pyarrow  # pylint: disable=g-import-not-at-top,unused-import  # noqa: F401
  except ImportError:
    out["pyarrow.csv"] = "not installed"
    return out
  for threads, empty in ((True, True), (False, True), (False, False)):
    seen = []

    def handler(row, seen=seen):
      seen.append((row.number, row.expected_columns, row.actual_columns))
      return "skip"

    _pyarrow(path, handler, use_threads=threads, ignore_empty_lines=empty)
    out[f"pyarrow.csv, use_threads={threads}, ignore_empty_lines={empty}"] = (
      "invalid_row_handler sees "
      + "; ".join(f"row number {n} ({a} fields, expected {e})" for n, e, a in seen)
    )
  return out


def csv_section(sizes, reps: int, tmp: pathlib.Path) -> None:
  print("### CSV: battles file `a,b,winner`, all three columns read as strings")
  print()
  print("| rows | reader | run (s) | rows read |")
  print("|---:|---|---:|---:|")
  readers = {
    "fast path `_read_csv_unquoted`": lambda p: _fast(p)[0],
    "`csv` module `_read_csv_records`": lambda p: _exact(p)[0],
    "`pandas.read_csv` (C engine)": _pandas,
  }
  with contextlib.suppress(ImportError):
    import pyarrow.csv  # pylint: disable=g-import-not-at-top,unused-import  # noqa: F401

    readers["`pyarrow.csv.read_csv`"] = _pyarrow
    readers["`pyarrow.csv.read_csv`, use_threads=False"] = lambda p: _pyarrow(p, use_threads=False)
  for rows in sizes:
    path = tmp / f"battles_{rows}.csv"
    write_battles(path, rows)
    for label, read in readers.items():
      seconds, cols = _median_read(read, path, reps)
      print(f"| {rows:.0e} | {label} | {seconds:.3f} | {len(cols[0])} |", flush=True)
      del cols
    os.remove(path)
  print()
  path = tmp / "bad.csv"
  path.write_text(BAD_CSV)
  print(
    f"Malformed rows: lines {BAD_CSV_LINES} of an 8-line file (line 4 has 4 fields, line 6 is "
    "blank, line 7 has 2):"
  )
  print()
  print("| reader | reports the malformed rows' line numbers? |")
  print("|---|---|")
  for label, said in _csv_line_check(path).items():
    print(f"| {label} | {said} |")
  print()
  print(
    "pandas and pyarrow return rows, not the line each row starts on (the loader names that line "
    "when it rejects a row later: an unknown winner label, an invalid score)."
  )
  print()


# ------------------------------------------------------------------------------------------------
# PGN


def write_pgn(path: pathlib.Path, games: int, seed: int = 0) -> None:
  rng = np.random.default_rng(seed)
  results = np.array(["1-0", "0-1", "1/2-1/2"])[rng.integers(0, 3, games)]
  white, black = rng.integers(0, 500, games), rng.integers(0, 500, games)
  parts = []
  for k in range(games):
    parts.append(
      f'[Event "Rated blitz game"]\n[Site "https://example.org/{k}"]\n[Date "2024.01.01"]\n'
      f'[Round "-"]\n[White "player{white[k]}"]\n[Black "player{black[k]}"]\n'
      f'[Result "{results[k]}"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 {results[k]}\n\n'
    )
  path.write_text("".join(parts))


def _ours_pgn(path):
  header, column, lines, pre = _tabular._read_pgn(str(path), None)
  return [column(name) for name in ("White", "Black", "Result")], lines, pre


def _chess_pgn(path):
  import chess.pgn  # pylint: disable=g-import-not-at-top

  rows = []
  with open(path, encoding="utf-8") as f:
    while (headers := chess.pgn.read_headers(f)) is not None:
      rows.append((headers.get("White"), headers.get("Black"), headers.get("Result")))
  return rows


# Malformed tag sections, each one game in a small file (python-chess and ours read them).
BAD_PGN = {
  "unterminated value": '[White "a]\n[Black "b"]\n[Result "1-0"]\n\n1. e4 1-0\n',
  "value without quotes": '[White a]\n[Black "b"]\n[Result "1-0"]\n\n1. e4 1-0\n',
  "text before the first tag": 'junk\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n\n1. e4 1-0\n',
  "escaped quote": '[White "a \\"the\\" b"]\n[Black "c"]\n[Result "0-1"]\n\n1. e4 0-1\n',
  "two games without movetext": (
    '[White "a"]\n[Black "b"]\n[Result "1-0"]\n[White "c"]\n[Black "d"]\n[Result "0-1"]\n'
  ),
}


def _pgn_summary_ours(path) -> str:
  try:
    cols, lines, pre = _ours_pgn(path)
  except ValueError as e:
    return f"ValueError: {e}"
  games = []
  for k in range(len(lines)):
    if pre[k] is not None:
      games.append(f"line {lines[k]}: rejected ({pre[k][1]})")
    else:
      games.append(f"line {lines[k]}: {cols[0][k]!r} - {cols[1][k]!r} {cols[2][k]!r}")
  return "; ".join(games)


def _pgn_summary_chess(path) -> str:
  try:
    rows = _chess_pgn(path)
  except Exception as e:  # pylint: disable=broad-except
    return f"{type(e).__name__}: {e}"
  return "; ".join(f"{w!r} - {b!r} {r!r}" for w, b, r in rows) + " (no line numbers)"


def pgn_section(sizes, reps: int, tmp: pathlib.Path) -> None:
  try:
    import chess  # pylint: disable=g-import-not-at-top
  except ImportError:
    chess = None
  print("### PGN: every game's White, Black and Result tags")
  print()
  print("| games | reader | run (s) | games read |")
  print("|---:|---|---:|---:|")
  readers = {"`_read_pgn` (ste_jax)": lambda p: _ours_pgn(p)[0][0]}
  if chess is not None:
    readers[f"`chess.pgn.read_headers` loop (python-chess {chess.__version__})"] = _chess_pgn
  for games in sizes:
    path = tmp / f"games_{games}.pgn"
    write_pgn(path, games)
    for label, read in readers.items():
      seconds, got = _median_read(read, path, reps)
      print(f"| {games:.0e} | {label} | {seconds:.3f} | {len(got)} |", flush=True)
    os.remove(path)
  print()
  print("Malformed tag sections (one small file each):")
  print()
  print("| file | `_read_pgn` | python-chess |")
  print("|---|---|---|")
  for label, text in BAD_PGN.items():
    path = tmp / "bad.pgn"
    path.write_text(text)
    theirs = "not installed" if chess is None else _pgn_summary_chess(path)
    print(f"| {label} | {_pgn_summary_ours(path)} | {theirs} |")
  print()


def main() -> None:
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--quick", action="store_true", help="small sizes (under 2 minutes)")
  parser.add_argument(
    "--only", choices=("lbfgs", "csv", "pgn"), default=None, help="run one section only"
  )
  args = parser.parse_args()
  quick = args.quick
  print(f"machine: {machine_description()}")
  print(f"optax {optax.__version__}")
  print()
  with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    if args.only in (None, "lbfgs"):
      lbfgs_section(
        (50,) if quick else (50, 200),
        num_steps=50,
        refit_steps=12,
        num_replicas=8,
        reps=3 if quick else 5,
        compiles=1 if quick else 2,
        quick=quick,
      )
    if args.only in (None, "csv"):
      csv_section((100_000,) if quick else (100_000, 1_000_000), reps=1 if quick else 3, tmp=tmp)
    if args.only in (None, "pgn"):
      pgn_section((10_000,) if quick else (10_000, 100_000), reps=1 if quick else 3, tmp=tmp)


if __name__ == "__main__":
  main()
