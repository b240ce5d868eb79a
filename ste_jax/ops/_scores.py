"""Membership scores (paper §3.3-3.4, Eqs. ``soft_top_cycle_score``, ``soft_cover_aggregate``,
``soft_uncovered_set_score``) and the one-call STE pipeline."""

import jax

from ste_jax._checks import (
  as_float_array,
  as_temperature,
  check_square,
  check_temperature,
  eye_mask,
  is_static_zero,
  static_path_length,
)
from ste_jax._results import result_type
from ste_jax._validation import check_operator_input
from ste_jax.ops._compiled import compiled_entry
from ste_jax.ops._covering import soft_cover_scores
from ste_jax.ops._edges import soft_majority_edges
from ste_jax.ops._extrema import normalized_smax, normalized_softmin
from ste_jax.ops._reachability import soft_reachability, tournament_reachability


@result_type
class STEScores:
  """Soft Top-Cycle and Uncovered-Set membership scores, each ``(..., n)`` in ``[0, 1]``.

  Attributes:
    top_cycle: ``t`` of Eq. ``soft_top_cycle_score``.
    uncovered: ``u`` of Eq. ``soft_uncovered_set_score``.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.ops import ste_scores
    >>> scores = ste_scores(jnp.full((3, 3), 0.5), tau=0.1)
    >>> scores.top_cycle.shape, scores.uncovered.shape
    ((3,), (3,))
  """

  top_cycle: jax.Array
  uncovered: jax.Array


def soft_top_cycle_score(R: jax.typing.ArrayLike, *, gamma: jax.typing.ArrayLike) -> jax.Array:
  r"""Soft Top-Cycle membership (Eq. ``soft_top_cycle_score``).

  .. math::
    t(a) = \mathrm{smin}_\gamma\big(\{R(a, b) : b \ne a\}\big)

  Args:
    R: soft reachability of shape ``(..., n, n)`` (e.g. from :func:`soft_reachability`).
    gamma: aggregation temperature ``>= 0`` (traced); ``0``, traced or literal, is the exact
      minimum. A concrete negative or non-finite value raises ``ValueError`` (traced values cannot
      be checked).

  Returns:
    ``t`` of shape ``(..., n)`` in ``[0, 1]``. With ``n = 1`` (no opponents) the minimum is ``1``.

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.ops import soft_reachability
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])  # a 3-cycle
    >>> R = soft_reachability(P)
    >>> [round(float(x), 1) for x in soft_top_cycle_score(R, gamma=0.0)]  # row minima of R
    [0.8, 0.7, 0.7]
  """
  R = as_float_array(R, "R")
  check_square(R, "R")
  return normalized_softmin(R, gamma=gamma, axis=-1, where=~eye_mask(R))


@compiled_entry(temperatures=("gamma_c",))
def soft_uncovered_score(D: jax.typing.ArrayLike, *, gamma_c: jax.typing.ArrayLike) -> jax.Array:
  r"""Soft Uncovered-Set membership (Eqs. ``soft_cover_aggregate``, ``soft_uncovered_set_score``).

  .. math::
    q(a) = \mathrm{smax}_{\gamma_c}\big(\{\mathrm{cover}(c, a) : c \ne a\}\big),
    \qquad u(a) = 1 - q(a).

  Args:
    D: soft adjacency of shape ``(..., n, n)``.
    gamma_c: covering temperature ``>= 0`` (traced); ``0``, traced or literal, gives exact maxima.
      A concrete negative or non-finite value raises ``ValueError`` (traced values cannot be
      checked).

  Returns:
    ``u`` of shape ``(..., n)`` in ``[0, 1]``; ``u = 1`` when ``n = 1`` (no possible coverer).

  Examples:
    >>> import jax.numpy as jnp
    >>> D = jnp.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # 0 > 1 > 2, 0 > 2
    >>> [float(x) for x in soft_uncovered_score(D, gamma_c=0.0)]
    [1.0, 0.0, 0.0]
  """
  D = as_float_array(D, "D")
  check_square(D, "D")
  cover = soft_cover_scores(D, gamma_c=gamma_c)
  q = normalized_smax(cover, gamma=gamma_c, axis=-2, where=~eye_mask(cover))
  return 1.0 - q


def _check_temperatures(**temperatures) -> None:
  """Checks each given temperature under its own name (``None``: a default, checked elsewhere)."""
  for name, value in temperatures.items():
    if value is not None:
      check_temperature(value, name, allow_zero=True)


def _check_edges(arguments) -> None:
  check_operator_input(
    arguments["D"], "D", validate=arguments["validate"] is not False, complementary=False
  )


def _check_tournament(arguments) -> None:
  check_operator_input(
    arguments["P"], "P", validate=arguments["validate"] is not False, complementary=True
  )


@compiled_entry(
  temperatures=("gamma", "gamma_c", "reach_gamma"),
  static=("max_path_length", "validate"),
  check=_check_edges,
)
def ste_scores_from_edges(
  D: jax.typing.ArrayLike,
  *,
  gamma: jax.typing.ArrayLike,
  gamma_c: jax.typing.ArrayLike | None = None,
  max_path_length: int | None = None,
  reach_gamma: jax.typing.ArrayLike = 0.0,
  validate: bool = True,
) -> STEScores:
  """STE scores from a soft adjacency matrix ``D`` (paper §3.3-3.4).

  Use this when the edges do not come from Eq. ``soft_majority_edge``, e.g. the posterior-edge
  estimator of §6.1 (Eq. ``posterior_edge_estimator``).

  Args:
    D: ``(..., n, n)`` soft adjacency with entries in ``[0, 1]`` (its diagonal is ignored).
    gamma: Top-Cycle aggregation temperature ``>= 0`` (traced).
    gamma_c: covering temperature ``>= 0`` (traced); defaults to ``gamma``.
    max_path_length: ``K`` (static); ``None`` means ``n - 1``.
    reach_gamma: temperature ``>= 0`` of the smooth max-min products; ``0`` (default) is the exact
      max-min closure used in the paper's experiments.
    validate: check a concrete ``D``'s values (off the diagonal: finite, in ``[0, 1]``) before
      computing; ``False`` skips the check (one pass over ``D`` on the host). Traced inputs
      (inside ``jit``, ``vmap``, ``grad``) are never checked.

  Temperatures as in :func:`ste_scores`: ``0`` (traced or literal) is the exact hard limit, any
  finite positive value is usable, and a concrete negative or non-finite value raises
  ``OptionError`` naming the argument.

  Returns:
    :class:`STEScores` with fields of shape ``(..., n)``.

  Raises:
    InputError: ``validate`` and a concrete ``D`` with a NaN, an infinity or a value outside
      ``[0, 1]`` off its diagonal, naming the first such entry.
    OptionError: a concrete temperature that is negative or not finite.

  Examples:
    >>> import jax.numpy as jnp
    >>> D = jnp.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])  # 0 > 1 > 2, 0 > 2
    >>> s = ste_scores_from_edges(D, gamma=0.0)
    >>> [float(x) for x in s.top_cycle], [float(x) for x in s.uncovered]
    ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0])
  """
  _check_edges({"D": D, "validate": validate})
  D = as_float_array(D, "D")
  check_square(D, "D")
  _check_temperatures(gamma=gamma, gamma_c=gamma_c, reach_gamma=reach_gamma)
  gamma_c = gamma if gamma_c is None else gamma_c
  R = soft_reachability(D, max_path_length=max_path_length, gamma=reach_gamma)
  return STEScores(
    top_cycle=soft_top_cycle_score(R, gamma=gamma),
    uncovered=soft_uncovered_score(D, gamma_c=gamma_c),
  )


@compiled_entry(
  temperatures=("tau", "gamma", "gamma_c", "reach_gamma"),
  static=("max_path_length", "validate"),
  check=_check_tournament,
)
def ste_scores(
  P: jax.typing.ArrayLike,
  *,
  tau: jax.typing.ArrayLike = 0.05,
  gamma: jax.typing.ArrayLike | None = None,
  gamma_c: jax.typing.ArrayLike | None = None,
  max_path_length: int | None = None,
  reach_gamma: jax.typing.ArrayLike = 0.0,
  validate: bool = True,
) -> STEScores:
  r"""Soft Top-Cycle and Uncovered-Set membership scores of a probabilistic tournament.

  The full operator pipeline of paper §3.2-3.4: ``D = soft_majority_edges(P, tau)``, reachability
  ``R`` (Eqs. ``soft_path_length_k``, ``soft_reachability``), ``t`` (Eq. ``soft_top_cycle_score``)
  and ``u`` (Eqs. ``soft_cover_violation`` to ``soft_uncovered_set_score``).

  As ``tau, gamma, gamma_c -> 0`` on a tournament without ties, ``t`` and ``u`` tend to the 0/1
  indicators of the Top Cycle and the Uncovered Set (paper Thm. "Consistency of STE"). *Ties:* an
  exact tie ``P_ab = 1/2`` gives ``D_ab = D_ba = 1/2`` at every ``tau``, so reachability and
  covering through a tied pair saturate at ``1/2``, not at 0 or 1: an agent whose membership hinges
  on a tied pair gets a score near ``1/2`` in the hard limit (e.g. two agents tied with each other
  and beating everyone else both get ``t -> 1/2``), whereas the hard :func:`~ste_jax.top_cycle`
  counts a tie both ways (Smith set). Scores are continuous membership strengths, not calibrated
  probabilities.

  With ``reach_gamma = 0`` the exact max-min closure runs on ``P`` itself and the sigmoid is
  applied afterwards (see :func:`soft_reachability`): same values, but float32 gradients stay
  close to float64 when many edges saturate.

  Differentiable in ``P`` and in each temperature in every mode: reverse (``jax.grad``,
  ``jax.vjp``), forward (``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``) and second order
  (``jax.hessian``, Hessian-vector products in either nesting), also with ``reach_gamma > 0``. The
  closure and the cover carry custom JVP rules whose tangent maps are transposed for reverse mode
  (the closure's by JAX, the cover's by its hand-written one-pass reverse kernel,
  :mod:`ste_jax.ops._covering`); both keep ``O(n^2)`` memory; the smooth products
  (``reach_gamma > 0``) need ``O(n^3)``. Where a hard limit is not differentiable they are
  subgradients: the closure follows one bottleneck edge among equal ones, a hard maximum splits
  evenly among tied maximizers.

  Called outside ``jax.jit`` it compiles itself once per shape, static arguments and trace options
  (:mod:`ste_jax.ops._compiled`); inside a user's ``jit``, ``grad`` or ``vmap`` it is a nested
  ``jit``. Temperatures are traced scalars (a new value does not recompile) and ``0`` is allowed for
  each: it is the exact hard limit of that operator, whether the zero is a literal (which compiles
  the exact kernels) or traced (e.g. ``jax.jit(lambda t: ste_scores(P, tau=t))(0.0)``, which runs
  the smooth kernels in their limit), with finite values and gradients in both cases. With all of
  them ``0`` on a tournament without ties, ``t`` and ``u`` are the 0/1 indicators of the Top Cycle
  and the Uncovered Set. A concrete temperature (Python/NumPy number or a JAX array outside ``jit``)
  that is negative or not finite raises ``OptionError`` naming the argument; traced values cannot
  be checked, and a traced negative value acts as ``0``. Every finite temperature is usable, in
  every dtype: one below the square root of the dtype's smallest normal number (float32:
  ``1.1e-19``) acts as ``0``, one beyond its largest
  finite number (``1e300`` in float32) as that number, and above ``1`` the soft extrema run in an
  ``expm1`` form without cancellation, so that large temperatures reach the ``t -> inf`` limit
  (every soft extremum becomes a mean; as ``tau -> inf`` too, ``D -> 1/2``, ``t -> 1/2`` and
  ``u -> 5/8`` for ``n >= 3``) instead of NaN (``docs/design/validation.md``).

  Args:
    P: probabilistic tournament of shape ``(..., n, n)`` (``P + P^T = 1``, diagonal ``1/2``; see
      :func:`~ste_jax.validate_tournament`).
    tau: edge temperature ``>= 0`` (traced).
    gamma: Top-Cycle softmin temperature ``>= 0`` (traced); defaults to ``tau``.
    gamma_c: covering temperature ``>= 0`` (traced); defaults to ``gamma``.
    max_path_length: ``K`` (static); ``None`` means ``n - 1`` (exact reachability).
    reach_gamma: smooth-product temperature ``>= 0``; ``0`` (default) is the exact max-min closure
      (a literal ``0`` runs the closure on ``P``; a traced ``0`` the dense smooth products).
    validate: check a concrete ``P``'s values before computing, as
      :func:`~ste_jax.validate_tournament` does, off the diagonal (which is never read): finite,
      in ``[0, 1]``, ``P + P^T = 1`` within ``1e-6``. ``False`` skips the check (one pass over
      ``P`` on the host). Traced inputs (inside ``jit``, ``vmap``, ``grad``) are never checked.

  Returns:
    :class:`STEScores` ``(top_cycle, uncovered)``, each of shape ``(..., n)`` in ``[0, 1]``.

  Raises:
    InputError: ``validate`` and a concrete ``P`` with a NaN, an infinity, a value outside
      ``[0, 1]`` or ``P[a, b] + P[b, a] != 1`` off its diagonal, naming the first such entry.
    OptionError: a concrete temperature that is negative or not finite.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.7, 0.3], [0.3, 0.5, 0.7], [0.7, 0.3, 0.5]])  # a 3-cycle
    >>> s = ste_scores(P, tau=0.01)
    >>> [round(float(x), 2) for x in s.top_cycle]
    [1.0, 1.0, 1.0]
  """
  _check_tournament({"P": P, "validate": validate})
  P = as_float_array(P, "P")
  n = check_square(P, "P")
  t = as_temperature(tau, P, "tau", allow_zero=True)
  _check_temperatures(gamma=gamma, gamma_c=gamma_c, reach_gamma=reach_gamma)
  # Defaults pass ``tau`` itself on (not ``t``), so that a literal 0 selects the exact kernels.
  gamma = tau if gamma is None else gamma
  gamma_c = gamma if gamma_c is None else gamma_c
  D = soft_majority_edges(P, tau=t)
  if is_static_zero(reach_gamma):
    R = tournament_reachability(P, t, static_path_length(max_path_length, n))
  else:
    R = soft_reachability(D, max_path_length=max_path_length, gamma=reach_gamma)
  return STEScores(
    top_cycle=soft_top_cycle_score(R, gamma=gamma),
    uncovered=soft_uncovered_score(D, gamma_c=gamma_c),
  )
