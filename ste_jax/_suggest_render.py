"""Text, CSV and JSON output of ``ste-jax suggest`` (the pairs to compare next, with reasons in
words)."""

import csv
import io
import json

import numpy as np

CONCEPTS = {"top_cycle": "Top Cycle", "uncovered": "Uncovered Set"}
CSV_COLUMNS = (
  "rank",
  "agent_a",
  "agent_b",
  "probability",
  "score",
  "games",
  "p_a_beats_b",
  "decides",
  "reason",
  "edge_level",
)


def _names(names, limit: int = 3) -> str:
  names = list(names)
  if len(names) <= limit:
    return ", ".join(names)
  return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def suggestion_rows(
  comparisons, suggestion, *, target: str, plausible: str = "plausible tournaments"
) -> list[dict]:
  """One dict per suggested pair: names, probability, score, games so far, ``Pr(a beats b)``,
  reason.

  ``plausible`` names the tournaments behind the relevance term in the reasons."""
  from ste_jax.data import pair_counts

  agents = list(comparisons.agents)
  beats = np.asarray(suggestion.beats)
  games = np.asarray(pair_counts(comparisons).totals)
  verdicts = suggestion.verdicts()
  concept = CONCEPTS[target]
  certified = bool(suggestion.certified)
  rows = []
  for rank, ((a, b), p, score, decides) in enumerate(
    zip(
      np.asarray(suggestion.pairs),
      np.asarray(suggestion.probability),
      np.asarray(suggestion.score),
      np.asarray(suggestion.decides),
    ),
    start=1,
  ):
    decided = [agents[x] for x in np.flatnonzero(decides)]
    open_ends = [agents[x] for x in (a, b) if verdicts[x] == "undetermined"]
    if certified:
      reason = "cannot change any verdict: they are all certified"
    elif decided:
      reason = (
        f"decides whether {_names(decided)} {'is' if len(decided) == 1 else 'are'} in the {concept}"
      )
    elif score > 0:
      who = _names(open_ends) if open_ends else f"{agents[a]}, {agents[b]}"
      reason = (
        f"needed to certify {who}: in {min(float(score), 1.0):.0%} of {plausible} "
        f"{agents[a]} or {agents[b]} is in the {concept}"
      )
    else:
      reason = "cannot change a verdict now (fewer useful pairs than requested)"
    rows.append(
      {
        "rank": rank,
        "agent_a": agents[a],
        "agent_b": agents[b],
        "probability": float(p),
        "score": float(score),
        "games": float(games[a, b]),
        "p_a_beats_b": float(beats[a, b]),
        "decides": decided,
        "reason": reason,
      }
    )
  return rows


def level_note(confidence: float, correction: str, n: int, level: float) -> str:
  """One sentence: which edge level the verdicts used, and why."""
  num_pairs = n * (n - 1) // 2
  if correction == "bonferroni":
    return (
      f"edges are sure at posterior probability >= {level:.6g} = 1 - "
      f"{1 - confidence:g}/{num_pairs} pairs "
      "(Bonferroni: adaptive comparisons stop once a pair looks sure, so the union bound over all "
      "pairs "
      f"keeps the whole core right with probability about {confidence:g}; `ste-jax score` verdicts "
      "use "
      f"the per-pair level {confidence:g}, not corrected)"
    )
  return (
    f"edges are sure at posterior probability >= {level:.6g} per pair (--correction none, as in "
    "`ste-jax score`; with adaptive comparisons the whole core is right less often than "
    f"{confidence:g})"
  )


def render_suggestions(
  comparisons,
  *,
  k: int,
  target: str,
  confidence: float,
  seed: int,
  output: str,
  correction: str = "bonferroni",
  plausible_cores=None,
) -> str:
  """The ``suggest`` report of ``comparisons`` as a table, CSV or JSON string.

  ``plausible_cores``: optional ``(R, n)`` cores of the model's bootstrap replicas behind the
  relevance term (:func:`~ste_jax.evaluate.suggest_pairs`); ``None``: posterior draws."""
  import jax

  from ste_jax.evaluate import suggest_pairs

  s = suggest_pairs(
    jax.random.key(seed),
    comparisons,
    k=k,
    target=target,
    confidence=confidence,
    correction=correction,
    plausible_cores=plausible_cores,
  )
  source = "plausible tournaments" if plausible_cores is None else "the model's bootstrap replicas"
  rows = suggestion_rows(comparisons, s, target=target, plausible=source)
  verdicts = dict(zip(comparisons.agents, s.verdicts().tolist()))
  certified = bool(s.certified)
  concept = CONCEPTS[target]
  level = float(s.edge_level)
  note = level_note(confidence, correction, comparisons.num_agents, level)
  if output == "json":
    return json.dumps(
      {
        "target": target,
        "confidence": confidence,
        "correction": correction,
        "edge_level": level,
        "plausible": "posterior" if plausible_cores is None else "model",
        "edge_level_note": note,
        "certified": certified,
        "verdicts": verdicts,
        "pairs": rows,
      },
      indent=1,
    )
  if output == "csv":
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
      writer.writerow(dict(row, decides=";".join(row["decides"]), edge_level=f"{level:.8g}"))
    return buf.getvalue().rstrip("\n")
  by_verdict = {
    v: [a for a, x in verdicts.items() if x == v] for v in ("in", "out", "undetermined")
  }
  scope = "whole core" if correction == "bonferroni" else "per pair"
  lines = [
    f"{concept} verdicts at confidence {confidence:g} ({scope}): "
    + (
      "certified (no comparison can change them)"
      if certified
      else f"not certified ({len(by_verdict['undetermined'])} undetermined)"
    ),
    f"  {note}",
    f"  in: {', '.join(by_verdict['in']) or '-'}",
    f"  out: {_names(by_verdict['out'], 12) or '-'}",
    f"  undetermined: {_names(by_verdict['undetermined'], 12) or '-'}",
    f"next {len(rows)} pairs to compare (probability = chance the randomized draw picked the "
    "pair):",
  ]
  from ste_jax._render import WIDTH, short_names, wrap, wrap_lines

  names = short_names([x for r in rows for x in (r["agent_a"], r["agent_b"])], 24)
  pairs = [f"{names[r['agent_a']]} vs {names[r['agent_b']]}" for r in rows]
  width = max(len(p) for p in pairs)
  lines = wrap_lines(lines, indent="    ")
  lines.append(
    f"{'#':>3}  {'pair':<{width}}  {'prob':>5}  {'score':>5}  {'games':>5}  {'P(a>b)':>6}  reason"
  )
  for r, pair in zip(rows, pairs):
    head = (
      f"{r['rank']:>3}  {pair:<{width}}  {r['probability']:5.2f}  {r['score']:5.2f}  "
      f"{r['games']:5.0f}  {r['p_a_beats_b']:6.2f}  "
    )
    room = WIDTH - len(head)
    if room >= 40:  # the reason wrapped in its column
      parts = wrap(r["reason"], indent="", width=room)
      lines += [head + parts[0]] + [" " * len(head) + x for x in parts[1:]]
    else:  # the reason on the lines below
      lines += [head.rstrip()] + wrap("      " + r["reason"], indent="  ")
  return "\n".join(lines)
