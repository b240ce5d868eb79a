"""Rendering of leaderboard tables (:class:`~ste_jax.evaluate.CoreTable`) and witnesses: text,
Markdown, CSV and JSON-ready dicts. No computation here beyond formatting."""

import csv
import dataclasses
import io
import math
import textwrap
from typing import Any

import numpy as np

from ste_jax.evaluate._head_to_head import DEFAULT_ROWS as HEAD_TO_HEAD_ROWS
from ste_jax.evaluate._leaderboard import (
  COLUMNS,
  ROBUSTNESS_COLUMNS,
  TASK_MIX_COLUMNS,
  TIER_COLUMNS,
)

VERDICT_MARK = {"in": "in", "out": "out", "undetermined": "?", "": ""}


def _f(x, fmt: str) -> str:
  return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _ci(row, lo: str, hi: str) -> str:
  if row[lo] is None:
    return ""
  return f"[{row[lo]:.3f}, {row[hi]:.3f}]"


def _display_rows(table, top=None) -> list[list[str]]:
  rows = []
  for r in table.records()[:top]:
    bt = "n/i" if not table.bt_identifiable else _f(r["bradley_terry"], "+.2f")
    rows.append(
      [
        str(r["rank"]),
        r["agent"],
        str(r["tier"]),
        f"{r['tc_score']:.3f}",
        _ci(r, "tc_lo", "tc_hi"),
        _f(r["p_tc"], ".2f"),
        VERDICT_MARK[r["tc_verdict"]],
        f"{r['uc_score']:.3f}",
        _ci(r, "uc_lo", "uc_hi"),
        _f(r["p_uc"], ".2f"),
        VERDICT_MARK[r["uc_verdict"]],
        "yes" if r["hard_tc"] else "-",
        "yes" if r["hard_uc"] else "-",
        f"{r['win_rate']:.3f}",
        bt,
        f"{r['elo']:.0f}",
        f"{r['games']:g}",
      ]
      + [_extra_cell(name, r[name]) for name in table.settings.extra_columns]
    )
  return rows


def _extra_cell(name: str, value) -> str:
  """A cell of a column the settings add: a solution's membership or probability, or a count."""
  from ste_jax.exact._solution_memberships import is_lottery

  if name in TASK_MIX_COLUMNS[:2]:
    return _f(value, ".3f")
  if name in TASK_MIX_COLUMNS:  # hard_tc_mix; None where not computed
    return "yes" if value else "-"
  if name in ROBUSTNESS_COLUMNS + TIER_COLUMNS:
    if isinstance(value, str):  # certified bounds "lo..hi"
      return value
    if value is None or (value < 0 and name not in ROBUSTNESS_COLUMNS):
      return "-"
    return "none" if value < 0 else str(int(value))  # -1: no set of comparisons would
  if is_lottery(name):
    return _f(value, ".3f")
  return "yes" if value else "-"


HEADER = (
  "#",
  "agent",
  "tier",
  "TC",
  "TC CI",
  "P(TC)",
  "TC?",
  "UC",
  "UC CI",
  "P(UC)",
  "UC?",
  "hardTC",
  "hardUC",
  "winrate",
  "BT",
  "Elo",
  "games",
)
_CI_COLUMNS = {4, 8}
_BOOT_COLUMNS = {5, 6, 9, 10}


def _header(table) -> tuple[str, ...]:
  return HEADER + table.settings.extra_columns


def _columns_shown(table) -> list[int]:
  drop = set()
  if not table.soft_intervals:
    drop |= _CI_COLUMNS
  if not table.settings.num_replicas:
    drop |= _BOOT_COLUMNS
  return [j for j in range(len(_header(table))) if j not in drop]


def _title(table) -> str:
  name = "all data" if table.context is None else f"context {table.context!r}"
  games = float(np.sum(table.games_matrix)) / 2  # weighted: a counts row is many comparisons
  if abs(games - table.num_comparisons) < 0.5:
    return f"{name}: {len(table.agents)} agents, {table.num_comparisons} comparisons"
  return (
    f"{name}: {len(table.agents)} agents, {games:,.6g} comparisons (weighted, "
    f"{table.num_comparisons} rows)"
  )


def _evidence(table) -> str:
  d = table.diagnostics
  per = d.comparisons_per_observed_pair
  return (
    f"evidence: {d.pairs_observed} of {d.num_pairs} pairs observed ({d.share_pairs_observed:.0%}); "
    "comparisons "
    f"per observed pair min {_f(per[0], 'g')}, median {_f(per[1], 'g')}; "
    f"{len(d.agents_below_min_games)} agents with fewer than {d.min_games:g} comparisons; "
    "comparison graph " + ("connected" if d.connected else f"has {d.num_components} components")
  )


MAX_NAMES = 25


def _names(names) -> str:
  names = list(names)
  more = f", ... and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
  return "{" + ", ".join(names[:MAX_NAMES]) + more + "}"


def _verdict_summary(table) -> list[str]:
  if not table.settings.num_replicas:
    return []
  out = []
  for label, col in (("Top Cycle", "tc_verdict"), ("Uncovered Set", "uc_verdict")):
    v = table.columns[col]
    ins = [table.agents[i] for i in table.order if v[i] == "in"]
    und = sum(1 for x in v if x == "undetermined")
    out.append(
      f"{label} at {table.settings.confidence:g}: in {_names(ins)}; {und} undetermined, "
      f"{sum(1 for x in v if x == 'out')} out"
    )
  out += _candidate_lines(table)
  if any(x == "undetermined" for col in ("tc_verdict", "uc_verdict") for x in table.columns[col]):
    out.append(
      "undetermined: the comparisons oriented at this confidence neither connect the agent to "
      "every "
      "other agent nor put it below a group that beats everyone else; comparing the open pairs "
      "decides it"
    )
  return out


def _candidate_lines(table) -> list[str]:
  """The replicas' candidates of each concept with undetermined verdicts (one line for both when
  equal)."""
  open_ = [
    (label, concept, p)
    for label, concept, p, col in (
      ("Top Cycle", "top_cycle", "P(TC)", "tc_verdict"),
      ("Uncovered Set", "uncovered", "P(UC)", "uc_verdict"),
    )
    if table.candidates(concept) is not None and (table.columns[col] == "undetermined").any()
  ]
  if len(open_) == 2:
    tc, uc = table.candidates("top_cycle"), table.candidates("uncovered")
    if np.array_equal(tc.members, uc.members) and tc.share == uc.share:
      open_ = [("Top Cycle and Uncovered Set", "top_cycle", "P(TC)")]
  out = []
  for label, concept, p in open_:
    c, names = table.candidates(concept), table.candidate_names(concept)
    out.append(
      f"{label} candidates (the agents most often in the replicas' hard cores, by {p}): "
      f"{_names(names)}: "
      f"{len(names)} agent{'s' * (len(names) != 1)}, holding the whole hard core of {c.share:.0%} "
      "of the "
      f"{table.settings.num_replicas} replicas"
    )
  return out


def _footer(table) -> list[str]:
  lines = [
    f"hard Top Cycle (point estimate): {_names(table.top_cycle)}",
    f"hard Uncovered Set (point estimate): {_names(table.uncovered_set)}",
    *_verdict_summary(table),
  ]
  if table.bt_note:
    lines.append(table.bt_note.replace("no BT scores are shown", "BT shows n/i (not identifiable)"))
  lines += [f"warning: {w}" for w in table.diagnostics.warnings]
  return lines


def _aligned(header, rows, left: int = 1) -> list[str]:
  """Fixed-width lines: the header, then the rows; column ``left`` (the agent) left-aligned, the
  rest right-aligned."""
  widths = [max([len(header[k])] + [len(r[k]) for r in rows]) for k in range(len(header))]
  return [
    "  ".join(
      c.ljust(w) if k == left else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths))
    ).rstrip()
    for cells in [header, *rows]
  ]


INFLUENCE_NOTE = (
  "influence = d score / d weight of the comparison, through the estimator and the soft cores; "
  "if removed = -weight x influence, the first-order change of the score were the comparison "
  "removed; comparison = its number (1 = first) among the table's comparisons in input order; "
  "x k: k identical comparisons, the first listed"
)
"""What the influence block (``--influence K``) lists."""
INFLUENCE_LINE_NOTE = (
  "; line = that comparison's line in the input file (a CSV's header is line 1; every "
  "comparison of a counts row has the row's line)"
)
"""Added to :data:`INFLUENCE_NOTE` where the comparisons carry their input lines."""


def influence_lines(table, short: dict | None = None) -> list[str]:
  """The ``--influence`` block of a table: per top agent and score, its most influential rows."""
  frame = table.influence
  if frame is None or not len(frame):
    return []
  short = short or {}
  out = [
    f"influence on the soft scores of the top {frame['agent'].nunique()} agents "
    f"({frame.attrs.get('method', '')}):"
  ]
  lines = "line" in frame.columns
  header = ("agent", "score", "comparison") + (("line",) if lines else ())
  header += ("a", "b", "outcome", "influence", "if removed")
  rows = []
  for r in frame.itertuples(index=False):
    rows.append(
      [
        short.get(r.agent, r.agent),
        f"{'TC' if r.score == 'top_cycle' else 'UC'} {r.value:.3f}",
        f"{r.row + 1}" + (f" x{r.rows}" if r.rows > 1 else ""),
        *([f"{r.line}"] if lines else []),
        short.get(r.a, r.a),
        short.get(r.b, r.b),
        f"{r.outcome:g}",
        f"{r.influence:+.3g}",
        f"{r.removal_effect:+.3g}",
      ]
    )
  return out + ["  " + line for line in _aligned(header, rows, left=0)]


def _influence_records(table) -> list[dict] | None:
  frame = table.influence
  if frame is None:
    return None
  return [
    dict(
      agent=r.agent,
      score=r.score,
      value=float(r.value),
      comparison=int(r.row),
      line=int(r.line) if "line" in frame.columns else None,
      rows=int(r.rows),
      a=r.a,
      b=r.b,
      outcome=float(r.outcome),
      weight=float(r.weight),
      influence=float(r.influence),
      removal_effect=float(r.removal_effect),
    )
    for r in frame.itertuples(index=False)
  ]


def _head_to_head_cell(h, i: int, j: int) -> str:
  if i == j:
    return "-"
  if not h.compared[i, j]:
    return "."
  return f"{h.wins[i, j]:g}-{h.wins[j, i]:g}" + ("!" if h.against_table[i, j] else "")


def _head_to_head_title(h) -> list[str]:
  return [
    f"head-to-head among the first {len(h.agents)} rows: {h.summary()}",
    "(cells: the row's wins-losses against the column's row, ties 1/2; . = never compared; ! = the "
    "row leads "
    "the record but the table has it losing)",
  ]


def _head_to_head_text(table, k: int) -> list[str]:
  """The crosstable of the first ``k`` rows as fixed-width lines (none for ``k < 2`` or fewer
  agents)."""
  h = table.head_to_head(k)
  k = len(h.agents)
  if k < 2:
    return []
  names = short_names(h.agents, 20)
  cells = [
    [f"{i + 1}", names[name]] + [_head_to_head_cell(h, i, j) for j in range(k)]
    for i, name in enumerate(h.agents)
  ]
  return _head_to_head_title(h) + _aligned(["#", "agent"] + [str(j + 1) for j in range(k)], cells)


def _head_to_head_markdown(table, k: int) -> list[str]:
  h = table.head_to_head(k)
  k = len(h.agents)
  if k < 2:
    return []
  rows = [
    [str(i + 1), name.replace("|", "\\|")] + [_head_to_head_cell(h, i, j) for j in range(k)]
    for i, name in enumerate(h.agents)
  ]
  return [
    f"_{' '.join(_head_to_head_title(h))}_",
    "",
    "| # | agent | " + " | ".join(str(j + 1) for j in range(k)) + " |",
    "|---:|---|" + "---:|" * k,
  ] + ["| " + " | ".join(r) + " |" for r in rows]


# --------------------------------------------------------------------------------------------
# Text (``--output table``): at most WIDTH columns by default


WIDTH = 120
"""Width of the default text output (``ste-jax score``, ``explain``, ``suggest``, ``demo``)."""
TEXT_ROWS = 40
"""Rows of a text table without ``--top`` or ``--details`` (CSV, JSON and Markdown: every row)."""
MAX_AGENT = 28
"""Longest agent name in a text table; longer ones are shortened in the middle (text only)."""
TEXT_COLUMNS = ("rank", "agent", "tier", "tc_verdict", "uc_verdict", "p_tc", "tc_score")
TEXT_COLUMNS += ("win_rate", "bradley_terry", "games")
"""Columns of the default text table (names as in the CSV; ``tc_score`` shows its interval)."""
EXTRA_COLUMNS = ("p_uc", "uc_score", "hard_tc", "hard_uc", "elo")
"""Further columns, shown with ``--columns NAME,...`` or ``--columns all``."""
_ORDER = ("rank", "agent", "tier", "tc_verdict", "uc_verdict", "p_tc", "p_uc", "tc_score")
_ORDER += ("uc_score", "hard_tc", "hard_uc", "win_rate", "bradley_terry", "elo", "games")


def parse_columns(text: str) -> tuple[str, ...]:
  """``--columns``: ``all`` or comma-separated names of :data:`EXTRA_COLUMNS` (the default table's
  :data:`TEXT_COLUMNS` may be named too); raises :class:`argparse.ArgumentTypeError`."""
  import argparse

  names = tuple(dict.fromkeys(x.strip().lower() for x in text.split(",") if x.strip()))
  if names == ("all",):
    return EXTRA_COLUMNS
  unknown = [x for x in names if x not in _ORDER]
  if unknown or not names:
    what = f"unknown column {unknown[0]!r}" if unknown else "no column named"
    raise argparse.ArgumentTypeError(
      f"{what}; choose 'all' or from {', '.join(EXTRA_COLUMNS)} (shown by default: "
      f"{', '.join(TEXT_COLUMNS)})"
    )
  return tuple(x for x in names if x in EXTRA_COLUMNS)


def wrap(text: str, indent: str = "  ", width: int = WIDTH) -> list[str]:
  """``text`` (one logical line) as lines of at most ``width`` characters; continuation lines
  start with ``indent`` plus the line's own leading spaces. Words are not split at hyphens (agent
  names)."""
  lead = text[: len(text) - len(text.lstrip(" "))]
  if len(text) <= width:
    return [text]
  return textwrap.wrap(
    text,
    width=width,
    initial_indent="",
    subsequent_indent=lead + indent,
    break_on_hyphens=False,
    drop_whitespace=True,
  ) or [text[:width]]


def wrap_lines(lines, indent: str = "  ", width: int = WIDTH) -> list[str]:
  """:func:`wrap` of each line (blank lines kept)."""
  return [part for line in lines for part in (wrap(line, indent, width) if line else [""])]


def short_names(names, width: int = MAX_AGENT) -> dict[str, str]:
  """Display names of at most ``width`` characters: a longer name keeps its start and end around
  ``...`` (more of the start or of the end where that keeps the names distinct; wider, up to the
  full names, where no cut does).

  Example:
    >>> short_names(["meta-llama/Llama-2-70b-chat-hf", "gpt-4"], 20)
    {'meta-llama/Llama-2-70b-chat-hf': 'meta-llam...-chat-hf', 'gpt-4': 'gpt-4'}
  """
  names = list(dict.fromkeys(names))
  for w in range(max(width, 8), max((len(x) for x in names), default=0) + 1):
    keep = w - 3
    middle = (keep + 1) // 2
    for shift in sorted(range(1 - middle, keep - middle), key=abs):  # balanced cut first
      head = middle + shift
      out = {x: x if len(x) <= w else x[:head] + "..." + x[len(x) - (keep - head) :] for x in names}
      if len(set(out.values())) == len(names):
        return out
  return {x: x for x in names}


def _verdict(v) -> str:
  return VERDICT_MARK[v or ""]


def _score_cell(r, key: str, lo: str, hi: str) -> str:
  ci = _ci(r, lo, hi)
  return f"{r[key]:.3f}" + (f" {ci}" if ci else "")


def _text_columns(table, extra=()) -> list[str]:
  """The text table's columns: the defaults, the named extras, the requested solutions; those
  needing replicas (verdicts, P) only with replicas."""
  wanted = set(TEXT_COLUMNS) | set(extra)
  if not table.settings.num_replicas:
    wanted -= {"tc_verdict", "uc_verdict", "p_tc", "p_uc"}
  return [c for c in _ORDER if c in wanted] + list(table.settings.extra_columns)


def _text_header(table, key: str) -> str:
  ci = f" [{table.settings.confidence:.0%} CI]" if table.soft_intervals else ""
  return {
    "rank": "#",
    "agent": "agent",
    "tier": "tier",
    "tc_verdict": "TC?",
    "uc_verdict": "UC?",
    "p_tc": "P(TC)",
    "p_uc": "P(UC)",
    "tc_score": "TC score" + ci,
    "uc_score": "UC score" + ci,
    "hard_tc": "hardTC",
    "hard_uc": "hardUC",
    "win_rate": "win rate",
    "bradley_terry": "BT",
    "elo": "Elo",
    "games": "games",
  }.get(key, key)


def _text_cell(table, r, key: str, names: dict) -> str:
  if key == "agent":
    return names[r["agent"]]
  if key in ("tc_verdict", "uc_verdict"):
    return _verdict(r[key])
  if key in ("p_tc", "p_uc"):
    return _f(r[key], ".2f")
  if key == "tc_score":
    return _score_cell(r, "tc_score", "tc_lo", "tc_hi")
  if key == "uc_score":
    return _score_cell(r, "uc_score", "uc_lo", "uc_hi")
  if key in ("hard_tc", "hard_uc"):
    return "yes" if r[key] else "-"
  if key == "win_rate":
    return f"{r['win_rate']:.3f}"
  if key == "bradley_terry":
    return "n/i" if not table.bt_identifiable else _f(r["bradley_terry"], "+.2f")
  if key == "elo":
    return f"{r['elo']:.0f}"
  if key == "games":
    return f"{r['games']:g}"
  if key in ("rank", "tier"):
    return str(r[key])
  return _extra_cell(key, r[key])


def _resampling(table) -> str:
  clusters = getattr(table, "num_clusters", None)
  if clusters is not None:
    column = table.settings.cluster_column
    return f"cluster (Poisson over {clusters} {column + ' ' if column else ''}clusters)"
  conventions = table.conventions()
  return "parametric" if "parametric bootstrap" in conventions else "Poisson"


def _model_kind(table) -> str:
  chosen = getattr(table.model, "chosen", None)
  rank = getattr(chosen, "rank", None)
  if rank is None:
    return ""
  return "Bradley-Terry" + (f" + {rank} intransitive component{'s' * (rank > 1)}" if rank else "")


def method_line(table) -> str:
  """One line: the estimator and how it was chosen, the replicas and the confidence."""
  s = table.settings
  est = f"estimator {table.estimator} ({table.estimator_reason})"
  if table.model is not None and _model_kind(table):
    est += f", {_model_kind(table)} fitted to the comparisons, predicting every pair"
  if s.num_replicas:
    boot = f"{s.num_replicas} {_resampling(table)} bootstrap replicas, confidence {s.confidence:g}"
  else:
    boot = "no bootstrap (no verdicts, no intervals)"
  return f"method: {est}; {boot}"


def controls_lines(table) -> list[str]:
  """The controlled model's lines: the verdicts that change under control, the coefficients.

  Empty unless the table's model is a :class:`~ste_jax.evaluate.ControlledTournament`.
  """
  model = table.model
  if not hasattr(model, "describe_beta"):
    return []
  lines = [
    f"  controls: the table is the tournament at zero {', '.join(model.names)} difference; "
    + (model.verdict_changes or "verdict changes not computed")
  ]
  return lines + ["  " + model.describe_beta(table.settings.confidence)]


def key_line(table) -> str:
  """One line: what the default table's columns hold (the full rules: ``--details``)."""
  s = table.settings
  key = "key: TC/UC = Top Cycle/Uncovered Set; "
  if s.num_replicas:
    key += (
      "TC?/UC? = certified in, out, ? = undetermined; P(TC) = share of replicas with the agent in "
      "their hard TC; "
    )
  ci = f" [{s.confidence:.0%} interval]" if table.soft_intervals else ""
  key += f"TC score = soft STE score{ci}; tier 1 = top; BT = Bradley-Terry"
  if s.robustness:
    key += (
      "; flips/removals = fewest comparisons reversed/removed to change the agent's TC/UC "
      "membership (lo..hi: certified bounds; none: no set would)"
    )
  return key


def evidence_line(table) -> str:
  """One line: pairs compared, comparisons per compared pair, thinly compared agents,
  connectivity."""
  d = table.diagnostics
  per = d.comparisons_per_observed_pair
  return (
    f"evidence: {d.pairs_observed} of {d.num_pairs} pairs compared ({d.share_pairs_observed:.0%}), "
    f"comparisons per pair min {_f(per[0], 'g')} / median {_f(per[1], 'g')}, "
    f"{len(d.agents_below_min_games)} agents under {d.min_games:g}, graph "
    + ("connected" if d.connected else f"in {d.num_components} components")
  )


def label_explanations(table) -> dict[str, str]:
  """What each label of the text table and crosstable means, by label (``--details``, JSON)."""
  c = table.settings.confidence
  out = {}
  if table.settings.num_replicas:
    out |= {
      "in": f"certified in at {c:g}: reaches every agent through sure edges (an edge is sure when "
      f"it holds in >= {c:.0%} of the replicas; Uncovered Set: within two steps)",
      "out": f"certified out at {c:g}: does not reach every agent even through every edge not "
      "surely reversed",
      "?": "undetermined: the comparisons oriented at this confidence neither connect the agent "
      "to every other agent nor put it below a group that beats everyone else; comparing the open "
      "pairs decides it",
    }
  out |= {
    "tier": "depth in the condensation of the hard relation (tier 1 = the hard Top Cycle when "
    "every pair is related)",
    "yes / -": "in / not in the point estimate's hard core (hardTC, hardUC)",
    "n/a": "not computed",
    "a-b": "crosstable cell: the row's wins-losses against the column's row, ties 1/2",
    ".": "crosstable cell: never compared",
    "!": "crosstable cell: the row leads the record but the table has it losing",
  }
  if not table.bt_identifiable:
    out["n/i"] = "Bradley-Terry not identifiable: " + table.bt_note
  return out


def _text_table(table, top, extra) -> list[str]:
  keys = _text_columns(table, extra)
  records = table.records()[:top]
  names = short_names([r["agent"] for r in records])
  header = [_text_header(table, k) for k in keys]
  rows = [[_text_cell(table, r, k, names) for k in keys] for r in records]
  return _aligned(header, rows, left=keys.index("agent"))


def _details(table, head_to_head: int) -> list[str]:
  lines = ["conventions: " + table.conventions()]
  lines += [
    f"hard Top Cycle (point estimate): {_names(table.top_cycle)}",
    f"hard Uncovered Set (point estimate): {_names(table.uncovered_set)}",
  ]
  if table.settings.num_replicas:
    for label, col in (("Top Cycle", "tc_verdict"), ("Uncovered Set", "uc_verdict")):
      v = table.columns[col]
      ins = [table.agents[i] for i in table.order if v[i] == "in"]
      und = sum(1 for x in v if x == "undetermined")
      out = sum(1 for x in v if x == "out")
      lines.append(
        f"{label} at {table.settings.confidence:g}: in {_names(ins)}; {und} undetermined, {out} out"
      )
  lines.append("labels:")
  lines += [f"  {k}: {v}" for k, v in label_explanations(table).items()]
  return lines + _head_to_head_text(table, head_to_head)


def format_text(
  tables,
  *,
  top: int | None = None,
  head_to_head: int = HEAD_TO_HEAD_ROWS,
  details: bool = False,
  columns: tuple[str, ...] = (),
  load: str | None = None,
) -> str:
  """Fixed-width report, one block per context, at most :data:`WIDTH` columns wide by default.

  Each block: the title and the answer (:meth:`~ste_jax.evaluate.CoreTable.answer`), the table
  (:data:`TEXT_COLUMNS`), the method line, the evidence line and the warnings; then, with
  ``details``, the conventions, the point estimate's hard cores, the verdict counts, what each label
  means and the head-to-head crosstable.

  Args:
    tables: :class:`~ste_jax.evaluate.CoreTable` list.
    top: print only the first ``top`` rows of each table (``None``: every row with ``details`` or
      at most :data:`TEXT_ROWS` agents, else the first :data:`TEXT_ROWS`).
    head_to_head: with ``details``, the crosstable of the direct records among each table's first
      ``head_to_head`` rows (:meth:`~ste_jax.evaluate.CoreTable.head_to_head`; ``0``: none).
    details: add the conventions, label explanations and crosstable.
    columns: further columns (:data:`EXTRA_COLUMNS`, see :func:`parse_columns`).
    load: the load report's summary, printed once after the tables.

  Returns:
    The report; long agent names are shortened in the tables only (:func:`short_names`).
  """
  out = []
  for table in tables:
    rows = TEXT_ROWS if top is None and not details else top  # None: every row
    head, *lines = _text_table(table, rows, columns)
    out += [""] if out else []
    out += wrap_lines([_title(table), *table.answer().lines(), *_candidate_lines(table)])
    out += ["", head, "-" * len(head), *lines]
    if rows is not None and rows < len(table.agents):
      out.append(f"... {len(table.agents) - rows} more agents (--top to show more)")
    notes = [method_line(table), *controls_lines(table), "  " + key_line(table)]
    notes.append(evidence_line(table))
    if table.bt_note:
      notes.append(table.bt_note.replace("no BT scores are shown", "BT shows n/i"))
    notes += [f"warning: {w}" for w in table.diagnostics.warnings]
    if details:
      notes += _details(table, head_to_head)
    out += [""] + wrap_lines(notes)
    block = influence_lines(table, short_names(table.agents))
    if block:
      lines = "line" in table.influence.columns
      out += ["", *block, *wrap(INFLUENCE_NOTE + (INFLUENCE_LINE_NOTE if lines else ""))]
  if load:
    first, *rest = load.splitlines()
    source, sep, tail = first.partition(": read ")
    if sep and len(first) > WIDTH:  # a long path on a line of its own, the counts below it
      first, rest = f"{source}:", [f"  read {tail}", *rest]
    out += [""] + wrap_lines([first, *rest], indent="    ")
  if not details and tables:
    more = [x for x in EXTRA_COLUMNS if x not in columns]
    out += wrap(
      "more: --details (the full conventions, what each label means, the crosstable of direct "
      "records)" + (f"; --columns all ({', '.join(more)})" if more else "")
    )
  return "\n".join(out)


def format_markdown(tables, *, top=None, head_to_head: int = HEAD_TO_HEAD_ROWS) -> str:
  """GitHub-flavoured Markdown tables, one per context (``top``, ``head_to_head``: as
  :func:`format_text`).

  Each block: the title, the answer, the evidence line, the table, the footer (hard cores, verdict
  counts, warnings), the conventions and the head-to-head crosstable.
  """
  out = []
  for table in tables:
    keep = _columns_shown(table)
    header = [_header(table)[j] for j in keep]
    rows = [[r[j] for j in keep] for r in _display_rows(table, top)]
    answer = table.answer().lines()
    out += [
      f"### {_title(table)}",
      "",
      *[f"> {line}" + "  " * (k + 1 < len(answer)) for k, line in enumerate(answer)],
      "",
      f"_{_evidence(table)}_",
      "",
      "| " + " | ".join(header) + " |",
      "|" + "|".join("---" if k == 1 else "---:" for k in range(len(header))) + "|",
    ]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    out += [""] + [f"- {line}" for line in _footer(table)] + [""]
    out += [f"_conventions: {table.conventions()}_", ""]  # after the table, as in the text output
    crosstable = _head_to_head_markdown(table, head_to_head)
    out += crosstable + [""] * bool(crosstable)
  return "\n".join(out).rstrip("\n")


CSV_COLUMNS = ("context", "rank", *COLUMNS, "estimator", "bt_identifiable")
"""CSV columns; the settings' further columns (``--solutions``, ``--robustness``,
``--tier-intervals``) follow them."""


def _csv_cell(v):
  if v is None:
    return ""
  if isinstance(v, bool):
    return "true" if v else "false"
  if isinstance(v, float):
    return f"{v:.7g}"
  return v


def format_csv(tables) -> str:
  """One CSV with a ``context`` column (``all`` for pooled data); empty cells for n/a."""
  buf = io.StringIO()
  writer = csv.writer(buf, lineterminator="\n")
  columns = CSV_COLUMNS + (tables[0].settings.extra_columns if tables else ())
  writer.writerow(columns)
  for table in tables:
    for r in table.records():
      r = dict(
        r,
        context="all" if table.context is None else table.context,
        estimator=table.estimator,
        bt_identifiable=table.bt_identifiable,
      )
      writer.writerow([_csv_cell(r[c]) for c in columns])
  return buf.getvalue().rstrip("\n")


def _finite(x):
  return None if x is None or not math.isfinite(x) else float(x)


def _cv_fit(model: Any) -> Any:
  """The :class:`~ste_jax.evaluate.ModelTournament` whose cross-validation chose ``model``'s rank
  and ridges (``model`` itself, or the ``uncontrolled`` fit of a controlled / tie-model fit)."""
  return getattr(model, "uncontrolled", model)


def to_json(tables, load=None, *, head_to_head: int = HEAD_TO_HEAD_ROWS) -> dict:
  """A JSON-ready dict: settings, load report and the tables with conventions, model, diagnostics,
  what each text label means (:func:`label_explanations`) and the head-to-head records among each
  table's first ``head_to_head`` rows (:meth:`~ste_jax.evaluate.HeadToHead.to_dict`)."""
  settings = tables[0].settings if tables else None
  return {
    "settings": None
    if settings is None
    else dataclasses.asdict(settings) | {"gamma": settings.gamma_value},
    "load": load,
    "tables": [
      {
        "context": t.context,
        "conventions": t.conventions(),
        "estimator": t.estimator,
        "estimator_reason": t.estimator_reason,
        "model": None
        if t.model is None
        else {
          "description": t.model.describe(),
          "rank": t.model.chosen.rank,
          "strength_l2": t.model.chosen.l2_strength,
          "skew_l2": t.model.chosen.l2_skew,
          # the half-win cross-validation that chose the rank and ridges (a controlled or
          # tie-model fit keeps it as ``uncontrolled``)
          "cv_log_loss": _finite(_cv_fit(t.model).cv_log_loss),
          "bt_cv_log_loss": _finite(_cv_fit(t.model).bt_cv_log_loss),
          "num_folds": _cv_fit(t.model).num_folds,
          "record_tolerance": _finite(_cv_fit(t.model).record_tolerance),
        },
        "num_agents": len(t.agents),
        "num_comparisons": t.num_comparisons,
        "answer": t.answer().to_dict(),
        "top_cycle": t.top_cycle,
        "uncovered_set": t.uncovered_set,
        **{
          f"{concept}_candidates": None
          if t.candidates(concept) is None
          else {
            "agents": t.candidate_names(concept),
            "share": t.candidates(concept).share,
            "level": t.candidates(concept).level,
          }
          for concept in ("top_cycle", "uncovered")
        },
        "soft_intervals": t.soft_intervals,
        "diagnostics": t.diagnostics.to_dict(),
        "bt_identifiable": t.bt_identifiable,
        "bt_note": t.bt_note or None,
        "head_to_head": t.head_to_head(head_to_head).to_dict(),
        "labels": label_explanations(t),
        "influence": _influence_records(t),
        "rows": [
          dict(r, tc_verdict=r["tc_verdict"] or None, uc_verdict=r["uc_verdict"] or None)
          for r in t.records()
        ],
      }
      for t in tables
    ],
  }


# --------------------------------------------------------------------------------------------
# Witnesses (``ste-jax explain``)


MAX_WITNESSES = 12
"""Chains, coverers' victims and set members listed by :func:`format_witnesses` without details."""


def _capped(items, details: bool, what: str, limit: int = MAX_WITNESSES) -> tuple[list, str]:
  """``(shown, note)``: all ``items`` with ``details``, else the first ``limit`` and a note."""
  items = list(items)
  if details or len(items) <= limit:
    return items, ""
  return items[:limit], f" ... and {len(items) - limit} more {what} (--details: all)"


def format_witnesses(w: dict, *, details: bool = False, header=()) -> str:
  """Human-readable witnesses: chains ``a > b (0.62) > c (0.55)``, coverers, refutations.

  Args:
    w: the witness report (``ste_jax.evaluate._witnesses.witness_report``).
    details: list every chain, victim and member (else :data:`MAX_WITNESSES` of each).
    header: lines printed first (the data and estimator).

  Returns:
    Lines of at most :data:`WIDTH` characters (continuations indented).
  """
  name = w["agent"]
  yn = lambda b: "yes" if b else "no"

  def listed(items, what):
    shown, note = _capped(items, details, what)
    return ", ".join(shown) + note

  out = [
    *header,
    f"{name}: in the Top Cycle: {yn(w['in_top_cycle'])}; in the Uncovered Set: "
    f"{yn(w['in_uncovered_set'])}",
    "",
  ]
  if w["in_top_cycle"]:
    out.append(
      f"Top Cycle witness: chains of majority wins from {name} reach every other agent "
      "('A > B (p)': A beat B in a share p of their comparisons; '=' marks a tie, p = 0.50):"
    )
  else:
    out.append(
      f"Top Cycle: {name} fails to reach {w['unreached'][0]!s} (a Top Cycle member) by any chain "
      "of majority wins or ties; every Top Cycle member beats every agent it reaches."
    )
    out.append(f"  unreached: {listed(w['unreached'], 'agents')}")
    if w["chains"]:
      out.append(f"  chains of majority wins (or ties) from {name}:")
  chains, more = _capped(w["chains"], details, "chains")
  for chain in chains:
    text = chain[0]["agent"]
    for s in chain[1:]:
      text += f" {'=' if s['tie'] else '>'} {s['agent']} ({s['p']:.2f})"
    out.append(f"  {text}")
  if more:
    out.append(f" {more}")
  out.append("")
  if w["coverers"]:
    out.append(
      f"Uncovered Set: {name} is covered by "
      f"{listed((c['agent'] for c in w['coverers']), 'agents')}:"
    )
    coverers, more = _capped(w["coverers"], details, "coverers")
    for c in coverers:
      beats = (
        listed((f"{b['agent']} ({b['p']:.2f})" for b in c["also_beats"]), "agents")
        or "nobody else to beat"
      )
      out.append(
        f"  covered by {c['agent']}: beats {name} ({c['p']:.2f}) and everyone {name} beats: {beats}"
      )
    if more:
      out.append(f" {more}")
  else:
    out.append(
      f"Uncovered Set witness: no agent covers {name}; each agent that beats it misses one of its "
      "wins:"
    )
    if not w["refutations"]:
      out.append(f"  (no agent beats {name} by a strict majority)")
    refutations, more = _capped(w["refutations"], details, "agents")
    for r in refutations:
      out.append(
        f"  {r['agent']} beats {name} ({r['p']:.2f}) but not {r['misses']} ({name} > "
        f"{r['misses']} {r['p_agent']:.2f}; {r['agent']} vs {r['misses']} {r['p_other']:.2f})"
      )
    if more:
      out.append(f" {more}")
  for lot in w.get("lotteries", ()):
    margins = (
      "majority margins sign(P - P^T)"
      if lot["set"] == "bipartisan"
      else "probability margins P - P^T"
    )
    mix = listed((f"{e['agent']} {e['p']:.3f}" for e in lot["lottery"]), "agents")
    out.append("")
    if lot["in"]:
      out.append(
        f"{lot['set'].capitalize()} set ({margins}): {name} is in the support of the maximal "
        f"lottery: {mix}"
      )
    elif lot["witness"]:
      out.append(
        f"{lot['set'].capitalize()} set ({margins}): {name} is out: the maximal lottery ({mix}) "
        "beats it "
        f"by an expected margin of {lot['margin']:.3f} > 0, and an agent a maximal lottery beats "
        "in "
        "expectation is in the support of none"
      )
    else:
      out.append(
        f"{lot['set'].capitalize()} set ({margins}): {name} is out (solver support; no margin "
        "witness "
        f"within rounding, margin {lot['margin']:.2e}): maximal lottery {mix}"
      )
  mcs = w.get("minimal_covering")
  if mcs is not None:
    out.append("")
    if mcs["in"]:
      out.append(f"Minimal covering set: {name} is in it: {listed(mcs['set'], 'members')}")
    elif mcs["coverer"] is not None:
      c = mcs["coverer"]
      beats = (
        listed((f"{b['agent']} ({b['p']:.2f})" for b in c["also_beats"]), "agents")
        or "nobody in the set to beat"
      )
      out.append(
        f"Minimal covering set ({listed(mcs['set'], 'members')}): {name} is out: {c['agent']}, a "
        "member, beats it "
        f"({c['p']:.2f}) and every member {name} beats: {beats}"
      )
    else:  # ties: the set is externally stable only under the Bordes covering it was computed with
      out.append(
        f"Minimal covering set ({listed(mcs['set'], 'members')}): {name} is out (no "
        "strict-majority coverer in the set; "
        "with ties the set uses the Bordes covering)"
      )
  sch = w.get("schwartz")
  if sch is not None:
    out.append("")
    members = sch["set"]
    shown = ", ".join(members[:10]) + (
      f", ... ({len(members)} members)" if len(members) > 10 else ""
    )
    if sch["in"]:
      out.append(f"Schwartz set (strict wins only): {name} is in it: {shown}")
    elif sch["chain"] is not None:
      chain = sch["chain"]
      text = chain[0]["agent"] + "".join(f" > {s['agent']} ({s['p']:.2f})" for s in chain[1:])
      out.append(
        f"Schwartz set ({shown}): {name} is out: {chain[0]['agent']}, a member, reaches it "
        f"by strict wins, {text}, and no chain of strict wins leads from {name} back to "
        f"{chain[0]['agent']}"
      )
    else:
      out.append(f"Schwartz set ({shown}): {name} is out")
  return "\n".join(wrap_lines(out, indent="    "))
