"""Aggregated counts -> ``(Comparisons, LoadReport)``: the ``counts`` schema, :func:`from_counts`.

A warehouse aggregation of battles (``GROUP BY model_a, model_b`` with the wins of each side and
the ties summed, docs page "Counts from a warehouse") gives one row per pair (and context):
columns ``a``/``b`` (or ``model_a``/``model_b``), ``wins_a``, ``wins_b``, an optional ``ties``
and an optional context column. Each input row becomes up to three weighted comparisons: ``a``
won (outcome 1, weight ``wins_a``), ``b`` won (outcome 0, weight ``wins_b``) and a tie (outcome
1/2, weight ``ties``). A row of weight ``w`` counts ``w`` times in the pair counts and the
estimators' likelihoods, and the Poisson bootstrap draws ``Poisson(w)`` for it, the law of the
total of ``w`` unit comparisons each drawn ``Poisson(1)`` times: counts give the same point
estimates as the battles they summarize, and bootstrap replicas with the same distribution (not
the same draws for the same key).

A count must be an integer ``>= 0``; a missing, NaN, fractional or negative count is a bad row
(``"invalid weight"``), refused unless ``skip_bad_rows=True``. A row whose counts are all 0 is
read but gives no comparison: it is listed in the report as dropped (``"dropped by policy"``,
never refused), and its agents are not added to the agent list.
"""

from collections.abc import Callable
import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InputError, OptionError
from . import _report as R
from ._assemble import assemble, context_strings
from ._comparisons import Comparisons
from ._report import LoadReport
from ._rows import Rejections, flag_missing_and_nan, tie_mapping
from ._settings import LoadSettings

if TYPE_CHECKING:
  pass

AGENT_COLUMNS = ("model_a", "model_b")
COUNT_COLUMNS = ("wins_a", "wins_b")
TIES_COLUMN = "ties"
NO_GAMES = "no comparisons (every count is 0)"


def is_counts_header(header) -> bool:
  """Whether a header holds the ``counts`` schema's identifying columns ``wins_a, wins_b``."""
  return set(COUNT_COLUMNS) <= {str(c) for c in header}


def counts_rows(
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  header: list[str],
  *,
  settings: LoadSettings,
  source: str | None = None,
  sources: np.ndarray | None = None,
  pre: np.ndarray | None = None,
  context: str | None = None,
) -> tuple[Comparisons, LoadReport]:
  """Checks count rows and builds ``(Comparisons, LoadReport)`` (one comparison per nonzero count).

  Args:
    column: ``column(name)`` -> object ``(N,)`` array of that column's cells.
    lines: int ``(N,)`` line number of each row.
    header: the available column names.
    settings: the loading options: ``a``/``b`` (default ``model_a``/``model_b``, or ``a``/``b``
      when the table has those and no ``model_a``), fixed ``agents``/``contexts``, ``strict``
      and the ``policy``'s ``tie`` (``"drop"`` drops the tie counts).
    source: description of the input for messages.
    sources: optional object ``(N,)`` source file of each row.
    pre: optional object ``(N,)`` of ``None`` or ``(reason, detail)`` (malformed records).
    context: the context column, or ``None`` for none.

  Returns:
    ``(comparisons, report)``; the comparisons' weights are the counts.

  Raises:
    OptionError: ``settings.weight`` is set (the counts are the weights), or only one of ``a``
      and ``b``.
    InputError: a column is missing (the message names it and the columns found), no rows or no
      usable rows, or with ``strict`` the first bad row.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  if settings.weight is not None:
    raise OptionError(
      f"weight={settings.weight!r} does not apply to the counts schema: the counts "
      f"({', '.join(COUNT_COLUMNS)}, {TIES_COLUMN}) are the weights."
    )
  where = source or "the data frame"
  a, b = settings.a, settings.b
  if a is None and b is None:
    a, b = ("a", "b") if "model_a" not in header and {"a", "b"} <= set(header) else AGENT_COLUMNS
  elif a is None or b is None:
    raise OptionError("pass both `a` and `b` column names, or neither (auto-detect).")
  columns = {"a": a, "b": b, "wins_a": "wins_a", "wins_b": "wins_b"}
  if TIES_COLUMN in header:
    columns["ties"] = TIES_COLUMN
  for role, name in columns.items():
    if name not in header:
      raise InputError(
        f"column {name!r} ({role}) not found in {where}; available columns: {header}. "
        "The counts schema reads a, b (or model_a, model_b), wins_a, wins_b[, ties][, context]."
      )
  num_rows = len(lines)
  if num_rows == 0:
    raise InputError(f"no comparisons in {where}: the input has no data rows.")
  raw = {role: column(name) for role, name in columns.items()}
  rej = Rejections(num_rows)
  rej.flag_pre(pre)
  s = flag_missing_and_nan(rej, columns, raw)
  roles = [r for r in ("wins_a", "wins_b", "ties") if r in columns]
  counts = {}
  for role in roles:
    value = pd.to_numeric(pd.Series(s[role], dtype=object), errors="coerce").to_numpy(
      dtype=np.float64
    )
    bad = ~np.isfinite(value) | (value < 0) | (np.round(value) != value)
    rej.flag(
      bad,
      R.INVALID_WEIGHT,
      lambda i, c=columns[role], v=raw[role]: f"column {c!r} = {v[i]!r}; expected an integer >= 0",
    )
    counts[role] = np.where(bad, 0.0, value)
  mappings = [
    f"counts: column {columns[r]!r} -> {what} weighted by the count"
    for r, what in (("wins_a", "a won"), ("wins_b", "b won"), ("ties", "tie"))
    if r in columns
  ]
  policy = settings.policy
  mappings.append(tie_mapping(policy))

  outcome_of = {"wins_a": 1.0, "wins_b": 0.0, "ties": 0.5}
  rows, outcome, weight, drop = [], [], [], []
  for role in roles:
    nonzero = np.flatnonzero(counts[role] > 0)
    rows.append(nonzero)
    outcome.append(np.full(len(nonzero), outcome_of[role]))
    weight.append(counts[role][nonzero])
    reason = "tie (policy tie=drop)" if role == "ties" and policy.tie == "drop" else None
    drop.append(np.full(len(nonzero), reason, dtype=object))
  total = sum(counts[r] for r in roles)
  empty = np.flatnonzero(rej.ok & (total == 0))  # read, but no comparison: dropped, not refused
  rows.append(empty)
  outcome.append(np.full(len(empty), 0.5))
  weight.append(np.zeros(len(empty)))
  drop.append(np.full(len(empty), NO_GAMES, dtype=object))
  row = np.concatenate(rows)
  order = np.argsort(row, kind="stable")  # candidates in input order, a row's counts together
  row, outcome, weight, drop = (
    row[order],
    np.concatenate(outcome)[order],
    np.concatenate(weight)[order],
    np.concatenate(drop)[order],
  )
  ctx = None
  if context is not None:
    ctx = context_strings(column(context), context, mappings, rej)
  comparisons, report = assemble(
    a=s["a"],
    b=s["b"],
    raw_a=raw["a"],
    raw_b=raw["b"],
    rej=rej,
    lines=lines,
    row=row,
    outcome=outcome,
    weight=weight,
    drop=drop,
    context=ctx,
    settings=settings,
    source=source,
    sources=sources,
    schema="counts",
    mappings=mappings,
  )
  used = rej.ok  # after assemble: the rows that gave comparisons
  kept = {r: int(counts[r][used].sum()) for r in roles}
  totals = f"a won {kept['wins_a']}, b won {kept['wins_b']}" + (
    f", ties {kept['ties']}" if "ties" in kept else ""
  )
  line = f"counts: {sum(kept.values())} unit comparisons in the rows used ({totals})"
  return comparisons, dataclasses.replace(report, mappings=(*report.mappings, line))
