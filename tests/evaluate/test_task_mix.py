"""Task-mix robustness: bounds hold at random mixes of the ball, and the extreme mixes reproduce
the reported scores through the library's own win-rate estimator on reweighted comparisons."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import InputError, OptionError, exact, ste_scores
from ste_jax.data import Comparisons
from ste_jax.evaluate import WinRateEstimator, task_mix_robustness
from ste_jax.evaluate._task_mix import project_ball


def _tasks(seed: int, n: int = 4, K: int = 3) -> Comparisons:
  """Tasks with different strengths: each task favours other agents."""
  rng = np.random.default_rng(seed)
  a, b, o, ctx = [], [], [], []
  for k in range(K):
    strength = rng.normal(size=n) * 1.5
    for i in range(n):
      for j in range(i + 1, n):
        for _ in range(int(rng.integers(1, 5))):
          p = 1 / (1 + np.exp(strength[j] - strength[i]))
          a.append(i), b.append(j), ctx.append(k)
          o.append(0.5 if rng.random() < 0.1 else float(rng.random() < p))
  return Comparisons.from_arrays(
    a, b, o, agents=[f"m{i}" for i in range(n)], context=ctx, contexts=[f"t{k}" for k in range(K)]
  )


def _reweighted_scores(c: Comparisons, w: np.ndarray, tau: float):
  """Oracle: comparison weights ``w_k / N_k`` per task, the library's win-rate fit, its scores."""
  context = np.asarray(c.context)
  size = np.bincount(context, weights=np.asarray(c.weight), minlength=c.num_contexts)
  weight = np.asarray(w)[context] / size[context]
  reweighted = Comparisons.from_arrays(
    c.a, c.b, c.outcome, agents=c.agents, context=c.context, contexts=c.contexts, weight=weight
  )
  est = WinRateEstimator()
  edges = est.fit(jax.random.key(0), reweighted).edges
  weak, _ = est.hard_relations(edges)
  return np.asarray(ste_scores(edges, tau=tau, gamma=tau).top_cycle), np.asarray(
    exact.reach_all(weak)
  )


def _random_in_ball(rng, K, radius):
  q = rng.dirichlet(np.ones(K))
  u = np.full(K, 1 / K)
  tv = np.abs(q - u).sum() / 2
  t = rng.uniform(0, 1) * min(1.0, radius / max(tv, 1e-12))
  return u + t * (q - u)


@pytest.mark.parametrize("seed", [0, 1])
def test_bounds_hold_at_random_mixes_and_the_mixes_reproduce_them(seed):
  c = _tasks(seed)
  radius, tau = 0.25, 0.1
  r = task_mix_robustness(jax.random.key(seed), c, radius=radius, tau=tau, steps=60)
  lo, hi = np.asarray(r.score_min), np.asarray(r.score_max)
  u = np.full(3, 1 / 3)
  base, hard = _reweighted_scores(c, u, tau)
  np.testing.assert_allclose(np.asarray(r.score), base, atol=1e-4)
  np.testing.assert_array_equal(np.asarray(r.hard), hard)
  assert np.all(lo <= base + 1e-6) and np.all(base <= hi + 1e-6)
  rng = np.random.default_rng(seed)
  for _ in range(40):
    w = _random_in_ball(rng, 3, radius)
    s, _ = _reweighted_scores(c, w, tau)
    assert np.all(lo <= s + 2e-3) and np.all(s <= hi + 2e-3), (w, s, lo, hi)
  for i in range(c.num_agents):
    for weights, value, member in (
      (r.weights_min[i], lo[i], r.hard_at_min[i]),
      (r.weights_max[i], hi[i], r.hard_at_max[i]),
    ):
      w = np.asarray(weights, dtype=np.float64)
      assert abs(w.sum() - 1) < 1e-5 and w.min() >= -1e-6
      assert np.abs(w - u).sum() / 2 <= radius + 1e-5
      s, h = _reweighted_scores(c, w, tau)
      assert abs(s[i] - value) < 1e-4 and h[i] == bool(member)


def test_projection_lands_in_the_ball():
  rng = np.random.default_rng(5)
  u = jnp.full(4, 0.25)
  for _ in range(20):
    x = project_ball(jnp.asarray(rng.normal(size=4)), u, 0.3)
    assert abs(float(x.sum()) - 1) < 1e-5 and float(x.min()) >= -1e-6
    assert float(jnp.abs(x - u).sum()) / 2 <= 0.3 + 1e-5


def test_radius_zero_is_the_uniform_mix():
  c = _tasks(2)
  r = task_mix_robustness(jax.random.key(0), c, radius=0.0, steps=5)
  np.testing.assert_allclose(np.asarray(r.score_min), np.asarray(r.score), atol=1e-6)
  np.testing.assert_allclose(np.asarray(r.score_max), np.asarray(r.score), atol=1e-6)


def test_bad_input():
  c = _tasks(3)
  with pytest.raises(OptionError, match="radius"):
    task_mix_robustness(jax.random.key(0), c, radius=1.5)
  one = Comparisons.from_arrays([0, 1], [1, 2], [1.0, 0.0])
  with pytest.raises(InputError, match="two tasks"):
    task_mix_robustness(jax.random.key(0), one, radius=0.1)
