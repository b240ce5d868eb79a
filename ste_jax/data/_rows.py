"""Row-level parsing shared by the tabular loaders: cell classification, rejection bookkeeping.

The loaders turn every input format into a few object columns (one value per row, in file order)
plus the line number of each row. The helpers here check those columns (:class:`Rejections`
records why bad rows are rejected; :func:`classify` splits cells into missing, NaN and stripped
strings; :func:`encode` and :func:`sorted_names` index the names) for the schema loaders, for
:func:`~ste_jax.data._winner_rows.parse_comparison_rows` (rows with a winner label) and for
:func:`~ste_jax.data._assemble.assemble` (which builds the :class:`Comparisons`). The checks are
vectorized with pandas/NumPy; only rejected rows are visited one by one (to write their details).
"""

import numpy as np

from . import _report as R
from ._report import RejectedRow


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

  def rows(self, lines, sources=None, distinct=None) -> tuple[RejectedRow, ...]:
    """The rejected rows, in input order.

    Args:
      lines: int ``(N,)`` line number of each input row.
      sources: optional object ``(N,)`` file of each input row.
      distinct: optional :class:`~ste_jax.data._distinct.DistinctRows` when these rejections are
        of the distinct rows: every input row of a rejected distinct row is reported, with its
        own line (the detail is written once per distinct row).
    """
    if distinct is None:
      rows, of = np.flatnonzero(self.code >= 0), None
    else:
      rows = distinct.expand(self.code >= 0)
      of = distinct.inverse[rows]
    details = {}
    out = []
    for k, i in enumerate(rows):
      u = i if of is None else int(of[k])
      reason, detail_fn = self._entries[self.code[u]]
      if u not in details:
        details[u] = detail_fn(u)
      src = None if sources is None else sources[i]
      out.append(RejectedRow(line=int(lines[i]), reason=reason, detail=details[u], source=src))
    return tuple(out)


def all_strings(values) -> bool:
  """Whether every cell of ``values`` is a ``str`` (no None, NaN or other object)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  return len(values) > 0 and pd.api.types.infer_dtype(values, skipna=False) == "string"


# Characters that print as nothing: removed from cells like surrounding whitespace (zero-width
# space, non-joiner and joiner, word joiner, byte order mark / zero-width no-break space, soft
# hyphen).
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_INVISIBLE_RE = "[" + INVISIBLE + "]"
_SCALARS = frozenset(
  ("string", "empty", "integer", "floating", "mixed-integer-float", "boolean", "decimal")
)


def non_scalar(values) -> np.ndarray:
  """Boolean mask of the cells of an object column that hold a list, tuple, dict, set or array."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  if len(values) == 0 or pd.api.types.infer_dtype(values, skipna=True) in _SCALARS:
    return np.zeros(len(values), dtype=bool)
  kinds = (list, tuple, dict, set, frozenset, np.ndarray)
  return np.fromiter((isinstance(v, kinds) for v in values), bool, len(values))


def classify(values: np.ndarray):
  """Splits an object column into (missing mask, NaN mask, normalized strings).

  ``None``, ``pd.NA`` and empty or blank strings are *missing*; float NaN and the strings
  ``"nan"``/``"NaN"`` are *NaN*. Everything else is converted with ``str``, put in Unicode
  normal form NFC, stripped of invisible characters (:data:`INVISIBLE`, anywhere in the cell)
  and of surrounding whitespace. A column of strings is classified once per distinct value
  (large files repeat few names).
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
  strings = s.where(~na, "").astype(str)
  if not strings.map(str.isascii).all():  # NFC and invisible characters: non-ASCII cells only
    strings = strings.str.normalize("NFC").str.replace(_INVISIBLE_RE, "", regex=True)
  strings = strings.str.strip()
  missing = (na & ~nan) | (~na & (strings == "").to_numpy())
  nan |= ~na & (strings.str.lower() == "nan").to_numpy()
  return missing, nan, strings.to_numpy(dtype=object)


def flag_missing_and_nan(rej: Rejections, columns: dict, raw: dict) -> dict:
  """Flags missing and NaN cells of each named column; returns the stripped strings per column."""
  strings = {}
  classified = {}
  for role, col in columns.items():
    classified[role] = classify(raw[role])
    strings[role] = classified[role][2]
  for role, col in columns.items():
    flag_non_scalar(rej, raw[role], col)
  for role, col in columns.items():
    missing, _, _ = classified[role]
    rej.flag(missing, R.MISSING_FIELD, lambda i, c=col: f"column {c!r} is empty")
  for role, col in columns.items():
    _, nan, _ = classified[role]
    rej.flag(nan, R.NAN, lambda i, c=col: f"column {c!r} is NaN")
  return strings


def flag_non_scalar(rej: Rejections, values, column: str) -> None:
  """Rejects the rows whose cell in ``column`` is a list, dict or array (``"non-scalar cell"``)."""
  mask = non_scalar(values)
  if mask.any():

    def detail(i):
      v = values[i]
      kind = "an array" if isinstance(v, np.ndarray) else f"a {type(v).__name__}"
      text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
      text = text if len(text) <= 40 else text[:37] + "..."
      return f"column {column!r} holds {kind} {text}, not a single value"

    rej.flag(mask, R.NOT_SCALAR, detail)


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

  return (
    f"tie -> {how(policy.tie)} (tie={policy.tie}); both bad -> {how(policy.both_bad)} "
    f"(both_bad={policy.both_bad})"
  )
