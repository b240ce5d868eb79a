"""Soft covering (paper §3.4, Eqs. ``soft_cover_violation``, ``soft_cover_score``) and derivatives.

The violation ``v(c, a)`` is a normalized soft maximum over witnesses ``b`` of
``D(a, b) (1 - D(c, b))``, computed by the tiled kernels of :mod:`ste_jax.ops._cover_kernels`
without storing the ``(c, a, b)`` tensor. One custom JVP rule (:func:`_cover_parts`) serves every
mode and order; its tangent map is a primitive (``ste_jax_cover_tangent``) whose transpose, used by
reverse mode, is the one-pass reverse kernel. Memory: ``O(n^2)`` in every mode. Design notes:
``docs/design/cover_kernels.md``.
"""

import functools

import jax
from jax.custom_derivatives import SymbolicZero
import jax.extend
from jax.interpreters import ad, batching, mlir
import jax.numpy as jnp

from ste_jax._checks import as_float_array, as_temperature, check_square, eye_mask, is_static_zero
from ste_jax.ops._batching import flatten_batch, run_batch, unflatten_batch, vmap_by_platform
from ste_jax.ops._compiled import compiled_entry
from ste_jax.ops._cover_kernels import backward_single, forward_single, soft_value, tangent_single


@functools.lru_cache(maxsize=None)
def _kernels(hard: bool):
  """The single-tournament kernels (value with residuals, reverse pass), batched by backend.

  A batch runs as a loop over items on CPU and with a batch axis elsewhere
  (``docs/design/batching.md``).
  """
  fwd = vmap_by_platform(functools.partial(forward_single, hard=hard))
  bwd = vmap_by_platform(functools.partial(backward_single, hard=hard))
  return fwd, bwd


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _cover_parts(D, g, hard):
  """``(v, S, aux)`` for one tournament ``(n, n)`` and a scalar temperature ``g`` (vmap-able).

  ``S`` and ``aux`` (the shift and log-sum-exp of :func:`forward_single`) are residuals that the
  tangent map's transpose reuses; only ``v`` leaves this module, and the rule below declares their
  tangents zero (the weights they normalize do not depend on them).
  """
  return _kernels(hard)[0](D, g)


def _cover_parts_jvp(hard, primals, tangents):
  (D, g), (D_dot, g_dot) = primals, tangents
  # The primal through the custom-JVP function itself, so that differentiating this rule (second
  # order) uses the rule again; at first order it is the forward kernel.
  v, S, aux = _cover_parts(D, g, hard)
  zeros = (jnp.zeros_like(S), jnp.zeros_like(aux))
  # Symbolic zeros (an input not differentiated, e.g. the temperature under jax.grad in P) skip
  # their terms instead of multiplying zeros by a tile's worth of work.
  D_dot, g_dot = (None if isinstance(t, SymbolicZero) else t for t in (D_dot, g_dot))
  if hard:
    g_dot = None  # the hard kernel's value does not depend on g
  if D_dot is None and g_dot is None:
    return (v, S, aux), (jnp.zeros_like(v),) + zeros
  linear = tuple(t for t in (D_dot, g_dot) if t is not None)
  v_dot = _cover_tangent_p.bind(
    D, g, S, aux, *linear, hard=hard, with_D_dot=D_dot is not None, with_g_dot=g_dot is not None
  )
  return (v, S, aux), (v_dot,) + zeros


_cover_parts.defjvp(_cover_parts_jvp, symbolic_zeros=True)


def _cover_violation(D, g, hard):
  """``v`` for one tournament ``(n, n)`` and a scalar temperature ``g`` (vmap-able)."""
  return _cover_parts(D, g, hard)[0]


# The cover's tangent map as a primitive, linear in its tangent operands, so that reverse mode uses
# a hand-written transpose (the one-pass reverse kernel, native on the CPU) instead of the transpose
# JAX would derive from the JAX tangent map. Operands: D, g, S, aux, then D_dot and/or g_dot (as
# with_D_dot / with_g_dot say); params: hard, with_D_dot, with_g_dot.
_cover_tangent_p = jax.extend.core.Primitive("ste_jax_cover_tangent")


def _split_tangent_operands(operands, with_D_dot, with_g_dot):
  D, g, S, aux, *linear = operands
  D_dot = linear.pop(0) if with_D_dot else None
  g_dot = linear.pop(0) if with_g_dot else None
  return D, g, S, aux, D_dot, g_dot


def _cover_tangent_impl(*operands, hard, with_D_dot, with_g_dot):
  """The tangent map in JAX (:func:`tangent_single`): forward mode evaluates it."""
  D, g, _, _, D_dot, g_dot = _split_tangent_operands(operands, with_D_dot, with_g_dot)
  return tangent_single(D, g, D_dot, g_dot, hard=hard)


def _cover_tangent_jvp(primals, tangents, *, hard, with_D_dot, with_g_dot):
  """Second order: the JAX tangent map differentiated by JAX (``S``, ``aux`` only shift weights)."""
  D, g, _, _, D_dot, g_dot = _split_tangent_operands(primals, with_D_dot, with_g_dot)
  tD, tg, _, _, tD_dot, tg_dot = _split_tangent_operands(
    [ad.instantiate_zeros(t) for t in tangents], with_D_dot, with_g_dot
  )
  return jax.jvp(
    lambda D, g, D_dot, g_dot: tangent_single(D, g, D_dot, g_dot, hard=hard),
    (D, g, D_dot, g_dot),
    (tD, tg, tD_dot, tg_dot),
  )


def _cover_tangent_transpose(ct, *operands, hard, with_D_dot, with_g_dot):
  """Reverse mode: the cotangents of ``(D_dot, g_dot)`` by the one-pass reverse kernel."""
  D, g, S, aux, _, _ = _split_tangent_operands(operands, with_D_dot, with_g_dot)
  if any(ad.is_undefined_primal(x) for x in (D, g, S, aux)):
    raise NotImplementedError("the cover's tangent map is linear in its tangents only")
  if type(ct) is ad.Zero:
    return [None] * (4 + with_D_dot + with_g_dot)
  dD, dg = _tangent_transpose(hard, D, g, S, aux, ct)
  return [None] * 4 + ([dD] if with_D_dot else []) + ([dg] if with_g_dot else [])


def _cover_tangent_batch(args, dims, *, hard, with_D_dot, with_g_dot):
  """A batch as a loop on CPU (each item keeps the hand-written transpose), else a batch axis."""
  params = dict(hard=hard, with_D_dot=with_D_dot, with_g_dot=with_g_dot)
  batched = [d is not None for d in dims]  # None: not mapped (batching.not_mapped)
  size = next(a.shape[d] for a, d, b in zip(args, dims, batched) if b)
  args = [jnp.moveaxis(a, d, 0) if b else a for a, d, b in zip(args, dims, batched)]
  out = run_batch(
    lambda *a: _cover_tangent_p.bind(*a, **params),
    functools.partial(_cover_tangent_impl, **params),
    args,
    batched,
    size,
  )
  return out, 0


_cover_tangent_p.def_impl(_cover_tangent_impl)
_cover_tangent_p.def_abstract_eval(lambda D, *_, **__: D)  # v_dot: D's shape and dtype
mlir.register_lowering(
  _cover_tangent_p, mlir.lower_fun(_cover_tangent_impl, multiple_results=False)
)
ad.primitive_jvps[_cover_tangent_p] = _cover_tangent_jvp
ad.primitive_transposes[_cover_tangent_p] = _cover_tangent_transpose
batching.primitive_batchers[_cover_tangent_p] = _cover_tangent_batch


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _tangent_transpose(hard, D, g, S, aux, ct):
  """``(dD, dgamma)``: the tangent map's transpose at ``(D, g)`` applied to ``ct`` (reverse kernel).

  Its own derivative (reverse mode differentiated again) is that of the transpose JAX derives from
  the JAX tangent map.
  """
  v = S if hard else soft_value(S, aux, g, D.shape[-1])  # as forward_single
  return _kernels(hard)[1](D, g, v, S, aux, ct)


@_tangent_transpose.defjvp
def _tangent_transpose_jvp(hard, primals, tangents):
  D, g, _, _, ct = primals
  tD, tg, _, _, tct = tangents

  def transposed(D, g, ct):
    dD, dg = jax.linear_transpose(
      lambda D_dot, g_dot: tangent_single(D, g, D_dot, g_dot, hard=hard), D, g
    )(ct)
    return dD, dg

  return jax.jvp(transposed, (D, g, ct), (tD, tg, tct))


@compiled_entry(temperatures=("gamma_c",))
def soft_cover_violation(D: jax.typing.ArrayLike, *, gamma_c: jax.typing.ArrayLike) -> jax.Array:
  r"""Soft violation of "c covers a" (Eq. ``soft_cover_violation``), ``v[..., c, a]``.

  .. math::
    v(c, a) = \mathrm{smax}_{\gamma_c}\big(\{D(a, b)\,(1 - D(c, b)) :
      b \in \mathcal{A} \setminus \{a, c\}\}\big)

  normalized by ``m = n - 2`` witnesses; the maximum over an empty set (``n <= 2``) is ``0``.

  Args:
    D: soft adjacency of shape ``(..., n, n)``.
    gamma_c: temperature ``>= 0`` (traced). ``0`` gives the exact maximum, traced or not, with a
      subgradient split evenly among tied maximizers and a zero gradient in ``gamma_c`` (a literal
      ``0`` compiles the hard kernels; a traced zero runs the soft ones in their limit). A concrete
      negative or non-finite value raises ``ValueError``; traced values cannot be checked (a traced
      ``gamma_c < 0`` gives the exact maximum).

  Returns:
    ``(..., n, n)`` array indexed ``[c, a]``; the diagonal (``c = a``) is meaningless and set to 0.

  Examples:
    >>> import jax.numpy as jnp
    >>> D = jnp.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    >>> v = soft_cover_violation(D, gamma_c=0.0)
    >>> [float(x) for x in v[:, 0]]  # only agent 2 fails to cover agent 0 (witness 1)
    [0.0, 0.0, 1.0]
  """
  D = as_float_array(D, "D")
  n = check_square(D, "D")
  eye = eye_mask(D)
  D = jnp.where(eye, jnp.zeros_like(D), D)
  g = as_temperature(gamma_c, D, "gamma_c", allow_zero=True)
  if n <= 2:
    return jnp.zeros_like(D)
  hard = is_static_zero(gamma_c)
  g = jnp.ones((), D.dtype) if hard else g
  if D.ndim == 2:
    v = _cover_violation(D, g, hard)
  else:
    flat, batch = flatten_batch(D, 2)
    violation = jax.vmap(
      _cover_violation, in_axes=(0, None, None)
    )  # a loop over items on CPU (vmap_by_platform)
    v = unflatten_batch(violation(flat, g, hard), batch)
  return jnp.where(eye, jnp.zeros_like(v), v)


@compiled_entry(temperatures=("gamma_c",))
def soft_cover_scores(D: jax.typing.ArrayLike, *, gamma_c: jax.typing.ArrayLike) -> jax.Array:
  r"""Soft covering relation (Eq. ``soft_cover_score``), ``cover[..., c, a]``.

  .. math::
    \mathrm{cover}(c, a) = D(c, a)\,\big(1 - v(c, a)\big), \qquad \mathrm{cover}(a, a) = 0,

  with ``v`` from :func:`soft_cover_violation`. Computed over tiles of ``(c, a)`` pairs;
  derivatives use ``O(n^2)`` memory, a few ``n x n`` arrays plus one tile or block (see the module
  docstring): a custom JVP rule that serves every mode and order (``jax.grad``, ``jax.vjp``,
  ``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``, ``jax.hessian``), whose tangent map reverse mode
  transposes with a hand-written one-pass kernel. On the CPU, float32 runs native kernels
  (:func:`~ste_jax.ops.native_kernels`).

  Args:
    D: soft adjacency of shape ``(..., n, n)``, entries in ``[0, 1]``.
    gamma_c: covering temperature ``>= 0`` (traced); ``0``, traced or literal, is the exact maximum
      (see :func:`soft_cover_violation`).

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
