"""Raw covariate differences read from battle records: Chatbot Arena style and numeric columns.

Chatbot Arena battles carry a ``conv_metadata`` object per battle with the style counts of both
answers: ``sum_assistant_a_tokens``, ``header_count_a`` (``{"h1": .., ..., "h6": ..}``),
``list_count_a`` (``{"ordered": .., "unordered": ..}``), ``bold_count_a`` (``{"**": .., "__": ..}``)
and their ``_b`` twins. As in FastChat's style control, a count given as an object is the sum of
its values, and each feature becomes the ratio ``(f_a - f_b) / (f_a + f_b + 1)``. The columns
returned here are raw; :func:`ste_jax.evaluate.normalize_differences` standardizes them.

Controls (``control=``): ``length`` (answer tokens), ``markdown`` (three columns ``header``,
``list``, ``bold``) and ``position`` (a constant ``+1``: side ``a`` was shown first).
"""

from collections.abc import Mapping, Sequence
import math

import numpy as np

from ste_jax._errors import InputError

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
    out["position"] = np.ones((m,), dtype=np.float64)
  return out


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
