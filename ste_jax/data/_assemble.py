"""The last step of every pairwise loader: checked rows and candidate comparisons -> Comparisons.

A loader turns its schema into per-row agent names (and an optional context) plus *candidate
comparisons*: each candidate belongs to one input row (a row may give zero, one or two: a
two-order judgment kept separately, a soft outcome split in two), carries the outcome for the
row's first agent, a weight, an optional policy-drop reason and, where the data record it,
whether the row's first agent was shown first. :func:`assemble` then

* rejects self-comparisons, rows whose every candidate a policy dropped (reason ``"dropped by
  policy"``) and, with fixed ``agents``/``contexts``, unknown names;
* sends rows with an empty or NaN context to the context ``(none)`` (never a rejection);
* reports agent names changed by normalization (surrounding whitespace and invisible characters
  removed, Unicode NFC; case is never changed, but names that differ only in case are listed)
  and names merged by it;
* reports the first-position win share when the presentation order is known;
* builds :class:`Comparisons` and a :class:`LoadReport` with ``rows_read = rows_used +
  len(rejected)``.
"""

from collections.abc import Sequence
import unicodedata

import numpy as np

from .._checks import default_float_dtype
from .._errors import InputError, OptionError
from . import _report as R
from ._comparisons import DEFAULT_CONTEXT, Comparisons, _as_names
from ._report import LoadReport, PositionBias, name_repr
from ._rows import INVISIBLE, all_strings, classify, encode, flag_non_scalar, sorted_names
from ._settings import LoadSettings

NONE_CONTEXT = "(none)"


def context_strings(raw, column: str, mappings: list, rej=None, count=None) -> np.ndarray:
  """Stripped context names; empty, missing or NaN cells become ``(none)`` (noted in mappings).

  With ``rej`` (the rows' :class:`~ste_jax.data._rows.Rejections`), rows whose context cell is a
  list, dict or array are rejected as ``"non-scalar cell"``. ``count``: optional int ``(N,)``
  number of input rows each row stands for (distinct rows), for the mapping line's counts.
  """
  if rej is not None:
    flag_non_scalar(rej, raw, column)
  missing, nan, strings = classify(raw)
  empty = missing | nan
  rows = np.ones(len(strings), dtype=np.int64) if count is None else np.asarray(count)
  num_empty, total = int(rows[empty].sum()), int(rows.sum())
  if num_empty:
    strings = strings.copy()
    strings[empty] = NONE_CONTEXT
    scope = "every row" if num_empty == total else f"{num_empty} of {total} rows"
    mappings.append(
      f"context column {column!r} is empty or NaN on {scope}: those rows go to the context "
      f"{NONE_CONTEXT!r}"
    )
  return strings


def name_normalization(raw_names, kept_strings, weights=None):
  """``(renamed, merged, case_note)`` for the agent names of the used rows.

  Args:
    raw_names: object array of the raw cells (both sides, used rows only).
    kept_strings: the stripped names of the same cells.
    weights: optional int array, the number of input cells each cell stands for (distinct rows).

  Returns:
    ``renamed``: ``(raw, normalized, rows)`` per raw name that stripping changed; ``merged``:
    ``(normalized, raws)`` per name that several distinct raw names became; ``case_note``: a
    mapping line listing names that differ only in case (kept distinct), or ``None``.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  if len(raw_names) == 0:
    return (), (), None
  if all_strings(raw_names) and all_strings(kept_strings):
    # Large inputs repeat few names: count the distinct (raw, name) pairs, then group those.
    raw_code, raw_unique = pd.factorize(np.asarray(raw_names, dtype=object))
    name_code, name_unique = pd.factorize(np.asarray(kept_strings, dtype=object))
    pair, where = np.unique(
      raw_code.astype(np.int64) * len(name_unique) + name_code, return_inverse=True
    )
    size = np.bincount(where.reshape(-1), weights=weights, minlength=len(pair)).astype(np.int64)
    frame = pd.DataFrame(
      {
        "raw": np.asarray(raw_unique, dtype=object)[pair // len(name_unique)],
        "name": np.asarray(name_unique, dtype=object)[pair % len(name_unique)],
        "size": size,
      }
    )
    counts = frame.groupby(["raw", "name"], sort=True)["size"].sum()
  else:
    frame = pd.DataFrame(
      {
        "raw": pd.Series(raw_names, dtype=object).astype(str),
        "name": pd.Series(kept_strings, dtype=object),
        "size": np.ones(len(raw_names), np.int64) if weights is None else weights,
      }
    )
    counts = frame.groupby(["raw", "name"], sort=True)["size"].sum()
  renamed = tuple((raw, name, int(n)) for (raw, name), n in counts.items() if raw != name)
  merged = []
  if renamed:
    variants = counts.reset_index().groupby("name")["raw"].agg(list)
    merged = [(name, tuple(sorted(raws))) for name, raws in variants.items() if len(raws) > 1]
  names = pd.Series(pd.unique(frame["name"]), dtype=object)
  folded = names.str.lower()
  dup = folded.duplicated(keep=False)
  note = None
  if dup.any():
    groups = names[dup].groupby(folded[dup]).agg(lambda x: " / ".join(sorted(map(repr, x))))
    note = "names that differ only in case are kept distinct (no case folding): " + "; ".join(
      groups.tolist()
    )
  return renamed, tuple(merged), note


def rename_mapping(renamed, unit: str) -> str:
  """The mapping line of the names that normalization changed (what changed, the first five).

  Args:
    renamed: ``(raw, normalized, count)`` triples (:func:`name_normalization`).
    unit: what ``count`` counts (``"cells"``, ``"rows"``).

  Returns:
    e.g. ``"agent names: surrounding whitespace removed: ' gpt' -> 'gpt' (3 cells)"``.
  """
  kinds = {}
  for raw, _, _ in renamed:
    if raw != raw.strip():
      kinds["surrounding whitespace removed"] = None
    if any(ch in INVISIBLE for ch in raw):
      kinds["invisible characters removed"] = None
    if unicodedata.normalize("NFC", raw) != raw:
      kinds["Unicode NFC applied"] = None
  ordered = [k for k in RENAME_KINDS if k in kinds] or ["normalized"]
  shown = ", ".join(f"{name_repr(r)} -> {n!r} ({k} {unit})" for r, n, k in renamed[:5])
  more = f" and {len(renamed) - 5} more" if len(renamed) > 5 else ""
  return f"agent names: {', '.join(ordered)}: {shown}{more}"


RENAME_KINDS = (
  "surrounding whitespace removed",
  "invisible characters removed",
  "Unicode NFC applied",
)


def assemble(
  *,
  a: np.ndarray,
  b: np.ndarray,
  raw_a,
  raw_b,
  rej,
  lines: np.ndarray,
  row: np.ndarray,
  outcome: np.ndarray,
  weight: np.ndarray | None = None,
  drop: np.ndarray | None = None,
  position=None,
  position_label: str = "first position",
  context: np.ndarray | None = None,
  settings: LoadSettings,
  source: str | None = None,
  sources: np.ndarray | None = None,
  schema: str | None = None,
  mappings: Sequence[str] = (),
  distinct=None,
) -> tuple[Comparisons, LoadReport]:
  """Builds ``(Comparisons, LoadReport)`` from checked rows and candidate comparisons.

  With ``distinct`` (a :class:`~ste_jax.data._distinct.DistinctRows`), the row arrays (``a``,
  ``b``, ``raw_a``, ``raw_b``, ``rej``, ``context``, the candidates' ``row``) are those of the
  distinct rows, while ``lines`` and ``sources`` are those of the input rows: the counts of the
  report are of input rows, every rejected input row is listed with its own line, and the
  comparisons come one per kept candidate of every input row, in input order, as if the rows had
  been checked one by one. Each comparison carries its input row's line
  (:attr:`Comparisons.line`).

  Args:
    a: object ``(N,)`` stripped name of each row's first agent.
    b: object ``(N,)`` stripped name of each row's second agent.
    raw_a: object ``(N,)`` the raw cells behind ``a`` (for the normalization report).
    raw_b: object ``(N,)`` the raw cells behind ``b``.
    rej: the rows' :class:`~ste_jax.data._rows.Rejections` (earlier flags win).
    lines: int ``(N,)`` line number of each (input) row.
    row: int ``(M,)`` the row of each candidate comparison.
    outcome: float ``(M,)`` outcome for the row's ``a`` (NaN only on rejected rows).
    weight: optional float ``(M,)`` weights (default 1).
    drop: optional object ``(M,)``: ``None`` to keep the candidate, or the policy that drops it.
    position: optional ``(rows, first_outcome)`` int/float arrays, one entry per individual
      judgment whose presentation order is known: its row and its outcome for the agent shown
      first. The report's position bias counts the judgments of rows not rejected as bad
      (policy-dropped rows count: their judgments are valid).
    position_label: who holds the first position, for the report (``"white"``, ``"home team"``).
    context: optional object ``(N,)`` context names (``(none)`` already substituted).
    settings: the loading options; this step reads ``agents`` and ``contexts`` (fixed names)
      and ``strict`` (raise on the first bad row; policy drops are not errors).
    source: input description for messages.
    sources: optional object ``(N,)`` file of each row.
    schema: schema name for the report.
    mappings: mapping lines for the report (this function appends its own).
    distinct: optional :class:`~ste_jax.data._distinct.DistinctRows` of the input rows.

  Returns:
    ``(comparisons, report)``.

  Raises:
    ValueError: ``"no comparisons"`` (first line: the top rejection reasons with counts and
      first line numbers), or with ``strict`` the first bad row.
  """
  agents, contexts, strict = settings.agents, settings.contexts, settings.strict
  mappings = list(mappings)
  where = f" in {source}" if source else ""
  num_rows = len(a)
  num_input = num_rows if distinct is None else distinct.num_rows
  repeats = np.ones(num_rows, np.int64) if distinct is None else distinct.count
  row = np.asarray(row, dtype=np.int64)
  m = len(row)
  weight = np.ones(m) if weight is None else np.asarray(weight, dtype=np.float64)
  drop = np.full(m, None, dtype=object) if drop is None else drop
  dropped = np.array([d is not None for d in drop], dtype=bool) if m else np.zeros(0, bool)

  rej.flag(a == b, R.SELF_COMPARISON, lambda i: f"{a[i]!r} vs itself")

  # Rows whose every candidate a policy dropped.
  has_keep = np.bincount(row[~dropped], minlength=num_rows) > 0
  has_any = np.bincount(row, minlength=num_rows) > 0
  first_drop = np.full(num_rows, None, dtype=object)
  for k in np.flatnonzero(dropped)[::-1]:  # the first dropped candidate of each row wins
    first_drop[row[k]] = drop[k]
  rej.flag(has_any & ~has_keep, R.POLICY_DROP, lambda i: str(first_drop[i]))
  rej.flag(~has_any, R.INCONSISTENT, lambda i: "no comparison could be formed")

  ok = rej.ok
  if agents is None:
    agents = sorted_names(a[ok], b[ok])
  agents = _as_names(agents, "agents")
  if len(agents) > settings.max_agents:
    raise OptionError(
      f"{len(agents)} agents{where}, more than max_agents={settings.max_agents} (--max-agents): "
      "check the agent columns, or raise the limit"
    )
  a_idx, b_idx = encode(a, agents), encode(b, agents)
  rej.flag(
    (a_idx < 0) | (b_idx < 0),
    R.UNKNOWN_AGENT,
    lambda i: f"{a[i] if a_idx[i] < 0 else b[i]!r} is not in `agents`",
  )
  if context is not None:
    if contexts is None:
      contexts = sorted_names(context[rej.ok])
    contexts = _as_names(contexts, "contexts")
    c_idx = encode(context, contexts)
    rej.flag(c_idx < 0, R.UNKNOWN_CONTEXT, lambda i: f"{context[i]!r} is not in `contexts`")
  else:
    if contexts is not None:
      raise OptionError("`contexts` was given but the data has no context column.")
    contexts = (DEFAULT_CONTEXT,)
    c_idx = np.zeros(num_rows, dtype=np.int64)

  rejected = rej.rows(lines, sources, distinct)
  bad = [r for r in rejected if r.reason != R.POLICY_DROP]
  if strict and bad:
    raise InputError(f"bad row{where}: {bad[0].describe()}")
  ok = rej.ok
  if not ok.any():
    report = LoadReport(num_input, 0, 0, rejected, 0, source, schema, tuple(mappings))
    raise InputError(
      f"no comparisons{where}: all {num_input} rows were rejected ({report.reason_summary()})."
      f"\n{report.summary()}"
    )
  keep = ok[row] & ~dropped
  cand = np.flatnonzero(keep)
  cand_repeats = repeats[row[cand]]
  kr = row[cand]
  # The kept candidates' fields, then (distinct rows) one gather per field to the input rows,
  # in compact dtypes: the comparisons' own (int32 indices, the default float outcome; an
  # outcome in [0, 1] casts to it as the Comparisons would cast it).
  fields = [
    a_idx[kr].astype(np.int32),
    b_idx[kr].astype(np.int32),
    outcome[cand].astype(default_float_dtype()),
    c_idx[kr].astype(np.int32),
    None if np.all(weight[keep] == 1) else weight[cand],
  ]
  if distinct is not None:
    index = _per_input_row(kr, distinct)
    fields = [None if x is None else x[index] for x in fields]
    del index
    # the input row of each comparison: every input row, once per kept candidate of its
    # distinct row (the order of _per_input_row)
    per_row = np.bincount(kr, minlength=len(distinct.count))[distinct.inverse]
    line_in = np.repeat(np.asarray(lines), per_row)
    del per_row
  else:
    line_in = np.asarray(lines)[kr]
  a_in, b_in, outcome_in, context_in, weight_in = fields
  del fields
  comps = Comparisons.from_arrays(
    a_in,
    b_in,
    outcome_in,
    agents=agents,
    context=context_in,
    contexts=contexts,
    weight=weight_in,
    line=line_in.astype(np.int32),
  )
  del a_in, b_in, outcome_in, context_in, weight_in, line_in
  renamed, merged, case_note = name_normalization(
    np.concatenate([np.asarray(raw_a, dtype=object)[ok], np.asarray(raw_b, dtype=object)[ok]]),
    np.concatenate([a[ok], b[ok]]),
    None if distinct is None else np.concatenate([repeats[ok], repeats[ok]]),
  )
  if renamed:
    mappings.append(rename_mapping(renamed, "cells"))
  if merged:
    mappings.append(f"agent names: {len(merged)} names merged by normalization (listed below)")
  if case_note:
    mappings.append(case_note)
  bias = None
  if position is not None:
    valid = ok | np.isin(rej.code, rej.code_of(R.POLICY_DROP))
    p_rows, p_out = (np.asarray(x) for x in position)
    o = np.asarray(p_out, dtype=np.float64)[valid[p_rows]]
    times = repeats[p_rows[valid[p_rows]]]
    bias = PositionBias(
      int(times[o == 1].sum()),
      int(times[o == 0].sum()),
      int(times[o == 0.5].sum()),
      first=position_label,
    )
  report = LoadReport(
    rows_read=num_input,
    rows_used=int(repeats[ok].sum()),
    ties=int(cand_repeats[outcome[keep] == 0.5].sum()),
    rejected=rejected,
    num_comparisons=int(cand_repeats.sum()),
    source=source,
    schema=schema,
    mappings=tuple(mappings),
    renamed=renamed,
    merged=merged,
    position_bias=bias,
  )
  return comps, report


def _per_input_row(rows: np.ndarray, distinct) -> np.ndarray:
  """Indices into ``rows`` (the distinct row of each kept candidate, in candidate order) that
  list, for every input row in order, the candidates of its distinct row in candidate order."""
  if len(np.unique(rows)) == len(rows):  # at most one candidate per row: one gather
    dtype = np.int32 if len(rows) < 2**31 else np.int64
    position = np.full(len(distinct.count), -1, dtype=dtype)
    position[rows] = np.arange(len(rows), dtype=dtype)
    index = position[distinct.inverse]
    return index[index >= 0]
  order = np.argsort(rows, kind="stable")
  per_row = np.bincount(rows, minlength=len(distinct.count))
  start = np.cumsum(per_row) - per_row
  times = per_row[distinct.inverse]
  total = int(times.sum())
  owner = np.repeat(distinct.inverse, times)
  offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(times) - times, times)
  return order[start[owner] + offset]
