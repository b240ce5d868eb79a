"""Transitional import path: the module is now :mod:`ste_jax.exact._solution_memberships`.

Kept only until ``ste_jax._cli``, ``ste_jax._render`` and ``ste_jax.evaluate._leaderboard`` import
from the new path; then this file is deleted.
"""

from ste_jax.exact._solution_memberships import SOLUTION_NAMES as SOLUTION_NAMES
from ste_jax.exact._solution_memberships import canonical_solution_name as canonical_solution_name
from ste_jax.exact._solution_memberships import is_lottery as is_lottery
from ste_jax.exact._solution_memberships import solution_memberships as solution_memberships
