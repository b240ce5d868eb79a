"""Eager validation: each problem it knows raises a clear ValueError naming the argument."""

import numpy as np
import pytest

from ste_jax import validate_tournament
from ste_jax._validation import validate_path_length, validate_symmetric_prior, validate_temperature

GOOD = np.array([[0.5, 0.7, 0.3], [0.3, 0.5, 0.7], [0.7, 0.3, 0.5]])


def test_accepts_valid_and_batches():
  assert validate_tournament(GOOD) is not None
  validate_tournament(np.stack([GOOD, GOOD.T]))
  validate_tournament(np.full((1, 1), 0.5))


@pytest.mark.parametrize(
  "mutate, message",
  [
    (lambda P: P[:, :2], "shape"),
    (lambda P: P[0], "shape"),
    (lambda P: np.where(np.arange(9).reshape(3, 3) == 1, np.nan, P), "NaN or Inf"),
    (lambda P: np.where(np.arange(9).reshape(3, 3) == 1, np.inf, P), "NaN or Inf"),
    (
      lambda P: np.where(
        np.arange(9).reshape(3, 3) == 1, 1.2, np.where(np.arange(9).reshape(3, 3) == 3, -0.2, P)
      ),
      r"outside \[0, 1\]",
    ),
    (lambda P: np.where(np.arange(9).reshape(3, 3) == 1, 0.8, P), "not complementary"),
    (lambda P: P + 0.1 * np.eye(3), "diagonal"),
    (lambda P: P.astype(bool), "real-valued"),
    (lambda P: np.zeros((0, 0)), "at least one agent"),
  ],
)
def test_each_problem_raises(mutate, message):
  with pytest.raises(ValueError, match=message):
    validate_tournament(mutate(GOOD.copy()))


def test_message_names_argument_and_entry():
  P = GOOD.copy()
  P[0, 1] = 0.9
  with pytest.raises(ValueError, match=r"Q is not complementary: Q\[0, 1\] \+ Q\[1, 0\]"):
    validate_tournament(P, name="Q")


def test_temperatures_and_path_length():
  assert validate_temperature(0.1, "tau") == 0.1
  for bad in [0.0, -1.0, float("nan"), float("inf")]:
    with pytest.raises(ValueError, match="tau"):
      validate_temperature(bad, "tau")
  assert validate_temperature(0.0, "reach_gamma", allow_zero=True) == 0.0
  validate_path_length(None)
  validate_path_length(3)
  for bad in [0, -2, 1.5, True]:
    with pytest.raises(ValueError, match="max_path_length"):
      validate_path_length(bad)


@pytest.mark.parametrize(
  "prior",
  [(1.0, 2.0), (0.0, 0.0), (-1.0, -1.0), (float("inf"),) * 2, (float("nan"),) * 2, (1.0,), "ab", 3],
)
def test_validate_symmetric_prior_rejects_bad_priors(prior):
  with pytest.raises(ValueError, match="my_prior"):
    validate_symmetric_prior(prior, "my_prior")


def test_validate_symmetric_prior_accepts_and_converts():
  assert validate_symmetric_prior((1, 1)) == (1.0, 1.0)
  assert validate_symmetric_prior(np.array([0.5, 0.5])) == (0.5, 0.5)
