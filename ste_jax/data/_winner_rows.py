"""Rows with a winner label -> ``(Comparisons, LoadReport)``: the arena and simple schemas.

The arena battle and simple ``a, b, winner`` tables (and the raw formats of the bundled data sets,
:mod:`ste_jax.data._raw`) come as a few object columns: the two agents, the winner label, an
optional context and weight. :func:`parse_comparison_rows` checks every row with the helpers of
:mod:`ste_jax.data._rows`, maps the winner labels to outcomes, and hands the rows to
:func:`~ste_jax.data._assemble.assemble`.
"""

import numpy as np

from .._errors import InputError
from . import _report as R
from ._assemble import assemble, context_strings
from ._comparisons import Comparisons
from ._distinct import CodedColumn, DistinctRows, distinct_rows
from ._report import LoadReport
from ._rows import Rejections, flag_missing_and_nan, tie_drops, tie_mapping
from ._settings import LoadSettings

# Winner labels (compared after ``strip().lower()``): the simple schema of
# ``shared/data/*/comparisons.csv`` (a, b, tie) and the Chatbot Arena battle schema (FastChat's
# ``clean_battle_data.py``: model_a, model_b, tie, tie (bothbad); the arena-human-preference-140k
# release spells the last one both_bad). A winner equal to the row's own ``a`` or ``b`` agent name
# is also understood.
A_WINS = ("a", "model_a")
B_WINS = ("b", "model_b")
TIES = ("tie",)
BOTH_BAD = ("tie (bothbad)", "both_bad")


def parse_comparison_rows(
  raw: dict,
  lines: np.ndarray,
  *,
  columns: dict,
  settings: LoadSettings,
  source: str | None = None,
  sources: np.ndarray | None = None,
  pre: np.ndarray | None = None,
  schema: str | None = None,
  a_first: bool = False,
  distinct: DistinctRows | None = None,
) -> tuple[Comparisons, LoadReport]:
  """Checks rows with a winner label and builds ``(Comparisons, LoadReport)``.

  Labels (after ``strip().lower()``): ``a``/``model_a`` (first agent won), ``b``/``model_b``,
  ``tie``, ``tie (bothbad)``/``both_bad`` (a both-bad tie), or one of the row's two agent names.

  The checks run once per distinct row (:func:`~ste_jax.data._distinct.distinct_rows`: the same
  cells, of the same types), counted as many times as it occurs; the comparisons and the report
  are those of the rows one by one.

  Args:
    raw: object arrays (or :class:`~ste_jax.data._distinct.CodedColumn`) per role: ``"a"``,
      ``"b"``, ``"winner"``, optionally ``"context"`` and ``"weight"``; all of length ``N`` (one
      entry per input row, in input order).
    lines: int ``(N,)`` line number of each row in its source.
    columns: the source column name of each role present in ``raw`` (for messages).
    settings: the loading options (``agents``, ``contexts``, ``strict``, and the ``policy``'s
      ``tie`` and ``both_bad``).
    source: description of the input for messages.
    sources: optional object ``(N,)`` source file of each row (multi-file loaders).
    pre: optional object ``(N,)`` of ``None`` or ``(reason, detail)`` for rows already known to
      be bad (malformed records).
    schema: schema name for the report.
    a_first: the first agent (``a``) was shown first (Chatbot Arena's ``model_a``): report the
      position bias.
    distinct: optional :class:`~ste_jax.data._distinct.DistinctRows` of the input rows, found by
      the reader (a file read in batches, :class:`~ste_jax.data._distinct.DistinctBatches`, rows
      with a ``pre`` rejection kept apart); then ``raw`` holds the ``U`` distinct rows' cells,
      not the ``N`` input rows'.

  Returns:
    ``(comparisons, report)``.

  Raises:
    ValueError: ``"no comparisons"`` when there are no rows or no usable rows; with
      ``strict=True``, the first bad row, naming its line number and reason.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  policy = settings.policy
  where = f" in {source}" if source else ""
  num_rows = len(lines)
  if num_rows == 0:
    raise InputError(f"no comparisons{where}: the input has no data rows.")
  if distinct is None:
    apart = None if pre is None else np.array([p is not None for p in pre], dtype=bool)
    distinct = distinct_rows(list(raw.values()), apart=apart)
    at = distinct.first
  else:
    at = np.arange(len(distinct.first))
  first, repeats = distinct.first, distinct.count
  raw = {role: _cells_at(cells, at) for role, cells in raw.items()}
  num_distinct = len(first)
  rej = Rejections(num_distinct)
  rej.flag_pre(None if pre is None else pre[first])
  checked = {k: v for k, v in columns.items() if k != "context"}
  s = flag_missing_and_nan(rej, checked, raw)
  mappings = []

  # Winner label -> outcome for a.
  winner = s["winner"]
  lower = pd.Series(winner, dtype=object).str.lower().to_numpy(dtype=object)
  outcome = np.full(num_distinct, np.nan)
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
    lambda i: (
      f"column {wcol!r} = {winner[i]!r}; expected a/b/tie, model_a/model_b/tie/"
      f"'tie (bothbad)'/both_bad or one of the two agent names"
    ),
  )
  label_codes, label_names = pd.factorize(pd.Series(lower[rej.ok], dtype=object))
  seen = pd.Series(
    np.bincount(label_codes, weights=repeats[rej.ok], minlength=len(label_names)).astype(np.int64),
    index=label_names,
  ).sort_values(ascending=False)  # as value_counts orders them
  labels = []
  for label, count in seen.items():
    if label in A_WINS or label in B_WINS or label in TIES or label in BOTH_BAD:
      kind = (
        "first agent won"
        if label in A_WINS
        else "second agent won"
        if label in B_WINS
        else "tie"
        if label in TIES
        else "both bad"
      )
      labels.append(f"{label!r} -> {kind} ({count})")
  named = int(repeats[(by_name_a | by_name_b) & rej.ok].sum())
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
    context = context_strings(raw["context"], columns["context"], mappings, rej, repeats)
  outcome = np.where(np.isnan(outcome), 0.5, outcome)  # rejected rows only; never used
  return assemble(
    a=s["a"],
    b=s["b"],
    raw_a=raw["a"],
    raw_b=raw["b"],
    rej=rej,
    lines=lines,
    row=np.arange(num_distinct),
    outcome=outcome,
    weight=weight,
    drop=tie_drops(outcome, both_bad, policy),
    position=(np.arange(num_distinct), outcome) if a_first else None,
    context=context,
    settings=settings,
    source=source,
    sources=sources,
    schema=schema,
    mappings=mappings,
    distinct=distinct,
  )


def _cells_at(column, rows: np.ndarray) -> np.ndarray:
  """Object array of the cells of ``column`` (object array or ``CodedColumn``) at ``rows``."""
  if isinstance(column, CodedColumn):
    return np.asarray(column.values, dtype=object)[np.asarray(column.codes)[rows]]
  return np.asarray(column, dtype=object)[rows]
