"""Synthetic data for the training tests: a context-dependent rock-paper-scissors tournament."""

import numpy as np

from ste_jax.data import Comparisons

PLANTED_CORE = np.array([True, True, True, False, False])


def rps_probabilities(p_cycle: float = 0.95, p_dom: float = 0.9) -> np.ndarray:
  """``(2, 5, 5)`` true win probabilities: agents 0 > 1 > 2 > 0 in context 0, reversed in context 1;
  0, 1, 2 beat 3 and 4 in both contexts; 3 beats 4."""
  P = np.full((2, 5, 5), 0.5)
  for c in range(2):
    win = p_cycle if c == 0 else 1.0 - p_cycle
    for i, j in ((0, 1), (1, 2), (2, 0)):
      P[c, i, j], P[c, j, i] = win, 1.0 - win
    for i in range(3):
      for j in (3, 4):
        P[c, i, j], P[c, j, i] = p_dom, 1.0 - p_dom
    P[c, 3, 4], P[c, 4, 3] = 0.7, 0.3
  return P


def rps_comparisons(rng, m: int, context_probs=(0.75, 0.25)) -> Comparisons:
  """``m`` comparisons of uniformly drawn pairs, in random order, with contexts drawn from
  ``context_probs`` (unequal, so the marginal tournament keeps the context-0 cycle)."""
  P = rps_probabilities()
  pairs = np.array([(i, j) for i in range(5) for j in range(i + 1, 5)])
  ctx = rng.choice(2, size=m, p=np.asarray(context_probs))
  a, b = pairs[rng.integers(0, len(pairs), m)].T
  swap = rng.random(m) < 0.5
  a, b = np.where(swap, b, a), np.where(swap, a, b)
  y = (rng.random(m) < P[ctx, a, b]).astype(np.int8)
  return Comparisons.from_arrays(a, b, y, context=ctx, contexts=("c0", "c1"))


def cycle_comparisons(rng, m: int) -> Comparisons:
  """A context-free 3-cycle 0 > 1 > 2 > 0 (p = 0.9) plus agent 3 beaten by all (p = 0.9)."""
  P = rps_probabilities(p_cycle=0.9)[0][:4, :4]
  pairs = np.array([(i, j) for i in range(4) for j in range(i + 1, 4)])
  a, b = pairs[rng.integers(0, len(pairs), m)].T
  swap = rng.random(m) < 0.5
  a, b = np.where(swap, b, a), np.where(swap, a, b)
  y = (rng.random(m) < P[a, b]).astype(np.int8)
  return Comparisons.from_arrays(a, b, y)
