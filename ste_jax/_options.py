"""Options declared once: a settings field carries its default, type, check and help text.

A settings class is a frozen dataclass whose fields are made with :func:`option`. The same
declaration gives the Python default, the validation (:func:`check_options`, called from the
class's ``__post_init__``), the command-line flag (:func:`add_arguments`) and the value read back
from parsed arguments (:func:`from_arguments`), so a name, a default or a help text is written in
one place only.

Example:
  >>> import argparse, dataclasses
  >>> @dataclasses.dataclass(frozen=True)
  ... class Demo:
  ...   replicas: int = option(200, help="bootstrap replicas", check=at_least(0))
  ...   def __post_init__(self):
  ...     check_options(self)
  >>> parser = argparse.ArgumentParser()
  >>> add_arguments(parser, Demo)
  >>> from_arguments(Demo, parser.parse_args(["--replicas", "5"]))
  Demo(replicas=5)
  >>> Demo(replicas=-1)
  Traceback (most recent call last):
  ...
  ste_jax._errors.OptionError: replicas must be >= 0, got -1.

On the command line a check runs on the parsed value too, so a value outside the range is an
argparse error naming the flag (exit status 2), declared by the same ``check``.
"""

import argparse
from collections.abc import Callable, Sequence
import dataclasses
import math
from typing import Any

import numpy as np

from ste_jax._errors import OptionError

Check = Callable[[Any, str], None]

_KEY = "ste_jax.option"


@dataclasses.dataclass(frozen=True)
class OptionSpec:
  """How one settings field appears on the command line and how its value is checked.

  Attributes:
    help: the help text (one phrase; the default is appended by :func:`add_arguments`).
    flag: the long flag (default ``--field-name``); ``None`` keeps the field off the CLI.
    aliases: further flags accepted for the same field.
    parse: converts the flag's text to the value (default: the type of the default value).
    choices: the allowed values, checked in Python and on the command line.
    check: ``check(value, name)`` raises :class:`~ste_jax.OptionError` naming the field; the CLI
      runs it on the parsed flag too.
    metavar: the flag's placeholder in the help.
    switch: a ``--flag`` / ``--no-flag`` pair whatever the default (e.g. a tri-state ``None``).
  """

  help: str
  flag: str | None = ""
  aliases: tuple[str, ...] = ()
  parse: Callable[[str], Any] | None = None
  choices: tuple[Any, ...] | None = None
  check: Check | None = None
  metavar: str | None = None
  switch: bool = False


def option(
  default: Any,
  *,
  help: str,
  flag: str | None = "",
  aliases: Sequence[str] = (),
  parse: Callable[[str], Any] | None = None,
  choices: Sequence[Any] | None = None,
  check: Check | None = None,
  metavar: str | None = None,
  switch: bool = False,
) -> Any:
  """A dataclass field declared with everything the Python API and the CLI need.

  Args:
    default: the default value (immutable).
    help: the help text.
    flag: the long flag; ``""`` derives ``--field-name``; ``None`` keeps the option off the CLI.
    aliases: further flags for the same option.
    parse: text-to-value conversion for the CLI (default: the default's type; booleans are
      ``--flag`` / ``--no-flag`` switches).
    choices: the allowed values.
    check: ``check(value, name)`` raising :class:`~ste_jax.OptionError` (also run on the parsed
      command-line value, so a range is declared once).
    metavar: the flag's placeholder.
    switch: make the flag a ``--flag`` / ``--no-flag`` pair even when the default is not a bool.

  Returns:
    A :func:`dataclasses.field` carrying an :class:`OptionSpec` in its metadata.
  """
  spec = OptionSpec(
    help=help,
    flag=flag,
    aliases=tuple(aliases),
    parse=parse,
    choices=None if choices is None else tuple(choices),
    check=check,
    metavar=metavar,
    switch=switch,
  )
  return dataclasses.field(default=default, metadata={_KEY: spec})


def specs(cls: type) -> dict[str, OptionSpec]:
  """``field name -> OptionSpec`` of a settings class, in declaration order."""
  return {f.name: f.metadata[_KEY] for f in dataclasses.fields(cls) if _KEY in f.metadata}


def flag_of(name: str, spec: OptionSpec) -> str | None:
  """The long flag of a field (``None`` when the field has no flag)."""
  if spec.flag is None:
    return None
  return spec.flag or "--" + name.replace("_", "-")


def check_options(settings: Any) -> None:
  """Checks every option of a settings instance (its choices and its ``check``).

  Raises:
    OptionError: naming the field, the allowed values and the value given.
  """
  for name, spec in specs(type(settings)).items():
    value = getattr(settings, name)
    if spec.choices is not None and value not in spec.choices:
      raise OptionError(f"{name} must be one of {spec.choices}, got {value!r}.")
    if spec.check is not None:
      spec.check(value, name)


def _fields(cls: type) -> dict[str, dataclasses.Field]:
  return {f.name: f for f in dataclasses.fields(cls)}


def add_arguments(
  parser: argparse.ArgumentParser | argparse._ArgumentGroup,
  cls: type,
  *,
  exclude: Sequence[str] = (),
  defaults: dict[str, Any] | None = None,
) -> None:
  """Adds one flag per option of ``cls`` to an argparse parser (or argument group).

  Args:
    parser: where the flags go.
    cls: the settings class.
    exclude: field names left off this parser.
    defaults: per-parser defaults that replace the declared ones (e.g. fewer replicas for a demo).
  """
  fields = _fields(cls)
  for name, spec in specs(cls).items():
    flag = flag_of(name, spec)
    if flag is None or name in exclude:
      continue
    default = (defaults or {}).get(name, fields[name].default)
    shown = "none" if default is None else default
    text = f"{spec.help} (default {shown})"
    if spec.switch or (isinstance(fields[name].default, bool) and spec.parse is None):
      parser.add_argument(
        flag,
        *spec.aliases,
        dest=name,
        action=argparse.BooleanOptionalAction,
        default=default,
        help=text,
      )
      continue
    parse = spec.parse or (type(default) if default is not None else str)
    parser.add_argument(
      flag,
      *spec.aliases,
      dest=name,
      type=_checked(parse, spec.check, flag),
      default=default,
      choices=spec.choices if spec.parse is None else None,
      metavar=spec.metavar,
      help=text,
    )


def _checked(parse: Callable[[str], Any], check: Check | None, flag: str) -> Callable[[str], Any]:
  """``parse``, then the option's ``check``: a refusal is an argparse error naming ``flag``."""
  if check is None:
    return parse

  def parse_and_check(text: str) -> Any:
    value = parse(text)
    try:
      check(value, flag)
    except ValueError as e:
      raise argparse.ArgumentTypeError(str(e).removeprefix(flag + " ").rstrip(".")) from None
    return value

  parse_and_check.__name__ = getattr(parse, "__name__", "value")  # argparse's "invalid <name>"
  return parse_and_check


def parser_of(cls: type, name: str) -> Callable[[str], Any]:
  """The command-line parser of field ``name`` of ``cls``, its check included.

  For a command that offers the option under a flag and help of its own (``suggest --replicas``)
  but keeps the declared type and range.
  """
  spec = specs(cls)[name]
  default = _fields(cls)[name].default
  parse = spec.parse or (type(default) if default is not None else str)
  return _checked(parse, spec.check, flag_of(name, spec) or "--" + name.replace("_", "-"))


def from_arguments(cls: type, namespace: argparse.Namespace, **overrides: Any) -> Any:
  """The settings instance of parsed arguments (fields without a flag keep their defaults)."""
  values = {name: getattr(namespace, name) for name in specs(cls) if hasattr(namespace, name)}
  values.update(overrides)
  return cls(**values)


# Reusable checks: each raises OptionError naming the field.

# The largest temperature accepted: the largest finite float32, the dtype scores are computed in by
# default. Temperatures divide differences of values in [0, 1] (``exp(-x / t)``, ``(P - 1/2) / t``),
# so from about ``1 / eps`` (float32: ``8e6``) on every operator has reached its ``t -> inf`` limit
# to rounding; a larger finite value would only overflow the dtype (``inf * 0``: NaN).
TEMPERATURE_MAX = float(np.finfo(np.float32).max)


def at_least(low: float, *, integer: bool = True) -> Check:
  """A check that the value is a number (an integer by default) ``>= low``."""

  def check(value: Any, name: str) -> None:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value >= low:
      raise OptionError(f"{name} must be >= {low}, got {value!r}.")

  return check


def in_range(low: int, high: int) -> Check:
  """A check that the value is an integer in ``[low, high]`` (a hard limit on work: replicas)."""

  def check(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
      raise OptionError(f"{name} must be an integer in [{low}, {high:,}], got {value!r}.")

  return check


def temperature(value: Any, name: str) -> None:
  """Checks a temperature: a number in ``(0, TEMPERATURE_MAX]`` (``None`` passes: unset).

  Example:
    >>> temperature(1e300, "tau")
    Traceback (most recent call last):
    ...
    ste_jax._errors.OptionError: tau must be in (0, 3.4e+38] (finite float32), got 1e+300.
  """
  if value is None:
    return
  message = f"{name} must be in (0, {TEMPERATURE_MAX:.2g}] (finite float32), got {value!r}."
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    raise OptionError(message)
  if not 0 < value <= TEMPERATURE_MAX:  # NaN fails too
    raise OptionError(message)


def positive_finite(value: Any, name: str) -> None:
  """Checks a number in ``(0, TEMPERATURE_MAX]``: finite in float32 (``None`` passes: unset).

  A larger value would be ``inf`` in the float32 computations it enters.
  """
  if value is None:
    return
  message = f"{name} must be a finite number in (0, {TEMPERATURE_MAX:.2g}], got {value!r}."
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    raise OptionError(message)
  if not (math.isfinite(value) and 0 < value <= TEMPERATURE_MAX):
    raise OptionError(message)


def open_interval(low: float, high: float) -> Check:
  """A check that the value is a number in ``(low, high)``."""

  def check(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value < high:
      raise OptionError(f"{name} must be in ({low}, {high}), got {value!r}.")

  return check


# Reusable command-line parsers: each raises argparse.ArgumentTypeError with the text given.


def parse_positive_or_none(text: str) -> float | None:
  """A finite number ``> 0`` from the command line, or ``None`` for ``none`` / ``off``."""
  if text.strip().lower() in ("none", "off"):
    return None
  return parse_positive(text)


def parse_positive(text: str) -> float:
  """A finite number ``> 0`` from the command line."""
  try:
    value = float(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
  if not (value > 0 and math.isfinite(value)):
    raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
  return value


def parse_nonnegative_int(text: str) -> int:
  """An integer ``>= 0`` from the command line."""
  try:
    value = int(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
  if value < 0:
    raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
  return value


def parse_open_interval(low: float, high: float) -> Callable[[str], float]:
  """A parser of a number in ``(low, high)`` from the command line."""

  def parse(text: str) -> float:
    try:
      value = float(text)
    except ValueError:
      raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not low < value < high:
      raise argparse.ArgumentTypeError(f"must be in ({low:g}, {high:g}), got {text!r}")
    return value

  return parse
