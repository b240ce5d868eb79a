"""Per-comparison covariates of the model estimator: the feature differences ``f(a, x) - f(b, x)``.

A controlled model adds ``beta . (f(a, x) - f(b, x))`` to the logit of ``a`` beating ``b``
(:mod:`ste_jax.evaluate._controlled`). The features are carried beside the comparisons, row by
row, as a :class:`Covariates` pytree: ``diff`` is an ``(m, d)`` array aligned with the rows of a
:class:`~ste_jax.data.Comparisons` and ``names`` its static column names, so the comparisons keep
their five leaves and every function of them still jits once.

*Normalization* (that of FastChat's style control, ``construct_style_matrices``): a style feature
with values ``f_a`` and ``f_b`` on the two sides of a row becomes the ratio
``(f_a - f_b) / (f_a + f_b + 1)`` (:func:`style_difference`), and each column of differences is
then standardized over the rows, ``(r - mean(r)) / std(r)`` with the population standard
deviation (:func:`normalize_differences`). ``beta`` is hence the change in logit per standard
deviation of the normalized difference. A presentation-order (first-position) column is a
constant ``+1`` (``a`` was shown first) and is not standardized: its coefficient is the
first-position advantage in logits (:func:`position_difference`); so are the judge-specific
indicators ``position:J`` (1 on the battles judge ``J`` saw), whose coefficients are each judge's
own first-position advantage.
"""

from collections.abc import Mapping, Sequence
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._checks import default_float_dtype
from ste_jax._errors import InputError
from ste_jax.data._covariates import position_difference as position_difference

POSITION = "position"


@dataclasses.dataclass(frozen=True, eq=False)
class Covariates:
  """Feature differences of each comparison row, a pytree (``diff`` a leaf, ``names`` static).

  Compared by identity (``eq=False``), hence hashable: an estimator holding one stays a valid
  static argument of compiled functions.

  Attributes:
    diff: ``(m, d)`` float, row ``r`` the normalized differences ``f(a_r, x_r) - f(b_r, x_r)``.
    names: static tuple of ``d`` distinct column names.
  """

  diff: jax.Array
  names: tuple[str, ...]

  @property
  def num_features(self) -> int:
    """``d`` (static)."""
    return len(self.names)


jax.tree_util.register_dataclass(Covariates, data_fields=["diff"], meta_fields=["names"])


def style_difference(value_a: jax.typing.ArrayLike, value_b: jax.typing.ArrayLike) -> np.ndarray:
  """FastChat's ratio ``(f_a - f_b) / (f_a + f_b + 1)`` of a non-negative style count (eager).

  Args:
    value_a, value_b: ``(m,)`` the feature on each side (token counts, markdown counts).

  Returns:
    ``(m,)`` float64 differences in ``(-1, 1)``.

  Example:
    >>> [float(x) for x in style_difference([3, 0], [0, 0])]
    [0.75, 0.0]
  """
  fa = np.asarray(value_a, dtype=np.float64)
  fb = np.asarray(value_b, dtype=np.float64)
  return (fa - fb) / (fa + fb + 1.0)


def normalize_differences(
  raw: Mapping[str, jax.typing.ArrayLike],
  *,
  standardize: Sequence[str] | None = None,
  dtype: jax.typing.DTypeLike | None = None,
  source: str = "covariates",
) -> Covariates:
  """:class:`Covariates` from raw difference columns, standardized as FastChat does.

  Args:
    raw: column name -> ``(m,)`` raw differences (e.g. :func:`style_difference`), every column of
      the same length.
    standardize: the columns to standardize, ``(r - mean) / std`` (population std); default every
      column but :data:`POSITION` (a constant ``+1`` indicator) and the judge-specific
      ``position:J`` indicators (:func:`~ste_jax.data._covariates.judge_position_differences`),
      kept as they are.
    dtype: float dtype of ``diff`` (default float32, or float64 under x64).
    source: what the columns came from, named in error messages (a file, an argument).

  Returns:
    :class:`Covariates` with ``diff`` of shape ``(m, len(raw))`` in the order of ``raw``.

  Raises:
    InputError: no columns, columns of different lengths, a non-finite value (with the count and
      the first rows), or a standardized column that is constant (no variation to control for).

  Example:
    >>> cov = normalize_differences({"length": [0.5, -0.5, 0.0], "position": [1.0, 1.0, 1.0]})
    >>> cov.names, [round(float(x), 4) for x in cov.diff[:, 0]], float(cov.diff[0, 1])
    (('length', 'position'), [1.2247, -1.2247, 0.0], 1.0)
  """
  names = tuple(str(k) for k in raw)
  if not names:
    raise InputError(f"{source}: no covariate columns.")
  if len(set(names)) != len(names):
    raise InputError(f"{source}: duplicate covariate names {names}.")
  cols = [np.asarray(raw[k], dtype=np.float64).reshape(-1) for k in raw]
  lengths = {c.size for c in cols}
  if len(lengths) != 1:
    raise InputError(f"{source}: covariate columns of different lengths {sorted(lengths)}.")
  if standardize is None:
    todo = set(n for n in names if n != POSITION and not n.startswith(POSITION + ":"))
  else:
    todo = set(standardize)
  unknown = todo - set(names)
  if unknown:
    raise InputError(f"{source}: standardize names unknown columns {sorted(unknown)}.")
  out = []
  for name, col in zip(names, cols):
    bad = ~np.isfinite(col)
    if bad.any():
      rows = np.flatnonzero(bad)
      raise InputError(
        f"{source}: covariate {name!r} is missing or not finite in {rows.size} of {col.size} rows "
        f"(first rows {', '.join(str(int(r)) for r in rows[:5])})."
      )
    if name in todo:
      std = float(np.std(col))
      if not std > 0:
        raise InputError(
          f"{source}: covariate {name!r} is constant ({float(col[0]) if col.size else 0.0:g} in "
          f"all {col.size} rows): nothing to control for."
        )
      col = (col - np.mean(col)) / std
    out.append(col)
  dtype = default_float_dtype() if dtype is None else jnp.dtype(dtype)
  return Covariates(diff=jnp.asarray(np.stack(out, axis=1), dtype=dtype), names=names)
