"""Row-level parsing shared by the tabular loaders: cell classification, rejection bookkeeping.

The loaders turn every input format into a few object columns (one value per row, in file order)
plus the line number of each row, and hand them to :func:`parse_comparison_rows`, which checks
every row, records why bad rows are rejected, and builds the :class:`Comparisons`. The checks are
vectorized with pandas/NumPy; only rejected rows are visited one by one (to write their details).
"""

import numpy as np

from . import _report as R
from ._report import RejectedRow

# Winner labels (compared after ``strip().lower()``): the simple schema of
# ``shared/data/*/comparisons.csv`` (a, b, tie) and the Chatbot Arena battle schema (FastChat's
# ``clean_battle_data.py``: model_a, model_b, tie, tie (bothbad); the arena-human-preference-140k
# release spells the last one both_bad). A winner equal to the row's own ``a`` or ``b`` agent name
# is also understood.
A_WINS = ("a", "model_a")
B_WINS = ("b", "model_b")
TIES = ("tie",)
BOTH_BAD = ("tie (bothbad)", "both_bad")


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

  def code_of(self, reason: str) -> np.ndarray:
    """The codes (entries) whose reason is ``reason``, for ``np.isin(self.code, ...)``."""
    return np.array([k for k, (r, _) in enumerate(self._entries) if r == reason], dtype=np.int64)

  def rows(self, lines, sources=None) -> tuple[RejectedRow, ...]:
    """The rejected rows, in input order."""
    out = []
    for i in np.flatnonzero(self.code >= 0):
      reason, detail_fn = self._entries[self.code[i]]
      src = None if sources is None else sources[i]
      out.append(RejectedRow(line=int(lines[i]), reason=reason, detail=detail_fn(i), source=src))
    return tuple(out)


def all_strings(values) -> bool:
  """Whether every cell of ``values`` is a ``str`` (no None, NaN or other object)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  return len(values) > 0 and pd.api.types.infer_dtype(values, skipna=False) == "string"


def classify(values: np.ndarray):
  """Splits an object column into (missing mask, NaN mask, stripped strings).

  ``None``, ``pd.NA`` and empty or blank strings are *missing*; float NaN and the strings
  ``"nan"``/``"NaN"`` are *NaN*. Everything else is converted with ``str`` and stripped.
  A column of strings is classified once per distinct value (large files repeat few names).
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  if all_strings(values):
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    missing, nan, strings = _classify(np.asarray(uniques, dtype=object))
    return missing[codes], nan[codes], strings[codes]
  return _classify(values)


def _classify(values):
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
  import pandas as pd  # pylint: disable=g-import-not-at-top

  if not arrays or sum(len(x) for x in arrays) == 0:
    return ()
  values = np.concatenate(arrays)
  if all_strings(values):  # the same result from the distinct values only
    values = np.asarray(pd.unique(values), dtype=object)
  return tuple(str(x) for x in np.unique(values.astype(str)))


def tie_drops(outcome: np.ndarray, both_bad: np.ndarray, policy) -> np.ndarray:
  """Policy-drop reasons for ties (``policy.tie``) and both-bad ties (``policy.both_bad``)."""
  drop = np.full(len(outcome), None, dtype=object)
  if policy.tie == "drop":
    drop[(outcome == 0.5) & ~both_bad] = "tie (policy tie=drop)"
  if policy.both_bad == "drop":
    drop[both_bad] = "both bad (policy both_bad=drop)"
  return drop


def tie_mapping(policy) -> str:
  """The mapping line describing the tie and both-bad policies."""
  def how(p):
    return "outcome 1/2" if p == "half" else "row dropped"
  return f"tie -> {how(policy.tie)} (tie={policy.tie}); both bad -> {how(policy.both_bad)} " \
      f"(both_bad={policy.both_bad})"


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
    policy=None,
    schema: str | None = None,
    a_first: bool = False,
):
  """Checks rows with a winner label and builds ``(Comparisons, LoadReport)``.

  Labels (after ``strip().lower()``): ``a``/``model_a`` (first agent won), ``b``/``model_b``,
  ``tie``, ``tie (bothbad)``/``both_bad`` (a both-bad tie), or one of the row's two agent names.

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
    policy: an :class:`~ste_jax.data.OutcomePolicy` (``tie``, ``both_bad``); default: defaults.
    schema: schema name for the report.
    a_first: the first agent (``a``) was shown first (Chatbot Arena's ``model_a``): report the
      position bias.

  Returns:
    ``(comparisons, report)``.

  Raises:
    ValueError: ``"no comparisons"`` when there are no rows or no usable rows; with
      ``strict=True``, the first bad row, naming its line number and reason.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  from ._assemble import assemble, context_strings  # pylint: disable=g-import-not-at-top
  from ._policies import as_policy  # pylint: disable=g-import-not-at-top

  policy = as_policy(policy)
  where = f" in {source}" if source else ""
  num_rows = len(lines)
  if num_rows == 0:
    raise ValueError(f"no comparisons{where}: the input has no data rows.")
  rej = Rejections(num_rows)
  rej.flag_pre(pre)
  checked = {k: v for k, v in columns.items() if k != "context"}
  s = flag_missing_and_nan(rej, checked, raw)
  mappings = []

  # Winner label -> outcome for a.
  winner = s["winner"]
  lower = pd.Series(winner, dtype=object).str.lower().to_numpy(dtype=object)
  outcome = np.full(num_rows, np.nan)
  outcome[np.isin(lower, A_WINS)] = 1.0
  outcome[np.isin(lower, B_WINS)] = 0.0
  outcome[np.isin(lower, TIES)] = 0.5
  both_bad = np.isin(lower, BOTH_BAD)
  outcome[both_bad] = 0.5
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
      f"'tie (bothbad)'/both_bad or one of the two agent names",
  )
  seen = pd.Series(lower[rej.ok], dtype=object).value_counts()
  labels = []
  for label, count in seen.items():
    if label in A_WINS or label in B_WINS or label in TIES or label in BOTH_BAD:
      kind = ("first agent won" if label in A_WINS else "second agent won" if label in B_WINS
              else "tie" if label in TIES else "both bad")
      labels.append(f"{label!r} -> {kind} ({count})")
  named = int((by_name_a | by_name_b)[rej.ok].sum())
  if named:
    labels.append(f"an agent's own name -> that agent won ({named})")
  mappings.append(f"column {wcol!r}: " + ", ".join(labels))
  mappings.append(tie_mapping(policy))

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
    weight = np.where(bad_w, 0.0, weight)
    mappings.append(f"column {columns['weight']!r} -> comparison weight")

  context = None
  if "context" in raw:
    context = context_strings(raw["context"], columns["context"], mappings)
  outcome = np.where(np.isnan(outcome), 0.5, outcome)  # rejected rows only; never used
  return assemble(
      a=s["a"], b=s["b"], raw_a=raw["a"], raw_b=raw["b"], rej=rej, lines=lines,
      row=np.arange(num_rows), outcome=outcome, weight=weight,
      drop=tie_drops(outcome, both_bad, policy),
      position=(np.arange(num_rows), outcome) if a_first else None,
      context=context, agents=agents, contexts=contexts, strict=strict, source=source,
      sources=sources, schema=schema, mappings=mappings,
  )
