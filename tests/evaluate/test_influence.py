"""comparison_influence: d soft score / d weight against finite differences and leave-one-out."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from ste_jax._errors import InputError, OptionError
from ste_jax.data import Comparisons
from ste_jax.evaluate import (
  ModelEstimator,
  PosteriorEdgeEstimator,
  WinRateEstimator,
  comparison_influence,
)
from ste_jax.evaluate._model_estimator import (
  banded_tournament,
  fit_intransitive,
  pair_wins,
  record_band,
)
from ste_jax.models._intransitive import intransitive_logits
from tests.evaluate._data import random_pairs

TAU = 0.1


def _data(seed=0, n=5, m=70):
  rng = np.random.default_rng(seed)
  a, b, p = random_pairs(rng, n, m)
  # fractional weights: no two edges equal, so the max-min paths of the soft Top Cycle have no
  # ties (where the scores have kinks and a central difference averages two one-sided slopes)
  weight = rng.uniform(0.5, 1.5, m)
  return Comparisons.from_arrays(a, b, (rng.random(m) < p).astype(float), weight=weight)


def _model():
  return ModelEstimator(
    ranks=(1,),
    strength_l2=(0.1,),
    skew_l2=(0.1,),
    num_folds=2,
    num_steps=150,
    record_tolerance=None,
  )


def _scores_fn(est, c):
  """The weighted pipeline recomputed from scratch (the model: a converged warm-started refit)."""
  if isinstance(est, ModelEstimator):
    params, pairs, settings = est.fit(jax.random.key(0), c).state

    @jax.jit
    def refit(w):  # warm-started at the fit, a fixed 400 L-BFGS steps: converged in float64
      w_ij, w_ji = pair_wins(pairs, c.outcome, w)
      fit = fit_intransitive(params, pairs, w_ij, w_ji, *settings, num_steps=400)
      return banded_tournament(fit, pairs, record_band(w_ij, w_ji, settings[2]))
  else:
    refit = jax.jit(lambda w: est.replica_edges(None, dataclasses.replace(c, weight=w)))

  def scores(w):
    s = est.soft_scores(refit(jnp.asarray(w)), tau=TAU, gamma=TAU)
    return np.array([np.asarray(s.top_cycle), np.asarray(s.uncovered)])

  return scores


def _assert_central_differences(infl, scores, weight, stride, h=1e-5):
  """Every ``stride``-th comparison's influence equals the central difference of ``scores``
  (``(n,)`` weights -> ``(2, n)`` TC and UC scores) at ``weight +- h e_i``."""
  w0 = np.asarray(weight)
  for i in range(0, w0.shape[0], stride):
    wp, wm = w0.copy(), w0.copy()
    wp[i] += h
    wm[i] -= h
    fd = (scores(wp) - scores(wm)) / (2 * h)  # (2, n)
    got = np.stack([infl.top_cycle[:, i], infl.uncovered[:, i]])
    np.testing.assert_allclose(got, fd[:, infl.agents], rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("make", [PosteriorEdgeEstimator, WinRateEstimator, _model])
def test_influence_equals_central_differences(x64, make):
  est, c = make(), _data()
  infl = comparison_influence(jax.random.key(0), c, est, tau=TAU, num_agents=2)
  scores = _scores_fn(est, c)
  _assert_central_differences(infl, scores, c.weight, 7)


@pytest.mark.parametrize("make", [PosteriorEdgeEstimator, WinRateEstimator])
def test_influence_ranking_agrees_with_leave_one_out(x64, make):
  """Removing one unit comparison of a count cell, recomputed exactly, against -influence."""
  rng = np.random.default_rng(3)
  n = 4
  a, b = np.triu_indices(n, 1)
  a, b = np.concatenate([a, b]), np.concatenate([b, a])  # both orders: a's wins over b
  wins = rng.integers(20, 60, a.size).astype(float)
  c = Comparisons.from_arrays(a, b, np.ones(a.size), weight=wins)
  est = make()
  infl = comparison_influence(jax.random.key(0), c, est, tau=TAU, num_agents=2)
  scores = _scores_fn(est, c)
  base = scores(wins)
  for k, agent in enumerate(infl.agents):
    for s, name in enumerate(("top_cycle", "uncovered")):
      loo = np.empty(a.size)
      for i in range(a.size):
        w = wins.copy()
        w[i] -= 1
        loo[i] = scores(w)[s, agent] - base[s, agent]
      linear = -getattr(infl, name)[k]
      if np.max(np.abs(loo)) < 1e-9:
        continue
      top_loo = np.argsort(-np.abs(loo))[:4]
      top_loo = top_loo[np.abs(loo[top_loo]) > 1e-6 * np.max(np.abs(loo))]  # effects, not noise
      assert set(np.argsort(-np.abs(linear))[: min(2, top_loo.size)]) <= set(top_loo)
      np.testing.assert_array_equal(np.sign(linear[top_loo]), np.sign(loo[top_loo]))
      if top_loo.size >= 3:
        assert scipy.stats.spearmanr(np.abs(linear[top_loo]), np.abs(loo[top_loo])).statistic > 0


@pytest.mark.parametrize("make", [PosteriorEdgeEstimator, WinRateEstimator, _model])
@pytest.mark.parametrize("tau", [1e-3, 0.01])
def test_influence_finite_at_ties_and_small_temperatures(make, tau):
  # every pair split evenly: P = 1/2 and D = 0 everywhere
  a = np.array([0, 1, 1, 2, 2, 0, 0, 3, 3, 1])
  b = np.array([1, 0, 2, 1, 0, 2, 3, 0, 1, 3])
  c = Comparisons.from_arrays(a, b, np.array([1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0.5]))
  infl = comparison_influence(jax.random.key(0), c, make(), tau=tau, num_agents=4)
  assert np.all(np.isfinite(infl.top_cycle)) and np.all(np.isfinite(infl.uncovered))


def test_frame_lists_largest_influence_first():
  c = _data(1)
  infl = comparison_influence(jax.random.key(0), c, "winrate", tau=TAU, agents=["0"])
  frame = infl.to_frame(num=5)
  assert len(frame) == 10 and set(frame["score"]) == {"top_cycle", "uncovered"}
  for _, part in frame.groupby("score"):
    mags = np.abs(part["influence"].to_numpy())
    assert np.all(np.diff(mags) <= 0)
    full = np.abs(getattr(infl, part["score"].iloc[0])[0])
    assert mags[0] == pytest.approx(full.max())
  np.testing.assert_allclose(frame["removal_effect"], -frame["weight"] * frame["influence"])
  assert frame["rows"].eq(1).all()  # fractional random weights: no two rows alike
  rows = comparison_influence(
    jax.random.key(0),
    Comparisons.from_arrays([0, 0, 1, 2], [1, 1, 2, 0], [1.0, 1.0, 1.0, 1.0]),
    "winrate",
    tau=TAU,
    agents=[0],
  )
  cells = rows.to_frame(num=10)
  part = cells[cells["score"] == "top_cycle"]
  assert sorted(part["rows"]) == [1, 1, 2] and part["rows"].sum() == 4
  assert len(rows.to_frame(num=10, distinct=False)) == 8


def test_default_agents_are_the_top_soft_scores():
  c = _data(2)
  infl = comparison_influence(jax.random.key(0), c, "winrate", tau=TAU, num_agents=2)
  full = comparison_influence(jax.random.key(0), c, "winrate", tau=TAU, agents=range(c.num_agents))
  assert list(infl.agents) == list(np.argsort(-full.top_cycle_score, kind="stable")[:2])


def test_bad_arguments_raise():
  c = _data()
  with pytest.raises(InputError, match="agents"):
    comparison_influence(jax.random.key(0), c, "winrate", agents=["nobody"])
  with pytest.raises(OptionError, match="num_agents"):
    comparison_influence(jax.random.key(0), c, "winrate", num_agents=0)


def _banded_data(seed=1):
  """Four agents, twelve weighted games per pair around a cycle Bradley-Terry cannot fit: the
  rank-0 fit clips some pairs to their record bands."""
  rng = np.random.default_rng(seed)
  P = np.array([[0.5, 0.85, 0.2, 0.7], [0.15, 0.5, 0.85, 0.6], [0.8, 0.15, 0.5, 0.55]])
  a, b = np.triu_indices(4, 1)
  a, b = np.repeat(a, 12), np.repeat(b, 12)
  outcome = (rng.random(a.size) < P[a, b]).astype(float)
  return Comparisons.from_arrays(a, b, outcome, weight=rng.uniform(0.5, 1.5, a.size))


@pytest.mark.slow
def test_model_influence_with_record_bands_equals_central_differences(x64, monkeypatch):
  """Bands on, some pairs clipped to their band (off its edge): the implicit derivative is exact;
  a pair on its band's edge (here: every pair, the tolerance widened) is warned about."""
  from ste_jax.evaluate import _influence

  est = ModelEstimator(ranks=(0,), strength_l2=(0.1,), num_folds=2, num_steps=150)
  c = _banded_data()
  fitted = est.fit(jax.random.key(0), c)
  params, pairs, settings = fitted.state
  w_ij, w_ji = pair_wins(pairs, c.outcome, c.weight)
  band = record_band(w_ij, w_ji, settings[2])
  h = np.asarray(intransitive_logits(params, pairs.i, pairs.j))
  assert np.any((h < np.asarray(band.lo)) | (h > np.asarray(band.hi)))  # the clipped branch
  assert np.any((h > np.asarray(band.lo)) & (h < np.asarray(band.hi)))  # and the inner one
  infl = comparison_influence(jax.random.key(0), c, est, fitted=fitted, tau=TAU, num_agents=2)
  assert "one-sided" not in infl.method
  scores = _scores_fn(est, c)
  _assert_central_differences(infl, scores, c.weight, 11)
  monkeypatch.setattr(_influence, "BAND_EDGE_TOLERANCE", 1e6)  # every banded pair "on its edge"
  with pytest.warns(UserWarning, match="band's edge"):
    one_sided = comparison_influence(jax.random.key(0), c, est, fitted=fitted, tau=TAU)
  assert "one-sided" in one_sided.method


def test_band_edge_pairs():
  from ste_jax.evaluate import _influence

  inf = np.inf
  h = np.array([0.0, 1.0, -2.0, 0.5, 3.0])
  lo = np.array([-1.0, 1.0, -inf, 0.5 - 1e-3, -inf])
  hi = np.array([1.0, 2.0, -2.0 + 1e-9, 0.6, inf])
  assert _influence.band_edge_pairs(h, lo, hi).tolist() == [1, 2]


def test_hessian_by_blocks_equals_jax_hessian(monkeypatch):
  """The blockwise Hessian (bounded memory) = ``jax.hessian``, with blocks that do not divide d."""
  from ste_jax.evaluate import _influence

  monkeypatch.setattr(_influence, "_HESSIAN_BLOCK_ELEMENTS", 3 * 5)  # 3 tangents per block
  rng = np.random.default_rng(0)
  A = jnp.asarray(rng.normal(size=(5, 7)))
  w = jnp.asarray(rng.random(5))

  def loss(theta, weight):
    return jnp.sum(weight * jnp.log1p(jnp.exp(A @ theta))) + 0.1 * jnp.sum(theta**4)

  theta = jnp.asarray(rng.normal(size=7))
  np.testing.assert_allclose(
    _influence._hessian_by_blocks(loss, theta, w),
    jax.hessian(loss, argnums=0)(theta, w),
    rtol=1e-5,
    atol=1e-6,
  )


def _tie_data(seed=2, n=5, m=80):
  """Weighted battles with ties (a fifth of the rows) and one random covariate."""
  rng = np.random.default_rng(seed)
  a, b, p = random_pairs(rng, n, m)
  y = (rng.random(m) < p).astype(float)
  y[rng.random(m) < 0.2] = 0.5
  c = Comparisons.from_arrays(a, b, y, weight=rng.uniform(0.5, 1.5, m))
  return c, rng.normal(size=(m, 1))


def _joint_model(covariates, tie_model):
  from ste_jax.evaluate import Covariates

  cov = None if covariates is None else Covariates(jnp.asarray(covariates), ("x",))
  return ModelEstimator(
    ranks=(1,),
    strength_l2=(0.1,),
    skew_l2=(0.1,),
    num_folds=2,
    num_steps=150,
    record_tolerance=None,
    covariates=cov,
    tie_model=tie_model,
  )


@pytest.mark.slow
@pytest.mark.parametrize(
  "with_covariates, tie_model", [(True, "half"), (False, "davidson"), (True, "davidson")]
)
def test_influence_with_covariates_or_a_tie_model_equals_central_differences(
  x64, with_covariates, tie_model
):
  """theta includes beta and the tie parameter: the implicit derivative equals central
  differences of the pipeline refitted (400 warm-started L-BFGS steps) at w +- h e_i."""
  c, x = _tie_data()
  est = _joint_model(x if with_covariates else None, tie_model)
  fitted = est.fit(jax.random.key(0), c)
  infl = comparison_influence(jax.random.key(0), c, est, fitted=fitted, tau=TAU, num_agents=2)
  assert "tie parameter" in infl.method if tie_model != "half" else "beta" in infl.method
  refit = jax.jit(
    lambda w: dataclasses.replace(est, refit_steps=400).replica_edges(
      fitted.state, dataclasses.replace(c, weight=w)
    )
  )

  def scores(w):
    s = est.soft_scores(refit(jnp.asarray(w)), tau=TAU, gamma=TAU)
    return np.array([np.asarray(s.top_cycle), np.asarray(s.uncovered)])

  _assert_central_differences(infl, scores, c.weight, 9)
  assert np.abs(infl.top_cycle).max() > 1e-4  # something to compare


def test_frame_lines_point_at_the_rows_of_the_file(tmp_path):
  """Loaded comparisons carry their input lines: past the bad rows, the frame's ``line`` is the
  file line holding that comparison (its agents and outcome), for winner rows and count rows."""
  import csv
  import warnings

  from ste_jax.data import load_comparisons

  battles = tmp_path / "battles.csv"
  battles.write_text(
    "a,b,winner\nx,,a\ny,y,a\nx,y,a\nq,r,a\ny,z,a\nz,x,a\nx,w,a\ny,w,a\nw,z,a\nx,y,b\n"
    "y,z,a\nz,x,a\nx,w,a\nz,w,b\nx,z,a\n"
  )
  counts = tmp_path / "counts.csv"
  counts.write_text(
    "model_a,model_b,wins_a,wins_b,ties\nx,,1,0,0\nx,y,2,1,0\ny,z,3,0,1\nz,x,2,1,0\nx,w,1,0,0\n"
  )
  outcome_column = {1.0: "wins_a", 0.0: "wins_b", 0.5: "ties"}
  for path, (a_col, b_col) in ((battles, ("a", "b")), (counts, ("model_a", "model_b"))):
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      c, report = load_comparisons(path, skip_bad_rows=True)
    assert report.bad_rows
    with open(path, newline="") as f:
      reader = csv.DictReader(f)
      rows = {reader.line_num: row for row in reader}
    infl = comparison_influence(jax.random.key(0), c, "winrate", tau=TAU, num_agents=2)
    frame = infl.to_frame(num=4)
    assert frame.columns[4] == "line" and len(frame)
    for r in frame.itertuples(index=False):
      row = rows[int(r.line)]
      assert (row[a_col], row[b_col]) == (r.a, r.b)
      assert int(c.line[r.row]) == r.line
      if path == battles:
        assert {"a": 1.0, "b": 0.0}[row["winner"]] == r.outcome
      else:
        assert float(row[outcome_column[r.outcome]]) == r.weight
  plain = comparison_influence(
    jax.random.key(0), Comparisons.from_arrays([0, 1], [1, 2], [1.0, 1.0]), "winrate", tau=TAU
  )
  assert "line" not in plain.to_frame().columns
