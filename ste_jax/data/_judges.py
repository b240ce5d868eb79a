"""Two-order LLM-judge files: MT-Bench pairwise judgments and Arena-Hard verdicts.

Both judges see each pair of answers twice, once in each presentation order; the policy
``order_swap`` (:class:`~ste_jax.data.OutcomePolicy`) says how the two verdicts become comparisons,
and the load report gives the judge's position bias (share of decisive verdicts won by the answer
shown first).

* **MT-Bench** (FastChat ``fastchat/llm_judge``, ``gen_judgment.py --mode pairwise-*``, files
  ``data/mt_bench/model_judgment/<judge>_pair.jsonl``): one record per (question, turn, model
  pair) with ``model_1``, ``model_2``, ``g1_winner`` (game 1: ``model_1`` shown as Assistant A)
  and ``g2_winner`` (game 2: ``model_2`` shown as Assistant A), both already mapped back to
  ``model_1`` / ``model_2`` / ``tie`` (``error`` when the judge's output could not be parsed:
  rejected as ``"judge error"``, as FastChat's ``show_result.py`` drops them), plus ``judge``
  and ``turn``. Default ``order_swap="tie"``: FastChat's rule, a verdict only when both games
  agree, otherwise a tie.
* **Arena-Hard** (lm-sys/arena-hard-auto, ``data/arena-hard-v0.1/model_judgment/<judge>/
  <model>.jsonl``): one record per question with ``model`` and ``games``, a list of two
  ``{"score": verdict, ...}``; verdicts ``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``. Game 1
  shows the baseline as A and ``model`` as B; game 2 swaps them. The baseline is the record's
  ``baseline`` field when present, else the ``baseline`` argument (default ``gpt-4-0314``, the
  v0.1 default of ``show_result.py``). A strong verdict (``>>``) counts ``strong_weight`` times
  (default 3). Default ``order_swap="separate"``: each game is its own comparison, as
  ``show_result.py`` does. A missing or unparsed verdict rejects the record (Arena-Hard skips
  that game silently).
"""

from collections.abc import Callable
import json

import numpy as np

from .._errors import InputError
from . import _report as R
from ._assemble import assemble, context_strings
from ._comparisons import Comparisons
from ._report import LoadReport
from ._rows import Rejections, classify, flag_missing_and_nan, tie_drops, tie_mapping
from ._settings import LoadSettings

ARENA_HARD_BASELINE = "gpt-4-0314"
MTBENCH_LABELS = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5}
# Arena-Hard verdict -> (outcome for the agent shown as A, strong)
VERDICTS = {
  "A>>B": (1.0, True),
  "A>B": (1.0, False),
  "A=B": (0.5, False),
  "B>A": (0.0, False),
  "B>>A": (0.0, True),
}


def _combine(v1, v2, w1, w2, rows, mode):
  """Candidates ``(row, outcome, weight, drop)`` from the two verdicts of each row."""
  n = len(v1)
  if mode == "separate":
    row = np.concatenate([rows, rows])
    return row, np.concatenate([v1, v2]), np.concatenate([w1, w2]), np.full(2 * n, None, object)
  agree = v1 == v2
  out = np.where(agree, v1, 0.5)
  weight = np.where(agree & (w1 == w2), w1, 1.0)
  drop = np.full(n, None, dtype=object)
  if mode == "consistent":
    drop[~agree] = "the two presentation orders disagree (policy order_swap=consistent)"
  return rows, out, weight, drop


def _order_mapping(mode: str) -> str:
  return {
    "tie": "two presentation orders -> one comparison: their verdict when they agree, a tie "
    "when they disagree (order_swap=tie)",
    "consistent": "two presentation orders -> one comparison when they agree, else the row "
    "is dropped (order_swap=consistent)",
    "separate": "two presentation orders -> one comparison each (order_swap=separate)",
  }[mode]


def _finish(
  s, raw, lines, rej, v1, v2, w1, w2, first1, first2, *, mode, policy, context, mappings, **kw
):
  """Applies the order-swap and tie policies and assembles."""
  n = len(lines)
  has2 = ~np.isnan(v2)
  v1 = np.where(np.isnan(v1), 0.5, v1)  # NaN only on rejected rows (or a missing second game)
  v2 = np.where(has2, v2, 0.5)
  row, out, weight, drop = _combine(v1, v2, w1, w2, np.arange(n), mode)
  if mode == "separate":  # a record with a single game gives a single comparison
    keep = np.concatenate([np.ones(n, dtype=bool), has2 | ~rej.ok])
    row, out, weight, drop = row[keep], out[keep], weight[keep], drop[keep]
  tie_drop = tie_drops(out, np.zeros(len(out), dtype=bool), policy)
  drop = np.where(np.array([d is None for d in drop], dtype=bool), tie_drop, drop)
  mappings.append(_order_mapping(mode))
  mappings.append(tie_mapping(policy))
  position = (np.concatenate([np.arange(n), np.arange(n)]), np.concatenate([first1, first2]))
  return assemble(
    a=s["a"],
    b=s["b"],
    raw_a=raw["a"],
    raw_b=raw["b"],
    rej=rej,
    lines=lines,
    row=row,
    outcome=out,
    weight=weight,
    drop=drop,
    position=position,
    context=context,
    mappings=mappings,
    **kw,
  )


def mtbench_rows(
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  *,
  settings: LoadSettings,
  pre: np.ndarray | None = None,
  context: str | None = None,
  source: str | None = None,
  sources: np.ndarray | None = None,
) -> tuple[Comparisons, LoadReport]:
  """MT-Bench pairwise judgments -> ``(Comparisons, LoadReport)`` (module docstring).

  Args:
    column: ``column(name)`` -> object array of that column (one entry per row).
    lines: int ``(N,)`` line numbers.
    settings: the loading options (``agents``, ``contexts``, ``strict``; the ``policy``'s
      ``order_swap`` and ``tie``).
    pre: optional pre-rejections (malformed records).
    context: optional context column name (e.g. ``"turn"``); ``None``: no contexts.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``; one row per record.
  """
  policy = settings.policy
  n = len(lines)
  if n == 0:
    raise InputError(f"no comparisons in {source or 'the input'}: no data rows.")
  rej = Rejections(n)
  rej.flag_pre(pre)
  cols = {"a": "model_1", "b": "model_2", "g1": "g1_winner", "g2": "g2_winner"}
  raw = {role: column(name) for role, name in cols.items()}
  s = flag_missing_and_nan(rej, cols, raw)
  verdicts = []
  for g in ("g1", "g2"):
    lower = np.array([x.lower() for x in s[g]], dtype=object)
    v = np.array([MTBENCH_LABELS.get(x, np.nan) for x in lower], dtype=np.float64)
    rej.flag(
      lower == "error",
      R.JUDGE_ERROR,
      lambda i, c=cols[g]: f"column {c!r} = 'error' (judge output not parsed)",
    )
    rej.flag(
      np.isnan(v),
      R.UNKNOWN_WINNER,
      lambda i, c=cols[g], x=s[g]: (
        f"column {c!r} = {x[i]!r}; expected model_1, model_2, tie or error"
      ),
    )
    verdicts.append(v)
  v1, v2 = verdicts
  mappings = [
    "g1_winner: game 1, model_1 shown first; g2_winner: game 2, model_2 shown first; "
    "'model_1' -> model_1 won, 'model_2' -> model_2 won, 'tie' -> tie"
  ]
  ctx = None if context is None else context_strings(column(context), context, mappings, rej)
  ones = np.ones(n)
  return _finish(
    s,
    raw,
    lines,
    rej,
    v1,
    v2,
    ones,
    ones,
    v1,
    1.0 - v2,
    mode=policy.order_swap_for("mtbench"),
    policy=policy,
    context=ctx,
    mappings=mappings,
    settings=settings,
    source=source,
    sources=sources,
    schema="mtbench",
  )


def _verdict(game):
  """``(outcome for A, strong, problem)`` of one Arena-Hard game record."""
  if isinstance(game, dict):
    score = game.get("score")
  else:
    return np.nan, False, f"expected a game object, got {type(game).__name__}"
  if isinstance(score, str) and score.strip() in VERDICTS:
    out, strong = VERDICTS[score.strip()]
    return out, strong, None
  return np.nan, False, f"score = {score!r}; expected one of {', '.join(VERDICTS)}"


def arena_hard_rows(
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  header: list[str],
  *,
  settings: LoadSettings,
  pre: np.ndarray | None = None,
  context: str | None = None,
  source: str | None = None,
  sources: np.ndarray | None = None,
) -> tuple[Comparisons, LoadReport]:
  """Arena-Hard judgment records -> ``(Comparisons, LoadReport)`` (module docstring).

  Args:
    column: ``column(name)`` -> object array of that column (one entry per row).
    lines: int ``(N,)`` line numbers.
    header: the available column names.
    settings: the loading options (``agents``, ``contexts``, ``strict``; ``baseline``: the
      baseline model when the records have no ``baseline`` field, default ``"gpt-4-0314"``;
      the ``policy``'s ``order_swap``, ``strong_weight`` and ``tie``).
    pre: optional pre-rejections (malformed records).
    context: optional context column name (e.g. ``"category"``); ``None``: no contexts.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``; one row per record; ``a`` is the baseline, ``b`` the model.
  """
  policy, baseline = settings.policy, settings.baseline
  n = len(lines)
  if n == 0:
    raise InputError(f"no comparisons in {source or 'the input'}: no data rows.")
  mode = policy.order_swap_for("arena-hard")
  rej = Rejections(n)
  rej.flag_pre(pre)
  mappings = []
  if "baseline" in header and baseline is None:
    base = column("baseline")
    mappings.append("a = the record's 'baseline' field, b = 'model'")
  else:
    baseline = ARENA_HARD_BASELINE if baseline is None else baseline
    base = np.full(n, baseline, dtype=object)
    mappings.append(f"a = baseline {baseline!r}, b = 'model'")
  raw = {"a": base, "b": column("model"), "games": column("games")}
  s = flag_missing_and_nan(rej, {"a": "baseline", "b": "model"}, raw)
  v = np.full((2, n), np.nan)
  strong = np.zeros((2, n), dtype=bool)
  problem = np.full(n, None, dtype=object)
  for i, games in enumerate(raw["games"]):
    if isinstance(games, str):
      try:
        games = json.loads(games)
      except json.JSONDecodeError:
        pass
    if not isinstance(games, list) or not 1 <= len(games) <= 2:
      problem[i] = f"'games' must be a list of one or two games, got {games!r:.60}"
      continue
    if len(games) == 1 and mode != "separate":
      problem[i] = f"one game only; order_swap={mode} needs both presentation orders"
      continue
    for g, game in enumerate(games):
      v[g, i], strong[g, i], why = _verdict(game)
      if why:
        problem[i] = f"game {g + 1}: {why}"
        break
  has_problem = np.array([p is not None for p in problem], dtype=bool)
  missing_games, _, _ = classify(raw["games"])
  rej.flag(missing_games, R.MISSING_FIELD, lambda i: "column 'games' is empty")
  rej.flag(has_problem, R.UNKNOWN_WINNER, lambda i: str(problem[i]))
  # Game 1: baseline (a) is A; game 2: the model (b) is A. Outcomes are for a.
  v1, v2 = v[0], 1.0 - v[1]
  w = policy.strong_weight
  w1, w2 = np.where(strong[0], w, 1.0), np.where(strong[1], w, 1.0)
  mappings.append(
    "game 1: a shown as A; game 2: b shown as A; A>>B/A>B -> A won, A=B -> tie, "
    f"B>A/B>>A -> B won; strong verdicts (>>) weigh {w:g} (strong_weight)"
  )
  ctx = None if context is None else context_strings(column(context), context, mappings, rej)
  comps_report = _finish(
    s,
    raw,
    lines,
    rej,
    v1,
    v2,
    w1,
    w2,
    v[0],
    v[1],
    mode=mode,
    policy=policy,
    context=ctx,
    mappings=mappings,
    settings=settings,
    source=source,
    sources=sources,
    schema="arena-hard",
  )
  return comps_report
