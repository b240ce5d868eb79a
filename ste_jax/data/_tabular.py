"""Comparison tables from data frames and files (CSV, TSV, JSONL, JSON, Parquet, PGN, lm-eval).

The file formats are read here; the *schema* (which columns mean what: Chatbot Arena battles,
MT-Bench or Arena-Hard judgments, AlpacaEval annotations, Inspect or lm-evaluation-harness
per-sample logs, a generic task table, or the simple ``a, b, winner`` table) is detected from the
columns by :mod:`ste_jax.data._schemas`, which hands the columns to that schema's loader. pandas
(and pyarrow for Parquet) are imported lazily, inside the functions.
"""

import array
import bz2
from collections.abc import Mapping
import contextlib
import csv
import dataclasses
import gc
import gzip
import io
import json
import lzma
import os
import re
import sys
from typing import TYPE_CHECKING, Any
import warnings
import zlib

import numpy as np

from ste_jax import _tuning
from ste_jax._errors import InputError

from . import _distinct
from . import _report as R
from ._comparisons import Comparisons
from ._counts_rows import is_counts_header
from ._distinct import CodedColumn
from ._report import LoadReport, refuse_or_skip
from ._schemas import detect_schema, load_table
from ._settings import LoadSettings, load_settings

if TYPE_CHECKING:
  import pandas as pd

_FORMATS = {
  ".csv": "csv",
  ".tsv": "tsv",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".json": "json",
  ".parquet": "parquet",
  ".pq": "parquet",
  ".pgn": "pgn",
}
_COMPRESSION = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def from_dataframe(
  df: "pd.DataFrame", settings: LoadSettings | None = None, **overrides: Any
) -> tuple[Comparisons, LoadReport]:
  """Comparisons from a pandas DataFrame of battles (or of any schema of ``load_comparisons``).

  Each row is one comparison between the agents named in columns ``a`` and ``b``; the ``winner``
  column says who won (see :func:`load_comparisons` for the labels). Bad rows are never
  silently dropped: a row with an empty cell, a NaN, a list or other non-scalar cell, an unknown
  winner label, the same agent on both sides, an invalid weight, or (when ``agents``/``contexts``
  are fixed) an unknown name is refused (:class:`~ste_jax.InputError`) unless
  ``skip_bad_rows=True``; then it is listed in ``report.rejected`` with its 1-based row number.
  ``None``, ``pd.NA`` and empty strings are *missing*; a float NaN is reported as ``"NaN"``
  (note that pandas string columns store missing values as NaN, so there both read as
  ``"NaN"``).

  Args:
    df: a ``pandas.DataFrame``.
    settings: the loading options, a :class:`~ste_jax.data.LoadSettings` (default: its
      defaults). Its fields: the columns ``a``, ``b`` (default ``"model_a"``/``"model_b"``, or
      ``"a"``/``"b"`` when the frame has those and no ``model_a``), ``winner``, ``context``
      (default ``"context"`` when present; ``False`` ignores any context column) and ``weight``
      (non-negative row weights); fixed ``agents``/``contexts`` names; ``skip_bad_rows``
      (drop bad rows with a :class:`~ste_jax.data.BadRowsWarning` instead of refusing them);
      ``strict`` (stop at the first bad row, naming its row number); ``schema`` (``"auto"``:
      detected from the columns, the arena/simple schema when ``a``/``b`` are given); the outcome
      ``policy``; the schema options ``baseline``, ``metric``, ``agent``, ``task``, ``score``.
    **overrides: fields of :class:`~ste_jax.data.LoadSettings` replacing those of ``settings``
      (``from_dataframe(df, weight="w")``).

  Returns:
    ``(comparisons, report)``: a :class:`Comparisons` and a :class:`LoadReport`.

  Raises:
    TypeError: an override that is no field of :class:`~ste_jax.data.LoadSettings`.
    InputError: a named column is missing (the message names it), the frame has no rows or no
      usable rows (``"no comparisons"``), bad rows without ``skip_bad_rows`` (the message gives
      the reasons, their counts and first row numbers), or ``strict`` and a row is bad.
    ValueError: a ``format`` other than ``"auto"`` (data frames have no file format).

  Examples:
    >>> import warnings
    >>> import pandas as pd
    >>> from ste_jax import InputError
    >>> df = pd.DataFrame({"model_a": ["gpt", "gpt"], "model_b": ["llama", "gpt"],
    ...                    "winner": ["model_a", "tie"]})
    >>> try:
    ...   from_dataframe(df)
    ... except InputError as e:
    ...   print(str(e).split(";")[0])
    the data frame: 1 bad row of 2: self-comparison: 1 (first at line 2: 'gpt' vs itself)
    >>> with warnings.catch_warnings(record=True):
    ...   warnings.simplefilter("always")
    ...   c, report = from_dataframe(df, skip_bad_rows=True)
    >>> c.agents, report.rows_used, report.rejected[0].describe()
    (('gpt', 'llama'), 1, "line 2: self-comparison ('gpt' vs itself)")
  """
  settings = load_settings(settings, overrides, "from_dataframe")
  if settings.format != "auto":
    raise ValueError(
      f"format={settings.format!r} applies to files only; a data frame has no file format."
    )
  header = [str(c) for c in df.columns]
  if len(set(header)) != len(header):
    dup = sorted({c for c in header if header.count(c) > 1})
    raise InputError(f"the data frame: duplicated column names {dup}.")
  columns = dict(zip(header, df.columns))

  def column(name):
    return df[columns[name]].to_numpy(dtype=object)

  lines = np.arange(1, len(df) + 1)
  comparisons, report = _dispatch(
    header, column, lines, None, settings, source=None, where="the data frame"
  )
  return comparisons, refuse_or_skip(report, settings.skip_bad_rows)


def load_rows(
  data: "pd.DataFrame | str | os.PathLike",
  settings: LoadSettings | None,
  *,
  skip_bad_rows: bool,
  caller: str,
) -> tuple[Comparisons, LoadReport]:
  """Raw rows (a data frame or a file path) -> ``(comparisons, report)``, bad rows refused.

  The loader of the entry points that also take raw tables (:func:`~ste_jax.evaluate.leaderboard`):
  :func:`from_dataframe` or :func:`load_comparisons` with ``settings`` (default: its defaults),
  ``skip_bad_rows`` added when true.

  Raises:
    TypeError: ``data`` is neither a data frame nor a path (the message names ``caller``).
    InputError: as :func:`load_comparisons` (bad rows without ``skip_bad_rows``, no usable row).
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  settings = load_settings(settings, {"skip_bad_rows": True} if skip_bad_rows else {}, caller)
  if isinstance(data, (str, os.PathLike)):
    return load_comparisons(data, settings)
  if isinstance(data, pd.DataFrame):
    return from_dataframe(data, settings)
  raise TypeError(
    f"{caller}: data must be a ste_jax.data.Comparisons, a pandas DataFrame or a file path, "
    f"got {type(data).__name__}."
  )


def _dispatch(header, column, lines, pre, settings, *, source, where, sources=None, files=None):
  """Resolves ``settings.schema`` (``"auto"``: detection) and calls the schema's loader."""
  schema = settings.schema
  if schema == "auto":
    if is_counts_header(header):  # wins_a, wins_b: counts, whichever agent columns are named
      schema = detect_schema(header, where) or "counts"
    elif settings.a is not None or settings.b is not None:
      schema = "arena" if settings.a == "model_a" else "simple"
    else:
      # None matches: the errors of the table the columns come closest to (a and b, but no
      # winner: the simple schema's, which name the missing winner column).
      h = set(header)
      simple = {"a", "b"} <= h and not {"model_a", "model_b"} & h
      schema = detect_schema(header, where) or ("simple" if simple else "arena")
  return load_table(
    header, column, lines, pre, settings, schema=schema, source=source, sources=sources, files=files
  )


def load_comparisons(
  path: str | os.PathLike, settings: LoadSettings | None = None, **overrides: Any
) -> tuple[Comparisons, LoadReport]:
  """Loads comparisons from a CSV, TSV, JSONL, JSON or Parquet file, or an lm-eval folder.

  The schema is detected from the columns (``schema="auto"``) or given:

  * ``"arena"``: Chatbot Arena battles ``model_a, model_b, winner`` (``model_a``, ``model_b``,
    ``tie``, ``tie (bothbad)``/``both_bad``), or the 55k release's one-hot ``winner_model_a,
    winner_model_b, winner_tie``; ``model_a`` was shown first (position bias reported);
  * ``"mtbench"``: MT-Bench pairwise judgments ``model_1, model_2, g1_winner, g2_winner``;
  * ``"arena-hard"``: Arena-Hard judgment records ``model, games`` (verdicts ``A>>B`` ...
    ``B>>A`` against the baseline);
  * ``"alpacaeval"``: AlpacaEval annotations ``generator_1, generator_2, preference``;
  * ``"inspect"``: Inspect AI sample tables ``model, id, epoch, score_<scorer>``;
  * ``"lm-eval"``: lm-evaluation-harness ``samples_<task>_<time>.jsonl`` (a file, or the output
    folder with one sub-folder per model);
  * ``"tasks"``: a long table ``agent, task, score`` (column names ``agent``/``task``/``score``);
  * ``"simple"``: ``a, b, winner`` with ``a``, ``b``, ``tie`` and an optional ``context``;
  * ``"winner-loser"``: tennis-style match files ``winner_name, loser_name`` or ``winner, loser``;
  * ``"scores"``: game results ``home_team, away_team, home_score, away_score`` or ``team1, team2,
    score1, score2`` (higher score wins, equal scores tie; home advantage reported);
  * ``"chess"``: ``White, Black, Result`` (a ``.pgn`` file, or a table) or the lichess export's
    ``white_id, black_id, winner`` (white's advantage reported).

  Each schema's conventions are documented in its loader module (``_judges``, ``_preferences``,
  ``_per_sample``, ``_games``); the report names the schema and lists every mapping applied. Rows
  with an empty context go to the context ``(none)``. Line numbers in the report: for CSV/TSV the
  header is line 1 (the first data row is line 2, a quoted field spanning lines is reported at its
  first line); for JSONL the first line is line 1 and blank lines are skipped (not counted as
  rows); for JSON arrays and Parquet files, the 1-based record number; for PGN files, the line of
  each game's first tag pair (each game's tags are its fields; the movetext is not read). A CSV
  row with the wrong number of fields, or a JSONL line that is not a JSON object, is rejected as
  ``"malformed record"``.

  Args:
    path: file path. ``.gz``, ``.bz2`` and ``.xz`` compression is handled for text formats.
    settings: the loading options, a :class:`~ste_jax.data.LoadSettings` (default: its
      defaults): ``format`` (``"auto"``: from the file suffix, or ``"csv"``, ``"tsv"``,
      ``"jsonl"``, ``"json"``, ``"parquet"``, ``"pgn"``; a ``.json`` file that holds JSON lines
      is read as JSONL; a PGN file is read with the ``chess`` schema unless its tags match
      another one), ``schema`` (``"auto"`` or one of the schemas above), ``strict`` (raise on
      the first bad row, naming its line number, instead of reporting it), the columns ``a``,
      ``b``, ``winner``, ``weight`` and ``context`` (as in :func:`from_dataframe`; ``context``
      names the context column for every schema, default: ``context`` when present; Inspect:
      ``task_name``; lm-eval: the task), fixed ``agents``/``contexts``, the outcome ``policy``
      (ties, both-bad, soft outcomes, strong verdicts, two-order judges), ``baseline``
      (Arena-Hard baseline when the records have no ``baseline`` field, default
      ``gpt-4-0314``), ``metric`` (Inspect score column / lm-eval metric field, default:
      detected) and ``agent``, ``task``, ``score`` (the ``tasks`` schema's column names).
    **overrides: fields of :class:`~ste_jax.data.LoadSettings` replacing those of ``settings``
      (``load_comparisons(path, schema="tasks", context="env")``).

  Returns:
    ``(comparisons, report)``.

  Raises:
    TypeError: an override that is no field of :class:`~ste_jax.data.LoadSettings`.
    InputError: unknown format, a file without a known suffix (pass ``format=``, ``--format``
      on the command line), an ambiguous schema (the message lists the candidates), a named
      column missing from the file (the message names it), an empty, unparsable or damaged
      (compressed) file, a file without usable rows (``"no comparisons"``, with the top
      rejection reasons and their first line numbers), bad rows without ``skip_bad_rows`` (the
      reasons, counts and first line numbers), or ``strict`` and a bad row.

  Example:
    >>> import os, tempfile, warnings
    >>> path = os.path.join(tempfile.mkdtemp(), "battles.csv")
    >>> with open(path, "w") as f:
    ...   _ = f.write("a,b,winner\\nx,y,a\\ny,x,tie\\nx,x,a\\n")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...   warnings.simplefilter("always")
    ...   c, report = load_comparisons(path, policy={"tie": "drop"}, skip_bad_rows=True)
    >>> report.rows_read, report.rows_used, [r.line for r in report.rejected]
    (3, 1, [3, 4])
    >>> str(caught[0].message).split(": ", 1)[1].split(";")[0]
    "1 bad row of 3: self-comparison: 1 (first at line 4: 'x' vs itself)"
  """
  settings = load_settings(settings, overrides, "load_comparisons")
  path = os.fspath(path)
  files = sources = None
  if os.path.isdir(path):
    available, column, lines, pre, sources, files = _read_samples_folder(path)
  else:
    fmt, opener = _detect_format(path, settings.format)
    if fmt in ("csv", "tsv"):
      available, column, lines, pre = _read_csv(path, opener, "\t" if fmt == "tsv" else ",")
    elif fmt == "jsonl":
      available, column, lines, pre = _read_jsonl(path, opener)
    elif fmt == "json":
      available, column, lines, pre = _read_json(path, opener)
    elif fmt == "pgn":
      available, column, lines, pre = _read_pgn(path, opener)
      if settings.schema == "auto":  # tags of another kind than White/Black/Result: chess's error
        schema = detect_schema(available, path) or "chess"
        settings = dataclasses.replace(settings, schema=schema)
    else:
      available, column, lines, pre = _read_parquet(path)
    if os.path.basename(path).startswith("samples_"):
      files = np.full(len(lines), path, dtype=object)
  if len(lines) == 0:
    raise InputError(f"no comparisons in {path}: the file is empty (no data rows).")
  if len(set(available)) != len(available):
    dup = sorted({c for c in available if available.count(c) > 1})
    raise InputError(f"{path}: duplicated column names {dup} in the header.")
  comparisons, report = _dispatch(
    available,
    column,
    lines,
    pre,
    settings,
    source=path,
    where=path,
    sources=sources,
    files=files,
  )
  return comparisons, refuse_or_skip(report, settings.skip_bad_rows)


def _read_samples_folder(path: str):
  """Every ``samples_*.jsonl`` under ``path`` (lm-eval's output folder), concatenated."""
  found = []
  for root, _, names in os.walk(path):
    found += [
      os.path.join(root, n) for n in names if n.startswith("samples_") and n.endswith(".jsonl")
    ]
  if not found:
    raise InputError(f"{path} is a folder without lm-eval samples_*.jsonl files; pass a file.")
  parts = [(f, *_read_jsonl(f, None)) for f in sorted(found)]
  header = list(dict.fromkeys(k for _, h, *_ in parts for k in h))

  def column(name):
    return (
      np.concatenate(
        [
          col(name) if name in h else np.full(len(ln), None, dtype=object)
          for _, h, col, ln, _ in parts
        ]
      )
      if parts
      else object_column([])
    )

  lines = np.concatenate([ln for *_, ln, _ in parts])
  pre = np.concatenate([p for *_, p in parts])
  files = np.concatenate([np.full(len(ln), f, dtype=object) for f, _, _, ln, _ in parts])
  sources = np.array([os.path.relpath(f, path) for f in files], dtype=object)
  return header, column, lines, pre, sources, files


def _detect_format(path: str, format: str):  # pylint: disable=redefined-builtin
  """``(format, opener)`` from the suffixes of ``path`` or the explicit ``format``."""
  root, ext = os.path.splitext(path.lower())
  opener = _COMPRESSION.get(ext)
  if opener is not None:
    root, ext = os.path.splitext(root)
  if format == "auto":
    if ext not in _FORMATS:
      raise InputError(
        f"cannot infer the file format of {path!r} from its suffix (known: "
        f"{', '.join(_FORMATS)}, each optionally .gz/.bz2/.xz); pass format= one of "
        f"{sorted(set(_FORMATS.values()))} (--file-format on the command line), or rename the "
        "file."
      )
    format = _FORMATS[ext]
  if format not in set(_FORMATS.values()):
    raise InputError(
      f"unknown format {format!r}; expected one of {sorted(set(_FORMATS.values()))}."
    )
  return format, opener


_ARCHIVE = {gzip.open: "gzip", bz2.open: "bz2", lzma.open: "xz"}
_CHUNK = 1 << 22  # bytes decompressed per read


def _read_bytes(path: str, opener) -> bytes:
  """The file's bytes, decompressed by ``opener`` (``None``: read as they are).

  Raises:
    InputError: a damaged archive (truncated, corrupt): ``"<file>: damaged gzip archive:
      <reason> after reading N lines"``, N the complete lines decompressed before the damage.
  """
  if opener is None:
    with open(path, "rb") as f:
      return f.read()
  chunks = []
  with opener(path, "rb") as f:
    try:
      while chunk := f.read1(_CHUNK):
        chunks.append(chunk)
    except (EOFError, OSError, zlib.error, lzma.LZMAError) as e:
      lines = sum(c.count(b"\n") for c in chunks)
      reason = str(e).splitlines()[0] if str(e) else type(e).__name__
      raise InputError(
        f"{path}: damaged {_ARCHIVE.get(opener, 'compressed')} archive: {reason} after reading "
        f"{lines} line{'' if lines == 1 else 's'}"
      ) from None
  return b"".join(chunks)


def _open_text(path: str, opener):
  """A text stream of the file (UTF-8, a BOM dropped, newlines untranslated)."""
  if opener is None:
    return open(path, encoding="utf-8-sig", newline="")  # pylint: disable=consider-using-with
  return io.StringIO(_read_bytes(path, opener).decode("utf-8-sig"), newline="")


@contextlib.contextmanager
def _csv_field_limit(size: int):
  """Lets the ``csv`` module read fields of up to ``size`` characters (its default: 131,072).

  A quoted field can span the whole file, so the limit is raised to the file's size while it is
  read, and restored after.
  """
  old = csv.field_size_limit()
  csv.field_size_limit(max(old, min(size + 1, sys.maxsize)))
  try:
    yield
  finally:
    csv.field_size_limit(old)


def object_column(values) -> np.ndarray:
  """A 1-D object array holding ``values`` as they are (lists stay single cells)."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  return pd.Series(list(values), dtype=object).to_numpy()


def _read_csv(path: str, opener, delimiter: str):
  """Reads a delimited file: (header, column getter, record start lines, pre-rejections).

  Files without quote characters (the common case for large battle logs) are read by the
  vectorized :func:`_read_csv_unquoted`; the others, and anything it is unsure of, by the
  ``csv`` module, one record at a time (:func:`_read_csv_records`). Both give the same records,
  line numbers and rejections, and both stream: the file is read in blocks of at most
  ``_BATCH_ROWS`` lines (or records), once to find the records' lines and pre-rejections and again
  for each request of columns, so the memory held is one block, the records' line numbers and
  what the columns asked for hold (the distinct rows only, for ``column.distinct``), never the
  file's bytes. ``pre`` is ``None`` when no record is pre-rejected.
  """
  fast = _read_csv_unquoted(path, opener, delimiter)
  if fast is not None:
    return fast
  return _read_csv_records(path, opener, delimiter)


def _byte_chunks(path: str, opener):
  """The file's bytes in chunks of up to ``_CHUNK`` bytes, decompressed by ``opener``.

  Raises:
    InputError: a damaged archive, as :func:`_read_bytes` (the same message and line count).
  """
  if opener is None:
    with open(path, "rb") as f:
      while chunk := f.read(_CHUNK):
        yield chunk
    return
  lines = 0
  with opener(path, "rb") as f:
    try:
      while chunk := f.read1(_CHUNK):
        lines += chunk.count(b"\n")
        yield chunk
    except (EOFError, OSError, zlib.error, lzma.LZMAError) as e:
      reason = str(e).splitlines()[0] if str(e) else type(e).__name__
      raise InputError(
        f"{path}: damaged {_ARCHIVE.get(opener, 'compressed')} archive: {reason} after reading "
        f"{lines} line{'' if lines == 1 else 's'}"
      ) from None


def _line_blocks(path: str, opener, max_lines: int):
  """``(block, first_line)``: the file's bytes (a UTF-8 BOM dropped) cut into blocks of whole
  lines, at most ``max_lines`` (``\\n``-ended; the last block may end without one), and the
  1-based line number of each block's first line."""
  pieces, count, line, first = [], 0, 1, True  # the lines not yet given, their newlines
  for chunk in _byte_chunks(path, opener):
    if first:
      pieces.append(chunk)
      head = b"".join(pieces)
      if len(head) < 3 and head == b"\xef\xbb\xbf"[: len(head)]:
        continue  # too short to tell whether the file starts with a BOM
      pieces, chunk, first = [], head[3:] if head.startswith(b"\xef\xbb\xbf") else head, False
    found = chunk.count(b"\n")
    if count + found < max_lines:
      pieces.append(chunk)
      count += found
      continue
    data = b"".join([*pieces, chunk]) if pieces else chunk
    del pieces, chunk  # held by data now
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    cuts = [0, *(newlines[max_lines - 1 :: max_lines] + 1).tolist()]
    count = len(newlines) - (len(cuts) - 1) * max_lines
    del newlines
    ready = [data[s:e] for s, e in zip(cuts[:-1], cuts[1:])]
    pieces = [data[cuts[-1] :]] if cuts[-1] < len(data) else []
    del data
    ready.reverse()
    while ready:
      yield ready.pop(), line
      line += max_lines
  if first and pieces:  # a file of fewer than 3 bytes
    pieces = [b"".join(pieces)]
  rest = b"".join(pieces)
  if rest:
    yield rest, line


class _BlockStream(io.RawIOBase):
  """A readable binary stream of the chunks of :func:`_byte_chunks`."""

  def __init__(self, chunks):
    super().__init__()
    self._chunks, self._view, self._at = chunks, memoryview(b""), 0

  def readable(self) -> bool:
    return True

  def readinto(self, b) -> int:
    while self._at >= len(self._view):
      chunk = next(self._chunks, None)
      if chunk is None:
        return 0
      self._view, self._at = memoryview(chunk), 0
    n = min(len(b), len(self._view) - self._at)
    b[:n] = self._view[self._at : self._at + n]
    self._at += n
    return n


def _csv_records(path: str, opener, delimiter: str):
  """The ``csv`` module's records of a delimited file, read as a stream: first the header (its
  names stripped; ``None`` for an empty file), then ``(line, record)`` for each record that is
  not a blank line, ``line`` the record's first physical line."""
  if opener is None:
    f, size = open(path, encoding="utf-8-sig", newline=""), os.path.getsize(path)  # pylint: disable=consider-using-with
  else:  # the decompressed size is unknown: no limit on the size of a field
    f = io.TextIOWrapper(
      io.BufferedReader(_BlockStream(_byte_chunks(path, opener)), _CHUNK),
      encoding="utf-8-sig",
      newline="",
    )
    size = sys.maxsize
  with f, _csv_field_limit(size):
    reader = csv.reader(f, delimiter=delimiter)
    header = next(reader, None)
    yield None if header is None else [h.strip() for h in header]
    if header is None:
      return
    prev = reader.line_num
    for record in reader:
      start, prev = prev + 1, reader.line_num
      if record:  # a blank line is not a record
        yield start, record


@contextlib.contextmanager
def _records_past_header(path: str, opener, delimiter: str):
  """The ``(line, record)`` pairs of :func:`_csv_records` past the header (a context)."""
  with contextlib.closing(_csv_records(path, opener, delimiter)) as records:
    next(records)
    yield records


def _pre_array(num: int, found: dict):
  """object ``(num,)`` pre-rejections (``None`` or ``(reason, detail)``) from ``{record: entry}``,
  or ``None`` when there are none."""
  if not found:
    return None
  pre = np.full(num, None, dtype=object)
  for k, entry in found.items():
    pre[k] = entry
  return pre


def _read_csv_records(path: str, opener, delimiter: str):
  """The exact reader of :func:`_read_csv`: the ``csv`` module, one record at a time, streamed.

  The first pass keeps each record's first line and the malformed ones (a wrong number of
  fields, a repeated header line); the first ``column(name)`` reads the file again for every
  column at once, ``column.distinct(names)`` reads it again coding the columns ``names`` as it
  goes (added in batches of ``_BATCH_ROWS`` records, as :func:`_parquet_distinct`).
  """
  line_parts, found, batch = [], {}, []
  with contextlib.closing(_csv_records(path, opener, delimiter)) as records:
    header = next(records)
    if header is None:
      return [], None, np.zeros(0, dtype=np.int64), None
    width, first = len(header), header[0]
    for k, (start, r) in enumerate(records):
      batch.append(start)
      if len(batch) == _BATCH_ROWS:
        line_parts.append(np.array(batch, dtype=np.int64))
        batch = []
      if len(r) != width:
        found[k] = (R.MALFORMED, f"expected {width} fields, got {len(r)}")
      elif r[0].strip() == first and [c.strip() for c in r] == header:
        found[k] = (R.MALFORMED, "a repeated header line")
  lines = np.concatenate([*line_parts, np.array(batch, dtype=np.int64)])
  num = len(lines)
  pre = _pre_array(num, found)

  read = {}

  def column(name):
    if name not in read:  # every column in one pass: the schemas asking for whole columns ask
      index = {n: header.index(n) for n in dict.fromkeys(header)}  # for most of them
      cells = {n: [] for n in index}
      with _records_past_header(path, opener, delimiter) as records:
        for _, r in records:
          for n, j in index.items():
            cells[n].append(r[j] if len(r) == width else None)
      read.update((n, object_column(c)) for n, c in cells.items())
      del cells
    return read[name]

  def distinct(names):
    """The columns ``names`` coded as they are read, added in batches of ``_BATCH_ROWS``
    records: ``(cells, rows)`` as :func:`_parquet_distinct` (no record is kept: the cells are
    strings, or ``None`` for a malformed record, coded in a dictionary per column)."""
    asked, names = names, list(dict.fromkeys(names))
    js = [header.index(n) for n in names]
    none = (None,) * len(js)
    code_of = [{} for _ in js]  # cell -> code, in order of first appearance
    rows = _distinct.DistinctBatches(len(names))
    batch, done = [array.array("q") for _ in js], 0

    def add():
      nonlocal batch, done
      size = len(batch[0])
      apart = None if pre is None else np.array([p is not None for p in pre[done : done + size]])
      rows.add([np.frombuffer(c, dtype=np.int64) for c in batch], apart=apart)
      batch, done = [array.array("q") for _ in js], done + size

    with _records_past_header(path, opener, delimiter) as records:
      for _, r in records:
        for codes, seen, cell in zip(
          batch, code_of, [r[j] for j in js] if len(r) == width else none
        ):
          code = seen.get(cell)
          if code is None:
            code = seen[cell] = len(seen)
          codes.append(code)
        if len(batch[0]) == _BATCH_ROWS:
          add()
    add()
    if done != num:
      raise RuntimeError(f"{path}: the file changed while it was read.")
    distinct, codes = rows.result()
    cells = {
      n: _distinct.CodedColumn(codes[:, k], object_column(code_of[k])) for k, n in enumerate(names)
    }
    return [cells[n] for n in asked], distinct

  column.distinct = distinct
  return header, column, lines, pre


def _distinct_cells(rows, columns, names, asked):
  """``(cells, rows)`` of a :class:`~ste_jax.data._distinct.DistinctBatches` whose columns were
  coded by the :class:`~ste_jax.data._distinct.GrowingCells` ``columns`` (one per ``names``), in
  the order ``asked``."""
  distinct, codes = rows.result()
  cells = {n: _distinct.CodedColumn(codes[:, k], columns[k].cells()) for k, n in enumerate(names)}
  return [cells[n] for n in asked], distinct


# More candidate repeated header lines than this in a block: check the parsed column instead.
_REPEATED_HEADER_SCAN = _tuning.REPEATED_HEADER_SCAN


class _Unsupported(Exception):
  """A block that the vectorized CSV reader cannot read exactly (quotes, NUL, lone ``\\r``)."""


@dataclasses.dataclass(frozen=True)
class _Block:
  """The line structure of a block of whole lines of a file without quotes.

  Attributes:
    data: the block's bytes.
    starts, ends, content_end: int64 ``(L,)`` each line's first byte, newline and content end
      (before a ``\\r\\n``), block offsets.
    delims: int64 the delimiters' block offsets.
    records: int64 ``(K,)`` the lines that are records (not blank, not the file's header).
    fields: int64 ``(K,)`` each record's number of fields.
    good: bool ``(K,)`` records with the header's number of fields.
    first_line: the 1-based line number of the block's first line.
    first: the block holds the file's header line (its line 0).
  """

  data: bytes
  starts: np.ndarray
  ends: np.ndarray
  content_end: np.ndarray
  delims: np.ndarray
  records: np.ndarray
  fields: np.ndarray
  good: np.ndarray
  first_line: int
  first: bool


class _UnquotedFile:
  """A delimited file without quote characters, read in blocks of ``_BATCH_ROWS`` lines."""

  def __init__(self, path: str, opener, delimiter: str):
    self.path, self.opener, self.delimiter = path, opener, delimiter
    self.header = None

  def blocks(self):
    """The :class:`_Block` of each block of lines.

    Raises:
      _Unsupported: a quote, NUL byte or lone ``\\r`` in a block, a blank or undecodable
        header line.
    """
    first = True
    for data, first_line in _line_blocks(self.path, self.opener, _BATCH_ROWS):
      if b'"' in data or b"\x00" in data or data.count(b"\r") != data.count(b"\r\n"):
        raise _Unsupported
      buf = np.frombuffer(data, dtype=np.uint8)
      newlines = np.flatnonzero(buf == ord("\n"))
      starts = np.concatenate([[0], newlines + 1])
      ends = np.concatenate([newlines, [len(data)]])  # exclusive, before the newline
      if starts[-1] == len(data):  # the block ends with a newline: no last, empty line
        starts, ends = starts[:-1], ends[:-1]
      crlf = np.zeros(len(ends), dtype=bool)
      nonempty = ends > starts
      crlf[nonempty] = buf[ends[nonempty] - 1] == ord("\r")
      content_end = ends - crlf
      blank = content_end == starts
      if first:
        if blank[0]:
          raise _Unsupported
        try:
          text = data[starts[0] : content_end[0]].decode("utf-8")
        except UnicodeDecodeError:
          raise _Unsupported from None
        self.header = [h.strip() for h in text.split(self.delimiter)]
      delims = np.flatnonzero(buf == ord(self.delimiter))
      record = ~blank
      record[0] &= not first  # the header
      records = np.flatnonzero(record)
      fields = (
        np.searchsorted(delims, content_end[records]) - np.searchsorted(delims, starts[records]) + 1
      )
      good = fields == len(self.header)
      del newlines, crlf, nonempty, blank, record, buf
      yield _Block(
        data, starts, ends, content_end, delims, records, fields, good, first_line, first
      )
      first = False

  def parse(self, block: _Block, js: list) -> dict:
    """pandas' C parser on the block's well-formed lines: ``{j: object (G,) cells}``, every cell
    a string.

    Raises:
      _Disagreement: pandas finds another number of rows (or a parser error or warning).
    """
    import pandas as pd  # pylint: disable=g-import-not-at-top

    good = block.records[block.good]
    if len(good) == 0:
      return {j: np.zeros(0, dtype=object) for j in js}
    if len(good) + block.first == len(block.starts):  # every line (past the header) a record
      table, skip = block.data, int(block.first)  # the block as it is (BytesIO shares the bytes)
    else:  # drop blank and malformed lines (rare): a buffer of the well-formed lines only
      table, skip = (
        b"".join(
          block.data[s : e + 1]
          for s, e in zip(block.starts[good].tolist(), block.ends[good].tolist())
        ),
        0,
      )
    try:
      with warnings.catch_warnings():
        warnings.simplefilter("error")  # a parser warning: the csv reader takes over
        frame = pd.read_csv(
          io.BytesIO(table),
          sep=self.delimiter,
          header=None,
          names=list(range(len(self.header))),
          skiprows=skip,
          usecols=list(dict.fromkeys(js)),
          dtype=object,
          na_filter=False,
          quoting=csv.QUOTE_NONE,
          index_col=False,
          skip_blank_lines=False,
          engine="c",
          encoding="utf-8",
        )
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError, Warning):
      raise _Disagreement from None
    out = {j: frame[j].to_numpy(dtype=object) for j in js}
    if len(frame) != len(good):
      raise _Disagreement
    return out

  def repeated_headers(self, block: _Block) -> np.ndarray:
    """The positions in ``block.records`` of the well-formed lines that repeat the header.

    Every such line holds the header's longest name in that column: the lines that do (found
    with NumPy: the name's byte matches, and the field each falls in) are checked one by one;
    above ``_REPEATED_HEADER_SCAN`` of them in the block, the lines whose parsed cell of that
    column is the name.
    """
    header, data = self.header, block.data
    j0 = max(range(len(header)), key=lambda k: len(header[k]))
    needle = header[j0].encode("utf-8")
    good_pos = np.flatnonzero(block.good)
    good = block.records[good_pos]
    candidates = None
    if needle:  # the name holds no delimiter and no newline: a match lies within one field
      buf = np.frombuffer(data, dtype=np.uint8)
      span = max(len(buf) - len(needle) + 1, 0)
      at = np.ones(span, dtype=bool)
      for k, byte in enumerate(needle):
        at &= buf[k : k + span] == byte
      hits = np.flatnonzero(at)
      del at
      line = np.searchsorted(block.starts, hits, side="right") - 1
      field = np.searchsorted(block.delims, hits) - np.searchsorted(
        block.delims, block.starts[line]
      )
      candidates = np.flatnonzero(np.isin(good, line[field == j0]))
    if candidates is None or len(candidates) > _REPEATED_HEADER_SCAN:
      import pandas as pd  # pylint: disable=g-import-not-at-top

      cells = pd.Series(self.parse(block, [j0])[j0], dtype=object)
      candidates = np.flatnonzero(cells.astype(str).str.strip().to_numpy() == header[j0])
    out = []
    for g in candidates.tolist():
      i = good[g]
      cells = data[block.starts[i] : block.content_end[i]].decode("utf-8").split(self.delimiter)
      if [c.strip() for c in cells] == header:
        out.append(good_pos[g])
    return np.asarray(out, dtype=np.int64)


# Kept over pandas.read_csv / pyarrow.csv alone: neither gives each row's line, pandas pads short
# rows silently, pyarrow numbers them only single-threaded; the csv module alone is much slower
# (benchmarks/libraries.py).
def _read_csv_unquoted(path: str, opener, delimiter: str):
  """The vectorized reader of :func:`_read_csv`, or ``None`` when the file needs the exact one.

  Without quote characters, NUL bytes and lone carriage returns, a ``csv`` record is exactly one
  physical line split at the delimiter (``\\n`` or ``\\r\\n`` ended), so the line structure and
  the field count of every line follow from the byte positions of the newlines and delimiters
  (neither occurs inside a multi-byte UTF-8 character). The file is read in blocks of
  ``_BATCH_ROWS`` lines (:class:`_UnquotedFile`): a first pass finds each block's records, skips
  blank lines and rejects lines with the wrong number of fields as malformed, as the ``csv``
  reader does, and the well-formed lines that repeat the header; the well-formed lines are then
  parsed by pandas' C parser a block at a time, every cell kept as its string (no NA detection,
  no type inference): ``column(name)`` (or ``column.prefetch(names)``) gathers whole columns,
  ``column.distinct(names)`` gives the distinct rows only (as :func:`_parquet_distinct`).
  ``None`` (the ``csv`` reader takes over): quotes, NUL bytes or lone ``\\r`` in the file, a
  blank or undecodable header line, no data lines, or pandas disagreeing on the number of rows
  in the first pass.
  """
  source = _UnquotedFile(path, opener, delimiter)
  line_parts, found, num, num_good = [], {}, 0, 0
  try:
    for block in source.blocks():
      width = len(source.header)
      for k in np.flatnonzero(~block.good).tolist():
        found[num + k] = (R.MALFORMED, f"expected {width} fields, got {block.fields[k]}")
      for k in source.repeated_headers(block).tolist():
        found[num + k] = (R.MALFORMED, "a repeated header line")
      line_parts.append(block.first_line + block.records)
      num += len(block.records)
      num_good += int(block.good.sum())
      del block  # one block held at a time
  except (_Unsupported, _Disagreement):
    return None
  if num == 0:
    return None
  header = source.header
  lines = np.concatenate(line_parts).astype(np.int64)
  del line_parts
  pre = _pre_array(num, found)
  cache = {}
  exact = []  # the csv reader's column getter, should pandas ever disagree on the rows

  def blocks(js):
    """``(block, cells, done)`` per block: ``cells[j]`` the object ``(K,)`` cells of its records
    (``None`` for the malformed ones), ``done`` the records before it."""
    done = 0
    for block in source.blocks():
      values = source.parse(block, js)
      k = len(block.records)
      if k == len(block.good) and block.good.all():
        cells = values
      else:
        cells = {}
        for j, v in values.items():
          cells[j] = np.full(k, None, dtype=object)
          cells[j][block.good] = v
      yield block, cells, done
      done += k
      del block, cells, values  # one block held at a time
    if done != num:
      raise _Disagreement

  def prefetch(names):
    """Parses the columns ``names`` in one pass (a column getter's optional speed-up)."""
    if exact:
      return
    todo = [j for j in dict.fromkeys(header.index(n) for n in names if n in header)]
    todo = [j for j in todo if j not in cache]
    if not todo:
      return
    try:
      parts = {j: [] for j in todo}
      for _, cells, _ in blocks(todo):
        for j in todo:
          parts[j].append(cells[j])
        del cells
    except (_Unsupported, _Disagreement, UnicodeDecodeError):
      exact.append(_exact_getter(path, opener, delimiter, lines, pre))
      return
    cache.update((j, np.concatenate(p)) for j, p in parts.items())

  def column(name):
    prefetch([name])
    if exact:
      return exact[0](name)
    return cache[header.index(name)]

  def distinct(names):
    """The columns ``names`` parsed a block at a time (a column getter's optional batch reader):
    ``(cells, rows)`` as :func:`_parquet_distinct`, or ``None``."""
    if exact or cache or not num_good:  # the exact reader took over, whole columns are
      return None  # parsed already, or no line is well-formed
    asked, names = names, list(dict.fromkeys(names))
    js = [header.index(n) for n in names]
    columns = [_distinct.GrowingCells() for _ in names]
    rows = _distinct.DistinctBatches(len(names))
    try:
      for block, cells, done in blocks(js):
        k = len(block.records)
        apart = None if pre is None else np.array([p is not None for p in pre[done : done + k]])
        rows.add([c.codes(cells[j]) for c, j in zip(columns, js)], apart=apart)
        del block, cells
    except (_Unsupported, _Disagreement, UnicodeDecodeError):
      return None
    return _distinct_cells(rows, columns, names, asked)

  column.prefetch = prefetch
  column.distinct = distinct
  return header, column, lines, pre


class _Disagreement(Exception):
  """pandas read a different number of rows than the line scan found."""


def _exact_getter(path, opener, delimiter, lines, pre):
  """The ``csv`` reader's column getter, after checking that it finds the same rows."""
  _, column, exact_lines, exact_pre = _read_csv_records(path, opener, delimiter)
  same = np.array_equal(exact_lines, lines) and (
    exact_pre is pre or (exact_pre is not None and pre is not None and list(exact_pre) == list(pre))
  )
  if not same:
    raise RuntimeError(
      f"{path}: the fast and the exact CSV readers disagree on the records; "
      f"please report this file."
    )
  return column


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
  except json.JSONDecodeError as e:
    first = text.lstrip()[:1]
    line = next(t for t in text.splitlines() if t.strip())
    if first == "{" and _is_json_object(line):  # JSON lines in a .json file
      return _parse_jsonl_lines(text.splitlines())
    raise InputError(
      f"cannot parse {path} as JSON: {e.msg} at line {e.lineno} column {e.colno} (character "
      f"{e.pos} of {len(text)}{'; the file ends there: truncated?' if e.pos >= len(text) else ''})"
    ) from None
  if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
    lengths = {len(v) for v in data.values()}
    if len(lengths) > 1:
      raise InputError(
        f"{path}: columnar JSON with columns of different lengths {sorted(lengths)}."
      )
    num = lengths.pop() if lengths else 0
    data = [{k: v[i] for k, v in data.items()} for i in range(num)]
  if not isinstance(data, list):
    raise InputError(f"{path}: expected a JSON array of records, got {type(data).__name__}.")
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


def _is_json_object(text: str) -> bool:
  try:
    return isinstance(json.loads(text), dict)
  except json.JSONDecodeError:
    return False


# A PGN tag pair on a line of its own: ``[Name "value"]``, the value with ``\\"`` and ``\\\\``
# escapes (written as "unrolled" loops, ``[^"\\\n]*(?:\\.[^"\\\n]*)*``: the same strings as
# ``(?:[^"\\\n]|\\.)*`` without an alternation per character); and a run of such lines (the tag
# section of a game).
_PGN_VALUE = r'[^"\\\n]*(?:\\.[^"\\\n]*)*'
_PGN_TAG = r'^[ \t]*\[([A-Za-z0-9_]+)[ \t]+"(' + _PGN_VALUE + r')"[ \t]*\][ \t]*\r?$'
# Runs of tag lines (games) whose tags are converted together.
_PGN_RUNS_PER_CHUNK = _tuning.PGN_RUNS_PER_CHUNK
_PGN_TAG_RUN = r'(?:^[ \t]*\[[A-Za-z0-9_]+[ \t]+"' + _PGN_VALUE + r'"[ \t]*\][ \t]*\r?(?:\n|\Z))+'


# Kept over chess.pgn.read_headers: it gives no line numbers, loses the game after stray text,
# merges tag sections without movetext and keeps \" escapes (benchmarks/libraries.py).
def _read_pgn(path: str, opener):
  """Reads the tag pairs of every game of a PGN file: one record per game, the tags its fields.

  A game is a run of tag-pair lines followed by its movetext (which is not read); a tag line after
  movetext, or repeating a tag of the current game, starts the next game. A record's line is the
  line of its first tag. Text before the first tag pair is reported as a malformed record at its
  first line (a game whose tags are damaged there, and nothing else, would otherwise vanish); a
  file with text but no tag pair raises ``ValueError``.

  Vectorized: one regular expression splits the text into (text before a run, run of tag lines)
  pairs, a second one finds the tag pairs of ``_PGN_RUNS_PER_CHUNK`` runs at a time (kept as name
  codes and value strings, so a tuple per tag lives only within its chunk); the games are cut from
  the tag sequence with NumPy: a new game at the first tag after movetext and, in the rare
  sections of several runs without movetext between them, at each repeated tag name (a Python
  pass over those sections' tags only). Otherwise Python runs once per run for the line counts,
  and the cyclic garbage collector is paused while the objects are built.
  """
  with _open_text(path, opener) as f:
    text = f.read()
  with (
    _gc_paused()
  ):  # millions of small strings and tuples: no cyclic collections while they are made
    return _pgn_table(path, text)


@contextlib.contextmanager
def _gc_paused():
  """Pauses Python's cyclic garbage collector (the objects built here hold no cycles).

  Restores it on exit.
  """
  enabled = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if enabled:
      gc.enable()


def _pgn_table(path: str, text: str):
  """:func:`_read_pgn` on the file's ``text``."""
  import pandas as pd  # pylint: disable=g-import-not-at-top

  parts = re.split(
    "(" + _PGN_TAG_RUN + ")", text, flags=re.MULTILINE
  )  # gap, run, gap, run, ..., tail
  gaps, runs = parts[0:-1:2], parts[1::2]
  if not runs:
    if text.strip():
      raise InputError(
        f'no comparisons in {path}: no PGN tag pair (a line like [White "name"]) in the file.'
      )
    return [], None, np.zeros(0, dtype=np.int64), None
  num_runs = len(runs)
  after_text = np.fromiter((not g.isspace() and g != "" for g in gaps), bool, num_runs)
  gap_lines = np.fromiter((g.count("\n") for g in gaps), np.int64, num_runs)
  run_lines = np.fromiter((r.count("\n") for r in runs), np.int64, num_runs)
  tags_per_run = run_lines + np.fromiter((not r.endswith("\n") for r in runs), np.int64, num_runs)
  # Line of each run's first tag: the lines of every gap up to it and of every run before it.
  run_start_line = 1 + np.cumsum(gap_lines) + np.concatenate([[0], np.cumsum(run_lines)[:-1]])
  first_gap = gaps[0]
  # The tags, a chunk of runs at a time (a tuple per tag lives only while its chunk is converted):
  # names as integer codes in order of first appearance, values as strings.
  code_of: dict[str, int] = {}
  code_parts, value_parts = [], []
  for start in range(0, num_runs, _PGN_RUNS_PER_CHUNK):
    chunk = re.findall(
      _PGN_TAG, "".join(runs[start : start + _PGN_RUNS_PER_CHUNK]), flags=re.MULTILINE
    )
    pairs = np.empty((len(chunk), 2), dtype=object)
    pairs[:] = chunk  # (name, value) rows, without a per-tag Python loop
    del chunk
    local, uniques = pd.factorize(pairs[:, 0])
    to_global = np.array(
      [code_of.setdefault(str(u), len(code_of)) for u in uniques], dtype=np.int64
    )
    code_parts.append(to_global[local])
    value_parts.append(pairs[:, 1].copy())
  del parts, gaps, runs
  codes, values = np.concatenate(code_parts), np.concatenate(value_parts)
  num_tags = len(codes)
  assert num_tags == int(tags_per_run.sum()), "PGN tag lines and runs disagree"
  if "\\" in text:
    unescape = re.compile(r"\\(.)").sub
    escaped = np.flatnonzero(np.fromiter(("\\" in v for v in values), bool, num_tags))
    values[escaped] = [unescape(r"\1", v) for v in values[escaped]]
  run_of_tag = np.repeat(np.arange(num_runs), tags_per_run)
  first_of_run = np.concatenate([[0], np.cumsum(tags_per_run)[:-1]])
  tag_line = run_start_line[run_of_tag] + np.arange(num_tags) - first_of_run[run_of_tag]
  # Sections: tags from one run after movetext (or the first run) to the next such run.
  section_start = np.zeros(num_tags, bool)
  section_start[first_of_run[after_text]] = True
  section_start[0] = True
  section = np.cumsum(section_start) - 1
  game_start = section_start.copy()
  # Sections holding several games without movetext between them (a tag name repeats): cut at
  # each repeat, one pass over their tags.
  repeated = pd.Series(section * len(code_of) + codes).duplicated().to_numpy()
  seen = set()
  for t in np.flatnonzero(np.isin(section, section[repeated])):
    if section_start[t]:
      seen = set()
    elif codes[t] in seen:
      game_start[t], seen = True, set()
    seen.add(codes[t])
  game_of_tag = np.cumsum(game_start) - 1
  lines = tag_line[game_start]
  pre = [None] * len(lines)
  offset = 0
  if after_text[0]:  # text before the first tag pair
    lead = first_gap[: len(first_gap) - len(first_gap.lstrip())]
    lines = np.concatenate([[1 + lead.count("\n")], lines])
    pre = [(R.MALFORMED, "text before the first PGN tag pair")] + pre
    offset = 1
  num_records = len(lines)

  def column(name):
    out = np.full(num_records, None, dtype=object)
    if name in code_of:
      where = codes == code_of[name]
      out[offset + game_of_tag[where]] = values[where]
    return out

  return list(code_of), column, np.asarray(lines, dtype=np.int64), object_column(pre)


# Rows per batch of the files read in batches (the arena/simple schemas).
_BATCH_ROWS = _tuning.LOAD_BATCH_ROWS


def _read_parquet(path: str):
  """``(header, column, lines, pre)`` of a Parquet file, read with pyarrow.

  String columns are read as dictionaries (Parquet stores them so): ``column(name)`` gives the
  object column as pandas would (``pd.read_parquet(path)[name].to_numpy(dtype=object)``) and
  ``column.coded(name)`` the same cells as a :class:`~ste_jax.data._distinct.CodedColumn`,
  without one Python string per row; both read the whole file when first asked for.
  ``column.distinct(names)`` instead reads the columns ``names`` in record batches of
  ``_BATCH_ROWS`` rows (:func:`_parquet_distinct`) and gives the distinct rows only.
  """
  import pyarrow as pa  # pylint: disable=g-import-not-at-top
  import pyarrow.parquet as pq  # pylint: disable=g-import-not-at-top

  try:
    schema = pq.read_schema(path)
    num_rows = pq.ParquetFile(path).metadata.num_rows
  except (OSError, ValueError, pa.ArrowException) as e:  # ArrowInvalid is a ValueError
    raise InputError(f"cannot parse {path} as Parquet: {str(e).splitlines()[0]}") from None
  strings = [
    f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
  ]
  index = {c for c in (schema.pandas_metadata or {}).get("index_columns", ()) if isinstance(c, str)}
  header = [str(c) for c in schema.names if c not in index]
  whole = []

  def table():
    if not whole:
      try:
        whole.append(pq.read_table(path, read_dictionary=strings))
      except (OSError, ValueError, pa.ArrowException) as e:
        raise InputError(f"cannot parse {path} as Parquet: {str(e).splitlines()[0]}") from None
    return whole[0]

  def coded(name) -> CodedColumn | None:
    col = table().column(name)
    if not pa.types.is_dictionary(col.type):
      return None
    col = col.unify_dictionaries().combine_chunks()
    values = col.dictionary.to_pandas().to_numpy(dtype=object)
    codes = col.indices.to_numpy(zero_copy_only=False)
    if col.null_count:
      null = pa.array([None], type=col.dictionary.type).to_pandas().to_numpy(dtype=object)[0]
      codes = np.where(col.is_null().to_numpy(zero_copy_only=False), len(values), codes)
      values = np.append(values, np.array([null], dtype=object))
    return CodedColumn(codes.astype(np.int32 if len(values) < 2**31 else np.int64), values)

  def column(name):
    cells = coded(name)
    if cells is not None:
      return cells.cells()
    return table().column(name).to_pandas().to_numpy(dtype=object)

  def distinct(names):
    if whole:  # already read whole (another schema's columns)
      return None
    return _parquet_distinct(path, schema, strings, names)

  column.coded = coded
  column.distinct = distinct
  return header, column, np.arange(1, num_rows + 1), None


def _batch_type_ok(t) -> bool:
  """Arrow types whose batches :func:`_parquet_distinct` codes (hashable scalar cells)."""
  import pyarrow as pa  # pylint: disable=g-import-not-at-top

  if pa.types.is_dictionary(t):
    return _batch_type_ok(t.value_type)
  return (
    pa.types.is_string(t)
    or pa.types.is_large_string(t)
    or pa.types.is_integer(t)
    or pa.types.is_floating(t)
    or pa.types.is_boolean(t)
    or pa.types.is_null(t)
  )


class _BatchColumn:
  """One column read in batches: its cells' codes in a dictionary that grows over the batches.

  The cells are those of the whole column (:func:`_read_parquet`'s ``column``): a dictionary
  column's null is the null of its value type, a plain column's values and null are converted
  together as pandas converts the whole column (integers with a null anywhere become floats).
  """

  _NULL = ("null",)  # the key of the null cell (cell keys are pairs)

  def __init__(self, arrow_type):
    import pyarrow as pa  # pylint: disable=g-import-not-at-top

    self.dictionary = _distinct.GrowingDictionary()
    self.coded = pa.types.is_dictionary(arrow_type)
    self.value_type = arrow_type.value_type if self.coded else arrow_type
    self.chunks, self.chunk_codes = [], []
    self.null = -1

  def codes(self, array) -> np.ndarray:
    """int64 ``(B,)`` codes of a batch's pyarrow array."""
    import pyarrow as pa  # pylint: disable=g-import-not-at-top
    import pyarrow.compute as pc  # pylint: disable=g-import-not-at-top

    if not pa.types.is_dictionary(array.type):
      array = pc.dictionary_encode(array)
    values = array.dictionary
    keys = [_distinct.cell_key(v) for v in values.to_pylist()]
    codes, new = self.dictionary.add(keys)
    if len(new):
      self.chunks.append(values.take(pa.array(new)))
      self.chunk_codes.append(codes[new])
    indices = array.indices
    if not len(codes):  # every cell null
      out = np.zeros(len(indices), dtype=np.int64)
    else:
      out = codes[indices.fill_null(0).to_numpy(zero_copy_only=False)]
    if indices.null_count:
      if self.null < 0:
        self.null = int(self.dictionary.add([self._NULL])[0][0])
      null = indices.is_null().to_numpy(zero_copy_only=False)
      out = np.where(null, self.null, out)
    return out

  def cells(self) -> np.ndarray:
    """object ``(K,)`` the cell of each code."""
    import pyarrow as pa  # pylint: disable=g-import-not-at-top

    out = np.empty(len(self.dictionary), dtype=object)
    if self.chunks:
      values = pa.concat_arrays(self.chunks)
      where = np.concatenate(self.chunk_codes)
      if self.null >= 0 and not self.coded:  # converted with the null, as the whole column
        values = pa.concat_arrays([values, pa.nulls(1, type=self.value_type)])
        where = np.append(where, self.null)
      out[where] = values.to_pandas().to_numpy(dtype=object)
    if self.null >= 0 and (self.coded or not self.chunks):
      out[self.null] = pa.nulls(1, type=self.value_type).to_pandas().to_numpy(dtype=object)[0]
    return out


def _parquet_distinct(path: str, schema, strings: list, names: list):
  """``(cells, rows)`` of the columns ``names`` of a Parquet file read in record batches.

  Each batch's cells are coded in a dictionary per column that grows over the batches
  (:class:`_BatchColumn`), and its rows merged into the distinct rows so far
  (:class:`~ste_jax.data._distinct.DistinctBatches`): the memory held is one batch, one int per
  row and the distinct rows. ``cells``: a :class:`~ste_jax.data._distinct.CodedColumn` per name
  holding the distinct rows' cells, ``rows`` their
  :class:`~ste_jax.data._distinct.DistinctRows`, the same cells and rows as the whole file's.
  ``None`` (the caller reads whole columns) when a column has another type than strings,
  numbers, booleans and dictionaries of those.
  """
  import pyarrow as pa  # pylint: disable=g-import-not-at-top
  import pyarrow.parquet as pq  # pylint: disable=g-import-not-at-top

  asked, names = names, list(dict.fromkeys(names))
  if not all(_batch_type_ok(schema.field(n).type) for n in names):
    return None
  columns = {}
  rows = _distinct.DistinctBatches(len(names))
  try:
    reader = pq.ParquetFile(path, read_dictionary=[n for n in strings if n in names])
    for batch in reader.iter_batches(batch_size=_BATCH_ROWS, columns=names, use_threads=True):
      codes = []
      for n in names:
        array = batch.column(n)
        if n not in columns:
          columns[n] = _BatchColumn(array.type)
        codes.append(columns[n].codes(array))
      rows.add(codes)
  except (OSError, ValueError, pa.ArrowException) as e:
    raise InputError(f"cannot parse {path} as Parquet: {str(e).splitlines()[0]}") from None
  distinct, codes = rows.result()
  cells = {
    n: CodedColumn(codes[:, j], columns[n].cells() if n in columns else np.zeros(0, dtype=object))
    for j, n in enumerate(names)
  }
  return [cells[n] for n in asked], distinct


def from_counts(
  data: "pd.DataFrame | Mapping[str, Any]", settings: LoadSettings | None = None, **overrides: Any
) -> tuple[Comparisons, LoadReport]:
  """Comparisons from aggregated counts: one row per pair (and context) with the wins of each side.

  The Python side of ``--format counts``: ``data`` is a table with columns ``a``/``b`` (or
  ``model_a``/``model_b``), ``wins_a``, ``wins_b``, optionally ``ties`` and a context column,
  e.g. the result of a warehouse ``GROUP BY`` (docs page "Counts from a warehouse"). Each row
  gives up to three comparisons weighted by its counts (``a`` won, ``b`` won, a tie), so the
  pair counts, the estimators and the point leaderboard equal those of the battles the counts
  summarize; the Poisson bootstrap resamples the unit comparisons (``Poisson(w)`` per row of
  count ``w``), equal to the battles' replicas in distribution, not draw for draw.

  Args:
    data: a ``pandas.DataFrame``, or a mapping of column name -> 1-D array-like of length ``N``.
    settings: the loading options (default: their defaults; the schema is always ``counts``):
      ``a``, ``b``, ``context``, fixed ``agents``/``contexts``, ``skip_bad_rows``, ``strict``
      and the ``policy``'s ``tie``.
    **overrides: fields of :class:`~ste_jax.data.LoadSettings` replacing those of ``settings``.

  Returns:
    ``(comparisons, report)``: the :class:`Comparisons` (weights: the counts) and the
    :class:`LoadReport` (``rows_read`` counts the input rows, rows whose counts are all 0
    included; ``rows_used`` the rows that gave comparisons).

  Raises:
    TypeError: ``data`` is neither a data frame nor a mapping, or an override names no field.
    OptionError: ``weight`` is set (the counts are the weights).
    InputError: a column is missing, no usable rows, or bad rows (a missing, NaN, fractional or
      negative count; the same agent on both sides; ...) without ``skip_bad_rows`` (the message
      gives the reasons, their counts and first row numbers).

  Example:
    >>> from ste_jax.data import from_counts, pair_counts
    >>> c, report = from_counts({"a": ["x", "x"], "b": ["y", "z"], "wins_a": [3, 0],
    ...                          "wins_b": [1, 2], "ties": [2, 0]})
    >>> c.agents, report.rows_read, report.rows_used
    (('x', 'y', 'z'), 2, 2)
    >>> pair_counts(c).wins.tolist()
    [[0.0, 4.0, 0.0], [2.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  settings = load_settings(settings, overrides, "from_counts")
  if isinstance(data, Mapping):
    data = pd.DataFrame({str(k): np.asarray(v, dtype=object) for k, v in data.items()})
  if not isinstance(data, pd.DataFrame):
    raise TypeError(
      f"from_counts: data must be a pandas DataFrame or a mapping of columns, got "
      f"{type(data).__name__}."
    )
  return from_dataframe(data, settings, schema="counts")
