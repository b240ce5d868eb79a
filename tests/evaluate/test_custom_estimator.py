"""A user-defined estimator (a Flax PairwiseLogit) through leaderboard() and suggest_pairs()."""

import dataclasses

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import ste_jax
from ste_jax.data import Comparisons
from ste_jax.evaluate import (
  FittedTournament,
  LeaderboardSettings,
  ResamplingSettings,
  TournamentEstimator,
  core_table,
  replica_cores,
)
from tests.oracles import brute_uncovered_set, nx_top_cycle


@dataclasses.dataclass(frozen=True, eq=False)  # eq=False: hashed by identity (a static argument)
class NeuralEstimator(TournamentEstimator):
  """The tournament of a user's PairwiseLogit, fine-tuned on (resampled) comparisons."""

  graphdef: nnx.GraphDef
  params: nnx.State
  num_steps: int = 30
  learning_rate: float = 0.05

  name = "neural"
  redraws_outcomes = True  # edges are win probabilities the replicas refit

  def _tune(self, params, comparisons):
    opt = optax.adam(self.learning_rate)

    def loss(p):
      h = nnx.merge(self.graphdef, p)(comparisons.a, comparisons.b)
      nll = optax.sigmoid_binary_cross_entropy(h, comparisons.outcome)
      return jnp.sum(comparisons.weight * nll) / jnp.sum(comparisons.weight)

    def step(_, carry):
      p, s = carry
      with jax.numpy_dtype_promotion("standard"):  # optax's Adam: python float ** int32 count
        updates, s = opt.update(jax.grad(loss)(p), s, p)
      return optax.apply_updates(p, updates), s

    return jax.lax.fori_loop(0, self.num_steps, step, (params, opt.init(params)))[0]

  def _tournament(self, params, n):
    model = nnx.merge(self.graphdef, params)
    return ste_jax.models.marginal_tournament(model, num_agents=n)

  def fit(self, key, comparisons):
    del key
    params = jax.jit(self._tune)(self.params, comparisons)
    return FittedTournament(self._tournament(params, comparisons.num_agents), params)

  def replica_edges(self, state, comparisons):
    return self._tournament(self._tune(state, comparisons), comparisons.num_agents)

  def conventions(self):
    return "tournament of a fine-tuned PairwiseLogit; hard relation P > 1/2"


def _cycle_on_top():
  """0 > 1 > 2 > 0 on top, each beating 3 and 4, 3 > 4; 8 games a pair, no upsets."""
  wins = {(0, 1), (1, 2), (2, 0), (3, 4)} | {(i, j) for i in range(3) for j in (3, 4)}
  a, b = zip(*sorted(wins))
  return Comparisons.from_arrays(
    list(a) * 8, list(b) * 8, [1.0] * (8 * len(a)), agents=list("vwxyz")
  )


@pytest.fixture(scope="module")
def estimator():
  model = ste_jax.PairwiseLogit(5, embedding_dim=4, hidden_features=(8,), rngs=nnx.Rngs(0))
  graphdef, params = nnx.split(model)
  return NeuralEstimator(graphdef, params, num_steps=150)


def test_a_custom_estimator_drives_the_leaderboard(estimator):
  c = _cycle_on_top()
  lb = ste_jax.leaderboard(jax.random.key(0), c, estimator, num_replicas=4, tau=0.05)
  table = lb.table()
  P = np.asarray(estimator.fit(jax.random.key(1), c).edges, np.float64)
  # Independent oracles on the estimator's own tournament: networkx reachability, brute covering.
  assert table.columns["hard_tc"].tolist() == nx_top_cycle(P).tolist() == [True] * 3 + [False] * 2
  assert table.columns["hard_uc"].tolist() == [bool(x) for x in brute_uncovered_set(P)]
  soft = ste_jax.ste_scores(jnp.asarray(P, jnp.float32), tau=0.05, gamma=0.05)
  np.testing.assert_allclose(table.columns["tc_score"], np.asarray(soft.top_cycle), atol=1e-4)
  np.testing.assert_allclose(table.P, P, atol=1e-6)
  assert table.estimator == "neural" and table.model is None
  conventions = table.conventions()
  assert "neural (requested): tournament of a fine-tuned PairwiseLogit" in conventions
  assert "parametric bootstrap" in conventions  # redraws_outcomes: auto resampling is parametric
  assert np.all((table.columns["p_tc"] >= 0) & (table.columns["p_tc"] <= 1))
  frame = lb.to_frame()
  assert frame.attrs["estimator"] == "neural" and len(frame) == 5


def test_a_custom_estimator_gives_suggest_pairs_its_plausible_cores(estimator):
  c = _cycle_on_top()
  resampling = ResamplingSettings(num_replicas=3)
  got = ste_jax.suggest_pairs(jax.random.key(2), c, k=2, estimator=estimator, resampling=resampling)
  k_cores, k_draw = jax.random.split(jax.random.key(2))  # what suggest_pairs does with its key
  key = jax.random.key(3)
  cores = replica_cores(k_cores, c, estimator, resampling)
  assert cores.shape == (3, 5) and cores.dtype == bool
  want = ste_jax.suggest_pairs(k_draw, c, k=2, plausible_cores=cores)
  np.testing.assert_array_equal(np.asarray(got.pairs), np.asarray(want.pairs))
  np.testing.assert_allclose(np.asarray(got.probability), np.asarray(want.probability))
  with pytest.raises(ValueError, match="not both"):
    ste_jax.suggest_pairs(key, c, k=2, estimator=estimator, plausible_cores=cores)
  with pytest.raises(TypeError, match="Comparisons"):
    ste_jax.suggest_pairs(key, np.ones((5, 5)), k=2, estimator=estimator)


def test_an_estimator_that_cannot_redraw_outcomes_refuses_parametric_resampling(estimator):
  PlainNeural = type("PlainNeural", (NeuralEstimator,), {"redraws_outcomes": False})
  plain = PlainNeural(estimator.graphdef, estimator.params, num_steps=5)
  with pytest.raises(ValueError, match="parametric.*neural"):
    core_table(
      jax.random.key(0), _cycle_on_top(), plain, LeaderboardSettings(resampling="parametric")
    )


@dataclasses.dataclass(frozen=True)
class MarginEstimator(TournamentEstimator):
  """Count-based (no fitted state): edges ``max(0, 2 P - 1)`` of the win rates ``P``."""

  name = "margin"
  ties_connect = False

  def fit(self, key, comparisons):
    return FittedTournament(self.replica_edges(None, comparisons))

  def replica_edges(self, state, comparisons):
    P = ste_jax.data.win_rate_tournament(ste_jax.data.pair_counts(comparisons))
    return jnp.maximum(2 * P - 1, 0.0)

  def conventions(self):
    return "win-rate margins"

  def soft_scores(self, edges, *, tau, gamma, **options):
    del tau
    return ste_jax.ste_scores_from_edges(edges, gamma=gamma, **options)


def test_a_count_based_custom_estimator_is_a_bootstrap_score_fn():
  """``ste_score_fn(estimator=...)`` calls the protocol and forwards the operator options."""
  c = _cycle_on_top()
  f = ste_jax.stats.ste_score_fn(
    estimator=MarginEstimator(), tau=0.05, gamma_c=0.04, max_path_length=2, reach_gamma=0.02
  )
  got = jax.jit(f)(c)
  P = np.asarray(ste_jax.data.win_rate_tournament(c))
  want = ste_jax.ste_scores_from_edges(
    jnp.asarray(np.maximum(2 * P - 1, 0)),
    gamma=0.05,
    gamma_c=0.04,
    max_path_length=2,
    reach_gamma=0.02,
  )
  np.testing.assert_allclose(got.top_cycle, want.top_cycle, atol=1e-6)
  np.testing.assert_allclose(got.uncovered, want.uncovered, atol=1e-6)
  replicas = ste_jax.stats.bootstrap_scores(jax.random.key(0), c, f, num_replicas=2)
  assert replicas.top_cycle.shape == (2, 5)
