"""Rendering of leaderboard tables (:class:`~ste_jax.evaluate.CoreTable`) and witnesses: text,
Markdown, CSV and JSON-ready dicts. No computation here beyond formatting."""

import csv
import dataclasses
import io
import math

import numpy as np

from ste_jax.evaluate._head_to_head import DEFAULT_ROWS as HEAD_TO_HEAD_ROWS
from ste_jax.evaluate._leaderboard import COLUMNS

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
      + [_solution_cell(name, r[name]) for name in table.settings.solutions]
    )
  return rows


def _solution_cell(name: str, value) -> str:
  from ste_jax._solution_memberships import is_lottery

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
  return HEADER + table.settings.solutions


def _columns_shown(table) -> list[int]:
  drop = set()
  if not table.soft_intervals:
    drop |= _CI_COLUMNS
  if not table.settings.num_replicas:
    drop |= _BOOT_COLUMNS
  return [j for j in range(len(_header(table))) if j not in drop]


def _title(table) -> str:
  name = "all data" if table.context is None else f"context {table.context!r}"
  return f"{name}: {len(table.agents)} agents, {table.num_comparisons} comparisons"


def _evidence(table) -> str:
  d = table.diagnostics
  per = d.comparisons_per_observed_pair
  return (
    f"evidence: {d.pairs_observed} of {d.num_pairs} pairs observed ({d.share_pairs_observed:.0%}); comparisons "
    f"per observed pair min {_f(per[0], 'g')}, median {_f(per[1], 'g')}; "
    f"{len(d.agents_below_min_games)} agents with fewer than {d.min_games:g} comparisons; comparison graph "
    + ("connected" if d.connected else f"has {d.num_components} components")
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
      "undetermined: the comparisons oriented at this confidence neither connect the agent to every "
      "other agent nor put it below a group that beats everyone else; comparing the open pairs decides it"
    )
  return out


def _candidate_lines(table) -> list[str]:
  """The replicas' candidates of each concept with undetermined verdicts (one line for both when equal)."""
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
      f"{label} candidates (the agents most often in the replicas' hard cores, by {p}): {_names(names)}: "
      f"{len(names)} agent{'s' * (len(names) != 1)}, holding the whole hard core of {c.share:.0%} of the "
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


def _aligned(header, rows) -> list[str]:
  """Fixed-width lines: the header, then the rows; column 1 (the agent) left-aligned, the rest right."""
  widths = [max([len(header[k])] + [len(r[k]) for r in rows]) for k in range(len(header))]
  return [
    "  ".join(c.ljust(w) if k == 1 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))
    for cells in [header, *rows]
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
    "(cells: the row's wins-losses against the column's row, ties 1/2; . = never compared; ! = the row leads "
    "the record but the table has it losing)",
  ]


def _head_to_head_text(table, k: int) -> list[str]:
  """The crosstable of the first ``k`` rows as fixed-width lines (none for ``k < 2`` or fewer agents)."""
  h = table.head_to_head(k)
  k = len(h.agents)
  if k < 2:
    return []
  cells = [
    [f"{i + 1}", name] + [_head_to_head_cell(h, i, j) for j in range(k)]
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


def _header_lines(table) -> list[str]:
  """The title, the answer (:meth:`~ste_jax.evaluate.CoreTable.answer`), the conventions and the evidence."""
  return [
    _title(table),
    *table.answer().lines(),
    "conventions: " + table.conventions(),
    _evidence(table),
  ]


def format_text(tables, *, top=None, head_to_head: int = HEAD_TO_HEAD_ROWS) -> str:
  """Fixed-width tables, one per context, each under its conventions and evidence lines.

  Args:
    tables: :class:`~ste_jax.evaluate.CoreTable` list.
    top: print only the first ``top`` rows of each table (``None``: all).
    head_to_head: after each table, the crosstable of the direct records among its first
      ``head_to_head`` rows (:meth:`~ste_jax.evaluate.CoreTable.head_to_head`; ``0``: none).
  """
  out = []
  for table in tables:
    keep = _columns_shown(table)
    header = [_header(table)[j] for j in keep]
    rows = [[r[j] for j in keep] for r in _display_rows(table, top)]
    head, *lines = _aligned(header, rows)
    out += ([""] if out else []) + _header_lines(table) + ["", head, "-" * len(head)] + lines
    if top is not None and top < len(table.agents):
      out.append(f"... {len(table.agents) - top} more agents (--top to show more)")
    out += _footer(table)
    out += _head_to_head_text(table, head_to_head)
  return "\n".join(out)


def format_markdown(tables, *, top=None, head_to_head: int = HEAD_TO_HEAD_ROWS) -> str:
  """GitHub-flavoured Markdown tables, one per context (``top``, ``head_to_head``: as :func:`format_text`)."""
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
      f"_conventions: {table.conventions()}_",
      "",
      f"_{_evidence(table)}_",
      "",
      "| " + " | ".join(header) + " |",
      "|" + "|".join("---" if k == 1 else "---:" for k in range(len(header))) + "|",
    ]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    out += [""] + [f"- {line}" for line in _footer(table)] + [""]
    crosstable = _head_to_head_markdown(table, head_to_head)
    out += crosstable + [""] * bool(crosstable)
  return "\n".join(out).rstrip("\n")


CSV_COLUMNS = ("context", "rank", *COLUMNS, "estimator", "bt_identifiable")
"""CSV columns; tables with further solutions (``--solutions``) append one column per solution."""


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
  columns = CSV_COLUMNS + (tables[0].settings.solutions if tables else ())
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


def to_json(tables, load=None, *, head_to_head: int = HEAD_TO_HEAD_ROWS) -> dict:
  """A JSON-ready dict: settings, load report and the tables with conventions, model, diagnostics and
  the head-to-head records among each table's first ``head_to_head`` rows
  (:meth:`~ste_jax.evaluate.HeadToHead.to_dict`)."""
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
          "cv_log_loss": _finite(t.model.cv_log_loss),
          "bt_cv_log_loss": _finite(t.model.bt_cv_log_loss),
          "num_folds": t.model.num_folds,
          "record_tolerance": _finite(t.model.record_tolerance),
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


def format_witnesses(w: dict) -> str:
  """Human-readable witnesses: chains ``a > b (0.62) > c (0.55)``, coverers, refutations."""
  name = w["agent"]
  yn = lambda b: "yes" if b else "no"
  out = [
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
    out.append(f"  unreached: {', '.join(w['unreached'])}")
    if w["chains"]:
      out.append(f"  chains of majority wins (or ties) from {name}:")
  for chain in w["chains"]:
    text = chain[0]["agent"]
    for s in chain[1:]:
      text += f" {'=' if s['tie'] else '>'} {s['agent']} ({s['p']:.2f})"
    out.append(f"  {text}")
  out.append("")
  if w["coverers"]:
    out.append(
      f"Uncovered Set: {name} is covered by {', '.join(c['agent'] for c in w['coverers'])}:"
    )
    for c in w["coverers"]:
      beats = (
        ", ".join(f"{b['agent']} ({b['p']:.2f})" for b in c["also_beats"]) or "nobody else to beat"
      )
      out.append(
        f"  covered by {c['agent']}: beats {name} ({c['p']:.2f}) and everyone {name} beats: {beats}"
      )
  else:
    out.append(
      f"Uncovered Set witness: no agent covers {name}; each agent that beats it misses one of its wins:"
    )
    if not w["refutations"]:
      out.append(f"  (no agent beats {name} by a strict majority)")
    for r in w["refutations"]:
      out.append(
        f"  {r['agent']} beats {name} ({r['p']:.2f}) but not {r['misses']} "
        f"({name} > {r['misses']} {r['p_agent']:.2f}; {r['agent']} vs {r['misses']} {r['p_other']:.2f})"
      )
  for lot in w.get("lotteries", ()):
    margins = (
      "majority margins sign(P - P^T)"
      if lot["set"] == "bipartisan"
      else "probability margins P - P^T"
    )
    mix = ", ".join(f"{e['agent']} {e['p']:.3f}" for e in lot["lottery"])
    out.append("")
    if lot["in"]:
      out.append(
        f"{lot['set'].capitalize()} set ({margins}): {name} is in the support of the maximal lottery: {mix}"
      )
    elif lot["witness"]:
      out.append(
        f"{lot['set'].capitalize()} set ({margins}): {name} is out: the maximal lottery ({mix}) beats it "
        f"by an expected margin of {lot['margin']:.3f} > 0, and an agent a maximal lottery beats in "
        "expectation is in the support of none"
      )
    else:
      out.append(
        f"{lot['set'].capitalize()} set ({margins}): {name} is out (solver support; no margin witness "
        f"within rounding, margin {lot['margin']:.2e}): maximal lottery {mix}"
      )
  mcs = w.get("minimal_covering")
  if mcs is not None:
    out.append("")
    if mcs["in"]:
      out.append(f"Minimal covering set: {name} is in it: {', '.join(mcs['set'])}")
    elif mcs["coverer"] is not None:
      c = mcs["coverer"]
      beats = (
        ", ".join(f"{b['agent']} ({b['p']:.2f})" for b in c["also_beats"])
        or "nobody in the set to beat"
      )
      out.append(
        f"Minimal covering set ({', '.join(mcs['set'])}): {name} is out: {c['agent']}, a member, beats it "
        f"({c['p']:.2f}) and every member {name} beats: {beats}"
      )
    else:  # ties: the set is externally stable only under the Bordes covering it was computed with
      out.append(
        f"Minimal covering set ({', '.join(mcs['set'])}): {name} is out (no strict-majority coverer in the set; "
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
        f"by strict wins, {text}, and no chain of strict wins leads from {name} back to {chain[0]['agent']}"
      )
    else:
      out.append(f"Schwartz set ({shown}): {name} is out")
  return "\n".join(out)
