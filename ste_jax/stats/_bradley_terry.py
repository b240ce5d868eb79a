"""Bradley–Terry maximum likelihood with explicit identifiability diagnostics.

The Bradley–Terry–Luce (BTL) model (paper §2, "Rating Systems and Pairwise Probability Models")
says ``Pr(a beats b) = sigmoid(s_a - s_b)`` for log-strengths ``s``. Its maximum-likelihood
estimate exists and is unique up to a shift exactly when the directed "a beat b at least once"
graph is strongly connected (Zermelo 1929; Ford 1957; Hunter 2004). The popular tools run Newton
or MM until an iteration cap when it is not, and return exploding scores. Here the condition is
checked first (graph searches, see :mod:`ste_jax.stats._graph`) and, when it fails, a small
Gaussian prior on the log-strengths is applied and reported in the result.
"""

import functools

import jax
from jax import lax
import jax.numpy as jnp
import numpy as np

from ste_jax._checks import as_float_array
from ste_jax._results import result_type
from ste_jax.stats._graph import component_labels, reached_from

_PRIOR_MODES = ("auto", "always")
_NUM_LINE_SEARCH_STEPS = 12


@result_type
class BradleyTerryResult:
  """Output of :func:`bradley_terry`.

  Attributes:
    scores: ``(n,)`` log-strengths ``s`` with mean zero (natural-log odds scale:
      ``Pr(a beats b) = sigmoid(s_a - s_b)``).
    converged: scalar bool, the Newton iteration met its tolerance before ``max_iter``.
    num_iterations: scalar int32, Newton steps taken.
    identifiable: scalar bool, the maximum-likelihood estimate exists and is unique up to a shift,
      i.e. the "a beat b at least once" graph is strongly connected (``connected`` and not
      ``separable``).
    connected: scalar bool, the undirected comparison graph (pairs with at least one game) is
      connected. Agents without any game make it disconnected.
    separable: scalar bool, some group of agents never lost to the other agents of its comparison
      component (e.g. an agent that never loses), so its maximum-likelihood score is infinite.
    prior_applied: scalar bool, the Gaussian prior was used (always when not ``identifiable``).
    prior_strength: scalar, the prior precision ``lambda`` actually used (``0`` when not applied).
  """

  scores: jax.Array
  converged: jax.Array
  num_iterations: jax.Array
  identifiable: jax.Array
  connected: jax.Array
  separable: jax.Array
  prior_applied: jax.Array
  prior_strength: jax.Array


@jax.jit  # compiled once per shape, also for eager calls (its while loops would recompile per call)
def _diagnostics(wins):
  """``(connected, separable, same_component)`` for a float ``(n, n)`` wins matrix."""
  n = wins.shape[-1]
  off = ~jnp.eye(n, dtype=bool)
  beat = (wins > 0) & off
  label = component_labels(beat)
  connected = jnp.all(label == 0)
  # Separable iff some component is not strongly connected in the "beat" graph: its smallest
  # vertex fails to reach, or to be reached from, some vertex of it.
  roots = label == jnp.arange(n, dtype=jnp.int32)
  separable = ~jnp.all(reached_from(beat, roots) & reached_from(beat.T, roots))
  return connected, separable, label[:, None] == label[None, :]


def comparison_diagnostics(wins: jax.typing.ArrayLike) -> tuple[jax.Array, jax.Array]:
  """Connectivity and separability of a wins matrix (the BT existence condition).

  Args:
    wins: ``(n, n)`` nonnegative array, ``wins[a, b]`` = (weighted) number of times ``a`` beat
      ``b``; the diagonal is ignored.

  Returns:
    ``(connected, separable)`` scalar bools: whether the undirected graph of compared pairs is
    connected, and whether inside some connected component a nonempty proper subset of agents
    never lost to the rest of that component (the "a beat b" graph restricted to the component
    is not strongly connected).

  Examples:
    >>> import jax.numpy as jnp
    >>> W = jnp.array([[0.0, 8.0, 9.0], [2.0, 0.0, 7.0], [1.0, 3.0, 0.0]])  # wins[a, b]
    >>> from ste_jax.stats import comparison_diagnostics
    >>> connected, separable = comparison_diagnostics(W)  # everyone lost at least once to the rest
    >>> bool(connected), bool(separable)
    (True, False)
  """
  wins = as_float_array(wins, "wins")
  if wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
    raise ValueError(f"wins must have shape (n, n); got {tuple(wins.shape)}.")
  connected, separable, _ = _diagnostics(wins)
  return connected, separable


def _log_likelihood(s, wins, lam):
  """Penalized BT log-likelihood ``sum_ab w_ab log sigmoid(s_a - s_b) - lam/2 |s|^2``."""
  diff = s[:, None] - s[None, :]
  return jnp.sum(wins * jax.nn.log_sigmoid(diff)) - 0.5 * lam * jnp.sum(s * s)


def bradley_terry(
  wins: jax.typing.ArrayLike,
  *,
  prior_strength: float = 0.01,
  prior: str = "auto",
  max_iter: int = 100,
  tol: float | None = None,
) -> BradleyTerryResult:
  r"""Bradley–Terry log-strengths by damped Newton's method, with a documented fallback prior.

  Maximizes

  .. math::
    \ell(s) = \sum_{a \ne b} w_{ab} \log \sigma(s_a - s_b) - \frac{\lambda}{2} \|s\|^2,

  the BTL likelihood (paper §2, "Rating Systems and Pairwise Probability Models") plus, when
  ``lambda > 0``, a Gaussian prior ``s ~ N(0, I / lambda)``. ``lambda = 0`` when the data are
  identifiable (``prior="auto"``); otherwise ``lambda = prior_strength``. The log-likelihood is
  concave, and each Newton step solves ``(L + lambda I + Pi) ds = grad`` where ``L`` is the
  Laplacian of the Fisher weights ``N_ab p_ab (1 - p_ab)`` and ``Pi`` the projector onto the
  indicators of the comparison graph's connected components; ``Pi`` pins the free shift of each
  component (the gradient has zero sum inside each component), so scores keep mean zero per
  component and the system stays well conditioned when ``lambda`` is small. A backtracking line
  search (12 halvings, Armijo condition with a rounding slack) keeps every step an ascent step.

  Identifiability is decided before iterating: the maximum-likelihood estimate exists and is
  unique up to a shift iff the "a beat b at least once" graph is strongly connected (Zermelo's
  condition). If the comparison graph is disconnected (including agents with no games) or the
  data are separable (a group never loses to the rest of its component), the scores without a
  prior would diverge or be arbitrary, so the prior is applied and ``prior_applied`` says so.
  With the prior every connected component has mean-zero scores and a separable group gets a
  large but finite lead (of order ``log(games / lambda)``).

  Ties are not modelled: add each tie as ``1/2`` to both ``wins[a, b]`` and ``wins[b, a]``.

  Args:
    wins: ``(n, n)`` nonnegative array, ``wins[a, b]`` = (weighted) number of times ``a`` beat
      ``b``. The diagonal is ignored. Its floating dtype is kept (integers become the default float
      dtype).
    prior_strength: precision ``lambda > 0`` of the Gaussian prior used when the data are not
      identifiable (or always, with ``prior="always"``). The default ``0.01`` is a standard
      deviation of 10 on the log-odds scale: negligible for identifiable data.
    prior: ``"auto"`` (prior only when not identifiable) or ``"always"`` (ridge-regularized MAP).
    max_iter: maximum number of Newton steps (static).
    tol: convergence tolerance on ``max |step| / max(1, max |s|)``; default ``sqrt(eps)`` of the
      dtype (Newton converges quadratically, so the returned scores are far more accurate).

  Returns:
    A :class:`BradleyTerryResult`; ``scores`` has shape ``(n,)`` and ``wins``'s float dtype.

  Raises:
    ValueError: at trace time, if ``wins`` is not ``(n, n)``, ``prior`` is unknown,
      ``prior_strength`` is not a finite number ``> 0`` or ``max_iter < 1``.

  Examples:
    >>> import jax.numpy as jnp
    >>> res = bradley_terry(jnp.array([[0.0, 3.0], [1.0, 0.0]]))
    >>> round(float(res.scores[0] - res.scores[1]), 4)  # log(3/1)
    1.0986
    >>> bool(res.identifiable), bool(res.converged)
    (True, True)

  References:
    Hunter, "MM algorithms for generalized Bradley–Terry models", Ann. Statist. 32 (2004).
    Zermelo, "Die Berechnung der Turnier-Ergebnisse ...", Math. Z. 29 (1929).
  """
  wins = as_float_array(wins, "wins")
  if wins.ndim != 2 or wins.shape[0] != wins.shape[1]:
    raise ValueError(f"wins must have shape (n, n); got {tuple(wins.shape)}.")
  if prior not in _PRIOR_MODES:
    raise ValueError(f"prior must be one of {_PRIOR_MODES}, got {prior!r}.")
  lam_value = float(prior_strength)
  if not np.isfinite(lam_value) or lam_value <= 0:
    raise ValueError(f"prior_strength must be a finite number > 0, got {prior_strength!r}.")
  if int(max_iter) < 1:
    raise ValueError(f"max_iter must be >= 1, got {max_iter!r}.")
  tol_value = float(np.sqrt(jnp.finfo(wins.dtype).eps)) if tol is None else float(tol)
  return _fit(
    wins,
    jnp.asarray(lam_value, dtype=wins.dtype),
    always=prior == "always",
    max_iter=int(max_iter),
    tol=tol_value,
  )


@functools.partial(jax.jit, static_argnames=("always", "max_iter", "tol"))
def _fit(wins, lam_value, *, always, max_iter, tol):
  """The compiled kernel of :func:`bradley_terry` (cached per shape, dtype and static options)."""
  dtype = wins.dtype
  n = wins.shape[0]
  eps = jnp.finfo(dtype).eps
  off = ~jnp.eye(n, dtype=bool)
  wins = jnp.where(off, wins, jnp.zeros_like(wins))
  games = wins + wins.T
  connected, separable, same_component = _diagnostics(wins)
  identifiable = connected & ~separable
  prior_applied = jnp.ones((), dtype=bool) if always else ~identifiable
  lam = jnp.where(prior_applied, lam_value, jnp.zeros((), dtype))
  same = same_component.astype(dtype)
  center = same / jnp.sum(same, axis=1, keepdims=True)  # projector onto component indicators
  steps = 0.5 ** jnp.arange(_NUM_LINE_SEARCH_STEPS, dtype=dtype)

  def newton_step(s):
    p = jax.nn.sigmoid(s[:, None] - s[None, :])
    grad = jnp.sum(wins - games * p, axis=1) - lam * s
    fisher = games * p * (1 - p)
    hess = jnp.diag(jnp.sum(fisher, axis=1) + lam) - fisher + center
    ds = jnp.linalg.solve(hess, grad)
    f0 = _log_likelihood(s, wins, lam)
    cand = s[None, :] + steps[:, None] * ds[None, :]
    f_cand = jax.vmap(_log_likelihood, in_axes=(0, None, None))(cand, wins, lam)
    slope = jnp.dot(grad, ds)
    slack = 16 * eps * (jnp.abs(f0) + 1)
    ok = f_cand >= f0 + 1e-4 * steps * slope - slack
    any_ok = jnp.any(ok)
    t = jnp.where(any_ok, steps[jnp.argmax(ok)], jnp.zeros((), dtype))
    return t * ds, ds, any_ok

  def cond(state):
    it, _, done, _ = state
    return (it < max_iter) & ~done

  def body(state):
    it, s, _, _ = state
    step, ds, moved = newton_step(s)
    s_new = s + step
    scale = jnp.maximum(1, jnp.max(jnp.abs(s_new)))
    small = jnp.max(jnp.abs(jnp.where(moved, step, ds))) <= tol * scale
    converged = small
    done = converged | ~moved
    return it + 1, s_new, done, converged

  init = (
    jnp.zeros((), jnp.int32),
    jnp.zeros((n,), dtype),
    jnp.zeros((), bool),
    jnp.zeros((), bool),
  )
  num_iterations, scores, _, converged = lax.while_loop(cond, body, init)
  scores = scores - jnp.mean(scores)
  return BradleyTerryResult(
    scores=scores,
    converged=converged,
    num_iterations=num_iterations,
    identifiable=identifiable,
    connected=connected,
    separable=separable,
    prior_applied=prior_applied,
    prior_strength=lam,
  )
