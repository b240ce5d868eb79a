"""Independent reference implementations for the tests (never used by the library).

* ``nx_*``: hard solutions from networkx graph algorithms.
* ``pv_*``: hard solutions from pref-voting (``smith_set``, ``uc_bordes``).
* ``brute_*``: direct transcriptions of the paper's definitions with Python loops.
* ``naive_*``: the paper's soft equations transcribed literally (dense tensors, ``K`` products,
  plain autodiff), used to check the optimized kernels and their custom VJPs.
* random tournament generators.
"""

import itertools

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np


# ----------------------------------------------------------------------------- generators
def random_tournament(rng, n, *, margin=0.1, tie_prob=0.0):
  """Random complementary P with |P_ab - 1/2| >= margin off the diagonal (or exact ties)."""
  P = np.full((n, n), 0.5)
  for a, b in itertools.combinations(range(n), 2):
    if rng.random() < tie_prob:
      p = 0.5
    else:
      p = 0.5 + rng.uniform(margin, 0.5) * rng.choice([-1.0, 1.0])
    P[a, b], P[b, a] = p, 1.0 - p
  return P


def planted_cycle_tournament(rng, n, core, *, margin=0.1):
  """Random tournament whose first ``core`` agents (an odd rotation) beat all others; permuted."""
  P = random_tournament(rng, n, margin=margin)
  for i in range(core):
    for j in range(core, n):
      p = 0.5 + rng.uniform(margin, 0.5)
      P[i, j], P[j, i] = p, 1 - p
    for step in range(1, (core - 1) // 2 + 1):
      j = (i + step) % core
      p = 0.5 + rng.uniform(margin, 0.5)
      P[i, j], P[j, i] = p, 1 - p
  perm = rng.permutation(n)
  mask = np.zeros(n, bool)
  mask[:core] = True
  return P[np.ix_(perm, perm)], mask[perm]


# ----------------------------------------------------------------------------- hard oracles
def nx_digraph(A):
  """The networkx digraph of a Boolean adjacency ``A`` (diagonal ignored)."""
  n = A.shape[0]
  G = nx.DiGraph()
  G.add_nodes_from(range(n))
  G.add_edges_from((a, b) for a in range(n) for b in range(n) if a != b and A[a, b])
  return G


def nx_top_cycle(P):
  """Smith set: the source component of the condensation of the weak majority graph (ties both
  ways)."""
  n = P.shape[0]
  C = nx.condensation(nx_digraph(P >= 0.5))
  sources = [c for c in C.nodes if C.in_degree(c) == 0]
  assert len(sources) == 1
  mask = np.zeros(n, bool)
  mask[list(C.nodes[sources[0]]["members"])] = True
  return mask


def nx_reach_all(A):
  """Agents from which every other agent is reachable in the directed graph ``A`` (networkx)."""
  n = A.shape[0]
  G = nx_digraph(A)
  return np.array([len(nx.descendants(G, a)) == n - 1 for a in range(n)], dtype=bool)


def nx_reachability(A):
  """Boolean transitive closure (paths of length >= 1) of adjacency ``A``."""
  n = A.shape[0]
  G = nx.DiGraph()
  G.add_nodes_from(range(n))
  G.add_edges_from((a, b) for a in range(n) for b in range(n) if A[a, b])
  R = np.zeros((n, n), bool)
  for a in range(n):
    for b in nx.descendants(G, a):
      R[a, b] = True
  return R


def brute_uncovered_set(P):
  """The paper's definition: c covers a iff c > a and every b with a > b has c > b."""
  n = P.shape[0]
  A = (P > 0.5) & ~np.eye(n, dtype=bool)
  covered = np.zeros(n, bool)
  for a in range(n):
    for c in range(n):
      if c != a and A[c, a] and all(A[c, b] for b in range(n) if A[a, b]):
        covered[a] = True
  return ~covered


def _margin_graph(P):
  from pref_voting.weighted_majority_graphs import MarginGraph

  n = P.shape[0]
  edges = [
    (a, b, float(P[a, b] - 0.5)) for a in range(n) for b in range(n) if P[a, b] > 0.5 and a != b
  ]
  return MarginGraph(list(range(n)), edges)


def pv_smith_set(P):
  from pref_voting.c1_methods import smith_set

  mask = np.zeros(P.shape[0], bool)
  mask[smith_set(_margin_graph(P))] = True
  return mask


def pv_uc_bordes(P):
  from pref_voting.c1_methods import uc_bordes

  mask = np.zeros(P.shape[0], bool)
  mask[uc_bordes(_margin_graph(P))] = True
  return mask


# ----------------------------------------------------------------------------- naive soft equations
def _nsmax(z, gamma, axis, mask=None):
  """Eq. normalized_smax by jax.nn.logsumexp, m = number of unmasked entries."""
  if mask is None:
    mask = jnp.ones(z.shape, bool)
  m = jnp.sum(mask, axis=axis)
  lse = jax.nn.logsumexp(jnp.where(mask, z / gamma, -jnp.inf), axis=axis)
  return gamma * (lse - jnp.log(m.astype(z.dtype)))


def _nsmin(z, gamma, axis, mask=None):
  return -_nsmax(-z, gamma, axis, mask)


def naive_edges(P, tau):
  n = P.shape[-1]
  return jnp.where(jnp.eye(n, dtype=bool), 0.0, jax.nn.sigmoid((P - 0.5) / tau))


def is_concrete_zero(x) -> bool:
  """``x == 0`` for a concrete value; ``False`` for a traced one (a positive temperature by
  contract)."""
  try:
    return bool(x == 0)
  except jax.errors.ConcretizationTypeError:
    return False


def naive_reachability(D, K, gamma):
  """Eqs. soft_boolean_product / soft_path_length_k / soft_reachability, K dense products.

  ``gamma = 0`` uses exact max/min. The diagonal of the result is zeroed (unused by t). A traced
  ``gamma`` (under ``jax.jit``) is taken as positive, so the oracle can be compiled.
  """
  n = D.shape[-1]
  hard = is_concrete_zero(gamma)
  D = jnp.where(jnp.eye(n, dtype=bool), 0.0, D)  # Eq. soft_majority_edge: no self-loops

  def product(X, Y):
    x = jnp.broadcast_to(X[:, :, None], (n, n, n))
    y = jnp.broadcast_to(Y[None, :, :], (n, n, n))
    if hard:
      return jnp.max(jnp.minimum(x, y), axis=1)
    inner = _nsmin(jnp.stack([x, y]), gamma, axis=0)
    return _nsmax(inner, gamma, axis=1)

  Qs = [D]
  for _ in range(2, K + 1):
    Qs.append(product(Qs[-1], D))
  Q = jnp.stack(Qs)
  R = jnp.max(Q, axis=0) if hard else _nsmax(Q, gamma, axis=0)
  return jnp.where(jnp.eye(n, dtype=bool), 0.0, R)


def naive_cover(D, gamma_c):
  """Eqs. soft_cover_violation and soft_cover_score as a dense (c, a, b) tensor (a traced
  ``gamma_c``: positive)."""
  n = D.shape[-1]
  term = D[None, :, :] * (1.0 - D[:, None, :])  # [c, a, b]
  idx = jnp.arange(n)
  mask = (idx[None, None, :] != idx[None, :, None]) & (idx[None, None, :] != idx[:, None, None])
  if n <= 2:
    v = jnp.zeros((n, n), D.dtype)
  elif is_concrete_zero(gamma_c):
    v = jnp.max(jnp.where(mask, term, -jnp.inf), axis=-1)
  else:
    v = _nsmax(term, gamma_c, axis=-1, mask=mask)
  cover = D * (1.0 - v)
  return jnp.where(jnp.eye(n, dtype=bool), 0.0, cover)


def naive_ste_scores(P, tau, gamma, gamma_c, K, reach_gamma=0.0):
  """The whole pipeline, literally; returns (t, u)."""
  n = P.shape[-1]
  off = ~jnp.eye(n, dtype=bool)
  D = naive_edges(P, tau)
  R = naive_reachability(D, K, reach_gamma)
  if n == 1:
    return jnp.ones(1, P.dtype), jnp.ones(1, P.dtype)
  t = _nsmin(R, gamma, axis=-1, mask=off)
  cover = naive_cover(D, gamma_c)
  u = 1.0 - _nsmax(cover, gamma_c, axis=-2, mask=off)
  return t, u
