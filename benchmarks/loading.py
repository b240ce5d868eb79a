"""Loading large comparison files: CSV, Parquet and PGN at 1e4 ... 2e6 rows (issue 12).

Input: synthetic Chatbot Arena battles written to a temporary folder, one CSV and one Parquet file
per size, with the columns of FastChat's ``clean_battle`` tables (``question_id, model_a,
model_b, winner, category, language, tstamp``), and the same battles as a PGN file of games (tags
``Event, White, Black, Result, Category``, then the result as movetext; ``model_a`` wins ``1-0``,
``model_b`` wins ``0-1``, either tie ``1/2-1/2``; eight lines per game):

* ``NUM_MODELS`` models with heavy-tailed popularity (Zipf weights ``1 / rank**1.1``: the most
  popular model plays in about 12 % of battles, the least popular in well under 0.1 %);
* winners from Bradley-Terry strengths, with about 20 % ``tie`` and 10 % ``tie (bothbad)``;
* 8 categories (the ``category`` column, loaded as the context);
* a few planted bad rows (1 in 5,000: an empty winner, an unknown label, a self-comparison),
  which the load report must list one by one with their line numbers; the benchmark checks that
  it does (count, reasons and line numbers; in the PGN file a game's line is that of its first
  tag).

Each measurement runs in a fresh child process (``benchmarks/_timing.py``: ``run_child``), so its
peak RSS (``ru_maxrss``) belongs to that load alone. Both kinds of child import the same modules
(pandas, pyarrow, jax, ``ste_jax.data``) before the clock starts, so the peak RSS columns compare
like with like (the imports alone take about 300 MiB, mostly JAX):

* ``ste_jax``: ``ste_jax.data.load_comparisons(path, context="category")`` (``"Category"`` for
  PGN; reading, checking
  every row, the load report, building ``Comparisons``), then ``pair_counts(c, by_context=True)``
  jitted (first call, compile included, and a second, warm call);
* ``pandas``: the baseline, measured in the same run on the same file: plain
  ``pandas.read_csv(path)`` / ``pandas.read_parquet(path)`` (default engines). pandas does not
  read PGN; the PGN baseline is the least any reader does: the file read as text and one regular
  expression ``findall`` of its tag pairs (no games assembled, nothing checked).

``ste_jax / baseline`` is the ratio of the two load times: ste_jax's overhead over a plain read.

Usage:
  python benchmarks/loading.py                 # 1e4, 1e5, 1e6, 2e6 rows (a few minutes)
  python benchmarks/loading.py --quick         # 1e4 and 1e5 rows (< 1 minute; the smoke test)
  python benchmarks/loading.py --sizes 2000000 --formats csv
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

NUM_MODELS = 150
CATEGORIES = (
  "coding",
  "math",
  "creative_writing",
  "instruction_following",
  "hard_prompts",
  "multi_turn",
  "longer_query",
  "other",
)
LANGUAGES = ("English", "Chinese", "Russian", "German", "Spanish", "Japanese", "French", "other")
BAD_EVERY = 5000  # one planted bad row per BAD_EVERY rows
SIZES = (10_000, 100_000, 1_000_000, 2_000_000)
QUICK_SIZES = (10_000, 100_000)
FORMATS = ("csv", "parquet", "pgn")
PGN_LINES_PER_GAME = (
  8  # five tags, a blank line, the movetext, a blank line: game i starts at line 8 i + 1
)
# The baseline's tag pattern: simpler than the reader's (no surrounding blanks, no line-end checks),
# the least work that still finds every tag pair of the files written here.
PGN_TAG = r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]'


def model_names(n: int) -> np.ndarray:
  families = (
    "gpt",
    "claude",
    "llama",
    "mistral",
    "gemini",
    "qwen",
    "vicuna",
    "yi",
    "phi",
    "command",
  )
  return np.array(
    [f"{families[i % len(families)]}-{i // len(families) + 1}-{i:03d}" for i in range(n)],
    dtype=object,
  )


def battles(num_rows: int, seed: int = 0):
  """``(pandas.DataFrame, planted)``: synthetic arena battles and the planted bad rows.

  ``planted`` maps each bad row's 0-based position to the rejection reason the loader must give.
  """
  import pandas as pd

  rng = np.random.default_rng(seed)
  popularity = 1.0 / np.arange(1, NUM_MODELS + 1) ** 1.1
  popularity /= popularity.sum()
  strength = np.sort(rng.normal(scale=1.0, size=NUM_MODELS))[::-1]  # popular models are stronger
  a = rng.choice(NUM_MODELS, size=num_rows, p=popularity)
  b = rng.choice(NUM_MODELS, size=num_rows, p=popularity)
  while (same := a == b).any():  # a battle is between two different models
    b[same] = rng.choice(NUM_MODELS, size=int(same.sum()), p=popularity)
  p_a = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
  u = rng.random(num_rows)
  winner = np.where(
    u < 0.1,
    "tie (bothbad)",
    np.where(u < 0.3, "tie", np.where(rng.random(num_rows) < p_a, "model_a", "model_b")),
  ).astype(object)
  names = model_names(NUM_MODELS)
  model_a, model_b = names[a], names[b]

  planted = {}
  bad = np.arange(BAD_EVERY // 2, num_rows, BAD_EVERY)
  for k, i in enumerate(bad):
    kind = k % 3
    if kind == 0:
      winner[i] = ""
      planted[int(i)] = "missing field"
    elif kind == 1:
      winner[i] = "draw"
      planted[int(i)] = "unknown winner label"
    else:
      model_b[i] = model_a[i]
      planted[int(i)] = "self-comparison"

  cat_p = np.array([0.18, 0.12, 0.1, 0.2, 0.15, 0.08, 0.1, 0.07])
  df = pd.DataFrame(
    {
      "question_id": [f"{x:016x}" for x in rng.integers(0, 2**63, num_rows)],
      "model_a": model_a,
      "model_b": model_b,
      "winner": winner,
      "category": np.array(CATEGORIES, dtype=object)[
        rng.choice(len(CATEGORIES), num_rows, p=cat_p)
      ],
      "language": np.array(LANGUAGES, dtype=object)[rng.choice(len(LANGUAGES), num_rows)],
      "tstamp": 1.7e9 + np.sort(rng.random(num_rows)) * 3e7,
    }
  )
  return df, planted


def pgn_text(df) -> str:
  """The battles as PGN games (``PGN_LINES_PER_GAME`` lines each). A planted unknown winner label
  becomes the result ``*`` (an unfinished game: "unknown winner label"), an empty one stays empty
  ("missing field")."""
  result = df["winner"].map(
    {"model_a": "1-0", "model_b": "0-1", "tie": "1/2-1/2", "tie (bothbad)": "1/2-1/2", "": ""}
  )
  result = result.fillna("*").to_numpy(dtype=object)
  games = (
    '[Event "arena"]\n[White "'
    + df["model_a"].to_numpy(dtype=object)
    + '"]\n[Black "'
    + df["model_b"].to_numpy(dtype=object)
    + '"]\n[Result "'
    + result
    + '"]\n[Category "'
    + df["category"].to_numpy(dtype=object)
    + '"]\n\n'
    + result
    + "\n\n"
  )
  return "".join(games)


def write_files(folder: pathlib.Path, num_rows: int) -> dict:
  """Writes ``battles_<rows>.csv`` / ``.parquet`` / ``.pgn`` and the planted rows; returns their
  paths."""
  df, planted = battles(num_rows)
  paths = {fmt: folder / f"battles_{num_rows}.{fmt}" for fmt in FORMATS}
  df.to_csv(paths["csv"], index=False)
  df.to_parquet(paths["parquet"], index=False)
  paths["pgn"].write_text(pgn_text(df))
  planted_path = folder / f"battles_{num_rows}.planted.json"
  planted_path.write_text(json.dumps(planted))
  return {**paths, "planted": planted_path}


def child(kind: str, path: str, fmt: str, planted_path: str) -> dict:
  """One measurement (run in its own process); returns a JSON-able dict."""
  import resource

  import jax
  import pandas as pd
  import pyarrow  # noqa: F401  (imported in both kinds of child, for comparable RSS)

  import ste_jax.data as sd

  rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
  out = {"rss_start_mib": rss_start}
  t0 = time.perf_counter()
  if kind == "pandas" and fmt == "pgn":
    import re

    tags = re.findall(PGN_TAG, pathlib.Path(path).read_text(), flags=re.MULTILINE)
    out["load_s"] = time.perf_counter() - t0
    out["rows"] = len(tags) // 5
  elif kind == "pandas":
    df = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
    out["load_s"] = time.perf_counter() - t0
    out["rows"] = len(df)
  else:
    with warnings.catch_warnings():  # the planted bad rows are the point: skipped and reported
      warnings.simplefilter("ignore", sd.BadRowsWarning)
      c, report = sd.load_comparisons(
        path, context="Category" if fmt == "pgn" else "category", skip_bad_rows=True
      )
    jax.block_until_ready(c)
    out["load_s"] = time.perf_counter() - t0
    counts = jax.jit(sd.pair_counts, static_argnames=("tie_policy", "by_context"))
    t0 = time.perf_counter()
    jax.block_until_ready(counts(c, by_context=True))
    out["counts_first_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    pc = jax.block_until_ready(counts(c, by_context=True))
    out["counts_warm_s"] = time.perf_counter() - t0
    planted = {int(k) + 2: v for k, v in json.loads(pathlib.Path(planted_path).read_text()).items()}
    # Line numbers: CSV line = 0-based row + 2 (header is line 1); Parquet: 1-based record number;
    # PGN: the line of the game's first tag.
    got = {r.line: r.reason for r in report.rejected}
    if fmt == "parquet":
      planted = {k - 1: v for k, v in planted.items()}
    if fmt == "pgn":
      planted = {PGN_LINES_PER_GAME * (k - 2) + 1: v for k, v in planted.items()}
    out["rows"] = report.rows_read
    out["rejected_ok"] = got == planted
    out["rejected"] = len(report.rejected)
    out["agents"] = c.num_agents
    out["contexts"] = c.num_contexts
    out["total_ok"] = bool(
      abs(float(pc.totals.sum()) / 2 - report.num_comparisons) < 1e-3 * report.num_comparisons
    )
  out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
  return out


def parse_args(argv=None):
  parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} only (< 1 minute)")
  parser.add_argument(
    "--sizes", type=int, nargs="+", default=None, help=f"row counts (default {SIZES})"
  )
  parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
  parser.add_argument(
    "--child",
    nargs=4,
    metavar=("KIND", "PATH", "FORMAT", "PLANTED"),
    default=None,
    help=argparse.SUPPRESS,
  )
  parser.add_argument(
    "--write", nargs=2, metavar=("ROWS", "FOLDER"), default=None, help=argparse.SUPPRESS
  )
  return parser.parse_args(argv)


def main(argv=None):
  args = parse_args(argv)
  if args.child is not None:
    kind, path, fmt, planted = args.child
    print(json.dumps(child(kind, path, fmt, planted)))
    return 0
  if args.write is not None:  # in a child too: the parent stays small, and so does the peak RSS
    paths = write_files(pathlib.Path(args.write[1]), int(args.write[0]))  # that children inherit
    print(json.dumps({k: str(v) for k, v in paths.items()}))
    return 0

  from benchmarks._timing import machine_description, run_child

  sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
  script = str(pathlib.Path(__file__).resolve())
  print(f"machine: {machine_description()}")
  print(
    f"input: synthetic arena battles, {NUM_MODELS} models (Zipf 1.1 popularity), ~20% tie, "
    f"~10% tie (bothbad), {len(CATEGORIES)} categories, 7 columns, 1 planted bad row per "
    f"{BAD_EVERY}"
  )
  print()
  print(
    "| rows | format | file (MiB) | ste_jax load (s) | rows/s | pair_counts first / warm (s) "
    "| peak RSS (MiB) | baseline read (s) | baseline peak RSS (MiB) | ste_jax / baseline | report |"
  )
  print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
  failed = False
  start_rss = []
  with tempfile.TemporaryDirectory(prefix="ste_jax_loading_") as tmp:
    for n in sizes:
      t0 = time.perf_counter()
      written = subprocess.run(
        [sys.executable, script, "--write", str(n), tmp], capture_output=True, text=True, check=True
      )
      paths = {
        k: pathlib.Path(v) for k, v in json.loads(written.stdout.strip().splitlines()[-1]).items()
      }
      print(f"  (wrote {n} rows in {time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
      for fmt in args.formats:
        path = paths[fmt]
        mib = path.stat().st_size / 2**20
        ours = run_child(script, ["ste_jax", path, fmt, paths["planted"]])
        base = run_child(script, ["pandas", path, fmt, paths["planted"]])
        start_rss += [r["rss_start_mib"] for r in (ours, base) if "rss_start_mib" in r]
        if "error" in ours or "error" in base:
          failed = True
          print(
            f"| {n} | {fmt} | {mib:.1f} | {ours.get('error', '')} | | | | {base.get('error', '')} "
            "| | | failed |",
            flush=True,
          )
          continue
        checks = (
          ours["rows"] == n and base["rows"] == n and ours["rejected_ok"] and ours["total_ok"]
        )
        failed |= not checks
        verdict = f"{ours['rejected']} rejected, lines ok" if checks else "MISMATCH"
        print(
          f"| {n} | {fmt} | {mib:.1f} | {ours['load_s']:.2f} | {n / ours['load_s']:,.0f} "
          f"| {ours['counts_first_s']:.2f} / {ours['counts_warm_s']:.3f} | "
          f"{ours['peak_rss_mib']:.0f} "
          f"| {base['load_s']:.2f} | {base['peak_rss_mib']:.0f} | "
          f"{ours['load_s'] / base['load_s']:.1f}x "
          f"| {verdict} |",
          flush=True,
        )
  if start_rss:
    print()
    print(
      "peak RSS of a child after its imports, before loading: "
      f"{min(start_rss):.0f}-{max(start_rss):.0f} MiB"
    )
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
