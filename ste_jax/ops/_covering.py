"""Soft covering (paper §3.4, Eqs. ``soft_cover_violation`` and ``soft_cover_score``).

The violation ``v(c, a)`` is a normalized soft maximum over witnesses ``b`` of
``D(a, b) (1 - D(c, b))``: one exponential per triple ``(c, a, b)``, the dominant cost of STE.
It is computed in blocks of ``c`` rows, flash-attention style:

* forward: per block, the ``(block, n, n)`` witness terms are formed, reduced to their maximum and
  log-sum-exp over ``b``, and discarded; only two ``n x n`` arrays are kept;
* backward: per block, the softmax weights over ``b`` are recomputed from those two arrays and
  contracted with the cotangent, accumulating ``dD``.

Forward and backward both need ``O(block * n^2)`` memory instead of the ``O(n^3)`` that autodiff
would store.
"""

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from ste_jax._checks import as_float_array, as_temperature, check_square, eye_mask, is_static_zero
from ste_jax.ops._batching import flatten_batch, unflatten_batch

# Target number of elements of one (batch, block, n, n) intermediate; sets the block size.
_BLOCK_ELEMENTS = 1 << 22


def _block_size(batch: int, n: int) -> int:
  return max(1, min(n, _BLOCK_ELEMENTS // max(1, batch * n * n)))


def _blocked_rows(D: jax.Array, block: int):
  """Splits the rows of ``D`` (the ``c`` axis) into zero-padded blocks: ``(nb, B, block, n)`` and ``(nb, block)``."""
  B, n, _ = D.shape
  nb = -(-n // block)
  pad = nb * block - n
  rows = jnp.pad(D, ((0, 0), (0, pad), (0, 0))).reshape(B, nb, block, n).transpose(1, 0, 2, 3)
  idx = jnp.arange(nb * block, dtype=jnp.int32).reshape(nb, block)
  return rows, idx


def _witness_terms(D: jax.Array, Dc: jax.Array, c_idx: jax.Array):
  """Terms ``D[a, b] (1 - D[c, b])`` for a block of ``c`` and the mask of ``b in {a, c}``.

  Returns ``(term, excluded)`` of shapes ``(B, block, n, n)`` and ``(1, block, n, n)`` (axes c, a, b).
  """
  n = D.shape[-1]
  term = D[:, None, :, :] * (1.0 - Dc[:, :, None, :])
  b = jnp.arange(n, dtype=jnp.int32)
  excluded = jnp.eye(n, dtype=bool)[None, :, :] | (c_idx[:, None, None] == b[None, None, :])
  return term, excluded[None]


def _block_stats(D, Dc, c_idx, g, hard):
  term, excluded = _witness_terms(D, Dc, c_idx)
  low = jnp.asarray(-jnp.inf, D.dtype)
  M = jnp.max(jnp.where(excluded, low, term), axis=-1)  # finite: n >= 3 leaves a witness
  if hard:
    return M, jnp.zeros_like(M)
  shifted = jnp.where(excluded, jnp.zeros_like(term), term - M[..., None]) / g
  s = jnp.sum(jnp.where(excluded, jnp.zeros_like(term), jnp.exp(shifted)), axis=-1)
  return M, jnp.log(s)


def _unblock(x: jax.Array, n: int) -> jax.Array:
  """``(nb, B, block, ...)`` -> ``(B, n, ...)``."""
  nb, B, block = x.shape[:3]
  x = jnp.moveaxis(x, 0, 1).reshape((B, nb * block) + x.shape[3:])
  return x[:, :n]


def _violation_forward(D, g, hard):
  """Blocked forward pass: ``(v, M, log_s)`` of shape ``(B, n, n)`` each (axes c, a)."""
  B, n, _ = D.shape
  rows, idx = _blocked_rows(D, _block_size(B, n))
  M, log_s = lax.map(lambda args: _block_stats(D, args[0], args[1], g, hard), (rows, idx))
  M, log_s = _unblock(M, n), _unblock(log_s, n)
  if hard:
    return M, M, log_s
  v = M + g * (log_s - math.log(n - 2))
  return v, M, log_s


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _cover_violation(D, g, hard):
  return _violation_forward(D, g, hard)[0]


def _cover_violation_fwd(D, g, hard):
  v, M, log_s = _violation_forward(D, g, hard)
  return v, (D, g, v, M, log_s)


def _cover_violation_bwd(hard, residuals, dv):
  D, g, v, M, log_s = residuals
  B, n, _ = D.shape
  block = _block_size(B, n)
  rows, idx = _blocked_rows(D, block)
  pad = idx.size - n

  def padded_blocks(x):
    return jnp.pad(x, ((0, 0), (0, pad), (0, 0))).reshape(B, -1, block, n).transpose(1, 0, 2, 3)

  def body(dD_ab, args):
    Dc, c_idx, dv_blk, v_blk, M_blk, log_s_blk = args
    term, excluded = _witness_terms(D, Dc, c_idx)
    if hard:
      hit = ((term == M_blk[..., None]) & ~excluded).astype(D.dtype)
      w = hit / jnp.sum(hit, axis=-1, keepdims=True)
      dg_blk = jnp.zeros((), D.dtype)
    else:
      shifted = jnp.where(excluded, jnp.zeros_like(term), term - M_blk[..., None]) / g
      w = jnp.where(excluded, jnp.zeros_like(term), jnp.exp(shifted - log_s_blk[..., None]))
      expected = jnp.sum(w * term, axis=-1)  # sum_b w * term
      dg_blk = jnp.sum(dv_blk * (v_blk - expected)) / g
    G = dv_blk[..., None] * w  # (B, block, a, b)
    dD_ab = dD_ab + jnp.einsum("Bcab,Bcb->Bab", G, 1.0 - Dc)
    dD_cb = -jnp.einsum("Bcab,Bab->Bcb", G, D)
    return dD_ab, (dD_cb, dg_blk)

  xs = (rows, idx, padded_blocks(dv), padded_blocks(v), padded_blocks(M), padded_blocks(log_s))
  dD_ab, (dD_cb, dg) = lax.scan(body, jnp.zeros_like(D), xs)
  dD = dD_ab + _unblock(dD_cb, n)
  return dD, jnp.sum(dg).astype(g.dtype)


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
  flat, batch = flatten_batch(D, 2)
  v = unflatten_batch(_cover_violation(flat, g, hard), batch)
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
  n = check_square(D, "D")
  eye = eye_mask(D)
  v = soft_cover_violation(D, gamma_c=gamma_c)
  cover = jnp.where(eye, jnp.zeros_like(D), D) * (1.0 - v)
  return jnp.where(eye, jnp.zeros_like(cover), cover)
