"""Raw covariate columns from battle records: Chatbot Arena conv_metadata and numeric columns."""

import numpy as np
import pytest

from ste_jax._errors import InputError
from ste_jax.data import arena_style_differences, numeric_covariate_columns


def _meta(tokens_a, tokens_b, **extra):
  meta = {
    "sum_assistant_a_tokens": tokens_a,
    "sum_assistant_b_tokens": tokens_b,
    "header_count_a": {f"h{i}": 1 for i in range(1, 7)},
    "header_count_b": {f"h{i}": 0 for i in range(1, 7)},
    "list_count_a": {"ordered": 2, "unordered": 1},
    "list_count_b": {"ordered": 0, "unordered": 0},
    "bold_count_a": {"**": 1, "__": 1},
    "bold_count_b": {"**": 0, "__": 0},
  }
  meta.update(extra)
  return meta


def test_arena_metadata_gives_fastchat_ratio_features():
  cols = arena_style_differences([_meta(100, 50), _meta(0, 30)], control=("length", "markdown"))
  assert list(cols) == ["length", "header", "list", "bold"]
  np.testing.assert_allclose(cols["length"], [50 / 151, -30 / 31])
  np.testing.assert_allclose(cols["header"], [6 / 7, 6 / 7])  # h1..h6 summed
  np.testing.assert_allclose(cols["list"], [3 / 4, 3 / 4])  # ordered + unordered
  np.testing.assert_allclose(cols["bold"], [2 / 3, 2 / 3])


def test_missing_metadata_is_reported_with_counts_and_lines():
  meta = [_meta(1, 2), None, _meta(3, 4, sum_assistant_b_tokens="many"), _meta(5, 6)]
  with pytest.raises(InputError, match=r"2 of 4 battles lack .* \(first lines 11, 12\)"):
    arena_style_differences(meta, control=("length",), lines=[10, 11, 12, 13], source="b.json")


def test_an_unknown_control_is_refused():
  with pytest.raises(InputError, match="control must name some of length, markdown, position"):
    arena_style_differences([_meta(1, 2)], control=("verbosity",))


def test_numeric_columns_read_differences_or_side_pairs_and_name_bad_rows():
  table = {"len_a": [3, 5, 1], "len_b": [1, 5, 4], "judge": [1, 0, 1], "note": ["x", "2", None]}
  cols = numeric_covariate_columns(table, ["len", "judge"])
  assert cols["len"].tolist() == [2.0, 0.0, -3.0] and cols["judge"].tolist() == [1.0, 0.0, 1.0]
  with pytest.raises(
    InputError, match=r"'note' is non-numeric or missing in 2 of 3 rows \(first lines 2, 4\)"
  ):
    numeric_covariate_columns(table, ["note"], lines=[2, 3, 4])
  with pytest.raises(InputError, match="no covariate column 'style'"):
    numeric_covariate_columns(table, ["style"])


def test_a_judge_column_makes_the_position_control_judge_specific(tmp_path):
  from ste_jax.data import Comparisons, ControlSettings, judge_position_differences
  from ste_jax.data._covariates import covariate_columns

  c = Comparisons.from_arrays([0, 1, 0], [1, 0, 1], [1.0, 0.0, 1.0], agents=("x", "y"))
  path = tmp_path / "battles.csv"
  path.write_text(
    "model_a,model_b,winner,judge\nx,y,model_a,gpt\ny,x,model_b,claude\nx,y,model_a,gpt\n"
  )
  cols = covariate_columns(str(path), c, [], ControlSettings(control=("position",)))
  assert {k: v.tolist() for k, v in cols.items()} == {
    "position:claude": [0.0, 1.0, 0.0],
    "position:gpt": [1.0, 0.0, 1.0],
  }
  one = tmp_path / "one.csv"
  one.write_text(
    "model_a,model_b,winner,judge\nx,y,model_a,gpt\ny,x,model_b,gpt\nx,y,model_a,gpt\n"
  )
  cols = covariate_columns(str(one), c, [], ControlSettings(control=("position",)))
  assert list(cols) == ["position"]  # one judge: the plain first-position column
  with pytest.raises(InputError, match="1 of 3 battles have no judge"):
    judge_position_differences(["gpt", None, "claude"])
