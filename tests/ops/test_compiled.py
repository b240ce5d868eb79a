"""Tests for ``ste_jax/ops/_compiled.py``: operators that jit themselves when called eagerly."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ste_jax
from ste_jax._checks import is_static_zero
from ste_jax.ops._compiled import compiled_entry
from tests import oracles


def _toy():
  """A decorated toy operator that records each trace: ``(fn, traces)``."""
  traces = []

  @compiled_entry(temperatures=("t",), static=("k",))
  def toy(x, *, t, k=1):
    traces.append((is_static_zero(t), k, isinstance(x, jax.core.Tracer)))
    x = jnp.asarray(x, jnp.float32)
    return x * k if is_static_zero(t) else x * k + t

  return toy, traces


def test_traces_once_per_static_configuration_not_per_temperature():
  toy, traces = _toy()
  x = np.arange(3.0)
  np.testing.assert_allclose(toy(x, t=0.1), x + 0.1, rtol=1e-6)
  np.testing.assert_allclose(toy(x, t=0.2), x + 0.2, rtol=1e-6)  # a new temperature: no new trace
  assert traces == [(False, 1, True)]
  np.testing.assert_array_equal(toy(x, t=0), x)  # a literal zero is static: the exact branch
  np.testing.assert_array_equal(toy(x, t=0.0, k=2), 2 * x)
  assert traces[1:] == [(True, 1, True), (True, 2, True)]
  np.testing.assert_allclose(toy([[1, 2]], t=0.5), [[1.5, 2.5]])  # nested lists become one array
  with ste_jax.ops.native_kernels(False):  # a trace-time option is part of the cache key
    toy(x, t=0.1)
  assert len(traces) == 5


def test_bad_temperatures_raise_before_tracing_and_odd_inputs_run_as_written():
  toy, traces = _toy()
  for bad in (-0.1, float("nan"), np.inf):
    with pytest.raises(ValueError, match="t"):
      toy(np.ones(2), t=bad)
  assert traces == []
  with pytest.raises((TypeError, ValueError)):  # strings: the function's own conversion raises
    toy(["a", "b"], t=0.1)
  assert traces == [(False, 1, False)]  # run as written, not traced


def test_nested_in_jit_grad_and_vmap():
  toy, _ = _toy()
  x = jnp.arange(3.0)
  np.testing.assert_allclose(jax.jit(lambda x, t: toy(x, t=t))(x, 0.3), x + 0.3, rtol=1e-6)
  np.testing.assert_allclose(jax.grad(lambda t: toy(x, t=t).sum())(0.3), 3.0)
  np.testing.assert_allclose(
    jax.vmap(lambda t: toy(x, t=t))(jnp.array([0.1, 0.2])), np.stack([x + 0.1, x + 0.2]), rtol=1e-6
  )


def _eager_cases():
  """``(fn, args, kwargs)`` of every decorated operator on one 7-agent tournament with ties
  (float64)."""
  rng = np.random.default_rng(3)
  P = jnp.asarray(oracles.random_tournament(rng, 7, tie_prob=0.2))
  D = ste_jax.ops.soft_majority_edges(P, tau=0.1)
  return P, [
    (ste_jax.ste_scores, (P,), dict(tau=0.07)),
    (ste_jax.ops.soft_cover_violation, (D,), dict(gamma_c=0.0)),
    (ste_jax.ste_scores, (P,), dict(tau=0.0)),
    (ste_jax.ste_scores_from_edges, (D,), dict(gamma=0.05, max_path_length=3)),
    (ste_jax.ops.soft_reachability, (D,), dict(gamma=0.1, max_path_length=2)),
    (ste_jax.ops.soft_cover_scores, (D,), dict(gamma_c=0.05)),
    (ste_jax.ops.soft_uncovered_score, (D,), dict(gamma_c=0.3)),
  ]


def _check_eager(cases):
  for fn, args, kwargs in cases:
    got, expect = fn(*args, **kwargs), fn.__wrapped__(*args, **kwargs)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expect)):
      np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=fn.__name__)


@pytest.mark.slow  # the undecorated functions run op by op: about 4 s
def test_eager_operators_equal_their_undecorated_functions_all_entries(x64):
  _check_eager(_eager_cases()[1][2:])


def test_eager_operators_equal_their_undecorated_functions(x64):
  P, cases = _eager_cases()
  _check_eager(
    cases[:2]
  )  # the scores (soft) and the hard cover kernel; every entry in the slow test
  M = P - P.T
  for fn, args, kwargs in [
    (ste_jax.ops.soft_maximal_lottery, (M,), dict(temperature=0.2)),
    (ste_jax.ops.alpha_rank, (P,), dict(alpha=3.0, population_size=7)),
  ]:
    np.testing.assert_allclose(fn(*args, **kwargs), fn.__wrapped__(*args, **kwargs), rtol=1e-10)
  with pytest.raises(ValueError, match="temperature"):  # positive: a concrete zero array raises
    ste_jax.ops.soft_maximal_lottery(M, temperature=jnp.float64(0.0))
  counts = jnp.asarray([[0.0, 8.0], [2.0, 0.0]])
  np.testing.assert_allclose(
    ste_jax.data.posterior_edges(counts, prior=(1, 1)),
    [[0.0, 1.0 - 2.0 * 0.032714843750], [0.0, 0.0]],
    rtol=1e-9,
  )
