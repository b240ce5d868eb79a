"""Writes the API reference's pages (docs/api/, ignored by git) from the ``__all__`` lists.

``docs/conf.py`` calls :func:`write_pages` before Sphinx reads any source, so autosummary then
generates one page per public name. Each subpackage gets a page with its module docstring and a
table of its ``__all__``; the front door page lists ``ste_jax.__all__`` and links each name to the
subpackage entry that documents it.
"""

import importlib
import inspect
import pathlib
import pkgutil
import shutil

PACKAGE = "ste_jax"
# Reading order of the subpackage pages; any other public subpackage is appended after these.
ORDER = (
  "ops",
  "exact",
  "data",
  "stats",
  "evaluate",
  "models",
  "training",
  "plotting",
  "benchmarking",
)


def public_names(module) -> list[str]:
  """``module.__all__``, or the public functions and classes the module defines when it has none."""
  names = getattr(module, "__all__", None)
  if names is not None:
    return list(names)
  return sorted(
    name
    for name, value in vars(module).items()
    if not name.startswith("_")
    and (inspect.isfunction(value) or inspect.isclass(value))
    and getattr(value, "__module__", None) == module.__name__
  )


def subpackages() -> list[str]:
  package = importlib.import_module(PACKAGE)
  found = [m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")]
  return [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)


def _summary(obj) -> str:
  doc = inspect.getdoc(obj) or ""
  first = doc.strip().split("\n\n")[0].replace("\n", " ").strip()
  return first.replace("|", "\\|")


def _title(text: str, underline: str = "=") -> str:
  return f"{text}\n{underline * len(text)}\n"


def _module_page(full: str, names: list[str]) -> str:
  lines = [
    _title(f"``{full}``"),
    f".. automodule:: {full}",
    "   :no-members:",
    "",
    f".. currentmodule:: {full}",
    "",
    ".. autosummary::",
    "   :toctree: _autosummary",
    "   :nosignatures:",
    "",
  ]
  lines += [f"   {name}" for name in names]
  return "\n".join(lines) + "\n"


def _front_door_page(homes: dict[int, str], subs: list[str]) -> str:
  package = importlib.import_module(PACKAGE)
  names = [n for n in public_names(package) if n not in subs]
  lines = [
    _title("The front door: ``import ste_jax``"),
    "The names most users need first live at the top level of ``ste_jax``; everything else is",
    "reached through its subpackage (``ste_jax.exact.bipartisan_set``, ``ste_jax.stats.elo``,",
    "...).",
    "Each name below links to its entry in the subpackage that defines it.",
    "",
    ".. list-table::",
    "   :header-rows: 1",
    "   :widths: 30 70",
    "",
    "   * - name",
    "     - summary",
  ]
  own = []  # names no subpackage exports: documented here, as ``ste_jax.<name>``
  for name in names:
    obj = getattr(package, name)
    home = homes.get(id(obj))
    if home is None:
      own.append(name)
      home = PACKAGE
    lines += [f"   * - :py:obj:`{name} <{home}.{name}>`", f"     - {_summary(obj)}"]
  lines += ["", "Subpackages:", ""]
  lines += [f"* :doc:`{PACKAGE}.{sub} <{sub}>` — {_summary(_import(sub))}" for sub in subs]
  if own:
    lines += ["", "Defined at the top level only:", "", f".. currentmodule:: {PACKAGE}", ""]
    lines += [".. autosummary::", "   :toctree: _autosummary", "   :nosignatures:", ""]
    lines += [f"   {name}" for name in own]
  return "\n".join(lines) + "\n"


def _import(sub: str):
  return importlib.import_module(f"{PACKAGE}.{sub}")


def write_pages(out: pathlib.Path) -> None:
  """Writes ``index.rst``, ``front_door.rst`` and one ``<subpackage>.rst`` into ``out``.

  The per-name pages of an earlier build (``out/_autosummary``) are removed, so a name that left
  an ``__all__`` leaves the reference too; autosummary writes the current ones again.
  """
  shutil.rmtree(out / "_autosummary", ignore_errors=True)
  out.mkdir(parents=True, exist_ok=True)
  subs = subpackages()
  homes: dict[int, str] = {}
  pages = {}
  for sub in subs:
    module = _import(sub)
    names = public_names(module)
    for name in names:
      homes.setdefault(id(getattr(module, name)), module.__name__)
    pages[sub] = _module_page(module.__name__, names)
  pages["front_door"] = _front_door_page(homes, subs)
  toc = "\n".join(f"   {page}" for page in ["front_door", *subs])
  pages["index"] = (
    _title("API reference")
    + "\nGenerated from the docstrings; each page lists one subpackage's ``__all__``.\n\n"
    + f".. toctree::\n   :maxdepth: 1\n\n{toc}\n"
  )
  for page, text in pages.items():
    path = out / f"{page}.rst"
    if not path.exists() or path.read_text() != text:  # unchanged pages keep Sphinx's cache valid
      path.write_text(text)
