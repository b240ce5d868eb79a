"""Small synthetic comparison sets shared by the evaluate tests."""

import numpy as np

from ste_jax.data import Comparisons


def from_wins(wins, agents=None) -> Comparisons:
  """One weighted row per ordered pair with wins (weight = number of wins)."""
  wins = np.asarray(wins, dtype=np.float64)
  a, b = np.nonzero(wins)
  return Comparisons.from_arrays(a, b, np.ones(a.size), weight=wins[a, b], agents=agents)


def rps_above_transitive(seed=0, *, n=12, games=30, missing=0.5, cycle=2.0):
  """Rock-paper-scissors among agents 0, 1, 2 above a transitive rest; a share of the other pairs
  missing.

  Returns ``(comparisons, P)``: unit rows (one per game) and the true tournament, whose Top Cycle
  is ``{0, 1, 2}``. The three core pairs are always observed.
  """
  rng = np.random.default_rng(seed)
  s = np.concatenate([[3.0, 3.0, 3.0], np.linspace(1.0, -2.0, n - 3)])
  H = s[:, None] - s[None, :]
  for x, y in ((0, 1), (1, 2), (2, 0)):
    H[x, y] += cycle
    H[y, x] -= cycle
  P = 1.0 / (1.0 + np.exp(-H))
  a, b, o = [], [], []
  for i in range(n):
    for j in range(i + 1, n):
      if j > 2 and rng.random() < missing:
        continue
      wins = rng.random(games) < P[i, j]
      a += [i] * games
      b += [j] * games
      o += wins.astype(float).tolist()
  return Comparisons.from_arrays(a, b, o), P


def random_pairs(rng: np.random.Generator, n: int, m: int):
  """``(a, b, p)``: ``m`` uniformly random pairs of ``n`` agents (never a self-pair) and the
  probability that ``a`` wins under linearly spaced Bradley-Terry strengths from 1 to -1."""
  a = rng.integers(0, n, m)
  b = (a + rng.integers(1, n, m)) % n
  strength = np.linspace(1.0, -1.0, n)
  return a, b, 1 / (1 + np.exp(-(strength[a] - strength[b])))
