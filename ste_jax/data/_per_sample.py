"""Per-sample eval logs: one model scored per sample, pairs formed on a shared sample id.

* **Inspect AI** sample tables: ``inspect_ai.analysis.samples_df`` (with the eval's ``model``
  column, e.g. ``columns=EvalModel + SampleSummary``, or joined with ``evals_df`` on
  ``eval_id``) written to CSV/Parquet/JSONL. Columns ``model``, ``id`` (sample id), ``epoch``
  and one ``score_<scorer>`` column per scorer, holding Inspect's letter values ``C`` (correct,
  1), ``I`` (incorrect, 0), ``P`` (partial, 1/2), ``N`` (no answer, 0) as ``value_to_float``
  maps them, or numbers / booleans. Samples are matched on (``task_name`` when present, ``id``,
  ``epoch``); the context is ``task_name`` when present.
* **lm-evaluation-harness** ``--log_samples`` output: ``<output_path>/<model>/samples_<task>_<
  timestamp>.jsonl``, one line per document with ``doc_id``, ``filter``, ``metrics`` (the metric
  names) and one field per metric (``acc``, ``exact_match``, ...). The model is the record's
  ``model`` field when present, else the name of the file's folder; the task is the record's
  ``task`` field when present, else the file name between ``samples_`` and the timestamp.
  Documents are matched on (task, ``doc_id``); the context is the task. When a task was scored
  under several filters, only the first filter (in file order) is used and the lines of the
  others are dropped by policy (reported), so no document counts twice.
* **Generic long table** (``--format tasks``): ``agent``, ``task``, ``score`` (any names).
"""

from collections.abc import Callable
import os
import re

import numpy as np

from .._errors import InputError
from . import _report as R
from ._comparisons import Comparisons
from ._report import LoadReport
from ._settings import LoadSettings
from ._task_results import pair_on_tasks

INSPECT_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
LM_EVAL_METRICS = ("acc", "exact_match", "acc_norm", "pass@1", "f1", "mcc", "bleu")
_LM_EVAL_FILE = re.compile(r"^samples_(?P<task>.+?)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")


def lm_eval_task_from_path(path: str) -> str:
  """The task name in an lm-eval ``samples_<task>_<timestamp>.jsonl`` file name."""
  name = os.path.basename(path)
  match = _LM_EVAL_FILE.match(name)
  if match:
    return match.group("task")
  stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
  return stem[len("samples_") :] if stem.startswith("samples_") else stem


def _key(*parts) -> np.ndarray:
  """Row-wise ``"p1 | p2 | ..."`` keys of object arrays (``None`` stays ``None``)."""
  out = np.empty(len(parts[0]), dtype=object)
  for i, vals in enumerate(zip(*parts)):
    out[i] = None if any(v is None or v != v for v in vals) else " | ".join(map(str, vals))
  return out


def inspect_rows(
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
  """An Inspect AI sample table -> ``(Comparisons, LoadReport)`` (module docstring).

  Args:
    column: ``column(name)`` -> object array.
    lines: int ``(N,)`` line numbers.
    header: available column names.
    settings: the loading options (``agents``, ``strict``, the ``policy``'s ``tie``;
      ``metric``: the score column, ``score_<scorer>`` or the scorer name, default the only
      ``score_*`` column, an error lists them when there are several).
    pre: optional pre-rejections.
    context: context column; default ``task_name`` when present.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``.
  """
  scores = [c for c in header if c.startswith("score_")]
  metric = settings.metric
  if metric is None:
    if len(scores) != 1:
      raise InputError(
        f"{source or 'the input'} has {len(scores)} score columns {scores}; pass "
        "metric= (--metric) to choose one."
      )
    metric = scores[0]
  elif metric not in header and f"score_{metric}" in header:
    metric = f"score_{metric}"
  if metric not in header:
    raise InputError(
      f"score column {metric!r} not found in {source or 'the input'}; score columns: {scores}."
    )
  task = "task_name" if "task_name" in header else None
  if context is None:
    context = task
  parts = (
    [column("id"), column("epoch")]
    if task is None
    else [column(task), column("id"), column("epoch")]
  )
  raw = {"agent": column("model"), "task": _key(*parts), "score": column(metric)}
  cols = {
    "agent": "model",
    "task": "+".join(([task] if task else []) + ["id", "epoch"]),
    "score": metric,
  }
  if context is not None:
    raw["context"], cols["context"] = column(context), context
  mappings = [
    f"agent = 'model'; samples matched on {cols['task']}; score {metric!r}: C -> 1, "
    "I -> 0, P -> 1/2, N -> 0, numbers as they are"
  ]
  return pair_on_tasks(
    raw,
    lines,
    columns=cols,
    settings=settings,
    source=source,
    sources=sources,
    pre=pre,
    score_labels=INSPECT_SCORES,
    schema="inspect",
    mappings=mappings,
  )


def lm_eval_rows(
  column: Callable[[str], np.ndarray],
  lines: np.ndarray,
  header: list[str],
  *,
  settings: LoadSettings,
  files: np.ndarray | None = None,
  pre: np.ndarray | None = None,
  context: str | None = None,
  source: str | None = None,
  sources: np.ndarray | None = None,
) -> tuple[Comparisons, LoadReport]:
  """lm-evaluation-harness sample lines -> ``(Comparisons, LoadReport)`` (module docstring).

  Args:
    column: ``column(name)`` -> object array.
    lines: int ``(N,)`` line numbers.
    header: available field names.
    settings: the loading options (``agents``, ``strict``, the ``policy``'s ``tie``;
      ``metric``: the metric field, default the first name in the first line's ``metrics``
      list present as a field, else the first of ``acc``, ``exact_match``, ``acc_norm``, ...).
    files: optional object ``(N,)`` path of each line's file (model and task from the path).
    pre: optional pre-rejections.
    context: context field; default: the task.
    source, sources: as in :func:`~ste_jax.data._assemble.assemble`.

  Returns:
    ``(comparisons, report)``.
  """
  n = len(lines)
  mappings = []
  if "model" in header:
    model = column("model")
    mappings.append("agent = the 'model' field")
  elif files is not None:
    model = np.array(
      [os.path.basename(os.path.dirname(os.path.abspath(f))) for f in files], dtype=object
    )
    mappings.append("agent = the name of each samples file's folder (lm-eval's output layout)")
  else:
    raise InputError(
      f"{source or 'the input'}: lm-eval samples need a 'model' field or the "
      "<output_path>/<model>/samples_<task>_<time>.jsonl layout (pass the folder)."
    )
  if "task" in header:
    task = column("task")
  elif files is not None:
    task = np.array([lm_eval_task_from_path(f) for f in files], dtype=object)
    mappings.append("task = the samples file name between 'samples_' and the timestamp")
  else:
    task = np.full(n, "task", dtype=object)
  metric = settings.metric
  if metric is None:
    listed = (
      next((m for m in column("metrics") if isinstance(m, list) and m), None)
      if ("metrics" in header)
      else None
    )
    names = [m for m in (listed or []) if m in header] or [
      m for m in LM_EVAL_METRICS if m in header
    ]
    if not names:
      raise InputError(
        f"{source or 'the input'}: no metric field found (tried the 'metrics' "
        f"list and {list(LM_EVAL_METRICS)}); pass metric= (--metric)."
      )
    metric = names[0]
  if metric not in header:
    raise InputError(
      f"metric field {metric!r} not found in {source or 'the input'}; fields: {sorted(header)}."
    )
  pre = np.full(n, None, dtype=object) if pre is None else np.array(pre, dtype=object)
  if "filter" in header:
    filt = column("filter")
    chosen = {}
    for t, f in zip(task, filt):
      chosen.setdefault(t, f)
    other = np.array([f != chosen[t] for t, f in zip(task, filt)], dtype=bool)
    for i in np.flatnonzero(other):
      if pre[i] is None:
        pre[i] = (
          R.POLICY_DROP,
          f"filter {filt[i]!r}: only the task's first filter {chosen[task[i]]!r} is used",
        )
    if other.any():
      mappings.append("tasks scored under several filters: only each task's first filter used")
  raw = {
    "agent": model,
    "task": _key(task, column("doc_id")),
    "score": column(metric),
    "context": task if context is None else column(context),
  }
  cols = {
    "agent": "model",
    "task": "task+doc_id",
    "score": metric,
    "context": "task" if context is None else context,
  }
  mappings.insert(0, f"documents matched on (task, doc_id); score = {metric!r}")
  return pair_on_tasks(
    raw,
    lines,
    columns=cols,
    settings=settings,
    source=source,
    sources=sources,
    pre=pre,
    schema="lm-eval",
    mappings=mappings,
  )
