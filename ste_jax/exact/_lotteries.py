"""Maximal lotteries and their supports: the bipartisan set and the essential set.

A *margin matrix* ``M`` of shape ``(n, n)`` is skew-symmetric (``M = -M^T``): ``M[a, b] > 0`` when
``a`` beats ``b``. It defines a symmetric two-player zero-sum game (the row player picks ``a``, the
column player ``b``, the row player wins ``M[a, b]``) whose value is ``0``. A *maximal lottery*
(Kreweras 1965; Fishburn 1984) is an optimal mixed strategy of that game:

.. math::

   p \\in \\Delta_n, \\qquad (M^T p)_b = \\sum_a p_a M_{ab} \\ge 0 \\quad \\text{for every } b,

i.e. a lottery that beats or ties every agent in expectation. Two margin matrices of a
probabilistic tournament ``P`` are used (:func:`margin_matrix`):

* the *probability margins* ``P - P^T`` (pref_voting's "Maximal Lottery", or C2 maximal lottery);
* the *majority margins* ``sign(P - P^T)`` in ``{-1, 0, 1}`` (pref_voting's "C1 Maximal Lottery").

For a tournament (no ties) the majority game has a unique optimal strategy (Laffond, Laslier and
Le Breton 1993); its support is the *bipartisan set*. In general the optimal strategies form a
polytope; the union of their supports is the *essential set* of the comparison function (Dutta and
Laslier 1999), and Tucker's theorem on skew-symmetric matrices gives an optimal ``p`` whose
support is that union and whose margins ``(M^T p)_b`` are ``> 0`` for every ``b`` outside it
(strict complementarity).

Algorithm (one ``(n, n)`` game; batches by ``jax.vmap`` over flattened leading axes, a loop on CPU):

1. **Interior point.** A Mehrotra predictor-corrector primal-dual interior-point method on the
   linear program ``min 1^T x`` s.t. ``A x >= 1, x >= 0`` with ``A = (1 1^T + K / 2)^T`` and
   ``K = M / max|M|`` (the game shifted to value ``1``, so that ``x* = p*``). Each iteration solves
   one ``n x n`` symmetric positive definite system (Cholesky); it stops when the duality measure
   and the residuals are below a dtype-dependent tolerance, or when the factorization breaks down
   in finite precision.
2. **Support.** Central-path iterates converge to the analytic center of the optimal face, which
   is strictly complementary: ``p_a > 0`` exactly on the essential set, the slack ``(K^T p)_a > 0``
   exactly off it. The support is read off as ``p_a > slack_a``.
3. **Polish.** On the support ``S``, the maximum-entropy lottery with ``(K^T p)_b = 0`` for
   ``b in S`` is found by damped Newton steps on its (unconstrained, smooth) dual
   ``min_lambda log sum_{a in S} exp((K_SS lambda)_a)``, whose solution has
   ``p = softmax(K_SS lambda)`` (strictly positive on ``S``). It is checked: an agent outside ``S``
   with a negative margin joins ``S``, an agent driven to zero probability leaves it, and the
   polish is repeated (at most a few rounds).

The returned lottery is therefore **the maximum-entropy maximal lottery** when the final check
holds (it always held in the tests, float32 and float64); for a tournament this is the unique one.
If it does not hold, the interior-point lottery (optimal up to the solver tolerance) is returned.

References:
  G. Kreweras (1965), Aggregation of preference orderings. P. C. Fishburn (1984), Probabilistic
  social choice based on simple voting comparisons, Rev. Econ. Stud. 51(4). G. Laffond, J.-F.
  Laslier, M. Le Breton (1993), The bipartisan set of a tournament game, GEB 5. B. Dutta, J.-F.
  Laslier (1999), Comparison functions and choice correspondences, Soc. Choice Welfare 16.
  S. Mehrotra (1992), On the implementation of a primal-dual interior point method, SIAM J. Optim.
"""

import jax
from jax import lax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, check_square
from ste_jax.exact._relations import _over_leading_axes
from ste_jax.ops._batching import vmap_by_platform

_MAX_IPM_ITERATIONS = 80
_MAX_NEWTON_ITERATIONS = 40
_MAX_REPAIR_ROUNDS = 6


def margin_matrix(P: jax.typing.ArrayLike, *, majority: bool = False) -> jax.Array:
  """The margin matrix of a probabilistic tournament: ``P - P^T``, or its sign.

  Args:
    P: ``(..., n, n)`` probabilistic tournament (``P + P^T = 1``).
    majority: if ``True``, the majority margins ``sign(P - P^T)`` in ``{-1, 0, 1}`` (a tie gives
      ``0``); otherwise the probability margins ``P - P^T`` in ``[-1, 1]``.

  Returns:
    Skew-symmetric ``(..., n, n)`` array of ``P``'s floating dtype, zero on the diagonal.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.7], [0.3, 0.5]])
    >>> margin_matrix(P, majority=True).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
  """
  P = as_float_array(P, "P")
  check_square(P, "P")
  M = P - jnp.swapaxes(P, -1, -2)
  return jnp.sign(M) if majority else M


def _tolerance(dtype) -> float:
  """Feasibility / complementarity tolerance of the solver: ``eps**0.7`` (1e-5 f32, 1e-11 f64)."""
  return float(jnp.finfo(dtype).eps) ** 0.7


def _max_step(v: jax.Array, dv: jax.Array) -> jax.Array:
  """Largest ``alpha <= 1`` with ``v + alpha dv >= 0`` (``v > 0``)."""
  ratios = jnp.where(dv < 0, -v / jnp.where(dv < 0, dv, -1.0), jnp.inf)
  return jnp.minimum(1.0, jnp.min(ratios)).astype(v.dtype)


def _interior_point(K: jax.Array):
  """Mehrotra predictor-corrector on ``min 1^T x`` s.t. ``A x - s = 1``, ``A^T y + r = 1``.

  ``K`` is skew-symmetric with ``max|K| <= 1``; ``A = (1 1^T + K / 2)^T`` has entries in
  ``[1/2, 3/2]``, the game ``A^T`` has value ``1`` and ``x* = y* = p*`` (the maximal lotteries).

  Returns:
    ``(x, r)``: the primal iterate and its complementary dual slack, both ``(n,)``.
  """
  n = K.shape[-1]
  dtype = K.dtype
  mu_floor = 10 * float(jnp.finfo(dtype).eps)
  one = jnp.ones(n, dtype)
  A = (1.0 + 0.5 * K).T

  def residuals(x, y, s, r):
    return one + s - A @ x, one - A.T @ y - r

  def cond(state):
    _, it, done = state
    return (it < _MAX_IPM_ITERATIONS) & ~done

  def body(state):
    (x, y, s, r), it, _ = state
    rp, rd = residuals(x, y, s, r)
    mu = (x @ r + y @ s) / (2 * n)
    d = x / r
    N = (A * d[None, :]) @ A.T + jnp.diag(s / y)
    N = N + jnp.diag(16 * jnp.finfo(dtype).eps * jnp.diag(N))  # relative ridge (Jacobi-scaled)
    L = jnp.linalg.cholesky(N)

    def reduced(e1, e2, e3, e4):  # solves the 4-block Newton system through N
      rhs = e1 + e4 / y + A @ (d * (e2 - e3 / x))
      dy = jax.scipy.linalg.cho_solve((L, True), rhs)
      dx = d * (A.T @ dy - e2 + e3 / x)
      return dx, dy, (e4 - s * dy) / y, (e3 - r * dx) / x

    def direction(rc1, rc2):
      # Two rounds of iterative refinement on the unreduced system: N is ill-conditioned near the
      # optimum (its diagonal scaling spans 1/mu^2), and float32 directions drift off feasibility.
      step = reduced(rp, rd, rc1, rc2)
      for _ in range(2):
        dx, dy, ds, dr = step
        err = (
          rp - (A @ dx - ds),
          rd - (A.T @ dy + dr),
          rc1 - (r * dx + x * dr),
          rc2 - (s * dy + y * ds),
        )
        step = jax.tree.map(jnp.add, step, reduced(*err))
      return step

    dx, dy, ds, dr = direction(-x * r, -y * s)
    a_p = jnp.minimum(_max_step(x, dx), _max_step(s, ds))
    a_d = jnp.minimum(_max_step(y, dy), _max_step(r, dr))
    mu_aff = ((x + a_p * dx) @ (r + a_d * dr) + (y + a_d * dy) @ (s + a_p * ds)) / (2 * n)
    sigma = jnp.clip(mu_aff / mu, 0.0, 1.0) ** 3
    dx, dy, ds, dr = direction(sigma * mu - x * r - dx * dr, sigma * mu - y * s - dy * ds)
    a_p = 0.995 * jnp.minimum(_max_step(x, dx), _max_step(s, ds))
    a_d = 0.995 * jnp.minimum(_max_step(y, dy), _max_step(r, dr))
    new = (x + a_p * dx, y + a_d * dy, s + a_p * ds, r + a_d * dr)
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(v)) & jnp.all(v > 0) for v in new]))
    new = jax.tree.map(lambda a, b: jnp.where(finite, a, b), new, (x, y, s, r))
    rp, rd = residuals(*new)
    mu = (new[0] @ new[3] + new[1] @ new[2]) / (2 * n)
    # Stop at mu ~ 10 eps: below it the normal equations (condition ~ 1/mu^2) lose all digits in
    # float32 and the iterates drift away from the optimum; the polish takes it from there.
    converged = mu < mu_floor
    return new, it + 1, converged | ~finite

  # A strictly feasible start: A >= 1/2 entrywise gives A x >= 3/2 > 1 for x = 3/n, and A <= 3/2
  # gives A^T y <= 3/4 < 1 for y = 1/(2n); Newton steps keep the linear constraints.
  x0, y0 = 3.0 * one / n, 0.5 * one / n
  start = (x0, y0, A @ x0 - one, one - A.T @ y0)
  (x, _, _, r), _, _ = lax.while_loop(
    cond, body, (start, jnp.zeros((), jnp.int32), jnp.zeros((), bool))
  )
  return x, r


def _max_entropy_on_support(K: jax.Array, S: jax.Array, T: jax.Array, p0: jax.Array):
  """Maximum-entropy ``p`` with support ``S`` and ``(K^T p)_b = 0`` for ``b in T`` (dual Newton).

  Dual: ``min_lambda f(lambda) = log sum_{a in S} exp((K_S lambda)_a)`` with ``K_S`` the restriction
  of ``K`` to ``S x T`` (zero elsewhere); ``grad f = K_S^T p`` and ``hess f = K_S^T (diag p - p p^T)
  K_S`` at ``p = softmax_S(K_S lambda)``. Newton steps with a small ridge (the Hessian is singular
  along ``ker K_S``, which does not move ``p``) and a backtracking line search, started from the
  least-squares fit of ``K_S lambda`` to ``log p0``.

  Returns:
    ``(p, gradient_norm)``: ``(n,)`` lottery (zero off ``S``) and ``max |K_S^T p|``.
  """
  n = K.shape[-1]
  dtype = K.dtype
  eps = jnp.finfo(dtype).eps
  tol = _tolerance(dtype)
  KS = jnp.where(S[:, None] & T[None, :], K, 0.0)
  eye = jnp.eye(n, dtype=dtype)
  steps = 0.5 ** jnp.arange(12, dtype=dtype)

  def lse(z):
    return jax.nn.logsumexp(jnp.where(S, z, -jnp.inf), axis=-1)

  def softmax(z):
    return jnp.where(S, jax.nn.softmax(jnp.where(S, z, -jnp.inf)), 0.0)

  log_p0 = jnp.where(S, jnp.log(jnp.maximum(p0, jnp.finfo(dtype).tiny)), 0.0)
  G = KS.T @ KS
  lam0 = jnp.linalg.solve(G + (eps * jnp.trace(G) + eps) * eye, KS.T @ log_p0)

  def cond(state):
    _, g_norm, it = state
    return (it < _MAX_NEWTON_ITERATIONS) & (g_norm > tol * tol)

  def body(state):
    lam, _, it = state
    z = KS @ lam
    p = softmax(z)
    g = KS.T @ p
    H = KS.T @ (p[:, None] * KS) - jnp.outer(g, g)
    H = H + (16 * eps * jnp.trace(H) + jnp.finfo(dtype).tiny) * eye
    delta = -jnp.linalg.solve(H, g)
    u = KS @ delta
    f0 = lse(z)
    f = lse(z[None, :] + steps[:, None] * u[None, :])
    ok = f <= f0 + 0.25 * steps * (g @ delta)
    t = jnp.where(jnp.any(ok), steps[jnp.argmax(ok)], steps[-1])
    lam = jnp.where(jnp.all(jnp.isfinite(delta)), lam + t * delta, lam)
    g_new = KS.T @ softmax(KS @ lam)
    return lam, jnp.max(jnp.abs(g_new)), it + 1

  g_norm0 = jnp.max(jnp.abs(KS.T @ softmax(KS @ lam0)))
  lam, g_norm, _ = lax.while_loop(cond, body, (lam0, g_norm0, jnp.zeros((), jnp.int32)))
  return softmax(KS @ lam), g_norm


def _maximal_lottery_single(M: jax.Array):
  """``(p, support, verified)`` of one ``(n, n)`` margin matrix (see the module docstring)."""
  n = M.shape[-1]
  dtype = M.dtype
  tol = _tolerance(dtype)
  K = 0.5 * (M - M.T)
  scale = jnp.max(jnp.abs(K))
  K = K / jnp.where(scale > 0, scale, 1.0)
  x, r = _interior_point(K)
  p_ipm = x / jnp.sum(x)
  support = x > r

  # Polish with an active set T of binding constraints (K^T p)_b = 0: first the support
  # (complementary slackness), then every agent outside T whose margin the polished lottery makes
  # negative. If the polish is infeasible (no positive lottery on S makes T binding), the interior
  # point misjudged an agent of T \ S as outside the support (it happens in float32): T joins S.
  def cond(state):
    _, _, _, verified, changed, it = state
    return (it < _MAX_REPAIR_ROUNDS) & ~verified & changed

  def body(state):
    S, T, _, _, _, it = state
    p, g_norm = _max_entropy_on_support(K, S, T, p_ipm)
    negative = ~T & (K.T @ p < -tol)
    feasible = g_norm <= tol
    verified = feasible & ~jnp.any(negative)
    S_new = jnp.where(feasible, S, T)
    T_new = jnp.where(feasible, T | negative, T)
    changed = jnp.any(S_new != S) | jnp.any(T_new != T)
    return S_new, T_new, p, verified, changed, it + 1

  init = (
    support,
    support,
    p_ipm,
    jnp.zeros((), bool),
    jnp.ones((), bool),
    jnp.zeros((), jnp.int32),
  )
  support, _, p, verified, _, _ = lax.while_loop(cond, body, init)
  all_ties = scale == 0
  uniform = jnp.full((n,), 1.0 / n, dtype)
  p = jnp.where(all_ties, uniform, jnp.where(verified, p, p_ipm))
  support = jnp.where(all_ties, True, support)
  return p, support, verified | all_ties


_MAXIMAL_LOTTERY_KERNEL = vmap_by_platform(_maximal_lottery_single)


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _maximal_lottery(M: jax.Array):
  return _over_leading_axes(_MAXIMAL_LOTTERY_KERNEL, M)


def maximal_lottery_with_support(M: jax.typing.ArrayLike) -> tuple[jax.Array, jax.Array, jax.Array]:
  """:func:`maximal_lottery`, its support (the essential set of ``M``) and a verification flag.

  Args:
    M: ``(..., n, n)`` margin matrix; only its skew-symmetric part ``(M - M^T) / 2`` is used.

  Returns:
    ``(p, support, verified)``: the maximum-entropy maximal lottery ``(..., n)``, the Boolean
    ``(..., n)`` union of the supports of all maximal lotteries, and a Boolean ``(...)`` that is
    ``True`` when the support passed the final optimality check (strict complementarity within the
    solver tolerance). Where it is ``False``, ``p`` is the interior-point lottery and the support
    is ``p > tol``.
  """
  M = as_float_array(M, "M")
  n = check_square(M, "M")
  if n == 0:
    return (
      jnp.zeros(M.shape[:-1], M.dtype),
      jnp.zeros(M.shape[:-1], bool),
      jnp.ones(M.shape[:-2], bool),
    )
  if n == 1:
    return (
      jnp.ones(M.shape[:-1], M.dtype),
      jnp.ones(M.shape[:-1], bool),
      jnp.ones(M.shape[:-2], bool),
    )
  return _maximal_lottery(M)


def maximal_lottery(M: jax.typing.ArrayLike) -> jax.Array:
  """The maximum-entropy maximal lottery: an optimal mixed strategy of the margin game ``M``.

  .. math::

     p^\\star = \\arg\\max \\Big\\{ -\\sum_a p_a \\log p_a \\;:\\; p \\in \\Delta_n,\\;
     \\sum_a p_a M_{ab} \\ge 0 \\ \\forall b \\Big\\}

  For a tournament's majority margins (no ties) and for generic probability margins the maximal
  lottery is unique; the maximum-entropy rule only matters with ties (e.g. all ties gives the
  uniform lottery). It is also the equilibrium used by Nash averaging (Balduzzi et al. 2018). The
  linear program is solved in JAX by an interior-point method followed by a support
  identification and a maximum-entropy polish (module docstring of ``ste_jax.exact._lotteries``).
  Cost ``O(n^3)`` per interior-point iteration (about 15-30 iterations).

  Args:
    M: ``(..., n, n)`` margin matrix, ``M[a, b] > 0`` when ``a`` beats ``b``, e.g.
      ``margin_matrix(P)`` (``P - P^T``) or ``margin_matrix(P, majority=True)``. Only its
      skew-symmetric part ``(M - M^T) / 2`` is used; the result is invariant to scaling ``M``.

  Returns:
    ``(..., n)`` lottery (non-negative, sums to 1) of ``M``'s floating dtype.

  Raises:
    ValueError: if ``M`` is not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> M = jnp.array([[0., 1., -1.], [-1., 0., 1.], [1., -1., 0.]])  # rock-paper-scissors
    >>> [round(float(v), 4) for v in maximal_lottery(M)]
    [0.3333, 0.3333, 0.3333]
    >>> P = jnp.array([[0.5, 0.8, 0.9], [0.2, 0.5, 0.6], [0.1, 0.4, 0.5]])  # 0 is a Condorcet winner
    >>> [round(float(v), 4) for v in maximal_lottery(margin_matrix(P))]
    [1.0, 0.0, 0.0]

  References:
    P. C. Fishburn (1984), Probabilistic social choice based on simple voting comparisons. F.
    Brandl, F. Brandt, H. G. Seedig (2016), Consistent probabilistic social choice, Econometrica.
  """
  return maximal_lottery_with_support(M)[0]


def bipartisan_set(P: jax.typing.ArrayLike) -> jax.Array:
  """Bipartisan set: the support of the maximal lottery of the majority margins ``sign(P - P^T)``.

  For a tournament (no ties) the majority game ``sign(P - P^T)`` has a unique optimal strategy and
  its support is the bipartisan set of Laffond, Laslier and Le Breton (1993); it is contained in
  the uncovered set. With ties (a weak tournament) the union of the supports of all optimal
  strategies is returned, i.e. the essential set of the majority relation (Dutta and Laslier 1999),
  which is pref_voting's ``bipartisan`` (support of its averaged C1 maximal lottery).

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    Boolean mask of shape ``(..., n)``; never empty. For a tournament its size is odd.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.7, 0.3, 0.9], [0.3, 0.5, 0.7, 0.9],
    ...                [0.7, 0.3, 0.5, 0.9], [0.1, 0.1, 0.1, 0.5]])  # a 3-cycle above agent 3
    >>> bipartisan_set(P).tolist()
    [True, True, True, False]

  References:
    G. Laffond, J.-F. Laslier, M. Le Breton (1993), The bipartisan set of a tournament game, Games
    Econ. Behav. 5(1):182-201.
  """
  return maximal_lottery_with_support(margin_matrix(P, majority=True))[1]


def essential_set(P: jax.typing.ArrayLike) -> jax.Array:
  """Essential set: the agents played by some maximal lottery of the margins ``P - P^T``.

  The essential set of a comparison function ``g`` (Dutta and Laslier 1999) is the union of the
  supports of the optimal strategies of the symmetric zero-sum game ``g``. Here ``g = P - P^T``,
  the probability margins, so that the strength of each majority matters (pref_voting's
  ``essential``, the support of its C2 maximal lottery). For the majority margins use
  :func:`bipartisan_set`.

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    Boolean mask of shape ``(..., n)``; never empty.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.6, 0.2], [0.4, 0.5, 0.9], [0.8, 0.1, 0.5]])
    >>> essential_set(P).tolist()
    [True, True, True]

  References:
    B. Dutta, J.-F. Laslier (1999), Comparison functions and choice correspondences, Soc. Choice
    Welfare 16:513-532.
  """
  return maximal_lottery_with_support(margin_matrix(P))[1]
