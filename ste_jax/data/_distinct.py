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
    inverse: int ``(N,)`` the distinct row of each input row (int64, or int32 from
      :class:`DistinctBatches`).
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
  n = len(columns[0]) if columns else 0
  parts = [factorize_cells(c) for c in columns]
  if apart is not None and np.any(apart):
    parts.append((np.where(apart, np.arange(1, n + 1), 0), n + 1))
  return _group(parts, n)


def _group(parts, n: int) -> DistinctRows:
  """:class:`DistinctRows` of the rows of ``parts``, ``(codes, k)`` per column, codes in
  ``[0, k)``, ``k < 2**62``: the columns' codes combined into one int64 key (renumbered by
  first appearance whenever it would overflow)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  key, span = np.zeros(n, dtype=np.int64), 1  # key in [0, span)
  for codes, k in parts:
    if span * k >= 2**62:  # renumber before the combined key would overflow
      key = pd.factorize(key)[0].astype(np.int64)
      span = int(key.max()) + 1 if n else 1
    key, span = key * k + np.asarray(codes, dtype=np.int64), span * k
  key = pd.factorize(key)[0].astype(np.int64)  # distinct rows in order of first appearance
  count = np.bincount(key, minlength=int(key.max()) + 1 if n else 0)
  first = np.full(len(count), n, dtype=np.int64)
  np.minimum.at(first, key, np.arange(n, dtype=np.int64))
  return DistinctRows(first=first, inverse=key, count=count.astype(np.int64))


# --- Distinct rows of a table read in batches -----------------------------------------------------

_NAN = object()  # the dictionary key of every float NaN (NaN != NaN)


def cell_key(value):
  """A hashable key equal for the same value of the same type (every NaN of a type alike).

  Unhashable cells get a fresh key each time (they are never merged).
  """
  try:
    nan = bool(value != value)  # noqa: PLR0124 - NaN test that also works for NumPy scalars
  except (TypeError, ValueError):  # pd.NA, arrays
    nan = False
  key = (type(value), _NAN if nan else value)
  try:
    hash(key)
  except TypeError:
    return object()
  return key


class GrowingDictionary:
  """Codes of cells, stable across batches: the ``k``-th new cell key gets code ``k``."""

  def __init__(self):
    self._codes: dict = {}

  def __len__(self) -> int:
    return len(self._codes)

  def add(self, keys) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, new)``: int64 code of each of ``keys`` (from :func:`cell_key`), and the
    positions in ``keys`` of the keys seen for the first time (their codes are the next ones)."""
    codes = np.empty(len(keys), dtype=np.int64)
    new = []
    for i, key in enumerate(keys):  # one pass over a batch's distinct cells, not its rows
      code = self._codes.get(key)
      if code is None:
        code = self._codes[key] = len(self._codes)
        new.append(i)
      codes[i] = code
    return codes, np.asarray(new, dtype=np.int64)


class _GrowingIndex:
  """Ids of int64 keys in order of first appearance, over calls (sorted keys, searchsorted)."""

  def __init__(self):
    self._keys = np.zeros(0, dtype=np.int64)
    self._ids = np.zeros(0, dtype=np.int64)

  @property
  def size(self) -> int:
    return len(self._keys)

  def ids(self, keys: np.ndarray) -> np.ndarray:
    """The id of each key; keys never seen get the next ids, in order of first appearance."""
    import pandas as pd  # pylint: disable=g-import-not-at-top

    codes, uniq = pd.factorize(keys)
    uniq = np.asarray(uniq, dtype=np.int64)
    order = np.argsort(uniq)  # sorted needles: a cache-friendly search
    pos = np.empty(len(uniq), dtype=np.int64)
    pos[order] = np.searchsorted(self._keys, uniq[order])
    hit = pos < len(self._keys)
    hit[hit] = self._keys[pos[hit]] == uniq[hit]
    ids = np.empty(len(uniq), dtype=np.int64)
    ids[hit] = self._ids[pos[hit]]
    new = np.flatnonzero(~hit)
    ids[new] = len(self._keys) + np.arange(len(new))
    order = np.argsort(uniq[new], kind="stable")
    at = np.searchsorted(self._keys, uniq[new][order])
    self._keys = np.insert(self._keys, at, uniq[new][order])
    self._ids = np.insert(self._ids, at, ids[new][order])
    return ids[codes]


class DistinctBatches:
  """:func:`distinct_rows` of a table that comes in batches of rows, merged as they come.

  Each batch gives, per column, the int ``(B,)`` codes of its cells in a dictionary that grows
  over the batches (:class:`GrowingDictionary`: the same cell, the same code, in every batch).
  The memory held is that of the distinct rows and of one int per input row (the inverse).

  Args:
    num_columns: number of columns ``k`` of every batch.

  Examples:
    >>> d = DistinctBatches(2)
    >>> d.add([np.array([0, 1]), np.array([0, 0])])
    >>> d.add([np.array([0, 2]), np.array([0, 0])], apart=np.array([False, True]))
    >>> rows, codes = d.result()
    >>> rows.inverse.tolist(), rows.first.tolist(), rows.count.tolist(), codes[:, 0].tolist()
    ([0, 1, 0, 2], [0, 1, 3], [2, 1, 1], [0, 1, 2])
  """

  def __init__(self, num_columns: int):
    self._levels = [_GrowingIndex() for _ in range(num_columns - 1)]
    self._num_columns = num_columns
    self._distinct = np.zeros(0, dtype=np.int64)  # final key -> distinct row (-1: none yet)
    self._inverse, self._first, self._codes, self._counts = [], [], [], []
    self._rows = self._num_distinct = 0

  def add(self, codes: Sequence[np.ndarray], *, apart: np.ndarray | None = None) -> None:
    """Adds a batch: ``codes[j]`` the int ``(B,)`` codes of column ``j``, in ``[0, 2**31)``;
    ``apart`` optional boolean ``(B,)``, rows kept apart from every other (as in
    :func:`distinct_rows`)."""
    n = len(codes[0])
    if n == 0:
      return
    held = [np.asarray(c, dtype=np.int64) for c in codes]
    alone = None
    if apart is not None and np.any(apart):
      alone = np.where(apart, np.arange(1, n + 1), 0)
    parts = [(c, int(c.max()) + 1) for c in held] + ([] if alone is None else [(alone, n + 1)])
    batch = _group(parts, n)
    rows = np.stack([c[batch.first] for c in held], axis=1)  # (U_batch, k) codes
    # The final key of each distinct row of the batch: stable over batches (the codes of the
    # first column, then ids of (key, next code) pairs: ids < 2**31, codes < 2**31).
    key = rows[:, 0].copy()
    for j, level in enumerate(self._levels, start=1):
      key = level.ids((key << 32) + rows[:, j])
    if len(key) and key.max() >= len(self._distinct):
      grown = np.full(max(int(key.max()) + 1, 2 * len(self._distinct)), -1, dtype=np.int64)
      grown[: len(self._distinct)] = self._distinct
      self._distinct = grown
    ids = self._distinct[key]
    alone_u = np.zeros(len(key), bool) if alone is None else alone[batch.first] > 0
    new = (ids < 0) | alone_u
    # New distinct rows, numbered in the batch's order of first appearance (a row apart is new;
    # a key first seen here is new once: the batch's distinct rows are distinct).
    ids[new] = self._num_distinct + np.arange(int(new.sum()))
    self._num_distinct += int(new.sum())
    shared = new & ~alone_u
    self._distinct[key[shared]] = ids[shared]
    self._first.append(self._rows + batch.first[new])
    self._codes.append(rows[new])
    self._counts.append((ids, batch.count))
    dtype = np.int32 if self._num_distinct < 2**31 else np.int64
    self._inverse.append(ids.astype(dtype)[batch.inverse])
    self._rows += n

  def result(self) -> tuple[DistinctRows, np.ndarray]:
    """``(rows, codes)``: the :class:`DistinctRows` of all batches (distinct rows in order of
    first appearance; ``inverse`` int32 when it fits) and the int64 ``(U, k)`` codes of each
    distinct row."""
    num = self._num_distinct
    count = np.zeros(num, dtype=np.int64)
    for ids, times in self._counts:
      count[ids] += times  # a batch's distinct rows are distinct
    first = np.concatenate(self._first) if self._first else np.zeros(0, dtype=np.int64)
    codes = (
      np.concatenate(self._codes)
      if self._codes
      else np.zeros((0, self._num_columns), dtype=np.int64)
    )
    dtype = np.int32 if num < 2**31 else np.int64
    inverse = np.concatenate(self._inverse) if self._inverse else np.zeros(0, dtype=dtype)
    self._inverse = []
    return DistinctRows(first=first, inverse=inverse, count=count), codes


class GrowingCells:
  """An object column read in batches: its cells' codes in a dictionary that grows over them.

  Cells are merged when they are the same value of the same type (:func:`cell_key`; within a
  batch, :func:`factorize_cells`), so a code stands for one cell in every batch.

  Examples:
    >>> column = GrowingCells()
    >>> column.codes(np.array(["x", None], dtype=object)).tolist()
    [0, 1]
    >>> column.codes(np.array(["y", "x"], dtype=object)).tolist(), column.cells().tolist()
    ([2, 0], ['x', None, 'y'])
  """

  def __init__(self):
    self._dictionary = GrowingDictionary()
    self._values = []

  def codes(self, cells: np.ndarray) -> np.ndarray:
    """int64 ``(B,)`` codes of a batch's object ``(B,)`` cells."""
    cells = np.asarray(cells, dtype=object)
    local, k = factorize_cells(cells)
    first = np.full(k, len(cells), dtype=np.int64)
    np.minimum.at(first, local, np.arange(len(cells), dtype=np.int64))
    shown = cells[first]
    codes, new = self._dictionary.add([cell_key(v) for v in shown])
    self._values.extend(shown[new].tolist() if len(new) else [])
    return codes[local]

  def cells(self) -> np.ndarray:
    """object ``(K,)`` the cell of each code."""
    import pandas as pd  # pylint: disable=g-import-not-at-top

    return pd.Series(self._values, dtype=object).to_numpy()  # a list stays one cell
