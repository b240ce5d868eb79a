"""Hard (Boolean) tournament solutions of the majority relation (paper §2.3).

These are the zero-temperature targets of the soft operators, computed on an independent code
path (integer and Boolean arithmetic, no log-sum-exp, no max-min closure), so that tests and
reports can compare the two. All functions take ``P`` of shape ``(..., n, n)``, are pure and
jit/vmap-compatible, and threshold at exactly ``1/2``.

Ties (``P_ab = 1/2``) follow the standard social-choice conventions:

* :func:`top_cycle` is the Smith set (GETCHA): the smallest non-empty set whose members each
  strictly beat every outsider; equivalently the agents that reach everyone through the *weak*
  majority relation (a tie counts both ways).
* :func:`uncovered_set` uses the paper's covering (Definition "Covering Relation"): ``c`` covers
  ``a`` iff ``c`` strictly beats ``a`` and strictly beats everyone ``a`` strictly beats. With ties
  this is the Bordes covering (pref-voting's ``uc_bordes``).
"""

import jax
import jax.numpy as jnp

from ste_jax._checks import as_float_array, check_square, eye_mask
from ste_jax._validation import check_operator_input


def majority_tournament(P: jax.typing.ArrayLike) -> jax.Array:
  """Strict majority relation (paper Definition "Majority-Rule Tournament").

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    Boolean ``(..., n, n)``: ``A[a, b] = P[a, b] > 1/2``, ``False`` on the diagonal.
  """
  P = as_float_array(P, "P")
  check_square(P, "P")
  return (P > 0.5) & ~eye_mask(P)


def top_cycle(P: jax.typing.ArrayLike, *, validate: bool = True) -> jax.Array:
  """Top Cycle / Smith set of the majority relation (paper Definition "Top Cycle").

  Algorithm (``O(n^2)`` after one sort): every Smith-set member has a strictly larger weak
  out-degree (number of opponents it beats or ties) than every non-member, so the Smith set is the
  shortest prefix of the agents sorted by weak out-degree whose members all strictly beat all
  remaining agents. The number of "non-strict" pairs from each prefix to its complement is read off
  a 2-D cumulative sum.

  Args:
    P: ``(..., n, n)`` probabilistic tournament.
    validate: check a concrete ``P``'s values first (off the diagonal: finite, in ``[0, 1]``,
      ``P + P^T = 1`` within ``1e-6``, as :func:`~ste_jax.validate_tournament`); ``False`` skips
      it. Traced inputs (inside ``jit``, ``vmap``) are never checked.

  Returns:
    Boolean mask of shape ``(..., n)``; never empty.

  Raises:
    InputError: ``validate`` and a concrete ``P`` with a NaN, an infinity, a value outside
      ``[0, 1]`` or ``P[a, b] + P[b, a] != 1`` off its diagonal, naming the first such entry.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.8, 0.9], [0.2, 0.5, 0.6], [0.1, 0.4, 0.5]])
    >>> top_cycle(P).tolist()
    [True, False, False]
  """
  check_operator_input(P, "P", validate=validate, complementary=True)
  P = as_float_array(P, "P")
  n = check_square(P, "P")
  off = ~eye_mask(P)
  strict = (P > 0.5) & off
  weak_out = jnp.sum((P >= 0.5) & off, axis=-1, dtype=jnp.int32)
  order = jnp.argsort(-weak_out, axis=-1, stable=True)
  # not_strict[i, j] = agent order[i] does not strictly beat agent order[j] (off the diagonal).
  rows = jnp.take_along_axis(~strict & off, order[..., :, None], axis=-2)
  not_strict = jnp.take_along_axis(rows, order[..., None, :], axis=-1).astype(jnp.int32)
  # T[r, j] = sum_{i <= r} sum_{j' >= j} not_strict[i, j'];  cut(k) = T[k - 1, k] for k = 1..n-1.
  T = jnp.flip(jnp.cumsum(jnp.flip(jnp.cumsum(not_strict, axis=-2), axis=-1), axis=-1), axis=-1)
  k = jnp.arange(1, n)
  cut = T[..., k - 1, k]
  dominant = jnp.concatenate([cut == 0, jnp.ones(cut.shape[:-1] + (1,), bool)], axis=-1)
  size = jnp.argmax(dominant, axis=-1) + 1  # first dominant prefix
  position = jnp.argsort(order, axis=-1)
  return position < size[..., None]


def uncovered_set(P: jax.typing.ArrayLike, *, validate: bool = True) -> jax.Array:
  """Uncovered Set of the majority relation (paper Definitions "Covering Relation", "Uncovered
  Set").

  ``c`` covers ``a`` iff ``A[c, a]`` and no witness ``b`` has ``A[a, b]`` and not ``A[c, b]``. The
  witness counts for all pairs are one matrix product, ``A (1 - A)^T`` (exact in floating point for
  ``n < 2**24``).

  Args:
    P: ``(..., n, n)`` probabilistic tournament.
    validate: check a concrete ``P``'s values first, as :func:`top_cycle`; ``False`` skips it.

  Returns:
    Boolean mask of shape ``(..., n)``; never empty.

  Raises:
    InputError: ``validate`` and a concrete ``P`` with invalid values, as :func:`top_cycle`.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.5]])  # a 3-cycle
    >>> uncovered_set(P).tolist()
    [True, True, True]
  """
  check_operator_input(P, "P", validate=validate, complementary=True)
  A = majority_tournament(P)
  dtype = jnp.result_type(float)
  Af = A.astype(dtype)
  witnesses = jnp.matmul(Af, jnp.swapaxes(1.0 - Af, -1, -2))  # [a, c]
  covers = A & (jnp.swapaxes(witnesses, -1, -2) == 0)  # [c, a]
  return ~jnp.any(covers, axis=-2)


def condorcet_winner(P: jax.typing.ArrayLike) -> jax.Array:
  """Index of the agent that strictly beats every other agent, or ``-1`` (paper §2.4).

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    int32 array of shape ``(...)``. With ``n = 1`` the only agent is the Condorcet winner.
  """
  A = majority_tournament(P)
  n = A.shape[-1]
  wins = jnp.sum(A, axis=-1, dtype=jnp.int32)
  is_winner = wins == n - 1
  return jnp.where(jnp.any(is_winner, axis=-1), jnp.argmax(is_winner, axis=-1), -1).astype(
    jnp.int32
  )


def copeland_set(P: jax.typing.ArrayLike) -> jax.Array:
  """Agents with the largest Copeland score (strict wins minus strict losses; ties count 0).

  Args:
    P: ``(..., n, n)`` probabilistic tournament.

  Returns:
    Boolean mask of shape ``(..., n)``.
  """
  A = majority_tournament(P)
  score = jnp.sum(A, axis=-1, dtype=jnp.int32) - jnp.sum(A, axis=-2, dtype=jnp.int32)
  return score == jnp.max(score, axis=-1, keepdims=True)
