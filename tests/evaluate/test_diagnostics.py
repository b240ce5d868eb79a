"""Evidence diagnostics: coverage numbers, components against networkx, and each warning."""

import dataclasses
import json
import math
import pathlib

import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest

from ste_jax import data, exact, ops
from ste_jax.evaluate import EvidenceDiagnostics, evidence_diagnostics

_ROOT = pathlib.Path(__file__).resolve().parents[2]
VICUNA = _ROOT / "ste_jax" / "_bundled" / "vicuna80_qlora_human" / "comparisons.csv"
LLMFAO = (
  pathlib.Path(__file__).resolve().parents[2].parent
  / "shared"
  / "data"
  / "llmfao_crowd"
  / "comparisons.csv"
)


def _random_totals(rng, n, share_observed, max_games=60):
  """Symmetric integer totals with about ``share_observed`` of the pairs observed."""
  upper = np.triu(rng.integers(1, max_games + 1, size=(n, n)), k=1)
  upper = upper * np.triu(rng.random((n, n)) < share_observed, k=1)
  return upper + upper.T


def _oracle_component_sizes(totals):
  """Oracle: connected components of the comparison graph with networkx, largest first."""
  totals = np.asarray(totals)
  n = totals.shape[0]
  g = nx.Graph()
  g.add_nodes_from(range(n))
  g.add_edges_from((a, b) for a in range(n) for b in range(a + 1, n) if totals[a, b] > 0)
  return tuple(sorted((len(c) for c in nx.connected_components(g)), reverse=True))


def _load_with_tournament(path):
  comparisons, _ = data.load_comparisons(path)
  totals = data.pair_counts(comparisons).totals
  P = data.win_rate_tournament(comparisons)
  return comparisons, totals, P


def test_complete_round_robin_raises_no_warning():
  comparisons, totals, P = _load_with_tournament(VICUNA)
  scores = ops.ste_scores(P).top_cycle
  diag = evidence_diagnostics(
    totals, agents=comparisons.agents, top_cycle=exact.top_cycle(P), tc_scores=scores
  )
  n = comparisons.num_agents
  assert diag.warnings == ()
  assert diag.connected and diag.num_components == 1 and diag.component_sizes == (n,)
  assert diag.num_agents == n and diag.num_pairs == n * (n - 1) // 2
  assert diag.pairs_observed == diag.num_pairs and diag.share_pairs_observed == 1.0
  t = np.asarray(totals)
  assert diag.comparisons_per_observed_pair[0] == t[~np.eye(n, dtype=bool)].min()
  assert diag.games_per_agent == (float(t.sum(axis=1).min()), float(np.median(t.sum(axis=1))))
  assert diag.agents_below_min_games == ()


def test_sparse_all_inclusive_core_is_flagged(rng):
  n = 59
  totals = _random_totals(rng, n, share_observed=0.5)
  diag = evidence_diagnostics(totals, top_cycle=np.ones(n, dtype=bool))
  unobserved = 100 * (1 - diag.share_pairs_observed)
  assert 0.4 < diag.share_pairs_observed < 0.6
  assert diag.connected
  assert len(diag.warnings) == 1
  assert diag.warnings[0] == (
    f"hard Top Cycle holds 59 of 59 agents with {unobserved:.0f}% of pairs unobserved: missing "
    "pairs make everyone reach everyone; use --estimator model (a pairwise model pools evidence "
    "across pairs) or compare more pairs"
  )


def test_core_warning_needs_missing_pairs_a_majority_and_four_agents(rng):
  full = _random_totals(rng, 8, share_observed=1.0)
  assert evidence_diagnostics(full, top_cycle=np.ones(8, dtype=bool)).warnings == ()
  sparse = _random_totals(rng, 8, share_observed=0.6)
  sparse[0, 1:] = sparse[1:, 0] = 15  # keep the graph connected
  core = np.zeros(8, dtype=bool)
  core[:4] = True  # exactly half: not flagged
  half = evidence_diagnostics(sparse, top_cycle=core).warnings
  assert not any("Top Cycle holds" in w for w in half)
  core[4] = True
  majority = evidence_diagnostics(sparse, top_cycle=core).warnings
  assert any("holds 5 of 8 agents" in w for w in majority)
  tiny = np.array([[0, 20, 0], [20, 0, 20], [0, 20, 0]])
  assert evidence_diagnostics(tiny, top_cycle=np.ones(3, dtype=bool)).warnings == ()


def test_plateau_at_the_top_is_flagged(rng):
  n = 10
  totals = _random_totals(rng, n, share_observed=1.0, max_games=30) + 20 * ~np.eye(n, dtype=bool)
  scores = np.array([0.9995, 0.9999, 1.0, 0.9992, 0.9998, 0.9997, 0.4, 0.3, 0.2, 0.1])
  diag = evidence_diagnostics(totals, tc_scores=jnp.asarray(scores))
  assert diag.warnings == (
    "6 of 10 agents share the Top-Cycle score 1.000: the scores do not separate them; use "
    "--estimator model (a pairwise model pools evidence across pairs) or compare more pairs",
  )
  scores[:5] -= np.arange(5) * 0.01  # the leaders separate
  assert evidence_diagnostics(totals, tc_scores=scores).warnings == ()


def test_plateau_below_a_clear_winner_is_not_flagged(rng):
  totals = _random_totals(rng, 8, share_observed=1.0) + 20 * ~np.eye(8, dtype=bool)
  scores = np.array([0.98, 0.1410, 0.1411, 0.1412, 0.1409, 0.1413, 0.1410, 0.1411])
  assert evidence_diagnostics(totals, tc_scores=scores).warnings == ()


@pytest.mark.parametrize("sizes", [(5, 3, 1), (4, 4), (6, 1, 1, 1)])
def test_disconnected_graph_matches_networkx(rng, sizes):
  n = sum(sizes)
  totals = np.zeros((n, n))
  start = 0
  for size in sizes:
    block = _random_totals(rng, size, share_observed=1.0, max_games=30) + 10
    totals[start : start + size, start : start + size] = block * ~np.eye(size, dtype=bool)
    start += size
  perm = rng.permutation(n)
  totals = totals[np.ix_(perm, perm)]
  diag = evidence_diagnostics(totals, min_games=0)
  expected = tuple(sorted(sizes, reverse=True))
  assert diag.component_sizes == _oracle_component_sizes(totals) == expected
  assert diag.num_components == len(sizes) and not diag.connected
  listed = ", ".join(str(s) for s in sorted(sizes, reverse=True))
  assert diag.warnings == (
    f"the comparison graph has {len(sizes)} components (sizes {listed}): agents in different "
    "components were never linked by any chain of comparisons, so their order is not identified "
    "by the data; compare agents across components to link them",
  )


def test_components_of_a_random_sparse_graph_match_networkx(rng):
  totals = _random_totals(rng, 40, share_observed=0.04)
  diag = evidence_diagnostics(totals, min_games=0)
  oracle = _oracle_component_sizes(totals)
  assert diag.component_sizes == oracle and diag.num_components == len(oracle)
  if len(oracle) > 8:
    assert f"and {len(oracle) - 8} more" in diag.warnings[0]


def _thin_totals(rng, n, thin):
  """Every agent plays >= 95 games except those in ``thin``, which play 4 (one pair each)."""
  totals = _random_totals(rng, n, share_observed=1.0, max_games=5) + 5 * ~np.eye(n, dtype=bool)
  for a in thin:
    totals[a, :] = 0
    totals[:, a] = 0
    totals[a, (a + 1) % n] = totals[(a + 1) % n, a] = 4
  return totals


def test_thin_evidence(rng):
  totals = _thin_totals(rng, 20, [3, 7, 11])  # 15% of the agents
  names = [f"agent{i}" for i in range(20)]
  diag = evidence_diagnostics(totals, agents=names)
  assert diag.agents_below_min_games == ("agent3", "agent7", "agent11")
  assert diag.connected and diag.games_per_agent[0] == 4.0
  assert diag.warnings == (
    "3 of 20 agents have fewer than 10 comparisons; their scores rest on few games; collect more "
    "comparisons for them",
  )
  assert evidence_diagnostics(totals, min_games=4).warnings == ()
  assert evidence_diagnostics(totals, min_games=4.5).agents_below_min_games == ("3", "7", "11")


def test_thin_evidence_fires_above_ten_percent(rng):
  exactly_ten = evidence_diagnostics(_thin_totals(rng, 20, [3, 7]))
  assert exactly_ten.agents_below_min_games == ("3", "7") and exactly_ten.warnings == ()
  above_ten = evidence_diagnostics(_thin_totals(rng, 18, [3, 7]))
  assert above_ten.warnings[0].startswith("2 of 18 agents have fewer than 10 comparisons")


def test_to_dict_is_json_ready(rng):
  totals = np.zeros((5, 5), dtype=np.float32)  # nothing observed: NaN pair statistics
  diag = evidence_diagnostics(jnp.asarray(totals), top_cycle=np.ones(5, dtype=bool))
  assert all(math.isnan(x) for x in diag.comparisons_per_observed_pair)
  d = diag.to_dict()
  assert json.loads(json.dumps(d, allow_nan=False)) == d
  assert d["comparisons_per_observed_pair"] == {"min": None, "median": None, "max": None}
  assert set(d) == {f.name for f in dataclasses.fields(EvidenceDiagnostics)}
  assert len(d["warnings"]) == 3  # uninformative core, 5 components, all thin
  dense = evidence_diagnostics(_random_totals(rng, 6, share_observed=1.0)).to_dict()
  assert json.loads(json.dumps(dense, allow_nan=False)) == dense
  assert isinstance(dense["share_pairs_observed"], float) and isinstance(dense["connected"], bool)


def test_result_is_frozen(rng):
  diag = evidence_diagnostics(_random_totals(rng, 4, share_observed=1.0))
  with pytest.raises(AttributeError):
    diag.connected = False


def test_single_agent():
  diag = evidence_diagnostics(np.zeros((1, 1)), min_games=0)
  assert diag.num_pairs == 0 and diag.pairs_observed == 0 and math.isnan(diag.share_pairs_observed)
  assert diag.connected and diag.component_sizes == (1,) and diag.warnings == ()
  assert json.dumps(diag.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
  "totals,kwargs,name",
  [
    (np.zeros((3, 4)), {}, "totals"),
    (np.zeros(3), {}, "totals"),
    (np.zeros((0, 0)), {}, "totals"),
    (np.array([[0, 1], [2, 0]]), {}, "totals"),
    (np.array([[0, -1], [-1, 0]]), {}, "totals"),
    (np.array([[0, np.nan], [np.nan, 0]]), {}, "totals"),
    (np.array([["a", "b"], ["b", "a"]]), {}, "totals"),
    (np.ones((3, 3)), {"agents": ["x", "y"]}, "agents"),
    (np.ones((3, 3)), {"agents": "xyz"}, "agents"),
    (np.ones((3, 3)), {"top_cycle": np.ones(4, dtype=bool)}, "top_cycle"),
    (np.ones((3, 3)), {"top_cycle": np.array([0.5, 1.0, 0.0])}, "top_cycle"),
    (np.ones((3, 3)), {"tc_scores": np.ones(2)}, "tc_scores"),
    (np.ones((3, 3)), {"tc_scores": np.array([0.1, np.nan, 0.2])}, "tc_scores"),
    (np.ones((3, 3)), {"min_games": -1}, "min_games"),
    (np.ones((3, 3)), {"min_games": float("nan")}, "min_games"),
    (np.ones((3, 3)), {"min_games": "ten"}, "min_games"),
  ],
)
def test_bad_inputs_raise_naming_the_argument(totals, kwargs, name):
  with pytest.raises(ValueError, match=name):
    evidence_diagnostics(totals, **kwargs)


@pytest.mark.skipif(
  not LLMFAO.exists(), reason=f"{LLMFAO} is absent (../shared beside the checkout)"
)
def test_real_llmfao_all_inclusive_core_is_flagged():
  comparisons, totals, _ = _load_with_tournament(LLMFAO)
  n = comparisons.num_agents
  diag = evidence_diagnostics(totals, agents=comparisons.agents, top_cycle=np.ones(n, dtype=bool))
  assert 0.4 < diag.share_pairs_observed < 0.7
  assert diag.warnings[0].startswith(f"hard Top Cycle holds {n} of {n} agents with ")
  assert "use --estimator model" in diag.warnings[0]
