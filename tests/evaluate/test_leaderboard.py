"""The leaderboard: one tournament per table, zero-temperature limits, verdicts, diagnostics."""

import jax
import numpy as np
import pandas as pd
import pytest

from ste_jax import exact, ste_scores_from_edges
from ste_jax._cli import bundled_dataset_path
from ste_jax.data import Comparisons, load_comparisons
from ste_jax.evaluate import (
  LeaderboardSettings,
  ModelEstimator,
  PosteriorEdgeEstimator,
  WinRateEstimator,
  core_table,
  leaderboard,
)
from tests.evaluate._data import from_wins, rps_above_transitive
from tests.oracles import brute_uncovered_set, nx_reach_all, nx_top_cycle

COLUMNS = [
  "tier",
  "tc_score",
  "tc_lo",
  "tc_hi",
  "p_tc",
  "tc_verdict",
  "uc_score",
  "uc_lo",
  "uc_hi",
  "p_uc",
  "uc_verdict",
  "hard_tc",
  "hard_uc",
  "win_rate",
  "bradley_terry",
  "elo",
  "games",
]


def _strict_random_wins(seed, n=9, games=7):
  """Every pair observed with an odd number of games: no evenly split pair, no tie."""
  rng = np.random.default_rng(seed)
  s = rng.normal(size=n)
  wins = np.zeros((n, n))
  for i in range(n):
    for j in range(i + 1, n):
      p = 1 / (1 + np.exp(-(s[i] - s[j]) - rng.normal(scale=1.5)))
      w = rng.binomial(games, p)
      wins[i, j], wins[j, i] = w, games - w
  return wins


def _table(c, estimator, **settings):
  return core_table(jax.random.key(0), c, estimator, LeaderboardSettings(**settings))


def _frame(data, estimator="auto", **options):
  """The single table of ``leaderboard`` as a DataFrame indexed by agent."""
  return leaderboard(jax.random.key(0), data, estimator, **options).table().to_frame()


# The model estimator's fits (about 8 s on 2 cores) run in `make test-slow`.
@pytest.mark.parametrize(
  "estimator", ["winrate", pytest.param("model", marks=pytest.mark.slow), "posterior"]
)
def test_hard_columns_are_the_zero_temperature_limit_of_the_soft_columns(estimator):
  for seed in range(2):
    c = from_wins(_strict_random_wins(seed))
    t = _table(c, estimator, tau=1e-3, num_replicas=0)
    cols = t.columns
    n = len(t.agents)
    if estimator == "posterior":
      # D is tau-free: at gamma -> 0 the Top-Cycle score tends to the bottleneck min_b R(a, b),
      # which is > 0 exactly for the agents that reach everyone through edges D > 0 (the hard
      # relation).
      assert (cols["tc_score"] > 1e-3 * np.log(n)).tolist() == cols["hard_tc"].tolist()
      D = PosteriorEdgeEstimator().fit(jax.random.key(0), c).edges
      binary = ste_scores_from_edges((D > 0).astype(D.dtype), gamma=1e-3)
      assert (np.asarray(binary.top_cycle) > 0.5).tolist() == cols["hard_tc"].tolist()
      assert (np.asarray(binary.uncovered) > 0.5).tolist() == cols["hard_uc"].tolist()
    else:
      assert (cols["tc_score"] > 0.5).tolist() == cols["hard_tc"].tolist()
      assert (cols["uc_score"] > 0.5).tolist() == cols["hard_uc"].tolist()


def test_hard_columns_match_oracles_per_estimator():
  wins = _strict_random_wins(3)
  wins[0, 1] = wins[1, 0] = 0.0  # one unobserved pair
  c = from_wins(wins)
  P = np.where(wins + wins.T > 0, wins / np.maximum(wins + wins.T, 1), 0.5)
  np.fill_diagonal(P, 0.5)
  strict = (P > 0.5) & ~np.eye(len(P), dtype=bool)
  win = _table(c, "winrate", num_replicas=0).columns
  post = _table(c, "posterior", num_replicas=0).columns
  assert win["hard_tc"].tolist() == nx_top_cycle(P).tolist()  # unobserved pair = tie both ways
  assert post["hard_tc"].tolist() == nx_reach_all(strict).tolist()  # unobserved pair = no edge
  assert win["hard_uc"].tolist() == post["hard_uc"].tolist() == brute_uncovered_set(P).tolist()


@pytest.mark.slow  # about 15 s on 2 cores (40 model refits)
def test_leaderboard_frame_rps_model_verdicts():
  c, _ = rps_above_transitive(0)
  lb = _frame(c, "model", num_replicas=40)
  assert isinstance(lb, pd.DataFrame) and list(lb.columns) == COLUMNS and lb.index.name == "agent"
  assert set(lb.index[lb.hard_tc]) == {"0", "1", "2"} and (lb.tier[lb.hard_tc] == 1).all()
  assert lb.tier.is_monotonic_increasing
  assert lb.loc[["0", "1", "2"], "p_tc"].min() > 0.5
  assert (lb.tc_verdict[~lb.hard_tc] != "in").all()
  assert "model" in lb.attrs["estimator"] and "intransitive" in lb.attrs["model"]
  assert lb.attrs["diagnostics"]["num_agents"] == 12
  h = lb.attrs["head_to_head"]  # the first 10 rows; the three cyclic leaders met 30 times each
  assert h["agents"] == list(lb.index[:10])
  np.testing.assert_array_equal(np.asarray(h["games"])[:3, :3], 30 * (1 - np.eye(3)))
  answer = lb.attrs[
    "answer"
  ]  # certified members are true ones; else the cyclic leaders are the most frequent
  assert answer["status"] in ("certified", "partly certified", "not settled")
  assert (
    set(answer["members"]) <= {"0", "1", "2"}
    if answer["status"] != "not settled"
    else set(answer["members"]) == {"0", "1", "2"}
  )


# About 10 s on 2 cores; verdict rules are checked by default in test_verdict_calibration.
@pytest.mark.slow
def test_clear_winner_is_in_and_others_out():
  wins = np.zeros((4, 4))
  wins[0, 1:] = 40
  wins[1:, 0] = 2
  wins[1, 2], wins[2, 1], wins[2, 3], wins[3, 2], wins[1, 3], wins[3, 1] = 30, 10, 30, 10, 30, 10
  lb = _frame(from_wins(wins, agents=["a", "b", "c", "d"]), num_replicas=60)
  assert lb.attrs["estimator"] == "posterior"  # auto: every pair compared
  assert lb.tc_verdict.to_dict() == {"a": "in", "b": "out", "c": "out", "d": "out"}
  assert lb.tier.tolist() == [1, 2, 3, 4]
  answer = lb.attrs["answer"]
  assert (answer["status"], answer["members"], answer["out"]) == ("certified", ["a"], 3)
  assert answer["lines"] == [
    "answer: the Top Cycle is {a}, certified at 0.95 (every other agent is certified out, "
    "60 bootstrap replicas)"
  ]


def test_dataframe_input_and_by_context():
  df = pd.DataFrame(
    {
      "model_a": ["x", "y", "z", "x"] * 5,
      "model_b": ["y", "z", "x", "z"] * 5,
      "winner": ["model_a"] * 20,
      "category": ["c1", "c2"] * 10,
    }
  )
  df = df.rename(columns={"category": "context"})  # the loaders' context column
  by_context = leaderboard(jax.random.key(0), df, "winrate", by_context=True, num_replicas=0)
  single = leaderboard(jax.random.key(1), df, "winrate", num_replicas=0)
  assert type(by_context) is type(single)  # the return type does not depend on by_context
  assert [t.context for t in by_context] == ["c1", "c2"]
  assert all(sorted(by_context.table(name).agents) == ["x", "y", "z"] for name in ("c1", "c2"))
  frame = by_context.to_frame()
  assert frame.index.names == ["context", "agent"] and len(frame) == 6
  assert set(frame.attrs["tables"]) == {"c1", "c2"}
  assert sorted(single.table().agents) == ["x", "y", "z"]
  assert single.to_frame().index.names == ["context", "agent"]
  with pytest.raises(KeyError, match="one table per context"):
    by_context.table()
  with pytest.raises(TypeError, match="bootstrap"):
    leaderboard(jax.random.key(2), df, bootstrap=0)  # the option is num_replicas


@pytest.mark.slow  # about 12 s on 2 cores
def test_warnings_fire_on_sparse_winrate_and_not_on_a_round_robin():
  c, _ = load_comparisons(bundled_dataset_path())
  lb = _frame(c, num_replicas=0)
  assert lb.attrs["diagnostics"]["warnings"] == []
  rng = np.random.default_rng(0)
  n = 30
  a, b = np.triu_indices(n, 1)
  keep = rng.random(a.size) < 0.3
  a, b = np.repeat(a[keep], 3), np.repeat(b[keep], 3)
  sparse = Comparisons.from_arrays(a, b, rng.integers(0, 2, a.size).astype(float))
  warnings = _frame(sparse, "winrate", num_replicas=0).attrs["diagnostics"]["warnings"]
  assert any("missing pairs make everyone reach everyone" in w for w in warnings)


@pytest.mark.parametrize(
  "kwargs, match",
  [
    ({"tau": 0.0}, "tau"),
    ({"gamma": -1.0}, "gamma"),
    ({"confidence": 1.0}, "confidence"),
    ({"num_replicas": -1}, "num_replicas"),
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": "big"}, "batch_size"),
    ({"resampling": "bayesian"}, "resampling"),
  ],
)
def test_bad_settings(kwargs, match):
  with pytest.raises(ValueError, match=match):
    LeaderboardSettings(**kwargs)


@pytest.mark.parametrize(
  "kwargs, match",
  [
    ({"record_tolerance": 0.0}, "record_tolerance"),
    ({"record_tolerance": float("inf")}, "record_tolerance"),
    ({"num_folds": 1}, "num_folds"),
    ({"ranks": ()}, "ranks"),
    ({"strength_l2": (0.0,)}, "strength_l2"),
  ],
)
def test_bad_model_settings(kwargs, match):
  with pytest.raises(ValueError, match=match):
    ModelEstimator(**kwargs)


def test_unknown_estimator_names_the_registry():
  from ste_jax.evaluate import ESTIMATORS

  with pytest.raises(ValueError, match="estimator must be one of"):
    _table(from_wins(_strict_random_wins(0)), "elo", num_replicas=0)
  assert set(ESTIMATORS) == {"auto", "posterior", "winrate", "model"}
  with pytest.raises(TypeError, match="TournamentEstimator"):
    _table(from_wins(_strict_random_wins(0)), 3, num_replicas=0)


def test_solution_columns_in_table_and_outputs():
  """``solutions=`` adds one column per solution (sets: membership, lotteries: probabilities) of the
  displayed tournament, in the frame, the CSV and the text table; unknown names are refused."""
  from ste_jax import _render
  from ste_jax.evaluate import LeaderboardSettings, core_tables

  c, _ = rps_above_transitive(0)
  names = ("bipartisan", "ml", "top_cycle")
  tables = core_tables(
    jax.random.key(0), c, "winrate", LeaderboardSettings(num_replicas=0, solutions=names)
  )
  t = tables[0]
  assert t.column_names[-3:] == names
  assert np.asarray(t.columns["top_cycle"]).tolist() == np.asarray(exact.top_cycle(t.P)).tolist()
  assert abs(float(np.sum(t.columns["ml"])) - 1.0) < 1e-4 and np.all(t.columns["ml"] >= 0)
  assert set(np.flatnonzero(t.columns["bipartisan"])) == set(np.flatnonzero(t.columns["ml"] > 1e-6))
  header = _render.format_csv(tables).splitlines()[0].split(",")
  assert header[-3:] == list(names)
  assert any(
    line.lstrip().startswith("#") and line.split()[-3:] == list(names)
    for line in _render.format_text(tables).splitlines()
  )
  frame = _frame(c, "winrate", num_replicas=0, solutions=names)
  assert list(frame.columns[-3:]) == list(names)
  with pytest.raises(ValueError, match="unknown solution"):
    LeaderboardSettings(solutions=("nope",))


def test_parametric_outcomes_are_binomial_draws_from_the_model():
  """Each row's ``max(1, round(w))`` games redrawn from P̂ at its pair; weights (design) kept."""
  import jax.numpy as jnp

  from ste_jax.evaluate._replicas import resample_model_outcomes

  prob = jnp.asarray([0.1, 0.5, 0.9, 0.7], jnp.float32)
  weight = jnp.asarray([1.0, 4.0, 0.0, 2.4], jnp.float32)
  games = np.array([1.0, 4.0, 1.0, 2.0])
  R = 4000
  o = np.asarray(resample_model_outcomes(jax.random.key(3), prob, weight, R), np.float64)
  assert o.shape == (R, 4)
  np.testing.assert_allclose(
    np.round(o * games), o * games, atol=1e-6
  )  # whole wins out of whole games
  assert o.min() == 0.0 and o.max() == 1.0
  p = np.asarray(prob, np.float64)
  se = np.sqrt(p * (1 - p) / (games * R))
  assert np.all(np.abs(o.mean(axis=0) - p) < 5 * se)


@pytest.mark.parametrize(
  "resampling, estimator, expect",
  [
    ("auto", "model", "parametric"),
    ("auto", "posterior", "poisson"),
    ("auto", "winrate", "poisson"),
    ("poisson", "model", "poisson"),
    ("parametric", "model", "parametric"),
    ("parametric", "posterior", ValueError),
    ("bayesian", "model", ValueError),
  ],
)
def test_resolve_resampling(resampling, estimator, expect):
  from ste_jax.evaluate import estimator_named

  est = estimator_named(estimator)
  if expect is ValueError:
    with pytest.raises(ValueError, match="resampling"):
      est.resolve_resampling(resampling)
  else:
    assert est.resolve_resampling(resampling) == expect
  with pytest.raises(ValueError, match="resampling"):
    _table(from_wins(_strict_random_wins(0)), WinRateEstimator(), resampling="parametric")


@pytest.mark.slow  # about 15 s on 2 cores (two bootstraps of 100 model refits)
def test_parametric_bootstrap_lets_a_perfect_record_lose():
  """A Poisson replica cannot give an agent that won its only games a loss; a parametric one can.

  Agent 4 beat agent 1 in its only four games; agents 0-3 play a round robin. Poisson replicas
  reweight those four wins, so 4 beats 1 in nearly every replica's relation (all but those that
  drop the four games); replicas redrawn from the fitted Bradley-Terry model (ridge 3: P̂(4 beats
  1) about 0.64) give 1 some of the games, and the refit then often ranks 1 first.
  """
  from ste_jax.evaluate import bootstrap_hard_memberships

  rng = np.random.default_rng(0)
  s = np.array([1.0, 0.5, 0.0, -0.5])
  a, b, o = [], [], []
  for i in range(4):
    for j in range(i + 1, 4):
      a += [i] * 8
      b += [j] * 8
      o += (rng.random(8) < 1 / (1 + np.exp(s[j] - s[i]))).astype(float).tolist()
  c = Comparisons.from_arrays(a + [4] * 4, b + [1] * 4, o + [1.0] * 4)
  est = ModelEstimator(strength_l2=(3.0,), ranks=(0,))
  fitted = est.fit(jax.random.key(0), c)
  assert 0.55 < float(fitted.edges[4, 1]) < 0.75
  shares = {
    r: bootstrap_hard_memberships(
      jax.random.key(1), c, est, fitted, num_replicas=100, resampling=r
    ).beats[4, 1]
    for r in ("poisson", "parametric")
  }
  assert shares["poisson"] >= 0.9
  assert shares["parametric"] < 0.8


def test_unsettled_top_warning():
  from ste_jax.evaluate._leaderboard import unsettled_top_warning

  names = ["a", "b", "c"]
  line = unsettled_top_warning([True, False, False], [0.12, 0.28, 0.05], names, num_replicas=200)
  assert line.startswith("unsettled top") and "{a}" in line and "b (28%), a (12%), c (5%)" in line
  assert (
    unsettled_top_warning([True, False, False], [0.6, 0.28, 0.05], names, num_replicas=200) is None
  )
  spread = unsettled_top_warning([True, False, False], [0.17, 0.03, 0.01], names, num_replicas=200)
  assert (
    "at most 17%" in spread and "a (17%), b (3%), c (1%)" in spread
  )  # the top is nowhere in most replicas
  assert unsettled_top_warning([True, False, False], [np.nan] * 3, names, num_replicas=200) is None


def test_display_order_lists_better_supported_agents_above_the_point_top_cycle():
  """Hand-made columns: tier then soft scores; with replicas, agents with a higher P(TC) than every
  member of the point estimate's Top Cycle above it, by P(TC); the rest keep the point order."""
  from ste_jax.evaluate._leaderboard import display_order

  cols = {
    "tier": np.array([1, 2, 2, 3, 3, 4]),
    "hard_tc": np.array([True, False, False, False, False, False]),
    "tc_score": np.array([0.9, 0.4, 0.5, 0.2, 0.2, 0.1]),
    "uc_score": np.array([0.9, 0.4, 0.5, 0.3, 0.2, 0.1]),
    "win_rate": np.array([0.6, 0.5, 0.5, 0.4, 0.3, 0.2]),
    "p_tc": np.array([0.2, 0.1, 0.15, 0.3, 0.25, 0.05]),
  }
  point = [0, 2, 1, 3, 4, 5]  # tier; agents 1 and 2 tie at tier 2 and the soft TC score decides
  assert display_order(cols, bootstrapped=False).tolist() == point
  # Agents 3 (0.3) and 4 (0.25) are in more replicas' Top Cycles than agent 0 (0.2): above it.
  assert display_order(cols, bootstrapped=True).tolist() == [3, 4, 0, 2, 1, 5]
  # A settled top: nothing moves, whatever P(TC) says below it.
  settled = dict(cols, p_tc=np.array([0.95, 0.1, 0.15, 0.3, 0.25, 0.05]))
  assert display_order(settled, bootstrapped=True).tolist() == point
  # No point-estimate Top Cycle: agents with P(TC) > 0 first, by P(TC).
  empty = dict(cols, hard_tc=np.zeros(6, bool), p_tc=np.array([0.0, 0.0, 0.0, 0.2, 0.0, 0.1]))
  assert display_order(empty, bootstrapped=True).tolist() == [3, 5, 0, 2, 1, 4]


def test_candidates_are_reported_where_verdicts_stay_open():
  """Two or three games per pair: verdicts stay undetermined, and the table names the replicas'
  candidates (text, Markdown, JSON, frame attrs); with every verdict certified no candidates line
  is printed. (The shapes and replicas of
  ``test_clear_winner_is_in_and_others_out``: one weighted row per ordered pair of 4 agents, 60
  replicas, so the compiled bootstrap is shared.)"""
  from ste_jax._render import format_markdown, format_text, to_json

  n = 4
  close = from_wins((1.0 + np.random.default_rng(5).integers(0, 2, size=(n, n))) * (1 - np.eye(n)))
  settings = LeaderboardSettings(num_replicas=60)
  table = core_table(jax.random.key(0), close, "auto", settings)
  c = table.top_cycle_candidates
  p = table.columns["p_tc"]
  assert (
    c.share >= 0.95
    and c.level == 0.95
    and p[c.members].min() >= np.delete(p, c.members).max(initial=0.0)
  )
  assert table.candidate_names("top_cycle") == [table.agents[i] for i in c.members]
  assert (table.columns["tc_verdict"] == "undetermined").any()
  text = format_text([table])
  assert "candidates (the agents most often in the replicas' hard cores" in text
  assert "candidates" in format_markdown([table])
  doc = to_json([table])["tables"][0]
  assert doc["top_cycle_candidates"]["agents"] == table.candidate_names("top_cycle")
  assert doc["uncovered_candidates"]["share"] == table.uncovered_candidates.share
  assert table.to_frame().attrs["top_cycle_candidates"] == table.candidate_names("top_cycle")

  wins = np.zeros((4, 4))  # the clear winner of test_clear_winner_is_in_and_others_out
  wins[0, 1:] = 40
  wins[1:, 0] = 2
  wins[1, 2], wins[2, 1], wins[2, 3], wins[3, 2], wins[1, 3], wins[3, 1] = 30, 10, 30, 10, 30, 10
  settled = core_table(jax.random.key(0), from_wins(wins), "auto", settings)
  assert settled.top_cycle_candidates.members.tolist() == [0]
  assert "candidates" not in format_text([settled])
  assert _table(from_wins(wins), "auto", num_replicas=0).top_cycle_candidates is None


@pytest.mark.slow  # two compiled bootstrap drivers (about 10 s)
def test_bootstrap_memberships_do_not_depend_on_the_batch_size():
  """Replicas computed one at a time ("auto" on CPU) or four per compiled step are the same."""
  from ste_jax.evaluate._replicas import bootstrap_hard_memberships, default_batch_size

  c, _ = rps_above_transitive(2, n=8)
  est = ModelEstimator()
  fitted = est.fit(jax.random.key(0), c)
  runs = [
    bootstrap_hard_memberships(jax.random.key(1), c, est, fitted, num_replicas=6, batch_size=b)
    for b in ("auto", 4)
  ]
  for field in ("top_cycle", "uncovered", "beats"):
    np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
  assert default_batch_size() == (1 if jax.default_backend() == "cpu" else 8)
