"""Game results: sports match tables and chess games.

Three schemas, each found under the column names of widely used public files (matched without
regard to case, so ``Winner`` and ``winner`` are the same column):

* **winner-loser**: one row per match, naming its winner and its loser: ``winner_name,
  loser_name`` (Jeff Sackmann's ``tennis_atp`` / ``tennis_wta`` match files) or ``winner,
  loser`` (tennis-data.co.uk's ``Winner, Loser``). Every row is a win for the first agent; the
  files record no ties and no order of play, so no position bias is reported.
* **scores**: one row per game with both scores: ``home_team, away_team, home_score,
  away_score`` (e.g. the international football results) or ``team1, team2, score1, score2``
  (FiveThirtyEight's NFL and club-soccer files). The higher score wins and equal scores tie
  (``policy.tie``). A score that is not a finite number is rejected as ``"invalid score"``, an
  empty one (a game not played yet) as ``"missing field"``, each with its line number. The home
  team (``team1``) is the first agent; the report gives its share of decisive games as the
  position bias (home advantage), over the games not marked neutral when a ``neutral`` column
  says ``true``/``1``/``yes`` for a neutral venue.
* **chess**: one game per row or per PGN record (:func:`~ste_jax.data.load_comparisons` reads
  ``.pgn`` files; each game's tag pairs are its fields): ``White, Black, Result`` with the PGN
  results ``1-0``, ``0-1``, ``1/2-1/2`` (also ``½-½``); or the lichess export's ``white_id,
  black_id, winner`` with ``white``, ``black``, ``draw``. Any other result (PGN's ``*``: the
  game is unfinished or its result unknown) is rejected as ``"unknown winner label"`` with the
  line of the game's first tag. White is the first agent; the report gives white's share of
  decisive games as the position bias.

The agents of a schema are fixed by its columns; ``context`` names a context column as for any
schema (e.g. ``surface``, ``tournament``, ``Event``, ``TimeControl``).
"""

from collections.abc import Callable

import numpy as np

from .._errors import InputError
from . import _report as R
from ._assemble import assemble, context_strings
from ._comparisons import Comparisons
from ._report import LoadReport
from ._rows import Rejections, classify, flag_missing_and_nan, tie_drops, tie_mapping
from ._settings import LoadSettings

# Per schema, the accepted column sets, each ``(first agent, second agent, *outcome columns)``,
# in order of preference; names are matched without regard to case.
COLUMN_SETS = {
  "winner-loser": (("winner_name", "loser_name"), ("winner", "loser")),
  "scores": (
    ("home_team", "away_team", "home_score", "away_score"),
    ("team1", "team2", "score1", "score2"),
  ),
  "chess": (("white", "black", "result"), ("white_id", "black_id", "winner")),
}
# Chess results, compared after ``strip().lower()``: outcome for white.
CHESS_RESULTS = {
  "1-0": 1.0,
  "0-1": 0.0,
  "1/2-1/2": 0.5,
  "½-½": 0.5,
  "white": 1.0,
  "black": 0.0,
  "draw": 0.5,
}
_TRUE = ("true", "1", "yes")


def _by_lower_case(header) -> dict:
  """``{lower-case name: the header's name}`` (the first of names equal up to case)."""
  by_lower = {}
  for name in header:
    by_lower.setdefault(str(name).lower(), str(name))
  return by_lower


def find_columns(header, schema: str):
  """The header's names of the first column set of ``schema`` it holds (any case), or ``None``."""
  by_lower = _by_lower_case(header)
  for names in COLUMN_SETS[schema]:
    if all(n in by_lower for n in names):
      return tuple(by_lower[n] for n in names)
  return None


def _numbers(strings) -> np.ndarray:
  import pandas as pd  # pylint: disable=g-import-not-at-top

  return pd.to_numeric(pd.Series(strings, dtype=object), errors="coerce").to_numpy(np.float64)


def game_rows(
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  header: list[str],
  *,
  schema: str,
  settings: LoadSettings,
  pre: np.ndarray | None = None,
  context: str | None = None,
  source: str | None = None,
  sources: np.ndarray | None = None,
) -> tuple[Comparisons, LoadReport]:
  """Rows of a ``winner-loser``, ``scores`` or ``chess`` table -> ``(Comparisons, LoadReport)``.

  Args:
    column: ``column(name)`` -> object array of that column.
    lines: int ``(N,)`` line number of each row (for PGN files, of each game's first tag).
    header: the available column names.
    schema: ``"winner-loser"``, ``"scores"`` or ``"chess"`` (module docstring).
    settings: the loading options (``agents``, ``contexts``, ``strict``; the ``policy``'s
      ``tie``).
    pre: optional pre-rejections (malformed records).
    context: optional context column; ``None``: no contexts.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``; ``a`` = the winner, the home team or white.

  Raises:
    ValueError: no column set of ``schema`` in ``header`` (the message lists the accepted
      ones), no rows, no usable rows, or ``strict`` and a bad row.
  """
  policy = settings.policy
  names = find_columns(header, schema)
  if names is None:
    accepted = " or ".join(", ".join(s) for s in COLUMN_SETS[schema])
    raise InputError(
      f"the {schema} schema needs the columns {accepted} (any case); "
      f"{source or 'the input'} has {list(header)}."
    )
  n = len(lines)
  if n == 0:
    raise InputError(f"no comparisons in {source or 'the input'}: no data rows.")
  roles = ("a", "b", "x", "y")[: len(names)]
  cols = dict(zip(roles, names))
  raw = {role: column(name) for role, name in cols.items()}
  rej = Rejections(n)
  rej.flag_pre(pre)
  s = flag_missing_and_nan(rej, cols, raw)
  position = None
  if schema == "winner-loser":
    outcome = np.ones(n)
    mappings = [f"every row: {names[0]!r} beat {names[1]!r} (no ties, no order of play)"]
  elif schema == "scores":
    x, y = _numbers(s["x"]), _numbers(s["y"])
    for role, v in (("x", x), ("y", y)):
      rej.flag(
        ~np.isfinite(v),
        R.INVALID_SCORE,
        lambda i, c=cols[role], r=role: f"column {c!r} = {s[r][i]!r}; expected a number",
      )
    outcome = np.where(x > y, 1.0, np.where(x < y, 0.0, 0.5))
    mappings = [
      f"higher score wins: {names[2]!r} vs {names[3]!r} for {names[0]!r} vs "
      f"{names[1]!r}; equal scores -> tie",
      tie_mapping(policy),
    ]
    home = np.arange(n)
    neutral_col = _by_lower_case(header).get("neutral")
    if neutral_col is not None:
      _, _, flags = classify(column(neutral_col))
      neutral = np.isin(np.char.lower(flags.astype(str)), _TRUE)
      home = np.flatnonzero(~neutral)
      mappings.append(
        f"home advantage (position bias): the {int(neutral.sum())} rows whose "
        f"{neutral_col!r} is true/1/yes (neutral venue) are left out of it"
      )
    position = (home, outcome[home])
  else:
    lower = np.char.lower(s["x"].astype(str))
    outcome = np.full(n, np.nan)
    for label, value in CHESS_RESULTS.items():  # a loop over the labels, not the rows
      outcome[lower == label] = value
    rej.flag(
      np.isnan(outcome),
      R.UNKNOWN_WINNER,
      lambda i: (
        f"column {names[2]!r} = {s['x'][i]!r}; expected 1-0, 0-1, 1/2-1/2 (or white, black, draw)"
      ),
    )
    outcome = np.where(np.isnan(outcome), 0.5, outcome)  # rejected rows only; never used
    mappings = [
      f"column {names[2]!r}: 1-0/white -> {names[0]!r} won, 0-1/black -> "
      f"{names[1]!r} won, 1/2-1/2/draw -> tie",
      tie_mapping(policy),
    ]
    position = (np.arange(n), outcome)
  ctx = None if context is None else context_strings(column(context), context, mappings, rej)
  first = {"scores": "home team", "chess": "white"}.get(schema, "first position")
  return assemble(
    a=s["a"],
    b=s["b"],
    raw_a=raw["a"],
    raw_b=raw["b"],
    rej=rej,
    lines=lines,
    row=np.arange(n),
    outcome=outcome,
    drop=tie_drops(outcome, np.zeros(n, dtype=bool), policy),
    position=position,
    position_label=first,
    context=ctx,
    settings=settings,
    source=source,
    sources=sources,
    schema=schema,
    mappings=mappings,
  )
