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

Algorithm, in float64 on the host whatever the input dtype (a :func:`jax.pure_callback` to NumPy
and SciPy, so it runs under ``jax.jit`` and ``jax.vmap`` but is not differentiable), for each
``(n, n)`` game with ``K = (M - M^T) / (2 max|M|)``:

1. **Interior point.** A Mehrotra predictor-corrector primal-dual interior-point method on the
   linear program ``min 1^T x`` s.t. ``A x >= 1, x >= 0`` with ``A = (1 1^T + K / 2)^T`` (the game
   shifted to value ``1``, so that ``x* = p*``). Each iteration solves one ``n x n`` symmetric
   positive definite system (Cholesky); it stops at a duality measure of ``10 eps``.
2. **Support.** Central-path iterates converge to the analytic center of the optimal face, which
   is strictly complementary: ``x_a > 0`` exactly on the essential set, its dual slack ``r_a > 0``
   exactly off it. The support ``S`` is read off as ``x_a > r_a``.
3. **Polish.** The maximum-entropy lottery supported on ``S`` with margins ``(K^T p)_b = 0`` for
   ``b in S`` and ``>= 0`` off ``S`` is found by damped projected Newton steps on its smooth dual
   ``min log sum_{a in S} exp((K_S lambda)_a)`` (``lambda_b >= 0`` off ``S``), whose solution has
   ``p = softmax(K_S lambda)``, positive exactly on ``S``.
4. **Verification.** ``p`` must satisfy the optimality conditions within ``1e-10``, and the
   interior-point lottery (or ``p``) must certify ``S``: margins ``>= -e`` on ``S`` and ``>= d >
   0`` off it bound the mass that *any* maximal lottery puts off ``S`` by ``e / d`` (at most
   ``1e-10``). If either fails, ``S`` is instead read off one linear program solved by SciPy's
   HiGHS (:func:`_essential_set_highs`) and ``p`` polished on it.

The returned lottery is therefore **the maximum-entropy maximal lottery**; for a tournament it is
the unique one. It is rounded to the input dtype once, at the end: its support is exact also in
float32.

References:
  G. Kreweras (1965), Aggregation of preference orderings. P. C. Fishburn (1984), Probabilistic
  social choice based on simple voting comparisons, Rev. Econ. Stud. 51(4). G. Laffond, J.-F.
  Laslier, M. Le Breton (1993), The bipartisan set of a tournament game, GEB 5. B. Dutta, J.-F.
  Laslier (1999), Comparison functions and choice correspondences, Soc. Choice Welfare 16.
  S. Mehrotra (1992), On the implementation of a primal-dual interior point method, SIAM J. Optim.
"""

import contextlib

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np

from ste_jax._checks import as_float_array, check_square

try:  # optional (it comes with scikit-learn): keeps the host solver's BLAS calls on one thread
  from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
  threadpool_limits = None

_MAX_IPM_ITERATIONS = 80
_MAX_NEWTON_ITERATIONS = 60
_VERIFY_TOL = 1e-10
"""Largest violation of the optimality conditions by a verified lottery (margins of ``K``)."""
_STOP_TOL = 1e-14
"""Violation of the optimality conditions at which the maximum-entropy polish stops."""
_CERTIFY_MASS = 1e-10
"""Largest mass off the support that a certificate leaves any maximal lottery."""


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


def _tolerance(dtype: jnp.dtype) -> float:
  """Margin tolerance for a lottery rounded to ``dtype``: ``eps**0.7`` (1e-5 f32, 1e-11 f64)."""
  return float(jnp.finfo(dtype).eps) ** 0.7


def _interior_point(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Mehrotra predictor-corrector, float64: ``min 1^T x`` s.t. ``A x - s = 1``, ``A^T y + r = 1``.

  ``K`` is skew-symmetric with ``max|K| = 1``; ``A = (1 1^T + K / 2)^T`` has entries in
  ``[1/2, 3/2]``, the game ``A^T`` has value ``1`` and ``x* = y* = p*`` (the maximal lotteries).
  Stops at a duality measure of ``10 eps``, after ``_MAX_IPM_ITERATIONS`` or when the normal
  equations cannot be factorized.

  Returns:
    ``(x, r)``: the primal iterate and its complementary dual slack, both ``(n,)``.
  """
  n = K.shape[0]
  one = np.ones(n)
  A = (1.0 + 0.5 * K).T
  eps = np.finfo(np.float64).eps
  # A strictly feasible start: A >= 1/2 entrywise gives A x >= 3/2 > 1 for x = 3/n, and A <= 3/2
  # gives A^T y <= 3/4 < 1 for y = 1/(2n); Newton steps keep the linear constraints.
  x, y = 3.0 * one / n, 0.5 * one / n
  s, r = A @ x - one, one - A.T @ y

  def max_step(v, dv):
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if np.any(neg) else 1.0

  import scipy.linalg  # host-side only: `import ste_jax` does not load SciPy

  for _ in range(_MAX_IPM_ITERATIONS):
    mu = (x @ r + y @ s) / (2 * n)
    if mu < 10 * eps:
      break
    rp, rd = one + s - A @ x, one - A.T @ y - r
    d = x / r
    N = (A * d[None, :]) @ A.T + np.diag(s / y)
    N[np.diag_indices(n)] *= 1.0 + 16 * eps  # relative ridge (Jacobi-scaled)
    try:
      factor = scipy.linalg.cho_factor(N, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
      break

    def reduced(e1, e2, e3, e4):  # solves the 4-block Newton system through N
      dy = scipy.linalg.cho_solve(factor, e1 + e4 / y + A @ (d * (e2 - e3 / x)), check_finite=False)
      dx = d * (A.T @ dy - e2 + e3 / x)
      return dx, dy, (e4 - s * dy) / y, (e3 - r * dx) / x

    def direction(rc1, rc2):
      # Two rounds of iterative refinement on the unreduced system: N is ill-conditioned near the
      # optimum (its diagonal scaling spans 1/mu^2).
      step = reduced(rp, rd, rc1, rc2)
      for _ in range(2):
        dx, dy, ds, dr = step
        err = reduced(
          rp - (A @ dx - ds), rd - (A.T @ dy + dr), rc1 - (r * dx + x * dr), rc2 - (s * dy + y * ds)
        )
        step = tuple(a + b for a, b in zip(step, err))
      return step

    dx, dy, ds, dr = direction(-x * r, -y * s)
    a_p = min(max_step(x, dx), max_step(s, ds))
    a_d = min(max_step(y, dy), max_step(r, dr))
    mu_aff = ((x + a_p * dx) @ (r + a_d * dr) + (y + a_d * dy) @ (s + a_p * ds)) / (2 * n)
    sigma = min(max(mu_aff / mu, 0.0), 1.0) ** 3
    dx, dy, ds, dr = direction(sigma * mu - x * r - dx * dr, sigma * mu - y * s - dy * ds)
    a_p = 0.995 * min(max_step(x, dx), max_step(s, ds))
    a_d = 0.995 * min(max_step(y, dy), max_step(r, dr))
    new = (x + a_p * dx, y + a_d * dy, s + a_p * ds, r + a_d * dr)
    if not all(np.all(np.isfinite(v)) and np.all(v > 0) for v in new):
      break
    x, y, s, r = new
  return x, r


def _max_entropy_lottery(K: np.ndarray, S: np.ndarray, p0: np.ndarray) -> tuple[np.ndarray, float]:
  """Maximum-entropy ``p`` with support in ``S``, ``(K^T p)_b = 0`` on ``S``, ``>= 0`` off it.

  Solves the dual ``min_lambda log sum_{a in S} exp((K_S lambda)_a)`` over ``lambda`` with
  ``lambda_b >= 0`` for ``b`` outside ``S`` (``K_S`` the rows ``S`` of ``K``; the gradient is the
  margins ``K_S^T p`` of ``p = softmax(K_S lambda)``) by projected Newton steps (Bertsekas 1982):
  a bound ``lambda_b = 0`` whose margin is positive is held, the other coordinates take a
  Levenberg-Marquardt step, projected onto the bounds, whose damping rises until it decreases the
  dual enough (Armijo) and falls after each accepted step. Started from the least-squares fit of
  ``K_S lambda`` to ``log p0`` on the columns ``S``.

  Returns:
    ``(p, violation)``: ``(n,)`` lottery, positive exactly on ``S``, and its largest violation of
    the optimality conditions (``|margin|`` on ``S`` and where ``lambda_b > 0``, ``-margin`` where
    ``lambda_b = 0``).
  """
  n = K.shape[0]
  KS = K[S]
  lam = np.zeros(n)
  log_p0 = np.log(np.maximum(p0[S], np.finfo(np.float64).tiny))
  lam[S] = np.linalg.lstsq(KS[:, S], log_p0 - log_p0.mean(), rcond=None)[0]

  def evaluate(lam):
    z = KS @ lam
    top = z.max()
    w = np.exp(z - top)
    total = w.sum()
    return top + np.log(total), w / total

  f, q = evaluate(lam)
  damping = 0.0
  for _ in range(_MAX_NEWTON_ITERATIONS):
    g = KS.T @ q
    held = ~S & (lam <= 0) & (g > 0)
    violation = max(
      float(np.max(np.abs(g[S]), initial=0.0)),
      float(np.max(np.abs(g[~S & (lam > 0)]), initial=0.0)),
      float(np.max(-g[~S & (lam <= 0)], initial=0.0)),
    )
    if violation <= _STOP_TOL:
      break
    free = ~held
    KF = KS[:, free]
    H = KF.T @ (q[:, None] * KF) - np.outer(g[free], g[free])
    size = max(float(np.trace(H)) / H.shape[0], np.finfo(np.float64).tiny)
    # Levenberg-Marquardt damping: the Hessian is singular along ker K_S (which does not move p)
    # and, with more free bounds than |S| - 1, along more; a rejected step raises the damping.
    damping = max(damping / 10, 1e-12 * size)
    while damping <= 1e12 * size:
      H_damped = H + damping * np.eye(H.shape[0])
      delta = np.zeros(n)
      delta[free] = -np.linalg.solve(H_damped, g[free])
      trial = lam + delta
      trial[~S] = np.maximum(trial[~S], 0.0)
      f_trial, q_trial = evaluate(trial)
      if np.isfinite(f_trial) and f_trial <= f + 1e-4 * (g @ (trial - lam)):
        break
      damping *= 100
    else:
      break
    lam, f, q = trial, f_trial, q_trial
  p = np.zeros(n)
  p[S] = q
  return p, violation


def _essential_set_highs(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Essential set and a maximal lottery supported on it: one linear program (SciPy's HiGHS).

  ``max 1^T z`` s.t. ``0 <= z <= 1``, ``z <= x``, ``x >= 0``, ``K^T x >= 0``. The ``x`` form the
  cone over the maximal lotteries, whose sum (Tucker) is positive exactly on the essential set
  ``E``; scaled up, it gives ``z_a = 1`` on ``E``, and ``z_a <= x_a = 0`` off it, so the optimal
  ``z`` is the indicator of ``E``, read off at ``1/2``.

  Returns:
    ``(support, p)``: Boolean ``(n,)`` and the lottery ``x / sum(x)``.
  """
  import scipy.optimize  # host-side only: `import ste_jax` does not load SciPy
  import scipy.sparse

  n = K.shape[0]
  eye = scipy.sparse.eye(n)
  A_ub = scipy.sparse.bmat([[-K.T, None], [-eye, eye]], format="csr")
  res = scipy.optimize.linprog(
    np.concatenate([np.zeros(n), -np.ones(n)]),
    A_ub=A_ub,
    b_ub=np.zeros(2 * n),
    bounds=[(0, None)] * n + [(0, 1)] * n,
    method="highs",
  )
  if res.x is None:  # not expected: the program is feasible (x = 0) and bounded (z <= 1)
    raise RuntimeError(f"HiGHS found no maximal lottery: {res.message}")
  x, z = res.x[:n], res.x[n:]
  support = z > 0.5
  return support, np.where(support, x, 0.0) / np.sum(x[support])


def _certifies(K: np.ndarray, S: np.ndarray, q: np.ndarray) -> bool:
  """Whether the near-optimal lottery ``q`` proves that no maximal lottery plays an agent off ``S``.

  Every maximal lottery ``p`` has ``sum_a p_a (K^T q)_a = -q^T K^T p <= 0``. With margins ``m = K^T
  q >= -e`` on ``S`` and ``>= d > 0`` off it, the mass that ``p`` puts off ``S`` is at most
  ``e / d``; ``q`` certifies ``S`` when that bound is at most ``_CERTIFY_MASS``.
  """
  if np.all(S):
    return True
  m = K.T @ (q / np.sum(q))
  worst = max(0.0, -float(np.min(m[S], initial=0.0)))
  gap = float(np.min(m[~S]))
  return gap > 0 and worst <= _CERTIFY_MASS * gap


def _maximal_lottery_numpy(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """``(p, support, verified)`` of ``(..., n, n)`` margin matrices in float64 (module docstring).

  BLAS runs on one thread where ``threadpoolctl`` is installed: the callback runs beside XLA's own
  threads, and a multithreaded OpenBLAS Cholesky on a busy machine was 20-300 times slower than a
  single-threaded one (n = 1000 and 200).
  """
  limits = threadpool_limits(1, "blas") if threadpool_limits else contextlib.nullcontext()
  with limits:
    return _maximal_lottery_numpy_loop(M)


def _maximal_lottery_numpy_loop(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """:func:`_maximal_lottery_numpy` without the thread limit."""
  M = np.asarray(M, np.float64)
  n = M.shape[-1]
  flat = M.reshape(-1, n, n)
  p_out = np.zeros(flat.shape[:-1])
  s_out = np.zeros(flat.shape[:-1], bool)
  v_out = np.zeros(flat.shape[:-2], bool)
  for i, Mi in enumerate(flat):
    K = 0.5 * (Mi - Mi.T)
    scale = np.max(np.abs(K))
    if not (np.isfinite(scale) and scale > 0):  # all ties (or not finite): the uniform lottery
      p_out[i], s_out[i], v_out[i] = 1.0 / n, True, bool(scale == 0)
      continue
    K = K / scale
    x, r = _interior_point(K)
    S = x > r
    verified = False
    if np.any(S):
      p, violation = _max_entropy_lottery(K, S, x)
      verified = violation <= _VERIFY_TOL and (_certifies(K, S, x) or _certifies(K, S, p))
    if not verified:  # the support is found by HiGHS instead
      S, p_lp = _essential_set_highs(K)
      p, violation = _max_entropy_lottery(K, S, p_lp)
      verified = violation <= _VERIFY_TOL
      if not verified:
        p = p_lp
    p_out[i], s_out[i], v_out[i] = p, S, verified
  shape = M.shape[:-1]
  return p_out.reshape(shape), s_out.reshape(shape), v_out.reshape(shape[:-1])


def _maximal_lottery_single(M: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
  """``(p, support, verified)`` of ``(..., n, n)`` margin matrices, computed on the host.

  A :func:`jax.pure_callback` to :func:`_maximal_lottery_numpy` (float64 whatever ``M``'s dtype;
  ``p`` is returned in ``M``'s dtype); under :func:`jax.vmap` the batch is passed to one call.
  ``p`` comes back as unsigned integers and is bit-cast: the callback's results are converted in
  a thread that does not see a :func:`jax.enable_x64` context, which would round a float64 ``p``.
  """
  dtype = np.dtype(M.dtype)
  words = max(dtype.itemsize // 4, 1)
  word = np.dtype(f"uint{8 * min(dtype.itemsize, 4)}")
  shapes = (
    jax.ShapeDtypeStruct(M.shape[:-1] + ((words,) if words > 1 else ()), word),
    jax.ShapeDtypeStruct(M.shape[:-1], jnp.bool_),
    jax.ShapeDtypeStruct(M.shape[:-2], jnp.bool_),
  )

  def host(M):
    p, support, verified = _maximal_lottery_numpy(np.asarray(M))
    bits = np.ascontiguousarray(p.astype(dtype)).view(word)
    return bits.reshape(p.shape + ((words,) if words > 1 else ())), support, verified

  bits, support, verified = jax.pure_callback(host, shapes, M, vmap_method="expand_dims")
  return lax.bitcast_convert_type(bits, dtype), support, verified


@jax.jit  # compiled once per shape, also for eager calls (inlined under an outer jit)
def _maximal_lottery(M: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
  return _maximal_lottery_single(M)


def maximal_lottery_with_support(M: jax.typing.ArrayLike) -> tuple[jax.Array, jax.Array, jax.Array]:
  """:func:`maximal_lottery`, its support (the essential set of ``M``) and a verification flag.

  Args:
    M: ``(..., n, n)`` margin matrix; only its skew-symmetric part ``(M - M^T) / 2`` is used.

  Returns:
    ``(p, support, verified)``: the maximum-entropy maximal lottery ``(..., n)``, the Boolean
    ``(..., n)`` union of the supports of all maximal lotteries, and a Boolean ``(...)`` that is
    ``True`` when ``p`` passed the final optimality check (module docstring of
    ``ste_jax.exact._lotteries``). Where it is ``False``, ``p`` is the maximal lottery HiGHS found
    (optimal, supported on the essential set, not of maximum entropy). ``p`` has ``M``'s dtype;
    it is computed in float64 on the host and rounded once.

  Raises:
    ValueError: if ``M`` is not square in its last two axes.

  Examples:
    >>> import jax.numpy as jnp
    >>> M = jnp.array([[0., 1., 0.], [-1., 0., 0.], [0., 0., 0.]])  # 0 > 1, 2 ties both
    >>> p, support, verified = maximal_lottery_with_support(M)
    >>> [round(float(v), 4) for v in p], support.tolist(), bool(verified)
    ([0.5, 0.0, 0.5], [True, False, True], True)
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
  linear program is solved in float64 on the host (NumPy and SciPy) by an interior-point method
  followed by a support identification, a maximum-entropy polish and a verification (module
  docstring of ``ste_jax.exact._lotteries``), whatever ``M``'s dtype. Cost ``O(n^3)`` per
  interior-point iteration (about 15-30 iterations). Runs under ``jax.jit`` and ``jax.vmap``; not
  differentiable (use :func:`ste_jax.ops.soft_maximal_lottery`).

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
    >>> P = jnp.array([[0.5, 0.8, 0.9], [0.2, 0.5, 0.6], [0.1, 0.4, 0.5]])  # a Condorcet winner
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
