"""Load reports: what a loader read, used and rejected, line by line.

Every constructor that turns tabular data into :class:`~ste_jax.data.Comparisons` returns a
:class:`LoadReport` next to it. No row is ever dropped silently: a row is either used or listed in
``LoadReport.rejected`` with its line number and a reason.
"""

import collections
import dataclasses

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
DUPLICATE = "duplicate (agent, task)"
NO_OPPONENT = "no opponent on task"
INCONSISTENT = "inconsistent record"


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
      weight"``, ``"invalid score"``, ``"malformed record"``, ``"duplicate (agent, task)"``,
      ``"no opponent on task"`` or ``"inconsistent record"``.
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
class LoadReport:
  """What a loader did with its input.

  Invariant: ``rows_read == rows_used + len(rejected)``.

  Attributes:
    rows_read: number of input rows (records) seen, bad ones included.
    rows_used: number of input rows that contributed to the returned comparisons.
    ties: number of returned comparisons that are ties (outcome 1/2).
    rejected: every row that was not used, in line order, with its reason.
    num_comparisons: number of comparisons returned. Equal to ``rows_used`` for comparison
      tables; for agent task logs (:func:`~ste_jax.data.from_task_results`) it is the number of
      agent pairs formed, which differs from the number of rows.
    source: the path (or description) of the input, or ``None`` for in-memory data.
  """

  rows_read: int
  rows_used: int
  ties: int
  rejected: tuple[RejectedRow, ...] = ()
  num_comparisons: int = 0
  source: str | None = None

  def reasons(self) -> dict[str, int]:
    """Number of rejected rows per reason, most frequent first."""
    return dict(collections.Counter(r.reason for r in self.rejected).most_common())

  def summary(self, max_lines: int = 10) -> str:
    """A short multi-line, human-readable summary of the load.

    Args:
      max_lines: how many rejected rows to list individually (the rest are counted).

    Returns:
      A string such as ``"data.csv: read 10 rows, used 8 (2 ties), rejected 2 (unknown winner
      label: 1, self-comparison: 1)"`` followed by one line per listed rejected row.
    """
    head = f"{self.source}: " if self.source else ""
    text = (
        f"{head}read {self.rows_read} rows, used {self.rows_used}, "
        f"{self.num_comparisons} comparisons ({self.ties} ties), rejected {len(self.rejected)}"
    )
    if self.rejected:
      counts = ", ".join(f"{k}: {v}" for k, v in self.reasons().items())
      text += f" ({counts})"
      lines = [f"  {r.describe()}" for r in self.rejected[:max_lines]]
      if len(self.rejected) > max_lines:
        lines.append(f"  ... and {len(self.rejected) - max_lines} more")
      text += "\n" + "\n".join(lines)
    return text

  def __str__(self) -> str:
    return self.summary()
