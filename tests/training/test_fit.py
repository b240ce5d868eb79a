"""fit(): context-dependent cycle (pairwise model vs Bradley-Terry), determinism, validation."""

import dataclasses
import inspect

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ste_jax import ste_scores
from ste_jax.exact import top_cycle
from ste_jax.models import BradleyTerryLogit, PairwiseLogit, marginal_tournament, pairwise_logits
from ste_jax.training import FitSettings, fit, pairwise_cross_entropy
from tests.training._data import PLANTED_CORE, cycle_comparisons, rps_comparisons

CONTEXTS = np.eye(2, dtype=np.float32)


def _evaluate(graphdef, state, test):
  model = nnx.merge(graphdef, state)
  h = pairwise_logits(model, test, context_features=jnp.asarray(CONTEXTS))
  P = marginal_tournament(model, contexts=jnp.asarray(CONTEXTS), weights=jnp.array([0.75, 0.25]))
  return pairwise_cross_entropy(h, test.outcome, test.weight), P


# statistical (two 150-step fits); fit's mechanics are covered by the fast tests below
@pytest.mark.slow
def test_pairwise_beats_bradley_terry_on_context_dependent_cycle(rng):
  data = rps_comparisons(rng, 6000)
  test = rps_comparisons(rng, 3000)
  losses, tournaments = {}, {}
  for name, cls in (("pairwise", PairwiseLogit), ("bt", BradleyTerryLogit)):
    model = cls(5, num_context_features=2, embedding_dim=8, hidden_features=(32,), rngs=nnx.Rngs(0))
    result = fit(
      jax.random.key(0),
      model,
      data,
      context_features=CONTEXTS,
      num_steps=150,
      batch_size=512,
      learning_rate=2e-2,
      heldout_fraction=0.2,
      progress=False,
    )
    assert result.history.heldout_log_loss.shape[0] >= 1
    graphdef, state = nnx.split(result.model)
    loss, tournaments[name] = jax.jit(_evaluate, static_argnums=0)(graphdef, state, test)
    losses[name] = float(loss)
  # Bayes log-loss is about 0.32; the best Bradley-Terry fit cannot go below about 0.46.
  assert losses["pairwise"] < 0.37, losses
  assert losses["pairwise"] < losses["bt"] - 0.07, losses
  P = tournaments["pairwise"]  # marginal over Q = the context distribution of the data
  hard, s = jax.jit(lambda P: (top_cycle(P), ste_scores(P, tau=0.01)))(P)
  np.testing.assert_array_equal(np.asarray(hard), PLANTED_CORE)
  np.testing.assert_array_equal(np.asarray(s.top_cycle > 0.5), PLANTED_CORE)
  np.testing.assert_array_equal(np.asarray(s.uncovered > 0.5), PLANTED_CORE)


def _fit_small(key, data, seed=0):
  model = PairwiseLogit(4, embedding_dim=4, hidden_features=(16,), rngs=nnx.Rngs(seed))
  return fit(
    key,
    model,
    data,
    num_steps=12,
    batch_size=64,
    heldout_fraction=0.25,
    eval_every=4,
    progress=False,
  )


def test_fit_is_deterministic_per_key_and_anneals(rng):
  data = cycle_comparisons(rng, 256)
  r1 = _fit_small(jax.random.key(1), data)
  r2 = _fit_small(jax.random.key(1), data)
  r3 = _fit_small(jax.random.key(2), data)
  for k, v in r1.history.metrics.items():
    np.testing.assert_array_equal(np.asarray(v), np.asarray(r2.history.metrics[k]), err_msg=k)
  jax.tree.map(
    lambda x, y: np.testing.assert_array_equal(np.asarray(x), np.asarray(y)), r1.params, r2.params
  )
  assert not np.array_equal(
    np.asarray(r1.history.metrics["loss"]), np.asarray(r3.history.metrics["loss"])
  )
  h = r1.history
  assert h.step.shape == (12,) and h.eval_step.tolist() == [4, 8, 12]
  tau = np.asarray(h.metrics["tau"])
  assert tau[0] == pytest.approx(1.0) and np.all(np.diff(tau) < 0)
  assert r1.best_step == int(h.eval_step[int(np.argmin(np.asarray(h.heldout_log_loss)))])
  assert r1.train.num_comparisons + r1.heldout.num_comparisons == 256


def test_fit_validates_inputs(rng):
  data = cycle_comparisons(rng, 32)
  model = PairwiseLogit(4, embedding_dim=4, hidden_features=(16,), rngs=nnx.Rngs(0))
  key = jax.random.key(0)
  with pytest.raises(ValueError, match="typed PRNG key"):
    fit(np.uint32([0, 0]), model, data)
  with pytest.raises(ValueError, match="Comparisons"):
    fit(key, model, np.zeros((4, 4)))
  with pytest.raises(ValueError, match="num_agents=5"):
    fit(key, PairwiseLogit(5, hidden_features=(4,), rngs=nnx.Rngs(0)), data)
  with pytest.raises(ValueError, match="batch_size"):
    fit(key, model, data, batch_size=0)
  with pytest.raises(ValueError, match="heldout_fraction"):
    fit(key, model, data, heldout_fraction=1.0)
  with pytest.raises(ValueError, match="learning_rate"):
    fit(key, model, data, learning_rate=-1.0)
  with pytest.raises(ValueError, match="tau"):
    fit(key, model, data, tau=-1.0)
  with pytest.raises(ValueError, match="sharpness_score"):
    fit(key, model, data, sharpness_score="copeland")
  with pytest.raises(ValueError, match="membership"):
    fit(key, model, data, calibration_weight=1.0)
  with pytest.raises(ValueError, match="context_features"):
    fit(key, model, data, context_features=np.ones((3, 2), np.float32))
  ctx_model = PairwiseLogit(4, num_context_features=2, hidden_features=(4,), rngs=nnx.Rngs(0))
  with pytest.raises(ValueError, match="context features"):
    fit(key, ctx_model, data)


# fit's options before they moved into FitSettings (and the data arguments that stayed): every one
# is still accepted, by the same name, once.
_FIT_PARAMETERS = (
  "num_steps batch_size learning_rate optimizer heldout heldout_fraction context_features "
  "context_weights tau gamma gamma_c sharpness_weight sharpness_score calibration_weight "
  "membership max_path_length reach_gamma loss_fn eval_every patience progress"
).split()


def test_fit_options_are_declared_once():
  fields = [f.name for f in dataclasses.fields(FitSettings)]
  keywords = [
    name
    for name, p in inspect.signature(fit).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
  ]
  assert sorted(fields + keywords) == sorted(_FIT_PARAMETERS)
  assert not set(fields) & set(keywords)
  assert list(inspect.signature(fit).parameters)[:4] == ["key", "model", "data", "settings"]
  defaults = FitSettings()
  assert (defaults.num_steps, defaults.batch_size, defaults.learning_rate) == (500, 1024, 1e-2)
  assert (defaults.heldout_fraction, defaults.patience, defaults.progress) == (0.1, 10, True)


def test_fit_settings_object_equals_keywords_and_overrides_replace(rng):
  data = cycle_comparisons(rng, 256)
  by_keywords = _fit_small(jax.random.key(3), data)
  settings = FitSettings(
    num_steps=12, batch_size=64, heldout_fraction=0.25, eval_every=4, progress=False
  )
  model = PairwiseLogit(4, embedding_dim=4, hidden_features=(16,), rngs=nnx.Rngs(0))
  by_settings = fit(jax.random.key(3), model, data, settings)
  for k, v in by_keywords.history.metrics.items():
    np.testing.assert_array_equal(np.asarray(v), np.asarray(by_settings.history.metrics[k]))
  model = PairwiseLogit(4, embedding_dim=4, hidden_features=(16,), rngs=nnx.Rngs(0))
  shorter = fit(jax.random.key(3), model, data, settings, num_steps=8)
  assert shorter.history.step.shape == (8,) and shorter.history.eval_step.tolist() == [4, 8]
  assert settings.num_steps == 12  # frozen: the override made a new settings object


def test_fit_settings_validate_and_normalize():
  s = FitSettings(num_steps=np.int64(7), learning_rate=np.float32(0.5))
  assert type(s.num_steps) is int and type(s.learning_rate) is float and s.num_steps == 7
  with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
    FitSettings(batch_size=0)
  with pytest.raises(ValueError, match="patience must be an integer >= 1 or None"):
    FitSettings(patience=0)
  with pytest.raises(ValueError, match="sharpness_weight"):
    FitSettings(sharpness_weight=-0.1)
  with pytest.raises(ValueError, match="sharpness_score must be 'top_cycle' or 'uncovered'"):
    FitSettings(sharpness_score="copeland")
  with pytest.raises(dataclasses.FrozenInstanceError):
    s.num_steps = 3  # type: ignore[misc]


def test_fit_refuses_unknown_options(rng):
  data = cycle_comparisons(rng, 32)
  model = PairwiseLogit(4, embedding_dim=4, hidden_features=(16,), rngs=nnx.Rngs(0))
  with pytest.raises(TypeError, match="'num_step' \\(did you mean 'num_steps'\\?\\)"):
    fit(jax.random.key(0), model, data, num_step=3)
  with pytest.raises(TypeError, match="settings must be a FitSettings"):
    fit(jax.random.key(0), model, data, {"num_steps": 3})
