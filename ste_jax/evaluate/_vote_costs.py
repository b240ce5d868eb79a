"""The per-pair costs of changing a count relation ``M_ab >= c`` by reversed or removed votes.

See :mod:`ste_jax.evaluate._robustness` for the margins ``M`` and the derivation of the costs.
"""

import numpy as np

Flip = tuple[int, int, int]
"""``(winner, loser, votes)``: reverse ``votes`` comparisons ``winner`` won against ``loser``."""


def flip_costs(
  W: np.ndarray, threshold: int, action: str = "reverse"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """The relation ``M_ab >= threshold`` of decisive wins ``W`` and its per-pair change costs.

  Args:
    W: ``(n, n)`` int decisive wins.
    threshold: ``c`` (0 for ``winrate``, 1 for ``posterior``).
    action: ``"reverse"`` (a reversal moves the margin by 2) or ``"remove"`` (by 1).

  Returns:
    ``(edge, create, remove)``: ``(n, n)`` bool relation (zero diagonal); int64 numbers of
    comparisons to reverse (or remove) that create an absent edge and that remove a present one,
    ``-1`` where impossible or not applicable (a present edge's ``create``, an absent edge's
    ``remove``, the diagonal).
  """
  n = W.shape[0]
  M = W - W.T
  off = ~np.eye(n, dtype=bool)
  edge = (M >= threshold) & off
  if action == "reverse":
    k_create = (threshold - M + 1) // 2
    k_remove = (M - threshold) // 2 + 1
  else:
    k_create = threshold - M
    k_remove = M - threshold + 1
  create = np.where(~edge & off & (k_create <= W.T), k_create, -1)
  remove = np.where(edge & (k_remove <= W), k_remove, -1)
  return edge, create.astype(np.int64), remove.astype(np.int64)
