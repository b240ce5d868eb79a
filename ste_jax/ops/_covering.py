"""Soft covering (paper §3.4, Eqs. ``soft_cover_violation`` and ``soft_cover_score``).

The violation ``v(c, a)`` is a normalized soft maximum over witnesses ``b`` of
``D(a, b) (1 - D(c, b))``: one exponential per triple ``(c, a, b)``, the dominant cost of STE.
It is computed in blocks, flash-attention style:

* forward: per block of rows ``c`` (and part of the columns ``a``), the witness terms over ``b``
  are formed, reduced to their maximum and log-sum-exp, and discarded; only two ``n x n`` arrays
  are kept;
* backward: the softmax weights are recomputed block by block from those two arrays and
  contracted with the cotangent.

Forward and backward need ``O(n^2)`` memory (plus one cache-sized block) instead of the ``O(n^3)``
that autodiff would store.
"""

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from ste_jax._checks import as_float_array, as_temperature, check_square, eye_mask, is_static_zero
from ste_jax.ops._batching import flatten_batch, unflatten_batch, vmap_by_platform

# Elements of one block's ``(rows, part, n)`` intermediate in the forward and backward passes
# (4 MB and 1 MB in float32). XLA:CPU materializes the exponentials before reducing them, so a
# block must stay near cache size; the forward ran fastest with larger blocks than the backward
# (development measurements at n = 100 to 2000; ``benchmarks/operators.py`` measures the result).
_FORWARD_BLOCK_ELEMENTS = 1 << 20
_BACKWARD_BLOCK_ELEMENTS = 1 << 18


class _RowBlocks:
  """Iteration over an ``(n, n)`` result in blocks: a few rows at a time, columns in static parts.

  Step ``k`` covers rows ``k * rows ... k * rows + rows - 1`` (the last step padded past ``n``)
  and, for each static column range ``[lo, hi)`` of ``bounds``, computes an ``(rows, hi - lo, n)``
  intermediate that is reduced over its last (minor) axis. Small ``n`` takes many rows per step,
  large ``n`` ``min_rows`` rows with the columns split into parts, so each intermediate has about
  ``block_elements`` elements. The backward takes at least two rows: with one, XLA:CPU compiled
  its reductions into code about 7x slower (seen at n = 500 and 1000 while developing). Rows are read
  with a dynamic slice of a row-padded copy (:meth:`pad`, :meth:`rows`) and columns with static
  slices: no gathers.
  """

  def __init__(self, n: int, block_elements: int, min_rows: int = 1):
    self.n = n
    self.num_rows = min(n, max(min_rows, block_elements // (n * n)))
    self.num_steps = -(-n // self.num_rows)
    parts = min(n, max(1, -(-(self.num_rows * n * n) // block_elements)))
    self.bounds = tuple(round(i * n / parts) for i in range(parts + 1))

  def pad(self, x: jax.Array, value=0.0) -> jax.Array:
    """``x`` ``(n, m)`` with rows appended up to ``num_steps * num_rows`` (filled with ``value``)."""
    extra = self.num_steps * self.num_rows - self.n
    return jnp.pad(x, ((0, extra), (0, 0)), constant_values=value) if extra else x

  def rows(self, padded: jax.Array, start) -> jax.Array:
    """The step's ``(num_rows, m)`` rows of a :meth:`pad`-ded array."""
    return lax.dynamic_slice_in_dim(padded, start, self.num_rows, axis=0)

  def run(self, step):
    """``step(start, row_ids, lo, hi) -> tuple of (num_rows, hi - lo)`` over all blocks -> ``(n, n)``s."""

    def one(k):
      start = k * self.num_rows
      row_ids = start + jnp.arange(self.num_rows, dtype=jnp.int32)
      parts = [step(start, row_ids, lo, hi) for lo, hi in zip(self.bounds[:-1], self.bounds[1:])]
      return tuple(jnp.concatenate(outs, axis=-1) for outs in zip(*parts))

    outs = lax.map(one, jnp.arange(self.num_steps, dtype=jnp.int32))
    return tuple(x.reshape(self.num_steps * self.num_rows, self.n)[: self.n] for x in outs)


def _weights(term, excluded, M, aux, g, hard):
  """Softmax (or even-split argmax) weights over witnesses, rebuilt from the forward's ``(M, aux)``."""
  zero = jnp.zeros_like(term)
  if hard:
    return jnp.where(excluded | (term != M), zero, jnp.exp(-aux))
  return jnp.where(excluded, zero, jnp.exp(jnp.where(excluded, zero, term - M) / g - aux))


def _forward_single(D, g, *, hard):
  """One tournament ``(n, n)``: ``(v, M, aux)``, each ``(n, n)`` indexed ``[c, a]``.

  Per block of rows ``c`` and part of columns ``a``, the witness terms ``D[a, b] (1 - D[c, b])``
  (a ``(c, a, b)`` array) are reduced over ``b`` to their maximum ``M`` and ``aux``:
  ``log sum_b exp((term - M) / g)`` (soft) or the log of the number of maximizers (hard).
  """
  n = D.shape[-1]
  blocks = _RowBlocks(n, _FORWARD_BLOCK_ELEMENTS)
  D_rows = blocks.pad(D)
  idx = jnp.arange(n, dtype=jnp.int32)

  def stats(start, c, lo, hi):
    term = D[None, lo:hi, :] * (1.0 - blocks.rows(D_rows, start))[:, None, :]  # (c, a, b)
    excluded = (idx[None, None, :] == idx[None, lo:hi, None]) | (idx[None, None, :] == c[:, None, None])
    M = jnp.max(jnp.where(excluded, -jnp.inf, term), axis=-1)  # finite: n >= 3 leaves a witness
    if hard:
      return M, jnp.log(jnp.sum(((term == M[..., None]) & ~excluded).astype(D.dtype), axis=-1))
    shifted = jnp.where(excluded, jnp.zeros_like(term), term - M[..., None]) / g
    return M, jnp.log(jnp.sum(jnp.where(excluded, jnp.zeros_like(term), jnp.exp(shifted)), axis=-1))

  M, aux = blocks.run(stats)
  v = M if hard else M + g * (aux - math.log(n - 2))
  return v, M, aux


def _backward_single(D, g, v, M, aux, dv, *, hard):
  """VJP of ``v[c, a] = smax_b(D[a, b] (1 - D[c, b]))`` for one tournament, in two blocked passes.

  With ``G[c, a, b] = dv[c, a] w[c, a, b]`` (``w``: the weights over ``b``):
  ``dD[c, b] -= sum_a G D[a, b]`` (pass over pairs ``(c, b)``, reducing over ``a``) and
  ``dD[a, b] += sum_c G (1 - D[c, b])`` (pass over pairs ``(a, b)``, reducing over ``c``). Each pass
  sums over the minor axis of its blocks: XLA:CPU reductions over a major axis, ``einsum``
  contractions or a leading batch axis compiled to slower code (development observations;
  ``benchmarks/operators.py`` measures the chosen form). Recomputing the weights in each pass
  (two exponentials per triple) is still the cheaper option. Returns ``(dD, dgamma)``.
  """
  n = D.shape[-1]
  blocks = _RowBlocks(n, _BACKWARD_BLOCK_ELEMENTS, min_rows=2)
  DT = D.T
  idx = jnp.arange(n, dtype=jnp.int32)
  # Row-padded copies; padded rows get M = +inf, hence weight 0 (their outputs are dropped anyway).
  D_rows, dv_rows, dvT_rows = blocks.pad(D), blocks.pad(dv), blocks.pad(dv.T)
  M_rows, MT_rows = blocks.pad(M, jnp.inf), blocks.pad(M.T, jnp.inf)
  aux_rows, auxT_rows = blocks.pad(aux), blocks.pad(aux.T)

  def pass_c(start, c, lo, hi):  # pairs (c, b); reduce over a
    term = DT[None, lo:hi, :] * (1.0 - blocks.rows(D_rows, start)[:, lo:hi])[:, :, None]  # (c, b, a)
    excluded = (idx[None, None, :] == idx[None, lo:hi, None]) | (idx[None, lo:hi, None] == c[:, None, None])
    M_c, aux_c = blocks.rows(M_rows, start)[:, None, :], blocks.rows(aux_rows, start)[:, None, :]
    G = _weights(term, excluded, M_c, aux_c, g, hard) * blocks.rows(dv_rows, start)[:, None, :]
    return -jnp.sum(G * DT[None, lo:hi, :], axis=-1), jnp.sum(G * term, axis=-1)

  def pass_a(start, a, lo, hi):  # pairs (a, b); reduce over c
    one_minus = 1.0 - DT[None, lo:hi, :]  # 1 - D[c, b] over c
    term = blocks.rows(D_rows, start)[:, lo:hi, None] * one_minus  # (a, b, c)
    excluded = (idx[None, None, :] == idx[None, lo:hi, None]) | (idx[None, lo:hi, None] == a[:, None, None])
    M_a, aux_a = blocks.rows(MT_rows, start)[:, None, :], blocks.rows(auxT_rows, start)[:, None, :]
    G = _weights(term, excluded, M_a, aux_a, g, hard) * blocks.rows(dvT_rows, start)[:, None, :]
    return (jnp.sum(G * one_minus, axis=-1),)

  d_cb, g_terms = blocks.run(pass_c)
  (d_ab,) = blocks.run(pass_a)
  dD = d_cb + d_ab
  if hard:
    return dD, jnp.zeros_like(g)
  return dD, ((jnp.sum(dv * v) - jnp.sum(g_terms)) / g).astype(g.dtype)


@functools.lru_cache(maxsize=None)
def _kernels(hard: bool):
  """Single-tournament kernels; a batch runs as a loop on CPU, with a batch axis elsewhere.

  On XLA:CPU a batch axis on every block compiled to slower code; on a GPU it is
  what fills the device (measured figures: :mod:`ste_jax.ops._batching`).
  """
  fwd = vmap_by_platform(functools.partial(_forward_single, hard=hard))
  bwd = vmap_by_platform(functools.partial(_backward_single, hard=hard))
  return fwd, bwd


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _cover_violation(D, g, hard):
  """``v`` for one tournament ``(n, n)`` and a scalar temperature ``g``; batches via ``jax.vmap``."""
  return _kernels(hard)[0](D, g)[0]


def _cover_violation_fwd(D, g, hard):
  v, M, aux = _kernels(hard)[0](D, g)
  return v, (D, g, v, M, aux)


def _cover_violation_bwd(hard, residuals, dv):
  return _kernels(hard)[1](*residuals, dv)


_cover_violation.defvjp(_cover_violation_fwd, _cover_violation_bwd)


def soft_cover_violation(D, *, gamma_c) -> jax.Array:
  r"""Soft violation of "c covers a" (Eq. ``soft_cover_violation``), ``v[..., c, a]``.

  .. math::
    v(c, a) = \mathrm{smax}_{\gamma_c}\big(\{D(a, b)\,(1 - D(c, b)) : b \in \mathcal{A} \setminus \{a, c\}\}\big)

  normalized by ``m = n - 2`` witnesses; the maximum over an empty set (``n <= 2``) is ``0``.

  Args:
    D: soft adjacency of shape ``(..., n, n)``.
    gamma_c: temperature ``>= 0`` (traced; a traced value must be ``> 0``, a literal ``0`` gives the
      exact maximum with a subgradient split evenly among tied maximizers).

  Returns:
    ``(..., n, n)`` array indexed ``[c, a]``; the diagonal (``c = a``) is meaningless and set to 0.
  """
  D = as_float_array(D, "D")
  n = check_square(D, "D")
  eye = eye_mask(D)
  D = jnp.where(eye, jnp.zeros_like(D), D)
  if n <= 2:
    return jnp.zeros_like(D)
  hard = is_static_zero(gamma_c)
  g = jnp.ones((), D.dtype) if hard else as_temperature(gamma_c, D, "gamma_c")
  if D.ndim == 2:
    v = _cover_violation(D, g, hard)
  else:
    flat, batch = flatten_batch(D, 2)
    violation = jax.vmap(_cover_violation, in_axes=(0, None, None))  # a loop over items on CPU (vmap_by_platform)
    v = unflatten_batch(violation(flat, g, hard), batch)
  return jnp.where(eye, jnp.zeros_like(v), v)


def soft_cover_scores(D, *, gamma_c) -> jax.Array:
  r"""Soft covering relation (Eq. ``soft_cover_score``), ``cover[..., c, a]``.

  .. math::
    \mathrm{cover}(c, a) = D(c, a)\,\big(1 - v(c, a)\big), \qquad \mathrm{cover}(a, a) = 0,

  with ``v`` from :func:`soft_cover_violation`. Computed in blocks of ``c`` rows with a custom VJP,
  so forward and backward use ``O(block * n^2)`` memory (see the module docstring).

  Args:
    D: soft adjacency of shape ``(..., n, n)``, entries in ``[0, 1]``.
    gamma_c: covering temperature ``> 0`` (traced), or a literal ``0`` for the exact maximum.

  Returns:
    ``(..., n, n)`` array indexed ``[c, a]`` with entries in ``[0, 1]`` and a zero diagonal.

  Examples:
    >>> import jax.numpy as jnp
    >>> D = jnp.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    >>> C = soft_cover_scores(D, gamma_c=0.0)
    >>> [float(x) for x in C[0]]  # agent 0 covers agents 1 and 2
    [0.0, 1.0, 1.0]
  """
  D = as_float_array(D, "D")
  check_square(D, "D")
  eye = eye_mask(D)
  v = soft_cover_violation(D, gamma_c=gamma_c)
  cover = jnp.where(eye, jnp.zeros_like(D), D) * (1.0 - v)
  return jnp.where(eye, jnp.zeros_like(cover), cover)
