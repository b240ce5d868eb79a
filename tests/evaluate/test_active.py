"""Active comparisons (issue 13): suggest_pairs, its look-ahead, its draw, the simulator and the
``suggest`` CLI.

Compilation dominates here, so the default tests share a few compiled functions: every
``suggest_pairs`` call uses ``N`` agents and ``K`` pairs (one compilation per target; the edge
level is traced, so ``confidence`` and ``correction`` do not recompile), and every batched call
goes through the module-level ``_BATCHED`` with ``RUNS`` keys. The multi-policy simulation, the
Uncovered-Set certification run and the CLI on sparse data (the model's replicas) are ``slow``.
"""

import csv
import functools
import io
import itertools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ste_jax
from ste_jax._cli import main
from ste_jax.evaluate import orientation_certificates, suggest_pairs
from ste_jax.evaluate._active import _LOOKAHEAD, edge_level, simulate_certification

N, K, RUNS = 6, 3, 2000
NAMES = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
NO_PAIRS = jnp.zeros((N, N), bool)

_memberships = jax.jit(
  orientation_certificates
)  # (beats, level): compiled for (N, N) and the flip stack
ORDERED = list(itertools.permutations(range(N), 2))  # the flips of _flip_codes, in this order


@jax.jit
def _batched(keys, wins, exclude, require, confidence):
  """``suggest_pairs`` over a batch of keys (jit of vmap; masks and confidence traced)."""
  return jax.vmap(
    lambda key: suggest_pairs(
      key, wins, k=K, confidence=confidence, exclude=exclude, require=require
    )
  )(keys)


def _keys(seed, num=RUNS):
  return jax.random.split(jax.random.key(seed), num)


def _codes(m, target):
  is_in, possible = (
    (m.top_cycle_in, m.top_cycle_possible)
    if target == "top_cycle"
    else (m.uncovered_in, m.uncovered_possible)
  )
  return np.where(np.asarray(is_in), 1, np.where(np.asarray(possible), 0, -1))


def _flip_codes(beats, level, target):
  """Verdict codes (``1`` in / ``0`` undetermined / ``-1`` out) of ``beats`` and of every flip.

  Returns ``(before, after)``: ``before`` ``(N,)`` for ``beats``; ``after[p]`` ``(N,)`` once the
  ordered pair ``ORDERED[p] = (i, j)`` is made sure ``i -> j``. One fixed-shape stack, so one
  compilation for the whole module.
  """
  stack = np.stack([beats] * (1 + len(ORDERED)))
  for f, (i, j) in zip(stack[1:], ORDERED):
    f[i, j], f[j, i] = 1.0, 0.0
  codes = _codes(_memberships(jnp.asarray(stack), jnp.asarray(level, jnp.float32)), target)
  return codes[0], codes[1:]


def _random_beats(rng, n, sure_share):
  """Orientation probabilities with a share of sure pairs (either way), the rest open."""
  beats = np.zeros((n, n), np.float32)
  for a, b in itertools.combinations(range(n), 2):
    p = rng.choice([0.99, 0.01]) if rng.random() < sure_share else rng.uniform(0.2, 0.8)
    beats[a, b], beats[b, a] = p, 1 - p
  return beats


def _wins(P, games, seed=0):
  rng = np.random.default_rng(seed)
  n = P.shape[0]
  wins = np.zeros((n, n), np.float32)
  for a, b in itertools.combinations(range(n), 2):
    w = rng.binomial(games, P[a, b])
    wins[a, b], wins[b, a] = w, games - w
  return wins


def _cycle_on_top(n=N, margin=0.3):
  """0 > 1 > 2 > 0 on top of a transitive rest, every edge ``1/2 + margin``."""
  P = np.full((n, n), 0.5, np.float32)
  for a, b in itertools.combinations(range(n), 2):
    p = 0.5 + margin if (a, b) != (0, 2) else 0.5 - margin
    P[a, b], P[b, a] = p, 1 - p
  return P


def test_edge_level_is_bonferroni_by_default():
  assert edge_level(0.95, 30) == pytest.approx(1 - 0.05 / 435)
  assert edge_level(0.95, N, "none") == 0.95
  assert float(jax.jit(lambda c: edge_level(c, N))(jnp.float32(0.9))) == pytest.approx(
    1 - 0.1 / 15, abs=1e-6
  )
  with pytest.raises(ValueError, match="correction"):
    edge_level(0.95, N, "holm")


@functools.partial(jax.jit, static_argnums=0)
def _lookahead(target, sure, possible, und, i, j):
  """``(gain, decided[p])`` of the look-ahead for the orientations ``i[p] -> j[p]``."""
  lookahead_fn, decided_fn = _LOOKAHEAD[target]
  look = lookahead_fn(sure, possible, und)
  return look.gain, jax.vmap(decided_fn, in_axes=(None, 0, 0))(look.parts, i, j)


@pytest.mark.parametrize("target", ["top_cycle", "uncovered"])
def test_lookahead_matches_recomputing_the_verdicts(target):
  """For every open pair and orientation, the agents decided = those whose verdict changes when
  recomputed."""
  level = 0.9
  rng = np.random.default_rng(1)
  i, j = (np.asarray(v) for v in zip(*ORDERED))
  checked = 0
  for trial in range(8):
    beats = _random_beats(rng, N, sure_share=0.4 + 0.05 * trial)
    sure = beats >= level
    before, after = _flip_codes(beats, level, target)
    gain, decided = _lookahead(
      target,
      jnp.asarray(sure),
      jnp.asarray(~sure.T & ~np.eye(N, dtype=bool)),
      jnp.asarray(before == 0),
      jnp.asarray(i),
      jnp.asarray(j),
    )
    is_open = ~sure[i, j] & ~sure[j, i]
    expected = after != before
    np.testing.assert_array_equal(
      np.asarray(decided)[is_open], expected[is_open], err_msg=f"{target} {trial}"
    )
    np.testing.assert_array_equal(np.asarray(gain)[i, j][is_open], expected.sum(axis=1)[is_open])
    checked += int(is_open.sum())
  assert checked > 60


def _certify_by_suggestions(target, *, margin, seed, max_rounds):
  """Fixed-seed simulation: ``K`` suggested pairs a round, one game each from the true
  tournament."""
  P = _cycle_on_top(margin=margin)
  rng = np.random.default_rng(seed)
  wins = _wins(P, 1, seed=seed)
  key = jax.random.key(seed)
  for spent in range(max_rounds):
    key, sub = jax.random.split(key)
    s = suggest_pairs(sub, wins, k=K, target=target)  # confidence 0.95 for the whole core
    if bool(s.certified):
      return s, spent
    for a, b in np.asarray(s.pairs):
      won = rng.random() < P[a, b]
      wins[a, b] += won
      wins[b, a] += 1 - won
  return s, max_rounds


@pytest.mark.parametrize("target", ["top_cycle", pytest.param("uncovered", marks=pytest.mark.slow)])
def test_policy_certifies_the_true_core_in_a_fixed_seed_simulation(target):
  s, rounds = _certify_by_suggestions(target, margin=0.35, seed=3, max_rounds=150)
  assert bool(s.certified), f"not certified within {rounds * K} comparisons"
  assert float(s.edge_level) == pytest.approx(1 - 0.05 / 15)
  assert s.verdicts().tolist() == ["in"] * 3 + ["out"] * (N - 3)
  assert rounds < 120


def test_never_proposes_excluded_pairs_and_always_required_ones():
  wins = jnp.asarray(_wins(_cycle_on_top(), 2))
  excluded, required = [(0, 3), (1, 3), (4, 5)], [(2, 5)]
  exclude = NO_PAIRS.at[tuple(zip(*excluded))].set(True)
  require = NO_PAIRS.at[tuple(zip(*required))].set(True)
  s = _batched(_keys(0), wins, exclude, require, jnp.float32(0.95))
  pairs = np.asarray(s.pairs)
  assert not {tuple(p) for p in pairs.reshape(-1, 2).tolist()} & set(excluded)
  for a, b in required:
    assert np.all(np.any((pairs[..., 0] == a) & (pairs[..., 1] == b), axis=1))
  inclusion = np.asarray(s.inclusion)
  assert np.all(inclusion[:, [0, 1, 4], [3, 3, 5]] == 0) and np.all(inclusion[:, 2, 5] == 1)
  assert np.all(pairs[..., 0] < pairs[..., 1])  # distinct pairs with a < b in every draw
  assert all(len({tuple(p) for p in draw}) == K for draw in pairs.tolist())


def test_selection_probabilities_sum_to_k_and_match_frequencies():
  wins = jnp.asarray(_wins(_cycle_on_top(), 3, seed=2))
  s = _batched(_keys(1), wins, NO_PAIRS, NO_PAIRS, jnp.float32(0.95))
  inclusion = np.asarray(s.inclusion[0])
  np.testing.assert_allclose(inclusion.sum() / 2, K, rtol=1e-5)
  np.testing.assert_array_equal(
    np.asarray(s.inclusion), np.broadcast_to(inclusion, s.inclusion.shape)
  )
  counts = np.zeros((N, N))
  np.add.at(counts, (np.asarray(s.pairs[..., 0]), np.asarray(s.pairs[..., 1])), 1.0)
  rows, cols = np.triu_indices(N, 1)
  pi = inclusion[rows, cols]
  assert np.sum((pi > 0.05) & (pi < 0.95)) >= 3  # a real randomized draw, not a fixed choice
  sd = np.sqrt(pi * (1 - pi) / RUNS)
  assert np.all(np.abs(counts[rows, cols] / RUNS - pi) <= 4.5 * sd + 1e-6)
  # the reported probability of each drawn pair is its inclusion probability
  np.testing.assert_allclose(
    np.asarray(s.probability), inclusion[np.asarray(s.pairs[..., 0]), np.asarray(s.pairs[..., 1])]
  )


@pytest.mark.parametrize("target", ["top_cycle", "uncovered"])
def test_once_certified_no_suggested_pair_can_change_a_verdict(target):
  wins = _wins(_cycle_on_top(), 200)
  s = suggest_pairs(jax.random.key(0), wins, k=K, target=target)
  assert bool(s.certified)
  assert np.all(np.asarray(s.score) == 0) and np.all(np.asarray(s.scores) == 0)
  assert not np.any(np.asarray(s.decides))
  level = float(s.edge_level)
  beats = np.asarray(s.beats)
  before, after = _flip_codes(beats, level, target)
  checked = 0
  for a, b in np.asarray(s.pairs):
    for x, y in ((a, b), (b, a)):
      if beats[y, x] >= level:
        continue  # sure the other way already: more comparisons would first have to overturn it
      np.testing.assert_array_equal(after[ORDERED.index((x, y))], before)
      checked += 1
  assert checked >= K


def test_determinism_and_jit_of_vmap_equals_a_loop():
  """One compiled batch (jit of vmap, traced confidence) = eager per-key calls, and a key gives one
  answer."""
  wins = jnp.asarray(_wins(_cycle_on_top(), 2, seed=4))
  raw = jax.random.key_data(_keys(2))
  batched = _batched(jax.random.wrap_key_data(raw), wins, NO_PAIRS, NO_PAIRS, jnp.float32(0.95))
  for i in (0, 1, RUNS - 1):
    one = suggest_pairs(jax.random.wrap_key_data(raw[i]), wins, k=K)
    again = suggest_pairs(jax.random.wrap_key_data(raw[i]), wins, k=K)
    row = jax.tree.map(lambda v: v[i], batched)
    for x, y, z in zip(*(jax.tree.leaves(t) for t in (one, row, again))):
      np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)
      np.testing.assert_array_equal(np.asarray(x), np.asarray(z))


def test_correction_none_is_the_per_pair_level():
  wins = _wins(_cycle_on_top(), 4, seed=1)
  bonf = suggest_pairs(jax.random.key(0), wins, k=K, confidence=0.9)
  none = suggest_pairs(jax.random.key(0), wins, k=K, confidence=0.9, correction="none")
  assert float(bonf.edge_level) == pytest.approx(1 - 0.1 / 15, abs=1e-6)
  assert float(none.edge_level) == pytest.approx(0.9)
  np.testing.assert_array_equal(np.asarray(bonf.beats), np.asarray(none.beats))
  for s in (bonf, none):
    before, _ = _flip_codes(np.asarray(s.beats), float(s.edge_level), "top_cycle")
    np.testing.assert_array_equal(np.asarray(s.is_in), before == 1)
    np.testing.assert_array_equal(np.asarray(s.is_out), before == -1)
  assert np.sum(np.asarray(none.is_in | none.is_out)) >= np.sum(
    np.asarray(bonf.is_in | bonf.is_out)
  )
  with pytest.raises(ValueError, match="correction"):
    suggest_pairs(jax.random.key(0), wins, k=K, correction="holm")


def test_comparisons_input_agent_names_and_validation():
  c = ste_jax.Comparisons.from_arrays(
    [0, 1, 2, 0, 4, 5], [1, 2, 0, 3, 5, 3], [1.0, 1.0, 1.0, 0.5, 1.0, 0.0], agents=NAMES
  )
  s = suggest_pairs(jax.random.key(0), c, k=K, exclude=[("alpha", "beta")])
  assert (0, 1) not in {tuple(p) for p in np.asarray(s.pairs).tolist()}
  assert s.verdicts().shape == (N,)
  for kwargs, match in (
    (dict(k=16), "k must be"),
    (dict(k=K, target="smith"), "target"),
    (dict(k=K, exclude=[(0, 1)], require=[(1, 0)]), "both excluded and required"),
    (dict(k=K, exclude=[("alpha", "nobody")]), "unknown agent"),
    (dict(k=K, confidence=1.2), "confidence"),
  ):
    with pytest.raises(ValueError, match=match):
      suggest_pairs(jax.random.key(0), c, **kwargs)


@pytest.fixture
def comparisons_file(tmp_path):
  P = _cycle_on_top()
  rng = np.random.default_rng(0)
  lines = ["a,b,winner"]
  for a, b in itertools.combinations(range(N), 2):
    for _ in range(3):
      lines.append(f"{NAMES[a]},{NAMES[b]},{'a' if rng.random() < P[a, b] else 'b'}")
  path = tmp_path / "games.csv"
  path.write_text("\n".join(lines) + "\n")
  return path


def test_cli_suggest_round_trips(comparisons_file, capsys):
  path = comparisons_file
  assert main(["suggest", str(path), "--k", str(K), "--output", "csv"]) == 0
  rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
  assert len(rows) == K
  assert all(
    r["agent_a"] in NAMES and r["agent_b"] in NAMES and r["agent_a"] != r["agent_b"] for r in rows
  )
  assert all(0 < float(r["probability"]) <= 1 and r["reason"] for r in rows)
  assert all(float(r["edge_level"]) == pytest.approx(1 - 0.05 / 15, abs=1e-6) for r in rows)
  assert (
    main(["suggest", str(path), "--k", str(K), "--output", "json", "--target", "uncovered"]) == 0
  )
  report = json.loads(capsys.readouterr().out)
  assert report["target"] == "uncovered" and isinstance(report["certified"], bool)
  assert report["correction"] == "bonferroni" and report["edge_level"] == pytest.approx(
    1 - 0.05 / 15, abs=1e-6
  )
  assert sorted(report["verdicts"]) == sorted(NAMES)
  assert set(report["verdicts"].values()) <= {"in", "out", "undetermined"}
  assert len(report["pairs"]) == K and all(set(p["decides"]) <= set(NAMES) for p in report["pairs"])
  assert main(["suggest", str(path), "--k", str(K)]) == 0
  text = capsys.readouterr().out
  assert "Top Cycle verdicts at confidence 0.95 (whole core)" in text and "reason" in text
  assert (
    "1 - 0.05/15 pairs (Bonferroni" in text
    and "`ste-jax score` verdicts use the per-pair level" in text
  )
  assert (
    main(["suggest", str(path), "--k", str(K), "--correction", "none", "--output", "json"]) == 0
  )
  report = json.loads(capsys.readouterr().out)
  assert report["correction"] == "none" and report["edge_level"] == pytest.approx(0.95)


@pytest.mark.parametrize(
  "argv",
  [
    ["--k", "0"],
    ["--k", "99"],
    ["--confidence", "2"],
    ["--target", "smith"],
    ["--output", "xml"],
    ["--correction", "holm"],
  ],
)
def test_cli_suggest_bad_arguments_are_one_line(comparisons_file, capsys, argv):
  assert main(["suggest", str(comparisons_file), *argv]) != 0
  err = capsys.readouterr().err.strip()
  assert err and len(err.splitlines()) == 1


def test_plausible_cores_set_the_relevance():
  """With no comparison no single pair decides a verdict, so each score is the relevance: the share
  of the given cores that hold either agent of the pair."""
  cores = np.array(
    [[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], bool
  )
  s = suggest_pairs(jax.random.key(0), jnp.zeros((N, N)), k=K, plausible_cores=cores)
  either = (cores[:, :, None] | cores[:, None, :]).mean(axis=0)
  off = ~np.eye(N, dtype=bool)
  np.testing.assert_allclose(np.asarray(s.scores)[off], either[off], rtol=1e-6)
  assert {tuple(sorted(p)) for p in np.asarray(s.pairs).tolist()} <= {
    (a, b) for a in range(N) for b in range(a + 1, N) if either[a, b] > 0
  }
  with pytest.raises(ValueError, match="plausible_cores"):
    suggest_pairs(jax.random.key(0), jnp.zeros((N, N)), k=K, plausible_cores=cores[:, :3])
  with pytest.raises(ValueError, match="plausible_cores"):
    suggest_pairs(
      jax.random.key(0), jnp.zeros((N, N)), k=K, plausible_cores=cores.astype(np.float32)
    )


@pytest.mark.slow  # the model's fit and parametric bootstrap compile for this data
def test_cli_suggest_draws_plausible_cores_from_the_model_on_sparse_data(tmp_path, capsys):
  """Pairs never compared: by default the relevance comes from the model's bootstrap replicas (the
  cores behind `score`'s P(TC)); --plausible posterior keeps the posterior draws."""
  from ste_jax.data import load_comparisons
  from ste_jax.evaluate import (
    LeaderboardSettings,
    core_table,
    replica_core_candidates,
    replica_cores,
  )

  rng = np.random.default_rng(1)
  lines = ["a,b,winner"]
  for a, b in itertools.combinations(range(N), 2):
    if (a, b) in ((0, 5), (1, 4)):
      continue  # never compared
    for _ in range(2):
      lines.append(f"{NAMES[a]},{NAMES[b]},{'a' if rng.random() < 0.5 + 0.08 * (b - a) else 'b'}")
  path = tmp_path / "sparse.csv"
  path.write_text("\n".join(lines) + "\n")
  assert main(["suggest", str(path), "--k", str(K), "--replicas", "20", "--output", "json"]) == 0
  out = capsys.readouterr()
  report = json.loads(out.out)
  assert report["plausible"] == "model" and "parametric bootstrap replicas of the model" in out.err
  c, _ = load_comparisons(path)
  settings = LeaderboardSettings(num_replicas=20, soft_intervals=False)
  # the CLI's --seed 0: score's table and its replicas each start from jax.random.key(0)
  cores = replica_cores(jax.random.key(0), c, "model", settings)  # the replicas behind P(TC)
  table = core_table(jax.random.key(0), c, "model", settings)
  np.testing.assert_allclose(cores.mean(axis=0), table.columns["p_tc"])
  assert (
    table.top_cycle_candidates.members.tolist()
    == replica_core_candidates(cores, 0.95).members.tolist()
  )
  either = (cores[:, :, None] | cores[:, None, :]).mean(axis=0)
  for p in report["pairs"]:
    a, b = list(c.agents).index(p["agent_a"]), list(c.agents).index(p["agent_b"])
    assert p["score"] >= either[a, b] - 1e-6
  assert (
    main(["suggest", str(path), "--k", str(K), "--plausible", "posterior", "--output", "json"]) == 0
  )
  assert json.loads(capsys.readouterr().out)["plausible"] == "posterior"


@pytest.mark.slow
def test_simulation_certifies_true_cores_vmapped():
  """The compiled simulator: many seeds of the three policies on a cycle-on-top tournament."""
  P = jnp.asarray(_cycle_on_top(8, margin=0.3))
  raw = jax.random.key_data(_keys(0, 8))
  results = {}
  for policy in ("active", "uniform", "arena"):
    run = jax.jit(
      jax.vmap(
        lambda key, policy=policy: simulate_certification(
          key, P, policy=policy, k=6, max_rounds=400
        )
      )
    )
    results[policy] = run(jax.random.wrap_key_data(raw))
  for r in results.values():
    assert np.all(np.asarray(r.certified))
    assert np.mean(np.asarray(r.correct)) >= 7 / 8
  assert np.median(np.asarray(results["active"].comparisons)) < np.median(
    np.asarray(results["uniform"].comparisons)
  )
