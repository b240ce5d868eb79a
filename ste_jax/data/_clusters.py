"""Per-row cluster ids (a prompt, judge or conversation column) beside loaded comparisons.

The cluster bootstrap (:func:`~ste_jax.evaluate.bootstrap_hard_memberships` with ``clusters``)
needs one id per comparison. The loaders already carry one per-row label through every schema's
row filtering, the *context*; so the ids are read by loading the same data once more with the
cluster column as the context, and taking that load's context indices. The two loads must yield
the same rows (same agents, outcomes and weights, in the same order); a schema that forms its
comparisons per context (``tasks``, ``inspect``, ``lm-eval``: pairs of agents on one task) would
not, and is refused.
"""

import dataclasses
import os
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InputError
from ._comparisons import Comparisons
from ._settings import LoadSettings

if TYPE_CHECKING:
  import pandas as pd


def load_cluster_ids(
  data: "pd.DataFrame | str | os.PathLike",
  column: str,
  comparisons: Comparisons,
  settings: LoadSettings | None = None,
  *,
  skip_bad_rows: bool = False,
) -> np.ndarray:
  """``(m,)`` int64 cluster index of each comparison: the value of ``column`` on its raw row.

  Args:
    data: the data frame or file ``comparisons`` was loaded from.
    column: the cluster column (e.g. ``"prompt"``, ``"worker"``, ``"question_id"``).
    comparisons: the comparisons loaded from ``data`` with ``settings``.
    settings: the :class:`LoadSettings` of that load (default: its defaults).
    skip_bad_rows: as that load's.

  Returns:
    Indices into the sorted distinct values of ``column`` (an empty cell is one cluster,
    ``(none)``).

  Raises:
    InputError: ``column`` is missing, or the rows loaded with it differ from ``comparisons``.

  Example:
    >>> import pandas as pd
    >>> from ste_jax.data import from_dataframe
    >>> df = pd.DataFrame({"a": ["x", "y", "x"], "b": ["y", "z", "z"],
    ...                    "winner": ["a", "b", "a"], "judge": ["j2", "j1", "j2"]})
    >>> c, _ = from_dataframe(df)
    >>> load_cluster_ids(df, "judge", c).tolist()
    [1, 0, 1]
  """
  from ._tabular import load_rows  # pylint: disable=g-import-not-at-top

  settings = LoadSettings() if settings is None else settings
  if settings.schema in ("tasks", "inspect", "lm-eval"):
    raise InputError(
      f"cluster column {column!r}: the {settings.schema} schema forms its comparisons per "
      "context, so its rows cannot carry a cluster id (pass clusters= with your own ids)."
    )
  if isinstance(data, (str, os.PathLike)) or hasattr(data, "columns"):
    columns = getattr(data, "columns", None)
    if columns is not None and column not in columns:
      raise InputError(f"cluster column {column!r} is not a column of the data.")
  tagged = dataclasses.replace(settings, context=column, contexts=None)
  try:
    clustered, _ = load_rows(data, tagged, skip_bad_rows=skip_bad_rows, caller="cluster_column")
  except InputError as e:
    raise InputError(f"cluster column {column!r}: {e}") from None
  same = (
    clustered.num_comparisons == comparisons.num_comparisons
    and clustered.agents == comparisons.agents
    and all(
      np.array_equal(np.asarray(getattr(clustered, f)), np.asarray(getattr(comparisons, f)))
      for f in ("a", "b", "outcome", "weight")
    )
  )
  if not same:
    raise InputError(
      f"cluster column {column!r}: the rows loaded with it differ from the comparisons (a "
      "schema whose comparisons depend on the context column); pass clusters= with your own ids."
    )
  return np.asarray(clustered.context, dtype=np.int64)
