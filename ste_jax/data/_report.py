"""Load reports: what a loader read, used and rejected, line by line.

Every constructor that turns tabular data into :class:`~ste_jax.data.Comparisons` returns a
:class:`LoadReport` next to it. No row is ever dropped silently: a row is either used or listed in
``LoadReport.rejected`` with its line number and a reason, and bad rows are refused
(:func:`refuse_or_skip`: :class:`~ste_jax.InputError`) unless the caller passed
``skip_bad_rows=True`` (then a :class:`BadRowsWarning` says how many and why).
"""

import collections
from collections.abc import Sequence
import dataclasses
import os
import sys
import unicodedata
import warnings

from .._errors import InputError

# Reasons a row can be rejected (the ``reason`` field of RejectedRow). Kept as plain strings so
# that reports print and compare simply.
MISSING_FIELD = "missing field"
NAN = "NaN"
UNKNOWN_WINNER = "unknown winner label"
SELF_COMPARISON = "self-comparison"
UNKNOWN_AGENT = "unknown agent"
UNKNOWN_CONTEXT = "unknown context"
INVALID_WEIGHT = "invalid weight"
INVALID_SCORE = "invalid score"
MALFORMED = "malformed record"
NOT_SCALAR = "non-scalar cell"
DUPLICATE = "duplicate (agent, task)"
NO_OPPONENT = "no opponent on task"
INCONSISTENT = "inconsistent record"
JUDGE_ERROR = "judge error"
POLICY_DROP = "dropped by policy"


def name_repr(name: str) -> str:
  """``repr(name)``, with escapes (``ascii``) where the name is not in Unicode normal form NFC
  (a decomposed ``'cafe\\u0301'`` and ``'café'`` print alike otherwise)."""
  return repr(name) if unicodedata.is_normalized("NFC", name) else ascii(name)


@dataclasses.dataclass(frozen=True)
class RejectedRow:
  """One input row that was not turned into a comparison.

  Attributes:
    line: where the row is in its source. For CSV files the header is line 1, so the first data
      row is line 2; for JSONL files the first record is line 1 (blank lines count as lines but
      are not records); for JSON arrays, Parquet files and in-memory data frames it is the
      1-based record number.
    reason: the kind of problem, one of ``"missing field"``, ``"NaN"``, ``"unknown winner
      label"``, ``"self-comparison"``, ``"unknown agent"``, ``"unknown context"``, ``"invalid
      weight"``, ``"invalid score"``, ``"malformed record"``, ``"non-scalar cell"`` (a list,
      dict or array where a single value belongs), ``"duplicate (agent, task)"``,
      ``"no opponent on task"``, ``"inconsistent record"``, ``"judge error"`` or
      ``"dropped by policy"`` (a valid row that an explicit outcome policy excludes, e.g.
      ``tie="drop"``; not a bad row).
    detail: a human-readable detail (the offending column and value).
    source: the file the row came from, when a loader read several files; otherwise ``None``.
  """

  line: int
  reason: str
  detail: str = ""
  source: str | None = None

  def describe(self) -> str:
    """``"[source ]line N: reason (detail)"`` on one line."""
    where = f"{self.source} " if self.source else ""
    detail = f" ({self.detail})" if self.detail else ""
    return f"{where}line {self.line}: {self.reason}{detail}"


@dataclasses.dataclass(frozen=True)
class PositionBias:
  """How often the agent shown first won, for data that record the presentation order.

  Attributes:
    first_wins: decisive judgments won by the agent in the first position (Chatbot Arena's
      ``model_a``, the judge's "Assistant A").
    second_wins: decisive judgments won by the agent in the second position.
    ties: judgments with outcome 1/2 (not counted in ``share``).
    first: who holds the first position, for :meth:`describe` (``"white"`` in chess,
      ``"home team"`` in sports results).
  """

  first_wins: int
  second_wins: int
  ties: int = 0
  first: str = "first position"

  @property
  def share(self) -> float:
    """Share of first-position wins among decisive judgments (NaN when there are none)."""
    decisive = self.first_wins + self.second_wins
    return self.first_wins / decisive if decisive else float("nan")

  def describe(self) -> str:
    """``"position bias: first position won 60.0% of 50 decisive judgments (5 ties)"``."""
    decisive = self.first_wins + self.second_wins
    if not decisive:
      return f"position bias: no decisive judgment ({self.ties} ties)"
    return (
      f"position bias: {self.first} won {100 * self.share:.1f}% of {decisive} decisive "
      f"judgments ({self.ties} ties; 50% = no bias)"
    )


@dataclasses.dataclass(frozen=True)
class LoadReport:
  """What a loader did with its input.

  Invariant: ``rows_read == rows_used + len(rejected)``.

  Attributes:
    rows_read: number of input rows (records) seen, bad ones included.
    rows_used: number of input rows that contributed to the returned comparisons.
    ties: number of returned comparisons that are ties (outcome 1/2).
    rejected: every row that was not used, in line order, with its reason (rows excluded by an
      explicit outcome policy have reason ``"dropped by policy"``).
    num_comparisons: number of comparisons returned. Equal to ``rows_used`` for comparison
      tables; for agent task logs (:func:`~ste_jax.data.from_task_results`) it is the number of
      agent pairs formed, and for two-order judges or split soft outcomes a row can give two.
    source: the path (or description) of the input, or ``None`` for in-memory data.
    schema: the input schema read (``"arena"``, ``"mtbench"``, ...), or ``None``.
    mappings: one line per conversion the loader applied (labels to outcomes, policies, empty
      contexts sent to ``(none)``, names normalized), in the order applied.
    renamed: ``(raw name, normalized name, rows)`` for every raw agent name that normalization
      changed (surrounding whitespace and invisible characters removed, Unicode NFC).
    merged: ``(normalized name, raw names)`` for every normalized name that several distinct raw
      names collapsed into (a collision).
    position_bias: first-position win share, when the data record the presentation order.
  """

  rows_read: int
  rows_used: int
  ties: int
  rejected: tuple[RejectedRow, ...] = ()
  num_comparisons: int = 0
  source: str | None = None
  schema: str | None = None
  mappings: tuple[str, ...] = ()
  renamed: tuple[tuple[str, str, int], ...] = ()
  merged: tuple[tuple[str, tuple[str, ...]], ...] = ()
  position_bias: PositionBias | None = None

  @property
  def bad_rows(self) -> tuple[RejectedRow, ...]:
    """Rejected rows that are errors in the input (all but the ``"dropped by policy"`` ones)."""
    return tuple(r for r in self.rejected if r.reason != POLICY_DROP)

  def reasons(self) -> dict[str, int]:
    """Number of rejected rows per reason, most frequent first."""
    return dict(collections.Counter(r.reason for r in self.rejected).most_common())

  def reason_summary(self, top: int = 5, rows: Sequence[RejectedRow] | None = None) -> str:
    """The most frequent rejection reasons on one line, each with its count and first line.

    Args:
      top: how many reasons to list (the rest are counted).
      rows: the rejected rows to summarize (default: all of ``rejected``).

    Returns:
      e.g. ``"missing field: 390 (first at line 2), NaN: 3 (first at line 10)"``; ``""`` when
      nothing was rejected.
    """
    rows = self.rejected if rows is None else rows
    counts = collections.Counter(r.reason for r in rows)
    first = {}
    for r in rows:
      first.setdefault(r.reason, r)
    parts = []
    for reason, count in counts.most_common(top):
      r = first[reason]
      where = f"{r.source} line {r.line}" if r.source else f"line {r.line}"
      parts.append(f"{reason}: {count} (first at {where}{f': {r.detail}' if r.detail else ''})")
    if len(counts) > top:
      parts.append(f"{len(counts) - top} more reasons")
    return ", ".join(parts)

  def summary(self, max_lines: int = 10) -> str:
    """A short multi-line, human-readable summary of the load.

    Args:
      max_lines: how many rejected rows to list individually (the rest are counted).

    Returns:
      A string such as ``"data.csv: read 10 rows, used 8 (2 ties), rejected 2 (unknown winner
      label: 1, self-comparison: 1)"``, then the schema and mappings (when known), the
      normalized and merged names, the position bias, and one line per listed rejected row.
    """
    head = f"{self.source}: " if self.source else ""
    text = (
      f"{head}read {self.rows_read} rows, used {self.rows_used}, "
      f"{self.num_comparisons} comparisons ({self.ties} ties), rejected {len(self.rejected)}"
    )
    if self.rejected:
      counts = ", ".join(f"{k}: {v}" for k, v in self.reasons().items())
      text += f" ({counts})"
    extra = []
    if self.schema:
      extra.append(f"  schema: {self.schema}")
    extra += [f"  mapping: {m}" for m in self.mappings]
    for name, raws in self.merged:
      extra.append(f"  merged names: {', '.join(map(name_repr, raws))} -> {name!r}")
    if self.position_bias is not None:
      extra.append(f"  {self.position_bias.describe()}")
    if self.rejected:
      extra.append(f"  rejections: {self.reason_summary()}")
      extra += [f"  {r.describe()}" for r in self.rejected[:max_lines]]
      if len(self.rejected) > max_lines:
        extra.append(f"  ... and {len(self.rejected) - max_lines} more rejected rows")
    return "\n".join([text] + extra)

  def __str__(self) -> str:
    return self.summary()


class BadRowsWarning(UserWarning):
  """Bad rows were dropped because the caller passed ``skip_bad_rows=True``.

  The message says how many rows and why (the top reasons with their first line numbers); the
  full list is the result's :class:`LoadReport` (``report.bad_rows``).
  """


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def refuse_or_skip(report: LoadReport, skip_bad_rows: bool) -> LoadReport:
  """The one rule of every entry point that reads raw rows: refuse bad rows unless told to skip.

  Rows dropped by an explicit outcome policy are not bad rows (the caller asked for them to go).

  Args:
    report: the load's report.
    skip_bad_rows: the caller's choice (``LoadSettings.skip_bad_rows``, the command line's
      ``--skip-bad-rows``).

  Returns:
    ``report``, when it has no bad rows or ``skip_bad_rows`` (then a :class:`BadRowsWarning`
    says how many rows were dropped and why).

  Raises:
    InputError: ``report`` has bad rows and ``skip_bad_rows`` is false; the message names the
      input, the number of bad rows, the reasons with counts and first line numbers, and both
      ways to skip them.
  """
  bad = report.bad_rows
  if not bad:
    return report
  where = report.source or "the data frame"
  text = (
    f"{where}: {len(bad)} bad row{'s' if len(bad) > 1 else ''} of {report.rows_read}: "
    f"{report.reason_summary(rows=bad)}"
  )
  if not skip_bad_rows:
    raise InputError(
      f"{text}; fix the input or pass skip_bad_rows=True (--skip-bad-rows on the command line)"
    )
  level, frame = 1, sys._getframe(0)  # pylint: disable=protected-access
  while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
    frame, level = frame.f_back, level + 1  # the warning points at the caller's code
  warnings.warn(
    f"{text}; dropped (skip_bad_rows=True), {report.rows_used} rows used",
    BadRowsWarning,
    stacklevel=level,
  )
  return report
