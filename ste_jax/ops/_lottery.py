"""Game-theoretic ratings: the soft maximal lottery, Nash averaging and alpha-Rank.

* :func:`soft_maximal_lottery`: the entropy-regularized (logit quantal-response) equilibrium of the
  symmetric zero-sum margin game; smooth in the margins and the temperature, with gradients by the
  implicit function theorem; tends to a maximal lottery as the temperature goes to 0.
* :func:`nash_average`: Nash averaging (Balduzzi et al. 2018): the maximum-entropy Nash equilibrium
  of an antisymmetric payoff and the skill vector it induces.
* :func:`alpha_rank`: single-population alpha-Rank (Omidshafiei et al. 2019) as OpenSpiel's
  ``alpharank.compute(..., use_local_selection_model=False)`` defines it; stationary distribution
  by one linear solve; differentiable by autodiff.
"""

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, as_temperature, check_square
from ste_jax._results import result_type
from ste_jax.ops._batching import flatten_batch, unflatten_batch
from ste_jax.ops._compiled import compiled_entry

_MAX_SOLVER_ITERATIONS = 100_000


def _skew(M: jax.Array) -> jax.Array:
  return 0.5 * (M - jnp.swapaxes(M, -1, -2))


def _over_batch(fun, *arrays_and_core_ndims):
  """Applies a single-instance ``fun`` over the flattened leading axes of its array arguments."""
  (first, core), rest = arrays_and_core_ndims[0], arrays_and_core_ndims[1:]
  if first.ndim == core:
    return fun(first, *(a for a, _ in rest))
  flat, batch = flatten_batch(first, core)
  others = [a for a, _ in rest]
  out = jax.vmap(fun, in_axes=(0,) + (None,) * len(others))(flat, *others)
  return jax.tree.map(lambda o: unflatten_batch(o, batch), out)


def _qre_residual(K, p, tau):
  return p - jax.nn.softmax(K @ p / tau)


def _solve_qre(K: jax.Array, tau: jax.Array) -> jax.Array:
  """Symmetric logit equilibrium ``p = softmax(K p / tau)`` by the predictive (optimistic)
  multiplicative-weights update of Cen, Wei and Chi (2021) for entropy-regularized games.

  With step ``eta = 1 / (tau + 2 max|K|)`` the iterates contract at rate ``1 - eta tau`` (linear
  convergence); plain fixed-point iteration ``p <- softmax(K p / tau)`` can cycle for small
  ``tau``. Stops when ``max |p - softmax(K p / tau)| <= 4 eps`` or after 100000 iterations.
  """
  n = K.shape[-1]
  dtype = K.dtype
  eta = 1.0 / (tau + 2.0 * jnp.max(jnp.abs(K)) + jnp.finfo(dtype).tiny)
  keep = 1.0 - eta * tau
  tol = 4 * jnp.finfo(dtype).eps

  def cond(state):
    _, residual, it = state
    return (residual > tol) & (it < _MAX_SOLVER_ITERATIONS)

  def body(state):
    z, _, it = state
    p = jnp.exp(z)
    z_mid = jax.nn.log_softmax(keep * z + eta * (K @ p))
    z = jax.nn.log_softmax(keep * z + eta * (K @ jnp.exp(z_mid)))
    return z, jnp.max(jnp.abs(_qre_residual(K, jnp.exp(z), tau))), it + 1

  z0 = jnp.full((n,), -jnp.log(jnp.asarray(n, dtype)), dtype)
  z, _, _ = lax.while_loop(cond, body, (z0, jnp.asarray(jnp.inf, dtype), jnp.zeros((), jnp.int32)))
  return jnp.exp(z)


@jax.custom_jvp
def _soft_ml_single(M: jax.Array, tau: jax.Array) -> jax.Array:
  return _solve_qre(_skew(M), tau)


@_soft_ml_single.defjvp
def _soft_ml_jvp(primals, tangents):
  r"""Implicit function theorem on ``F(p, K, tau) = p - softmax(K p / tau) = 0``.

  With ``S = diag(p) - p p^T``, ``dF/dp = I - S K / tau`` is invertible (``S K`` is similar to the
  skew matrix ``S^(1/2) K S^(1/2)``, so its eigenvalues are imaginary), and

  .. math::
    \dot p = (I - S K / \tau)^{-1} \, S \big(\dot K p - K p \, \dot\tau / \tau\big) / \tau,
    \qquad \dot K = (\dot M - \dot M^T) / 2.

  Linear in the tangents (one ``n x n`` solve, whose transpose JAX derives for reverse mode: the
  solver's iterations are never differentiated or stored); the primal comes from the custom-JVP
  function itself, so a second derivative applies this rule again.
  """
  (M, tau), (M_dot, tau_dot) = primals, tangents
  p = _soft_ml_single(M, tau)
  K = _skew(M)
  n = p.shape[-1]
  S = jnp.diag(p) - jnp.outer(p, p)
  Kp = K @ p
  rhs = S @ (_skew(M_dot) @ p - Kp * (tau_dot / tau)) / tau
  p_dot = jnp.linalg.solve(jnp.eye(n, dtype=p.dtype) - S @ K / tau, rhs)
  return p, p_dot


@compiled_entry(temperatures=("temperature",), positive=("temperature",))
def soft_maximal_lottery(
  M: jax.typing.ArrayLike, *, temperature: jax.typing.ArrayLike
) -> jax.Array:
  """Soft maximal lottery: the logit (entropy-regularized) equilibrium of the margin game ``M``.

  The unique solution of the entropy-regularized symmetric zero-sum game
  ``max_p min_q p^T K q + tau H(p) - tau H(q)`` with ``K = (M - M^T) / 2``; it is symmetric and is
  the fixed point

  .. math::

     p = \\operatorname{softmax}(K p / \\tau),

  the logit quantal-response equilibrium (McKelvey and Palfrey 1995) of the game. Every limit
  point as ``tau -> 0`` is a maximal lottery (:func:`~ste_jax.exact.maximal_lottery`), the unique
  one on tournaments. Solved by the predictive multiplicative-weights update (Cen et al. 2021),
  which converges linearly at rate ``1 - tau / (tau + 2 max|K|)`` per iteration, so the cost grows
  like ``1 / tau`` (about ``20 / tau`` mat-vecs in float32). Derivatives in every autodiff mode
  (``jax.grad``, ``jax.jvp``, ``jax.hessian``) by the implicit function theorem (a custom JVP rule:
  one ``n x n`` linear solve, transposed by JAX for reverse mode; the solver's iterations are not
  stored).

  Args:
    M: ``(..., n, n)`` margin matrix (e.g. ``P - P^T``); only its skew part is used.
    temperature: scalar ``tau > 0`` (traced: changing it does not recompile).

  Returns:
    ``(..., n)`` lottery, strictly positive, summing to 1, in ``M``'s floating dtype.

  Raises:
    ValueError: if ``M`` is not square or ``temperature`` is not a scalar (or, when concrete, is
      not ``> 0``).

  Examples:
    >>> import jax.numpy as jnp
    >>> M = jnp.array([[0., 1., 1.], [-1., 0., 1.], [-1., -1., 0.]])  # 0 > 1 > 2, transitive
    >>> [round(float(v), 3) for v in soft_maximal_lottery(M, temperature=0.5)]
    [0.791, 0.126, 0.083]
    >>> [round(float(v), 3) for v in soft_maximal_lottery(M, temperature=0.05)]  # -> the winner
    [1.0, 0.0, 0.0]

  References:
    R. D. McKelvey, T. R. Palfrey (1995), Quantal response equilibria for normal form games, GEB
    10. S. Cen, Y. Wei, Y. Chi (2021), Fast policy extragradient methods for competitive games with
    entropy regularization, NeurIPS.
  """
  M = as_float_array(M, "M")
  check_square(M, "M")
  tau = as_temperature(temperature, M, "temperature")
  if M.shape[-1] == 0:
    return jnp.zeros(M.shape[:-1], M.dtype)
  return _over_batch(_soft_ml_single, (M, 2), (tau, 0))


@result_type
class NashAverage:
  """Result of :func:`nash_average`.

  Attributes:
    distribution: ``(..., n)`` maximum-entropy Nash equilibrium ``p*`` of the payoff game.
    skill: ``(..., n)`` Nash-averaged skill ``A p*``: each agent's expected payoff against ``p*``
      (``<= 0``, with ``0`` on the support of ``p*``).

  Examples:
    >>> import jax.numpy as jnp
    >>> from ste_jax.ops import nash_average
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])  # a 3-cycle
    >>> result = nash_average(P)
    >>> [round(float(x), 3) for x in result.distribution]
    [0.444, 0.222, 0.333]
    >>> [abs(round(float(x), 3)) for x in result.skill]  # zero against the equilibrium
    [0.0, 0.0, 0.0]
  """

  distribution: jax.Array
  skill: jax.Array


def nash_average(payoff: jax.typing.ArrayLike) -> NashAverage:
  """Nash averaging (Balduzzi et al. 2018): the max-entropy Nash equilibrium and the skill vector.

  For an antisymmetric evaluation matrix ``A`` (agent vs agent, e.g. the logits
  ``log(P / (1 - P))`` or the margins ``P - P^T``), the symmetric zero-sum game ``A`` has value 0
  and a polytope of Nash equilibria; Nash averaging picks the one of maximum entropy,

  .. math::

     p^\\star = \\arg\\max_{p \\in \\Delta_n,\\; A^T p \\ge 0} H(p), \\qquad
     \\text{skill} = A p^\\star,

  which is invariant to adding redundant copies of an agent. ``p*`` is
  :func:`~ste_jax.exact.maximal_lottery` of ``A``. Not differentiable (an exact LP); use
  :func:`soft_maximal_lottery` for gradients.

  Args:
    payoff: ``(..., n, n)`` antisymmetric payoff; only its skew part ``(A - A^T) / 2`` is used.

  Returns:
    :class:`NashAverage` ``(distribution, skill)``, each ``(..., n)``.

  Examples:
    >>> import jax.numpy as jnp
    >>> A = jnp.array([[0., 1., -1.], [-1., 0., 1.], [1., -1., 0.]])  # rock-paper-scissors
    >>> out = nash_average(A)
    >>> [round(float(v), 4) for v in out.distribution], [abs(round(float(v), 4)) for v in out.skill]
    ([0.3333, 0.3333, 0.3333], [0.0, 0.0, 0.0])

  References:
    D. Balduzzi, K. Tuyls, J. Perolat, T. Graepel (2018), Re-evaluating evaluation, NeurIPS.
  """
  from ste_jax.exact._lotteries import maximal_lottery  # noqa: PLC0415 (exact imports ops)

  A = as_float_array(payoff, "payoff")
  check_square(A, "payoff")
  K = _skew(A)
  p = maximal_lottery(K)
  return NashAverage(p, jnp.einsum("...ab,...b->...a", K, p))


def _alpha_rank_single(payoff: jax.Array, alpha: jax.Array, m: int) -> jax.Array:
  n = payoff.shape[-1]
  dtype = payoff.dtype
  d = jnp.diagonal(payoff)
  pi_rs = payoff.T  # [s, r] = payoff of the mutant r against a resident s
  pi_sr = payoff  # [s, r] = payoff of a resident s against the mutant r
  pi_rr = d[None, :]
  pi_ss = d[:, None]

  # log of the l-th term of the fixation sum: -alpha * sum_{k=1..l} (f_r(k) - f_s(k)), where with k
  # mutants f_r(k) = ((k-1) pi_rr + (m-k) pi_rs) / (m-1) and
  # f_s(k) = (k pi_sr + (m-k-1) pi_ss) / (m-1).
  def term(l):
    l = l.astype(dtype)
    tri = l * (l + 1) / 2
    total = (
      pi_rr * (l * (l - 1) / 2) + pi_rs * (l * m - tri) - pi_sr * tri - pi_ss * (l * (m - 1) - tri)
    )
    return -alpha * total / (m - 1)

  def step(acc, l):
    return jnp.logaddexp(acc, term(l)), None

  lse, _ = lax.scan(step, jnp.full((n, n), -jnp.inf, dtype), jnp.arange(1, m))
  log_rho = -jnp.logaddexp(0.0, lse)  # [s, r]: fixation probability of r in a population of s
  off = ~jnp.eye(n, dtype=bool)
  rates = jnp.where(off, jnp.exp(log_rho) / (n - 1), 0.0)  # [s, r]: move s -> r
  # The chain C = I + Q with generator Q = rates - diag(rates 1). pi^T Q = 0 and sum(pi) = 1 is
  # solved as Q^T pi = 0 with its last equation replaced by sum(pi) = 1 (nonsingular: the chain is
  # irreducible for finite alpha, every fixation probability being positive). Q is built from the
  # rates alone -- no "1 - sum" and no added "1 1^T" -- so rates far below the float epsilon keep
  # their relative precision (a nearly reducible chain's small masses depend on them).
  system = rates.T - jnp.diag(jnp.sum(rates, axis=-1))
  system = system.at[-1].set(jnp.ones((n,), dtype))
  return jnp.linalg.solve(system, jnp.zeros((n,), dtype).at[-1].set(1.0))


@compiled_entry(temperatures=("alpha",), static=("population_size",))
def alpha_rank(
  payoff: jax.typing.ArrayLike, *, alpha: jax.typing.ArrayLike, population_size: int = 50
) -> jax.Array:
  """Single-population alpha-Rank: the stationary distribution of the evolutionary response graph.

  OpenSpiel's definition with ``use_local_selection_model=False``
  (``open_spiel/python/egt/alpharank.py``, single population, finite ``alpha``; its default local
  selection model equals this function on ``payoff - payoff.T`` with ``alpha (m - 1) / m``, as
  ``tests/ops/test_openspiel_oracle.py`` checks). The stationary solve uses the generator built from
  the off-diagonal rates alone (no ``1 - sum`` diagonal, no added ``1 1^T``), so rates far below the
  float epsilon keep their precision: on a nearly reducible chain (stag hunt, ``m = 10``,
  ``alpha = 10``) the small mass matches OpenSpiel and the closed form in float64, where the earlier
  ``(I - C^T + 1 1^T)`` solve was off by 4.5e-5 relative. A population of ``m`` individuals plays
  the symmetric game ``payoff`` (``payoff[r, s]`` = payoff of strategy ``r`` against ``s``); a
  mutant ``r`` entering the monomorphic population ``s`` fixates with probability (Fermi / logistic
  selection, ``k`` mutants)

  .. math::

     \\rho_{r,s} = \\Big(1 + \\sum_{l=1}^{m-1} \\prod_{k=1}^{l}
       e^{-\\alpha (f_r(k) - f_s(k))}\\Big)^{-1},\\quad
     f_r(k) = \\tfrac{(k-1)\\pi_{rr} + (m-k)\\pi_{rs}}{m-1},\\;
     f_s(k) = \\tfrac{k \\pi_{sr} + (m-k-1)\\pi_{ss}}{m-1},

  the Markov chain over monomorphic states moves ``s -> r`` with probability ``rho_{r,s} / (n-1)``,
  and alpha-Rank is its stationary distribution, found by one linear solve. For a constant-sum game
  (e.g. ``payoff = P``) ``f_r - f_s`` does not depend on ``k``. Computed in the log domain
  (stable for large ``alpha``); differentiable in ``payoff`` and ``alpha``.

  Args:
    payoff: ``(..., n, n)`` payoff table of the symmetric game, e.g. the win probabilities ``P``.
    alpha: scalar selection intensity ``alpha >= 0`` (traced). Large values approach the
      infinite-alpha ranking, but the chain becomes nearly reducible and the solve ill-conditioned.
    population_size: static int ``m >= 2`` (OpenSpiel's default 50).

  Returns:
    ``(..., n)`` stationary distribution (sums to 1).

  Raises:
    ValueError: if ``payoff`` is not square, ``alpha`` is not a scalar, or ``population_size < 2``.

  Examples:
    >>> import jax.numpy as jnp
    >>> rps = jnp.array([[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]])
    >>> [round(float(v), 4) for v in alpha_rank(rps, alpha=10.0)]
    [0.3333, 0.3333, 0.3333]

  References:
    S. Omidshafiei, C. Papadimitriou, G. Piliouras, K. Tuyls, M. Rowland, J.-B. Lespiau, W. M.
    Czarnecki, M. Lanctot, J. Perolat, R. Munos (2019), alpha-Rank: Multi-agent evaluation by
    evolution, Scientific Reports 9.
  """
  payoff = as_float_array(payoff, "payoff")
  n = check_square(payoff, "payoff")
  if (
    isinstance(population_size, bool) or not isinstance(population_size, int) or population_size < 2
  ):
    raise ValueError(f"population_size must be an int >= 2, got {population_size!r}.")
  alpha = as_temperature(alpha, payoff, "alpha", allow_zero=True)
  if n <= 1:
    return jnp.ones(payoff.shape[:-1], payoff.dtype)
  m = population_size
  return _over_batch(lambda A, a: _alpha_rank_single(A, a, m), (payoff, 2), (alpha, 0))
