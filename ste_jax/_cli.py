"""The ``ste-jax`` command line: ``score``, ``explain``, ``suggest``, ``demo`` and ``planted``.

All file and terminal I/O of the package lives here; the computations are in :mod:`ste_jax.evaluate`
(rendered by :mod:`ste_jax._render`) and the figures in :mod:`ste_jax.plotting`.

Exit status (the ``--help`` epilog): 0 success; 1 a user mistake in the input or an option (a
missing or damaged file, an unknown format or agent, bad rows, empty data, an option outside its
usable range: :class:`~ste_jax.InputError`, :class:`~ste_jax.OptionError`; also an
:class:`OSError` of the file system, e.g. a full disk), reported as one line
``ste-jax COMMAND: error: MESSAGE`` on stderr; 2 a command line argparse cannot parse (an unknown
flag, a value of the wrong type or out of range), one line too; 3 any other exception, which is a
bug in ste-jax: its traceback, then one line saying so and where to report it; 130 an interrupt
(Ctrl-C). :func:`main` maps them in one place.

Compiled programs are kept in JAX's persistent compilation cache (:func:`use_compilation_cache`),
so a second run on data of the same shapes skips XLA compilation.
"""

import argparse
import csv
import dataclasses
import difflib
import importlib
import importlib.resources
import importlib.util
import json
import lzma
import os
import shutil
import sys
import tempfile
import time
import traceback
import warnings
import zlib

from ste_jax._errors import InputError, OptionError
from ste_jax._options import parse_nonnegative_int

PROG = "ste-jax"
DEMO_DATASET = "vicuna80_qlora_human"
DEMO_PLOT = "ste_jax_demo.png"
PLANTED_OUT = "planted_core"  # ste-jax planted --out default, relative to the working directory
OUTPUTS = ("table", "csv", "json", "markdown")
STDIN = "-"  # the FILE that reads standard input
STDIN_NAME = "<stdin>"  # how messages and reports name it
SEED_MAX = 2**32 - 1  # jax.random.key keeps the low 32 bits of a seed (without x64)
REPORT_BUG = (  # the last line after an unexpected exception's traceback
  "this is a bug in ste-jax, not a mistake in your input: please report it to the ste_jax "
  "maintainers (the project's issue tracker) with the command line and the traceback above"
)
EXIT_STATUS = (
  "exit status: 0 success; 1 a mistake in the input or an option (one line on stderr); 2 a "
  "command line that cannot be parsed; 3 a bug in ste-jax (a traceback, please report it)"
)


COMPILATION_CACHE_ENV = "STE_JAX_COMPILATION_CACHE"  # a folder, or "off"


def use_compilation_cache() -> str | None:
  """Turns on JAX's persistent compilation cache for this process; returns its folder or ``None``.

  The folder is ``$STE_JAX_COMPILATION_CACHE``, else ``$XDG_CACHE_HOME/ste_jax/xla`` (default
  ``~/.cache/ste_jax/xla``); ``STE_JAX_COMPILATION_CACHE=off`` turns it off, and a cache the
  user configured for JAX itself (``JAX_COMPILATION_CACHE_DIR``) is left as it is. Every compiled
  program is stored, however quick its compilation. A folder that cannot be written only costs
  the saving: JAX warns and compiles as usual.
  """
  import jax

  setting = os.environ.get(COMPILATION_CACHE_ENV, "")
  if setting.lower() in ("off", "0", "no", "false"):
    return None
  if jax.config.jax_compilation_cache_dir:
    return jax.config.jax_compilation_cache_dir
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
  folder = setting or os.path.join(base, "ste_jax", "xla")
  jax.config.update("jax_compilation_cache_dir", folder)
  jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
  return folder


class _Parser(argparse.ArgumentParser):
  """An argument parser whose errors are one line (no usage dump) with exit status 2."""

  def error(self, message):
    self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# --------------------------------------------------------------------------------------------
# Argument types


def _seed(text: str) -> int:
  try:
    seed = int(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
  if not 0 <= seed <= SEED_MAX:
    raise argparse.ArgumentTypeError(f"must be an integer in [0, {SEED_MAX}], got {text!r}")
  return seed


def _columns(text: str) -> tuple[str, ...]:
  from ste_jax._render import parse_columns

  return parse_columns(text)


def build_parser() -> argparse.ArgumentParser:
  """The ``ste-jax`` argument parser."""
  parser = _Parser(
    prog=PROG,
    description="Soft Tournament Equilibrium: set-valued cores (Top Cycle, Uncovered Set) of "
    "agents compared in pairs, with bootstrap uncertainty and witnesses.",
    epilog=EXIT_STATUS,
  )
  sub = parser.add_subparsers(
    dest="command", required=True, parser_class=_Parser, metavar="COMMAND"
  )

  def data_options(p):
    from ste_jax._options import add_arguments
    from ste_jax.data import LoadSettings, OutcomePolicy

    p.add_argument(
      "file",
      metavar="FILE",
      help="comparisons file (.csv, .tsv, .jsonl, .json, .parquet, "
      ".pgn; .gz/.bz2/.xz ok), an lm-evaluation-harness output folder, or - for standard input "
      "(with --file-format, or --format, csv, tsv, jsonl, json, parquet or pgn)",
    )
    add_arguments(_LoadingFlags(p), LoadSettings)  # --format, --agent-column, ..., --metric
    add_arguments(_LoadingFlags(p), OutcomePolicy)  # --ties, --both-bad, ..., --order-swap

  def estimator_options(p):
    from ste_jax._options import add_arguments
    from ste_jax.evaluate import EstimatorChoice, ModelEstimator

    add_arguments(p, EstimatorChoice)
    add_arguments(p, ModelEstimator)

  def score_options(p, *, exclude=()):
    from ste_jax._options import add_arguments
    from ste_jax.evaluate import LeaderboardSettings

    estimator_options(p)
    add_arguments(p, LeaderboardSettings, exclude=exclude)
    p.add_argument(
      "--seed", type=_seed, default=0, help="seed of the model fit and bootstrap (default 0)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

  def text_options(p, *, columns=True):  # the text report's --details and --columns
    p.add_argument(
      "--details",
      action="store_true",
      help="text: add the full conventions, what each label means and the head-to-head records "
      "(always in --output json)",
    )
    if columns:
      p.add_argument(
        "--columns",
        type=_columns,
        default=(),
        metavar="NAMES",
        help="text: further columns, 'all' or comma-separated from p_uc, uc_score, hard_tc, "
        "hard_uc, elo",
      )

  score = sub.add_parser(
    "score",
    help="per-agent core table: STE scores with bootstrap CIs, hard cores, baselines",
    description="First the answer about the top set (certified, or not settled with the agents "
    "most often in the replicas' Top Cycles, and the direct records behind it), then one row "
    "per agent: tier, STE Top-Cycle and "
    "Uncovered-Set scores, the share of "
    "bootstrap replicas whose hard core holds the agent with an in/out/undetermined verdict, "
    "hard membership, win rate, Bradley-Terry, Elo and number of comparisons; evidence "
    "diagnostics and warnings.",
  )
  data_options(score)
  score_options(score)
  _control_options(score)
  score.add_argument("--by-context", action="store_true", help="one table per context (category)")
  score.add_argument(
    "--output", choices=OUTPUTS, default="table", help="output format (default table)"
  )
  score.add_argument(
    "--top",
    type=parse_nonnegative_int,
    default=None,
    metavar="N",
    help="table/markdown: print only the first N rows of each table",
  )
  score.add_argument(
    "--head-to-head",
    type=parse_nonnegative_int,
    default=10,
    metavar="K",
    help="table/markdown/json: the direct records (wins-losses) among the first K rows of each "
    "table, as a crosstable (default 10; 0: none)",
  )
  text_options(score)
  score.add_argument(
    "--plot",
    metavar="PNG",
    default=None,
    help="also write the report figure of each table's first 40 rows (tournament graph, P "
    "heatmap with never-compared pairs dotted, score bars with P(TC)); with --by-context one file "
    "per context, suffixed with its name",
  )

  explain = sub.add_parser(
    "explain",
    help="witnesses: majority-win paths from an agent, or who covers it",
    description="Why AGENT is (or is not) in the hard Top Cycle and Uncovered Set of the "
    "win-rate tournament: chains of majority wins reaching every other agent (or the "
    "agents it cannot reach), and its coverers (an agent that beats it and everyone it "
    "beats) or, if none, why each agent that beats it fails to cover it.",
  )
  data_options(explain)
  explain.add_argument("explained", metavar="AGENT", help="agent name")
  explain.add_argument("--context", default=None, help="explain within one context only")
  explain.add_argument(
    "--output", choices=("text", "json"), default="text", help="output format (default text)"
  )
  text_options(explain, columns=False)
  estimator_options(explain)
  explain.add_argument("--seed", type=_seed, default=0, help="seed of the model fit (default 0)")

  demo = sub.add_parser(
    "demo",
    help="the core table with bootstrap CIs and a figure on bundled real data "
    "(Vicuna-80 human votes)",
  )
  score_options(demo, exclude=("solutions",))
  demo.add_argument(
    "--plot", metavar="PNG", default=DEMO_PLOT, help=f"figure path (default ./{DEMO_PLOT})"
  )
  demo.add_argument("--no-plot", action="store_true", help="do not write the figure")
  text_options(demo)

  planted = sub.add_parser(
    "planted",
    help="the planted-core benchmark (paper Tables 2-5): CSVs, report.md and figures in --out",
  )
  planted.add_argument("--quick", action="store_true", help="a small slice of every table")
  planted.add_argument(
    "--out", default=PLANTED_OUT, help=f"output folder (default ./{PLANTED_OUT})"
  )
  planted.add_argument("--float32", action="store_true", help="run in float32 instead of float64")
  planted.add_argument("--no-progress", action="store_true", help="no progress bar")
  _suggest_parser(sub, data_options)
  return parser


def _suggest_parser(sub, data_options) -> None:
  """The ``suggest`` subcommand (active comparisons, issue 13)."""
  p = sub.add_parser(
    "suggest",
    help="the pairs to compare next so that the core's verdicts certify soonest",
    description="The K pairs whose comparison can most change the certified in/out verdicts "
    "(Top Cycle or Uncovered Set), with the reason in words, each pair's selection probability, "
    "the current verdicts and whether they are already certified.",
  )
  data_options(p)
  from ste_jax._options import add_arguments, parser_of
  from ste_jax.evaluate import ResamplingSettings, SuggestSettings

  add_arguments(p, SuggestSettings)  # --k, --target, --confidence, --correction
  p.add_argument(
    "--plausible",
    choices=("auto", "posterior", "model"),
    default="auto",
    help="tournaments behind the relevance of a pair (how often it touches a plausible core): "
    "posterior (drawn from each pair's Beta posterior; a pair never compared is a coin flip), "
    "model "
    "(the hard cores of the model estimator's parametric bootstrap replicas, as `score` computes "
    "P(TC)) or auto (default: model when some pair was never compared, else posterior)",
  )
  p.add_argument(
    "--replicas",
    dest="num_replicas",
    type=parser_of(ResamplingSettings, "num_replicas"),
    default=ResamplingSettings().num_replicas,
    help="bootstrap replicas behind --plausible model "
    f"(default {ResamplingSettings().num_replicas})",
  )
  p.add_argument(
    "--output",
    choices=("table", "csv", "json"),
    default="table",
    help="output format (default table)",
  )
  p.add_argument(
    "--seed",
    type=_seed,
    default=0,
    help="seed of the randomized draw of pairs and of the model's fit and replicas (default 0)",
  )


# --------------------------------------------------------------------------------------------
# Loading


def _first_line(e: BaseException) -> str:
  text = str(e).strip()
  return text.splitlines()[0] if text else type(e).__name__


LOADING_DEST = "load_"  # the loading flags' dests: clear of a command's own (explain's AGENT)


def _file_formats() -> tuple[str, ...]:
  """The loaders' file formats (``LoadSettings.format`` without ``auto``)."""
  from ste_jax.data._tabular import _FORMATS

  return tuple(sorted(set(_FORMATS.values())))


class _FormatAction(argparse.Action):
  """``--format``: a schema (``LoadSettings.schema``) or, as ``--file-format``, a file format.

  Schema and file format names differ, so ``--format csv`` is ``--file-format csv`` (what a FILE
  without a known suffix, ``-`` or a pipe, needs); repeat the flag to give both.
  """

  def __call__(self, parser, namespace, values, option_string=None):
    is_format = values in _file_formats()
    setattr(namespace, LOADING_DEST + "format" if is_format else self.dest, values)


class _LoadingFlags:
  """A parser seen by :func:`~ste_jax._options.add_arguments` with ``LOADING_DEST`` dests."""

  def __init__(self, parser: argparse.ArgumentParser):
    self.parser = parser

  def add_argument(self, *flags: str, dest: str, **kwargs) -> argparse.Action:
    if kwargs.get("metavar") is None and kwargs.get("choices") is None and "type" in kwargs:
      kwargs["metavar"] = dest.upper()  # as the help showed it before the prefix
    if dest == "schema":  # --format: the schema's flag also takes the file format
      formats = _file_formats()
      kwargs["choices"] = (*kwargs["choices"], *formats)
      kwargs["action"] = _FormatAction
      kwargs["help"] = kwargs["help"].removesuffix(" (default auto)") + (
        f"; or, as --file-format, the file format ({', '.join(formats)}) of a FILE without a "
        "known suffix such as - (standard input); repeat --format to give both (default auto)"
      )
      self.parser.set_defaults(**{LOADING_DEST + "format": "auto"})
    return self.parser.add_argument(*flags, dest=LOADING_DEST + dest, **kwargs)


def load_settings(args: argparse.Namespace):
  """The :class:`~ste_jax.data.LoadSettings` of the loading flags (``data_options``)."""
  from ste_jax._options import specs
  from ste_jax.data import LoadSettings, OutcomePolicy

  def values(cls):
    dests = {name: LOADING_DEST + name for name in specs(cls)}
    return {name: getattr(args, d) for name, d in dests.items() if hasattr(args, d)}

  return LoadSettings(
    **values(LoadSettings),
    policy=OutcomePolicy(**values(OutcomePolicy)),
  )


# Exceptions of a file that cannot be read or parsed, raised below the loaders (archives, the
# csv module, parsers): still the user's file, so an InputError naming it.
_UNREADABLE = (OSError, UnicodeDecodeError, EOFError, zlib.error, lzma.LZMAError)
_UNPARSABLE = (csv.Error,)


def _copy_stdin(target) -> None:
  """Standard input copied to the binary file ``target`` in blocks (a pipe cannot be read twice;
  the loader reads the copy in batches, so no more than a block is held); refused when it is a
  terminal."""
  stream = sys.stdin
  if stream is None or stream.isatty():
    raise InputError(
      "FILE - reads the comparisons from standard input, which is a terminal here; pipe them in "
      "(e.g. cat battles.csv | ste-jax score - --format csv)"
    )
  if hasattr(stream, "buffer"):
    shutil.copyfileobj(stream.buffer, target)
  else:  # a text stream without bytes underneath (e.g. io.StringIO in tests)
    for block in iter(lambda: stream.read(1 << 20), ""):
      target.write(block.encode())


def _cli_words(message: str) -> str:
  """A loader's message in the command line's words (``format=`` is ``--file-format`` here)."""
  if "--file-format" in message:  # the loader names the flag itself
    return message
  return message.replace("pass format=", "pass --file-format")


def load(args):
  """``(comparisons, report)`` from the ``data_options`` of ``args``.

  ``FILE -`` reads standard input (its file format from ``--format``). Every problem of the file
  is an :class:`~ste_jax.InputError` naming it, and a missing file format an
  :class:`~ste_jax.OptionError`.
  """
  path = args.file
  if path == STDIN:
    if getattr(args, LOADING_DEST + "format") == "auto":
      raise OptionError(
        "FILE - (standard input) has no suffix to tell its file format: pass --file-format (or "
        f"--format) with one of {', '.join(_file_formats())}"
      )
    with tempfile.TemporaryDirectory(prefix="ste_jax_stdin_") as folder:
      copy = os.path.join(folder, "stdin")
      with open(copy, "wb") as f:
        _copy_stdin(f)
      comparisons, report = _load_file(args, copy, shown=STDIN_NAME)
    report = dataclasses.replace(report, source=STDIN_NAME)
  else:
    if not os.path.exists(path):
      raise InputError(f"file not found: {path}")
    if os.path.isdir(path) and getattr(args, LOADING_DEST + "schema") not in ("auto", "lm-eval"):
      raise InputError(
        f"{path} is a directory, not a comparisons file (only --format lm-eval reads a folder)"
      )
    comparisons, report = _load_file(args, path, shown=path)
  if report.bad_rows:
    print(report.summary(), file=sys.stderr)
  return comparisons, report


def _load_file(args, path: str, *, shown: str):
  """:func:`~ste_jax.data.load_comparisons` of ``path``; errors as InputError naming ``shown``."""
  from ste_jax.data import BadRowsWarning, load_comparisons

  def named(text: str) -> str:
    return _cli_words(text.replace(path, shown))

  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore", BadRowsWarning)  # the command prints the report itself
      return load_comparisons(path, load_settings(args))
  except (InputError, OptionError) as e:
    raise type(e)(named(str(e))) from None
  except _UNREADABLE as e:
    raise InputError(f"cannot read {shown}: {named(_first_line(e))}") from None
  except ValueError as e:
    raise InputError(named(_first_line(e))) from None
  except Exception as e:  # pandas parser errors and the like: still the user's file
    if isinstance(e, _UNPARSABLE) or type(e).__module__.startswith(
      ("pandas", "pyarrow", "csv", "_csv", "json")
    ):
      raise InputError(f"cannot parse {shown}: {named(_first_line(e))}") from None
    raise


def _shown(args) -> str:
  """How messages name the input: its path, or ``<stdin>`` for ``FILE -``."""
  return STDIN_NAME if args.file == STDIN else args.file


def _load_summary(report, path) -> dict:
  return {
    "source": str(path),
    "rows_read": report.rows_read,
    "rows_used": report.rows_used,
    "comparisons": report.num_comparisons,
    "ties": report.ties,
    "rejected": len(report.rejected),
    "rejected_by_reason": report.reasons(),
    "schema": report.schema,
    "mappings": list(report.mappings),
    "merged_names": {name: list(raws) for name, raws in report.merged},
    "position_bias": None
    if report.position_bias is None
    else {
      "first_wins": report.position_bias.first_wins,
      "second_wins": report.position_bias.second_wins,
      "ties": report.position_bias.ties,
      "first": report.position_bias.first,
    },
  }


def _settings(args):
  """The :class:`~ste_jax.evaluate.LeaderboardSettings` of the parsed flags."""
  from ste_jax._options import from_arguments
  from ste_jax.evaluate import LeaderboardSettings

  return from_arguments(LeaderboardSettings, args)


def _estimator(args):
  """The :class:`~ste_jax.evaluate.TournamentEstimator` of ``--estimator`` and its settings."""
  from ste_jax._options import from_arguments
  from ste_jax.evaluate import EstimatorChoice, ModelEstimator

  model = from_arguments(ModelEstimator, args)
  return from_arguments(EstimatorChoice, args).build(model)


def _control_options(p):
  """``--control`` and ``--covariates`` (:class:`~ste_jax.data.ControlSettings`)."""
  from ste_jax._options import add_arguments
  from ste_jax.data._covariates import ControlSettings

  add_arguments(p, ControlSettings)


def _controlled_estimator(args, comparisons, report):
  """The model estimator with the covariates of ``--control`` / ``--covariates``, or ``None``.

  Raises:
    OptionError: controls with ``--by-context``, standard input or another estimator than
      ``model`` / ``auto``.
    InputError: covariate columns that cannot be read (counts and first lines).
  """
  from ste_jax._options import from_arguments
  from ste_jax.data._covariates import ControlSettings, covariate_columns
  from ste_jax.evaluate import ModelEstimator, normalize_differences

  controls = from_arguments(ControlSettings, args)
  if not controls.active:
    return None
  flags = "--control/--covariates"
  if args.estimator not in ("auto", "model"):
    raise OptionError(f"{flags} control the model estimator: use --estimator model (or auto)")
  if getattr(args, "by_context", False):
    raise OptionError(f"{flags} fit one controlled model over all battles: drop --by-context")
  if args.file == STDIN:
    raise OptionError(f"{flags} read the battles file again: pass a file, not FILE -")
  raw = covariate_columns(args.file, comparisons, [r.line for r in report.rejected], controls)
  covariates = normalize_differences(raw, dtype=comparisons.weight.dtype, source=args.file)
  return from_arguments(ModelEstimator, args, covariates=covariates)


def _tables(comparisons, args, *, by_context, estimator=None):
  import jax
  from tqdm import tqdm

  from ste_jax.evaluate import core_tables

  settings = _settings(args)
  estimator = _estimator(args) if estimator is None else estimator
  _check_resampling(comparisons, estimator, settings, by_context=by_context)
  clusters = _cluster_ids(comparisons, args, settings)
  no_progress = args.no_progress

  total = settings.num_replicas * (comparisons.num_contexts if by_context else 1)
  with tqdm(
    total=total,
    unit="replica",
    desc="bootstrap",
    file=sys.stderr,
    leave=False,
    disable=True if no_progress or not total else None,
  ) as bar:
    return core_tables(
      jax.random.key(args.seed),
      comparisons,
      estimator,
      settings,
      by_context=by_context,
      progress=bar.update,
      clusters=clusters,
    )


def _cluster_ids(comparisons, args, settings):
  """The rows' cluster ids of ``--cluster-column`` (read from FILE), or ``None`` without it.

  Raises:
    OptionError: ``--cluster-column`` with standard input or the bundled demo data.
  """
  from ste_jax.data import load_cluster_ids

  if not settings.cluster_column or not settings.num_replicas:
    return None
  path = getattr(args, "file", None)
  if path is None or path == STDIN:
    raise OptionError("--cluster-column reads its column from FILE again: pass a file")
  return load_cluster_ids(path, settings.cluster_column, comparisons, load_settings(args))


def _check_resampling(comparisons, estimator, settings, *, by_context: bool) -> None:
  """Refuses ``--resampling parametric`` where a table's estimator has no model to redraw from.

  Resolved per table as :func:`~ste_jax.evaluate.core_tables` resolves it (``auto`` per context).

  Raises:
    OptionError: naming ``--resampling`` and the estimator.
  """
  from ste_jax.evaluate import subset_context

  if not settings.num_replicas or settings.resampling != "parametric":
    return
  scopes = [(None, comparisons)]
  if by_context:
    scopes = [(c, subset_context(comparisons, k)) for k, c in enumerate(comparisons.contexts)]
  for context, scope in scopes:
    if not scope.num_comparisons:
      continue
    resolved, reason = estimator.resolve(scope)
    if not resolved.redraws_outcomes:
      where = "" if context is None else f" in context {context!r}"
      chosen = f" ({reason})" if reason.startswith("auto") else ""
      raise OptionError(
        f"--resampling parametric redraws outcomes from a fitted model; the {resolved.name} "
        f"estimator{chosen}{where} has none: use --estimator model or --resampling poisson"
      )


def _check_plot(path: str) -> None:
  """Refuses a ``--plot`` suffix matplotlib cannot write, before any computation.

  Raises:
    OptionError: naming ``--plot`` and the supported suffixes; or without matplotlib.
  """
  if not path.strip():
    raise OptionError("--plot needs a file name (e.g. report.png), got ''")
  try:
    from ste_jax.plotting import check_figure_path

    check_figure_path(path, "--plot")
  except ImportError:
    raise OptionError("--plot needs matplotlib: pip install 'ste_jax[plot]'") from None


def _plot_paths(path: str, tables) -> list[tuple[object, str]]:
  if len(tables) == 1:
    return [(tables[0], path)]
  root, ext = os.path.splitext(path)
  safe = lambda s: "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(s))
  return [(t, f"{root}_{safe(t.context)}{ext or '.png'}") for t in tables]


def _write_plots(tables, path: str, title: str) -> list[str]:
  try:
    import matplotlib  # noqa: F401  (checked here, used inside plotting)

    from ste_jax.plotting import save_report_figure
  except ImportError:
    raise OptionError("--plot needs matplotlib: pip install 'ste_jax[plot]'") from None
  written = []
  for table, p in _plot_paths(path, tables):
    name = title if table.context is None else f"{title} — context {table.context}"
    try:
      written.append(save_report_figure(table, p, title=name))
    except OSError as e:
      raise OptionError(f"--plot: cannot write {p}: {_first_line(e)}") from None
  return written


# --------------------------------------------------------------------------------------------
# Commands


def cmd_score(args) -> int:
  from ste_jax._render import format_csv, format_markdown, format_text, to_json

  if args.plot is not None:
    _check_plot(args.plot)
  comparisons, report = load(args)
  controlled = _controlled_estimator(args, comparisons, report)
  tables = _tables(comparisons, args, by_context=args.by_context, estimator=controlled)
  if args.output == "table":
    loaded = (
      report.summary(max_lines=0)
      if not report.bad_rows
      else f"{_shown(args)}: {len(report.bad_rows)} bad rows skipped"
    )
    print(
      format_text(
        tables,
        top=args.top,
        head_to_head=args.head_to_head,
        details=args.details,
        columns=args.columns,
        load=loaded,
      )
    )
  elif args.output == "markdown":
    print(format_markdown(tables, top=args.top, head_to_head=args.head_to_head))
  elif args.output == "csv":
    for t in tables:
      print("conventions: " + t.conventions(), file=sys.stderr)
      for line in t.answer().lines():
        print(line, file=sys.stderr)
      for w in t.diagnostics.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(format_csv(tables))
  else:
    doc = to_json(tables, load=_load_summary(report, _shown(args)), head_to_head=args.head_to_head)
    if doc["settings"] is not None:  # the inputs the CLI turns into an estimator and a key
      doc["settings"] |= {"estimator": args.estimator, "seed": args.seed}
    print(json.dumps(doc, indent=1, allow_nan=False))
  if args.plot:
    for p in _write_plots(tables, args.plot, os.path.basename(_shown(args))):
      print(f"plot written to {p}", file=sys.stderr)
  return 0


def cmd_explain(args) -> int:
  import jax

  from ste_jax._render import format_witnesses
  from ste_jax.evaluate import LeaderboardSettings, core_table, subset_context
  from ste_jax.evaluate._witnesses import witness_report

  comparisons, _ = load(args)
  if args.context is not None:
    if args.context not in comparisons.contexts:
      raise InputError(
        f"unknown context {args.context!r}; contexts: {', '.join(comparisons.contexts)}"
      )
    comparisons = subset_context(comparisons, comparisons.contexts.index(args.context))
  agents = list(comparisons.agents)
  if args.explained not in agents:
    close = difflib.get_close_matches(args.explained, agents, n=3)
    hint = (
      f"; did you mean {', '.join(map(repr, close))}?"
      if close
      else (f"; agents: {', '.join(agents[:20])}{', ...' if len(agents) > 20 else ''}")
    )
    raise InputError(f"unknown agent {args.explained!r} in {_shown(args)}{hint}")
  table = core_table(
    jax.random.key(args.seed), comparisons, _estimator(args), LeaderboardSettings(num_replicas=0)
  )
  est = table.tournament_estimator
  w = witness_report(
    table.P, table.games_matrix, agents, agents.index(args.explained), ties_connect=est.ties_connect
  )
  robustness = _explained_robustness(
    comparisons, est, agents.index(args.explained), table=table, seed=args.seed
  )
  if args.output == "json":
    out = dict(w, estimator=table.estimator, conventions=table.conventions())
    print(json.dumps(dict(out, robustness=robustness) if robustness else out, indent=1))
  else:
    where = "" if args.context is None else f", context {args.context!r}"
    head = [
      f"witnesses in {_shown(args)}{where}; estimator {est.name} ({table.estimator_reason}); "
    ]
    head[0] += est.edge_legend
    if table.model is not None:
      head.append(f"model: {table.model.describe()}")
    print(format_witnesses(w, details=args.details, header=head))
    if robustness:
      from ste_jax._render import wrap

      print()
      print("\n".join(wrap(robustness["text"])))
  return 0


def _explained_robustness(comparisons, est, i: int, *, table=None, seed: int = 0) -> dict | None:
  """The agent's vote robustness (count-based estimators; the model's hard relation with the
  imputed pairs held fixed): counts, the votes, one text line."""
  import jax

  from ste_jax.evaluate import ModelEstimator
  from ste_jax.evaluate._protocol import FittedTournament
  from ste_jax.evaluate._robustness import counts_relation_of, vote_robustness

  model = isinstance(est, ModelEstimator)
  if counts_relation_of(est) is None and not model:
    return None
  if model:
    plain = est.covariates is None and est.tie_model == "half" and table is not None
    k_fit = jax.random.split(jax.random.key(seed))[0]  # the table's fit (fit_estimator)
    fitted = (
      FittedTournament(edges=jax.numpy.asarray(table.P)) if plain else est.fit(k_fit, comparisons)
    )
    try:
      r = vote_robustness(comparisons, estimator=est, fitted=fitted)
    except InputError:
      return None
  else:
    r = vote_robustness(comparisons, estimator=est)
  names = r.agents
  change = "leave" if r.members[i] else "join"

  def votes(witness):
    return [dict(winner=names[a], loser=names[b], votes=int(k)) for a, b, k in witness]

  def said(count, witness, verb):
    if count < 0:
      return f"no set of {verb}d comparisons makes it {change}"
    shown = ", ".join(f"{names[a]} > {names[b]} x{k}" for a, b, k in witness)
    return f"{verb} {count} comparison{'s' if count != 1 else ''} ({shown})"

  flips, removals = int(r.flips_to_change[i]), int(r.removals_to_change[i])
  text = (
    f"vote robustness: for {names[i]} to {change} the hard Top Cycle, "
    f"{said(flips, r.flips[i], 'reverse')}; or {said(removals, r.removals[i], 'remove')} "
    "(the fewest; 'A > B xk': k of A's wins over B)"
  )
  held = (
    ", on the model's hard relation with its imputed pairs held fixed (the model not refitted; "
    "a compared pair goes to its record once its votes change)"
  )
  uc = _explained_uncovered_robustness(comparisons, est, i, fitted=fitted if model else None)
  if model:
    return dict(
      change=change,
      relation=r.relation,
      flips_to_change=flips,
      flips=votes(r.flips[i]),
      removals_to_change=removals,
      removals=votes(r.removals[i]),
      text=text + held + ". " + uc.pop("text"),
      uncovered=uc,
    )
  return dict(
    change=change,
    flips_to_change=flips,
    flips=votes(r.flips[i]),
    removals_to_change=removals,
    removals=votes(r.removals[i]),
    text=text + ". " + uc.pop("text"),
    uncovered=uc,
  )


def _explained_uncovered_robustness(comparisons, est, i: int, *, fitted=None) -> dict:
  """The agent's Uncovered-Set vote robustness: counts (exact or bounds), the votes, a sentence.

  With ``fitted`` (the model estimator's fit): on its strict relation, imputed pairs held fixed.
  """
  import numpy as np

  from ste_jax.data import pair_counts
  from ste_jax.evaluate._robustness import _estimator_settings, decisive_wins
  from ste_jax.evaluate._uncovered_robustness import held_uncovered_changes, uncovered_changes

  if fitted is None:
    _, _, policy = _estimator_settings(est, None)
    counts = pair_counts(comparisons, tie_policy=policy)
    W = decisive_wins(counts, policy)
  else:
    counts = pair_counts(comparisons, tie_policy="half")
    W = decisive_wins(counts, "half")
    strict = np.asarray(est.hard_relations(fitted.edges)[1], dtype=bool)
    observed = np.asarray(counts.totals) > 0
  names = comparisons.agents
  out, parts = {}, []
  for action, verb in (("reverse", "reverse"), ("remove", "remove")):
    if fitted is None:
      r = uncovered_changes(W, action, time_limit=5.0, only=i)
    else:
      r = held_uncovered_changes(W, strict, observed, action, time_limit=5.0, only=i)
    upper, lower = int(r.upper[i]), int(r.lower[i])
    shown = ", ".join(f"{names[a]} > {names[b]} x{k}" for a, b, k in r.changes[i])
    if upper < 0:
      parts.append(f"no set of {verb}d comparisons does")
    else:
      bound = "" if lower == upper else f" (at least {lower}: the solver's time ran out)"
      noun = "comparison" if upper == 1 else "comparisons"
      parts.append(f"{verb} {upper} {noun}{bound} ({shown})")
    out[action] = dict(
      upper=upper,
      lower=lower,
      votes=[dict(winner=names[a], loser=names[b], votes=int(k)) for a, b, k in r.changes[i]],
    )
    change = "leave" if r.members[i] else "join"
  out["change"] = change
  held = "" if fitted is None else ", on the model's strict relation held the same way"
  out["text"] = (
    f"For {names[i]} to {change} the hard Uncovered Set: " + "; or ".join(parts) + held + "."
  )
  return out


def bundled_dataset_path():
  """Path of the bundled ``comparisons.csv`` (Vicuna-80 human votes, MIT; see its README.md)."""
  return importlib.resources.files("ste_jax") / "_bundled" / DEMO_DATASET / "comparisons.csv"


def cmd_demo(args) -> int:
  from ste_jax._render import format_text, wrap
  from ste_jax.data import load_comparisons
  from ste_jax.evaluate._witnesses import witness_report

  if not args.no_plot:
    try:
      _check_plot(args.plot)  # a suffix matplotlib cannot write: refused before the work
    except OptionError:
      if importlib.util.find_spec("matplotlib") is not None:
        raise  # (without matplotlib the figure is skipped below, as before)
  start = time.perf_counter()
  path = bundled_dataset_path()
  comparisons, report = load_comparisons(path)
  intro = f"ste-jax demo: {DEMO_DATASET} (bundled; human crowd votes between 8 chatbots on the "
  print("\n".join(wrap(intro + "Vicuna-80 questions, QLoRA paper data, MIT licence)")))
  loaded = report.summary().replace(str(path), "comparisons.csv")
  tables = _tables(comparisons, args, by_context=False)
  print(format_text(tables, details=args.details, columns=args.columns, load=loaded))
  table = tables[0]
  top = table.agents[table.order[0]]
  w = witness_report(
    table.P,
    table.games_matrix,
    list(table.agents),
    table.agents.index(top),
    ties_connect=table.tournament_estimator.ties_connect,
  )
  if w["in_top_cycle"] and w["chains"]:
    chain = max(w["chains"], key=len)
    if len(chain) == 2 and not any(c[1]["tie"] for c in w["chains"]):
      beaten = ", ".join(f"{c[1]['agent']} ({c[1]['p']:.2f})" for c in w["chains"])
      why = f"why {top} is in the Top Cycle: it beats every other agent directly"
      print("\n".join(wrap(f"{why} (a Condorcet winner): {beaten}")))
    else:
      text = chain[0]["agent"] + "".join(
        f" {'=' if s['tie'] else '>'} {s['agent']} ({s['p']:.2f})" for s in chain[1:]
      )
      why = f"why {top} is in the Top Cycle: chains of majority wins reach every agent, e.g."
      why += f" {text}"
      print("\n".join(wrap(f"{why} (all of them: ste-jax explain FILE {top!r})")))
  if args.plot and not args.no_plot:
    try:
      written = _write_plots(tables, args.plot, f"ste-jax demo: {DEMO_DATASET}")
      print(f"plot written to {os.path.abspath(written[0])}")
    except OptionError as e:
      print(f"{PROG} demo: plot skipped: {e}", file=sys.stderr)
  print(f"done in {time.perf_counter() - start:.1f} s")
  return 0


def cmd_planted(args) -> int:
  from ste_jax.benchmarking import planted_core_main

  try:
    os.makedirs(args.out, exist_ok=True)
  except OSError as e:
    raise OptionError(f"--out: cannot create the folder {args.out!r}: {_first_line(e)}") from None
  argv = ["--out", args.out] + [
    flag
    for flag, on in (
      ("--quick", args.quick),
      ("--float32", args.float32),
      ("--no-progress", args.no_progress),
    )
    if on
  ]
  return planted_core_main(argv, command=f"{PROG} planted", default_out=PLANTED_OUT)


def cmd_suggest(args) -> int:
  import jax

  from ste_jax._suggest_render import render_suggestions
  from ste_jax.evaluate import AutoEstimator, ModelEstimator, ResamplingSettings, replica_cores

  comparisons, _ = load(args)
  n = comparisons.num_agents
  if n < 2:
    raise InputError(f"{_shown(args)}: suggest needs at least two agents, found {n}")
  if not 1 <= args.k <= n * (n - 1) // 2:
    raise OptionError(
      f"--k must be between 1 and {n * (n - 1) // 2} (the pairs of {n} agents), got {args.k}"
    )
  plausible = args.plausible
  if plausible == "auto":
    resolved, _ = AutoEstimator().resolve(comparisons)  # model where a pair was never compared
    plausible = "model" if resolved.redraws_outcomes else "posterior"
  cores = None
  if plausible == "model":
    if args.num_replicas < 1:
      raise OptionError("--plausible model needs --replicas >= 1")
    print(
      f"plausible cores: the hard {args.target} of {args.num_replicas} parametric bootstrap "
      "replicas of the model estimator (as `ste-jax score` computes P(TC))",
      file=sys.stderr,
    )
    cores = replica_cores(
      jax.random.key(args.seed),
      comparisons,
      ModelEstimator(),
      ResamplingSettings(num_replicas=args.num_replicas),
      target=args.target,
    )
  print(
    render_suggestions(
      comparisons,
      k=args.k,
      target=args.target,
      confidence=args.confidence,
      correction=args.correction,
      seed=args.seed,
      output=args.output,
      plausible_cores=cores,
    )
  )
  return 0


COMMANDS = {
  "score": cmd_score,
  "explain": cmd_explain,
  "demo": cmd_demo,
  "planted": cmd_planted,
  "suggest": cmd_suggest,
}


def main(argv=None) -> int:
  """Runs ``ste-jax`` with ``argv`` (default ``sys.argv[1:]``) and returns the exit status."""
  parser = build_parser()
  try:
    args = parser.parse_args(argv)
  except SystemExit as e:
    return int(e.code or 0) if not isinstance(e.code, str) else 2
  try:
    use_compilation_cache()
    return COMMANDS[args.command](args)
  except (InputError, OptionError) as e:  # the user's input or option: one line, no traceback
    message = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
    print(f"{PROG} {args.command}: error: {message or type(e).__name__}", file=sys.stderr)
    return 1
  except BrokenPipeError:  # e.g. `ste-jax score ... | head`
    return 0
  except OSError as e:  # the file system (a full disk, a folder not writable): not a bug
    print(f"{PROG} {args.command}: error: {_first_line(e)}", file=sys.stderr)
    return 1
  except KeyboardInterrupt:
    print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
    return 130
  except Exception:  # anything else is a bug: its traceback, then a line that says so
    traceback.print_exc(file=sys.stderr)
    print(f"{PROG} {args.command}: {REPORT_BUG}", file=sys.stderr)
    return 3
