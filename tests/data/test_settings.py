"""LoadSettings: every loading option declared once; the CLI's loading flags derived from it."""

import argparse
import dataclasses

import numpy as np
import pandas as pd
import pytest

from ste_jax import _cli
from ste_jax._options import flag_of, specs
from ste_jax.data import LoadSettings, OutcomePolicy, from_dataframe, load_comparisons

from .loaded import FIX, rejected_lines, skipping

COMMANDS_WITH_DATA = ("score", "explain", "suggest")


def _subparser(command: str) -> argparse.ArgumentParser:
  parser = _cli.build_parser()
  (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
  return sub.choices[command]


def _declared_flags() -> dict[str, tuple[type, str]]:
  """``flag -> (settings class, field)`` for every loading option that has a flag."""
  out = {}
  for cls in (LoadSettings, OutcomePolicy):
    for name, spec in specs(cls).items():
      flag = flag_of(name, spec)
      if flag is not None:
        assert flag not in out, f"{flag} declared twice"
        out[flag] = (cls, name)
  return out


@pytest.mark.parametrize("command", COMMANDS_WITH_DATA)
def test_cli_loading_flags_are_the_fields(command):
  """Each field with a flag has exactly that flag, default and help; every loading flag a field."""
  declared = _declared_flags()
  actions = [a for a in _subparser(command)._actions if a.dest.startswith(_cli.LOADING_DEST)]
  seen = {}
  for action in actions:
    flag, *negations = action.option_strings  # a boolean is a --flag / --no-flag switch
    assert negations in ([], ["--no-" + flag[2:]]), action.option_strings
    seen[flag] = action
  assert set(seen) == set(declared)
  for flag, (cls, name) in declared.items():
    action = seen[flag]
    field = {f.name: f for f in dataclasses.fields(cls)}[name]
    assert action.dest == _cli.LOADING_DEST + name
    assert action.default == field.default
    assert action.help.startswith(specs(cls)[name].help)
    if specs(cls)[name].choices is not None:  # the CLI may accept more (--format: file formats)
      assert set(specs(cls)[name].choices) <= set(action.choices)
  # The loading options that stay off the command line are exactly the declared ones.
  off = {n for cls in (LoadSettings,) for n, s in specs(cls).items() if s.flag is None}
  assert off == {
    "a",
    "b",
    "winner",
    "weight",
    "agents",
    "contexts",
    "strict",
    "policy",
  }
  # What data_options adds besides the fields: the file.
  others = {s for a in _subparser(command)._actions for s in a.option_strings or [a.dest]} - set(
    declared
  )
  assert "file" in others and "--skip-bad-rows" in declared


def test_the_flags_users_know_are_kept():
  """The flag names of the loading options (README 'Input formats') map to these fields."""
  declared = _declared_flags()
  assert {flag: name for flag, (_, name) in declared.items()} == {
    "--format": "schema",
    "--file-format": "format",
    "--agent-column": "agent",
    "--task-column": "task",
    "--score-column": "score",
    "--context-column": "context",
    "--baseline": "baseline",
    "--metric": "metric",
    "--ties": "tie",
    "--both-bad": "both_bad",
    "--fractional": "fractional",
    "--strong-weight": "strong_weight",
    "--order-swap": "order_swap",
    "--skip-bad-rows": "skip_bad_rows",
    "--max-agents": "max_agents",
  }
  defaults = {
    flag: _subparser("score").get_default(_cli.LOADING_DEST + n)
    for flag, (_, n) in declared.items()
  }
  assert defaults == {
    "--format": "auto",
    "--file-format": "auto",
    "--agent-column": "agent",
    "--task-column": "task",
    "--score-column": "score",
    "--context-column": None,
    "--baseline": None,
    "--metric": None,
    "--ties": "half",
    "--both-bad": "half",
    "--fractional": "soft",
    "--strong-weight": 3.0,
    "--order-swap": "auto",
    "--skip-bad-rows": False,
    "--max-agents": 10_000,
  }


def test_parsed_flags_give_the_settings():
  parser = _cli.build_parser()
  args = parser.parse_args(["score", "f.csv"])
  assert _cli.load_settings(args) == LoadSettings()
  args = parser.parse_args(
    ["score", "f.csv", "--format", "tasks", "--ties", "drop", "--strong-weight", "2"]
    + ["--context-column", "env", "--agent-column", "who", "--metric", "acc"]
  )
  assert _cli.load_settings(args) == LoadSettings(
    schema="tasks",
    context="env",
    agent="who",
    metric="acc",
    policy=OutcomePolicy(tie="drop", strong_weight=2.0),
  )


def test_explain_keeps_its_own_agent_and_context():
  """explain's AGENT and --context are not the loader's --agent-column / --context-column."""
  args = _cli.build_parser().parse_args(["explain", "f.csv", "gpt", "--context", "math"])
  (agent,) = [a.dest for a in _subparser("explain")._actions if a.metavar == "AGENT"]
  assert (getattr(args, agent), args.context) == ("gpt", "math")
  assert _cli.load_settings(args) == LoadSettings()


def test_bad_flag_values_are_refused_by_argparse(capsys):
  parser = _cli.build_parser()
  for argv in (["--ties", "never"], ["--strong-weight", "0"], ["--format", "excel"]):
    with pytest.raises(SystemExit) as e:
      parser.parse_args(["score", "f.csv", *argv])
    assert e.value.code == 2
    assert argv[0] in capsys.readouterr().err


def test_settings_object_and_keywords_agree(tmp_path):
  """``load_comparisons(path, settings)`` = keywords; rows read = used + rejected (by hand)."""
  path = tmp_path / "t.csv"
  path.write_text("a,b,winner,w\nx,y,a,1\ny,x,tie,2\nx,x,a,1\ny,z,b,-1\nz,x,b,1\n")
  settings = LoadSettings(weight="w", policy={"tie": "drop"})
  c1, r1 = skipping(load_comparisons)(path, settings)
  c2, r2 = skipping(load_comparisons)(path, weight="w", policy=OutcomePolicy(tie="drop"))
  for c, r in ((c1, r1), (c2, r2)):
    assert c.agents == ("x", "y", "z")
    assert r.rows_read == 5 and r.rows_used == 2 and r.rows_read == r.rows_used + len(r.rejected)
    assert rejected_lines(r) == [
      (3, "dropped by policy"),
      (4, "self-comparison"),
      (5, "invalid weight"),
    ]
    np.testing.assert_array_equal(np.asarray(c.weight), [1.0, 1.0])
  # Overrides replace the fields of the settings given.
  _, r3 = skipping(load_comparisons)(path, settings, policy=None)
  assert r3.rows_used == 3 and rejected_lines(r3)[0][0] == 4


def test_overrides_are_checked_against_the_fields(tmp_path):
  df = pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["a"]})
  with pytest.raises(TypeError, match="unexpected keyword argument 'contxt'.*'context'"):
    from_dataframe(df, contxt="c")
  with pytest.raises(TypeError, match="load_comparisons.*'delimiter'"):
    load_comparisons(FIX / "arena_battles.csv", delimiter=";")
  with pytest.raises(TypeError, match="settings must be a LoadSettings"):
    from_dataframe(df, {"schema": "simple"})
  with pytest.raises(ValueError, match="unknown schema 'excel'"):
    LoadSettings(schema="excel")
  with pytest.raises(ValueError, match="policy tie='never'"):
    LoadSettings(policy={"tie": "never"})
  with pytest.raises(ValueError, match="unknown policy fields"):
    from_dataframe(df, policy={"ties": "drop"})
  with pytest.raises(ValueError, match="format='csv' applies to files only"):
    from_dataframe(df, format="csv")


def test_settings_are_frozen_and_normalize_the_policy():
  s = LoadSettings(policy={"both_bad": "drop"})
  assert s.policy == OutcomePolicy(both_bad="drop")
  assert LoadSettings().policy == OutcomePolicy()
  with pytest.raises(dataclasses.FrozenInstanceError):
    s.schema = "arena"  # type: ignore[misc]
