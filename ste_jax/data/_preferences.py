"""Numerically encoded preferences: AlpacaEval annotations and Chatbot Arena one-hot winners.

* **AlpacaEval** (tatsu-lab/alpaca_eval, ``annotations.json`` written next to a leaderboard run;
  ``metrics/helpers.py``): records with ``generator_1``, ``generator_2`` and ``preference``
  (``preferences`` in some versions): 1 = ``output_1`` (``generator_1``) preferred, 2 =
  ``output_2`` preferred, 1.5 or 0 = draw, and for weighted (log-probability) annotators any value
  in between, the probability-weighted preference. The outcome for ``generator_1`` is
  ``2 - preference``; values strictly between are *soft outcomes*, handled by
  ``policy.fractional``. AlpacaEval randomizes the presentation order and stores preferences
  relative to ``output_1``, so no position bias can be measured. Values outside ``[1, 2]``
  (other than 0) and missing ones are rejected (AlpacaEval drops them).
* **Chatbot Arena 55k release** (``lmsys-arena-human-preference-55k``, ``train.csv``):
  ``model_a``, ``model_b`` and one-hot ``winner_model_a``, ``winner_model_b``, ``winner_tie``
  (exactly one of them 1). ``model_a`` is the answer shown first (left).
"""

from collections.abc import Callable

import numpy as np

from .._errors import InputError
from . import _report as R
from ._assemble import assemble, context_strings
from ._comparisons import Comparisons
from ._report import LoadReport
from ._rows import Rejections, flag_missing_and_nan, tie_drops, tie_mapping
from ._settings import LoadSettings

ONE_HOT = ("winner_model_a", "winner_model_b", "winner_tie")


def _numbers(strings):
  import pandas as pd  # pylint: disable=g-import-not-at-top

  lowered = pd.Series(strings, dtype=object).str.lower()
  num = pd.to_numeric(lowered.replace({"true": "1", "false": "0"}), errors="coerce")
  return num.to_numpy(dtype=np.float64)


def alpacaeval_rows(
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
  """AlpacaEval annotations -> ``(Comparisons, LoadReport)`` (module docstring).

  Args:
    column: ``column(name)`` -> object array of that column.
    lines: int ``(N,)`` line numbers.
    header: the available column names.
    settings: the loading options (``agents``, ``contexts``, ``strict``; the ``policy``'s
      ``fractional`` and ``tie``).
    pre: optional pre-rejections.
    context: optional context column (e.g. ``"dataset"``); ``None``: no contexts.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``; ``a`` = ``generator_1``, ``b`` = ``generator_2``.
  """
  policy = settings.policy
  n = len(lines)
  if n == 0:
    raise InputError(f"no comparisons in {source or 'the input'}: no data rows.")
  pcol = "preference" if "preference" in header else "preferences"
  cols = {"a": "generator_1", "b": "generator_2", "p": pcol}
  raw = {role: column(name) for role, name in cols.items()}
  rej = Rejections(n)
  rej.flag_pre(pre)
  s = flag_missing_and_nan(rej, cols, raw)
  p = _numbers(s["p"])
  p = np.where(p == 0, 1.5, p)  # AlpacaEval: 0 is the old encoding of a draw
  bad = ~(np.isfinite(p) & (p >= 1) & (p <= 2))
  rej.flag(
    bad,
    R.UNKNOWN_WINNER,
    lambda i: f"column {pcol!r} = {s['p'][i]!r}; expected a number in [1, 2] or 0",
  )
  p = np.where(bad, 1.5, p)
  out = 2.0 - p
  soft = (out != 0) & (out != 0.5) & (out != 1)
  mappings = [
    f"column {pcol!r}: 1 -> generator_1 won, 2 -> generator_2 won, 1.5 or 0 -> tie, "
    "values between -> soft outcome 2 - preference for generator_1"
  ]
  rows = np.arange(n)
  weight = np.ones(n)
  num_soft = int(soft[rej.ok].sum())
  if policy.fractional == "round":
    out = np.where(soft, np.where(out > 0.5, 1.0, 0.0), out)
    mappings.append(f"{num_soft} soft outcomes rounded to the nearest win/loss (fractional=round)")
  elif policy.fractional == "weights":
    extra = np.flatnonzero(soft)
    rows = np.concatenate([rows, extra])
    weight = np.concatenate([np.where(soft, out, 1.0), 1.0 - out[extra]])
    out = np.concatenate([np.where(soft, 1.0, out), np.zeros(len(extra))])
    mappings.append(
      f"{num_soft} soft outcomes split into a win for each side weighted by its "
      "share (fractional=weights)"
    )
  else:
    mappings.append(f"{num_soft} soft outcomes kept as fractional outcomes (fractional=soft)")
  mappings.append(tie_mapping(policy))
  ctx = None if context is None else context_strings(column(context), context, mappings, rej)
  return assemble(
    a=s["a"],
    b=s["b"],
    raw_a=raw["a"],
    raw_b=raw["b"],
    rej=rej,
    lines=lines,
    row=rows,
    outcome=out,
    weight=weight,
    drop=tie_drops(out, np.zeros(len(out), dtype=bool), policy),
    context=ctx,
    settings=settings,
    source=source,
    sources=sources,
    schema="alpacaeval",
    mappings=mappings,
  )


def arena_onehot_rows(
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  *,
  settings: LoadSettings,
  pre: np.ndarray | None = None,
  context: str | None = None,
  source: str | None = None,
  sources: np.ndarray | None = None,
) -> tuple[Comparisons, LoadReport]:
  """Chatbot Arena 55k one-hot winners -> ``(Comparisons, LoadReport)`` (module docstring).

  Args:
    column: ``column(name)`` -> object array of that column.
    lines: int ``(N,)`` line numbers.
    settings: the loading options (``agents``, ``contexts``, ``strict``; the ``policy``'s
      ``tie``).
    pre: optional pre-rejections.
    context: optional context column; ``None``: no contexts.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``; ``a`` = ``model_a`` (shown first).
  """
  policy = settings.policy
  n = len(lines)
  if n == 0:
    raise InputError(f"no comparisons in {source or 'the input'}: no data rows.")
  cols = {"a": "model_a", "b": "model_b", **{c: c for c in ONE_HOT}}
  raw = {role: column(name) for role, name in cols.items()}
  rej = Rejections(n)
  rej.flag_pre(pre)
  s = flag_missing_and_nan(rej, cols, raw)
  hot = np.stack([_numbers(s[c]) for c in ONE_HOT])
  valid = np.all((hot == 0) | (hot == 1), axis=0) & (np.nansum(hot, axis=0) == 1)
  rej.flag(
    ~valid,
    R.INCONSISTENT,
    lambda i: (
      "winner_model_a/winner_model_b/winner_tie = "
      f"{s['winner_model_a'][i]}/{s['winner_model_b'][i]}/{s['winner_tie'][i]}; "
      "expected exactly one 1 and two 0"
    ),
  )
  out = np.where(hot[0] == 1, 1.0, np.where(hot[1] == 1, 0.0, 0.5))
  mappings = [
    "one-hot winner_model_a=1 -> model_a won, winner_model_b=1 -> model_b won, winner_tie=1 -> tie",
    tie_mapping(policy),
  ]
  ctx = None if context is None else context_strings(column(context), context, mappings, rej)
  return assemble(
    a=s["a"],
    b=s["b"],
    raw_a=raw["a"],
    raw_b=raw["b"],
    rej=rej,
    lines=lines,
    row=np.arange(n),
    outcome=out,
    drop=tie_drops(out, np.zeros(n, dtype=bool), policy),
    position=(np.arange(n), out),
    context=ctx,
    settings=settings,
    source=source,
    sources=sources,
    schema="arena",
    mappings=mappings,
  )
