"""The package's intra-package import graph has no cycle between plain modules.

Every ``import`` statement of every module under ``ste_jax/`` counts, including
those inside functions: a function-level import hides a cycle from Python's
import machinery but not from the reader, and it is usually a sign that a
helper lives in the wrong module.  Cycles through a package ``__init__`` are
allowed (an ``__init__`` re-exports its submodules, which may import sibling
packages' ``__init__``); only cycles among plain modules are reported.

Pure ``ast``: nothing from ``ste_jax`` is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "ste_jax"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _module_files() -> dict[str, Path]:
  """Dotted module name -> file, for every ``.py`` file under the package."""
  modules: dict[str, Path] = {}
  for path in sorted(ROOT.rglob("*.py")):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
      parts = parts[:-1]
    modules[".".join(parts)] = path
  return modules


def _is_package(name: str, modules: dict[str, Path]) -> bool:
  return modules[name].name == "__init__.py"


def _resolve_relative(module: str, level: int, target: str | None, modules: dict[str, Path]) -> str:
  """Absolute dotted name of ``from <level dots><target> import ...`` inside ``module``."""
  package = module if _is_package(module, modules) else module.rpartition(".")[0]
  for _ in range(level - 1):
    package = package.rpartition(".")[0]
  return f"{package}.{target}" if target else package


def _nearest_module(name: str, modules: dict[str, Path]) -> str | None:
  """``name`` if it is a module, else its closest enclosing module (``a.b.attr`` -> ``a.b``)."""
  while name:
    if name in modules:
      return name
    name = name.rpartition(".")[0]
  return None


def _imports(module: str, source: str, modules: dict[str, Path]) -> set[str]:
  """Intra-package modules imported anywhere in ``source``, the text of ``module`` (top level and
  inside functions)."""
  tree = ast.parse(source, filename=module)
  targets: set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
          found = _nearest_module(alias.name, modules)
          if found is not None:
            targets.add(found)
    elif isinstance(node, ast.ImportFrom):
      if node.level:
        base = _resolve_relative(module, node.level, node.module, modules)
      else:
        base = node.module or ""
        if base != PACKAGE and not base.startswith(PACKAGE + "."):
          continue
      for alias in node.names:
        submodule = f"{base}.{alias.name}"
        if submodule in modules:  # ``from pkg import submodule``
          targets.add(submodule)
        else:
          found = _nearest_module(base, modules)
          if found is not None:
            targets.add(found)
  targets.discard(module)
  return targets


def import_graph() -> dict[str, set[str]]:
  """Module -> the intra-package modules it imports."""
  modules = _module_files()
  return {
    module: _imports(module, path.read_text(encoding="utf-8"), modules)
    for module, path in modules.items()
  }


def _shortest_path(
  edges: dict[str, list[str]], members: set[str], start: str, goal: str
) -> list[str]:
  """Shortest path ``start -> ... -> goal`` inside ``members`` (breadth-first; ``goal`` is
  reachable)."""
  parents = {start: start}
  frontier = [start]
  while goal not in parents:
    following = []
    for node in frontier:
      for child in edges[node]:
        if child in members and child not in parents:
          parents[child] = node
          following.append(child)
    frontier = following
  path = [goal]
  while path[-1] != start:
    path.append(parents[path[-1]])
  return path[::-1]


def plain_module_cycles(graph: dict[str, set[str]], packages: set[str]) -> list[list[str]]:
  """Cycles of the import graph restricted to plain modules, each as ``[a, b, ..., a]``.

  Package ``__init__`` modules (``packages``) are dropped first, so a cycle through an ``__init__``
  is not reported.
  Not every elementary cycle is listed (there may be exponentially many): for each import edge
  inside a strongly connected component, the shortest cycle through that edge, without repeats.
  """
  plain = set(graph) - set(packages)
  edges = {m: sorted(graph[m] & plain) for m in sorted(plain)}

  # Tarjan's strongly connected components (iterative).
  index: dict[str, int] = {}
  low: dict[str, int] = {}
  stack: list[str] = []
  on_stack: set[str] = set()
  components: list[list[str]] = []
  counter = 0
  for root in edges:
    if root in index:
      continue
    work = [(root, iter(edges[root]))]
    index[root] = low[root] = counter
    counter += 1
    stack.append(root)
    on_stack.add(root)
    while work:
      node, children = work[-1]
      advanced = False
      for child in children:
        if child not in index:
          index[child] = low[child] = counter
          counter += 1
          stack.append(child)
          on_stack.add(child)
          work.append((child, iter(edges[child])))
          advanced = True
          break
        if child in on_stack:
          low[node] = min(low[node], index[child])
      if advanced:
        continue
      work.pop()
      if work:
        low[work[-1][0]] = min(low[work[-1][0]], low[node])
      if low[node] == index[node]:
        component = []
        while True:
          member = stack.pop()
          on_stack.discard(member)
          component.append(member)
          if member == node:
            break
        if len(component) > 1:
          components.append(sorted(component))

  # Every edge inside a component closes a cycle with the shortest path back: report each distinct
  # one.
  cycles: list[list[str]] = []
  seen: set[tuple[str, ...]] = set()
  for component in sorted(components):
    members = set(component)
    for source in component:
      for target in edges[source]:
        if target not in members:
          continue
        cycle = [source, *_shortest_path(edges, members, target, source)[:-1]]
        first = cycle.index(min(cycle))
        key = tuple(cycle[first:] + cycle[:first])
        if key not in seen:
          seen.add(key)
          cycles.append([*key, key[0]])
  return cycles


def test_every_kind_of_import_is_an_edge():
  source = (
    "import numpy\n"
    "from ste_jax import exact\n"
    "from ste_jax.data import Comparisons\n"
    "from . import _report as R\n"
    "from ._comparisons import Comparisons\n"
    "def f():\n"
    "  from ste_jax.evaluate import _estimators\n"
    "  from ste_jax.evaluate._leaderboard import COLUMNS\n"
    "  import ste_jax.ops._edges\n"
    "  if True:\n"
    "    from .. import plotting\n"
  )
  assert _imports(f"{PACKAGE}.data._assemble", source, _module_files()) == {
    f"{PACKAGE}.{name}"
    for name in (
      "exact",
      "data",
      "data._report",
      "data._comparisons",
      "evaluate._estimators",
      "evaluate._leaderboard",
      "ops._edges",
      "plotting",
    )
  }


def test_cycles_through_a_package_init_are_not_reported():
  graph = {"p": {"p.a", "p.c"}, "p.a": {"p.b"}, "p.b": {"p.a", "p"}, "p.c": {"p"}}
  assert plain_module_cycles(graph, {"p"}) == [["p.a", "p.b", "p.a"]]
  assert plain_module_cycles({"p": {"p.c"}, "p.c": {"p"}}, {"p"}) == []


def test_no_import_cycles_between_plain_modules():
  modules = _module_files()
  cycles = plain_module_cycles(import_graph(), {m for m in modules if _is_package(m, modules)})
  message = "\n".join(" -> ".join(cycle) for cycle in cycles)
  assert not cycles, f"import cycles between modules (function-level imports included):\n{message}"
