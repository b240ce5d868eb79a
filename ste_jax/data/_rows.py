"""Row-level parsing shared by the tabular loaders: cell classification, rejection bookkeeping.

The loaders turn every input format into a few object columns (one value per row, in file order)
plus the line number of each row, and hand them to :func:`parse_comparison_rows`, which checks
every row, records why bad rows are rejected, and builds the :class:`Comparisons`. The checks are
vectorized with pandas/NumPy; only rejected rows are visited one by one (to write their details).
"""

import numpy as np

from . import _report as R
from ._comparisons import DEFAULT_CONTEXT, Comparisons, _as_names
from ._report import LoadReport, RejectedRow

# Winner labels (compared after ``strip().lower()``): the simple schema of
# ``shared/data/*/comparisons.csv`` (a, b, tie) and the Chatbot Arena battle schema
# (model_a, model_b, tie, tie (bothbad)). A winner equal to the row's own ``a`` or ``b`` agent name
# is also understood.
A_WINS = ("a", "model_a")
B_WINS = ("b", "model_b")
TIES = ("tie", "tie (bothbad)")


class Rejections:
  """Per-row rejection bookkeeping: the first reason flagged for a row wins."""

  def __init__(self, num_rows: int):
    self.code = np.full(num_rows, -1, dtype=np.int64)
    self._entries = []  # (reason, detail_fn(row) -> str)

  @property
  def ok(self) -> np.ndarray:
    """Boolean mask of rows not rejected so far."""
    return self.code < 0

  def flag(self, mask, reason: str, detail_fn) -> None:
    """Rejects the rows in ``mask`` that are still ok, with ``reason`` and ``detail_fn(i)``."""
    new = np.asarray(mask, dtype=bool) & (self.code < 0)
    if new.any():
      self.code[new] = len(self._entries)
      self._entries.append((reason, detail_fn))

  def flag_pre(self, pre) -> None:
    """Rejects rows whose entry in the object array ``pre`` is a ``(reason, detail)`` pair."""
    if pre is None:
      return
    for i in np.flatnonzero(np.array([p is not None for p in pre], dtype=bool)):
      if self.code[i] < 0:
        reason, detail = pre[i]
        self.code[i] = len(self._entries)
        self._entries.append((reason, lambda _, d=detail: d))

  def rows(self, lines, sources=None) -> tuple[RejectedRow, ...]:
    """The rejected rows, in input order."""
    out = []
    for i in np.flatnonzero(self.code >= 0):
      reason, detail_fn = self._entries[self.code[i]]
      src = None if sources is None else sources[i]
      out.append(RejectedRow(line=int(lines[i]), reason=reason, detail=detail_fn(i), source=src))
    return tuple(out)


def classify(values: np.ndarray):
  """Splits an object column into (missing mask, NaN mask, stripped strings).

  ``None``, ``pd.NA`` and empty or blank strings are *missing*; float NaN and the strings
  ``"nan"``/``"NaN"`` are *NaN*. Everything else is converted with ``str`` and stripped.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  s = pd.Series(values, dtype=object)
  na = s.isna().to_numpy()
  nan = np.zeros(len(s), dtype=bool)
  for i in np.flatnonzero(na):  # only the (few) NA cells are visited
    nan[i] = isinstance(values[i], (float, np.floating))
  strings = s.where(~na, "").astype(str).str.strip()
  missing = (na & ~nan) | (~na & (strings == "").to_numpy())
  nan |= (~na & (strings.str.lower() == "nan").to_numpy())
  return missing, nan, strings.to_numpy(dtype=object)


def flag_missing_and_nan(rej: Rejections, columns: dict, raw: dict) -> dict:
  """Flags missing and NaN cells of each named column; returns the stripped strings per column."""
  strings = {}
  classified = {}
  for role, col in columns.items():
    classified[role] = classify(raw[role])
    strings[role] = classified[role][2]
  for role, col in columns.items():
    missing, _, _ = classified[role]
    rej.flag(missing, R.MISSING_FIELD, lambda i, c=col: f"column {c!r} is empty")
  for role, col in columns.items():
    _, nan, _ = classified[role]
    rej.flag(nan, R.NAN, lambda i, c=col: f"column {c!r} is NaN")
  return strings


def encode(names: np.ndarray, vocabulary) -> np.ndarray:
  """Index of each name in ``vocabulary`` (a tuple of strings); -1 where absent."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  index = pd.Index(list(vocabulary), dtype=object)
  return index.get_indexer(pd.Index(names, dtype=object)).astype(np.int64)


def sorted_names(*arrays) -> tuple[str, ...]:
  """Sorted distinct strings of the given object arrays."""
  if not arrays or sum(len(x) for x in arrays) == 0:
    return ()
  return tuple(str(x) for x in np.unique(np.concatenate(arrays).astype(str)))


def parse_comparison_rows(
    raw: dict,
    lines: np.ndarray,
    *,
    columns: dict,
    agents=None,
    contexts=None,
    strict: bool = False,
    source: str | None = None,
    sources=None,
    pre=None,
) -> tuple[Comparisons, LoadReport]:
  """Checks comparison rows and builds ``(Comparisons, LoadReport)``.

  Args:
    raw: object arrays per role: ``"a"``, ``"b"``, ``"winner"``, optionally ``"context"`` and
      ``"weight"``; all of length ``N`` (one entry per input row, in input order).
    lines: int ``(N,)`` line number of each row in its source.
    columns: the source column name of each role present in ``raw`` (for messages).
    agents: optional fixed agent names; rows naming another agent are rejected.
    contexts: optional fixed context names; rows with another context are rejected.
    strict: raise on the first bad row instead of reporting it.
    source: description of the input for messages.
    sources: optional object ``(N,)`` source file of each row (multi-file loaders).
    pre: optional object ``(N,)`` of ``None`` or ``(reason, detail)`` for rows already known to
      be bad (malformed records).

  Returns:
    ``(comparisons, report)``.

  Raises:
    ValueError: ``"no comparisons"`` when there are no rows or no usable rows; with
      ``strict=True``, the first bad row, naming its line number and reason.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  where = f" in {source}" if source else ""
  num_rows = len(lines)
  if num_rows == 0:
    raise ValueError(f"no comparisons{where}: the input has no data rows.")
  rej = Rejections(num_rows)
  rej.flag_pre(pre)
  s = flag_missing_and_nan(rej, columns, raw)

  # Winner label -> outcome for a.
  winner = s["winner"]
  lower = pd.Series(winner, dtype=object).str.lower().to_numpy(dtype=object)
  outcome = np.full(num_rows, np.nan)
  outcome[np.isin(lower, A_WINS)] = 1.0
  outcome[np.isin(lower, B_WINS)] = 0.0
  outcome[np.isin(lower, TIES)] = 0.5
  open_ = np.isnan(outcome)
  by_name_a = open_ & (winner == s["a"])
  by_name_b = open_ & ~by_name_a & (winner == s["b"])
  outcome[by_name_a] = 1.0
  outcome[by_name_b] = 0.0
  wcol = columns["winner"]
  rej.flag(
      np.isnan(outcome),
      R.UNKNOWN_WINNER,
      lambda i: f"column {wcol!r} = {winner[i]!r}; expected a/b/tie, model_a/model_b/tie/"
      f"'tie (bothbad)' or one of the two agent names",
  )
  rej.flag(s["a"] == s["b"], R.SELF_COMPARISON, lambda i: f"{s['a'][i]!r} vs itself")

  weight = None
  if "weight" in raw:
    weight = pd.to_numeric(pd.Series(s["weight"], dtype=object), errors="coerce").to_numpy(
        dtype=np.float64
    )
    bad_w = ~np.isfinite(weight) | (weight < 0)
    rej.flag(
        bad_w,
        R.INVALID_WEIGHT,
        lambda i: f"column {columns['weight']!r} = {s['weight'][i]!r}; expected a number >= 0",
    )

  ok = rej.ok
  if agents is None:
    agents = sorted_names(s["a"][ok], s["b"][ok])
  agents = _as_names(agents, "agents")
  a_idx = encode(s["a"], agents)
  b_idx = encode(s["b"], agents)
  rej.flag(
      (a_idx < 0) | (b_idx < 0),
      R.UNKNOWN_AGENT,
      lambda i: f"{s['a'][i] if a_idx[i] < 0 else s['b'][i]!r} is not in `agents`",
  )
  if "context" in raw:
    if contexts is None:
      contexts = sorted_names(s["context"][rej.ok])
    contexts = _as_names(contexts, "contexts")
    c_idx = encode(s["context"], contexts)
    rej.flag(
        c_idx < 0,
        R.UNKNOWN_CONTEXT,
        lambda i: f"{s['context'][i]!r} is not in `contexts`",
    )
  else:
    if contexts is not None:
      raise ValueError("`contexts` was given but the data has no context column.")
    contexts = (DEFAULT_CONTEXT,)
    c_idx = np.zeros(num_rows, dtype=np.int64)

  rejected = rej.rows(lines, sources)
  if strict and rejected:
    raise ValueError(f"bad row{where}: {rejected[0].describe()}")
  ok = rej.ok
  if not ok.any():
    report = LoadReport(num_rows, 0, 0, rejected, 0, source)
    raise ValueError(
        f"no comparisons{where}: all {num_rows} rows were rejected.\n{report.summary()}"
    )
  comps = Comparisons.from_arrays(
      a_idx[ok],
      b_idx[ok],
      outcome[ok],
      agents=agents,
      context=c_idx[ok],
      contexts=contexts,
      weight=None if weight is None else weight[ok],
  )
  used = int(ok.sum())
  report = LoadReport(
      rows_read=num_rows,
      rows_used=used,
      ties=int(np.sum(outcome[ok] == 0.5)),
      rejected=rejected,
      num_comparisons=used,
      source=source,
  )
  return comps, report
