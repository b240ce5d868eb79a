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
from jax.custom_batching import sequential_vmap

from ste_jax._checks import as_float_array, as_temperature, check_square, eye_mask, is_static_zero
from ste_jax.ops._batching import flatten_batch, unflatten_batch

# Target number of elements of one (block, n, n) intermediate; sets the block size.
_BLOCK_ELEMENTS = 1 << 23


def _block_size(n: int) -> int:
  return max(1, min(n, _BLOCK_ELEMENTS // (n * n)))


def _row_blocks(x: jax.Array, block: int) -> jax.Array:
  """Rows of an ``(n, m)`` array as zero-padded blocks ``(nb, block, m)``."""
  n = x.shape[0]
  nb = -(-n // block)
  return jnp.pad(x, ((0, nb * block - n), (0, 0))).reshape(nb, block, x.shape[1])


def _block_indices(n: int, block: int) -> jax.Array:
  nb = -(-n // block)
  return jnp.arange(nb * block, dtype=jnp.int32).reshape(nb, block)


def _unblock(x: jax.Array, n: int) -> jax.Array:
  """``(nb, block, m)`` -> ``(n, m)``."""
  return x.reshape((-1,) + x.shape[2:])[:n]


def _weights(term, excluded, M, aux, g, hard):
  """Softmax (or even-split argmax) weights over witnesses, rebuilt from the forward's ``(M, aux)``."""
  zero = jnp.zeros_like(term)
  if hard:
    return jnp.where(excluded | (term != M), zero, jnp.exp(-aux))
  return jnp.where(excluded, zero, jnp.exp(jnp.where(excluded, zero, term - M) / g - aux))


def _forward_single(D, g, *, hard):
  """One tournament ``(n, n)``: ``(v, M, aux)``, each ``(n, n)`` indexed ``[c, a]``.

  Per block of ``c``, the ``(block, a, b)`` witness terms ``D[a, b] (1 - D[c, b])`` are reduced over
  the minor axis ``b`` to their maximum ``M`` and ``aux``: ``log sum_b exp((term - M) / g)`` (soft)
  or the log of the number of maximizers (hard).
  """
  n = D.shape[-1]
  block = _block_size(n)
  b = jnp.arange(n, dtype=jnp.int32)
  eye = b[:, None] == b[None, :]

  def stats(args):
    Dc, c_idx = args
    term = D[None, :, :] * (1.0 - Dc[:, None, :])  # (c, a, b)
    excluded = eye[None, :, :] | (c_idx[:, None, None] == b[None, None, :])
    M = jnp.max(jnp.where(excluded, -jnp.inf, term), axis=-1)  # finite: n >= 3 leaves a witness
    if hard:
      return M, jnp.log(jnp.sum(((term == M[..., None]) & ~excluded).astype(D.dtype), axis=-1))
    shifted = jnp.where(excluded, jnp.zeros_like(term), term - M[..., None]) / g
    return M, jnp.log(jnp.sum(jnp.where(excluded, jnp.zeros_like(term), jnp.exp(shifted)), axis=-1))

  M, aux = lax.map(stats, (_row_blocks(D, block), _block_indices(n, block)))
  M, aux = _unblock(M, n), _unblock(aux, n)
  v = M if hard else M + g * (aux - math.log(n - 2))
  return v, M, aux


def _backward_single(D, g, v, M, aux, dv, *, hard):
  """VJP of ``v[c, a] = smax_b(D[a, b] (1 - D[c, b]))`` for one tournament, in two blocked passes.

  With ``G[c, a, b] = dv[c, a] w[c, a, b]`` (``w``: the weights over ``b``):
  ``dD[c, b] -= sum_a G D[a, b]`` (pass over blocks of ``c``, layout ``(c, b, a)``) and
  ``dD[a, b] += sum_c G (1 - D[c, b])`` (pass over blocks of ``a``, layout ``(a, b, c)``). Each pass
  makes the summed index the minor axis: XLA:CPU fuses the exponential with a minor-axis reduction,
  while major-axis reductions, ``einsum`` contractions or a leading batch axis ran 3-5x slower
  (measured with ``benchmarks/operators.py``'s setup). Recomputing the weights in each pass (two
  exponentials per triple) is still the cheaper option. Returns ``(dD, dgamma)``.
  """
  n = D.shape[-1]
  block = _block_size(n)
  DT = D.T
  b = jnp.arange(n, dtype=jnp.int32)
  eye = b[:, None] == b[None, :]
  idx = _block_indices(n, block)

  def pass_c(args):  # (c, b, a); reduce over a
    Dc, c_idx, M_c, aux_c, dv_c = args
    term = DT[None, :, :] * (1.0 - Dc[:, :, None])
    excluded = eye[None, :, :] | (c_idx[:, None, None] == b[None, :, None])
    G = _weights(term, excluded, M_c[:, None, :], aux_c[:, None, :], g, hard) * dv_c[:, None, :]
    return -jnp.sum(G * DT[None, :, :], axis=-1), jnp.sum(G * term, axis=-1)

  def pass_a(args):  # (a, b, c); reduce over c
    Da, a_idx, M_a, aux_a, dv_a = args
    term = Da[:, :, None] * (1.0 - DT[None, :, :])
    excluded = (a_idx[:, None, None] == b[None, :, None]) | eye[None, :, :]
    G = _weights(term, excluded, M_a[:, None, :], aux_a[:, None, :], g, hard) * dv_a[:, None, :]
    return jnp.sum(G * (1.0 - DT[None, :, :]), axis=-1)

  blocks = lambda x: _row_blocks(x, block)
  d_cb, g_terms = lax.map(pass_c, (blocks(D), idx, blocks(M), blocks(aux), blocks(dv)))
  d_ab = lax.map(pass_a, (blocks(D), idx, blocks(M.T), blocks(aux.T), blocks(dv.T)))
  dD = _unblock(d_cb, n) + _unblock(d_ab, n)
  if hard:
    return dD, jnp.zeros_like(g)
  return dD, ((jnp.sum(dv * v) - jnp.sum(g_terms)) / g).astype(g.dtype)


@functools.lru_cache(maxsize=None)
def _kernels(hard: bool):
  """Single-tournament kernels that run batches as a loop (``sequential_vmap``).

  A vmapped kernel would carry the batch as a leading axis of every ``(block, n, n)``
  intermediate, which XLA:CPU compiles into a loop several times slower per item.
  """
  fwd = sequential_vmap(functools.partial(_forward_single, hard=hard))
  bwd = sequential_vmap(functools.partial(_backward_single, hard=hard))
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
    violation = jax.vmap(_cover_violation, in_axes=(0, None, None))  # a loop over items (sequential_vmap)
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
  n = check_square(D, "D")
  eye = eye_mask(D)
  v = soft_cover_violation(D, gamma_c=gamma_c)
  cover = jnp.where(eye, jnp.zeros_like(D), D) * (1.0 - v)
  return jnp.where(eye, jnp.zeros_like(cover), cover)
