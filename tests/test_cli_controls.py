"""``ste-jax score --control / --covariates``: the controlled model tournament on the CLI."""

import json

import numpy as np
import pytest

from tests.test_cli import run


def _arena_file(path, *, m=3000, seed=0, bad_line=None):
  """Arena battles with conv_metadata; agent e is weak but verbose and length pays."""
  rng = np.random.default_rng(seed)
  names = np.array(["a", "b", "c", "d", "e"])
  strength = np.array([0.6, 0.3, 0.0, -0.2, 0.0])
  i = rng.integers(0, 5, m)
  j = (i + rng.integers(1, 5, m)) % 5
  mean_len = np.where(np.arange(5) == 4, 900.0, 300.0)
  la = rng.gamma(4.0, mean_len[i] / 4.0).astype(int)
  lb = rng.gamma(4.0, mean_len[j] / 4.0).astype(int)
  r = (la - lb) / (la + lb + 1.0)
  h = strength[i] - strength[j] + (r - r.mean()) / r.std()
  won = rng.random(m) < 1 / (1 + np.exp(-h))
  with open(path, "w") as f:
    for k in range(m):
      meta = {"sum_assistant_a_tokens": int(la[k]), "sum_assistant_b_tokens": int(lb[k])}
      if k == bad_line:
        meta = {"sum_assistant_a_tokens": int(la[k])}
      record = {
        "model_a": names[i[k]],
        "model_b": names[j[k]],
        "winner": "model_a" if won[k] else "model_b",
        "conv_metadata": meta,
        "judge": int(k % 2),
      }
      f.write(json.dumps(record) + "\n")
  return path


def test_score_with_length_control_reports_the_verdict_changes_and_beta(tmp_path):
  path = _arena_file(tmp_path / "battles.jsonl")
  code, out, err = run(
    "score", path, "--control", "length", "--estimator", "model", "--bootstrap", "0"
  )
  assert code == 0, err
  out = " ".join(out.split())  # the report wraps its lines
  assert "controls: the table is the tournament at zero length difference" in out
  assert "Top Cycle leaves e, enters a" in out
  assert "length +" in out and "95% Wald intervals" in out


def test_bad_covariates_are_one_line_errors_with_lines(tmp_path):
  path = _arena_file(tmp_path / "battles.jsonl", m=200, bad_line=6)
  code, _, err = run("score", path, "--control", "length", "--estimator", "model")
  assert code != 0
  assert "1 of 200 battles lack a numeric sum_assistant_a|b_tokens" in err
  assert "(first lines 7)" in err
  code, _, err = run("score", path, "--covariates", "judge,nope", "--estimator", "model")
  assert code != 0 and "no covariate column 'nope'" in err
  code, out, err = run(
    "score", path, "--covariates", "judge", "--estimator", "model", "--bootstrap", "0"
  )
  assert code == 0, err
  assert "judge " in " ".join(out.split())  # its coefficient and interval
  code, _, err = run("score", path, "--control", "length", "--estimator", "posterior")
  assert code != 0 and "use --estimator model" in err


@pytest.mark.slow
def test_score_influence_with_length_control_lists_a_table(tmp_path):
  """``--control length --influence 3``: the controlled model's influence table (theta with
  beta), no refusal line."""
  path = _arena_file(tmp_path / "battles.jsonl", m=400)
  flags = ("--control", "length", "--estimator", "model", "--bootstrap", "0", "--tau", "0.1")
  code, out, err = run("score", path, *flags, "--influence", "3", "--output", "json")
  assert code == 0, err
  assert "influence: not computed" not in out
  listed = json.loads(out)["tables"][0]["influence"]
  agents = list(dict.fromkeys(r["agent"] for r in listed))
  assert len(agents) == 3
  for agent in agents:
    for score in ("top_cycle", "uncovered"):
      got = [abs(r["influence"]) for r in listed if r["agent"] == agent and r["score"] == score]
      assert 1 <= len(got) <= 3 and got == sorted(got, reverse=True)
      assert np.all(np.isfinite(got)) and max(got) > 0
