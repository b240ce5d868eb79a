"""The per-pair costs of changing a count relation ``M_ab >= c`` by reversed or removed votes.

See :mod:`ste_jax.evaluate._robustness` for the margins ``M`` and the derivation of the costs, and
for the model estimator's relation (:func:`held_relation_costs`).
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


def held_relation_costs(
  W: np.ndarray, edge: np.ndarray, observed: np.ndarray, threshold: int, action: str = "reverse"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
  """Change costs of a relation whose compared pairs follow their votes once these change.

  The relation is ``edge`` (e.g. the model estimator's) as long as no vote changes. A pair
  ``{a, b}`` in ``observed`` whose decisive votes are changed (one or more reversed, or removed)
  is then decided by its record, ``a -> b`` iff ``M'_ab >= threshold`` of its new margin, as the
  count relations are; a pair not in ``observed`` (imputed) is held fixed. The cost of a state of
  a pair is the fewest changes (at least one) that give it, so it is the count relation's cost,
  except where ``edge`` orients a pair against its record: then one change suffices.

  Args:
    W: ``(n, n)`` int decisive wins.
    edge: ``(n, n)`` bool relation with no vote changed.
    observed: ``(n, n)`` bool, symmetric: the pairs with comparisons.
    threshold: ``c`` of the record rule (0: the weak relation ``P >= 1/2``).
    action: ``"reverse"`` (a change moves the margin by 2) or ``"remove"`` (by 1).

  Returns:
    ``(create, remove, create_from, remove_from)``: ``(n, n)`` int64 fewest changes that create
    an absent edge ``a -> b`` and that remove a present one (``-1`` where impossible or not
    applicable), and the agent whose wins over the other are changed to do it.
  """
  n = W.shape[0]
  step = 2 if action == "reverse" else 1
  M = W - W.T
  off = ~np.eye(n, dtype=bool)
  changeable = observed & off
  rows = np.broadcast_to(np.arange(n)[:, None], (n, n))
  cols = rows.T
  # create a -> b: raise the margin by i >= 1 changes of b's wins over a, or, where the record
  # already has a -> b with one to spare, one change of a's wins
  up = np.maximum(1, -((M - threshold) // step))
  up_ok = up <= W.T
  down_ok = (M - step >= threshold) & (W >= 1)
  create = np.where(up_ok, up, np.where(down_ok, 1, -1))
  create_from = np.where(up_ok, cols, rows)
  # remove a -> b: lower the margin by j >= 1 changes of a's wins over b, or one change of b's
  # wins where the record is already below the threshold with one to spare
  down = np.maximum(1, (M - threshold) // step + 1)
  down_ok = down <= W
  up_ok = (M + step < threshold) & (W.T >= 1)
  remove = np.where(down_ok, down, np.where(up_ok, 1, -1))
  remove_from = np.where(down_ok, rows, cols)
  create = np.where(changeable & ~edge, create, -1)
  remove = np.where(changeable & edge, remove, -1)
  return (
    create.astype(np.int64),
    remove.astype(np.int64),
    create_from.astype(np.int64),
    remove_from.astype(np.int64),
  )
