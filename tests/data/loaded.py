"""Helpers for the loader tests: loaded comparisons as hand-checkable dictionaries and lists."""

import functools
from pathlib import Path
import warnings

import numpy as np

from ste_jax.data import BadRowsWarning, pair_counts

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


def skipping(loader):
  """``loader`` called with ``skip_bad_rows=True``, for tests of the report of files with planted
  bad rows; checks that one :class:`~ste_jax.data.BadRowsWarning` came exactly when the report has
  bad rows, and that no other warning did."""

  @functools.wraps(loader)
  def load(*args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      c, report = loader(*args, skip_bad_rows=True, **kwargs)
    kinds = [w.category for w in caught]
    assert kinds == ([BadRowsWarning] if report.bad_rows else []), [str(w.message) for w in caught]
    if report.bad_rows:
      assert f"{len(report.bad_rows)} bad row" in str(caught[0].message)
    return c, report

  return load
