"""The pure train step: gradients from the STE regularizer, no recompilation, embedding in a user
module."""

from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from ste_jax import ste_scores
from ste_jax._checks import default_float_dtype
from ste_jax.exact import top_cycle
from ste_jax.models import PairwiseLogit, marginal_tournament, pairwise_logits
from ste_jax.training import (
  Temperatures,
  exponential_anneal,
  fit,
  make_ste_loss,
  make_train_step,
  pairwise_cross_entropy,
  sharpness_regularizer,
  temperature_schedule,
)
from tests.training._data import cycle_comparisons

SMALL = dict(embedding_dim=4, hidden_features=(16,))


def test_sharpness_gradient_reaches_model_parameters():
  model = PairwiseLogit(5, rngs=nnx.Rngs(3), **SMALL)
  graphdef, params = nnx.split(model)

  def regularizer(params, score):
    P = marginal_tournament(nnx.merge(graphdef, params))
    return sharpness_regularizer(getattr(ste_scores(P, tau=0.1, gamma=0.1), score))

  grads_t, grads_u = jax.jit(
    lambda p: (jax.grad(regularizer)(p, "top_cycle"), jax.grad(regularizer)(p, "uncovered"))
  )(params)
  for grads in (grads_t, grads_u):
    leaves = jax.tree.leaves(grads)
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in leaves)
    assert float(jnp.abs(grads["embedding"]["embedding"][...]).max()) > 0
    assert float(jnp.abs(grads["g"]["layers"][0]["kernel"][...]).max()) > 0
    assert float(jnp.abs(grads["g"]["layers"][2]["kernel"][...]).max()) > 0


def test_annealed_regularized_step_does_not_recompile(rng):
  data = cycle_comparisons(rng, 64)
  model = PairwiseLogit(4, rngs=nnx.Rngs(0), **SMALL)
  graphdef, params, rest = nnx.split(model, nnx.Param, ...)
  tx = optax.adam(1e-2)
  opt_state = tx.init(params)
  traces = []
  base = make_ste_loss(sharpness_weight=0.1)

  def counting_loss(model, batch, temperatures):
    traces.append(1)
    return base(model, batch, temperatures)

  schedule = temperature_schedule(exponential_anneal(1.0, 0.01, 10))
  step = make_train_step(graphdef, tx, loss_fn=counting_loss, schedule=schedule, rest=rest)
  params, opt_state, first = step(params, opt_state, data, 0)
  taus = [float(first["tau"])]
  for t in (
    1,
    2,
    7,
  ):  # (jax.no_tracing() cannot be used here: entering it changes the jit cache key)
    params, opt_state, metrics = step(params, opt_state, data, t)
    taus.append(float(metrics["tau"]))
  assert len(traces) == 1
  assert taus == sorted(taus, reverse=True) and taus[0] == 1.0 and taus[-1] < 0.05
  assert np.isfinite(float(metrics["sharpness"])) and float(metrics["grad_norm"]) > 0


class CoreModel(nnx.Module):
  """A user's module: a PairwiseLogit with a learned logit scale, computing its own STE scores."""

  def __init__(self, num_agents: int, *, rngs: nnx.Rngs):
    self.num_agents = num_agents
    self.logit = PairwiseLogit(num_agents, rngs=rngs, **SMALL)
    self.log_scale = nnx.Param(jnp.zeros((), dtype=default_float_dtype()))

  def __call__(self, a, b, x=None):
    return jnp.exp(self.log_scale[...]) * self.logit(a, b, x)

  def core_scores(self, temperatures):
    return ste_scores(marginal_tournament(self), tau=temperatures.tau, gamma=temperatures.gamma)


def test_user_module_with_ste_scores_trains_end_to_end(rng):
  data = cycle_comparisons(rng, 512)
  model = CoreModel(4, rngs=nnx.Rngs(0))

  def loss_fn(model, batch, temperatures):
    ce = pairwise_cross_entropy(pairwise_logits(model, batch), batch.outcome, batch.weight)
    sharp = sharpness_regularizer(model.core_scores(temperatures).top_cycle)
    return ce + 0.05 * sharp, {"cross_entropy": ce, "sharpness": sharp}

  result = fit(
    jax.random.key(0),
    model,
    data,
    loss_fn=loss_fn,
    num_steps=60,
    batch_size=128,
    learning_rate=3e-2,
    tau=exponential_anneal(0.5, 0.05, 60),
    patience=None,
    progress=False,
  )
  ce = np.asarray(result.history.metrics["cross_entropy"])
  assert ce.shape == (60,) and ce[-5:].mean() < ce[:5].mean() - 0.2
  assert np.all(np.isfinite(np.asarray(result.history.metrics["sharpness"])))
  assert float(model.log_scale[...]) != 0.0  # the user's own parameter was trained and written back

  @jax.jit
  def analysis(state):
    m = nnx.merge(graphdef, state)
    return top_cycle(marginal_tournament(m)), m.core_scores(temperature_schedule(0.05)(0)).top_cycle

  graphdef, state = nnx.split(model)
  hard, t_scores = analysis(state)
  np.testing.assert_array_equal(np.asarray(hard), [True, True, True, False])
  assert float(t_scores[:3].min()) > 0.5 > float(t_scores[3])


def test_ste_loss_uses_the_smoothed_reachability_by_default(rng):
  """§6.1: the default loss smooths the reachability at the schedule's ``gamma``; ``0.0`` is the
  exact closure."""
  model = PairwiseLogit(4, rngs=nnx.Rngs(0), **SMALL)
  batch = cycle_comparisons(rng, 32)
  temps = Temperatures(tau=jnp.float32(0.1), gamma=jnp.float32(0.2), gamma_c=jnp.float32(0.1))
  P = marginal_tournament(model)

  def sharpness(reach_gamma):
    return float(
      sharpness_regularizer(
        ste_scores(P, tau=0.1, gamma=0.2, gamma_c=0.1, reach_gamma=reach_gamma).top_cycle
      )
    )

  default = float(make_ste_loss(sharpness_weight=1.0)(model, batch, temps)[1]["sharpness"])
  exact = float(
    make_ste_loss(sharpness_weight=1.0, reach_gamma=0.0)(model, batch, temps)[1]["sharpness"]
  )
  np.testing.assert_allclose(default, sharpness(0.2), rtol=1e-5)
  np.testing.assert_allclose(exact, sharpness(0.0), rtol=1e-5)
  assert abs(sharpness(0.2) - sharpness(0.0)) > 1e-3  # the two settings are told apart
