"""Distinct rows (``ste_jax/data/_distinct.py``): checking each distinct row once, counted as
often as it occurs, gives exactly what checking the rows one by one gives."""

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from ste_jax.data import _distinct, _winner_rows, from_dataframe, load_comparisons
from ste_jax.data._distinct import CodedColumn, distinct_rows, factorize_cells
from ste_jax.data._report import BadRowsWarning


def test_factorize_cells_keeps_types_apart():
  cells = np.array(["x", None, float("nan"), "x", pd.NA, None, "nan"], dtype=object)
  codes, k = factorize_cells(cells)
  assert codes.tolist() == [0, 2, 3, 0, 4, 2, 1] and k == 5
  mixed = np.array([1, 1.0, True, "1", 1], dtype=object)  # equal under ==, not the same cell
  codes, k = factorize_cells(mixed)
  assert len(set(codes[:4].tolist())) == 4 and k == 5
  lists = np.array([["x"], ["x"], "x"], dtype=object)
  assert factorize_cells(lists)[0].tolist() == [0, 1, 2]
  floats = np.array([0.5, float("nan"), 0.5, float("nan")], dtype=object)
  assert factorize_cells(floats)[0].tolist() == [0, 1, 0, 1]
  coded = CodedColumn(np.array([2, 0, 2]), np.array(["a", "b", "c"], dtype=object))
  assert factorize_cells(coded)[0].tolist() == [2, 0, 2]


def test_distinct_rows_groups_equal_rows_and_keeps_apart_rows_alone():
  a = np.array(["x", "y", "x", "x"], dtype=object)
  b = np.array(["y", "x", "y", "y"], dtype=object)
  d = distinct_rows([a, b], apart=np.array([False, False, False, True]))
  assert d.first.tolist() == [0, 1, 3]
  assert d.inverse.tolist() == [0, 1, 0, 2]
  assert d.count.tolist() == [2, 1, 1]
  assert d.expand(np.array([True, False, True])).tolist() == [0, 2, 3]


def _one_by_one(columns, *, apart=None):
  """The oracle: every row its own distinct row (the loader as it checked rows before)."""
  n = len(columns[0])
  return _distinct.DistinctRows(np.arange(n), np.arange(n), np.ones(n, dtype=np.int64))


def _messy_battles(seed: int, num_rows: int) -> pd.DataFrame:
  rng = np.random.default_rng(seed)
  names = np.array(
    ["gpt-4", " gpt-4", "claude\u200b", "llama", "Llama", "mistral", "", None], object
  )
  winners = np.array(
    ["model_a", "model_b", "tie", "tie (bothbad)", "MODEL_A", "a", "bogus", "", None, "gpt-4"],
    object,
  )
  contexts = np.array(["x", "y", "", None, float("nan")], dtype=object)
  weights = np.array([1, 2, 0.5, -1, float("nan"), "abc", None], dtype=object)
  pick = lambda v: v[rng.integers(0, len(v), num_rows)]  # noqa: E731
  return pd.DataFrame(
    {
      "model_a": pick(names),
      "model_b": pick(names),
      "winner": pick(winners),
      "category": pick(contexts),
      "w": pick(weights),
    }
  )


def _load(monkeypatch, *, one_by_one, **kwargs):
  if one_by_one:
    monkeypatch.setattr(_winner_rows, "distinct_rows", _one_by_one)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", BadRowsWarning)
    try:
      out = kwargs.pop("load")(**kwargs)
    except Exception as e:  # noqa: BLE001 - the same refusal is the expected result
      out = repr(e)
  monkeypatch.undo()
  return out


def _same(x, y):
  if isinstance(x, str) or isinstance(y, str):
    assert x == y
    return
  (cx, rx), (cy, ry) = x, y
  for field in ("a", "b", "outcome", "context", "weight"):
    np.testing.assert_array_equal(np.asarray(getattr(cx, field)), np.asarray(getattr(cy, field)))
  assert (cx.agents, cx.contexts) == (cy.agents, cy.contexts)
  assert dataclasses.asdict(rx) == dataclasses.asdict(ry)
  assert rx.summary(max_lines=10**6) == ry.summary(max_lines=10**6)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
  "options",
  [
    dict(context="category"),
    dict(context="category", weight="w"),
    dict(context=False, tie="drop", both_bad="drop"),
    dict(context="category", strict=True),
  ],
)
def test_distinct_rows_give_the_rows_one_by_one(monkeypatch, seed, options):
  frame = _messy_battles(seed, 400)
  kwargs = dict(load=from_dataframe, df=frame, skip_bad_rows=not options.get("strict"), **options)
  _same(
    _load(monkeypatch, one_by_one=False, **kwargs), _load(monkeypatch, one_by_one=True, **kwargs)
  )


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_files_give_the_rows_one_by_one(monkeypatch, tmp_path, fmt):
  frame = _messy_battles(7, 600).drop(columns=["w"])
  frame = frame.astype({"model_a": "string", "model_b": "string", "winner": "string"})
  path = tmp_path / f"battles.{fmt}"
  frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, row_group_size=100)
  kwargs = dict(load=load_comparisons, path=path, skip_bad_rows=True, context="category")
  ours = _load(monkeypatch, one_by_one=False, **kwargs)
  _same(ours, _load(monkeypatch, one_by_one=True, **kwargs))
  assert not isinstance(ours, str) and ours[1].rows_read == 600
  assert ours[1].rows_read == ours[1].rows_used + len(ours[1].rejected)
