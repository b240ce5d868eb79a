"""Max-min (bottleneck) products and closures, differentiable in every mode with O(n^2) memory.

The exact (zero-temperature) reachability of Eqs. ``maxmin_boolean_product`` and
``soft_reachability`` is a *bottleneck* (widest-path) closure: ``R[a, b]`` is the largest value
``w`` such that some walk ``a -> ... -> b`` of at most ``K`` edges uses only edges of weight
``>= w``. Each output equals one input entry, the walk's bottleneck edge. The closure for
``K >= n - 1`` runs by Floyd--Warshall or by repeated squaring (:func:`closure_algorithm`), for
smaller ``K`` by repeated squaring. Its derivatives (:func:`bottleneck_closure`, one custom JVP
rule) gather the tangent of each output's bottleneck edge. Design notes:
``docs/design/closure.md``.
"""

import contextlib
import functools
from typing import Iterator, Literal

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax import _tuning
from ste_jax.ops._batching import vmap_by_platform
from ste_jax.ops._trace_option import trace_option

ClosureAlgorithm = Literal["auto", "floyd_warshall", "squaring"]
_ALGORITHMS = ("auto", "floyd_warshall", "squaring")

# The backends on which ``"auto"`` runs the full closure as Floyd--Warshall at every size; elsewhere
# it squares up to ``_SQUARING_MAX_N_AUTO`` agents (:func:`closure_algorithm`).
_FLOYD_WARSHALL_PLATFORMS_AUTO = _tuning.FLOYD_WARSHALL_PLATFORMS
_SQUARING_MAX_N_AUTO = _tuning.SQUARING_MAX_N

_current_algorithm, _set_algorithm = trace_option("ste_jax_closure_algorithm", "auto")


@contextlib.contextmanager
def closure_algorithm(algorithm: ClosureAlgorithm) -> Iterator[None]:
  """Context manager: how the exact max-min closure (``K >= n - 1``) is computed in its traces.

  Both algorithms give the same values (bottleneck values are input entries; no rounding), the same
  derivatives and ``O(n^2)`` memory; they differ only in speed, by backend and size.

  Args:
    algorithm: ``"floyd_warshall"``: ``n`` dependent pivot steps of ``O(n^2)`` work each (from
      ``n = 128`` in sweeps of 8 pivots, one pass over the matrix per sweep). ``"squaring"``:
      ``ceil(log2(n - 2)) + 1`` max-min matrix products (``O(n^3 log n)`` work, a few large
      kernels: the faster form for one tournament on a GPU). ``"auto"`` (the default outside any
      block): Floyd--Warshall on CPU; on every other backend squaring for ``n <= 1024`` and
      Floyd--Warshall above, chosen when the program is compiled (``lax.platform_dependent``).
      Thresholds: :mod:`ste_jax._tuning` (``benchmarks/closure_squaring.py`` times both).

  Yields:
    Nothing; the algorithm applies to the functions traced inside the block. It is part of JAX's
    cache keys where JAX has ``jax.make_user_context``, as for :func:`~ste_jax.ops.batching_mode`.

  Raises:
    ValueError: for another ``algorithm``.

  Examples:
    >>> import jax.numpy as jnp
    >>> import ste_jax
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])
    >>> with ste_jax.ops.closure_algorithm("squaring"):
    ...   R = ste_jax.ops.soft_reachability(P)
    >>> [round(float(x), 1) for x in R[0]]
    [0.0, 0.8, 0.8]
  """
  if algorithm not in _ALGORITHMS:
    raise ValueError(f"algorithm must be one of {_ALGORITHMS}, got {algorithm!r}.")
  with _set_algorithm(algorithm):
    yield


def current_closure_algorithm() -> ClosureAlgorithm:
  """The closure algorithm in effect where this is called (see :func:`closure_algorithm`)."""
  return _current_algorithm()  # type: ignore[return-value]


# Largest n*n for which float32 holds every rank exactly (2**24).
_MAX_EXACT_FLOAT32_RANK = 2**24


def _low(dtype):
  return jnp.asarray(
    -jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min, dtype
  )


def _high(dtype):
  return jnp.asarray(
    jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).max, dtype
  )


def maxmin_matmul(X: jax.Array, Y: jax.Array) -> jax.Array:
  """Exact max-min product ``max_c min(X[..., a, c], Y[..., c, b])``.

  Eq. ``maxmin_boolean_product``; batch axes ``...`` broadcast.
  """
  return jnp.max(jnp.minimum(X[..., :, :, None], Y[..., None, :, :]), axis=-2)


def _floyd_warshall(W: jax.Array) -> jax.Array:
  """Bottleneck closure over walks of any length >= 1 of one ``(n, n)`` matrix ``W``.

  Floyd--Warshall in the max-min semiring, in sweeps of pivots (:func:`_floyd_warshall_sweeps`).
  """
  n = W.shape[-1]
  (V,) = _floyd_warshall_sweeps(
    (W,),
    lambda v1, v2: (jnp.minimum(v1, v2),),
    lambda v1, v2: (jnp.maximum(v1, v2),),
    (_low(W.dtype),),
    _pivots_per_sweep(n),
  )
  return V


def _bounded_closure(W: jax.Array, K: int) -> jax.Array:
  """``max_{k=1..K} W^{(k)}`` in the max-min semiring, by repeated squaring.

  ``A = W`` with the semiring identity (``+inf``) on its diagonal satisfies
  ``A^{j} = max_{k=0..j} W^{(k)}``, so the result is ``W (x) A^{K-1}``. The exponent's bits are
  static; each product runs in its own ``lax.cond`` / ``scan`` body (XLA fuses chained max-min
  products into slower code).
  """
  eye = jnp.eye(W.shape[-1], dtype=bool)
  A = jnp.where(eye, _high(W.dtype), W)
  e = K - 1
  if e == 0:
    return W
  bits = []
  while e:
    bits.append(bool(e & 1))
    e >>= 1
  identity = jnp.where(eye, _high(W.dtype), _low(W.dtype))

  def step(carry, bit):
    acc, power = carry
    acc = lax.cond(bit, maxmin_matmul, lambda x, _: x, acc, power)
    power = maxmin_matmul(power, power)
    return (acc, power), None

  (acc, _), _ = lax.scan(step, (identity, A), jnp.asarray(bits))
  return maxmin_matmul(W, acc)


def _squared_closure(W: jax.Array) -> jax.Array:
  """Bottleneck closure over walks of any length >= 1 of one ``(n, n)`` matrix, by squaring.

  Removing a closed sub-walk never lowers a walk's bottleneck, so walks of at most ``n - 1`` edges
  suffice, and any ``W (x) A^j`` with ``j >= n - 2`` (``A``: ``W`` with the semiring identity on its
  diagonal) is the closure: ``ceil(log2(n - 2))`` squarings of ``A`` and one product with ``W``,
  each in its own loop body (XLA fuses chained max-min products into slower code). Same values as
  :func:`_floyd_warshall`, diagonal included (the best closed walk).
  """
  n = W.shape[-1]
  squarings = max(0, n - 3).bit_length()  # the least s with 2**s >= n - 2
  A = jnp.where(jnp.eye(n, dtype=bool), _high(W.dtype), W)
  A = lax.fori_loop(0, squarings, lambda _, A: maxmin_matmul(A, A), A)
  return maxmin_matmul(W, A)


def _closure_single(W: jax.Array, *, K: int) -> jax.Array:
  """Bottleneck closure of one ``(n, n)`` matrix over walks of 1..K edges (diagonal absent)."""
  n = W.shape[-1]
  W = jnp.where(jnp.eye(n, dtype=bool), _low(W.dtype), W)
  if K < n - 1:
    return _bounded_closure(W, K)
  algorithm = _current_algorithm()
  if algorithm == "floyd_warshall":
    return _floyd_warshall(W)
  if algorithm == "squaring":
    return _squared_closure(W)
  if n > _SQUARING_MAX_N_AUTO:
    return _floyd_warshall(W)
  return lax.platform_dependent(
    W, default=_squared_closure, **{p: _floyd_warshall for p in _FLOYD_WARSHALL_PLATFORMS_AUTO}
  )


def _rank_dtype(n: int):
  return jnp.float32 if n * n <= _MAX_EXACT_FLOAT32_RANK else jnp.int32


# Pivots per sweep of :func:`_floyd_warshall_sweeps` over the whole matrix, from this size on. Below
# it the matrices stay in cache and one pivot per sweep is as fast; above it each sweep streams the
# ``(n, n)`` matrices, and several pivots per sweep cut that traffic and let XLA fuse the pivot
# updates into one pass (``benchmarks/closure_edges.py --pivots 8 16 32``).
_SWEEP_MIN_N = _tuning.SWEEP_MIN_N
_PIVOTS_PER_SWEEP = _tuning.PIVOTS_PER_SWEEP


def _pivots_per_sweep(n: int) -> int:
  return _PIVOTS_PER_SWEEP if n >= _SWEEP_MIN_N else 1


# From this size on, the bottleneck edges' key comparisons are one select on a compound predicate
# (:func:`_lex_min_select`); below it, minima and selects per component (:func:`_lex_min`). Each
# form is the faster one on its side on XLA:CPU (``benchmarks/closure_edges.py``).
_SELECT_KEYS_MIN_N = _tuning.SELECT_KEYS_MIN_N


def _lex_min(v1, e1, v2, e2):
  """The smaller of the keys ``(v1, e1)`` and ``(v2, e2)`` (value first, then index), per component.

  The value is the smaller value; the index the smaller index among the keys holding that value
  (the other key's index replaced by the largest ``int32``): a minimum, two comparisons, two selects
  and a minimum.
  """
  v = jnp.minimum(v1, v2)
  big = jnp.full_like(e1, jnp.iinfo(e1.dtype).max)
  return v, jnp.minimum(jnp.where(v1 == v, e1, big), jnp.where(v2 == v, e2, big))


def _lex_max(v1, e1, v2, e2):
  """The larger of the keys ``(v1, e1)`` and ``(v2, e2)`` (indices ``>= -1``; ``-1``: no walk)."""
  v = jnp.maximum(v1, v2)
  low = jnp.full_like(e1, -1)
  return v, jnp.maximum(jnp.where(v1 == v, e1, low), jnp.where(v2 == v, e2, low))


def _lex_min_select(v1, e1, v2, e2):
  """:func:`_lex_min` as one select of both components on the predicate ``key1 < key2``."""
  first = (v1 < v2) | ((v1 == v2) & (e1 < e2))
  return jnp.where(first, v1, v2), jnp.where(first, e1, e2)


def _lex_max_select(v1, e1, v2, e2):
  """:func:`_lex_max` as one select of both components on the predicate ``key2 > key1``."""
  second = (v2 > v1) | ((v2 == v1) & (e2 > e1))
  return jnp.where(second, v2, v1), jnp.where(second, e2, e1)


def _floyd_warshall_sweeps(keys, key_min, key_max, none, p: int):
  """Floyd--Warshall in the (max, min) semiring of a totally ordered key, ``p`` pivots per sweep.

  One general loop for the closure's values (the key is the value) and its bottleneck edges (the
  key is ``(value, flat index)``, ordered lexicographically).

  The ``p`` pivot columns and rows of a sweep are first brought up to date among themselves, one
  pivot at a time on ``(n, p)`` and ``(p, n)`` panels, recording column and row ``k`` as they stand
  when pivot ``k`` runs; then ``V = max(V, max_k min(col_k, row_k))`` in one pass over the matrix.
  That is exactly ``p`` successive Floyd--Warshall steps: a pivot does not change its own row and
  column (``min(V[a, k], V[k, k]) <= V[a, k]``). The matrix is padded to a multiple of ``p`` with
  isolated vertices (every component of their keys ``none``, below every key).

  Args:
    keys: tuple of ``(n, n)`` arrays, the components of each entry's key; entries without an edge
      (the diagonal) hold keys below every edge's.
    key_min, key_max: ``(*key1, *key2) -> key``, the key a tuple of its components.
    none: tuple of the padding value of each component.
    p: pivots per sweep, static.

  Returns:
    The tuple of the closure's key components, ``(n, n)`` each.
  """
  n = keys[0].shape[-1]
  m = -(-n // p) * p
  keys = tuple(jnp.pad(x, ((0, m - n), (0, m - n)), constant_values=v) for x, v in zip(keys, none))
  r = len(keys)

  def sweep(s, keys):
    k0 = s * p
    cols = tuple(lax.dynamic_slice_in_dim(x, k0, p, axis=1) for x in keys)  # (m, p) each
    rows = tuple(lax.dynamic_slice_in_dim(x, k0, p, axis=0) for x in keys)  # (p, m) each

    def pivot(panels, j):
      cols, rows = panels[:r], panels[r:]
      col = tuple(lax.dynamic_slice_in_dim(x, j, 1, axis=1) for x in cols)  # (m, 1)
      row = tuple(lax.dynamic_slice_in_dim(x, j, 1, axis=0) for x in rows)  # (1, m)
      row_in_block = tuple(lax.dynamic_slice_in_dim(x, k0, p, axis=1) for x in row)  # (1, p)
      col_in_block = tuple(lax.dynamic_slice_in_dim(x, k0, p, axis=0) for x in col)  # (p, 1)
      cols = key_max(*cols, *key_min(*col, *row_in_block))
      rows = key_max(*rows, *key_min(*col_in_block, *row))
      return cols + rows, tuple(x[:, 0] for x in col) + tuple(x[0] for x in row)

    if p == 1:  # a single pivot's row and column are the panels themselves
      pivots = tuple(x.T for x in cols) + rows
    else:
      _, pivots = lax.scan(pivot, cols + rows, jnp.arange(p))
    for k in range(p):  # one fused pass over the matrix
      col = tuple(x[k][:, None] for x in pivots[:r])
      row = tuple(x[k][None, :] for x in pivots[r:])
      keys = key_max(*keys, *key_min(*col, *row))
    return keys

  keys = lax.fori_loop(0, m // p, sweep, keys)
  return tuple(x[:n, :n] for x in keys)


def _floyd_warshall_edges(W: jax.Array) -> jax.Array:
  """Bottleneck edges of the full closure of one ``(n, n)`` matrix, by Floyd--Warshall on keys.

  Each entry carries the key ``(W[e], e)`` (its value, then its flat index ``e``), ordered
  lexicographically: the order of a stable sort, so the edges are those of :func:`_rank_edges`
  (ties included) without the sort (XLA:CPU's sort was most of the derivative's time). The diagonal
  is ``(-inf, -1)``, below every key: "no walk". Sweeps of pivots as the values'
  (:func:`_floyd_warshall_sweeps`); keys compared per component below ``_SELECT_KEYS_MIN_N`` and
  by one compound select from there on (the faster form on each side). A cheaper rule that keeps,
  for each entry, the edge of the first widest walk found ("path tracking", half the comparisons)
  was tried and rejected: at ties it can pick an edge whose walk is not widest once the ties are
  broken, giving a wrong gradient even where the closure is differentiable
  (``tests/ops/test_reachability.py``).

  Returns:
    ``(n*n,)`` ``int32`` flat indices, ``-1`` where there is no walk.
  """
  n = W.shape[-1]
  eye = jnp.eye(n, dtype=bool)
  V = jnp.where(eye, _low(W.dtype), W)
  E = jnp.where(eye, jnp.int32(-1), jnp.arange(n * n, dtype=jnp.int32).reshape(n, n))
  none = (_low(W.dtype), jnp.int32(-1))
  key_min, key_max = (
    (_lex_min_select, _lex_max_select) if n >= _SELECT_KEYS_MIN_N else (_lex_min, _lex_max)
  )
  _, E = _floyd_warshall_sweeps((V, E), key_min, key_max, none, _pivots_per_sweep(n))
  return E.reshape(n * n)


def _rank_edges(W: jax.Array, *, K: int) -> jax.Array:
  """Bottleneck edges by any closure of :func:`_closure_single`, run on the entries' ranks.

  A stable sort makes the ranks distinct, so each output's bottleneck edge is unique and is read
  back from its rank. Used where the closure is not Floyd--Warshall (``K < n - 1``, squaring).
  """
  n = W.shape[-1]
  flat = W.reshape(n * n)
  order = jnp.argsort(flat, stable=True).astype(jnp.int32)  # rank -> flat position
  rank_dtype = _rank_dtype(n)
  ranks = jnp.zeros((n * n,), rank_dtype).at[order].set(jnp.arange(n * n).astype(rank_dtype))
  rank_closure = _closure_single(ranks.reshape(n, n), K=K).reshape(n * n)
  valid = rank_closure >= 0  # -inf / int-min marks "no walk"
  return jnp.where(valid, order[jnp.where(valid, rank_closure, 0).astype(jnp.int32)], -1)


def _bottleneck_edges_single(W: jax.Array, *, K: int) -> jax.Array:
  """For each output of the closure of one ``(n, n)`` matrix, the flat index of its bottleneck edge.

  Entries are ordered by value, then by flat index (equal entries are told apart by their index),
  whichever algorithm runs: Floyd--Warshall on ``(value, index)`` keys where the closure is
  Floyd--Warshall (:func:`_floyd_warshall_edges`), else the closure on ranks (:func:`_rank_edges`).
  Returns ``(n*n,)`` ``int32`` indices, ``-1`` where there is no walk (the diagonal at ``n = 1`` or
  ``K = 1``).
  """
  n = W.shape[-1]
  ranked = functools.partial(_rank_edges, K=K)
  if K < n - 1:
    return ranked(W)
  algorithm = _current_algorithm()
  if algorithm == "floyd_warshall" or (algorithm == "auto" and n > _SQUARING_MAX_N_AUTO):
    return _floyd_warshall_edges(W)
  if algorithm == "squaring":
    return ranked(W)
  return lax.platform_dependent(
    W, default=ranked, **{p: _floyd_warshall_edges for p in _FLOYD_WARSHALL_PLATFORMS_AUTO}
  )


@functools.lru_cache(maxsize=None)
def _kernels(K: int):
  """Single-matrix kernels; a batch runs as a loop on CPU, with a batch axis elsewhere.

  Why a loop on CPU and a batch axis elsewhere: ``docs/design/batching.md``.
  """
  closure = vmap_by_platform(functools.partial(_closure_single, K=K))
  edges = vmap_by_platform(functools.partial(_bottleneck_edges_single, K=K))
  return closure, edges


def _gather_edges(W: jax.Array, edge: jax.Array, fill) -> jax.Array:
  """``W`` read at each output's bottleneck edge (flat indices ``(n*n,)``, ``-1``: ``fill``).

  Linear in ``W``: its transpose is a scatter-add of the cotangents onto the edges.
  """
  n = W.shape[-1]
  valid = edge >= 0
  picked = W.reshape(n * n)[jnp.where(valid, edge, 0)]
  return jnp.where(valid, picked, jnp.full_like(picked, fill)).reshape(n, n)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def bottleneck_closure(W: jax.Array, K: int) -> jax.Array:
  """Max-min closure of one ``(n, n)`` matrix over walks of ``1..K`` edges, differentiable.

  Derivatives come from a custom JVP rule: each output equals ``W`` at its bottleneck edge, so its
  tangent is the tangent of that edge, a gather (linear in the tangent). Reverse mode is the
  transpose JAX derives from it, a scatter-add of each cotangent onto its edge; both use ``O(n^2)``
  memory. The edges are found by a closure over ``(value, index)`` keys, run only when
  differentiating (:func:`_bottleneck_edges_single`); second derivatives are zero (the closure is
  piecewise linear).

  Args:
    W: edge weights ``(n, n)``; the diagonal is ignored (no self-loops). Batches: ``jax.vmap``.
    K: static path-length bound ``>= 1``; ``K >= n - 1`` runs Floyd--Warshall.

  Returns:
    ``(n, n)``: off-diagonal entries are bottleneck values. Diagonal entries hold the best
    closed walk (or ``-inf``) and are meant to be masked by the caller.
  """
  return _kernels(K)[0](W)


@bottleneck_closure.defjvp
def _bottleneck_closure_jvp(K, primals, tangents):
  (W,), (W_dot,) = primals, tangents
  edge = _kernels(K)[1](lax.stop_gradient(W))  # integer indices: no derivative of their own
  # Reading the values back from W (not from the rank closure) keeps them differentiable for
  # higher orders, where this rule is itself differentiated.
  return _gather_edges(W, edge, _low(W.dtype)), _gather_edges(W_dot, edge, 0)
