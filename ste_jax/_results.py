"""The result family: frozen dataclasses registered as JAX pytrees.

Every public result of the library (:class:`~ste_jax.STEScores`, the baselines' results, the
bootstrap's intervals, the verdicts, the training history, ...) is declared with
:func:`result_type`. Fields are read by name (``scores.top_cycle``), never by position, and a result
is changed with :func:`dataclasses.replace`. Results are pytrees: they pass through ``jit``,
``vmap`` and ``tree_map``, their fields as children (fields marked :func:`static` are treated as
metadata instead: hashable, not traced).
"""

import dataclasses
from typing import Any, TypeVar

import jax

T = TypeVar("T")

_STATIC = "ste_jax_static"


def static(**kwargs: Any) -> Any:
  """A result field held as pytree metadata (hashable, not traced), e.g. names or a label.

  Args:
    **kwargs: passed to :func:`dataclasses.field` (``default=...`` and the like).

  Returns:
    The field declaration.
  """
  metadata = dict(kwargs.pop("metadata", {}) or {})
  metadata[_STATIC] = True
  return dataclasses.field(metadata=metadata, **kwargs)


def result_type(cls: type[T]) -> type[T]:
  """Declares ``cls`` a frozen dataclass and registers it as a pytree.

  Args:
    cls: a class body with annotated fields (and optional methods).

  Returns:
    The frozen dataclass, registered with :func:`jax.tree_util.register_dataclass`: fields
    declared with :func:`static` are metadata, all others children.

  Example:
    >>> import jax, jax.numpy as jnp
    >>> @result_type
    ... class Pair:
    ...   left: jax.Array
    ...   right: jax.Array
    >>> jax.tree_util.tree_map(lambda x: 2 * x, Pair(jnp.ones(2), jnp.zeros(2))).left
    Array([2., 2.], dtype=float32)
  """
  cls = dataclasses.dataclass(frozen=True)(cls)
  fields = dataclasses.fields(cls)
  meta = [f.name for f in fields if f.metadata.get(_STATIC)]
  data = [f.name for f in fields if not f.metadata.get(_STATIC)]
  return jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)


def as_dict(result: Any) -> dict[str, Any]:
  """The fields of a result as a ``{name: value}`` dict (values not copied, one level deep).

  Args:
    result: an instance of a :func:`result_type` class.

  Returns:
    ``{field name: value}`` in declaration order.
  """
  return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
