"""The per-agent core table behind ``ste-jax score`` and ``ste-jax demo`` (no I/O here).

:func:`score_tables` turns :class:`~ste_jax.data.Comparisons` into one :class:`ScoreTable` per
context (or one for all data): STE Top-Cycle and Uncovered-Set scores with bootstrap percentile
intervals and inclusion frequencies, the hard Top Cycle / Uncovered Set of the win-rate
tournament, and the win-rate, Bradley--Terry and Elo baselines. The ``format_*`` functions render
tables as text, Markdown, CSV and JSON-ready dicts.
"""

import csv
import dataclasses
import io
import math

import jax
import numpy as np

COLUMNS = (
    "agent",
    "tc_score",
    "tc_lo",
    "tc_hi",
    "p_in_tc",
    "uc_score",
    "uc_lo",
    "uc_hi",
    "p_in_uc",
    "hard_tc",
    "hard_uc",
    "win_rate",
    "bradley_terry",
    "elo",
    "games",
)
_BOOT = ("tc_lo", "tc_hi", "p_in_tc", "uc_lo", "uc_hi", "p_in_uc")


@dataclasses.dataclass(frozen=True)
class Settings:
  """What ``score`` computes: estimator, temperatures, bootstrap size and seed."""

  estimator: str = "posterior"
  tau: float = 0.01
  gamma: float | None = None
  num_replicas: int = 200
  seed: int = 0
  level: float = 0.95

  @property
  def gamma_value(self) -> float:
    return self.tau if self.gamma is None else self.gamma

  def conventions(self) -> str:
    """One line stating the data conventions and parameters (printed above every table)."""
    if self.estimator == "posterior":
      est = (
          "STE-posterior-edge (Jeffreys Beta(1/2,1/2) prior; unobserved or evenly split pair: D = 0 both ways), "
          f"exact max-min reachability, gamma = gamma_c = {self.gamma_value:g}"
      )
    else:
      est = (
          f"STE on the win-rate tournament, tau = {self.tau:g}, gamma = gamma_c = "
          f"{self.gamma_value:g}, exact max-min reachability"
      )
    boot = (
        f"{self.num_replicas} multinomial bootstrap replicas (seed {self.seed}), "
        f"{self.level:.0%} percentile CIs, P(in) = share of replicas with score > 1/2"
        if self.num_replicas
        else "no bootstrap"
    )
    return (
        "conventions: ties count 1/2 to each side; missing pairs P = 1/2; hard TC/UC = Smith set / "
        f"uncovered set of the strict majority (P > 1/2) of the win-rate tournament; estimator: {est}; "
        f"{boot}; BT = Bradley-Terry MLE (ties as half wins); Elo K = 32 in file order."
    )


@dataclasses.dataclass(frozen=True)
class ScoreTable:
  """One table: per-agent columns (arrays in agent order), the win-rate tournament and notes.

  Attributes:
    context: the context name, or ``None`` for all data pooled.
    agents: agent names (index order of the arrays).
    columns: ``COLUMNS`` -> ``(n,)`` NumPy arrays (``agent`` holds the names). Bootstrap columns
      are NaN without bootstrap; ``bradley_terry`` is NaN when BT is not identifiable.
    order: display order (best first).
    P: ``(n, n)`` win-rate tournament (ties 1/2, missing 1/2).
    games_matrix: ``(n, n)`` comparisons per pair.
    bt_identifiable: whether the BT maximum-likelihood estimate exists and is unique.
    bt_note: why BT is not identifiable (empty when it is).
    num_comparisons: number of comparisons (rows) behind the table.
  """

  context: str | None
  agents: tuple[str, ...]
  columns: dict
  order: np.ndarray
  P: np.ndarray
  games_matrix: np.ndarray
  bt_identifiable: bool
  bt_note: str
  num_comparisons: int

  @property
  def top_cycle(self) -> list[str]:
    return [self.agents[i] for i in self.order if self.columns["hard_tc"][i]]

  @property
  def uncovered_set(self) -> list[str]:
    return [self.agents[i] for i in self.order if self.columns["hard_uc"][i]]

  def records(self) -> list[dict]:
    """Rows in display order as dicts of plain Python values (NaN -> ``None``)."""
    out = []
    for rank, i in enumerate(self.order, start=1):
      row = {"rank": rank}
      for name in COLUMNS:
        v = self.columns[name][i]
        if isinstance(v, (np.bool_, bool)):
          v = bool(v)
        elif isinstance(v, (np.floating, float)):
          v = None if math.isnan(v) else float(v)
        elif isinstance(v, np.integer):
          v = int(v)
        else:
          v = str(v)
        row[name] = v
      row["bt_identifiable"] = self.bt_identifiable
      out.append(row)
    return out


def subset_context(comparisons, index: int):
  """The comparisons of context ``index``, re-indexed to the agents that play in it.

  Returns:
    A single-context :class:`~ste_jax.data.Comparisons` (agents in the original order).
  """
  from ste_jax.data import Comparisons

  keep = np.asarray(comparisons.context) == index
  a = np.asarray(comparisons.a)[keep]
  b = np.asarray(comparisons.b)[keep]
  present = np.unique(np.concatenate([a, b]))
  new_index = np.full(comparisons.num_agents, -1, dtype=np.int64)
  new_index[present] = np.arange(len(present))
  return Comparisons.from_arrays(
      new_index[a],
      new_index[b],
      np.asarray(comparisons.outcome)[keep],
      agents=[comparisons.agents[i] for i in present],
      weight=np.asarray(comparisons.weight)[keep],
  )


def _bootstrap(comparisons, score_fn, settings: Settings, key, progress):
  """``(R, n)`` replica Top-Cycle and Uncovered scores, in chunks so that progress can be shown."""
  from ste_jax.stats import bootstrap_scores

  total = settings.num_replicas
  chunk = min(total, 25)
  num_chunks = -(-total // chunk)
  batch = 1 if jax.default_backend() == "cpu" else None
  tc, uc = [], []
  for k in jax.random.split(key, num_chunks):
    s = bootstrap_scores(k, comparisons, score_fn, num_replicas=chunk, batch_size=batch)
    tc.append(np.asarray(s.top_cycle))
    uc.append(np.asarray(s.uncovered))
    if progress is not None:
      progress(chunk)
  return np.concatenate(tc)[:total], np.concatenate(uc)[:total]


def score_table(comparisons, settings: Settings, *, context=None, key=None, progress=None) -> ScoreTable:
  """The core table of one (single-context) set of comparisons.

  Args:
    comparisons: a :class:`~ste_jax.data.Comparisons` (contexts are pooled).
    settings: the :class:`Settings`.
    context: the context name to record on the table.
    key: PRNG key for the bootstrap (default ``jax.random.key(settings.seed)``).
    progress: optional callable ``progress(num_replicas_done)``.

  Returns:
    A :class:`ScoreTable`.
  """
  import jax.numpy as jnp

  from ste_jax import exact
  from ste_jax.data import pair_counts, win_rate_tournament
  from ste_jax.stats import bradley_terry, elo, inclusion_frequency, percentile_intervals, ste_score_fn, win_rate

  n = comparisons.num_agents
  counts = pair_counts(comparisons)
  P = win_rate_tournament(counts)
  score_fn = ste_score_fn(estimator=settings.estimator, tau=settings.tau, gamma=settings.gamma)
  ste = score_fn(comparisons)
  cols = {
      "agent": np.array(comparisons.agents, dtype=object),
      "tc_score": np.asarray(ste.top_cycle, dtype=np.float64),
      "uc_score": np.asarray(ste.uncovered, dtype=np.float64),
      "hard_tc": np.asarray(exact.top_cycle(P)),
      "hard_uc": np.asarray(exact.uncovered_set(P)),
      "win_rate": np.asarray(win_rate(counts.wins).rates, dtype=np.float64),
      "elo": np.asarray(
          elo(comparisons.a, comparisons.b, comparisons.outcome, num_agents=n, weight=comparisons.weight),
          dtype=np.float64,
      ),
      "games": np.asarray(jnp.sum(counts.totals, axis=-1), dtype=np.float64),
  }
  if settings.num_replicas:
    key = jax.random.key(settings.seed) if key is None else key
    tc, uc = _bootstrap(comparisons, score_fn, settings, key, progress)
    tc_ci = percentile_intervals(tc, level=settings.level)
    uc_ci = percentile_intervals(uc, level=settings.level)
    cols.update(
        tc_lo=np.asarray(tc_ci.lower, dtype=np.float64),
        tc_hi=np.asarray(tc_ci.upper, dtype=np.float64),
        p_in_tc=np.asarray(inclusion_frequency(tc, threshold=0.5), dtype=np.float64),
        uc_lo=np.asarray(uc_ci.lower, dtype=np.float64),
        uc_hi=np.asarray(uc_ci.upper, dtype=np.float64),
        p_in_uc=np.asarray(inclusion_frequency(uc, threshold=0.5), dtype=np.float64),
    )
  else:
    cols.update({name: np.full(n, np.nan) for name in _BOOT})
  bt = bradley_terry(counts.wins)
  identifiable = bool(bt.identifiable)
  if identifiable:
    cols["bradley_terry"] = np.asarray(bt.scores, dtype=np.float64)
    note = ""
  else:
    cols["bradley_terry"] = np.full(n, np.nan)
    why = []
    if not bool(bt.connected):
      why.append("the comparison graph is disconnected")
    if bool(bt.separable):
      why.append("the data are separable (a group of agents never lost to the others)")
    note = (
        "Bradley-Terry: not identifiable: " + " and ".join(why or ["Zermelo's condition fails"])
        + "; the maximum-likelihood strengths do not exist, so no BT scores are shown."
    )
  # Soft scores are in [0, 1] up to rounding; keep -1e-9 from printing as -0.000.
  for name in ("tc_score", "uc_score", *_BOOT):
    cols[name] = np.clip(cols[name], 0.0, 1.0) + 0.0  # + 0.0: no -0.0
  order = np.lexsort((-cols["win_rate"], -cols["uc_score"], -cols["tc_score"]))
  return ScoreTable(
      context=context,
      agents=tuple(comparisons.agents),
      columns=cols,
      order=order,
      P=np.asarray(P, dtype=np.float64),
      games_matrix=np.asarray(counts.totals, dtype=np.float64),
      bt_identifiable=identifiable,
      bt_note=note,
      num_comparisons=comparisons.num_comparisons,
  )


def score_tables(comparisons, settings: Settings, *, by_context: bool = False, progress=None) -> list[ScoreTable]:
  """One :class:`ScoreTable` for all data, or one per context (agents that play in it only).

  Args:
    comparisons: a :class:`~ste_jax.data.Comparisons`.
    settings: the :class:`Settings`.
    by_context: one table per context (the paper's per-category table).
    progress: optional callable ``progress(num_replicas_done)``.
  """
  key = jax.random.key(settings.seed)
  if not by_context:
    return [score_table(comparisons, settings, key=key, progress=progress)]
  keys = jax.random.split(key, comparisons.num_contexts)
  tables = []
  for k, name in enumerate(comparisons.contexts):
    sub = subset_context(comparisons, k)
    if sub.num_comparisons == 0:
      continue
    tables.append(score_table(sub, settings, context=name, key=keys[k], progress=progress))
  return tables


# --------------------------------------------------------------------------------------------
# Rendering


def _f(x, fmt: str) -> str:
  return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _ci(row, lo: str, hi: str) -> str:
  if row[lo] is None:
    return ""
  return f"[{row[lo]:.3f}, {row[hi]:.3f}]"


def _display_rows(table: ScoreTable) -> list[list[str]]:
  rows = []
  for r in table.records():
    bt = "n/i" if not table.bt_identifiable else _f(r["bradley_terry"], "+.2f")
    rows.append([
        str(r["rank"]),
        r["agent"],
        f"{r['tc_score']:.3f}",
        _ci(r, "tc_lo", "tc_hi"),
        _f(r["p_in_tc"], ".2f"),
        f"{r['uc_score']:.3f}",
        _ci(r, "uc_lo", "uc_hi"),
        _f(r["p_in_uc"], ".2f"),
        "yes" if r["hard_tc"] else "-",
        "yes" if r["hard_uc"] else "-",
        f"{r['win_rate']:.3f}",
        bt,
        f"{r['elo']:.0f}",
        f"{r['games']:g}",
    ])
  return rows


HEADER = ("#", "agent", "TC", "TC 95% CI", "P(TC)", "UC", "UC 95% CI", "P(UC)", "hardTC", "hardUC",
          "winrate", "BT", "Elo", "games")


def _title(table: ScoreTable) -> str:
  name = "all data" if table.context is None else f"context {table.context!r}"
  return f"{name}: {len(table.agents)} agents, {table.num_comparisons} comparisons"


def _footer(table: ScoreTable) -> list[str]:
  lines = [
      f"hard Top Cycle: {{{', '.join(table.top_cycle)}}}",
      f"hard Uncovered Set: {{{', '.join(table.uncovered_set)}}}",
  ]
  if table.bt_note:
    lines.append(table.bt_note.replace("no BT scores are shown", "BT shows n/i (not identifiable)"))
  return lines


def format_text(tables, settings: Settings) -> str:
  """Fixed-width tables, one per context, under the conventions line."""
  out = [settings.conventions()]
  for table in tables:
    rows = _display_rows(table)
    header = list(HEADER)
    if not settings.num_replicas:
      drop = {3, 4, 6, 7}
      header = [h for j, h in enumerate(header) if j not in drop]
      rows = [[c for j, c in enumerate(r) if j not in drop] for r in rows]
    widths = [max(len(header[j]), *(len(r[j]) for r in rows)) for j in range(len(header))]
    left = {1}
    fmt = lambda cells: "  ".join(c.ljust(w) if j in left else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths)))
    out += ["", _title(table), fmt(header), "-" * len(fmt(header))]
    out += [fmt(r) for r in rows]
    out += _footer(table)
  return "\n".join(out)


def format_markdown(tables, settings: Settings) -> str:
  """GitHub-flavoured Markdown tables, one per context."""
  out = [f"_{settings.conventions()}_"]
  for table in tables:
    rows = _display_rows(table)
    out += ["", f"### {_title(table)}", "", "| " + " | ".join(HEADER) + " |",
            "|" + "|".join("---" if j == 1 else "---:" for j in range(len(HEADER))) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    out += [""] + [f"- {line}" for line in _footer(table)]
  return "\n".join(out)


CSV_COLUMNS = ("context", "rank", *COLUMNS, "bt_identifiable")


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
  writer.writerow(CSV_COLUMNS)
  for table in tables:
    for r in table.records():
      r = dict(r, context="all" if table.context is None else table.context)
      writer.writerow([_csv_cell(r[c]) for c in CSV_COLUMNS])
  return buf.getvalue().rstrip("\n")


def to_json(tables, settings: Settings, load=None) -> dict:
  """A JSON-ready dict: conventions, settings, load report and the tables (NaN -> ``null``)."""
  return {
      "conventions": settings.conventions(),
      "settings": dataclasses.asdict(settings) | {"gamma": settings.gamma_value},
      "load": load,
      "tables": [
          {
              "context": t.context,
              "num_agents": len(t.agents),
              "num_comparisons": t.num_comparisons,
              "top_cycle": t.top_cycle,
              "uncovered_set": t.uncovered_set,
              "bt_identifiable": t.bt_identifiable,
              "bt_note": t.bt_note or None,
              "rows": t.records(),
          }
          for t in tables
      ],
  }


# --------------------------------------------------------------------------------------------
# Witnesses (``ste-jax explain``)


def witness_report(P, games, agents, index: int) -> dict:
  """Why agent ``index`` is or is not in the hard Top Cycle and Uncovered Set of ``P``.

  Args:
    P: ``(n, n)`` win-rate tournament.
    games: ``(n, n)`` comparisons per pair.
    agents: the agent names.
    index: the agent to explain.

  Returns:
    A JSON-ready dict: ``in_top_cycle``, ``in_uncovered_set``; ``chains`` (root-to-leaf paths of
    the majority-win tree from the agent, each a list of steps ``{"agent", "p", "games", "tie"}``,
    the first step being the agent itself), ``unreached`` (agents no chain reaches, Top-Cycle
    members first); ``coverers`` (each with the agents it beats that the explained agent beats)
    and ``refutations`` (for each agent that beats it without covering it, an agent it beats that
    the other does not beat).
  """
  from ste_jax import exact

  P = np.asarray(P, dtype=np.float64)
  games = np.asarray(games, dtype=np.float64)
  n = P.shape[0]
  hard_tc = np.asarray(exact.top_cycle(P))
  hard_uc = np.asarray(exact.uncovered_set(P))
  parent, via_tie = exact.majority_reach_tree(P, index)
  reached = exact.reached_agents(parent, index)
  is_parent = np.zeros(n, dtype=bool)
  is_parent[parent[parent >= 0]] = True
  leaves = [v for v in range(n) if reached[v] and not is_parent[v] and v != index]

  def step(u, v):
    return {"agent": agents[v], "p": float(P[u, v]), "games": float(games[u, v]), "tie": bool(via_tie[v])}

  chains = []
  for leaf in sorted(leaves, key=lambda v: [agents[u] for u in exact.witness_path(parent, index, v)]):
    path = exact.witness_path(parent, index, leaf)
    chains.append([{"agent": agents[index]}] + [step(u, v) for u, v in zip(path, path[1:])])
  unreached = sorted(np.flatnonzero(~reached), key=lambda v: (not hard_tc[v], agents[v]))
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  beaten = np.flatnonzero(strict[index])
  cov = exact.coverers(P, index)
  refute = exact.cover_refutations(P, index)
  return {
      "agent": agents[index],
      "in_top_cycle": bool(hard_tc[index]),
      "in_uncovered_set": bool(hard_uc[index]),
      "top_cycle": [agents[i] for i in np.flatnonzero(hard_tc)],
      "uncovered_set": [agents[i] for i in np.flatnonzero(hard_uc)],
      "chains": chains,
      "unreached": [agents[v] for v in unreached],
      "beats": [agents[b] for b in beaten],
      "coverers": [
          {"agent": agents[c], "p": float(P[c, index]),
           "also_beats": [{"agent": agents[b], "p": float(P[c, b])} for b in beaten]}
          for c in np.flatnonzero(cov)
      ],
      "refutations": [
          {"agent": agents[c], "p": float(P[c, index]), "misses": agents[refute[c]],
           "p_agent": float(P[index, refute[c]]), "p_other": float(P[c, refute[c]])}
          for c in np.flatnonzero(refute >= 0)
      ],
  }


def format_witnesses(w: dict) -> str:
  """Human-readable witnesses: chains ``a > b (0.62) > c (0.55)``, coverers, refutations."""
  name = w["agent"]
  yn = lambda b: "yes" if b else "no"
  out = [f"{name}: in the Top Cycle: {yn(w['in_top_cycle'])}; in the Uncovered Set: "
         f"{yn(w['in_uncovered_set'])}", ""]
  if w["in_top_cycle"]:
    out.append(f"Top Cycle witness: chains of majority wins from {name} reach every other agent "
               "('A > B (p)': A beat B in a share p of their comparisons; '=' marks a tie, p = 0.50):")
  else:
    out.append(f"Top Cycle: {name} fails to reach {w['unreached'][0]!s} (a Top Cycle member) by any chain "
               "of majority wins or ties; every Top Cycle member beats every agent it reaches.")
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
    out.append(f"Uncovered Set: {name} is covered by {', '.join(c['agent'] for c in w['coverers'])}:")
    for c in w["coverers"]:
      beats = ", ".join(f"{b['agent']} ({b['p']:.2f})" for b in c["also_beats"]) or "nobody else to beat"
      out.append(f"  covered by {c['agent']}: beats {name} ({c['p']:.2f}) and everyone {name} beats: {beats}")
  else:
    out.append(f"Uncovered Set witness: no agent covers {name}; each agent that beats it misses one of its wins:")
    if not w["refutations"]:
      out.append(f"  (no agent beats {name} by a strict majority)")
    for r in w["refutations"]:
      out.append(f"  {r['agent']} beats {name} ({r['p']:.2f}) but not {r['misses']} "
                 f"({name} > {r['misses']} {r['p_agent']:.2f}; {r['agent']} vs {r['misses']} {r['p_other']:.2f})")
  return "\n".join(out)
