"""Task-mix robustness: each agent's soft Top-Cycle score over reweightings of the tasks.

Per-sample evaluations (``--format tasks``, ``inspect``, ``lm-eval``) pool comparisons from several
tasks, one context per task. How much of an agent's place in the core is the task mix? With ``K``
tasks, ``W_k`` and ``T_k`` the win and game matrices of task ``k`` (ties half to each side,
comparison weights included) divided by its total weight ``N_k``, a mix ``w`` in the simplex gives
the win-rate tournament

``P(w)_ab = sum_k w_k W_k[a, b] / sum_k w_k T_k[a, b]``  (``1/2`` where no weighted game),

so at the uniform mix ``u = (1/K, ..., 1/K)`` every task counts the same, whatever its size (the
pooled data weight tasks by size instead). The soft Top-Cycle score ``s_i(w)`` is that of
:func:`~ste_jax.ste_scores` on ``P(w)``, a differentiable function of ``w``.

:func:`task_mix_robustness` searches the total-variation ball ``B_r = {w in simplex : TV(w, u) =
||w - u||_1 / 2 <= r}`` for each agent's smallest and largest score: from the best of a set of
candidate mixes (``u``; every transfer of mass ``min(r, 1/K)`` from one task to another; random
mixes of the ball), projected gradient steps (:mod:`optax` Adam on ``w``, projected back onto
``B_r`` by Dykstra's alternating projections onto the simplex and the L1 ball (sort-based
projections, Duchi et al. 2008), then pulled
toward ``u`` where still outside), keeping the best feasible mix seen. The problem is not convex,
so the range found is an *inner* bound: every reported value is attained at a reported mix in the
ball, and the true range can only be wider. At the mixes found the hard Top Cycle (reach all in
``P(w) >= 1/2``) is evaluated too: a ``True`` ``hard_can_change`` is certain (the mix is given),
a ``False`` one is not proof of stability.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ste_jax import exact
from ste_jax._errors import InputError, OptionError
from ste_jax._results import result_type, static
from ste_jax.data import Comparisons
from ste_jax.ops import ste_scores


@result_type
class TaskMixRobustness:
  """The range of each agent's soft Top-Cycle score over the task mixes of a TV ball.

  Attributes:
    score: ``(n,)`` soft Top-Cycle score at the uniform mix.
    score_min, score_max: ``(n,)`` the smallest and largest scores found in the ball.
    weights_min, weights_max: ``(n, K)`` the task mixes attaining them.
    hard: ``(n,)`` bool, hard Top-Cycle membership at the uniform mix.
    hard_at_min, hard_at_max: ``(n,)`` bool, the agent's hard membership at its two mixes.
    agents: agent names. Static.
    tasks: task (context) names, the columns of the weights. Static.
    radius: the total-variation radius ``r``. Static.
  """

  score: jax.Array
  score_min: jax.Array
  score_max: jax.Array
  weights_min: jax.Array
  weights_max: jax.Array
  hard: jax.Array
  hard_at_min: jax.Array
  hard_at_max: jax.Array
  agents: tuple[str, ...] = static()
  tasks: tuple[str, ...] = static()
  radius: float = static()

  @property
  def hard_can_change(self) -> np.ndarray:
    """``(n,)`` bool: some mix found in the ball changes the agent's hard membership."""
    hard = np.asarray(self.hard)
    return (np.asarray(self.hard_at_min) != hard) | (np.asarray(self.hard_at_max) != hard)


def task_matrices(comparisons: Comparisons) -> tuple[np.ndarray, np.ndarray]:
  """``(W, T)``: ``(K, n, n)`` float64 win and game matrices per context, each over its weight.

  Raises:
    InputError: fewer than two contexts hold comparisons.
  """
  a, b = np.asarray(comparisons.a), np.asarray(comparisons.b)
  outcome = np.asarray(comparisons.outcome, dtype=np.float64)
  weight = np.asarray(comparisons.weight, dtype=np.float64)
  context = np.asarray(comparisons.context)
  K, n = comparisons.num_contexts, comparisons.num_agents
  W = np.zeros((K, n, n))
  T = np.zeros((K, n, n))
  np.add.at(W, (context, a, b), weight * outcome)
  np.add.at(W, (context, b, a), weight * (1 - outcome))
  np.add.at(T, (context, a, b), weight)
  np.add.at(T, (context, b, a), weight)
  size = T.sum(axis=(1, 2)) / 2
  keep = size > 0
  if keep.sum() < 2:
    raise InputError(
      f"comparisons: task-mix robustness needs at least two tasks (contexts) with comparisons, "
      f"got {int(keep.sum())}."
    )
  return W[keep] / size[keep, None, None], T[keep] / size[keep, None, None]


def mixed_tournament(w: jax.Array, W: jax.Array, T: jax.Array) -> jax.Array:
  """``P(w)`` of the module docstring: ``(n, n)`` (``1/2`` on the diagonal and unplayed pairs)."""
  wins = jnp.tensordot(w, W, axes=1)
  games = jnp.tensordot(w, T, axes=1)
  played = games > 0
  return jnp.where(played, wins / jnp.where(played, games, 1.0), 0.5)


def _project_simplex(v: jax.Array, scale: jax.typing.ArrayLike = 1.0) -> jax.Array:
  """Euclidean projection of ``(K,)`` ``v`` onto ``{x >= 0, sum x = scale}`` (sort-based)."""
  K = v.shape[-1]
  mu = jnp.sort(v)[::-1]
  cumulative = jnp.cumsum(mu) - scale
  index = jnp.arange(1, K + 1, dtype=v.dtype)
  rho = jnp.sum(mu - cumulative / index > 0)
  theta = cumulative[rho - 1] / rho.astype(v.dtype)
  return jnp.maximum(v - theta, 0.0)


def _project_l1_ball(v: jax.Array, radius: jax.typing.ArrayLike) -> jax.Array:
  """Euclidean projection of ``v`` onto ``{||x||_1 <= radius}``."""
  inside = jnp.sum(jnp.abs(v)) <= radius
  return jnp.where(inside, v, jnp.sign(v) * _project_simplex(jnp.abs(v), radius))


def project_ball(w: jax.Array, u: jax.Array, radius: float, iterations: int = 50) -> jax.Array:
  """A point of ``{w in simplex : ||w - u||_1 / 2 <= radius}`` near ``w`` (Dykstra, then pulled
  toward ``u`` by the factor that puts it inside)."""

  def body(_, state):
    x, p, q = state
    y = _project_simplex(x + p)
    p = x + p - y
    x = u + _project_l1_ball(y + q - u, 2 * radius)
    q = y + q - x
    return x, p, q

  zeros = jnp.zeros_like(w)
  x, _, _ = jax.lax.fori_loop(0, iterations, body, (w, zeros, zeros))
  x = _project_simplex(x)
  tv = jnp.sum(jnp.abs(x - u)) / 2
  return u + (x - u) * jnp.minimum(1.0, radius / jnp.maximum(tv, 1e-30))


def _candidates(key: jax.Array, K: int, radius: float, num_random: int, dtype) -> jax.Array:
  """``u``, the one-task transfers of mass ``min(r, 1/K)``, and random mixes of the ball."""
  u = jnp.full(K, 1.0 / K, dtype)
  step = min(radius, 1.0 / K)
  eye = jnp.eye(K, dtype=dtype)
  moves = (eye[:, None, :] - eye[None, :, :]).reshape(K * K, K)  # to j from i
  moves = moves[jnp.any(moves != 0, axis=1)]
  q = jax.random.dirichlet(key, jnp.ones(K, dtype), (num_random,))
  random = jax.vmap(lambda x: project_ball(x, u, radius))(q)
  return jnp.concatenate([u[None], u[None, :] + step * moves, random])


def task_mix_robustness(
  key: jax.Array,
  comparisons: Comparisons,
  *,
  radius: float,
  tau: float = 0.05,
  gamma: float | None = None,
  steps: int = 100,
  learning_rate: float = 0.02,
  num_random: int = 16,
) -> TaskMixRobustness:
  """Each agent's smallest and largest soft Top-Cycle score over task mixes within TV ``radius``.

  The search of the module docstring: candidate mixes, then ``steps`` projected Adam steps per
  agent and direction (all ``2 n`` searches batched with ``vmap``, gradients by ``jax.grad``
  through the win-rate tournament and :func:`~ste_jax.ste_scores`). An inner bound: each value is
  attained at the mix returned with it.

  Args:
    key: PRNG key of the random candidate mixes.
    comparisons: :class:`~ste_jax.data.Comparisons` whose contexts are the tasks (what the
      ``tasks``, ``inspect`` and ``lm-eval`` loaders give), at least two with comparisons.
    radius: ``r`` in ``[0, 1]``, the total-variation radius around the uniform mix.
    tau: edge temperature of the soft scores.
    gamma: Top-Cycle temperature (default ``tau``).
    steps: projected-gradient steps.
    learning_rate: Adam's step size on the weights.
    num_random: random candidate mixes.

  Returns:
    :class:`TaskMixRobustness` (float32, float64 under ``jax_enable_x64``).

  Raises:
    OptionError: ``radius`` outside ``[0, 1]``, or a non-positive ``steps``/``learning_rate``.
    InputError: fewer than two tasks with comparisons.

  Example:
    >>> import jax
    >>> from ste_jax.data import Comparisons
    >>> # task 0: a beats b twice; task 1: b beats a once
    >>> c = Comparisons.from_arrays([0, 0, 0], [1, 1, 1], [1.0, 1.0, 0.0], context=[0, 0, 1],
    ...                             contexts=["t0", "t1"])
    >>> r = task_mix_robustness(jax.random.key(0), c, radius=0.3)
    >>> r.hard.tolist(), r.hard_at_min.tolist()  # at the uniform mix a tie; tilted, b or a wins
    ([True, True], [False, False])
  """
  radius = float(radius)
  if not 0.0 <= radius <= 1.0:
    raise OptionError(f"radius must be in [0, 1], got {radius}.")
  if int(steps) < 1 or not float(learning_rate) > 0:
    raise OptionError(f"steps and learning_rate must be positive, got {steps}, {learning_rate}.")
  dtype = jnp.zeros(()).dtype
  W_np, T_np = task_matrices(comparisons)
  names = tuple(
    name
    for name, k in zip(comparisons.contexts, range(comparisons.num_contexts))
    if (np.asarray(comparisons.context) == k).any()
  )
  W, T = jnp.asarray(W_np, dtype), jnp.asarray(T_np, dtype)
  K, n = W.shape[0], W.shape[1]
  gamma = tau if gamma is None else gamma
  u = jnp.full(K, 1.0 / K, dtype)

  def scores(w):
    return ste_scores(mixed_tournament(w, W, T), tau=tau, gamma=gamma, validate=False).top_cycle

  cands = _candidates(key, K, radius, int(num_random), dtype)
  cand_scores = jax.vmap(scores)(cands)  # (C, n)
  agent = jnp.concatenate([jnp.arange(n), jnp.arange(n)])
  sign = jnp.concatenate([-jnp.ones(n, dtype), jnp.ones(n, dtype)])  # maximize sign * s_i
  start = cands[jnp.argmax(sign[:, None] * cand_scores.T[agent], axis=1)]
  best = jnp.max(sign[:, None] * cand_scores.T[agent], axis=1)
  optimizer = optax.adam(learning_rate)

  def search(w0, i, s, best0):
    def objective(w):
      return -s * scores(w)[i]

    def step(state, _):
      w, opt_state, best_w, best_v = state
      g = jax.grad(objective)(w)
      with jax.numpy_dtype_promotion("standard"):  # optax mixes Python floats and int counts
        updates, opt_state = optimizer.update(g, opt_state, w)
      w = project_ball(optax.apply_updates(w, updates), u, radius)
      v = s * scores(w)[i]
      better = v > best_v
      return (w, opt_state, jnp.where(better, w, best_w), jnp.where(better, v, best_v)), None

    state = (w0, optimizer.init(w0), w0, best0)
    (_, _, best_w, _), _ = jax.lax.scan(step, state, None, length=int(steps))
    return best_w

  found = jax.jit(jax.vmap(search))(start, agent, sign, best)
  at_found = jax.vmap(scores)(found)[jnp.arange(2 * n), agent]
  hard_found = jax.vmap(lambda w: exact.reach_all(mixed_tournament(w, W, T) >= 0.5))(found)
  P_u = mixed_tournament(u, W, T)
  return TaskMixRobustness(
    score=scores(u),
    score_min=at_found[:n],
    score_max=at_found[n:],
    weights_min=found[:n],
    weights_max=found[n:],
    hard=exact.reach_all(P_u >= 0.5),
    hard_at_min=hard_found[jnp.arange(n), jnp.arange(n)],
    hard_at_max=hard_found[n + jnp.arange(n), jnp.arange(n)],
    agents=tuple(comparisons.agents),
    tasks=names,
    radius=radius,
  )
