"""Comparison tables from data frames and files (CSV, TSV, JSONL, JSON, Parquet).

Two schemas are understood, and their column names are detected automatically:

* the Chatbot Arena battle schema: columns ``model_a``, ``model_b``, ``winner`` with winner in
  ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``;
* the simple schema of ``shared/data/*/comparisons.csv``: columns ``a``, ``b``, ``winner`` in
  ``a``, ``b``, ``tie`` and an optional ``context``.

A winner equal to one of the row's two agent names is accepted in both. pandas (and pyarrow for
Parquet) are imported lazily, inside the functions.
"""

import bz2
import csv
import gzip
import json
import lzma
import os

import numpy as np

from . import _report as R
from ._comparisons import Comparisons
from ._report import LoadReport
from ._rows import parse_comparison_rows

_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_COMPRESSION = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def resolve_columns(available, *, a, b, winner, context, weight, where: str) -> dict:
  """Maps roles (a, b, winner, context, weight) to column names, checking that they exist.

  ``a``/``b`` ``None``: ``model_a``/``model_b`` when present, else ``a``/``b`` when both present.
  ``context`` ``None``: the column ``context`` when present, else no context; ``False``: none.
  """
  available = list(available)
  if a is None and b is None:
    if "model_a" not in available and "model_b" not in available and {"a", "b"} <= set(available):
      a, b = "a", "b"
    else:
      a, b = "model_a", "model_b"
  elif a is None or b is None:
    raise ValueError("pass both `a` and `b` column names, or neither (auto-detect).")
  if context is None:
    context = "context" if "context" in available else False
  cols = {"a": a, "b": b, "winner": winner}
  if context is not False:
    cols["context"] = context
  if weight is not None:
    cols["weight"] = weight
  for role, name in cols.items():
    if name not in available:
      hint = " (nor the simple-schema columns 'a' and 'b')" if role in ("a", "b") else ""
      raise ValueError(
          f"column {name!r} ({role}) not found{hint} in {where}; available columns: {available}."
      )
  return cols


def from_dataframe(
    df,
    a: str | None = None,
    b: str | None = None,
    winner: str = "winner",
    context: str | bool | None = None,
    *,
    weight: str | None = None,
    agents=None,
    contexts=None,
    strict: bool = False,
) -> tuple[Comparisons, LoadReport]:
  """Comparisons from a pandas DataFrame of battles.

  Each row is one comparison between the agents named in columns ``a`` and ``b``; the ``winner``
  column says who won (see the module docstring for the labels). Bad rows are reported, never
  silently dropped: a row with an empty cell, a NaN, an unknown winner label, the same agent on
  both sides, an invalid weight, or (when ``agents``/``contexts`` are fixed) an unknown name is
  listed in ``report.rejected`` with its 1-based row number. ``None``, ``pd.NA`` and empty strings
  are *missing*; a float NaN is reported as ``"NaN"`` (note that pandas string columns store
  missing values as NaN, so there both read as ``"NaN"``).

  Args:
    df: a ``pandas.DataFrame``.
    a: column with the first agent's name. Default: ``"model_a"``, or ``"a"`` when the frame has
      columns ``a`` and ``b`` and no ``model_a``.
    b: column with the second agent's name (default as for ``a``).
    winner: column with the winner label.
    context: column with the context (category, prompt, task family). Default: ``"context"``
      when the frame has one, else no context; ``False`` ignores any context column.
    weight: optional column with non-negative row weights (default: every row counts once).
    agents: optional fixed list of agent names (sets the index order); default: the sorted
      distinct names of the usable rows.
    contexts: optional fixed list of context names; default: sorted distinct contexts.
    strict: raise ``ValueError`` on the first bad row (naming its row number) instead of
      reporting it.

  Returns:
    ``(comparisons, report)``: a :class:`Comparisons` and a :class:`LoadReport`.

  Raises:
    ValueError: a named column is missing (the message names it), the frame has no rows or no
      usable rows (``"no comparisons"``), or ``strict`` and a row is bad.

  Examples:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"model_a": ["gpt", "gpt"], "model_b": ["llama", "gpt"],
    ...                    "winner": ["model_a", "tie"]})
    >>> c, report = from_dataframe(df)
    >>> c.agents, report.rows_used, report.rejected[0].describe()
    (('gpt', 'llama'), 1, "line 2: self-comparison ('gpt' vs itself)")
  """
  cols = resolve_columns(
      df.columns, a=a, b=b, winner=winner, context=context, weight=weight, where="the data frame"
  )
  raw = {role: df[name].to_numpy(dtype=object) for role, name in cols.items()}
  lines = np.arange(1, len(df) + 1)
  return parse_comparison_rows(
      raw, lines, columns=cols, agents=agents, contexts=contexts, strict=strict, source=None
  )


def load_comparisons(
    path,
    *,
    format: str = "auto",  # pylint: disable=redefined-builtin
    strict: bool = False,
    a: str | None = None,
    b: str | None = None,
    winner: str = "winner",
    context: str | bool | None = None,
    weight: str | None = None,
    agents=None,
    contexts=None,
) -> tuple[Comparisons, LoadReport]:
  """Loads comparisons from a CSV, TSV, JSONL, JSON or Parquet file.

  The columns and winner labels are those of :func:`from_dataframe` (Chatbot Arena or simple
  schema, detected automatically). Line numbers in the report: for CSV/TSV the header is line 1
  (the first data row is line 2, a quoted field spanning lines is reported at its first line);
  for JSONL the first line is line 1 and blank lines are skipped (not counted as rows); for JSON
  arrays and Parquet files, the 1-based record number. A CSV row with the wrong number of fields,
  or a JSONL line that is not a JSON object, is rejected as ``"malformed record"``.

  Args:
    path: file path. ``.gz``, ``.bz2`` and ``.xz`` compression is handled for text formats.
    format: ``"auto"`` (from the file suffix), ``"csv"``, ``"tsv"``, ``"jsonl"``, ``"json"`` or
      ``"parquet"``. A ``.json`` file that holds JSON lines is read as JSONL.
    strict: raise on the first bad row (naming its line number) instead of reporting it.
    a, b, winner, context, weight, agents, contexts: as in :func:`from_dataframe`.

  Returns:
    ``(comparisons, report)``.

  Raises:
    ValueError: unknown format, a named column missing from the file (the message names it), an
      empty file or a file without usable rows (``"no comparisons"``), or ``strict`` and a bad row.
  """
  path = os.fspath(path)
  fmt, opener = _detect_format(path, format)
  if fmt in ("csv", "tsv"):
    available, column, lines, pre = _read_csv(path, opener, "\t" if fmt == "tsv" else ",")
  elif fmt == "jsonl":
    available, column, lines, pre = _read_jsonl(path, opener)
  elif fmt == "json":
    available, column, lines, pre = _read_json(path, opener)
  else:
    available, column, lines, pre = _read_parquet(path)
  if len(lines) == 0:
    raise ValueError(f"no comparisons in {path}: the file is empty (no data rows).")
  cols = resolve_columns(
      available, a=a, b=b, winner=winner, context=context, weight=weight, where=path
  )
  raw = {role: column(name) for role, name in cols.items()}
  return parse_comparison_rows(
      raw,
      lines,
      columns=cols,
      agents=agents,
      contexts=contexts,
      strict=strict,
      source=path,
      pre=pre,
  )


def _detect_format(path: str, format: str):  # pylint: disable=redefined-builtin
  """``(format, opener)`` from the suffixes of ``path`` or the explicit ``format``."""
  root, ext = os.path.splitext(path.lower())
  opener = _COMPRESSION.get(ext)
  if opener is not None:
    root, ext = os.path.splitext(root)
  if format == "auto":
    if ext not in _FORMATS:
      raise ValueError(
          f"cannot infer the format of {path!r} from its suffix; pass format= one of "
          f"{sorted(set(_FORMATS.values()))}."
      )
    format = _FORMATS[ext]
  if format not in set(_FORMATS.values()):
    raise ValueError(
        f"unknown format {format!r}; expected one of {sorted(set(_FORMATS.values()))}."
    )
  return format, opener


def _open_text(path: str, opener):
  if opener is None:
    return open(path, encoding="utf-8-sig", newline="")  # pylint: disable=consider-using-with
  return opener(path, "rt", encoding="utf-8-sig", newline="")


def object_column(values) -> np.ndarray:
  """A 1-D object array holding ``values`` as they are (lists stay single cells)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  return pd.Series(list(values), dtype=object).to_numpy()


def _read_csv(path: str, opener, delimiter: str):
  """Reads a delimited file: (header, column getter, record start lines, pre-rejections)."""
  rows, lines = [], []
  with _open_text(path, opener) as f:
    reader = csv.reader(f, delimiter=delimiter)
    header = next(reader, None)
    if header is None:
      return [], None, np.zeros(0, dtype=np.int64), None
    header = [h.strip() for h in header]
    prev = reader.line_num
    for record in reader:
      start, prev = prev + 1, reader.line_num
      if not record:  # a blank line is not a record
        continue
      rows.append(record)
      lines.append(start)
  width = len(header)
  pre = object_column(
      None if len(r) == width else (R.MALFORMED, f"expected {width} fields, got {len(r)}")
      for r in rows
  )

  def column(name):
    j = header.index(name)
    return object_column(r[j] if len(r) == width else None for r in rows)

  return header, column, np.asarray(lines, dtype=np.int64), pre


def _read_jsonl(path: str, opener):
  """Reads JSON lines: one object per non-blank line."""
  with _open_text(path, opener) as f:
    text_lines = f.read().splitlines()
  return _parse_jsonl_lines(text_lines)


def _parse_jsonl_lines(text_lines):
  records, lines, pre = [], [], []
  keys = {}
  for number, text in enumerate(text_lines, start=1):
    if not text.strip():
      continue
    lines.append(number)
    try:
      rec = json.loads(text)
    except json.JSONDecodeError as e:
      records.append(None)
      pre.append((R.MALFORMED, f"invalid JSON: {e.msg}"))
      continue
    if not isinstance(rec, dict):
      records.append(None)
      pre.append((R.MALFORMED, f"expected a JSON object, got {type(rec).__name__}"))
      continue
    records.append(rec)
    pre.append(None)
    keys.update(dict.fromkeys(rec))
  return _records_table(records, lines, pre, keys)


def _records_table(records, lines, pre, keys):
  def column(name):
    return object_column(None if r is None else r.get(name) for r in records)

  return list(keys), column, np.asarray(lines, dtype=np.int64), object_column(pre)


def _read_json(path: str, opener):
  """Reads a JSON array of records, a columnar JSON object, or (fallback) JSON lines."""
  with _open_text(path, opener) as f:
    text = f.read()
  if not text.strip():
    return [], None, np.zeros(0, dtype=np.int64), None
  try:
    data = json.loads(text)
  except json.JSONDecodeError:
    return _parse_jsonl_lines(text.splitlines())
  if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
    lengths = {len(v) for v in data.values()}
    if len(lengths) > 1:
      raise ValueError(
          f"{path}: columnar JSON with columns of different lengths {sorted(lengths)}."
      )
    num = lengths.pop() if lengths else 0
    data = [{k: v[i] for k, v in data.items()} for i in range(num)]
  if not isinstance(data, list):
    raise ValueError(f"{path}: expected a JSON array of records, got {type(data).__name__}.")
  records, pre, keys = [], [], {}
  for rec in data:
    if isinstance(rec, dict):
      records.append(rec)
      pre.append(None)
      keys.update(dict.fromkeys(rec))
    else:
      records.append(None)
      pre.append((R.MALFORMED, f"expected a JSON object, got {type(rec).__name__}"))
  return _records_table(records, np.arange(1, len(records) + 1), pre, keys)


def _read_parquet(path: str):
  import pandas as pd  # pylint: disable=g-import-not-at-top

  df = pd.read_parquet(path)
  return (
      [str(c) for c in df.columns],
      lambda name: df[name].to_numpy(dtype=object),
      np.arange(1, len(df) + 1),
      None,
  )
