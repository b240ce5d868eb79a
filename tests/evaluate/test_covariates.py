"""Covariates: FastChat's normalization of style features and the checks of bad columns."""

import numpy as np
import pytest

from ste_jax._errors import InputError
from ste_jax.evaluate import normalize_differences, position_difference, style_difference


def test_style_features_are_normalized_as_fastchat_does():
  tokens_a = np.array([100, 0, 250, 40])
  tokens_b = np.array([50, 30, 250, 400])
  r = style_difference(tokens_a, tokens_b)
  # FastChat: (a - b) / (a + b + 1), then (r - mean) / std with the population std.
  expected_ratio = [50 / 151, -30 / 31, 0.0, -360 / 441]
  np.testing.assert_allclose(r, expected_ratio, rtol=1e-12)
  cov = normalize_differences({"length": r, "position": position_difference(4)})
  z = np.asarray(cov.diff, dtype=np.float64)
  assert abs(z[:, 0].mean()) < 1e-6 and abs(z[:, 0].std() - 1) < 1e-6
  assert z[:, 1].tolist() == [1.0] * 4  # the first-position indicator is left as is


def test_a_constant_column_is_refused_with_its_value():
  with pytest.raises(InputError, match=r"'bold' is constant \(2 in all 3 rows\)"):
    normalize_differences({"bold": [2.0, 2.0, 2.0]})


def test_missing_values_are_reported_with_counts_and_first_rows():
  with pytest.raises(
    InputError, match=r"'length' is missing or not finite in 2 of 5 rows \(first rows 1, 3\)"
  ):
    normalize_differences({"length": [0.1, np.nan, 0.2, np.inf, 0.3]}, source="battles.csv")


def test_columns_of_different_lengths_are_refused():
  with pytest.raises(InputError, match="different lengths"):
    normalize_differences({"a": [0.0, 1.0], "b": [0.0, 1.0, 2.0]})
