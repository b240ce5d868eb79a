"""Checks that a refactor keeps behaviour: the `ste-jax score --output json` numbers of two trees.

``snapshot`` runs the CLI of a source tree on the bundled data, the shared data (when present) and a
generated sparse file, and writes one JSON file per run; ``compare`` flattens two snapshots to
``path -> value`` leaves (prose such as conventions and warnings left out) and prints every leaf
that differs, is missing or is new. Exit status 1 when a shared leaf differs.

  python benchmarks/same_numbers.py snapshot /tmp/before --tree /tmp/ste-before
  python benchmarks/same_numbers.py snapshot /tmp/after
  python benchmarks/same_numbers.py compare /tmp/before /tmp/after
"""

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
BUNDLED = "ste_jax/_bundled/vicuna80_qlora_human/comparisons.csv"

# Leaves whose text is explanation rather than a result.
PROSE = {
  "conventions",
  "lines",
  "warnings",
  "note",
  "notes",
  "bt_note",
  "estimator_reason",
  "source",
  "method",
  "evidence",
  "describe",
  "description",
  "label",
  "explanations",
}


def sparse_file(path: pathlib.Path, *, n: int = 120, m: int = 1500, seed: int = 0) -> None:
  """A sparse arena-style file: Bradley-Terry strengths plus a three-agent cycle, 10 % ties."""
  rng = np.random.default_rng(seed)
  strength = rng.normal(size=n)
  a = rng.integers(0, n, size=m)
  b = (a + rng.integers(1, n, size=m)) % n
  logit = strength[a] - strength[b]
  cyc = {(0, 1): 2.0, (1, 2): 2.0, (2, 0): 2.0}
  logit += np.array(
    [cyc.get((int(i), int(j)), -cyc.get((int(j), int(i)), 0.0)) for i, j in zip(a, b)]
  )
  win = rng.random(m) < 1 / (1 + np.exp(-logit))
  tie = rng.random(m) < 0.1
  winner = np.where(tie, "tie", np.where(win, "model_a", "model_b"))
  lines = ["model_a,model_b,winner"] + [f"m{i:03d},m{j:03d},{w}" for i, j, w in zip(a, b, winner)]
  path.write_text("\n".join(lines) + "\n")


def runs(out: pathlib.Path) -> dict[str, list[str]]:
  sparse = out / "sparse.csv"
  sparse_file(sparse)
  cases = {
    "vicuna_default": [BUNDLED],
    "vicuna_winrate_solutions": [
      BUNDLED,
      "--estimator",
      "winrate",
      "--bootstrap",
      "100",
      "--solutions",
      "bipartisan,mcs,ml,copeland",
    ],
    "sparse_default": [str(sparse), "--bootstrap", "50"],
    "sparse_winrate": [str(sparse), "--estimator", "winrate", "--bootstrap", "50"],
    "sparse_posterior": [str(sparse), "--estimator", "posterior", "--bootstrap", "50"],
  }
  llmfao = SHARED / "llmfao_crowd" / "comparisons.csv"
  if llmfao.exists():
    cases["llmfao_default"] = [str(llmfao), "--bootstrap", "100"]
    cases["llmfao_by_context"] = [str(llmfao), "--by-context", "--bootstrap", "30"]
  return cases


def snapshot(out: pathlib.Path, tree: pathlib.Path, only: list[str] | None = None) -> None:
  out.mkdir(parents=True, exist_ok=True)
  env = dict(os.environ, PYTHONPATH=str(tree))
  for name, args in runs(out).items():
    if only and name not in only:
      continue
    cmd = [sys.executable, "-m", "ste_jax", "score", *args, "--output", "json", "--no-progress"]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
      print(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
      continue
    (out / f"{name}.json").write_text(done.stdout)
    print(f"{name}: ok")


def leaves(x, path=""):
  if isinstance(x, dict):
    for k, v in x.items():
      if k not in PROSE:
        yield from leaves(v, f"{path}.{k}")
  elif isinstance(x, list):
    for i, v in enumerate(x):
      yield from leaves(v, f"{path}[{i}]")
  else:
    yield path, x


def _same(u, v, rtol) -> bool:
  if isinstance(u, float) or isinstance(v, float):
    if u is None or v is None:
      return u is v
    if math.isnan(u) and math.isnan(v):
      return True
    return abs(u - v) <= rtol * max(1.0, abs(u), abs(v))
  return u == v


def compare(a: pathlib.Path, b: pathlib.Path, rtol: float) -> int:
  bad = 0
  for fa in sorted(a.glob("*.json")):
    fb = b / fa.name
    if not fb.exists():
      print(f"{fa.stem}: missing in {b}")
      bad += 1
      continue
    la = dict(leaves(json.loads(fa.read_text())))
    lb = dict(leaves(json.loads(fb.read_text())))
    differ = [k for k in la if k in lb and not _same(la[k], lb[k], rtol)]
    gone = [k for k in la if k not in lb]
    new = [k for k in lb if k not in la]
    print(f"{fa.stem}: {len(la)} leaves, {len(differ)} differ, {len(gone)} gone, {len(new)} new")
    for k in differ[:20]:
      print(f"  differ {k}: {la[k]!r} -> {lb[k]!r}")
    for k in gone[:20]:
      print(f"  gone   {k}")
    for k in new[:20]:
      print(f"  new    {k}")
    bad += len(differ)
  return 1 if bad else 0


def main() -> int:
  p = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
  )
  sub = p.add_subparsers(dest="cmd", required=True)
  s = sub.add_parser("snapshot")
  s.add_argument("out", type=pathlib.Path)
  s.add_argument("--tree", type=pathlib.Path, default=ROOT)
  s.add_argument("--only", nargs="*", help="run only these cases")
  c = sub.add_parser("compare")
  c.add_argument("a", type=pathlib.Path)
  c.add_argument("b", type=pathlib.Path)
  c.add_argument("--rtol", type=float, default=1e-6)
  args = p.parse_args()
  if args.cmd == "snapshot":
    snapshot(args.out, args.tree.resolve(), args.only)
    return 0
  return compare(args.a, args.b, args.rtol)


if __name__ == "__main__":
  sys.exit(main())
