"""``benchmarks/sparse_candidates.py``: its uniform-opponent league has the planted Top Cycle
(checked with networkx), and one seed end to end in a subprocess (``slow``)."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tests.oracles import nx_top_cycle

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "sparse_candidates.py"


def test_uniform_league_plants_a_three_cycle_on_top():
  from benchmarks.sparse_candidates import uniform_league

  comps, P = uniform_league(3)
  assert comps.num_agents == 400 and P.shape == (400, 400)
  np.testing.assert_allclose(P + P.T, 1.0)
  core = np.flatnonzero(nx_top_cycle(P))
  assert len(core) == 3 and set(core) < set(range(300))  # a 3-cycle of main agents, no qualifier
  a, b, c = core
  assert (
    len({bool(P[a, b] > 0.5), bool(P[b, c] > 0.5), bool(P[c, a] > 0.5)}) == 1
  )  # a cycle, one way or the other
  totals = np.zeros((400, 400))
  np.add.at(totals, (np.asarray(comps.a), np.asarray(comps.b)), 1.0)
  totals = totals + totals.T
  assert (
    totals[np.ix_(core, core)][~np.eye(3, dtype=bool)] == 3
  ).all()  # the core pairs: 3 games each
  assert (totals[300:].sum(axis=1) == 1).all()  # qualifiers: one game each


@pytest.mark.slow
def test_sparse_candidates_one_seed_end_to_end():
  proc = subprocess.run(
    [sys.executable, str(SCRIPT), "--seeds", "0", "--kinds", "uniform"],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=900,
  )
  assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
  rows = [
    line.split("|")[1:-1] for line in proc.stdout.splitlines() if line.startswith("| uniform |")
  ]
  assert len(rows) == 1
  r = [x.strip() for x in rows[0]]
  assert r[2:4] == ["400", "3"]
  members = r[9].split(", ")
  assert len(members) == 3
  assert (r[8] == "yes") == all(
    m.endswith("*") for m in members
  )  # held iff every true member is starred
  assert "the candidates held the whole true Top Cycle in" in proc.stdout
  # Each member's row in the table and in the point estimate's order: "row (point row; games)".
  assert all(m.rstrip("*").split(" (")[0].isdigit() and "; " in m for m in members)
  assert (
    "true Top-Cycle members in the first 10 rows" in proc.stdout
    and "the first row a true" in proc.stdout
  )
  met, pairs = r[11].split(" of ")  # pairs among the first 10 rows compared
  assert pairs == "45" and 0 <= int(met) <= 45
  status, named = r[12].split(": ")  # the answer's case and its named agents in the true Top Cycle
  assert status in ("certified", "partly certified", "not settled") and named.endswith(
    " named true"
  )
  assert "the answer certified an agent outside the true Top Cycle" in proc.stdout
