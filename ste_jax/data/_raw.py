"""Loaders for the publishers' own formats of the bundled real data sets (``shared/data/*/raw``).

Each loader applies the conversion rules written in the data set's ``README.md``, so that the
raw files and the converted ``comparisons.csv`` give the same comparisons (same agents, contexts
and counts). They double as examples of loaders for other layouts: per-pair JSONL files with
numeric scores (Vicuna-80 / QLoRA human votes) and a left/right/winner CSV with id lookups
(LLMFAO crowd votes).
"""

from collections.abc import Collection
import os
import re

import numpy as np

from .._errors import InputError
from . import _report as R
from ._comparisons import Comparisons
from ._report import LoadReport, refuse_or_skip
from ._settings import LoadSettings
from ._tabular import _parse_jsonl_lines, _read_csv, object_column
from ._winner_rows import parse_comparison_rows

VICUNA80_NAMES = {"gpt35": "gpt-3.5-turbo", "gpt4": "gpt-4"}
_VICUNA80_FILE = re.compile(
  r"^answer_(?P<a>.+?)-vs-answer_(?P<b>.+?)-human-reviewer_threeclass\.jsonl$"
)
_VICUNA80_SCORES = {"1": "a", "2": "b", "3": "tie"}
_LLMFAO_WINNERS = {"left": "a", "right": "b", "tie": "tie"}


def _find(directory: str, *names: str) -> str:
  """``directory/name`` or ``directory/raw/name`` for the first name that exists."""
  for base in (directory, os.path.join(directory, "raw")):
    for name in names:
      path = os.path.join(base, name)
      if os.path.exists(path):
        return path
  raise InputError(f"{names[0]!r} not found in {directory!r} or its raw/ folder.")


def _set_pre(pre: np.ndarray, mask: np.ndarray, reason: str, detail_fn) -> None:
  """Marks the rows in ``mask`` (only bad rows are visited) as rejected before parsing."""
  for i in np.flatnonzero(mask):
    pre[i] = (reason, detail_fn(i))


def _read_jsonl_file(path: str):
  with open(path, encoding="utf-8-sig") as f:
    return _parse_jsonl_lines(f.read().splitlines())


def load_vicuna80_raw(
  directory: str | os.PathLike[str],
  *,
  exclude_agents: Collection[str] = ("claude",),
  strict: bool = False,
  skip_bad_rows: bool = False,
) -> tuple[Comparisons, LoadReport]:
  """Loads the Vicuna-80 human votes (QLoRA paper, PRD split) from the publisher's JSONL files.

  Reads ``ratings-human/answer_<m1>-vs-answer_<m2>-human-reviewer_threeclass.jsonl`` (fields
  ``question_id``, ``score``) and ``vicuna_questions.jsonl`` (``question_id`` -> ``category``).
  Conversion (the data set README): ``a`` = first model of the file name, ``b`` = second; names
  ``gpt35`` -> ``gpt-3.5-turbo``, ``gpt4`` -> ``gpt-4``; ``score`` 1 -> ``a`` won, 2 -> ``b`` won,
  3 -> tie; one comparison per vote; context = the question's category. Files involving an agent
  in ``exclude_agents`` are not read (by default the ``claude`` files, which come from a different
  protocol, as the README explains).

  Args:
    directory: the data set folder (``.../vicuna80_qlora_human``) or its ``raw/`` folder.
    exclude_agents: file-name agent names whose files are skipped.
    strict: raise on the first bad vote instead of listing them all.
    skip_bad_rows: drop bad votes (with a :class:`~ste_jax.data.BadRowsWarning`) instead of
      refusing the files.

  Returns:
    ``(comparisons, report)``; each rejected row carries its file name in ``source`` and its
    line number in that file.

  Raises:
    ValueError: the files are not found, or no usable vote (``"no comparisons"``).
  """
  directory = os.fspath(directory)
  ratings = _find(directory, "ratings-human")
  questions = _find(directory, "vicuna_questions.jsonl")
  _, qcol, _, _ = _read_jsonl_file(questions)
  categories = dict(zip((str(q) for q in qcol("question_id")), qcol("category")))

  parts = []
  for name in sorted(os.listdir(ratings)):
    match = _VICUNA80_FILE.match(name)
    if match is None:
      continue
    a, b = match.group("a"), match.group("b")
    if a in exclude_agents or b in exclude_agents:
      continue
    _, column, lines, pre = _read_jsonl_file(os.path.join(ratings, name))
    qid = np.array([str(q) for q in column("question_id")], dtype=object)
    ctx = np.array([categories.get(q) for q in qid], dtype=object)
    pre = np.array(pre, dtype=object)
    unknown = np.array([c is None for c in ctx]) & np.array([p is None for p in pre])
    _set_pre(
      pre,
      unknown,
      R.UNKNOWN_CONTEXT,
      lambda i, q=qid: f"question_id {q[i]} not in vicuna_questions.jsonl",
    )
    score = column("score")
    winner = object_column(
      s if s is None else _VICUNA80_SCORES.get(str(s).strip(), str(s)) for s in score
    )
    m = len(lines)
    parts.append(
      {
        "a": object_column([VICUNA80_NAMES.get(a, a)] * m),
        "b": object_column([VICUNA80_NAMES.get(b, b)] * m),
        "winner": winner,
        "context": ctx,
        "lines": lines,
        "pre": pre,
        "sources": object_column([name] * m),
      }
    )
  if not parts:
    raise InputError(f"no comparisons: no rating files found in {ratings!r}.")
  cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
  comparisons, report = parse_comparison_rows(
    {k: cat[k] for k in ("a", "b", "winner", "context")},
    cat["lines"],
    columns={"a": "file name", "b": "file name", "winner": "score", "context": "question_id"},
    settings=LoadSettings(strict=strict),
    source=ratings,
    sources=cat["sources"],
    pre=cat["pre"],
  )
  return comparisons, refuse_or_skip(report, skip_bad_rows)


def load_llmfao_raw(
  directory: str | os.PathLike[str], *, strict: bool = False, skip_bad_rows: bool = False
) -> tuple[Comparisons, LoadReport]:
  """Loads the LLMFAO crowd votes from the publisher's ``crowd-comparisons.csv``.

  Reads ``crowd-comparisons.csv`` (columns ``id, prompt, model_x, model_y, worker, winner, left,
  right``), ``prompts.jsonl`` (prompt id -> ``slug``) and ``models.jsonl`` (model id -> ``name``).
  Conversion (the data set README): ``a`` = ``left``, ``b`` = ``right`` (model names as in the
  file); ``winner`` ``left`` -> ``a``, ``right`` -> ``b``, ``tie`` -> tie; context = the prompt's
  slug; one comparison per crowd vote (worker ids are dropped). A row whose ``left``/``right``
  names are not the names of its ``model_x``/``model_y`` ids is rejected as ``"inconsistent
  record"``; an unknown prompt id as ``"unknown context"``.

  Args:
    directory: the data set folder (``.../llmfao_crowd``) or its ``raw/`` folder.
    strict: raise on the first bad row instead of listing them all.
    skip_bad_rows: drop bad rows (with a :class:`~ste_jax.data.BadRowsWarning`) instead of
      refusing the file.

  Returns:
    ``(comparisons, report)``, with CSV line numbers (header = line 1).

  Raises:
    ValueError: files or columns not found, or no usable vote (``"no comparisons"``).
  """
  import pandas as pd  # pylint: disable=g-import-not-at-top

  directory = os.fspath(directory)
  path = _find(directory, "crowd-comparisons.csv")
  _, pcol, _, _ = _read_jsonl_file(_find(directory, "prompts.jsonl"))
  _, mcol, _, _ = _read_jsonl_file(_find(directory, "models.jsonl"))
  slugs = dict(zip((str(i) for i in pcol("id")), pcol("slug")))
  names = dict(zip((str(i) for i in mcol("id")), mcol("name")))

  header, column, lines, pre = _read_csv(path, None, ",")
  if len(lines) == 0:
    raise InputError(f"no comparisons in {path}: the file is empty.")
  for name in ("prompt", "model_x", "model_y", "winner", "left", "right"):
    if name not in header:
      raise InputError(f"column {name!r} not found in {path}; available columns: {header}.")

  def lookup(col, table):
    keys = pd.Series(column(col), dtype=object).astype(str).str.strip()
    return keys.map(table).to_numpy(dtype=object)

  context = lookup("prompt", slugs)
  name_x, name_y = lookup("model_x", names), lookup("model_y", names)
  left, right = column("left"), column("right")
  consistent = ((name_x == left) & (name_y == right)) | ((name_x == right) & (name_y == left))
  pre = np.full(len(lines), None, dtype=object) if pre is None else np.array(pre, dtype=object)
  free = np.array([p is None for p in pre], dtype=bool)
  unknown_prompt = free & pd.isna(context)
  prompt = column("prompt")
  _set_pre(
    pre, unknown_prompt, R.UNKNOWN_CONTEXT, lambda i: f"prompt {prompt[i]!r} not in prompts.jsonl"
  )
  mismatch = free & ~unknown_prompt & ~consistent
  _set_pre(
    pre,
    mismatch,
    R.INCONSISTENT,
    lambda i: (
      f"left/right ({left[i]!r}, {right[i]!r}) are not the models.jsonl names of "
      f"model_x/model_y ({name_x[i]!r}, {name_y[i]!r})"
    ),
  )
  raw_winner = column("winner")
  mapped = pd.Series(raw_winner, dtype=object).str.strip().map(_LLMFAO_WINNERS)
  mapped = mapped.to_numpy(dtype=object)
  winner = np.where(pd.isna(mapped), raw_winner, mapped)
  comparisons, report = parse_comparison_rows(
    {"a": left, "b": right, "winner": winner, "context": context},
    lines,
    columns={"a": "left", "b": "right", "winner": "winner", "context": "prompt"},
    settings=LoadSettings(strict=strict),
    source=path,
    pre=pre,
  )
  return comparisons, refuse_or_skip(report, skip_bad_rows)
