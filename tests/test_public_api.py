"""The public API: the top level is the documented front door, every subpackage's ``__all__``
resolves,
every public function is annotated, ``py.typed`` ships, and importing is light."""

import importlib
import inspect
import pathlib
import subprocess
import sys

import pytest

import ste_jax

# The front door, as the package docstring and README document it (issue 34, item 4).
FRONT_DOOR = [
  "ste_scores",
  "ste_scores_from_edges",
  "STEScores",
  "top_cycle",
  "uncovered_set",
  "validate_tournament",
  "Comparisons",
  "load_comparisons",
  "from_dataframe",
  "leaderboard",
  "membership_verdicts",
  "suggest_pairs",
  "PairwiseLogit",
  "BradleyTerryLogit",
  "IntransitiveLogit",
  "fit",
  "InputError",
  "OptionError",
]
SUBPACKAGES = [
  "ops",
  "exact",
  "data",
  "stats",
  "evaluate",
  "models",
  "training",
  "plotting",
  "benchmarking",
]
# Where each front-door name lives: the top level re-exports the subpackage's object, no copy.
HOME = {
  "ste_scores": "ops",
  "ste_scores_from_edges": "ops",
  "STEScores": "ops",
  "top_cycle": "exact",
  "uncovered_set": "exact",
  "Comparisons": "data",
  "load_comparisons": "data",
  "from_dataframe": "data",
  "leaderboard": "evaluate",
  "membership_verdicts": "evaluate",
  "suggest_pairs": "evaluate",
  "PairwiseLogit": "models",
  "BradleyTerryLogit": "models",
  "IntransitiveLogit": "models",
  "fit": "training",
}
ROOT = pathlib.Path(ste_jax.__file__).resolve().parent

HEAVY = ("flax", "optax", "tqdm", "pandas", "matplotlib", "scipy")
LAZY = ("benchmarking", "evaluate", "models", "plotting", "training")


def _run(code: str) -> str:
  return subprocess.run(
    [sys.executable, "-c", code], capture_output=True, text=True, check=True
  ).stdout


def _modules() -> list[str]:
  """Every module of the package, from its files (importing nothing)."""
  names = (
    ".".join(("ste_jax",) + p.relative_to(ROOT).with_suffix("").parts) for p in ROOT.rglob("*.py")
  )
  return sorted(name.removesuffix(".__init__") for name in names)


def _public(names) -> set[str]:
  return {name for name in names if not name.startswith("_")}


def test_top_level_is_exactly_the_front_door():
  expected = sorted(FRONT_DOOR + SUBPACKAGES)
  assert ste_jax.__all__ == expected
  assert _public(dir(ste_jax)) == set(expected)
  for name in expected:
    assert getattr(ste_jax, name) is not None, name
  for name, sub in HOME.items():
    assert getattr(ste_jax, name) is getattr(getattr(ste_jax, sub), name), name
    assert name in getattr(ste_jax, sub).__all__, (sub, name)
  with pytest.raises(AttributeError, match="no attribute 'bipartisan_set'"):
    ste_jax.bipartisan_set  # noqa: B018  (reached as ste_jax.exact.bipartisan_set)


def test_no_other_public_name_appears_after_importing_every_module():
  """Importing a module sets it as an attribute of its package: the top level gains none but the
  subpackages (every other module is private)."""
  code = (
    "import importlib, ste_jax\n"
    f"for name in {_modules()!r}:\n"
    "  importlib.import_module(name)\n"
    "print(*sorted(n for n in vars(ste_jax) if not n.startswith('_')))"
  )
  found = set(_run(code).split())
  assert set(SUBPACKAGES) <= found <= set(FRONT_DOOR + SUBPACKAGES), sorted(found)


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_subpackage_all_resolves(sub):
  module = importlib.import_module(f"ste_jax.{sub}")
  if sub == "plotting":  # a module, not a package: its functions, each public one exported
    names = [n for n in vars(module) if not n.startswith("_")]
    assert not hasattr(module, "__all__") or set(module.__all__) <= set(names)
    return
  assert isinstance(module.__all__, list), sub
  assert module.__all__ == sorted(set(module.__all__)), f"{sub}.__all__ is not sorted and unique"
  missing = [name for name in module.__all__ if not hasattr(module, name)]
  assert not missing, (sub, missing)
  unlisted = sorted(_public(dir(module)) - set(module.__all__))
  assert not unlisted, f"public names of ste_jax.{sub} outside its __all__: {unlisted}"


def _unannotated(fn) -> list[str]:
  """The parameters (and ``->`` for the return) of ``fn`` without an annotation."""
  signature = inspect.signature(fn)
  missing = [
    p.name
    for p in signature.parameters.values()
    if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
  ]
  if signature.return_annotation is inspect.Signature.empty:
    missing.append("->")
  return missing


def _public_functions(module):
  """``(qualified name, function)`` for every function in ``module.__all__`` and every public method
  (with ``__init__`` and ``__call__``) that a class in ``module.__all__`` defines itself."""
  for name in module.__all__:
    obj = getattr(module, name)
    if inspect.isclass(obj):
      for attr, value in vars(obj).items():
        if attr.startswith("_") and attr not in ("__init__", "__call__"):
          continue
        if isinstance(value, (staticmethod, classmethod)):
          value = value.__func__
        # Methods generated for NamedTuples and dataclasses, or attached from elsewhere, are not
        # the class's own code.
        if inspect.isfunction(value) and value.__qualname__.startswith(obj.__qualname__ + "."):
          yield f"{name}.{attr}", value
    elif inspect.isfunction(inspect.unwrap(obj)) or inspect.isfunction(obj):
      yield name, obj


@pytest.mark.parametrize("sub", [s for s in SUBPACKAGES if s != "plotting"])
def test_every_public_function_is_annotated(sub):
  module = importlib.import_module(f"ste_jax.{sub}")
  gaps = {name: missing for name, fn in _public_functions(module) if (missing := _unannotated(fn))}
  assert not gaps, f"ste_jax.{sub}: unannotated parameters ('->': the return): {gaps}"


@pytest.mark.parametrize("sub", [s for s in SUBPACKAGES if s != "plotting"])
def test_randomness_is_a_key_passed_first(sub):
  """A public function that draws random numbers takes a ``key`` as its first parameter; none takes
  a ``seed`` (a seed belongs to the CLI only)."""
  module = importlib.import_module(f"ste_jax.{sub}")
  wrong = {}
  for name, fn in _public_functions(module):
    params = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
    if "seed" in params or ("key" in params and params[0] != "key"):
      wrong[name] = params
  assert not wrong, f"ste_jax.{sub}: take key first, never a seed: {wrong}"


def test_the_annotation_check_can_fail():
  def partly(x: int, y, *, z: float = 1.0) -> int: ...

  def no_return(x: int): ...

  assert _unannotated(partly) == ["y"]
  assert _unannotated(no_return) == ["->"]


def test_py_typed_ships():
  """PEP 561: the marker is in the package and in the package data that a wheel includes."""
  tomllib = pytest.importorskip("tomllib")
  assert (ROOT / "py.typed").is_file()
  pyproject = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))
  assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["ste_jax"]


def test_version_has_one_source():
  tomllib = pytest.importorskip("tomllib")
  pyproject = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))
  assert "version" not in pyproject["project"]
  assert "version" in pyproject["project"]["dynamic"]
  dynamic = pyproject["tool"]["setuptools"]["dynamic"]["version"]
  assert dynamic == {"attr": "ste_jax.__version__"}
  parts = ste_jax.__version__.split(".")
  assert len(parts) == 3 and all(p.isdigit() for p in parts), ste_jax.__version__


def test_import_is_light():
  """``import ste_jax`` (the operators, exact solutions, data, stats) loads no Flax, Optax, tqdm,
  pandas, matplotlib or scipy; neither does computing scores."""
  code = (
    "import sys, ste_jax, jax.numpy as jnp\n"
    "ste_jax.ste_scores(jnp.full((3, 3), 0.5), tau=0.1)\n"
    f"print(*[m for m in {HEAVY!r} if m in sys.modules])\n"
    f"print(*[m for m in {LAZY!r} if 'ste_jax.' + m in sys.modules])"
  )
  assert _run(code).split("\n")[:2] == ["", ""]


def test_lazy_names_import_on_first_use():
  """Every public name is in ``dir(ste_jax)`` before its module is loaded and imports with
  ``from ste_jax import ...``; loading ``fit`` brings in Flax and Optax only then."""
  code = (
    "import sys, ste_jax\n"
    "missing = [n for n in ste_jax.__all__ if n not in dir(ste_jax)]\n"
    "before = 'flax' in sys.modules\n"
    "from ste_jax import fit, PairwiseLogit, leaderboard, plotting\n"
    "assert fit is ste_jax.training.fit and PairwiseLogit is ste_jax.models.PairwiseLogit\n"
    "assert ste_jax.fit is fit and plotting is ste_jax.plotting\n"
    "print(missing, before, 'flax' in sys.modules, 'optax' in sys.modules)"
  )
  assert _run(code).split() == ["[]", "False", "True", "True"]
  with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
    ste_jax.not_a_name  # noqa: B018


@pytest.mark.slow
def test_every_module_imports_first_without_a_cycle():
  """Each module imported first, with ``ste_jax`` purged from ``sys.modules`` before each (a
  circular import fails only for some entry points): about 80 imports of the package, so in
  `make test-slow`. ``test_every_module_imports_in_a_fresh_interpreter`` does the same with one
  interpreter per module."""
  code = (
    "import importlib, sys\n"
    f"for name in {_modules()!r}:\n"
    "  for k in [k for k in sys.modules if k == 'ste_jax' or k.startswith('ste_jax.')]:\n"
    "    del sys.modules[k]\n"
    "  importlib.import_module(name)\n"
    "print('ok')"
  )
  assert _run(code).split() == ["ok"]


@pytest.mark.slow
def test_every_module_imports_in_a_fresh_interpreter():
  failures = {}
  for name in _modules():
    out = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True)
    if out.returncode:
      failures[name] = out.stderr.strip().splitlines()[-1]
  assert not failures, failures
