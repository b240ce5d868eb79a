"""Distinct rows: parse each distinct combination of cells once, count how many rows repeat it.

An arena file of millions of battles among a few hundred models holds far fewer distinct rows
``(model_a, model_b, winner[, context][, weight])`` than rows: 2,000,000 battles among 200 models
repeat about 120,000 combinations. The winner-row loader
(:func:`~ste_jax.data._winner_rows.parse_comparison_rows`) therefore checks the distinct rows
only, with each one's multiplicity, and expands the result back to the input rows (the returned
comparisons, in input order, and every rejected row with its own line number).

Two cells are merged only when they are the same value of the same type, so that every check and
every message is the same as on the rows one by one: a column of strings, of floats or of
integers is factorized whole (NaN is one value); a column of strings with missing cells codes its
missing cells by their type (``None``, ``NaN``, ``pd.NA`` stay apart); any other column (mixed
types, lists) keeps its rows apart. A reader that already has a column as dictionary codes
(Parquet's dictionary pages) hands a :class:`CodedColumn`, so the strings are never materialized
per row.
"""

from collections.abc import Sequence
import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class CodedColumn:
  """A column given as codes into its distinct values: cell ``i`` is ``values[codes[i]]``.

  Distinct codes must stand for distinct cells (the same value of the same type is one code).

  Attributes:
    codes: int ``(N,)`` code of each row, in ``[0, len(values))``.
    values: object ``(U,)`` the distinct cells.
  """

  codes: np.ndarray
  values: np.ndarray

  def __len__(self) -> int:
    return len(self.codes)

  def cells(self) -> np.ndarray:
    """The object ``(N,)`` column, one cell per row."""
    return self.values[self.codes]


_WHOLE = frozenset(("string", "floating", "integer", "boolean", "empty"))


def factorize_cells(values) -> tuple[np.ndarray, int]:
  """``(codes, num_codes)`` of an object column: equal codes iff equal value of equal type.

  Args:
    values: object ``(N,)`` cells, or a :class:`CodedColumn`.

  Returns:
    int64 ``(N,)`` codes in ``[0, num_codes)``; a column of mixed or unhashable cells gets one
    code per row.

  Examples:
    >>> codes, k = factorize_cells(np.array(["x", None, float("nan"), "x"], dtype=object))
    >>> codes.tolist(), k
    ([0, 1, 2, 0], 3)
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  if isinstance(values, CodedColumn):
    return np.asarray(values.codes, dtype=np.int64), len(values.values)
  values = np.asarray(values, dtype=object)
  n = len(values)
  kind = pd.api.types.infer_dtype(values, skipna=False)
  if kind in _WHOLE:
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64), len(uniques)
  na = pd.isna(values)
  if na.dtype == bool and na.any() and not na.all():
    rest = values[~na]
    if pd.api.types.infer_dtype(rest, skipna=False) == "string":
      codes = np.empty(n, dtype=np.int64)
      rest_codes, uniques = pd.factorize(rest)
      codes[~na] = rest_codes
      kinds = {}
      missing = np.flatnonzero(na)
      codes[missing] = [
        len(uniques) + kinds.setdefault(type(values[i]), len(kinds)) for i in missing
      ]
      return codes, len(uniques) + len(kinds)
  return np.arange(n, dtype=np.int64), n


@dataclasses.dataclass(frozen=True)
class DistinctRows:
  """The distinct rows of a table and the input rows each one stands for.

  Attributes:
    first: int64 ``(U,)`` the first input row of each distinct row (in input order).
    inverse: int64 ``(N,)`` the distinct row of each input row.
    count: int64 ``(U,)`` how many input rows each distinct row stands for.
  """

  first: np.ndarray
  inverse: np.ndarray
  count: np.ndarray

  @property
  def num_rows(self) -> int:
    """Number of input rows ``N``."""
    return len(self.inverse)

  def expand(self, index: np.ndarray) -> np.ndarray:
    """Input rows (ascending) whose distinct row is in the boolean ``(U,)`` mask ``index``."""
    return np.flatnonzero(np.asarray(index, dtype=bool)[self.inverse])


def distinct_rows(columns: Sequence, *, apart: np.ndarray | None = None) -> DistinctRows:
  """Groups the rows of ``columns`` by equal cells (:func:`factorize_cells` per column).

  Args:
    columns: the table's columns, object ``(N,)`` arrays or :class:`CodedColumn`.
    apart: optional boolean ``(N,)``: rows kept apart from every other (e.g. malformed records).

  Returns:
    :class:`DistinctRows`, distinct rows numbered in order of first appearance.

  Examples:
    >>> d = distinct_rows([np.array(["a", "b", "a"], dtype=object), np.array([1, 2, 1], object)])
    >>> d.first.tolist(), d.inverse.tolist(), d.count.tolist()
    ([0, 1], [0, 1, 0], [2, 1])
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  n = len(columns[0]) if columns else 0
  key = np.zeros(n, dtype=np.int64)
  parts = [factorize_cells(c) for c in columns]
  if apart is not None and np.any(apart):
    parts.append((np.where(apart, np.arange(1, n + 1), 0), n + 1))
  for codes, k in parts:
    key = pd.factorize(key * k + codes)[0].astype(np.int64)  # key < N, codes < k <= N + 1
  count = np.bincount(key, minlength=int(key.max()) + 1 if n else 0)
  first = np.full(len(count), n, dtype=np.int64)
  np.minimum.at(first, key, np.arange(n, dtype=np.int64))
  return DistinctRows(first=first, inverse=key, count=count.astype(np.int64))
