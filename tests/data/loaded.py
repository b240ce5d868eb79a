"""Helpers for the loader tests: loaded comparisons as hand-checkable dictionaries and lists."""

from pathlib import Path

import numpy as np

from ste_jax.data import pair_counts

FIX = Path(__file__).resolve().parent / "fixtures"


def wins_by_pair(c, by_context=False):
  """``{(winner, loser[, context]): wins}`` for every nonzero entry of the pair counts."""
  w = np.asarray(pair_counts(c, by_context=by_context).wins, dtype=np.float64)
  out = {}
  for idx in zip(*np.nonzero(w)):
    names = tuple(c.agents[i] for i in idx[-2:])
    key = names + ((c.contexts[idx[0]],) if by_context else ())
    out[key] = float(w[idx])
  return out


def rejected_lines(report):
  """``[(line, reason)]`` of the report's rejected rows, in input order."""
  return [(r.line, r.reason) for r in report.rejected]
