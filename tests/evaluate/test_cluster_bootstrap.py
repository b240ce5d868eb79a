"""The cluster bootstrap: clusters resampled whole, singleton clusters = the row bootstrap."""

import contextlib
import io

import jax
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from ste_jax._errors import InputError, OptionError
from ste_jax._host_random import numpy_generator
from ste_jax.data import Comparisons, from_dataframe, load_cluster_ids
from ste_jax.evaluate import (
  ModelEstimator,
  PosteriorEdgeEstimator,
  WinRateEstimator,
  bootstrap_hard_memberships,
  leaderboard,
)
from ste_jax.evaluate._replicas import merge_within_clusters, resample_cluster_weights
from tests.evaluate._data import random_pairs

R = 24


def _data(seed=0, n=5, m=60):
  rng = np.random.default_rng(seed)
  a, b, p = random_pairs(rng, n, m)
  outcome = np.where(rng.random(m) < 0.1, 0.5, (rng.random(m) < p).astype(float))
  return Comparisons.from_arrays(a, b, outcome)


def _small_model():
  return ModelEstimator(ranks=(0,), strength_l2=(0.1,), num_folds=2, num_steps=20, refit_steps=4)


@pytest.mark.parametrize("make", [PosteriorEdgeEstimator, WinRateEstimator, _small_model])
@pytest.mark.parametrize("merge_rows", [True, False])
def test_singleton_clusters_are_the_row_bootstrap_exactly(make, merge_rows):
  """Clusters 0..m-1 in row order draw the row bootstrap's Poisson(1) counts (unit rows)."""
  c, est = _data(), make()
  fitted = est.fit(jax.random.key(1), c)
  rows = bootstrap_hard_memberships(
    jax.random.key(2),
    c,
    est,
    fitted,
    num_replicas=R,
    soft=(0.1, 0.1),
    resampling="poisson",
    merge_rows=False,
  )
  clustered = bootstrap_hard_memberships(
    jax.random.key(2),  # the same key (a fresh copy: the test suite checks key reuse)
    c,
    est,
    fitted,
    num_replicas=R,
    soft=(0.1, 0.1),
    clusters=np.arange(c.num_comparisons),
    merge_rows=merge_rows,
  )
  for field in ("top_cycle", "uncovered", "beats", "soft_top_cycle", "soft_uncovered"):
    np.testing.assert_array_equal(getattr(clustered, field), getattr(rows, field), err_msg=field)


def _weak_top_cycle(P: np.ndarray) -> np.ndarray:
  """Agents reaching every agent in the weak relation P >= 1/2 (networkx oracle)."""
  n = P.shape[0]
  g = nx.DiGraph()
  g.add_nodes_from(range(n))
  g.add_edges_from((i, j) for i in range(n) for j in range(n) if i != j and P[i, j] >= 0.5)
  return np.array([len(nx.descendants(g, i)) == n - 1 for i in range(n)])


def test_one_cluster_per_pair_resamples_pairs():
  """Each replica keeps, drops or repeats every pair's record whole: its win rates are the data's,
  a dropped pair is a tie; the Top Cycle then follows from networkx reachability."""
  c = _data(3, n=6, m=90)
  a, b = np.asarray(c.a), np.asarray(c.b)
  n = c.num_agents
  pair = np.minimum(a, b) * n + np.maximum(a, b)
  est = WinRateEstimator()
  boot = bootstrap_hard_memberships(
    jax.random.key(4),
    c,
    est,
    est.fit(jax.random.key(0), c),
    num_replicas=R,
    clusters=pair,
    resampling="poisson",
  )
  pairs = np.unique(pair)
  # the draws: one Poisson(1) per pair, in sorted order, from the chunk's key
  counts = numpy_generator(jax.random.split(jax.random.key(4), 1)[0]).poisson(
    np.ones((R, pairs.size))
  )
  won = np.asarray(c.outcome)
  for r in range(R):
    keep = dict(zip(pairs, counts[r] > 0))
    wins = np.zeros((n, n))
    for i in range(c.num_comparisons):
      if keep[pair[i]]:
        wins[a[i], b[i]] += won[i]
        wins[b[i], a[i]] += 1 - won[i]
    tot = wins + wins.T
    P = np.where(tot > 0, wins / np.where(tot > 0, tot, 1), 0.5)
    np.testing.assert_array_equal(boot.top_cycle[r], _weak_top_cycle(P), err_msg=f"replica {r}")


def test_cluster_weights_share_one_draw_per_cluster():
  clusters = np.array([2, 0, 2, 1, 0, 2])
  weight = np.array([1.0, 2.0, 3.0, 1.0, 1.0, 0.5])
  w = resample_cluster_weights(jax.random.key(0), weight, 50, clusters=clusters, num_clusters=3)
  ratio = w / weight
  for k in range(3):
    rows = ratio[:, clusters == k]
    np.testing.assert_array_equal(rows, np.repeat(rows[:, :1], rows.shape[1], axis=1))
  assert np.all(ratio == np.round(ratio)) and ratio.std() > 0


def test_merge_within_clusters_never_merges_across_clusters():
  rng = np.random.default_rng(5)
  m = 200
  a = rng.integers(0, 3, m)
  b = (a + rng.integers(1, 3, m)) % 3
  outcome = rng.integers(0, 3, m) / 2
  cluster = rng.integers(0, 7, m)
  c = Comparisons.from_arrays(a, b, outcome, weight=rng.uniform(0.5, 2.0, m))
  cells, codes = merge_within_clusters(c, cluster)
  got = (
    pd.DataFrame(
      dict(
        k=codes,
        a=np.asarray(cells.a),
        b=np.asarray(cells.b),
        o=np.asarray(cells.outcome),
        w=np.asarray(cells.weight, dtype=np.float64),
      )
    )
    .set_index(["k", "a", "b", "o"])["w"]
    .sort_index()
  )
  want = (
    pd.DataFrame(dict(k=cluster, a=a, b=b, o=np.asarray(c.outcome), w=np.asarray(c.weight)))
    .groupby(["k", "a", "b", "o"])["w"]
    .sum()
    .sort_index()
  )
  assert got.index.equals(want.index)
  np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-6)


def test_parametric_resampling_with_clusters_is_refused():
  c, est = _data(), _small_model()
  fitted = est.fit(jax.random.key(0), c)
  with pytest.raises(OptionError, match="within clusters"):
    bootstrap_hard_memberships(
      jax.random.key(0),
      c,
      est,
      fitted,
      num_replicas=2,
      resampling="parametric",
      clusters=np.zeros(c.num_comparisons),
    )
  with pytest.raises(InputError, match="one id per comparison"):
    bootstrap_hard_memberships(
      jax.random.key(0), c, est, fitted, num_replicas=2, clusters=np.zeros(3)
    )


def _frame():
  rng = np.random.default_rng(6)
  m = 120
  names = np.array(list("pqrst"))
  a = rng.integers(0, 5, m)
  b = (a + rng.integers(1, 5, m)) % 5
  return pd.DataFrame(
    dict(
      a=names[a],
      b=names[b],
      winner=rng.choice(["a", "b", "tie"], m, p=[0.5, 0.35, 0.15]),
      judge=rng.choice([f"j{i}" for i in range(8)], m),
    )
  )


def test_leaderboard_reads_the_cluster_column_and_says_so():
  df = _frame()
  lb = leaderboard(jax.random.key(0), df, "winrate", num_replicas=16, cluster_column="judge")
  table = lb.table()
  assert table.num_clusters == df["judge"].nunique()
  assert "cluster bootstrap replicas over 8 clusters of 'judge'" in table.conventions()
  plain = leaderboard(jax.random.key(0), df, "winrate", num_replicas=16).table()
  assert plain.num_clusters is None and "unit comparisons" in plain.conventions()


def test_cluster_ids_follow_the_rows_and_bad_columns_are_refused():
  df = _frame()
  c, _ = from_dataframe(df)
  ids = load_cluster_ids(df, "judge", c)
  np.testing.assert_array_equal(np.array(sorted(df["judge"].unique()))[ids], df["judge"])
  with pytest.raises(InputError, match="nope"):
    load_cluster_ids(df, "nope", c)
  with pytest.raises(OptionError, match="cluster ids"):
    leaderboard(jax.random.key(0), c, "winrate", num_replicas=4, cluster_column="judge")


def test_cli_cluster_column(tmp_path):
  from ste_jax._cli import main

  path = tmp_path / "votes.csv"
  _frame().to_csv(path, index=False)
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    code = main(
      [
        "score",
        str(path),
        "--estimator",
        "winrate",
        "--bootstrap",
        "8",
        "--cluster-column",
        "judge",
        "--no-progress",
      ]
    )
  assert code == 0
  assert "cluster (Poisson over 8 judge clusters) bootstrap replicas" in out.getvalue()
