"""Eager entry points check the values of concrete inputs; traced inputs are trusted.

``ste_scores``, ``ste_scores_from_edges``, ``top_cycle`` and ``uncovered_set`` raise
``ste_jax.InputError`` naming the argument and the first bad entry (``docs/design/validation.md``);
``validate=False`` and tracers (``jit``, ``vmap``, ``grad``) skip the check.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ste_jax
from ste_jax.ops import ste_scores, ste_scores_from_edges
from tests import oracles

_P = oracles.random_tournament(np.random.default_rng(11), 5, margin=0.05)

_CALLS = {
  "ste_scores": lambda P, **kw: ste_scores(P, tau=0.1, **kw),
  "top_cycle": ste_jax.top_cycle,
  "uncovered_set": ste_jax.uncovered_set,
}


def _with(P, index, value):
  Q = np.array(P, np.float64)
  Q[index] = value
  return Q


_BAD = {
  "inf": ((0, 1), np.inf, r"P contains NaN or Inf \(P\[0, 1\] = inf\)"),
  "nan": ((2, 3), np.nan, r"P contains NaN or Inf \(P\[2, 3\] = nan\)"),
  "above one": ((1, 4), 1.5, r"P has values outside \[0, 1\] \(P\[1, 4\] = 1.5\)"),
  "negative": ((3, 0), -0.25, r"P has values outside \[0, 1\] \(P\[3, 0\] = -0.25\)"),
  "not complementary": ((0, 2), None, r"P is not complementary: P\[0, 2\] \+ P\[2, 0\]"),
}


@pytest.mark.parametrize("bad", sorted(_BAD))
@pytest.mark.parametrize("call", sorted(_CALLS))
def test_invalid_values_raise_naming_the_first_bad_entry(call, bad):
  index, value, match = _BAD[bad]
  if value is None:  # P[0, 2] + P[2, 0] = 1.05 (an error of 5e-2, far above the tolerance)
    value = _P[index] + 0.05
  Q = _with(_P, index, value)
  if bad == "negative":  # keep the mirror entry in range, so only this entry is out of [0, 1]
    Q[0, 3] = 1.0
  with pytest.raises(ste_jax.InputError, match=match):
    _CALLS[call](Q)
  with pytest.raises(ValueError):  # InputError is a ValueError
    _CALLS[call](jnp.asarray(Q, jnp.float32))


def test_the_first_bad_entry_of_a_batch_is_named_with_its_batch_index():
  P = np.stack([_P, _P, _P])
  P[2, 1, 3] = P[2, 1, 3] + 0.1
  with pytest.raises(ste_jax.InputError, match=r"P\[2, 1, 3\] \+ P\[2, 3, 1\]"):
    ste_scores(P, tau=0.1)
  good = ste_scores(P[:2], tau=0.1)  # a valid batch passes
  assert good.top_cycle.shape == (2, 5)


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_valid_and_slightly_off_inputs_are_accepted(call):
  """Within ``validate_tournament``'s tolerance ``1e-6``, with any diagonal (never read), as
  float32 win rates from counts, and as a 0/1 adjacency of a tournament."""
  rng = np.random.default_rng(12)
  off = _P + rng.uniform(-4e-7, 4e-7, size=_P.shape)
  wins = rng.integers(0, 20, size=(5, 5)).astype(np.float32) + 1
  rates = wins / (wins + wins.T)
  zero_diagonal = np.array(_P)
  np.fill_diagonal(zero_diagonal, 0.0)
  adjacency = (_P > 0.5).astype(np.int32)
  for P in (off, rates, zero_diagonal, adjacency, jnp.asarray(_P, jnp.float32)):
    _CALLS[call](P)


def test_validate_false_skips_the_check_and_tracers_are_trusted():
  Q = _with(_P, (1, 2), np.nan)
  assert ste_jax.top_cycle(Q, validate=False).shape == (5,)
  ste_scores(Q, tau=0.1, validate=False)
  jax.jit(ste_jax.top_cycle)(Q)
  jax.jit(lambda P: ste_scores(P, tau=0.1).top_cycle)(Q)
  jax.vmap(lambda P: ste_scores(P, tau=0.1).uncovered)(np.stack([Q, Q]))
  jax.grad(lambda P: jnp.sum(ste_scores(P, tau=0.1).uncovered))(jnp.asarray(Q, jnp.float32))


def test_the_check_does_not_change_the_scores():
  a = ste_scores(_P, tau=0.1)
  b = ste_scores(_P, tau=0.1, validate=False)
  np.testing.assert_array_equal(a.top_cycle, b.top_cycle)
  np.testing.assert_array_equal(a.uncovered, b.uncovered)


def test_edges_are_checked_for_range_and_finiteness_not_complementarity():
  D = np.asarray(ste_jax.ops.soft_majority_edges(_P, tau=0.2))
  posterior_like = np.clip(D + 0.05, 0.0, 1.0)  # D + D^T != 1: fine for edges
  ste_scores_from_edges(posterior_like, gamma=0.1)
  with pytest.raises(ste_jax.InputError, match=r"D has values outside \[0, 1\] \(D\[0, 1\] = 1.5"):
    ste_scores_from_edges(_with(D, (0, 1), 1.5), gamma=0.1)
  with pytest.raises(ste_jax.InputError, match=r"D contains NaN or Inf \(D\[4, 0\] = nan"):
    ste_scores_from_edges(_with(D, (4, 0), np.nan), gamma=0.1)
  ste_scores_from_edges(_with(D, (4, 0), np.nan), gamma=0.1, validate=False)


def test_shape_and_temperature_errors_keep_their_messages():
  with pytest.raises(ValueError, match="P must be a square matrix"):
    ste_scores(np.ones((2, 3)), tau=0.1)
  with pytest.raises(ste_jax.OptionError, match=r"^tau must be a finite number >= 0"):
    ste_scores(_P, tau=-1.0)
  with pytest.raises(ste_jax.OptionError, match=r"^gamma_c must be a finite number >= 0"):
    ste_scores(_P, tau=0.1, gamma_c=float("inf"))
