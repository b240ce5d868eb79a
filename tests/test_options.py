"""Options declared once: each settings field with a flag is on the CLI, with its name and default.

A settings class is any class in ``ste_jax`` whose dataclass fields are made with
:func:`ste_jax._options.option`. The test fails when a field has no flag on the command line, a
flag has no field (outside the few that only steer the command itself), or a name or a default
differs between the field and its flag.
"""

import argparse
import dataclasses
import importlib
import pkgutil

import numpy as np
import pytest

import ste_jax
from ste_jax import _options
from ste_jax._cli import LOADING_DEST, build_parser

# Subcommands whose options come from settings classes.
COMMANDS = ("score", "explain", "demo", "suggest")

# Flags that steer the command itself (its input, output and progress), not a computation.
CLI_ONLY = {
  "help": "argparse's --help",
  "context": "explain: one context only",
  "seed": "the CLI's seed; the Python API takes a PRNG key",
  "no_progress": "progress bar",
  "by_context": "score: one table per context (leaderboard(by_context=...))",
  "plausible": "suggest: which tournaments give the plausible cores (an estimator in Python)",
  "output": "output format",
  "top": "rows printed",
  "head_to_head": "crosstable rows printed",
  "plot": "figure path",
  "no_plot": "demo: no figure",
  "details": "text output: the full conventions and explanations",
  "columns": "text output: which columns",
}


def _settings_classes() -> list[type]:
  found = {}
  for info in pkgutil.walk_packages(ste_jax.__path__, "ste_jax."):
    if "_native" in info.name or info.name.endswith("__main__"):
      continue
    module = importlib.import_module(info.name)
    for obj in vars(module).values():
      if isinstance(obj, type) and dataclasses.is_dataclass(obj) and _options.specs(obj):
        found[f"{obj.__module__}.{obj.__qualname__}"] = obj
  return [found[k] for k in sorted(found)]


SETTINGS = _settings_classes()


def _subcommand_actions() -> dict[str, dict[str, argparse.Action]]:
  """``command -> {flag -> action}`` (positionals and --help left out)."""
  parser = build_parser()
  sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
  return {
    name: {
      flag: a
      for a in sub.choices[name]._actions
      if a.option_strings and a.dest != "help"
      for flag in a.option_strings
    }
    for name in COMMANDS
  }


ACTIONS = _subcommand_actions()


def test_the_settings_classes_are_found():
  names = {cls.__name__ for cls in SETTINGS}
  assert {"LeaderboardSettings", "ResamplingSettings", "ModelEstimator", "EstimatorChoice"} <= names


@pytest.mark.parametrize("cls", SETTINGS, ids=lambda c: c.__name__)
def test_every_flagged_field_is_a_flag_with_its_name_and_default(cls):
  defaults = {f.name: f.default for f in dataclasses.fields(cls)}
  flagged = {n: s for n, s in _options.specs(cls).items() if _options.flag_of(n, s) is not None}
  if not flagged:
    pytest.skip(f"{cls.__name__} has no command-line options")
  for name, spec in flagged.items():
    flag = _options.flag_of(name, spec)
    hits = [(cmd, acts[flag]) for cmd, acts in ACTIONS.items() if flag in acts]
    if not hits and cls.__module__.startswith("ste_jax.training"):
      continue  # training settings: no command trains
    assert hits, f"{cls.__name__}.{name} has no flag {flag} in {COMMANDS}"
    for cmd, action in hits:
      # The loading flags write LOADING_DEST + name (explain's positional AGENT is ``agent``).
      assert action.dest in (name, LOADING_DEST + name), (cmd, flag, action.dest, name)
      assert set(spec.aliases) <= set(action.option_strings), (cmd, name)
      assert action.default == defaults[name], (cmd, name, action.default, defaults[name])


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_is_a_field_or_steers_the_command(command):
  fields = {name for cls in SETTINGS for name in _options.specs(cls)}
  stray = sorted(
    flag
    for flag, action in ACTIONS[command].items()
    if action.dest.removeprefix(LOADING_DEST) not in fields and action.dest not in CLI_ONLY
  )
  assert not stray, f"{command}: flags without a settings field: {stray}"


def test_no_two_arguments_of_a_command_share_a_destination():
  """Two arguments writing one argparse destination would overwrite each other."""
  parser = build_parser()
  sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
  for name in COMMANDS:
    dests = [a.dest for a in sub.choices[name]._actions if a.dest != "help"]
    assert len(dests) == len(set(dests)), (name, sorted(d for d in dests if dests.count(d) > 1))


def test_a_flag_parses_back_to_the_field():
  from ste_jax._cli import _estimator, _settings

  args = build_parser().parse_args(
    [
      "score",
      "x.csv",
      "--estimator",
      "model",
      "--record-tolerance",
      "none",
      "--replicas",
      "7",
      "--confidence",
      "0.9",
      "--no-soft-intervals",
      "--solutions",
      "ml,bipartisan",
    ]
  )
  settings = _settings(args)
  assert (settings.num_replicas, settings.confidence, settings.soft_intervals) == (7, 0.9, False)
  assert settings.solutions == ("ml", "bipartisan")
  est = _estimator(args)
  assert type(est).__name__ == "ModelEstimator" and est.record_tolerance is None
  default = _settings(build_parser().parse_args(["score", "x.csv"]))
  assert default == type(settings)()


def test_a_declared_check_refuses_the_flag_too(capsys):
  """A range declared once (the field's ``check``) is enforced on the parsed flag, naming it."""

  @dataclasses.dataclass(frozen=True)
  class Work:
    replicas: int = _options.option(
      5, help="replicas", check=_options.in_range(0, 10), parse=_options.parse_nonnegative_int
    )
    tau: float = _options.option(0.1, help="temperature", check=_options.temperature)

    def __post_init__(self):
      _options.check_options(self)

  parser = argparse.ArgumentParser(prog="p")
  _options.add_arguments(parser, Work)
  assert _options.from_arguments(Work, parser.parse_args(["--replicas", "10"])) == Work(10)
  for argv, text in [
    (["--replicas", "11"], "argument --replicas: must be an integer in [0, 10], got 11"),
    (["--tau", "1e39"], "argument --tau: must be in (0, 3.4e+38] (finite float32), got 1e+39"),
  ]:
    with pytest.raises(SystemExit) as caught:
      parser.parse_args(argv)
    assert caught.value.code == 2 and text in capsys.readouterr().err
  with pytest.raises(ste_jax.OptionError, match="replicas must be an integer in"):
    Work(replicas=11)
  parse = _options.parser_of(Work, "replicas")
  assert parse("3") == 3
  with pytest.raises(argparse.ArgumentTypeError, match=r"\[0, 10\], got 12"):
    parse("12")
  assert _options.TEMPERATURE_MAX == float(np.finfo(np.float32).max)
