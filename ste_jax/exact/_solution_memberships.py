"""All tournament solutions of one tournament in one call: memberships and probabilities."""

from collections.abc import Iterable

import jax

from ste_jax._checks import as_float_array, check_square
from ste_jax.exact._lotteries import margin_matrix, maximal_lottery_with_support
from ste_jax.exact._solutions import copeland_set, top_cycle, uncovered_set
from ste_jax.exact._tournament_sets import banks_set, minimal_covering_set, schwartz_set
from ste_jax.ops._lottery import alpha_rank, nash_average

SOLUTION_NAMES = (
  "top_cycle",
  "uncovered",
  "copeland",
  "schwartz",
  "bipartisan",
  "essential",
  "mcs",
  "banks",
  "ml",
  "c1_ml",
  "nash",
  "alpharank",
)
"""Names accepted by :func:`solution_memberships` (see its docstring), in a stable order."""

_ALIASES = {
  "smith": "top_cycle",
  "tc": "top_cycle",
  "uc": "uncovered",
  "uncovered_set": "uncovered",
  "gocha": "schwartz",
  "bp": "bipartisan",
  "es": "essential",
  "minimal_covering": "mcs",
  "maximal_lottery": "ml",
  "c2_ml": "ml",
  "nash_average": "nash",
  "alpha_rank": "alpharank",
}


def canonical_solution_name(name: str) -> str:
  """The :data:`SOLUTION_NAMES` entry of a name or alias.

  Raises:
    ValueError: for an unknown name, listing the valid names and aliases.
  """
  key = _ALIASES.get(name, name)
  if key not in SOLUTION_NAMES:
    raise ValueError(
      f"unknown solution {name!r}; valid names: {', '.join(SOLUTION_NAMES)} "
      f"(aliases: {', '.join(sorted(_ALIASES))})."
    )
  return key


def is_lottery(name: str) -> bool:
  """Whether a solution name (or alias) is a lottery (probabilities), not a set (membership)."""
  return canonical_solution_name(name) in ("ml", "c1_ml", "nash", "alpharank")


def solution_memberships(
  P: jax.typing.ArrayLike,
  names: Iterable[str] = ("bipartisan", "mcs", "ml", "alpharank"),
  *,
  alpha: float = 10.0,
) -> dict[str, jax.Array]:
  """Several tournament solutions of ``P``: Boolean masks for sets, probabilities for lotteries.

  Names (aliases in parentheses):

  * sets, Boolean ``(..., n)``: ``top_cycle`` (``smith``, ``tc``), ``uncovered`` (``uc``),
    ``copeland``, ``schwartz`` (``gocha``), ``bipartisan`` (``bp``: support of the maximal lottery
    of ``sign(P - P^T)``), ``essential`` (``es``: of ``P - P^T``), ``mcs`` (``minimal_covering``),
    ``banks`` (only ``n <= 20``; raises above);
  * lotteries, float ``(..., n)`` summing to 1: ``ml`` (``maximal_lottery``: maximum-entropy maximal
    lottery of ``P - P^T``), ``c1_ml`` (of ``sign(P - P^T)``), ``nash`` (Nash averaging of the
    margins ``P - P^T``; the same distribution as ``ml``), ``alpharank`` (single-population
    alpha-Rank of the payoff ``P`` with selection intensity ``alpha`` and population 50).

  Jit with ``jax.jit(solution_memberships, static_argnames="names")``.

  Args:
    P: ``(..., n, n)`` probabilistic tournament.
    names: iterable of names (see above); duplicates after alias resolution are computed once.
    alpha: alpha-Rank's selection intensity (used by ``alpharank`` only).

  Returns:
    ``dict`` from each name as given to its ``(..., n)`` array.

  Raises:
    ValueError: for an unknown name (listing the valid ones), a non-square ``P``, or ``banks`` with
      ``n > 20``.

  Examples:
    >>> import jax.numpy as jnp
    >>> P = jnp.array([[0.5, 0.7, 0.3, 0.9], [0.3, 0.5, 0.7, 0.9],
    ...                [0.7, 0.3, 0.5, 0.9], [0.1, 0.1, 0.1, 0.5]])
    >>> out = solution_memberships(P, ("bipartisan", "mcs"))
    >>> out["bipartisan"].tolist(), out["mcs"].tolist()
    ([True, True, True, False], [True, True, True, False])
  """
  P = as_float_array(P, "P")
  check_square(P, "P")
  canonical = {name: canonical_solution_name(name) for name in tuple(names)}

  cache: dict[str, jax.Array] = {}

  def lottery(majority: bool) -> tuple[jax.Array, jax.Array, jax.Array]:
    key = "c1" if majority else "c2"
    if key not in cache:
      cache[key] = maximal_lottery_with_support(margin_matrix(P, majority=majority))
    return cache[key]

  compute = {
    "top_cycle": lambda: top_cycle(P),
    "uncovered": lambda: uncovered_set(P),
    "copeland": lambda: copeland_set(P),
    "schwartz": lambda: schwartz_set(P),
    "bipartisan": lambda: lottery(True)[1],
    "essential": lambda: lottery(False)[1],
    "mcs": lambda: minimal_covering_set(P),
    "banks": lambda: banks_set(P),
    "ml": lambda: lottery(False)[0],
    "c1_ml": lambda: lottery(True)[0],
    "nash": lambda: nash_average(margin_matrix(P)).distribution,
    "alpharank": lambda: alpha_rank(P, alpha=alpha),
  }
  results: dict[str, jax.Array] = {}
  out = {}
  for name, key in canonical.items():
    if key not in results:
      results[key] = compute[key]()
    out[name] = results[key]
  return out
