"""The :class:`Comparisons` pytree: pairwise outcomes as fixed-shape arrays.

A data set of ``m`` pairwise comparisons between ``n`` agents is stored as five arrays of length
``m`` (the data leaves of a pytree) plus the agent and context names (static metadata), and, for
comparisons read from a file, a sixth: the input line of each comparison. Because
the shapes are fixed and the names are static, every function of a ``Comparisons`` jits once, and a
bootstrap can resample it by changing ``weight`` alone.
"""

from collections.abc import Sequence
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ste_jax._checks import default_float_dtype

DEFAULT_CONTEXT = "all"


@dataclasses.dataclass(frozen=True)
class Comparisons:
  """Pairwise comparisons between agents, as a JAX pytree.

  Row ``i`` says that agent ``a[i]`` met agent ``b[i]`` in context ``context[i]`` with outcome
  ``outcome[i]`` (1 = ``a`` won, 0 = ``b`` won, 1/2 = tie; values in between are fractional
  wins), counted ``weight[i]`` times.

  Build one with :meth:`from_arrays` (validated) or with the tabular loaders
  (:func:`~ste_jax.data.from_dataframe`, :func:`~ste_jax.data.load_comparisons`,
  :func:`~ste_jax.data.from_task_results`), also available as the static methods
  ``Comparisons.from_dataframe`` and ``Comparisons.from_task_results``. Those two are attached by
  :mod:`ste_jax.data` (its ``__init__``), since the loaders build ``Comparisons`` and this module
  must not import them. The raw constructor does no validation, because JAX also calls it with
  tracers when it rebuilds the pytree.

  Attributes:
    a: int32 ``(m,)`` index of the first agent, in ``[0, num_agents)``.
    b: int32 ``(m,)`` index of the second agent, ``b != a``.
    outcome: float ``(m,)`` in ``[0, 1]``: the share of the comparison won by ``a``.
    context: int32 ``(m,)`` context (category, task family) index in ``[0, num_contexts)``; all
      zeros when the data has no contexts.
    weight: float ``(m,)``, same dtype as ``outcome``, ``>= 0``: how many times the row counts
      (ones by default; bootstrap resampling changes only this leaf).
    agents: static tuple of ``num_agents`` agent names; index ``i`` is ``agents[i]``.
    contexts: static tuple of context names (``("all",)`` when there are none).
    line: optional int32 ``(m,)``: where each comparison is in its input, numbered as the load
      report numbers rows (:class:`~ste_jax.data.LoadReport`; a CSV's header is line 1, a data
      frame's first row is 1); every comparison of one row (a ``counts`` row) has that row's line.
      Set by the row loaders, ``None`` otherwise (from arrays, per-sample schemas that pair rows);
      kept by changes of ``weight`` or ``context`` (``dataclasses.replace``), dropped by functions
      that build new rows (merging into cells, subsets).
  """

  a: jax.Array
  b: jax.Array
  outcome: jax.Array
  context: jax.Array
  weight: jax.Array
  agents: tuple[str, ...]
  contexts: tuple[str, ...]
  line: jax.Array | None = None

  @property
  def num_agents(self) -> int:
    """Number of agents ``n`` (static)."""
    return len(self.agents)

  @property
  def num_contexts(self) -> int:
    """Number of contexts (static)."""
    return len(self.contexts)

  @property
  def num_comparisons(self) -> int:
    """Number of rows ``m`` (static: the length of the arrays)."""
    return int(self.a.shape[-1])

  @classmethod
  def from_arrays(
    cls,
    a: jax.typing.ArrayLike,
    b: jax.typing.ArrayLike,
    outcome: jax.typing.ArrayLike,
    *,
    agents: Sequence[str] | None = None,
    context: jax.typing.ArrayLike | None = None,
    contexts: Sequence[str] | None = None,
    weight: jax.typing.ArrayLike | None = None,
    line: jax.typing.ArrayLike | None = None,
  ) -> "Comparisons":
    """Builds validated comparisons from index arrays.

    Args:
      a: integer array-like ``(m,)``: first agent of each comparison.
      b: integer array-like ``(m,)``: second agent, different from ``a``.
      outcome: array-like ``(m,)`` with values in ``[0, 1]`` (1 = ``a`` won, 0 = ``b`` won,
        1/2 = tie). A floating dtype is kept; integers or booleans become the default float
        dtype (float32, or float64 under ``jax_enable_x64``).
      agents: agent names, one per index. Default: ``("0", "1", ..., str(max index))``.
      context: optional integer array-like ``(m,)`` of context indices. Default: all zeros.
      contexts: context names. Default: ``("all",)`` without ``context``, else
        ``("0", ..., str(max context))``.
      weight: optional array-like ``(m,)`` of finite weights ``>= 0``, cast to ``outcome``'s
        dtype. Default: ones.
      line: optional integer array-like ``(m,)`` of input line numbers ``>= 1`` (the loaders
        set it). Default: ``None``.

    Returns:
      A :class:`Comparisons`.

    Raises:
      ValueError: on shape mismatches, indices out of range, self-comparisons (``a == b``),
        outcomes outside ``[0, 1]`` or not finite, negative or non-finite weights, line numbers
        below 1, duplicate names, or no comparisons and no ``agents`` to define the agent set.
    """
    a_np = _as_index_array(a, "a")
    b_np = _as_index_array(b, "b")
    m = a_np.shape[0]
    out_np = np.asarray(outcome)
    if out_np.ndim != 1 or out_np.shape[0] != m or b_np.shape[0] != m:
      raise ValueError(
        f"a, b and outcome must be 1-D arrays of the same length; got shapes {a_np.shape}, "
        f"{b_np.shape} and {out_np.shape}."
      )
    if out_np.dtype == object or not (
      np.issubdtype(out_np.dtype, np.number) or out_np.dtype == bool
    ):
      raise ValueError(f"outcome must be numeric, got dtype {out_np.dtype}.")
    out_f = out_np.astype(np.float64)
    bad = ~np.isfinite(out_f) | (out_f < 0) | (out_f > 1)
    if bad.any():
      i = int(np.argmax(bad))
      raise ValueError(f"outcome must be finite and in [0, 1]; outcome[{i}] = {out_f[i]}.")

    if agents is None:
      if m == 0:
        raise ValueError("no comparisons: pass `agents` to build an empty Comparisons.")
      agents = tuple(str(i) for i in range(int(max(a_np.max(), b_np.max())) + 1))
    agents = _as_names(agents, "agents")
    n = len(agents)
    for name, idx in (("a", a_np), ("b", b_np)):
      bad = (idx < 0) | (idx >= n)
      if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}[{i}] = {idx[i]} is not a valid agent index in [0, {n}).")
    same = a_np == b_np
    if same.any():
      i = int(np.argmax(same))
      raise ValueError(f"self-comparison at row {i}: a = b = {a_np[i]} ({agents[a_np[i]]!r}).")

    if context is None:
      ctx_np = np.zeros(m, dtype=np.int64)
      contexts = (DEFAULT_CONTEXT,) if contexts is None else contexts
    else:
      ctx_np = _as_index_array(context, "context")
      if ctx_np.shape[0] != m:
        raise ValueError(f"context must have shape ({m},), got {ctx_np.shape}.")
      if contexts is None:
        top = int(ctx_np.max()) + 1 if m else 1
        contexts = tuple(str(i) for i in range(top))
    contexts = _as_names(contexts, "contexts")
    bad = (ctx_np < 0) | (ctx_np >= len(contexts))
    if bad.any():
      i = int(np.argmax(bad))
      raise ValueError(
        f"context[{i}] = {ctx_np[i]} is not a valid context index in [0, {len(contexts)})."
      )

    out_j = jnp.asarray(outcome)
    if not jnp.issubdtype(out_j.dtype, jnp.floating):
      out_j = out_j.astype(default_float_dtype())
    if weight is None:
      w_j = jnp.ones((m,), dtype=out_j.dtype)
    else:
      w_np = np.asarray(weight)
      if w_np.shape != (m,) or not (np.issubdtype(w_np.dtype, np.number) or w_np.dtype == bool):
        raise ValueError(f"weight must be a numeric array of shape ({m},), got {w_np.shape}.")
      w_f = w_np.astype(np.float64)
      bad = ~np.isfinite(w_f) | (w_f < 0)
      if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"weight must be finite and >= 0; weight[{i}] = {w_f[i]}.")
      w_j = jnp.asarray(w_np).astype(out_j.dtype)
    line_j = None
    if line is not None:
      line_np = _as_index_array(line, "line")
      if line_np.shape[0] != m:
        raise ValueError(f"line must have shape ({m},), got {line_np.shape}.")
      if m and line_np.min() < 1:
        i = int(np.argmin(line_np))
        raise ValueError(f"line numbers must be >= 1; line[{i}] = {line_np[i]}.")
      line_j = jnp.asarray(line_np, dtype=jnp.int32)

    return cls(
      a=jnp.asarray(a_np, dtype=jnp.int32),
      b=jnp.asarray(b_np, dtype=jnp.int32),
      outcome=out_j,
      context=jnp.asarray(ctx_np, dtype=jnp.int32),
      weight=w_j,
      agents=agents,
      contexts=contexts,
      line=line_j,
    )


jax.tree_util.register_dataclass(
  Comparisons,
  data_fields=["a", "b", "outcome", "context", "weight", "line"],
  meta_fields=["agents", "contexts"],
)


def _as_index_array(x, name: str) -> np.ndarray:
  """``x`` as a 1-D NumPy integer array: int32 kept as it is (no copy), other integers as int64
  (integral floats are not accepted)."""
  arr = np.asarray(x)
  if arr.ndim != 1:
    raise ValueError(f"{name} must be a 1-D array of agent indices, got shape {arr.shape}.")
  if arr.size and not np.issubdtype(arr.dtype, np.integer):
    raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}.")
  return arr if arr.dtype == np.int32 else arr.astype(np.int64)


def _as_names(names, what: str) -> tuple[str, ...]:
  """A tuple of distinct strings, or ValueError."""
  if isinstance(names, str):
    raise ValueError(f"{what} must be a sequence of names, not a single string {names!r}.")
  names = tuple(str(x) for x in names)
  if len(set(names)) != len(names):
    seen = set()
    dup = next(x for x in names if x in seen or seen.add(x))
    raise ValueError(f"{what} contains the name {dup!r} more than once.")
  return names
