"""Raw covariate differences read from battle records: Chatbot Arena style and numeric columns.

Chatbot Arena battles carry a ``conv_metadata`` object per battle with the style counts of both
answers: ``sum_assistant_a_tokens``, ``header_count_a`` (``{"h1": .., ..., "h6": ..}``),
``list_count_a`` (``{"ordered": .., "unordered": ..}``), ``bold_count_a`` (``{"**": .., "__": ..}``)
and their ``_b`` twins. As in FastChat's style control, a count given as an object is the sum of
its values, and each feature becomes the ratio ``(f_a - f_b) / (f_a + f_b + 1)``. The columns
returned here are raw; :func:`ste_jax.evaluate.normalize_differences` standardizes them.

Controls (``control=``): ``length`` (answer tokens), ``markdown`` (three columns ``header``,
``list``, ``bold``) and ``position`` (a constant ``+1``: side ``a`` was shown first). When the
file has a ``judge`` column with several judges, ``position`` becomes one indicator column per
judge (:func:`judge_position_differences`): each judge's own first-position advantage.
"""

from collections.abc import Mapping, Sequence
import dataclasses
import math

import numpy as np

from ste_jax._errors import InputError, OptionError
from ste_jax._options import check_options, option

from ._comparisons import Comparisons

CONTROLS = ("length", "markdown", "position")
_STYLE_FIELDS = {
  "length": "sum_assistant_{side}_tokens",
  "header": "header_count_{side}",
  "list": "list_count_{side}",
  "bold": "bold_count_{side}",
}


def _count(value) -> float:
  """A style count: a number, or an object whose values are summed (FastChat's convention)."""
  if isinstance(value, Mapping):
    return float(sum(_count(v) for v in value.values()))
  if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
    raise TypeError(value)
  return float(value)


def _line_list(rows: np.ndarray, lines: Sequence[int] | None) -> str:
  where = rows if lines is None else np.asarray(lines)[rows]
  return ", ".join(str(int(r)) for r in where[:5])


def arena_style_differences(
  conv_metadata: Sequence[Mapping | None],
  *,
  control: Sequence[str] = ("length", "markdown"),
  lines: Sequence[int] | None = None,
  source: str = "conv_metadata",
) -> dict[str, np.ndarray]:
  """Raw difference columns of Chatbot Arena's ``conv_metadata`` (FastChat's ratio features).

  Args:
    conv_metadata: one object per battle (``None`` where a battle has none).
    control: a subset of :data:`CONTROLS`.
    lines: the file line of each battle, used in error messages (default: the row index).
    source: the file or argument named in error messages.

  Returns:
    Column name -> ``(m,)`` float64: ``length``; ``header``, ``list``, ``bold`` for ``markdown``;
    ``position`` (ones).

  Raises:
    InputError: an unknown control, or battles whose metadata is missing a field or holds a
      non-numeric count (with the count and the first lines).

  Example:
    >>> meta = [{"sum_assistant_a_tokens": 30, "sum_assistant_b_tokens": 9,
    ...          "header_count_a": {"h1": 1, "h2": 1}, "header_count_b": {"h1": 0},
    ...          "list_count_a": {"ordered": 0, "unordered": 2}, "list_count_b": {"ordered": 1},
    ...          "bold_count_a": {"**": 0}, "bold_count_b": {"**": 3}}]
    >>> cols = arena_style_differences(meta, control=("length", "markdown", "position"))
    >>> {k: round(float(v[0]), 3) for k, v in cols.items()}
    {'length': 0.525, 'header': 0.667, 'list': 0.25, 'bold': -0.75, 'position': 1.0}
  """
  control = tuple(control)
  unknown = [c for c in control if c not in CONTROLS]
  if unknown or not control:
    raise InputError(
      f"{source}: control must name some of {', '.join(CONTROLS)}; got {', '.join(control)!r}."
    )
  features = (["length"] if "length" in control else []) + (
    ["header", "list", "bold"] if "markdown" in control else []
  )
  m = len(conv_metadata)
  out: dict[str, np.ndarray] = {}
  for feature in features:
    values = np.full((2, m), math.nan)
    for side_index, side in enumerate("ab"):
      field = _STYLE_FIELDS[feature].format(side=side)
      for r, meta in enumerate(conv_metadata):
        try:
          values[side_index, r] = _count(meta[field])
        except (KeyError, TypeError, IndexError):
          pass
    bad = ~np.isfinite(values).all(axis=0)
    if bad.any():
      rows = np.flatnonzero(bad)
      field = _STYLE_FIELDS[feature].format(side="a|b")
      raise InputError(
        f"{source}: {rows.size} of {m} battles lack a numeric {field} for the {feature} control "
        f"(first lines {_line_list(rows, lines)})."
      )
    fa, fb = values
    out[feature] = (fa - fb) / (fa + fb + 1.0)
  if "position" in control:
    out["position"] = position_difference(m)
  return out


def position_difference(num_rows: int) -> np.ndarray:
  """``(m,)`` ones: side ``a`` of every battle was shown first (``f = 1`` first, ``0`` second)."""
  return np.ones((num_rows,), dtype=np.float64)


def judge_position_differences(judges: Sequence, *, source: str = "judge") -> dict[str, np.ndarray]:
  """Judge-specific first-position columns: ``position:J`` is 1 on the battles judge ``J`` saw.

  Side ``a`` is shown first (as :func:`position_difference`), so the coefficient of
  ``position:J`` is judge ``J``'s own first-position advantage in logits: one judge may favour
  the first answer while another does not. The columns are indicators and are not standardized
  (:func:`~ste_jax.evaluate.normalize_differences` keeps every ``position:*`` column as is).

  Args:
    judges: ``(m,)`` the judge of each battle (any values; compared as strings).
    source: named in the error message.

  Returns:
    ``position:J`` -> ``(m,)`` float64 0/1, one column per judge in sorted order.

  Raises:
    InputError: a battle without a judge (``None``, NaN or an empty string).

  Example:
    >>> cols = judge_position_differences(["gpt-4", "claude", "gpt-4"])
    >>> {k: v.tolist() for k, v in cols.items()}
    {'position:claude': [0.0, 1.0, 0.0], 'position:gpt-4': [1.0, 0.0, 1.0]}
  """
  values = [
    None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in judges
  ]
  missing = [i for i, v in enumerate(values) if not v]
  if missing:
    raise InputError(
      f"{source}: {len(missing)} of {len(values)} battles have no judge (first rows "
      f"{', '.join(str(i) for i in missing[:5])})."
    )
  labels = np.asarray(values, dtype=object)
  return {f"position:{j}": (labels == j).astype(np.float64) for j in sorted(set(values))}


def numeric_covariate_columns(
  table: Mapping[str, Sequence],
  names: Sequence[str],
  *,
  lines: Sequence[int] | None = None,
  source: str = "covariates",
) -> dict[str, np.ndarray]:
  """Raw difference columns of named numeric columns (``--covariates COL,...``).

  ``COL`` is read as the difference itself when the table has that column; otherwise the table
  must hold ``COL_a`` and ``COL_b``, and the difference is ``COL_a - COL_b``.

  Args:
    table: column name -> values, one per battle.
    names: the covariates asked for.
    lines: the file line of each battle, for error messages (default: the row index).
    source: the file named in error messages.

  Returns:
    Name -> ``(m,)`` float64 differences.

  Raises:
    InputError: a name with neither ``COL`` nor ``COL_a`` / ``COL_b``, or non-numeric or missing
      values (with the count and the first lines).

  Example:
    >>> cols = numeric_covariate_columns({"len_a": [3, 5], "len_b": [1, 5], "judge": [1, 0]},
    ...                                  ["len", "judge"])
    >>> {k: v.tolist() for k, v in cols.items()}
    {'len': [2.0, 0.0], 'judge': [1.0, 0.0]}
  """
  out: dict[str, np.ndarray] = {}
  for name in names:
    if name in table:
      parts = [(name, table[name])]
    elif f"{name}_a" in table and f"{name}_b" in table:
      parts = [(f"{name}_a", table[f"{name}_a"]), (f"{name}_b", table[f"{name}_b"])]
    else:
      raise InputError(
        f"{source}: no covariate column {name!r} (nor {name}_a and {name}_b); columns: "
        f"{', '.join(sorted(table))}."
      )
    cols = []
    for column, values in parts:
      col = np.full((len(values),), math.nan)
      for r, v in enumerate(values):
        try:
          col[r] = float(v) if not isinstance(v, bool) else math.nan
        except (TypeError, ValueError):
          pass
      bad = ~np.isfinite(col)
      if bad.any():
        rows = np.flatnonzero(bad)
        raise InputError(
          f"{source}: covariate column {column!r} is non-numeric or missing in {rows.size} of "
          f"{col.size} rows (first lines {_line_list(rows, lines)})."
        )
      cols.append(col)
    out[name] = cols[0] if len(cols) == 1 else cols[0] - cols[1]
  return out


def _names_list(text: str) -> tuple[str, ...]:
  """``"a,b"`` -> ``("a", "b")`` (empty items dropped; ``""`` or ``none``: no names)."""
  if text.strip().lower() in ("", "none"):
    return ()
  return tuple(t.strip() for t in text.split(",") if t.strip())


def _known_controls(value: tuple[str, ...], name: str) -> None:
  unknown = [c for c in value if c not in CONTROLS]
  if unknown:
    raise OptionError(f"{name} must name some of {', '.join(CONTROLS)}, got {', '.join(unknown)}.")


@dataclasses.dataclass(frozen=True)
class ControlSettings:
  """What the model estimator controls for: Arena style controls and numeric covariate columns.

  Attributes:
    control: a subset of :data:`CONTROLS`, read from each battle's ``conv_metadata`` (``length``,
      ``markdown``) or from the presentation order (``position``).
    covariate_columns: names of numeric columns (``COL``: the difference itself; else ``COL_a``
      minus ``COL_b``); flag ``--covariates`` (the field name differs from the model estimator's
      ``covariates``, the arrays built from these columns).
  """

  control: tuple[str, ...] = option(
    (),
    help="controls of the model estimator: length (answer tokens), markdown (header, list, bold "
    "counts; both from Chatbot Arena's conv_metadata, FastChat's normalization) and position "
    "(first-position advantage; one per judge when a judge column holds several); the table "
    "shows the controlled tournament, the agents whose "
    "core verdict changes and the coefficients with intervals",
    parse=_names_list,
    check=_known_controls,
    metavar="NAME,...",
  )
  covariate_columns: tuple[str, ...] = option(
    (),
    help="numeric columns controlled for by the model estimator: COL is a per-battle difference, "
    "or COL_a and COL_b the two sides' values (standardized)",
    flag="--covariates",
    parse=_names_list,
    metavar="COL,...",
  )

  def __post_init__(self):
    object.__setattr__(self, "control", tuple(self.control))
    object.__setattr__(self, "covariate_columns", tuple(self.covariate_columns))
    check_options(self)

  @property
  def active(self) -> bool:
    """Whether anything is controlled for."""
    return bool(self.control or self.covariate_columns)


def _read_records(path: str) -> tuple["object", np.ndarray]:
  """``(frame, lines)``: the file's records as a pandas frame and each record's line number."""
  import pandas as pd

  name = path.lower()
  for suffix in (".gz", ".bz2", ".xz"):
    name = name.removesuffix(suffix)
  if name.endswith((".csv", ".tsv")):
    frame = pd.read_csv(path, sep="\t" if name.endswith(".tsv") else ",", dtype=object)
    first = 2
  elif name.endswith((".jsonl", ".ndjson")):
    frame = pd.read_json(path, lines=True, dtype=False)
    first = 1
  elif name.endswith(".json"):
    frame = pd.read_json(path, dtype=False)
    first = 1
  elif name.endswith((".parquet", ".pq")):
    frame = pd.read_parquet(path)
    first = 1
  else:
    raise InputError(
      f"{path}: controls and covariates read CSV, TSV, JSONL, JSON or Parquet files."
    )
  return frame, np.arange(len(frame)) + first


def covariate_columns(
  path: str,
  comparisons: Comparisons,
  rejected_lines: Sequence[int],
  settings: ControlSettings,
) -> dict[str, np.ndarray]:
  """Raw difference columns of ``path``, one row per comparison loaded from it (eager).

  The file is read again; the records the loader rejected (``rejected_lines``) are dropped, and
  the rest must be the loaded comparisons in order (checked on the agent names), so a file whose
  rows the loader merged or reordered (count tables, per-task results) is refused.

  Args:
    path: the battles file the comparisons were loaded from.
    comparisons: the loaded comparisons.
    rejected_lines: the lines of the loader's rejected rows (``LoadReport.rejected``).
    settings: the :class:`ControlSettings`.

  Returns:
    Column name -> ``(m,)`` raw differences (:func:`arena_style_differences`,
    :func:`numeric_covariate_columns`), in the order style controls, then covariates.

  Raises:
    InputError: the rows cannot be aligned, no ``conv_metadata`` column for a style control, or
      a bad covariate column (counts and first lines).
  """
  import json

  frame, lines = _read_records(path)
  keep = ~np.isin(lines, np.asarray(list(rejected_lines), dtype=np.int64))
  frame, lines = frame[keep].reset_index(drop=True), lines[keep]
  m = comparisons.num_comparisons
  names = np.asarray(comparisons.agents, dtype=object)
  a_col, b_col = ("model_a", "model_b") if "model_a" in frame else ("a", "b")
  aligned = (
    len(frame) == m
    and a_col in frame
    and b_col in frame
    and np.array_equal(frame[a_col].astype(str).to_numpy(), names[np.asarray(comparisons.a)])
    and np.array_equal(frame[b_col].astype(str).to_numpy(), names[np.asarray(comparisons.b)])
  )
  if not aligned:
    raise InputError(
      f"{path}: controls and covariates need one battle per row, in the file's order, with "
      f"columns {a_col} and {b_col}; the loaded comparisons ({m}) do not match the file's "
      f"{len(frame)} kept records"
    )
  out: dict[str, np.ndarray] = {}
  style = [c for c in settings.control if c != "position"]
  if style:
    if "conv_metadata" not in frame:
      raise InputError(f"{path}: --control {','.join(style)} needs a conv_metadata column")

    def parsed(v):
      if isinstance(v, str):
        try:
          return json.loads(v)
        except ValueError:
          return None
      return v if isinstance(v, Mapping) else None

    meta = [parsed(v) for v in frame["conv_metadata"]]
    out.update(arena_style_differences(meta, control=style, lines=lines, source=path))
  if "position" in settings.control:
    judges = frame["judge"].tolist() if "judge" in frame else []
    if len({str(j) for j in judges}) > 1:  # several judges: each its own position bias
      out.update(judge_position_differences(judges, source=f"{path}: column 'judge'"))
    else:
      out["position"] = position_difference(m)
  if settings.covariate_columns:
    table = {str(c): frame[c].tolist() for c in frame.columns}
    out.update(
      numeric_covariate_columns(table, settings.covariate_columns, lines=lines, source=path)
    )
  return out
