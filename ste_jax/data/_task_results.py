"""Pairwise comparisons from agent task logs (AgentBench- or SWE-bench-style results).

Agent evaluations often log one row per (agent, task) with a success flag or a score. Every pair
of agents that attempted the same task yields one comparison: the higher score wins, and equal
scores are a tie. For binary success this is the paper's conservative co-success / co-failure
policy (paper §6, AgentBench diagnostics): both succeeding or both failing is a tie.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InputError
from . import _report as R
from ._assemble import context_strings, name_normalization, rename_mapping
from ._comparisons import DEFAULT_CONTEXT, Comparisons, _as_names
from ._policies import OutcomePolicy
from ._report import LoadReport, refuse_or_skip
from ._rows import Rejections, classify, encode, flag_non_scalar, sorted_names
from ._settings import LoadSettings

if TYPE_CHECKING:
  import pandas as pd


def from_task_results(
  df: "pd.DataFrame",
  *,
  agent: str = "agent",
  task: str = "task",
  score: str = "score",
  context: str | None = None,
  agents: Sequence[str] | None = None,
  strict: bool = False,
  policy: OutcomePolicy | dict | None = None,
  skip_bad_rows: bool = False,
) -> tuple[Comparisons, LoadReport]:
  """Comparisons between agents that attempted the same tasks.

  For each task, every unordered pair of agents with a result on it gives one comparison with
  ``a`` the agent with the smaller index (in ``agents`` order) and outcome 1 if ``a``'s score is
  higher, 0 if lower, 1/2 if equal. The comparison's context is the task's ``context`` value
  (e.g. the task family or environment), taken from the first row of that task; an empty context
  cell puts the row in the context ``(none)``.

  Rows are rejected (and reported, with their 1-based row number) when a field is missing or NaN,
  the score is not a number, the (agent, task) pair already appeared in an earlier row (aggregate
  repeated attempts beforehand), the row's context differs from the task's first row, or no other
  agent has a usable result on the same task.

  Args:
    df: a ``pandas.DataFrame`` with one row per (agent, task) result.
    agent: column with the agent name.
    task: column with the task id.
    score: column with a numeric score or a boolean success flag (higher is better).
    context: optional column with the task family; default: no contexts.
    agents: optional fixed agent order; rows with other agents are rejected.
    strict: raise on the first bad row instead of listing them all.
    policy: :class:`~ste_jax.data.OutcomePolicy`; ``tie="drop"`` drops pairs with equal scores.
    skip_bad_rows: drop bad rows (with a :class:`~ste_jax.data.BadRowsWarning`; they stay in
      the report) instead of refusing the frame (see :class:`~ste_jax.data.LoadSettings`).

  Returns:
    ``(comparisons, report)``. ``report.rows_used`` counts result rows that took part in at least
    one comparison, ``report.num_comparisons`` the pairs formed and ``report.ties`` the tied pairs.

  Raises:
    InputError: a column is missing (the message names it), no comparison can be formed
      (``"no comparisons"``), a row is bad (without ``skip_bad_rows``; the message gives the
      reasons, counts and first row numbers), or ``strict`` and a row is bad.
  """
  cols = {"agent": agent, "task": task, "score": score}
  if context is not None:
    cols["context"] = context
  for role, name in cols.items():
    if name not in df.columns:
      raise InputError(
        f"column {name!r} ({role}) not found in the data frame; available: {list(df.columns)}."
      )
  raw = {role: df[name].to_numpy(dtype=object) for role, name in cols.items()}
  settings = LoadSettings(
    agent=agent,
    task=task,
    score=score,
    agents=agents,
    strict=strict,
    policy=policy,
    skip_bad_rows=skip_bad_rows,
  )
  comparisons, report = pair_on_tasks(
    raw, np.arange(1, len(df) + 1), columns=cols, settings=settings, schema="tasks"
  )
  return comparisons, refuse_or_skip(report, skip_bad_rows)


def pair_on_tasks(
  raw: dict,
  lines: np.ndarray,
  *,
  columns: dict,
  settings: LoadSettings,
  source: str | None = None,
  sources: np.ndarray | None = None,
  pre: np.ndarray | None = None,
  score_labels: dict | None = None,
  schema: str | None = None,
  mappings: Sequence[str] = (),
) -> tuple[Comparisons, LoadReport]:
  """Per-(agent, task) score rows -> pairwise comparisons on shared tasks.

  Args:
    raw: object arrays per role ``"agent"``, ``"task"``, ``"score"`` and optionally
      ``"context"``, one entry per row.
    lines: int ``(N,)`` line number of each row.
    columns: source column name per role (for messages).
    settings: the loading options (``agents``: a fixed agent order; ``strict``: raise on the
      first bad row; the ``policy``'s ``tie``).
    source: input description for messages.
    sources: optional object ``(N,)`` file of each row.
    pre: optional pre-rejections (malformed records, rows excluded by a loader policy).
    score_labels: optional map from an upper-cased score label to a number (Inspect's
      ``C``/``I``/``P``/``N``), applied before numeric parsing.
    schema: schema name for the report.
    mappings: mapping lines for the report.

  Returns:
    ``(comparisons, report)`` as in :func:`from_task_results`.
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  policy, agents, strict = settings.policy, settings.agents, settings.strict
  mappings = list(mappings)
  where = f" in {source}" if source else ""
  num_rows = len(lines)
  if num_rows == 0:
    raise InputError(f"no comparisons{where}: the task results have no rows.")
  rej = Rejections(num_rows)
  rej.flag_pre(pre)
  strings = {}
  for role, name in columns.items():
    if role != "context":
      flag_non_scalar(rej, raw[role], name)
  for role, name in columns.items():
    if role == "context":
      continue
    missing, nan, strings[role] = classify(raw[role])
    rej.flag(missing, R.MISSING_FIELD, lambda i, c=name: f"column {c!r} is empty")
    rej.flag(nan, R.NAN, lambda i, c=name: f"column {c!r} is NaN")
  if "context" in columns:
    strings["context"] = context_strings(raw["context"], columns["context"], mappings, rej)
  values = raw["score"]
  score = columns["score"]
  text = pd.Series(strings["score"], dtype=object)
  lowered = text.str.lower()
  if score_labels:
    text = text.str.upper().map(score_labels).where(lambda x: x.notna(), text)
  num = np.array(pd.to_numeric(text, errors="coerce"), dtype=np.float64)
  num[np.isin(lowered.to_numpy(dtype=object), ("true",))] = 1.0
  num[np.isin(lowered.to_numpy(dtype=object), ("false",))] = (
    0.0  # success flags print as True/False
  )
  rej.flag(
    ~np.isfinite(num),
    R.INVALID_SCORE,
    lambda i: (
      f"column {score!r} = {values[i]!r} is not a finite number"
      + (f" or one of {', '.join(score_labels)}" if score_labels else "")
    ),
  )
  if agents is not None:
    agents = _as_names(agents, "agents")
    rej.flag(
      encode(strings["agent"], agents) < 0,
      R.UNKNOWN_AGENT,
      lambda i: f"{strings['agent'][i]!r} is not in `agents`",
    )

  # Duplicates and inconsistent contexts, judged among rows still valid (first occurrence wins).
  frame = pd.DataFrame(
    {"agent": strings["agent"], "task": strings["task"], "row": np.arange(num_rows)}
  )
  valid = frame[rej.ok]
  dup = valid.duplicated(["agent", "task"], keep="first")
  first_row = valid.groupby(["agent", "task"])["row"].transform("min")
  dup_mask = np.zeros(num_rows, dtype=bool)
  dup_mask[valid["row"].to_numpy()[dup.to_numpy()]] = True
  first_of = np.zeros(num_rows, dtype=np.int64)
  first_of[valid["row"].to_numpy()] = first_row.to_numpy()
  rej.flag(
    dup_mask,
    R.DUPLICATE,
    lambda i: (
      f"{strings['agent'][i]!r} on task {strings['task'][i]!r} already at "
      f"{'row' if source is None else 'line'} {lines[first_of[i]]}"
    ),
  )
  if "context" in columns:
    valid = frame.assign(context=strings["context"])[rej.ok]
    task_ctx = valid.groupby("task", sort=False)["context"].transform("first")
    task_ctx = task_ctx.to_numpy(dtype=object)
    bad = np.zeros(num_rows, dtype=bool)
    bad[valid["row"].to_numpy()] = task_ctx != valid["context"].to_numpy(dtype=object)
    expected = np.empty(num_rows, dtype=object)
    expected[valid["row"].to_numpy()] = task_ctx
    rej.flag(
      bad,
      R.INCONSISTENT,
      lambda i: (
        f"context {strings['context'][i]!r} differs from the task's first row ({expected[i]!r})"
      ),
    )
  # Tasks with a single usable result cannot form a pair.
  valid = frame[rej.ok]
  sizes = valid.groupby("task")["agent"].transform("size").to_numpy()
  lonely = np.zeros(num_rows, dtype=bool)
  lonely[valid["row"].to_numpy()[sizes < 2]] = True
  rej.flag(
    lonely, R.NO_OPPONENT, lambda i: f"no other agent has a result on task {strings['task'][i]!r}"
  )

  ok = rej.ok
  if agents is None:
    agents = sorted_names(strings["agent"][ok])
  if "context" in columns:
    contexts = sorted_names(strings["context"][ok])
    ctx_idx = encode(strings["context"], contexts)
  else:
    contexts = (DEFAULT_CONTEXT,)
    ctx_idx = np.zeros(num_rows, dtype=np.int64)
  used = pd.DataFrame(
    {
      "task": strings["task"][ok],
      "agent": encode(strings["agent"][ok], agents),
      "score": num[ok],
      "context": ctx_idx[ok],
      "row": np.flatnonzero(ok),
    }
  )
  pairs = used.merge(used, on="task", suffixes=("_a", "_b"))
  pairs = pairs[pairs["agent_a"] < pairs["agent_b"]].sort_values(
    ["task", "agent_a", "agent_b"], kind="stable"
  )
  sa = pairs["score_a"].to_numpy()
  sb = pairs["score_b"].to_numpy()
  outcome = np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5))
  mappings.append(
    "pairs: every two agents with a score on the same task; higher score wins, equal scores tie"
  )
  if policy.tie == "drop":
    keep = outcome != 0.5
    pairs, outcome = pairs[keep], outcome[keep]
    in_pair = np.zeros(num_rows, dtype=bool)
    in_pair[pairs["row_a"].to_numpy()] = True
    in_pair[pairs["row_b"].to_numpy()] = True
    rej.flag(
      ok & ~in_pair, R.POLICY_DROP, lambda i: "every pair on this task tied (policy tie=drop)"
    )
    mappings.append("equal scores -> pair dropped (tie=drop)")
  else:
    mappings.append("equal scores -> outcome 1/2 (tie=half)")

  rejected = rej.rows(lines, sources)
  bad_rows = [r for r in rejected if r.reason != R.POLICY_DROP]
  if strict and bad_rows:
    raise InputError(f"bad row{where}: {bad_rows[0].describe()}")
  ok = rej.ok
  if not ok.any():
    report = LoadReport(num_rows, 0, 0, rejected, 0, source, schema, tuple(mappings))
    raise InputError(
      f"no comparisons{where}: no two agents share a task ({report.reason_summary()})."
      f"\n{report.summary()}"
    )
  comps = Comparisons.from_arrays(
    pairs["agent_a"].to_numpy(),
    pairs["agent_b"].to_numpy(),
    outcome,
    agents=agents,
    context=pairs["context_a"].to_numpy(),
    contexts=contexts,
  )
  renamed, merged, case_note = name_normalization(raw["agent"][ok], strings["agent"][ok])
  if renamed:
    mappings.append(rename_mapping(renamed, "rows"))
  if case_note:
    mappings.append(case_note)
  report = LoadReport(
    rows_read=num_rows,
    rows_used=int(ok.sum()),
    ties=int(np.sum(outcome == 0.5)),
    rejected=rejected,
    num_comparisons=len(outcome),
    source=source,
    schema=schema,
    mappings=tuple(mappings),
    renamed=renamed,
    merged=merged,
  )
  return comps, report
