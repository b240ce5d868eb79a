"""Input schemas: detection from the column names, and dispatch to the schema's loader.

:func:`detect_schema` names the schema of a header, :func:`load_table` hands a read table to the
schema's loader (below), and :func:`resolve_columns` maps the arena/simple roles to column names.

=============  ==============================================================  ==================
schema         columns (fields) that identify it                               loader
=============  ==============================================================  ==================
arena          ``model_a, model_b, winner`` or the one-hot ``winner_model_a,   ``_winner_rows``,
               winner_model_b, winner_tie``                                    ``_preferences``
mtbench        ``model_1, model_2, g1_winner, g2_winner``                      ``_judges``
arena-hard     ``model, games``                                                ``_judges``
alpacaeval     ``generator_1, generator_2, preference`` (or ``preferences``)   ``_preferences``
inspect        ``model, id, epoch`` and a ``score_*`` column                   ``_per_sample``
lm-eval        ``doc_id`` (a ``samples_*.jsonl`` file or folder)               ``_per_sample``
tasks          ``agent, task, score``                                          ``_task_results``
simple         ``a, b, winner``                                                ``_winner_rows``
winner-loser   ``winner_name, loser_name`` or ``winner, loser`` (any case)       ``_games``
scores         ``home_team, away_team, home_score, away_score`` or ``team1,      ``_games``
               team2, score1, score2`` (any case)
chess          ``White, Black, Result`` or ``white_id, black_id, winner`` (any    ``_games``
               case; PGN files give the tags as columns)
counts         ``wins_a, wins_b`` with ``a, b`` or ``model_a, model_b``; optional   ``_counts_rows``
               ``ties`` and context (aggregated counts, one row per pair)
=============  ==============================================================  ==================

Auto-detection picks the one schema whose columns are all present; when several match it
refuses, listing them, and when none does it reports the columns it looked for.
"""

from collections.abc import Callable, Iterable

import numpy as np

from .._errors import InputError, OptionError
from ._comparisons import Comparisons
from ._counts_rows import counts_rows, is_counts_header
from ._games import find_columns, game_rows
from ._judges import arena_hard_rows, mtbench_rows
from ._per_sample import inspect_rows, lm_eval_rows
from ._preferences import ONE_HOT, alpacaeval_rows, arena_onehot_rows
from ._report import LoadReport
from ._settings import SCHEMAS, LoadSettings
from ._task_results import pair_on_tasks
from ._winner_rows import parse_comparison_rows

GAME_SCHEMAS = ("winner-loser", "scores", "chess")
REQUIRED = {
  "arena": "model_a, model_b, winner (or winner_model_a, winner_model_b, winner_tie)",
  "mtbench": "model_1, model_2, g1_winner, g2_winner",
  "arena-hard": "model, games",
  "alpacaeval": "generator_1, generator_2, preference",
  "inspect": "model, id, epoch, score_<scorer>",
  "lm-eval": "doc_id and a metric field",
  "tasks": "agent, task, score",
  "simple": "a, b, winner",
  "winner-loser": "winner_name, loser_name (or winner, loser)",
  "scores": "home_team, away_team, home_score, away_score (or team1, team2, score1, score2)",
  "chess": "White, Black, Result (or white_id, black_id, winner)",
  "counts": "a, b (or model_a, model_b), wins_a, wins_b[, ties]",
}


def _matches(schema: str, h: set) -> bool:
  if schema in GAME_SCHEMAS:
    return find_columns(h, schema) is not None
  if schema == "arena":
    return {"model_a", "model_b"} <= h and ("winner" in h or set(ONE_HOT) <= h)
  if schema == "mtbench":
    return {"model_1", "model_2", "g1_winner", "g2_winner"} <= h
  if schema == "arena-hard":
    return {"model", "games"} <= h
  if schema == "alpacaeval":
    return {"generator_1", "generator_2"} <= h and bool({"preference", "preferences"} & h)
  if schema == "inspect":
    return {"model", "id", "epoch"} <= h and any(c.startswith("score_") for c in h)
  if schema == "lm-eval":
    return "doc_id" in h
  if schema == "tasks":
    return {"agent", "task", "score"} <= h
  if schema == "counts":
    return is_counts_header(h)
  return {"a", "b", "winner"} <= h


def detect_schema(header: Iterable[str], where: str) -> str | None:
  """The schema whose identifying columns ``header`` holds; ``None`` when none matches.

  Raises:
    InputError: several schemas match (the message lists them and their columns).
  """
  h = {str(c) for c in header}
  found = [s for s in SCHEMAS if _matches(s, h)]
  if len(found) > 1:
    listed = "; ".join(f"{s} ({REQUIRED[s]})" for s in found)
    raise InputError(
      f"ambiguous schema in {where}: the columns match {listed}; pass the schema "
      f"explicitly (--format {'|'.join(found)})."
    )
  return found[0] if found else None


def known_schemas_hint() -> str:
  """One line naming every schema and its columns (for 'not found' messages)."""
  return "; ".join(f"{s}: {REQUIRED[s]}" for s in SCHEMAS)


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
    raise OptionError("pass both `a` and `b` column names, or neither (auto-detect).")
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
      raise InputError(
        f"column {name!r} ({role}) not found{hint} in {where}; available columns: {available}. "
        f"Known schemas: {known_schemas_hint()}."
      )
  return cols


def load_table(
  header: list[str],
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  pre: np.ndarray | None,
  settings: LoadSettings,
  *,
  schema: str,
  source: str | None,
  sources: np.ndarray | None = None,
  files: np.ndarray | None = None,
) -> tuple[Comparisons, LoadReport]:
  """Dispatches a read table to the loader of ``schema`` (already resolved, not ``"auto"``).

  Args:
    header: available column names.
    column: ``column(name)`` -> object array. Optional attributes: ``column.distinct(names)``
      (a reader that reads the file in batches: ``(cells, rows)``, the columns ``names`` of the
      distinct rows as :class:`~ste_jax.data._distinct.CodedColumn` and their
      :class:`~ste_jax.data._distinct.DistinctRows`, or ``None`` to read whole columns),
      ``column.prefetch(names)`` and ``column.coded(name)``.
    lines: int ``(N,)`` line numbers.
    pre: pre-rejections or ``None``.
    settings: the loading options (``settings.schema`` may still be ``"auto"``).
    schema: one of :data:`SCHEMAS`, the schema to read.
    source: input description; sources: per-row file names; files: per-row paths (lm-eval).

  Returns:
    ``(comparisons, report)``.
  """
  header = [str(c) for c in header]
  where = source or "the data frame"
  context, contexts = settings.context, settings.contexts
  for name in (context if isinstance(context, str) else None,):
    if name is not None and name not in header:
      raise InputError(
        f"column {name!r} (context) not found in {where}; available columns: {header}."
      )
  ctx = context
  if context is None and schema not in ("inspect", "lm-eval"):
    ctx = "context" if "context" in header else None
  if context is False:
    ctx = None
  common = dict(settings=settings, source=source, sources=sources)
  if schema in ("arena", "simple"):
    a, b = settings.a, settings.b
    if (
      schema == "arena"
      and "winner" not in header
      and set(ONE_HOT) <= set(header)
      and (a is None and b is None)
    ):
      return arena_onehot_rows(column, lines, pre=pre, context=ctx, **common)
    if a is None and b is None:
      a, b = ("model_a", "model_b") if schema == "arena" else ("a", "b")
    cols = resolve_columns(
      header,
      a=a,
      b=b,
      winner=settings.winner,
      context=ctx if ctx else False,
      weight=settings.weight,
      where=where,
    )
    batches = getattr(column, "distinct", lambda _: None)  # readers that read in batches
    found = batches(list(cols.values()))
    if found is not None:  # the distinct rows' cells, and the input rows they stand for
      cells, distinct = found
      raw = dict(zip(cols, cells))
    else:
      distinct = None
      if hasattr(column, "prefetch"):  # a reader that parses several columns in one pass
        column.prefetch(list(cols.values()))
      coded = getattr(column, "coded", lambda _: None)  # readers with dictionary-coded columns
      raw = {role: _coded_or_cells(coded, column, name) for role, name in cols.items()}
    return parse_comparison_rows(
      raw,
      lines,
      columns=cols,
      pre=pre,
      schema=schema,
      a_first=schema == "arena",
      distinct=distinct,
      **common,
    )
  if schema == "mtbench":
    return mtbench_rows(column, lines, pre=pre, context=ctx, **common)
  if schema == "arena-hard":
    return arena_hard_rows(column, lines, header, pre=pre, context=ctx, **common)
  if schema == "alpacaeval":
    return alpacaeval_rows(column, lines, header, pre=pre, context=ctx, **common)
  if schema in GAME_SCHEMAS:
    return game_rows(column, lines, header, schema=schema, pre=pre, context=ctx, **common)
  if schema == "counts":
    return counts_rows(column, lines, header, pre=pre, context=ctx or None, **common)
  if contexts is not None:
    raise OptionError(f"`contexts` cannot be fixed for the {schema} schema.")
  if schema == "inspect":
    return inspect_rows(column, lines, header, pre=pre, context=ctx, **common)
  if schema == "lm-eval":
    return lm_eval_rows(column, lines, header, files=files, pre=pre, context=ctx, **common)
  if schema == "tasks":
    cols = {"agent": settings.agent, "task": settings.task, "score": settings.score}
    if ctx:
      cols["context"] = ctx
    for role, name in cols.items():
      if name not in header:
        raise InputError(
          f"column {name!r} ({role}) not found in {where}; available columns: {header}."
        )
    raw = {role: column(name) for role, name in cols.items()}
    return pair_on_tasks(raw, lines, columns=cols, pre=pre, schema="tasks", **common)
  raise OptionError(f"unknown schema {schema!r}; expected one of {['auto', *SCHEMAS]}.")


def _coded_or_cells(coded, column, name):
  """The column as a ``CodedColumn`` where the reader has one, else as its object array."""
  cells = coded(name)
  return column(name) if cells is None else cells
