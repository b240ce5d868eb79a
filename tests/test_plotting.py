"""Figures of :mod:`ste_jax.plotting`: what they draw (order, directions, values) and that they
write a PNG."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from ste_jax import plotting  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _tournament():
  # 0 > 1 > 2 > 0 is the core; both beat 3 and 4; 3 > 4.
  P = np.full((5, 5), 0.5)
  for a, b, p in [(0, 1, 0.7), (1, 2, 0.65), (2, 0, 0.6), (3, 4, 0.55)] + [
    (c, o, 0.8) for c in range(3) for o in (3, 4)
  ]:
    P[a, b], P[b, a] = p, 1 - p
  agents = ["a0", "a1", "a2", "o3", "o4"]
  core = np.array([True, True, True, False, False])
  return P, agents, core


def _png(fig, path):
  plotting.save_figure(fig, path)
  data = path.read_bytes()
  assert data[:8] == PNG and len(data) > 2000


def test_tournament_graph(tmp_path):
  P, agents, core = _tournament()
  _png(plotting.plot_tournament(P, agents, core, scores=np.arange(5.0)[::-1]), tmp_path / "g.png")


def test_tournament_graph_draws_every_majority_edge_as_an_arrow_from_winner_to_loser():
  from matplotlib.text import Annotation

  P, agents, core = _tournament()
  fig = plotting.plot_tournament(P, agents, core)
  ax = fig.axes[0]
  arrows = [t for t in ax.texts if isinstance(t, Annotation)]
  assert len(arrows) == 10  # all 10 pairs of the 5 agents have a strict majority
  xy = {
    i: np.array([np.cos(a), np.sin(a)])
    for i, a in enumerate(np.pi / 2 - 2 * np.pi * np.arange(5) / 5)
  }
  drawn = {
    (
      int(np.argmin([np.linalg.norm(np.asarray(t.xyann) - xy[i]) for i in range(5)])),
      int(np.argmin([np.linalg.norm(np.asarray(t.xy) - xy[i]) for i in range(5)])),
    )
    for t in arrows
  }
  assert drawn == {(a, b) for a in range(5) for b in range(5) if P[a, b] > 0.5}


def test_tournament_graph_draws_lines_when_there_are_too_many_edges():
  from matplotlib.collections import LineCollection

  n = 20  # 190 edges, all outside the (empty) core: more than MAX_ARROWS
  P = np.triu(np.full((n, n), 0.9), 1) + np.tril(np.full((n, n), 0.1), -1) + 0.5 * np.eye(n)
  fig = plotting.plot_tournament(P, [f"a{i}" for i in range(n)], np.zeros(n, bool))
  ax = fig.axes[0]
  assert not ax.texts[n:]  # only the n labels, no arrows
  lines = [c for c in ax.collections if isinstance(c, LineCollection)]
  assert sum(len(c.get_segments()) for c in lines) == n * (n - 1) // 2


def test_heatmap(tmp_path):
  P, agents, _ = _tournament()
  scores = np.array([0.1, 0.8, 0.7, 0.9, 0.0])
  fig = plotting.plot_heatmap(P, agents, scores=scores)
  ax = fig.axes[0]
  order = [3, 1, 2, 0, 4]  # by decreasing score
  np.testing.assert_array_equal(ax.images[0].get_array(), P[np.ix_(order, order)])
  assert [t.get_text() for t in ax.get_yticklabels()] == [agents[i] for i in order]
  _png(fig, tmp_path / "h.png")


def test_heatmap_dots_the_pairs_never_compared():
  P, agents, _ = _tournament()
  unobserved = np.zeros((5, 5), dtype=bool)
  unobserved[0, 3] = unobserved[3, 0] = unobserved[1, 1] = True  # the diagonal is never dotted
  order = [3, 1, 2, 0, 4]
  ax = plotting.plot_heatmap(P, agents, order=order, unobserved=unobserved).axes[0]
  (dots,) = ax.collections
  # Agent 3 is row/column 0 of the ordered image, agent 0 row/column 3: cells (x=col, y=row).
  assert sorted(map(tuple, dots.get_offsets().tolist())) == [(0.0, 3.0), (3.0, 0.0)]


def test_score_bars(tmp_path):
  _, agents, core = _tournament()
  s = np.array([0.9, 0.8, 0.7, 0.1, 0.0])
  lo, hi = s - 0.05, np.minimum(s + 0.05, 1.0)
  lo[4] = np.nan
  fig = plotting.plot_score_bars(agents, s[::-1], lower=lo[::-1], upper=hi[::-1], core=core[::-1])
  ax = fig.axes[0]
  bars = ax.patches  # drawn top to bottom, by decreasing score
  np.testing.assert_allclose([b.get_width() for b in bars], np.sort(s)[::-1])
  assert [t.get_text() for t in ax.get_yticklabels()] == list(agents)[::-1]  # o4 has the top score
  core_color = matplotlib.colors.to_rgba(plotting.CORE_COLOR)
  assert [b.get_facecolor() == core_color for b in bars] == list(core)
  _png(fig, tmp_path / "b.png")


def test_score_bars_markers_sit_on_their_agents_rows():
  _, agents, _ = _tournament()
  s = np.array([0.9, 0.8, 0.7, 0.1, 0.0])
  m = np.array([0.2, np.nan, 0.5, 0.9, 0.0])
  ax = plotting.plot_score_bars(agents, s, markers=m, marker_label="P(TC)").axes[0]
  (diamonds,) = ax.collections
  np.testing.assert_allclose(
    diamonds.get_offsets(), [[0.2, 0], [0.5, 2], [0.9, 3], [0.0, 4]]
  )  # agent 1: NaN
  assert [t.get_text() for t in ax.get_legend().get_texts()] == ["P(TC)"]


def test_report_figure_draws_the_first_rows_in_table_order():
  import types

  P, agents, core = _tournament()
  games = np.full((5, 5), 4.0)
  games[0, 4] = games[4, 0] = 0.0  # a0 and o4 never met
  nan = np.full(5, np.nan)
  table = types.SimpleNamespace(  # the fields a CoreTable gives the figure
    agents=tuple(agents),
    order=np.array([1, 0, 4, 2, 3]),
    P=P,
    games_matrix=games,
    estimator="model",
    columns={
      "tc_score": np.linspace(1, 0, 5),
      "tc_lo": nan,
      "tc_hi": nan,
      "p_tc": np.full(5, 0.5),
      "hard_tc": core,
    },
    soft_intervals=False,
    settings=types.SimpleNamespace(confidence=0.95),
  )
  fig = plotting.report_figure(table, title="t", top=4)
  rows = [1, 0, 4, 2]
  heat = fig.axes[1]
  np.testing.assert_array_equal(heat.images[0].get_array(), P[np.ix_(rows, rows)])
  assert [t.get_text() for t in heat.get_yticklabels()] == [agents[i] for i in rows]
  (dots,) = heat.collections  # a0 is row/column 1 of the image, o4 row/column 2
  assert sorted(map(tuple, dots.get_offsets().tolist())) == [(1.0, 2.0), (2.0, 1.0)]
  assert fig._suptitle.get_text() == "t (first 4 of 5 rows)"
  line = (
    "answer: the data do not settle the top" + " word" * 80
  )  # a CoreTable's answer goes under the title, wrapped
  table.answer = lambda: types.SimpleNamespace(lines=lambda: [line, "direct records: ..."])
  heading = plotting.report_figure(table, title="t", top=4)._suptitle.get_text().split("\n")
  assert (
    heading[0] == "t (first 4 of 5 rows)" and len(heading) >= 3 and " ".join(heading[1:]) == line
  )
  with pytest.raises(ValueError, match="top must be a positive integer"):
    plotting.report_figure(table, top=0)


@pytest.mark.slow  # a bootstrapped table and a multi-panel figure, about 14 s on 2 cores
def test_save_report_figure(tmp_path):
  import jax

  from ste_jax.data import Comparisons
  from ste_jax.evaluate import LeaderboardSettings, core_table

  # A 3-cycle on top of two agents it beats; 10 bootstrap replicas give the CI bars.
  a, b = [0, 1, 2, 0, 0, 1, 1, 2, 2, 3], [1, 2, 0, 3, 4, 3, 4, 3, 4, 4]
  c = Comparisons.from_arrays(a * 6, b * 6, [1.0] * 60, agents=["o0", "o1", "o2", "o3", "o4"])
  table = core_table(jax.random.key(0), c, "winrate", LeaderboardSettings(num_replicas=10))
  assert set(table.top_cycle) == {"o0", "o1", "o2"} and table.soft_intervals
  path = tmp_path / "report.png"
  assert plotting.save_report_figure(table, path, title="test") == str(path)
  assert path.read_bytes()[:8] == PNG and path.stat().st_size > 10_000
  assert (
    plotting.report_figure(table, title="test")
    ._suptitle.get_text()
    .split("\n")[1]
    .startswith("answer: ")
  )


def test_bad_shape():
  with pytest.raises(ValueError, match="shape"):
    plotting.plot_heatmap(np.zeros(3), ["a", "b", "c"])


def test_figure_suffixes_are_matplotlibs_and_others_are_refused_before_drawing(tmp_path):
  from matplotlib.backend_bases import FigureCanvasBase

  import ste_jax

  supported = sorted(FigureCanvasBase.get_supported_filetypes())
  assert plotting.figure_formats() == tuple(supported)
  for name in ("r.png", "r.PDF", "r.svg", "report"):  # no suffix: matplotlib's PNG default
    assert plotting.check_figure_path(tmp_path / name) == str(tmp_path / name)
  with pytest.raises(ste_jax.OptionError) as caught:
    plotting.check_figure_path("report.txt", "--plot")
  message = str(caught.value)
  assert message.startswith("--plot: cannot write a figure as '.txt'")
  assert all(f".{s}" in message for s in supported)

  class Unusable:  # no table attribute at all: drawing it would raise AttributeError
    pass

  with pytest.raises(ste_jax.OptionError, match="'.docx'"):
    plotting.save_report_figure(Unusable(), tmp_path / "r.docx")
  P, agents, core = _tournament()
  with pytest.raises(ste_jax.OptionError, match="'.txt'"):
    plotting.save_figure(plotting.plot_tournament(P, agents, core), tmp_path / "g.txt")
  assert not list(tmp_path.iterdir())
