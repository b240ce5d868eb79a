"""The posterior-edge estimator (paper §6, Eq. ``posterior_edge_estimator``).

Given ``w_ab`` wins of ``a`` over ``b`` and ``w_ba`` the other way, put a Beta prior on the
probability ``theta_ab`` that ``a`` beats ``b``; the posterior is
``Beta(alpha + w_ab, alpha + w_ba)`` and the directed edge strength is

.. math::

  D_{ab} = \\max\\{0,\\ 2\\Pr(\\theta_{ab} > 1/2 \\mid w_{ab}, w_{ba}) - 1\\}.

Unlike a win rate, a pair seen a few times, or never, gets a weak edge in *both* directions
instead of a confident 1/2 tournament entry, so missing or ambiguous pairs do not create
artificial bidirectional reachability.
"""

import jax
import jax.numpy as jnp
from jax.scipy.special import betainc

from ste_jax._checks import as_float_array, check_square
from ste_jax._validation import validate_symmetric_prior

from ._counts import PairCounts


def posterior_edges(wins, *, prior=(0.5, 0.5)) -> jax.Array:
  """Posterior-edge evidence ``D`` from pairwise win counts.

  .. math::

    D_{ab} = \\max\\{0,\\ 2\\Pr(\\theta_{ab} > 1/2 \\mid w_{ab}, w_{ba}) - 1\\},
    \\qquad \\theta_{ab} \\mid w \\sim \\mathrm{Beta}(\\alpha + w_{ab}, \\alpha + w_{ba}).

  Paper §6, Eq. ``posterior_edge_estimator``, with the symmetric Jeffreys prior
  ``Beta(1/2, 1/2)`` by default. With the regularized incomplete beta function ``I_x``,
  ``Pr(theta > 1/2) = I_{1/2}(alpha + w_ba, alpha + w_ab)`` and ``Pr(theta < 1/2) =
  I_{1/2}(alpha + w_ab, alpha + w_ba)``, so ``D_ab = max(0, Pr(>) - Pr(<))``, which makes
  ``D_ab`` and ``D_ba`` the positive and negative parts of one antisymmetric quantity: at most one
  direction of a pair is positive.

  Conventions: ``D`` is exactly 0 both ways for a pair with equal counts ``w_ab == w_ba`` and for
  an unobserved pair (``w_ab = w_ba = 0``); the diagonal is 0. Counts may be fractional (weights,
  half-wins for ties). Ties: pass ``pair_counts(c, tie_policy="half").wins`` (the default of
  :func:`~ste_jax.data.pair_counts`) so that each tie counts half a win for each side, or
  ``tie_policy="drop"`` to ignore ties; a :class:`~ste_jax.data.PairCounts` is accepted and its
  ``wins`` used.

  Precision: the incomplete beta at counts above about ``10^3`` per pair loses accuracy in
  float32 (about ``1e-3`` absolute at ``10^4``); enable x64 for very large counts.

  Args:
    wins: ``(..., n, n)`` non-negative win counts, ``wins[a, b]`` = wins of ``a`` over ``b``, or a
      ``PairCounts``. Integer counts are converted to the default float dtype.
    prior: ``(alpha, beta)`` of the Beta prior on ``theta_ab``; must be symmetric
      (``alpha == beta > 0``) so that ``D`` does not depend on which agent of a pair is called
      ``a``. Default: Jeffreys ``(0.5, 0.5)``; ``(1, 1)`` is the uniform prior.

  Returns:
    ``D`` of shape ``(..., n, n)`` with values in ``[0, 1)``, in the dtype of ``wins``.

  Raises:
    ValueError: ``wins`` not square, or an invalid prior.

  Examples:
    >>> posterior_edges(jnp.array([[0.0, 8.0], [2.0, 0.0]]))  # 8 wins to 2
    Array([[0.        , 0.94792664],
           [0.        , 0.        ]], dtype=float32)
  """
  if isinstance(wins, PairCounts):
    wins = wins.wins
  alpha, _ = validate_symmetric_prior(prior)
  w = as_float_array(wins, "wins")
  n = check_square(w, "wins")
  # One incomplete beta per unordered pair {a, b} (a < b), the dominant cost of a bootstrap
  # replica: with Pr(theta_ab < 1/2) = I_{1/2}(alpha + w_ab, alpha + w_ba) =: q and Pr(>) = 1 - q
  # (the posterior is continuous), D_ab = max(0, 1 - 2q) and D_ba = max(0, 2q - 1).
  upper, lower = jnp.triu_indices(n, k=1)
  w_ab, w_ba = w[..., upper, lower], w[..., lower, upper]
  q = betainc(alpha + w_ab, alpha + w_ba, jnp.full_like(w_ab, 0.5))
  # Exact zeros where the posterior is symmetric (equal counts, including unobserved pairs),
  # independent of how the incomplete beta rounds; the diagonal stays 0.
  margin = jnp.where(w_ab == w_ba, jnp.zeros_like(q), 1.0 - 2.0 * q)
  zero = jnp.zeros_like(margin)
  d = jnp.zeros_like(w).at[..., upper, lower].set(jnp.maximum(margin, zero))
  return d.at[..., lower, upper].set(jnp.maximum(-margin, zero))
