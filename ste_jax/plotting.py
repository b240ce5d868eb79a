"""Figures for core reports: tournament graph, ordered P heatmap, score bars with bootstrap CIs.

matplotlib is imported inside the functions (install it with ``pip install ste_jax[plot]``).
Figures are built as ``matplotlib.figure.Figure`` objects with an Agg canvas, never through
``pyplot``: no global backend is switched, no window opens, and the functions work headless. In
a notebook, display a returned figure by leaving it as the cell's last expression.
"""

import math
import os
import textwrap

import numpy as np

from ste_jax._errors import OptionError

CORE_COLOR = "#c0392b"
OTHER_COLOR = "#7f8c8d"


def _new_figure(width: float, height: float):
  """A ``Figure`` with an Agg canvas (no pyplot, no global backend change)."""
  try:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
  except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("plotting needs matplotlib: pip install 'ste_jax[plot]'") from e
  fig = Figure(figsize=(width, height), layout="constrained")
  FigureCanvasAgg(fig)
  return fig


def _as_square(P) -> np.ndarray:
  P = np.asarray(P, dtype=np.float64)
  if P.ndim != 2 or P.shape[0] != P.shape[1]:
    raise ValueError(f"P must have shape (n, n); got {P.shape}.")
  return P


def _order(scores, n: int, order=None) -> np.ndarray:
  if order is not None:
    return np.asarray(order, dtype=np.int64)
  if scores is None:
    return np.arange(n)
  return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def _label_size(n: int) -> float:
  return float(max(4.0, min(9.0, 220.0 / max(n, 1))))


# Largest number of edges of one kind (core / other) drawn with arrowheads.
MAX_ARROWS = 120


def _draw_edges(ax, xy, src, dst, *, color, lw: float, alpha: float, zorder: int) -> None:
  """Edges ``src[i] -> dst[i]`` between points ``xy``: arrows, or plain lines if there are many."""
  from matplotlib.collections import LineCollection

  if len(src) > MAX_ARROWS:
    segs = np.stack([xy[src], xy[dst]], axis=1)
    ax.add_collection(
      LineCollection(
        segs, colors=color, linewidths=min(lw, 0.6), alpha=min(alpha, 0.3), zorder=zorder
      )
    )
    return
  style = {
    "arrowstyle": "-|>",
    "color": color,
    "lw": lw,
    "alpha": alpha,
    "shrinkA": 9,
    "shrinkB": 9,
    "mutation_scale": 8 + 3 * lw,
  }
  for s, d in zip(src, dst):
    ax.annotate("", xy=xy[d], xytext=xy[s], zorder=zorder, arrowprops=style)


def plot_tournament(P, agents, core, *, ax=None, scores=None, order=None, title: str | None = None):
  """The majority tournament on a circle, core members highlighted, core edges drawn as arrows.

  Every strict majority edge (``P[a, b] > 1/2``) is an arrow from winner to loser; the edges among
  core members (the ones that close the core's cycles) are red, the rest faint grey. A group of
  more than ``MAX_ARROWS`` edges is drawn as plain lines (arrowheads would hide the graph). Agents
  are placed on a circle in ``scores`` order (best at the top, clockwise), or in index order.

  Args:
    P: ``(n, n)`` tournament.
    agents: ``n`` agent names.
    core: Boolean ``(n,)`` core mask (e.g. the hard Top Cycle).
    ax: optional matplotlib ``Axes`` to draw on; default a new figure.
    scores: optional ``(n,)`` scores setting the order around the circle.
    order: optional explicit agent order (overrides ``scores``).
    title: optional title.

  Returns:
    The matplotlib ``Figure``.
  """
  P = _as_square(P)
  n = P.shape[0]
  core = np.asarray(core, dtype=bool)
  if ax is None:
    size = float(min(12.0, max(5.0, 0.12 * n + 4.0)))
    ax = _new_figure(size, size).add_subplot()
  order = _order(scores, n, order)
  angle = np.empty(n)
  angle[order] = math.pi / 2 - 2 * math.pi * np.arange(n) / max(n, 1)
  xy = np.stack([np.cos(angle), np.sin(angle)], axis=1)
  strict = (P > 0.5) & ~np.eye(n, dtype=bool)
  src, dst = np.nonzero(strict)
  inner = core[src] & core[dst]
  _draw_edges(ax, xy, src[~inner], dst[~inner], color=OTHER_COLOR, lw=0.7, alpha=0.35, zorder=1)
  _draw_edges(ax, xy, src[inner], dst[inner], color=CORE_COLOR, lw=1.4, alpha=1.0, zorder=2)
  ax.scatter(xy[~core, 0], xy[~core, 1], s=60, color=OTHER_COLOR, zorder=3, label="other agents")
  ax.scatter(xy[core, 0], xy[core, 1], s=110, color=CORE_COLOR, zorder=4, label="core")
  fs = _label_size(n)
  for i in range(n):
    ax.text(
      1.12 * xy[i, 0],
      1.12 * xy[i, 1],
      str(agents[i]),
      fontsize=fs,
      ha="left" if xy[i, 0] > 0.05 else "right" if xy[i, 0] < -0.05 else "center",
      va="center",
      color=CORE_COLOR if core[i] else "black",
    )
  ax.set_xlim(-1.9, 1.9)
  ax.set_ylim(-1.5, 1.5)
  ax.set_aspect("equal")
  ax.axis("off")
  ax.legend(loc="lower left", fontsize=7, frameon=False)
  ax.set_title(title or "majority tournament (red: core and its edges)", fontsize=10)
  return ax.figure


def plot_heatmap(
  P, agents, *, scores=None, order=None, ax=None, title: str | None = None, unobserved=None
):
  """The tournament matrix ``P[a, b]`` as a heatmap, rows and columns ordered by ``scores``.

  Args:
    P: ``(n, n)`` tournament.
    agents: ``n`` agent names.
    scores: optional ``(n,)`` ordering scores (best first); default index order.
    order: optional explicit agent order (overrides ``scores``).
    ax: optional ``Axes``.
    title: optional title.
    unobserved: optional Boolean ``(n, n)`` mask of the pairs never compared: their cells get a
      black dot (their ``P`` is imputed, not observed).

  Returns:
    The matplotlib ``Figure``.
  """
  P = _as_square(P)
  n = P.shape[0]
  if ax is None:
    size = float(min(14.0, max(4.5, 0.18 * n + 3.0)))
    ax = _new_figure(size + 1.0, size).add_subplot()
  order = _order(scores, n, order)
  image = ax.imshow(
    P[np.ix_(order, order)], cmap="RdBu_r", vmin=0.0, vmax=1.0, interpolation="nearest"
  )
  if unobserved is not None:
    rows, cols = np.nonzero(
      np.asarray(unobserved, dtype=bool)[np.ix_(order, order)] & ~np.eye(n, dtype=bool)
    )
    ax.scatter(
      cols,
      rows,
      s=max(0.5, min(6.0, 900.0 / max(n, 1) ** 2 * 6.0)),
      color="black",
      marker=".",
      linewidths=0,
      label="never compared",
    )
  names = [str(agents[i]) for i in order]
  fs = _label_size(n)
  ax.set_xticks(np.arange(n), names, rotation=90, fontsize=fs)
  ax.set_yticks(np.arange(n), names, fontsize=fs)
  ax.set_xlabel("b")
  ax.set_ylabel("a")
  ax.figure.colorbar(image, ax=ax, shrink=0.8, label="P[a, b] (a beats b)")
  ax.set_title(title or "win-rate tournament, ordered by score", fontsize=10)
  return ax.figure


def plot_score_bars(
  agents,
  scores,
  *,
  lower=None,
  upper=None,
  core=None,
  order=None,
  ax=None,
  label: str = "score",
  title: str | None = None,
  markers=None,
  marker_label: str = "marker",
):
  """Horizontal bars of ``scores`` (best at the top) with bootstrap percentile intervals.

  Args:
    agents: ``n`` agent names.
    scores: ``(n,)`` scores.
    lower, upper: optional ``(n,)`` interval bounds (NaN: no interval).
    core: optional Boolean ``(n,)`` mask of agents to colour as core members.
    order: optional display order, top to bottom (default: by decreasing score).
    ax: optional ``Axes``.
    label: the x-axis label.
    title: optional title.
    markers: optional ``(n,)`` values in ``[0, 1]`` drawn as black diamonds on each agent's row
      (NaN: none), e.g. the share of bootstrap replicas whose core holds the agent.
    marker_label: the legend entry of ``markers``.

  Returns:
    The matplotlib ``Figure``.
  """
  scores = np.asarray(scores, dtype=np.float64)
  n = scores.shape[0]
  if ax is None:
    ax = _new_figure(6.0, float(min(16.0, max(3.0, 0.22 * n + 1.5)))).add_subplot()
  order = _order(scores, n, order)
  y = np.arange(n)
  core = np.zeros(n, dtype=bool) if core is None else np.asarray(core, dtype=bool)
  colors = [CORE_COLOR if core[i] else OTHER_COLOR for i in order]
  ax.barh(y, scores[order], color=colors, height=0.7)
  if lower is not None and upper is not None:
    lo = np.asarray(lower, dtype=np.float64)[order]
    hi = np.asarray(upper, dtype=np.float64)[order]
    ok = np.isfinite(lo) & np.isfinite(hi)
    if ok.any():
      s = scores[order][ok]
      err = np.stack([np.maximum(s - lo[ok], 0.0), np.maximum(hi[ok] - s, 0.0)])
      ax.errorbar(s, y[ok], xerr=err, fmt="none", ecolor="black", elinewidth=1.0, capsize=2.5)
  if markers is not None:
    m = np.asarray(markers, dtype=np.float64)[order]
    ok = np.isfinite(m)
    if ok.any():
      ax.scatter(m[ok], y[ok], marker="D", s=18, color="black", zorder=3, label=marker_label)
      ax.legend(loc="lower right", fontsize=7)
  ax.set_yticks(y, [str(agents[i]) for i in order], fontsize=_label_size(n))
  ax.invert_yaxis()
  ax.set_xlim(0.0, 1.05)
  ax.axvline(0.5, color="black", lw=0.6, ls=":")
  ax.set_xlabel(label)
  ax.set_title(title or label, fontsize=10)
  return ax.figure


def figure_formats() -> tuple[str, ...]:
  """The file formats (suffixes without the dot) matplotlib can write, sorted.

  They are the keys of ``FigureCanvasBase.get_supported_filetypes()``.

  Raises:
    ImportError: without matplotlib.

  Example:
    >>> {"png", "pdf", "svg"} <= set(figure_formats())
    True
  """
  try:
    from matplotlib.backend_bases import FigureCanvasBase
  except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("plotting needs matplotlib: pip install 'ste_jax[plot]'") from e
  return tuple(sorted(FigureCanvasBase.get_supported_filetypes()))


def check_figure_path(path: str | os.PathLike, name: str = "path") -> str:
  """``path`` as a string, once its suffix names a format matplotlib writes (none: PNG).

  Args:
    path: the figure's file name; its suffix (case-insensitive) chooses the format.
    name: the argument or option named by the error (the CLI passes ``"--plot"``).

  Returns:
    ``os.fspath(path)``.

  Raises:
    OptionError: an unsupported suffix; the message lists the supported ones.
    ImportError: without matplotlib.

  Example:
    >>> check_figure_path("report.txt")
    Traceback (most recent call last):
    ...
    ste_jax._errors.OptionError: path: cannot write a figure as '.txt' (report.txt); ...
  """
  path = os.fspath(path)
  suffix = os.path.splitext(path)[1].lower()
  formats = figure_formats()
  if suffix and suffix[1:] not in formats:
    raise OptionError(
      f"{name}: cannot write a figure as {suffix!r} ({path}); supported suffixes: "
      f"{', '.join('.' + f for f in formats)}"
    )
  return path


def save_figure(fig, path: str | os.PathLike) -> str:
  """Writes ``fig`` to ``path`` (format from the suffix, 150 dpi) and returns the path.

  Raises:
    OptionError: a suffix matplotlib cannot write (:func:`check_figure_path`).
  """
  path = check_figure_path(path)
  fig.savefig(path, dpi=150)
  return path


REPORT_ROWS = 40
"""Rows of a score table that :func:`report_figure` draws by default (the first, in table order)."""


def report_figure(table, *, title: str | None = None, top: int | None = REPORT_ROWS):
  """The three panels of a score table's first rows: tournament graph, heatmap, score bars.

  Every panel shows the table's first ``top`` rows in table order (``table.order``), so that a
  league of hundreds of agents gives a readable figure of its top. The heatmap is the table's
  tournament ``P`` among them with a dot on each pair never compared (its ``P`` is imputed by the
  estimator, or 1/2); the bars are the soft Top-Cycle scores with their bootstrap intervals and,
  with replicas, ``P(TC)`` as diamonds (on sparse data they can disagree: read ``P(TC)`` first).

  Args:
    table: a score table as built by ``ste-jax score`` (:class:`~ste_jax.evaluate.CoreTable`):
      it needs ``agents``, ``order``, ``P``, ``games_matrix`` and ``columns`` with ``tc_score``,
      ``p_tc``, ``hard_tc``, ``tc_lo``/``tc_hi``.
    title: optional figure title. A :class:`~ste_jax.evaluate.CoreTable`'s answer about its top
      set (the first line of :meth:`~ste_jax.evaluate.CoreTable.answer`) is written under it.
    top: how many rows to draw (``None``: all); at least 1.

  Returns:
    The matplotlib ``Figure``.
  """
  if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
    raise ValueError(f"top must be a positive integer or None, got {top!r}.")
  n = len(table.agents)
  rows = np.asarray(table.order)[:top]
  k = rows.size
  sub = np.ix_(rows, rows)
  agents = [table.agents[i] for i in rows]
  c = {
    name: np.asarray(table.columns[name])[rows]
    for name in ("tc_score", "tc_lo", "tc_hi", "p_tc", "hard_tc")
  }
  unobserved = np.asarray(table.games_matrix)[sub] == 0
  first = "" if k == n else f"first {k} of {n} rows; "
  side = float(min(11.0, max(4.5, 0.14 * k + 3.5)))
  fig = _new_figure(3 * side, side + 0.5)
  axes = fig.subplots(1, 3, width_ratios=[1.0, 1.15, 0.9])
  own = np.arange(k)
  plot_tournament(
    table.P[sub],
    agents,
    c["hard_tc"],
    order=own,
    ax=axes[0],
    title=f"majority tournament ({first}table order); red: hard Top Cycle",
  )
  plot_heatmap(
    table.P[sub],
    agents,
    order=own,
    ax=axes[1],
    unobserved=unobserved,
    title=f"the table's tournament P ({table.estimator})"
    + ("; dot: never compared" if unobserved.any() else ""),
  )
  plot_score_bars(
    agents,
    c["tc_score"],
    lower=c["tc_lo"],
    upper=c["tc_hi"],
    core=c["hard_tc"],
    order=own,
    ax=axes[2],
    label="STE Top-Cycle score"
    + (f" ({table.settings.confidence:.0%} bootstrap CI)" if table.soft_intervals else ""),
    title="Top-Cycle scores",
    markers=c["p_tc"],
    marker_label="P(TC): share of replicas",
  )
  heading = [title if k == n else f"{title} ({first.rstrip('; ')})"] if title else []
  if callable(
    getattr(table, "answer", None)
  ):  # a CoreTable: its answer about the top set, under the title
    heading += textwrap.wrap(table.answer().lines()[0], width=int(3 * side * 12))
  if heading:
    fig.suptitle("\n".join(heading), fontsize=11)
  return fig


def save_report_figure(
  table, path, *, title: str | None = None, top: int | None = REPORT_ROWS
) -> str:
  """Writes :func:`report_figure` of ``table`` (its first ``top`` rows) to ``path`` (PNG, PDF, SVG).

  Returns:
    The path written.

  Raises:
    OptionError: a suffix matplotlib cannot write (:func:`check_figure_path`), before drawing.
  """
  check_figure_path(path)
  return save_figure(report_figure(table, title=title, top=top), path)
