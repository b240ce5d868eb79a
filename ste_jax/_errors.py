"""The library's error types: one for bad data, one for bad options.

Both subclass :class:`ValueError`, so code that catches ``ValueError`` keeps working. The command
line maps them to a one-line message and exit status 1 in one place (``ste_jax._cli.main``); any
other exception there is a bug and is reported as one.
"""


class InputError(ValueError):
  """Data that cannot be used: a file, its rows or cells, or an array's values.

  Raised by the loaders, :func:`~ste_jax.validate_tournament` and the eager entry points that
  check their inputs. The message names the file or argument, the reasons, counts and the first
  line numbers.

  Example:
    >>> import ste_jax as ste
    >>> issubclass(ste.InputError, ValueError)
    True
  """


class OptionError(ValueError):
  """An option value outside its usable range (a temperature, a replica count, a seed, a path).

  The message names the option and the range it accepts.

  Example:
    >>> import ste_jax as ste
    >>> issubclass(ste.OptionError, ValueError)
    True
  """
