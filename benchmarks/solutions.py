"""Tournament-solution family: ste_jax (JAX, CPU) next to pref_voting and OpenSpiel (where
installed).

For each n in --sizes, one random tournament (float32, the library default; continuous
probabilities, no ties) is solved by each method. JAX times are the median of `--reps` runs (one
run above n = 300) of the AOT-compiled function (compile time reported separately); pref_voting is
timed once per call (it is skipped above --pv-max-n, where a single call takes too long). The ratio
is pref_voting / ste_jax. All run in this process, on the same machine, one after the other.

OpenSpiel (test extras; skipped when ``open_spiel`` or cvxpy does not import, and above --os-max-n)
is timed once per call, like pref_voting, for the three solutions it implements, on the same
tournament in float64 (its code is NumPy float64) with ``P_ba = 1 - P_ab`` restored exactly, so that
its alpha-Rank recognizes the constant-sum game and uses its closed-form fixation probabilities:

* maximal_lottery: ``lp_solver.solve_zero_sum_matrix_game`` on the margins ``P - P^T`` (cvxpy +
  ECOS; it solves the LPs of both players);
* nash_average: ``nash_averaging.nash_averaging`` (maximum-entropy Nash, cvxpy + Clarabel);
* alpha_rank: ``alpharank.compute([P], m=50, alpha=10, use_local_selection_model=False)``, the model
  ``ste_jax.ops.alpha_rank`` implements (OpenSpiel's default, the local selection model, is another
  one).

Each call includes building the pyspiel matrix game; one warm-up call on a 3 x 3 game (cvxpy's first
solve) is not timed. The last column is the largest difference between the two answers, ste_jax
recomputed in float64 on OpenSpiel's input (untimed; float32 maximal lotteries lose accuracy from
about n = 100, see the second table); OpenSpiel's solvers stop at about 1e-7 .. 1e-8 (its Nash
averaging, with Clarabel's default tolerances, was 8e-6 off at n = 100 where its LP agreed to
6e-10).

A second table checks the maximal-lottery supports (the bipartisan and essential sets) of the same
tournaments against SciPy's HiGHS LP solver (one feasibility LP per margin matrix; for these
tournaments the maximal lottery is unique, so its support is the set), computed by ste_jax in
float32 and in float64 (``jax.enable_x64``), with the solver's own ``verified`` flag.

Usage: .venv/bin/python benchmarks/solutions.py [--sizes 30 100 1000] [--reps 3]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import compile_and_time  # noqa: E402
import ste_jax  # noqa: E402


def random_tournament(rng, n):
  U = rng.uniform(0.05, 0.95, size=(n, n))
  P = np.triu(U, 1)
  P = P + np.tril(1.0 - U.T, -1)
  np.fill_diagonal(P, 0.5)
  return P.astype(np.float32)


def _margin_graph(P):
  from pref_voting.weighted_majority_graphs import MarginGraph

  n = P.shape[0]
  edges = [
    (a, b, float(P[a, b] - 0.5)) for a in range(n) for b in range(n) if a != b and P[a, b] > 0.5
  ]
  return MarginGraph(list(range(n)), edges)


def pref_voting_methods():
  try:
    from pref_voting import c1_methods, margin_based_methods, probabilistic_methods
  except ImportError:
    return {}
  return {
    "schwartz_set": c1_methods.gocha,
    # pref_voting's own `bipartisan` averages nashpy's vertex enumeration (exponential: it did not
    # finish at n = 30); its LP variant of the C1 maximal lottery is timed instead.
    "bipartisan_set": lambda mg: probabilistic_methods.c1_maximal_lottery(mg, algorithm="lp"),
    "essential_set": margin_based_methods.essential,
    "maximal_lottery": lambda mg: probabilistic_methods.maximal_lottery(mg),
    "banks_set": c1_methods.banks,
  }


def openspiel_methods():
  """``{name: fn(P64)}`` for the solutions OpenSpiel implements, or ``{}`` if it does not import."""
  try:
    from open_spiel.python.algorithms import lp_solver
    from open_spiel.python.algorithms.nash_averaging import nash_averaging
    from open_spiel.python.egt import alpharank
    import pyspiel
  except ImportError:
    return {}

  def lottery(P):
    M = P - P.T
    return np.asarray(
      lp_solver.solve_zero_sum_matrix_game(pyspiel.create_matrix_game(M, -M))[0], np.float64
    )

  def nash(P):
    M = P - P.T
    return np.asarray(nash_averaging(pyspiel.create_matrix_game(M, -M))[0], np.float64).ravel()

  def alpha_rank(P):
    with np.errstate(over="ignore"):  # e^(-m u) overflows to inf for a hopeless mutant: rho -> 0
      return alpharank.compute([P], m=50, alpha=10.0, use_local_selection_model=False)[2]

  return {"maximal_lottery": lottery, "nash_average": nash, "alpha_rank (alpha=10)": alpha_rank}


def complementary_float64(P):
  """``P`` in float64 with ``P_ba = 1 - P_ab`` (upper triangle kept) and a diagonal of 1/2."""
  P = np.triu(np.asarray(P, np.float64), 1)
  P = P + np.tril(1.0 - P.T, -1)
  np.fill_diagonal(P, 0.5)
  return P


def _answer(name, out):
  """The lottery / distribution part of a ste_jax method's output, as float64 NumPy."""
  if name == "nash_average":
    out = out.distribution
  return np.asarray(out, np.float64)


def soft_ml_fwd_bwd(M):
  w = jnp.arange(M.shape[-1], dtype=M.dtype)
  return jax.value_and_grad(
    lambda M: jnp.dot(w, ste_jax.ops.soft_maximal_lottery(M, temperature=0.1))
  )(M)


def jax_methods():
  return {
    "top_cycle": ste_jax.top_cycle,
    "uncovered_set": ste_jax.uncovered_set,
    "schwartz_set": ste_jax.exact.schwartz_set,
    "bipartisan_set": ste_jax.exact.bipartisan_set,
    "essential_set": ste_jax.exact.essential_set,
    "minimal_covering_set": ste_jax.exact.minimal_covering_set,
    "maximal_lottery": lambda P: ste_jax.exact.maximal_lottery(ste_jax.exact.margin_matrix(P)),
    "banks_set": ste_jax.exact.banks_set,
    "soft_ml fwd+bwd (tau=0.1)": lambda P: soft_ml_fwd_bwd(ste_jax.exact.margin_matrix(P)),
    "nash_average": lambda P: ste_jax.ops.nash_average(ste_jax.exact.margin_matrix(P)),
    "alpha_rank (alpha=10)": lambda P: ste_jax.ops.alpha_rank(P, alpha=10.0),
  }


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[30, 100, 1000])
  parser.add_argument("--reps", type=int, default=3)
  parser.add_argument("--pv-max-n", type=int, default=100, help="skip pref_voting above this n")
  parser.add_argument(
    "--os-max-n",
    type=int,
    default=100,
    help="skip OpenSpiel above this n (its alpha-Rank builds the n^2 fixation probabilities "
    "in a Python loop; its cvxpy programs slow down quickly)",
  )
  parser.add_argument(
    "--mcs-max-n",
    type=int,
    default=1000,
    help="skip the minimal covering set above this n (its iteration solves one maximal-lottery "
    "LP per round, on a padded subset of the round's candidates)",
  )
  parser.add_argument(
    "--supports-only", action="store_true", help="print only the support-accuracy table"
  )
  args = parser.parse_args()
  if args.supports_only:
    return support_accuracy(args.sizes)
  spiel_methods = openspiel_methods()
  if spiel_methods:
    from importlib.metadata import version

    spiel = f"open_spiel {version('open_spiel')} (compared up to n = {args.os_max_n})"
    for fn in spiel_methods.values():  # warm-up: cvxpy's first solve, lazy imports (not timed)
      fn(complementary_float64(random_tournament(np.random.default_rng(0), 3)))
  else:
    spiel = "not installed (no OpenSpiel column)"
  print(
    f"jax {jax.__version__} on {jax.default_backend()}, {os.cpu_count()} CPU cores; OpenSpiel: "
    f"{spiel}"
  )
  pv = pref_voting_methods()
  rows = []
  for n in args.sizes:
    P = random_tournament(np.random.default_rng(n), n)
    Pj = jnp.asarray(P)
    P64 = complementary_float64(P)
    mg = _margin_graph(P) if pv else None
    for name, fn in jax_methods().items():
      if name == "banks_set" and n > ste_jax.exact.BANKS_MAX_N:
        rows.append((n, name, "refused", "", "", "", "", "", ""))
        continue
      if name == "minimal_covering_set" and n > args.mcs_max_n:
        rows.append((n, name, f"not run (n > {args.mcs_max_n})", "", "", "", "", "", ""))
        continue
      # One timed run above n = 300: the interior-point solves take seconds there.
      compile_s, run_s = compile_and_time(fn, Pj, reps=args.reps if n <= 300 else 1)
      pv_s, ratio = "", ""
      if name in pv and n <= args.pv_max_n:
        t0 = time.perf_counter()
        pv[name](mg)
        pv_s = time.perf_counter() - t0
        ratio = f"{pv_s / run_s:.1f}x"
        pv_s = f"{pv_s:.4f}"
      elif name in pv:
        pv_s = f"skipped (n > {args.pv_max_n})"
      os_s, os_ratio, os_diff = "", "", ""
      if name in spiel_methods and n <= args.os_max_n:
        t0 = time.perf_counter()
        theirs = spiel_methods[name](P64)
        os_s = time.perf_counter() - t0
        os_ratio = f"{os_s / run_s:.1f}x"
        os_s = f"{os_s:.4f}"
        with jax.enable_x64(
          True
        ):  # the same float64 input: the column checks the definitions agree
          ours = _answer(name, fn(jnp.asarray(P64)))
        os_diff = f"{np.max(np.abs(ours - theirs)):.1e}"
      elif name in spiel_methods:
        os_s = f"skipped (n > {args.os_max_n})"
      rows.append(
        (n, name, f"{run_s:.4f}", f"{compile_s:.1f}", pv_s, ratio, os_s, os_ratio, os_diff)
      )
      print(
        f"  n={n:5d} {name:28s} {run_s:9.4f} s (compile {compile_s:5.1f} s) pref_voting {pv_s} "
        f"{ratio}"
        f"{f' OpenSpiel {os_s} {os_ratio} max|diff| {os_diff}' if os_s else ''}",
        flush=True,
      )
  print()
  print(
    "| n | solution | ste_jax run (s) | compile (s) | pref_voting (s) | pref_voting / ste_jax | "
    "OpenSpiel (s) "
    "| OpenSpiel / ste_jax | max abs diff to OpenSpiel (float64) |"
  )
  print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
  for n, name, run_s, compile_s, pv_s, ratio, os_s, os_ratio, os_diff in rows:
    print(
      f"| {n} | {name} | {run_s} | {compile_s} | {pv_s} | {ratio} | {os_s} | {os_ratio} | "
      f"{os_diff} |"
    )
  print()
  support_accuracy(args.sizes)


def support_accuracy(sizes):
  """The second table: ste_jax's maximal-lottery supports in float32 and float64 against HiGHS."""
  print(
    "| n | margins | HiGHS support size | float32: agents differing from HiGHS (verified) "
    "| float64: agents differing from HiGHS (verified) | float64 run (s) |"
  )
  print("|---:|---|---:|---|---|---:|")
  for n in sizes:
    P = random_tournament(np.random.default_rng(n), n).astype(np.float64)
    for majority in (True, False):
      lp = _highs_support(np.sign(P - P.T) if majority else P - P.T)
      cells = []
      for x64 in (False, True):
        with jax.enable_x64(x64):
          M = ste_jax.exact.margin_matrix(
            jnp.asarray(P, jnp.float64 if x64 else jnp.float32), majority=majority
          )
          _, support, verified = jax.block_until_ready(
            ste_jax.exact.maximal_lottery_with_support(M)
          )
          t0 = time.perf_counter()
          jax.block_until_ready(ste_jax.exact.maximal_lottery_with_support(M))
          run_s = time.perf_counter() - t0
          cells.append(
            f"{int(np.sum(np.asarray(support) != lp))} ({'yes' if bool(verified) else 'no'})"
          )
      kind = (
        "majority sign(P - P^T) (bipartisan)" if majority else "probability P - P^T (essential)"
      )
      print(
        f"| {n} | {kind} | {int(lp.sum())} | {cells[0]} | {cells[1]} | {run_s:.3f} |", flush=True
      )


def _highs_support(M, tol=1e-9):
  """Support of a maximal lottery of ``M`` by SciPy's HiGHS LP (unique for these tournaments)."""
  from scipy.optimize import linprog

  n = M.shape[0]
  res = linprog(
    np.zeros(n),
    A_ub=-M.T,
    b_ub=np.zeros(n),
    A_eq=np.ones((1, n)),
    b_eq=[1.0],
    bounds=[(0, None)] * n,
    method="highs",
  )
  return res.x > tol


if __name__ == "__main__":
  main()
