"""Bootstrap driver (vmap = loop, keys, batching, sharding) and the Table 5 summaries."""

import itertools
import pathlib
import textwrap

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
import numpy as np
import pytest

import ste_jax
from ste_jax import stats
from ste_jax.data import Comparisons, pair_counts, posterior_edges, win_rate_tournament
from ste_jax.stats import _bootstrap as bs
from tests.conftest import tol
from tests.simulated_devices import run_on_cpu_devices

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _comparisons(n=6, m=240, seed=0, weight=None) -> Comparisons:
  """Random comparisons with a planted 3-cycle on top, some ties and some missing pairs."""
  rng = np.random.default_rng(seed)
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  strength = np.linspace(1.0, 0.0, n)
  p = 0.5 + 0.4 * np.tanh(3 * (strength[a] - strength[b]))
  outcome = (rng.random(m) < p).astype(np.float32)
  outcome[rng.random(m) < 0.1] = 0.5
  return Comparisons.from_arrays(a, b, outcome, agents=[f"m{i}" for i in range(n)], weight=weight)


def _weights(c):
  return c.weight


def _wins(c):
  return pair_counts(c).wins


POSTERIOR = bs.ste_score_fn(tau=0.01)


# --------------------------------------------------------------------------------------------
# The driver


def test_vmap_equals_a_loop_over_the_same_replica_keys():
  c = _comparisons()
  r = 5
  got = bs.bootstrap_scores(jax.random.key(7), c, POSTERIOR, num_replicas=r)
  keys = jax.random.split(jax.random.key(7), r)
  single = jax.jit(lambda k, c: POSTERIOR(bs.resample_comparisons(k, c)))  # one replica
  loop = [single(keys[i], c) for i in range(r)]
  assert got.top_cycle.shape == got.uncovered.shape == (r, c.num_agents)
  for field in ("top_cycle", "uncovered"):
    want = np.stack([np.asarray(getattr(s, field)) for s in loop])
    np.testing.assert_allclose(np.asarray(getattr(got, field)), want, atol=tol(jnp.float32))
  # the replicas really differ (the resampling is not a no-op)
  assert np.ptp(np.asarray(got.uncovered), axis=0).max() > 1e-3


@pytest.mark.parametrize("method", ["multinomial", "poisson"])
def test_weights_match_resample_comparisons(method):
  c = _comparisons(m=50)
  got = bs.bootstrap_scores(jax.random.key(3), c, _weights, num_replicas=4, method=method)
  keys = jax.random.split(jax.random.key(3), 4)
  want = np.stack(
    [np.asarray(bs.resample_comparisons(keys[i], c, method=method).weight) for i in range(4)]
  )
  np.testing.assert_array_equal(np.asarray(got), want)


def test_deterministic_per_key():
  c = _comparisons(m=100)
  first = bs.bootstrap_scores(jax.random.key(0), c, _weights, num_replicas=8)
  again = bs.bootstrap_scores(jax.random.key(0), c, _weights, num_replicas=8)
  other = bs.bootstrap_scores(jax.random.key(1), c, _weights, num_replicas=8)
  np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
  assert not np.array_equal(np.asarray(first), np.asarray(other))
  # distinct replicas within one run (no key shared between replicas)
  assert len({tuple(row) for row in np.asarray(first).tolist()}) == 8


def test_a_key_is_consumed_once():
  c = _comparisons(m=20)
  key = jax.random.key(0)
  bs.bootstrap_scores(key, c, _weights, num_replicas=2)
  with pytest.raises(jax.errors.KeyReuseError):
    bs.bootstrap_scores(key, c, _weights, num_replicas=2)


def test_multinomial_weights_sum_to_the_number_of_rows():
  m = 300
  base = np.where(np.arange(m) % 3 == 0, 2.0, 1.0).astype(np.float32)  # weighted rows
  c = _comparisons(m=m, weight=base)
  w = np.asarray(bs.bootstrap_scores(jax.random.key(1), c, _weights, num_replicas=64))
  mult = w / base
  np.testing.assert_array_equal(mult, np.round(mult))  # integer multiplicities times the weight
  np.testing.assert_array_equal(mult.sum(axis=1), m)
  assert mult.min() >= 0
  # each row is drawn Binomial(m, 1/m) times: mean 1, variance (1 - 1/m)
  assert abs(mult.mean() - 1.0) < 1e-6
  assert abs(mult.var() - (1 - 1 / m)) < 0.05


def test_poisson_weights_have_mean_one():
  m = 500
  c = _comparisons(m=m)
  w = np.asarray(
    bs.bootstrap_scores(jax.random.key(2), c, _weights, num_replicas=200, method="poisson")
  )
  np.testing.assert_array_equal(w, np.round(w))
  assert w.min() >= 0
  # 1e5 Poisson(1) draws: mean and variance 1 within ~5 standard errors
  assert abs(w.mean() - 1.0) < 0.02
  assert abs(w.var() - 1.0) < 0.03
  assert len(set(w.sum(axis=1).tolist())) > 1  # totals vary, unlike the multinomial bootstrap


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_batch_size_gives_the_same_result(batch_size):
  c = _comparisons()
  r = 10
  want = bs.bootstrap_scores(jax.random.key(5), c, _wins, num_replicas=r)
  got = bs.bootstrap_scores(jax.random.key(5), c, _wins, num_replicas=r, batch_size=batch_size)
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5)


def test_batch_size_bounds_memory():
  c = _comparisons(m=20_000)
  keys = jax.random.split(jax.random.key(0), 64)

  def temp_bytes(batch_size):
    compiled = bs._bootstrap.lower(
      keys, c, [], score_fn=_wins, method="multinomial", batch_size=batch_size, mesh=None, axes=()
    ).compile()
    return compiled.memory_analysis().temp_size_in_bytes

  assert temp_bytes(4) * 4 < temp_bytes(None)


def test_single_device_mesh_matches_no_mesh():
  c = _comparisons()
  mesh = Mesh(np.array(jax.devices()[:1]), ("replicas",))
  want = bs.bootstrap_scores(jax.random.key(4), c, _wins, num_replicas=5)
  got = bs.bootstrap_scores(jax.random.key(4), c, _wins, num_replicas=5, mesh=mesh, batch_size=2)
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5)


_SHARDED_SCRIPT = textwrap.dedent(
  """
    import json, sys
    import jax, numpy as np
    from jax.sharding import Mesh
    sys.path.insert(0, {root!r})
    from tests.stats.test_bootstrap import _comparisons, _weights, POSTERIOR
    from ste_jax.stats import bootstrap_scores

    assert jax.device_count() == 4, jax.devices()
    c = _comparisons()
    out = {{}}
    with jax.debug_key_reuse(True):
      explicit = jax.make_mesh((4,), ("replicas",))  # Explicit axes (jax.make_mesh's default)
      s = bootstrap_scores(jax.random.key(11), c, POSTERIOR, num_replicas=10, mesh=explicit)
      out["top_cycle"] = np.asarray(s.top_cycle).tolist()
      out["uncovered"] = np.asarray(s.uncovered).tolist()
      auto = Mesh(np.array(jax.devices()), ("replicas",))
      w = bootstrap_scores(
        jax.random.key(11), c, _weights, num_replicas=10, mesh=auto, batch_size=2
      )
      out["weights"] = np.asarray(w).tolist()
      w8 = bootstrap_scores(jax.random.key(11), c, _weights, num_replicas=8, mesh=auto)
      out["weights8"] = np.asarray(w8).tolist()
      out["devices8"] = len(w8.sharding.device_set)
      out["spec8"] = str(w8.sharding.spec)
    print(json.dumps(out))
    """
)


@pytest.mark.slow  # a subprocess with four CPU devices, about 10 s on 2 cores
def test_sharded_over_four_cpu_devices_equals_single_device():
  got = run_on_cpu_devices(_SHARDED_SCRIPT.format(root=str(ROOT)), devices=4, timeout=300)

  c = _comparisons()
  s = bs.bootstrap_scores(jax.random.key(11), c, POSTERIOR, num_replicas=10)
  w = bs.bootstrap_scores(jax.random.key(11), c, _weights, num_replicas=10)
  np.testing.assert_allclose(
    np.array(got["top_cycle"]), np.asarray(s.top_cycle), atol=tol(jnp.float32)
  )
  np.testing.assert_allclose(
    np.array(got["uncovered"]), np.asarray(s.uncovered), atol=tol(jnp.float32)
  )
  np.testing.assert_array_equal(np.array(got["weights"]), np.asarray(w))  # padded: 10 -> 12
  w8 = bs.bootstrap_scores(jax.random.key(11), c, _weights, num_replicas=8)
  np.testing.assert_array_equal(np.array(got["weights8"]), np.asarray(w8))
  assert got["devices8"] == 4  # the replicas stay spread over the four devices
  assert "replicas" in got["spec8"]


def test_equal_score_fns_share_one_compilation():
  c = _comparisons(m=30)
  f1, f2 = bs.ste_score_fn(tau=0.02), bs.ste_score_fn(tau=0.02)
  assert f1 == f2 and hash(f1) == hash(f2) and f1 != bs.ste_score_fn(tau=0.03)
  bs.bootstrap_scores(jax.random.key(0), c, f1, num_replicas=2)
  before = bs._bootstrap._cache_size()
  bs.bootstrap_scores(jax.random.key(1), c, f2, num_replicas=2)
  assert bs._bootstrap._cache_size() == before


@pytest.mark.parametrize(
  "kwargs, match",
  [
    (dict(num_replicas=0), "num_replicas"),
    (dict(num_replicas=2.0), "num_replicas"),
    (dict(num_replicas=True), "num_replicas"),
    (dict(num_replicas=2, method="jackknife"), "method"),
    (dict(num_replicas=2, batch_size=0), "batch_size"),
    (dict(num_replicas=2, batch_size=1.5), "batch_size"),
  ],
)
def test_bad_arguments_raise_eagerly(kwargs, match):
  with pytest.raises(ValueError, match=match):
    bs.bootstrap_scores(jax.random.key(0), _comparisons(m=10), _weights, **kwargs)


def test_bad_key_comparisons_score_fn_or_mesh_raise():
  c = _comparisons(m=10)
  with pytest.raises(TypeError, match="PRNG key"):
    bs.bootstrap_scores(0, c, _weights, num_replicas=2)
  with pytest.raises(ValueError, match="scalar"):
    bs.bootstrap_scores(jax.random.split(jax.random.key(0), 2), c, _weights, num_replicas=2)
  with pytest.raises(TypeError, match="Comparisons"):
    bs.bootstrap_scores(jax.random.key(0), np.zeros(3), _weights, num_replicas=2)
  with pytest.raises(TypeError, match="callable"):
    bs.bootstrap_scores(jax.random.key(0), c, "scores", num_replicas=2)
  with pytest.raises(TypeError, match="Mesh"):
    bs.bootstrap_scores(jax.random.key(0), c, _weights, num_replicas=2, mesh="cpu")
  mesh = Mesh(np.array(jax.devices()[:1]), ("replicas",))
  with pytest.raises(ValueError, match="mesh_axis"):
    bs.bootstrap_scores(jax.random.key(0), c, _weights, num_replicas=2, mesh=mesh, mesh_axis="x")


# --------------------------------------------------------------------------------------------
# The STE score function


def test_ste_score_fn_posterior_is_the_documented_pipeline():
  c = _comparisons()
  got = jax.jit(bs.ste_score_fn(tau=0.02))(c)
  want = jax.jit(
    lambda c: ste_jax.ste_scores_from_edges(posterior_edges(pair_counts(c).wins), gamma=0.02)
  )(c)
  np.testing.assert_allclose(
    np.asarray(got.top_cycle), np.asarray(want.top_cycle), atol=tol(jnp.float32)
  )
  np.testing.assert_allclose(
    np.asarray(got.uncovered), np.asarray(want.uncovered), atol=tol(jnp.float32)
  )


def test_ste_score_fn_winrate_is_the_documented_pipeline():
  c = _comparisons()
  got = jax.jit(bs.ste_score_fn(estimator="winrate", tau=0.05, gamma=0.03))(c)
  want = jax.jit(lambda c: ste_jax.ste_scores(win_rate_tournament(c), tau=0.05, gamma=0.03))(c)
  np.testing.assert_allclose(
    np.asarray(got.top_cycle), np.asarray(want.top_cycle), atol=tol(jnp.float32)
  )
  np.testing.assert_allclose(
    np.asarray(got.uncovered), np.asarray(want.uncovered), atol=tol(jnp.float32)
  )


def test_ste_score_fn_estimator_settings_are_the_documented_pipeline():
  """The estimator's prior, missing value and tie policy reach the counts and the edges."""
  from ste_jax.evaluate import PosteriorEdgeEstimator, WinRateEstimator

  c = _comparisons(m=60)  # some pairs never compared
  got = jax.jit(bs.ste_score_fn(estimator=PosteriorEdgeEstimator(prior=(1.0, 1.0)), tau=0.02))(c)
  want = ste_jax.ste_scores_from_edges(
    posterior_edges(pair_counts(c).wins, prior=(1.0, 1.0)), gamma=0.02
  )
  np.testing.assert_allclose(got.top_cycle, want.top_cycle, atol=tol(jnp.float32))
  est = WinRateEstimator(tie_policy="drop")
  got = jax.jit(bs.ste_score_fn(estimator=est, tau=0.05, gamma_c=0.04, max_path_length=2))(c)
  P = win_rate_tournament(pair_counts(c, tie_policy="drop"))
  want = ste_jax.ste_scores(P, tau=0.05, gamma=0.05, gamma_c=0.04, max_path_length=2)
  np.testing.assert_allclose(got.uncovered, want.uncovered, atol=tol(jnp.float32))
  P = WinRateEstimator(missing=0.2).replica_edges(None, c)
  np.testing.assert_array_equal(P, win_rate_tournament(pair_counts(c), missing=0.2))
  assert float(jnp.min(P + P.T)) < 1  # some pair never compared: 0.2 both ways
  assert bs.ste_score_fn(estimator="winrate") == bs.ste_score_fn(estimator=WinRateEstimator())


@pytest.mark.parametrize("estimator", ["posterior", "winrate"])
def test_ste_score_fn_by_context_scores_each_context_on_its_own_rows(estimator):
  """Row ``k`` of a by-context score is the score of context ``k``'s rows alone."""
  rng = np.random.default_rng(5)
  m, n = 90, 5
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  outcome = rng.choice([0.0, 0.5, 1.0], m)
  context = rng.integers(0, 3, m)
  c = Comparisons.from_arrays(a, b, outcome, context=context, weight=rng.integers(1, 4, m))
  f = bs.ste_score_fn(estimator=estimator, tau=0.05, by_context=True)
  got = jax.jit(f)(c)
  assert got.top_cycle.shape == (3, n)
  for k in range(3):
    rows = context == k
    sub = Comparisons.from_arrays(
      a[rows], b[rows], outcome[rows], weight=np.asarray(c.weight)[rows], agents=c.agents
    )
    want = bs.ste_score_fn(estimator=estimator, tau=0.05)(sub)
    np.testing.assert_allclose(got.top_cycle[k], want.top_cycle, atol=tol(jnp.float32))
    np.testing.assert_allclose(got.uncovered[k], want.uncovered, atol=tol(jnp.float32))


@pytest.mark.parametrize(
  "kwargs, match",
  [
    (dict(estimator="bt"), "estimator"),
    (dict(estimator=3), "estimator"),
    (dict(tau=0.0), "tau"),
    (dict(gamma=-1.0), "gamma"),
    (dict(max_path_length=0), "max_path_length"),
  ],
)
def test_ste_score_fn_validates(kwargs, match):
  with pytest.raises((ValueError, TypeError), match=match):
    bs.ste_score_fn(**kwargs)


def test_estimator_settings_are_validated():
  from ste_jax.evaluate import PosteriorEdgeEstimator, WinRateEstimator

  with pytest.raises(ValueError, match="prior"):
    PosteriorEdgeEstimator(prior=(1.0, 2.0))
  with pytest.raises(ValueError, match="tie_policy"):
    PosteriorEdgeEstimator(tie_policy="ignore")
  with pytest.raises(ValueError, match="missing"):
    WinRateEstimator(missing=2.0)


# --------------------------------------------------------------------------------------------
# Summaries


def test_inclusion_frequency_top_k_with_ties_by_hand():
  scores = jnp.array(
    [
      [4.0, 3.0, 2.0, 1.0],  # core {0, 1}
      [1.0, 1.0, 1.0, 0.0],  # three tied for two places: 2/3 each
      [3.0, 2.0, 2.0, 2.0],  # 0, then three tied for one place: 1/3 each
    ]
  )
  got = stats.inclusion_frequency(scores, core_size=2)
  want = np.array([1 + 2 / 3 + 1, 1 + 2 / 3 + 1 / 3, 2 / 3 + 1 / 3, 1 / 3]) / 3
  np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)
  np.testing.assert_allclose(float(jnp.sum(got)), 2.0, atol=1e-6)
  # traced core size, same result
  jitted = jax.jit(lambda s, k: stats.inclusion_frequency(s, core_size=k))(scores, 2)
  np.testing.assert_allclose(np.asarray(jitted), want, atol=1e-6)


def test_inclusion_frequency_tie_tolerance(x64):
  scores = jnp.array([[2.0, 1.0 + 1e-13, 1.0, 0.0], [2.0, 1.0 + 1e-9, 1.0, 0.0]], dtype=jnp.float64)
  got = stats.inclusion_frequency(scores, core_size=2)
  # replica 1: agents 1 and 2 tie (gap 1e-13 <= 1e-12): 1/2 each; replica 2: agent 1 is ahead
  np.testing.assert_allclose(np.asarray(got), [1.0, 0.75, 0.25, 0.0], atol=1e-12)
  assert got.dtype == jnp.float64


def test_inclusion_frequency_threshold_and_batch_axes():
  scores = jnp.array([[[0.9, 0.5, 0.2]], [[0.6, 0.7, 0.5]]])  # (R=2, contexts=1, n=3)
  got = stats.inclusion_frequency(scores, threshold=0.5)  # strict: 0.5 is out
  np.testing.assert_allclose(np.asarray(got), [[1.0, 0.5, 0.0]])
  with pytest.raises(ValueError, match="exactly one"):
    stats.inclusion_frequency(scores, core_size=1, threshold=0.5)
  with pytest.raises(ValueError, match="core_size"):
    stats.inclusion_frequency(scores, core_size=4)


def test_core_masks():
  scores = jnp.array([[3.0, 1.0, 1.0, 1.0], [0.0, 2.0, 2.0, 1.0]])
  np.testing.assert_array_equal(
    np.asarray(stats.core_masks(None, scores, core_size=2)), [[1, 1, 0, 0], [0, 1, 1, 0]]
  )
  np.testing.assert_array_equal(
    np.asarray(stats.core_masks(None, scores, threshold=1.0)), [[1, 0, 0, 0], [0, 1, 1, 0]]
  )
  # random tie-breaking: exactly k members, tied agents chosen uniformly
  flat = jnp.zeros((4000, 4))
  masks = np.asarray(stats.core_masks(jax.random.key(0), flat, core_size=1))
  np.testing.assert_array_equal(masks.sum(axis=1), 1)
  np.testing.assert_allclose(masks.mean(axis=0), 0.25, atol=0.03)


def test_pairwise_jaccard_by_hand_and_against_a_loop(rng):
  masks = jnp.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]], dtype=bool)
  # pairs: (0,1) 1/3, (0,2) 1, (0,3) 0, (1,2) 1/3, (1,3) 0, (2,3) 0
  np.testing.assert_allclose(
    float(stats.pairwise_jaccard(masks)), (1 / 3 + 1 + 1 / 3) / 6, atol=1e-6
  )
  assert float(stats.pairwise_jaccard(jnp.zeros((3, 5), dtype=bool))) == 1.0  # empty cores agree
  random = rng.random((7, 2, 9)) < 0.4  # (R, contexts, n)
  want = []
  for ctx in range(2):
    vals = []
    for i, j in itertools.combinations(range(7), 2):
      x, y = random[i, ctx], random[j, ctx]
      union = (x | y).sum()
      vals.append(1.0 if union == 0 else (x & y).sum() / union)
    want.append(np.mean(vals))
  np.testing.assert_allclose(
    np.asarray(stats.pairwise_jaccard(random.astype(np.int32))), want, atol=1e-6
  )
  with pytest.raises(ValueError, match="two replicas"):
    stats.pairwise_jaccard(masks[:1])


def test_top1_entropy_of_a_known_distribution():
  scores = jnp.array(
    [
      [3.0, 1.0, 0.0],  # agent 0
      [3.0, 1.0, 0.0],  # agent 0
      [0.0, 2.0, 1.0],  # agent 1
      [0.0, 2.0, 2.0],  # tie: 1/2 to agents 1 and 2
    ]
  )
  p = np.array([0.5, 0.375, 0.125])
  want = -np.sum(p * np.log(p))
  np.testing.assert_allclose(float(stats.top1_entropy(scores)), want, atol=1e-6)
  np.testing.assert_allclose(float(stats.top1_entropy(scores, base=2)), want / np.log(2), atol=1e-6)
  assert float(stats.top1_entropy(jnp.tile(jnp.array([[0.0, 1.0, 0.5]]), (5, 1)))) == 0.0
  np.testing.assert_allclose(float(stats.top1_entropy(jnp.eye(4))), np.log(4), atol=1e-6)


def test_percentile_intervals_match_numpy(rng):
  x = rng.normal(size=(200, 5)).astype(np.float32)
  interval = stats.percentile_intervals(jnp.asarray(x), level=0.9)
  lo, hi = interval.lower, interval.upper
  np.testing.assert_allclose(np.asarray(lo), np.percentile(x, 5, axis=0), atol=1e-5)
  np.testing.assert_allclose(np.asarray(hi), np.percentile(x, 95, axis=0), atol=1e-5)
  scores = ste_jax.STEScores(top_cycle=jnp.asarray(x), uncovered=jnp.asarray(-x))
  ci = stats.percentile_intervals(scores)
  assert isinstance(ci.lower, ste_jax.STEScores)
  np.testing.assert_allclose(
    np.asarray(ci.upper.uncovered), -np.percentile(x, 2.5, axis=0), atol=1e-5
  )
  with pytest.raises(ValueError, match="level"):
    stats.percentile_intervals(jnp.asarray(x), level=1.0)


def test_summaries_jit():
  scores = jnp.array([[3.0, 1.0, 0.0], [3.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 2.0, 2.0]])

  @jax.jit
  def summaries(s):
    masks = stats.core_masks(None, s, core_size=1)
    return (
      stats.top1_entropy(s),
      stats.pairwise_jaccard(masks),
      stats.percentile_intervals(s, level=0.5),
    )

  entropy, jac, interval = summaries(scores)
  lo, hi = interval.lower, interval.upper
  p = np.array([0.5, 0.375, 0.125])
  np.testing.assert_allclose(float(entropy), -np.sum(p * np.log(p)), atol=1e-6)
  # top-1 cores (ties to the lower index): {0}, {0}, {1}, {1}: two of six pairs agree
  np.testing.assert_allclose(float(jac), 2 / 6, atol=1e-6)
  np.testing.assert_allclose(
    np.asarray(lo), np.percentile(np.asarray(scores), 25, axis=0), atol=1e-6
  )
  np.testing.assert_allclose(
    np.asarray(hi), np.percentile(np.asarray(scores), 75, axis=0), atol=1e-6
  )


def test_float64_weights_stay_float64(x64):
  c = _comparisons(m=40)
  c = Comparisons.from_arrays(
    np.asarray(c.a), np.asarray(c.b), np.asarray(c.outcome, dtype=np.float64), weight=np.ones(40)
  )
  w = bs.bootstrap_scores(jax.random.key(0), c, _weights, num_replicas=3, batch_size=2)
  assert w.dtype == jnp.float64
  np.testing.assert_array_equal(np.asarray(w).sum(axis=1), 40.0)


# About 10 s on 2 cores; test_equal_score_fns_share_one_compilation runs by default.
@pytest.mark.slow
def test_a_new_temperature_does_not_recompile_the_bootstrap():
  """STEScoreFn's temperatures are traced: other temperatures -> no new compilation."""
  c = _comparisons(m=12)
  first = bs.bootstrap_scores(
    jax.random.key(4), c, bs.ste_score_fn(tau=0.02, gamma_c=0.05), num_replicas=3
  )
  compiled = bs._bootstrap._cache_size()
  again = bs.bootstrap_scores(
    jax.random.key(4), c, bs.ste_score_fn(tau=0.3, gamma_c=0.2), num_replicas=3
  )
  assert bs._bootstrap._cache_size() == compiled
  expect = jax.vmap(lambda k: bs.ste_score_fn(tau=0.3, gamma_c=0.2)(bs.resample_comparisons(k, c)))(
    jax.random.split(jax.random.key(4), 3)
  )
  np.testing.assert_allclose(again.uncovered, expect.uncovered, atol=1e-6)
  assert not np.allclose(first.uncovered, again.uncovered)
