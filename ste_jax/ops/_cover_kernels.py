"""The soft cover's kernels (paper §3.4, Eq. ``soft_cover_violation``): value, tangent, reverse.

The violation ``v(c, a)`` is a normalized soft maximum over witnesses ``b`` of
``D(a, b) (1 - D(c, b))``. The kernels here stream over the ``(c, a, b)`` terms in tiles, one
tournament at a time, and never store that tensor: ``O(n^2)`` memory in every mode.

* :func:`forward_single`: the value, with each pair's shift and log-sum-exp as residuals.
* :func:`tangent_single`: the tangent map, linear in the tangents, in plain JAX.
* :func:`backward_single`: the reverse pass (the tangent map's transpose), in one pass.

On the CPU, for float32, the value and the reverse pass run as native kernels
(:mod:`ste_jax.ops._native`); elsewhere the JAX kernels here run (``lax.platform_dependent``).
:mod:`ste_jax.ops._covering` batches the kernels and wires them into JAX's autodiff. The tiling and
the shifts are described in ``docs/design/cover_kernels.md``.
"""

import functools
import math

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax import _tuning
from ste_jax._checks import eye_mask, split_temperature
from ste_jax.ops import _native
from ste_jax.ops._extrema import LARGE_TEMPERATURE, exprel, log1p_ratio

# Elements of one ``(c rows, a rows, n witnesses)`` tile of the value kernel: whole rows ``a`` while
# ``n^2`` fits, then blocks of rows ``a`` for one ``c`` at a time.
_TILE_ELEMENTS = _tuning.COVER_TILE_ELEMENTS

# Elements of one ``(n witnesses, a rows)`` tile of the reverse kernel (one row ``c``), and of the
# ``(n, a rows)`` accumulator it updates: whole rows ``a`` up to ``n = 512``, then balanced blocks
# of at most ``2^18 / n`` rows. Its own constant, as its tiles have another shape than the value's.
_BACKWARD_TILE_ELEMENTS = _tuning.COVER_BACKWARD_TILE_ELEMENTS


def _tile_shape(n: int) -> tuple[int, int]:
  """``(c_rows, a_rows)`` of one tile: ``c_rows * a_rows * n`` about ``_TILE_ELEMENTS``, balanced.

  The blocks are evened out (``n = 1000``: 4 blocks of 250 rows ``a`` rather than 3 of 262 and a
  padded one of 214) so that padding wastes at most one row per block.
  """
  if n * n <= _TILE_ELEMENTS:
    blocks = -(-n // max(1, _TILE_ELEMENTS // (n * n)))
    return -(-n // blocks), n
  blocks = -(-n // max(1, _TILE_ELEMENTS // n))
  return 1, -(-n // blocks)


def _backward_block_rows(n: int) -> int:
  """Rows ``a`` per block of the backward pass, balanced: tiles of one row ``c``, ``n`` witnesses.

  A block holds about ``_BACKWARD_TILE_ELEMENTS`` terms. With one row ``c`` per tile the sum over
  ``c`` is an elementwise accumulation rather than a reduction of the tile (the faster form on
  XLA:CPU; ``benchmarks/operators.py`` times the kernel).
  """
  blocks = -(-n // max(1, _BACKWARD_TILE_ELEMENTS // n))
  return -(-n // blocks)


def _block_starts(n: int, rows: int) -> jax.Array:
  return jnp.arange(-(-n // rows), dtype=jnp.int32) * rows


def _pad_rows(x: jax.Array, rows: int) -> jax.Array:
  """Pads axis 0 of ``x`` with zeros to a multiple of ``rows``."""
  n = x.shape[0]
  return jnp.pad(x, ((0, -(-n // rows) * rows - n),) + ((0, 0),) * (x.ndim - 1))


# Temperatures from which the soft value kernel shifts every exponent by ``1``, an upper bound of
# every term, instead of by each pair's maximum: one pass over the terms instead of two. At
# ``gamma_c >= 1/50`` the largest term's exponent is ``>= -50``, so the terms whose exponential
# underflows (exponents below about ``-87`` in float32) weigh less than ``e^-37`` of it each: the
# sums are those of the maximum's shift to float32 rounding (``benchmarks/operators.py`` measures
# the speed).
_SHIFT_BY_ONE_MIN_GAMMA = 1.0 / 50.0


def _shift_by_one_min_gamma(dtype) -> float:
  """:data:`_SHIFT_BY_ONE_MIN_GAMMA`, raised where the dtype's exponent range is too short for it.

  Shifted by ``1``, the largest term's exponent is ``>= -1/g`` and a term whose exponential
  underflows (``< log(tiny)``) must weigh less than ``eps / e`` of it:
  ``1/g <= -log(tiny) + log(eps) - 1``. float32, bfloat16 and float64 allow ``1/50``; float16
  (``-log(tiny) = 9.7``, ``log(eps) = -6.9``) needs ``g >= 0.57``, else every term of a pair can
  underflow, its log-sum-exp is ``-inf`` and the scores NaN.
  """
  info = jnp.finfo(dtype)
  exponents = -math.log(float(info.tiny)) + math.log(float(info.eps)) - 1.0
  return max(_SHIFT_BY_ONE_MIN_GAMMA, 1.0 / exponents)


def _witness_factors(D: jax.Array) -> tuple[jax.Array, jax.Array]:
  """``(D, Y)``, zero diagonals, ``Y = 1 - D`` off them: ``term[c, a, b] = D[a, b] Y[c, b]``.

  The zero diagonals make the excluded witnesses' terms exactly ``0`` (``b = a``: ``D[a, a] = 0``;
  ``b = c``: ``Y[c, c] = 0``), below or equal to every real term (``D`` in ``[0, 1]``): they never
  change a pair's maximum, and their known contribution to a pair's sum of exponentials is
  subtracted once per pair instead of being masked in every triple. In the
  backward pass their weights only reach the diagonal of ``dD`` (their terms vanish with
  ``D[a, a]`` or ``Y[c, c]``), which is discarded.
  """
  eye = eye_mask(D)
  zero = jnp.zeros_like(D)
  return jnp.where(eye, zero, D), jnp.where(eye, zero, 1.0 - D)


def _divisor(g):
  """The exponent divisor of the soft kernels: ``g`` if ``g >= tiny``, else ``tiny``, the smallest
  normal number (below it ``1 / g`` overflows; the value is the hard one to rounding).

  At a traced ``g = 0`` this turns ``exp((term - M) / g)`` into the hard limit without a 0/0: the
  pair-maximum kernels set the exponent of the maximizers to exactly 0 (:func:`_weights_by_max`),
  so ``exp`` gives 1 there and ``exp(-huge) = 0`` elsewhere; ``aux`` is then the log of the number
  of maximizers and the weights are the even argmax split of the ``hard`` kernels. A scalar
  select, outside the tile loops.
  """
  tiny = jnp.finfo(g.dtype).tiny
  return jnp.where(g >= tiny, g, jnp.full_like(g, tiny))


def _weights_by_max(term, M, inv_g, hard):
  """``exp((term - M) / g)`` shifted by the pair maxima ``M`` (soft), or ``term == M`` (hard).

  The exponent of a maximizer is set to exactly ``0`` by the comparison ``term >= M``: XLA may
  contract ``term - M`` into a fused multiply-add whose rounding residual at a maximizer, divided
  by a tiny ``g`` (a traced zero), would flush its weight to 0 or overflow. It also keeps every
  exponent ``<= 0``, so padded tiles stay finite. ``inv_g``: ``1 / g``.
  """
  if hard:
    return (term == M).astype(term.dtype)
  return jnp.exp(jnp.where(term >= M, jnp.zeros_like(term), term - M) * inv_g)


def _weights_by_one(term, inv_g):
  """``exp((term - 1) / g)``: shifted by ``1``, at least every term, so every exponent is ``<= 0``.

  No comparison is needed: ``term * inv_g - inv_g`` is exactly ``0`` at ``term = 1`` (contracted
  or not) and negative below, and ``g >= _SHIFT_BY_ONE_MIN_GAMMA`` keeps rounding residuals
  harmless.
  """
  return jnp.exp(term * inv_g - inv_g)


def _map_tiles(D, Y, tile_fn, num_outputs):
  """``tile_fn(Da, y) -> outputs`` over the ``(c_rows, a_rows)`` tiles, as ``(n, n)`` ``[c, a]``.

  ``Da``: ``(a_rows, n)`` rows of ``D``; ``y``: ``(c_rows, n)`` rows of ``Y``; each output of
  ``tile_fn`` is ``(c_rows * a_rows,)``, ordered ``(c, a)``. Blocks of rows ``a`` outside, rows
  ``c`` inside, so one block ``D[a_block]`` serves consecutive tiles from cache. Padded rows are
  zeros.
  """
  n = D.shape[-1]
  c_rows, a_rows = _tile_shape(n)
  D_a, Y_c = _pad_rows(D, a_rows), _pad_rows(Y, c_rows)

  def a_block(a0):
    Da = lax.dynamic_slice_in_dim(D_a, a0, a_rows)  # (a, b)
    return lax.map(
      lambda c0: tile_fn(Da, lax.dynamic_slice_in_dim(Y_c, c0, c_rows)), _block_starts(n, c_rows)
    )

  outputs = lax.map(a_block, _block_starts(n, a_rows))  # each (a blocks, c blocks, c_rows * a_rows)

  def assemble(x):
    na, nc = x.shape[:2]
    return (
      x.reshape(na, nc, c_rows, a_rows)
      .transpose(1, 2, 0, 3)
      .reshape(nc * c_rows, na * a_rows)[:n, :n]
    )

  return tuple(assemble(x) for x in outputs[:num_outputs])


def _tile_terms(Da, y):
  """``(c_rows * a_rows, n)`` terms ``D[a, b] Y[c, b]`` of one tile, ``b`` minor (reduced 2-D)."""
  return (Da[None, :, :] * y[:, None, :]).reshape(-1, Da.shape[-1])


def _forward_by_max(D, Y, g, *, hard):
  """``(S, aux)``, ``S`` each pair's maximum term: two reductions per tile (maximum, then sum)."""
  inv_g = g if hard else 1.0 / _divisor(g)

  def tile(Da, y):
    term = _tile_terms(Da, y)
    M = jnp.max(term, axis=-1)  # the real witnesses' maximum: excluded terms are 0 <= every term
    return M, jnp.sum(_weights_by_max(term, M[:, None], inv_g, hard), axis=-1)

  M, total = _map_tiles(D, Y, tile, 2)
  excluded = 2.0 * _weights_by_max(jnp.zeros_like(M), M, inv_g, hard)  # the two zero terms' share
  return M, jnp.log(total - excluded)


def _forward_by_one(D, Y, g):
  """``(S, aux)``, ``S = 1`` (``g >= _SHIFT_BY_ONE_MIN_GAMMA``): one fused reduction per tile."""
  inv_g = 1.0 / g

  def tile(Da, y):
    return (jnp.sum(_weights_by_one(_tile_terms(Da, y), inv_g), axis=-1),)

  (total,) = _map_tiles(D, Y, tile, 1)
  excluded = 2.0 * _weights_by_one(jnp.zeros_like(total), inv_g)  # the two zero terms' share
  return jnp.ones_like(total), jnp.log(total - excluded)


def _soft_forward(D, Y, g):
  """``(S, aux)`` of the soft value kernel in JAX: the shift by ``1`` or by each pair's maximum."""
  return lax.cond(
    g >= _shift_by_one_min_gamma(D.dtype),
    lambda D, Y, g: _forward_by_one(D, Y, g),
    functools.partial(_forward_by_max, hard=False),
    D,
    Y,
    g,
  )


def _native_forward(D, Y, g):
  """``(S, aux)`` of the soft value kernel by the native CPU kernel (:mod:`ste_jax.ops._native`)."""
  return _native.cover_forward(D, Y, _native_temperature(g), _shift_by_one_min_gamma(D.dtype))


def _native_temperature(g):
  """``g``, or ``0`` below the smallest normal number: the native kernels then divide by it, as
  :func:`_divisor` does (they would divide by a subnormal ``g`` itself: ``1 / g = inf``)."""
  return jnp.where(g >= jnp.finfo(g.dtype).tiny, g, jnp.zeros_like(g))


def _on_platform(native, portable, *args):
  """``native(*args)`` on the CPU for float32 where native kernels exist, else ``portable(*args)``.

  Both compute the same values; the choice of backend is made when the program is lowered
  (``lax.platform_dependent``), so the same traced program runs on every backend.
  """
  if not _native.use_native(args[0].dtype):
    return portable(*args)
  return lax.platform_dependent(*args, cpu=native, default=portable)


def forward_single(D, g, *, hard):
  """One tournament ``(n, n)``, zero diagonal: ``(v, S, aux)``, each ``(n, n)`` indexed ``[c, a]``.

  Tiles of ``(c_rows, a_rows)`` pairs (:func:`_tile_shape`, :func:`_map_tiles`); in a tile the
  witness terms ``D[a, b] (1 - D[c, b])`` (excluded witnesses: see :func:`_witness_factors`) are
  reduced over ``b`` to ``aux = log sum_b exp((term - S) / g)`` over the real witnesses, with the
  shift ``S`` each pair's maximum (hard kernel, and soft ``g < _SHIFT_BY_ONE_MIN_GAMMA``) or ``1``
  (soft, larger ``g``: no maximum needed; a ``lax.cond`` on the traced ``g``). Hard: ``aux`` is the
  log of the number of maximizers. A soft kernel at ``g <= 0`` (a traced zero) returns the hard
  values: ``v = M`` and ``aux`` of the hard kernel (see :func:`_divisor`).
  """
  n = D.shape[-1]
  D, Y = _witness_factors(D)
  if hard:
    M, aux = _forward_by_max(D, Y, g, hard=True)
    return M, M, aux

  def ordinary(D, Y, g):
    S, aux = _on_platform(_native_forward, _soft_forward, D, Y, g)
    return soft_value(S, aux, g, n), S, aux

  return lax.cond(g > LARGE_TEMPERATURE, _forward_large, ordinary, D, Y, g)


def _forward_large(D, Y, g):
  """``(v, S, aux)`` for ``g > LARGE_TEMPERATURE``: the value in the ``expm1`` form of
  :func:`~ste_jax.ops._extrema.lse_large`, the residuals of the shift by ``1``, in JAX.

  ``v = S + g (aux - log(n - 2))`` cancels ``g`` ulps there (and is ``inf * 0`` once ``g``
  overflows). With ``x = term - 1`` in ``[-1, 0]``, one pass sums ``x exprel(x / g)`` over all
  witnesses (the two excluded ones, whose terms are ``0``, are taken out as in
  :func:`_forward_by_max`): ``g s``, ``s = mean(expm1(x / g))`` over the real witnesses. Then
  ``v = 1 + (g s) log1p_ratio(s)`` and ``aux = log(n - 2) + log1p(s)``, the shift by one's residual
  that the reverse pass and the tangent map expect.
  """
  n = D.shape[-1]
  # Under a vmap over temperatures both branches run: a safe g here (double where).
  g = jnp.where(g > LARGE_TEMPERATURE, g, jnp.full_like(g, 2.0 * LARGE_TEMPERATURE))

  def tile(Da, y):
    x = _tile_terms(Da, y) - 1.0
    return (jnp.sum(x * exprel(x / g), axis=-1),)

  (total,) = _map_tiles(D, Y, tile, 1)
  excluded = -2.0 * exprel(-1.0 / g)  # the two zero terms' share
  gs = (total - excluded) / (n - 2)
  s = gs / g
  v = 1.0 + gs * log1p_ratio(s)
  aux = math.log(n - 2) + jnp.log1p(s)
  return v, jnp.ones_like(v), aux


def soft_value(S, aux, g, n):
  """``v = S + g (aux - log(n - 2))`` of the soft kernels; exactly ``v = S`` at ``g <= 0``."""
  g = jnp.where(g > 0, g, jnp.zeros_like(g))
  return S + g * (aux - math.log(n - 2))


def tangent_single(D, g, D_dot, g_dot, *, hard):
  r"""The JVP of ``v[c, a] = smax_b(D[a, b] (1 - D[c, b]))``, linear in ``(D_dot, g_dot)``, in JAX.

  .. math::
    \dot v(c, a) = \sum_b w_{cab} \big(\dot D(a, b) (1 - D(c, b)) - D(a, b) \dot D(c, b)\big)
      + \dot\gamma_c \, \frac{v(c, a) - \sum_b w_{cab} D(a, b) (1 - D(c, b))}{\gamma_c}

  with ``w`` the softmax weights over witnesses ``b`` (the even split among maximizers when
  ``hard`` or ``g <= 0``, where the ``g`` term is ``0``). ``D_dot`` or ``g_dot`` may be ``None``
  (a symbolic zero), which skips its term. The layout of the reverse kernel
  (:func:`backward_single`): tiles of one row ``c`` and a block of rows ``a``, laid out ``(b, a)``,
  each normalizing its own weights (:func:`_tangent_tiles`). Forward mode evaluates it (the
  ``ste_jax_cover_tangent`` primitive's implementation); reverse mode runs :func:`backward_single`
  instead, except for a batch with a batch axis, where it is the transpose JAX derives from this
  map: a pass over the same tiles in which ``dD[a, b] += sum_c ...`` accumulates elementwise into an
  ``(n, a_rows)`` carry and ``dD[c, b] -= sum_a ...`` reduces a tile's minor axis. Each tile is
  rematerialized (``jax.checkpoint``), so that transpose recomputes its weights instead of storing
  ``n^3`` of them: memory stays ``O(n^2)`` plus one tile. Second order differentiates this map,
  weights included.
  """
  D, Y = _witness_factors(D)
  if D_dot is not None:
    # The excluded witnesses' terms are 0 (zero diagonals of D and Y); with a zero diagonal in
    # D_dot their tangents are 0 too, so their weights only enter each pair's sum (subtracted in
    # the tiles).
    D_dot = jnp.where(eye_mask(D), jnp.zeros_like(D_dot), D_dot)
  eye = eye_mask(
    D
  )  # the pairs c = a are not pairs: their tangent is 0, as the reverse pass ignores them
  if hard:
    v_dot = _tangent_tiles(D, Y, g, D_dot, g_dot, _hard_weights)
    return jnp.where(eye, jnp.zeros_like(v_dot), v_dot)
  # A traced g <= 0 is the hard limit: its weights, and no g term; soft branches never see g <= 0.
  # The shift the value kernel uses (forward_single): 1 from _SHIFT_BY_ONE_MIN_GAMMA, else each
  # pair's maximum. One branch runs (a select of all under a vmap over temperatures).
  branch = jnp.where(
    g >= _shift_by_one_min_gamma(D.dtype), 2, jnp.where(g >= jnp.finfo(g.dtype).tiny, 1, 0)
  )
  v_dot = lax.switch(
    branch,
    [
      lambda D, Y, g, D_dot, g_dot: _tangent_tiles(D, Y, g, D_dot, g_dot, _hard_weights),
      lambda D, Y, g, D_dot, g_dot: _tangent_tiles(D, Y, g, D_dot, g_dot, _soft_weights_by_max),
      lambda D, Y, g, D_dot, g_dot: _tangent_tiles(D, Y, g, D_dot, g_dot, _soft_weights_by_one),
    ],
    D,
    Y,
    g,
    D_dot,
    g_dot,
  )
  return jnp.where(eye, jnp.zeros_like(v_dot), v_dot)


def _hard_weights(term, g):
  """``(e, e0, S)``: ``1`` at each pair's maximizers on axis 0, ``S`` the maximum.

  ``e0`` is the weight of a zero term.
  """
  del g
  S = jnp.max(term, axis=0)
  return (
    _weights_by_max(term, S[None, :], None, True),
    _weights_by_max(jnp.zeros_like(S), S, None, True),
    S,
  )


def _soft_weights_by_max(term, g):
  """``(e, e0, S)``: ``exp((term - S) / g)`` shifted by each pair's maximum ``S`` over axis 0.

  ``S`` is held constant (the weights' ratios, and ``S + g log(sum e)``, do not depend on it).
  """
  S = lax.stop_gradient(jnp.max(term, axis=0))
  inv_g = 1.0 / g
  return (
    _weights_by_max(term, S[None, :], inv_g, False),
    _weights_by_max(jnp.zeros_like(S), S, inv_g, False),
    S,
  )


def _soft_weights_by_one(term, g):
  """``(e, e0, S)``: ``exp((term - 1) / g)``, shift ``S = 1`` (``g >= _SHIFT_BY_ONE_MIN_GAMMA``)."""
  inv_g = 1.0 / g
  S = jnp.ones(term.shape[1:], term.dtype)
  return _weights_by_one(term, inv_g), _weights_by_one(jnp.zeros_like(S), inv_g), S


def _tangent_tiles(D, Y, g, D_dot, g_dot, weights):
  """:func:`tangent_single` over tiles of one row ``c`` and a block of rows ``a``, as ``(b, a)``.

  ``weights(term, g) -> (e, e0, S)``: the unnormalized weights of a tile's terms over ``b``, the
  weight of a zero term (the two excluded witnesses' share of each pair's sum) and the shift ``S``.
  ``D_dot`` or ``g_dot`` may be ``None`` (a symbolic zero: its term is skipped); the ``g`` term is
  kept only for soft weights.
  """
  n = D.shape[-1]
  soft = weights is not _hard_weights
  g_dot = g_dot if soft else None
  if soft:  # the branch's own range of g, so that the branches not taken stay finite under a vmap
    if weights is _soft_weights_by_one:
      floor = _shift_by_one_min_gamma(g.dtype)
    else:
      floor = jnp.finfo(g.dtype).tiny
    g = jnp.where(g >= floor, g, jnp.full_like(g, floor))
  a_rows = _backward_block_rows(n)
  log_m = math.log(n - 2)

  @functools.partial(jax.checkpoint, prevent_cse=False)
  def tile(Da, Da_dot, y, y_dot):
    term = Da * y[:, None]  # (b, a) for one row c
    e, e0, S = weights(term, g)
    total = jnp.sum(e, axis=0) - 2.0 * e0  # over the real witnesses
    v_dot = jnp.zeros_like(total)
    if Da_dot is not None:
      term_dot = Da_dot * y[:, None] + Da * y_dot[:, None]
      v_dot = jnp.sum(e * term_dot, axis=0) / total
    if g_dot is not None:  # dv/dg = (v - sum_b w term) / g with v = S + g (log total - log m)
      v_dot = v_dot + g_dot * ((S - jnp.sum(e * term, axis=0) / total) / g + jnp.log(total) - log_m)
    return v_dot

  def block_columns(x):  # (b, a) columns of a block of rows a, padded with zero rows
    return None if x is None else _pad_rows(x, a_rows).T

  DT_a, DT_dot_a = block_columns(D), block_columns(D_dot)
  rows = (Y, None if D_dot is None else -D_dot)  # Y_dot = -D_dot off the diagonal

  def a_block(a0):
    Da = lax.dynamic_slice_in_dim(DT_a, a0, a_rows, axis=1)
    Da_dot = None if D_dot is None else lax.dynamic_slice_in_dim(DT_dot_a, a0, a_rows, axis=1)
    return lax.map(lambda r: tile(Da, Da_dot, *r), rows)  # (c, a)

  v_dot = lax.map(a_block, _block_starts(n, a_rows))  # (a blocks, c, a)
  return v_dot.transpose(1, 0, 2).reshape(n, -1)[:, :n]


def backward_single(D, g, v, S, aux, dv, *, hard):
  """VJP of ``v[c, a] = smax_b(D[a, b] (1 - D[c, b]))`` for one tournament, in one tiled pass.

  The transpose of the tangent map (:func:`_tangent_transpose`). With ``G[c, a, b] = dv[c, a]
  w[c, a, b]`` (``w``: the weights over ``b``, rebuilt from the forward's shift ``S`` and ``aux``,
  one exponential per triple): ``dD[c, b] -= sum_a G D[a, b]`` and ``dD[a, b] += sum_c G (1 - D[c,
  b])``. Tiles of one row ``c`` and a block of rows ``a`` (:func:`_backward_block_rows`), laid out
  ``(b, a)`` with ``a`` minor: the first sum reduces a tile's minor axis, the second accumulates
  elementwise into a ``(n, a_rows)`` carry while the inner loop runs over the rows ``c``. The
  excluded witnesses' weights land on the diagonal of ``dD`` only (:func:`_witness_factors`), which
  is set to ``0``. ``dgamma`` needs ``sum G term``, which is ``-sum_cb dD_c[c, b] (1 - D[c, b])`` of
  the first sum, so it costs no pass of its own. Returns ``(dD, dgamma)``; at ``g <= 0`` (a traced
  zero) the weights are the hard kernel's and ``dgamma = 0``, the gradient of the hard limit.
  """
  D, Y = _witness_factors(D)
  eye = eye_mask(dv)
  dv = jnp.where(eye, jnp.zeros_like(dv), dv)
  scale = dv * jnp.exp(-aux)  # dv / each pair's sum of unnormalized weights
  if hard:
    d_c, d_a = _backward_sums(D, Y, S, scale, lambda term, S: _weights_by_max(term, S, g, True))
  else:
    d_c, d_a = _on_platform(_native_backward, _soft_backward_sums, D, Y, S, scale, g)
  dD = jnp.where(eye, jnp.zeros_like(d_c), d_c + d_a)
  if hard:
    return dD, jnp.zeros_like(g)
  g_term = -jnp.sum(d_c * Y)  # sum over triples of G D[a, b] (1 - D[c, b]); Y[c, c] = 0 drops b = c
  positive, g_safe = split_temperature(g)
  dg = (jnp.sum(dv * v) - g_term) / g_safe
  # Above LARGE_TEMPERATURE, v = S + g (aux - log(n - 2)) is not formed (g ulps): the same sum as
  # sum dv (S - sum_b w term) / g + sum dv (aux - log(n - 2)), no product by g.
  log_m = math.log(D.shape[-1] - 2)
  dg_large = (jnp.sum(dv * S) - g_term) / g_safe + jnp.sum(dv * (aux - log_m))
  dg = jnp.where(g_safe > LARGE_TEMPERATURE, dg_large, dg)
  dg = jnp.where(positive, dg, jnp.zeros_like(g_safe))
  return dD, dg.astype(g.dtype)


def _soft_backward_sums(D, Y, S, scale, g):
  """``(dD_c, dD_a)`` of the soft reverse pass in JAX, with the shift of :func:`forward_single`."""
  inv_g = 1.0 / _divisor(g)
  return lax.cond(
    g >= _shift_by_one_min_gamma(D.dtype),
    lambda D, Y, S, scale: _backward_sums(
      D, Y, S, scale, lambda term, S: _weights_by_one(term, inv_g)
    ),
    lambda D, Y, S, scale: _backward_sums(
      D, Y, S, scale, lambda term, S: _weights_by_max(term, S, inv_g, False)
    ),
    D,
    Y,
    S,
    scale,
  )


def _native_backward(D, Y, S, scale, g):
  """``(dD_c, dD_a)`` of the soft reverse pass by the native kernel (:mod:`ste_jax.ops._native`)."""
  return _native.cover_backward(
    D, Y, S, scale, _native_temperature(g), _shift_by_one_min_gamma(D.dtype)
  )


def _backward_sums(D, Y, S, scale, weights):
  """``(dD_c, dD_a)``: ``-sum_a G D[a, b]`` at ``[c, b]`` and ``sum_c G Y[c, b]`` at ``[a, b]``.

  ``G = weights(term, S[c, a]) * scale[c, a]`` over tiles of one row ``c``, a block of rows ``a``.
  """
  n = D.shape[-1]
  a_rows = _backward_block_rows(n)
  DT_a = _pad_rows(D, a_rows).T  # (b, a): a minor
  S_a, scale_a = (
    _pad_rows(S.T, a_rows).T,
    _pad_rows(scale.T, a_rows).T,
  )  # (c, a); padded pairs: scale 0

  def a_block(d_c, a0):
    Da = lax.dynamic_slice_in_dim(DT_a, a0, a_rows, axis=1)  # (b, a)
    Sa = lax.dynamic_slice_in_dim(S_a, a0, a_rows, axis=1)  # (c, a)
    scale = lax.dynamic_slice_in_dim(scale_a, a0, a_rows, axis=1)

    def tile(acc, inputs):
      y, shift, scale_c = inputs  # (b,), (a,), (a,) for one row c
      G = weights(Da * y[:, None], shift[None, :]) * scale_c[None, :]  # (b, a)
      return acc + G * y[:, None], -jnp.sum(G * Da, axis=-1)

    acc, d_cb = lax.scan(tile, jnp.zeros_like(Da), (Y, Sa, scale))
    return d_c + d_cb, acc

  d_c, acc = lax.scan(a_block, jnp.zeros_like(D), _block_starts(n, a_rows))  # acc: (a blocks, b, a)
  return d_c, acc.transpose(0, 2, 1).reshape(-1, n)[:n]
