"""Loading options, declared once: :class:`LoadSettings` (the CLI's loading flags come from it)."""

from collections.abc import Mapping, Sequence
import dataclasses
import difflib
from typing import Any

from .._errors import OptionError
from .._options import at_least, check_options, option
from ._policies import OutcomePolicy, as_policy

SCHEMAS = (
  "arena",
  "mtbench",
  "arena-hard",
  "alpacaeval",
  "inspect",
  "lm-eval",
  "tasks",
  "simple",
  "winner-loser",
  "scores",
  "chess",
  "counts",
)

_SCHEMA_HELP = (
  "input schema (README 'Input formats'): arena (model_a, model_b, winner, or the 55k "
  "one-hot winner_model_a/_b/winner_tie), mtbench (model_1, model_2, g1_winner, g2_winner), "
  "arena-hard (model, games), alpacaeval (generator_1, generator_2, preference), inspect (model, "
  "id, epoch, score_*), lm-eval (samples_*.jsonl: doc_id + metric), tasks (one row per agent and "
  "task with a score; pairs formed per task), simple (a, b, winner[, context]), winner-loser "
  "(winner_name, loser_name or winner, loser: tennis match files), scores (home_team, away_team, "
  "home_score, away_score or team1, team2, score1, score2), chess (White, Black, Result: PGN "
  "files or tables; or white_id, black_id, winner), counts (a, b or model_a, model_b, wins_a, "
  "wins_b[, ties][, context]: one row per pair, e.g. a warehouse GROUP BY) or auto (detected "
  "from the columns; ambiguous files are refused)"
)


@dataclasses.dataclass(frozen=True)
class LoadSettings:
  """Every option of :func:`~ste_jax.data.load_comparisons` and ``from_dataframe``, once.

  Each field is declared with :func:`ste_jax._options.option`: its default, its check and its
  help text; fields with a flag are the loading flags of the ``ste-jax`` command line (``schema``
  is ``--format``, ``context`` is ``--context-column``, the ``tasks`` columns are
  ``--agent-column``, ``--task-column`` and ``--score-column``); the flags of the outcome policy
  (``--ties``, ``--both-bad``, ...) are the fields of :class:`~ste_jax.data.OutcomePolicy`.

  Attributes:
    schema: ``"auto"`` (detected from the columns; the arena/simple schema when ``a``/``b`` are
      given) or one of :data:`SCHEMAS` (see :func:`~ste_jax.data.load_comparisons`).
    format: files only: ``"auto"`` (from the file suffix), ``"csv"``, ``"tsv"``, ``"jsonl"``,
      ``"json"``, ``"parquet"`` or ``"pgn"``; ``--file-format`` on the command line (its
      ``--format`` is the ``schema``).
    a: arena/simple: column with the first agent's name. ``None``: ``"model_a"``, or ``"a"``
      when the table has columns ``a`` and ``b`` and no ``model_a``.
    b: column with the second agent's name (default as for ``a``).
    winner: arena/simple: column with the winner label.
    context: column with the context (category, prompt, task family); ``None``: ``"context"``
      when present (Inspect: ``task_name``; lm-eval: the task), else none; ``False``: none.
    weight: arena/simple: column with non-negative row weights; ``None``: every row counts once.
    agents: fixed agent names (the index order); rows naming another agent are rejected.
      ``None``: the sorted distinct names of the usable rows.
    contexts: fixed context names; ``None``: the sorted distinct contexts.
    strict: raise on the first bad row (naming its line number) instead of reporting them all.
    skip_bad_rows: rows that cannot be used (a missing or NaN cell, an unknown label, a
      self-comparison, a malformed record, ...) are refused by default: the loader raises
      :class:`~ste_jax.InputError` naming the reasons, their counts and first line numbers.
      ``True`` drops them instead, with a :class:`~ste_jax.data.BadRowsWarning`; they stay
      listed in the returned :class:`~ste_jax.data.LoadReport`. The command line's
      ``--skip-bad-rows``. Rows excluded by an explicit outcome policy (``tie="drop"``) are
      never refused.
    max_agents: the most agents a file may name (the command line's ``--max-agents``): the
      cores cost ``O(n^3)`` work and ``O(n^2)`` memory per tournament, so a file with more names
      (often a wrong column taken for the agents) is refused with an error naming the option.
    policy: the :class:`~ste_jax.data.OutcomePolicy` (a dict of its fields, or ``None`` for
      its defaults, is converted).
    baseline: Arena-Hard baseline when the records have no ``baseline`` field; ``None``:
      ``gpt-4-0314``.
    metric: Inspect score column / lm-eval metric field; ``None``: detected.
    agent: the ``tasks`` schema's agent column.
    task: the ``tasks`` schema's task column.
    score: the ``tasks`` schema's score column (higher is better).

  Raises:
    OptionError: an unknown schema (the message lists the schemas).
    ValueError: a bad policy field.

  Example:
    >>> settings = LoadSettings(schema="tasks", policy={"tie": "drop"})
    >>> settings.policy.tie, settings.score
    ('drop', 'score')
  """

  schema: str = option("auto", flag="--format", choices=("auto", *SCHEMAS), help=_SCHEMA_HELP)
  format: str = option(  # pylint: disable=redefined-builtin
    "auto",
    flag="--file-format",
    metavar="FILE_FORMAT",
    help="file format: auto (the suffix), csv, tsv, jsonl, json, parquet, pgn (compression: "
    "from the suffix)",
  )
  agent: str = option(
    "agent", flag="--agent-column", metavar="AGENT_COLUMN", help="tasks format: agent column"
  )
  task: str = option(
    "task", flag="--task-column", metavar="TASK_COLUMN", help="tasks format: task column"
  )
  score: str = option(
    "score",
    flag="--score-column",
    metavar="SCORE_COLUMN",
    help="tasks format: score or success column, higher is better",
  )
  context: str | bool | None = option(
    None,
    flag="--context-column",
    metavar="CONTEXT_COLUMN",
    help="context (category) column (none: 'context' when present; inspect: task_name; "
    "lm-eval: the task); empty cells go to the context '(none)'",
  )
  a: str | None = option(None, flag=None, help="arena/simple: first agent's column")
  b: str | None = option(None, flag=None, help="arena/simple: second agent's column")
  winner: str = option("winner", flag=None, help="arena/simple: winner label column")
  weight: str | None = option(None, flag=None, help="arena/simple: row weight column")
  agents: Sequence[str] | None = option(None, flag=None, help="fixed agent names and order")
  contexts: Sequence[str] | None = option(None, flag=None, help="fixed context names and order")
  strict: bool = option(False, flag=None, help="raise on the first bad row instead of reporting it")
  skip_bad_rows: bool = option(
    False,
    help="drop rows that cannot be used (with a warning; listed in the load report) instead of "
    "refusing the input",
  )
  max_agents: int = option(
    10_000,
    help="refuse data naming more agents than this (the cores cost O(n^3) work, O(n^2) memory)",
    check=at_least(2),
  )
  policy: OutcomePolicy = option(
    OutcomePolicy(), flag=None, help="how labels become outcomes (flags: its own fields)"
  )
  baseline: str | None = option(
    None, help="arena-hard: baseline model when the records name none (none: gpt-4-0314)"
  )
  metric: str | None = option(
    None, help="inspect: score column (score_<scorer>); lm-eval: metric field (none: detected)"
  )

  def __post_init__(self) -> None:
    if self.schema not in ("auto", *SCHEMAS):
      raise OptionError(f"unknown schema {self.schema!r}; expected one of {['auto', *SCHEMAS]}.")
    object.__setattr__(self, "policy", as_policy(self.policy))
    check_options(self)


_FIELDS = tuple(f.name for f in dataclasses.fields(LoadSettings))


def load_settings(
  settings: LoadSettings | None, overrides: Mapping[str, Any], caller: str
) -> LoadSettings:
  """``settings`` (default: :class:`LoadSettings`'s defaults) with keyword ``overrides`` applied.

  Raises:
    TypeError: ``settings`` is not a :class:`LoadSettings`, or an override names no field (the
      message names the keyword, the closest field and ``caller``).
  """
  if settings is None:
    settings = LoadSettings()
  elif not isinstance(settings, LoadSettings):
    raise TypeError(
      f"{caller}: settings must be a LoadSettings or None, got {type(settings).__name__}."
    )
  for name in overrides:
    if name not in _FIELDS:
      close = difflib.get_close_matches(name, _FIELDS, n=1)
      hint = f" (did you mean {close[0]!r}?)" if close else ""
      raise TypeError(
        f"{caller}() got an unexpected keyword argument {name!r}{hint}; the loading options "
        f"are the fields of LoadSettings: {', '.join(_FIELDS)}."
      )
  return dataclasses.replace(settings, **overrides) if overrides else settings
