"""The committed notebooks: a fast structural check in the default suite, and (``slow``) execution
top to bottom with the installed package, so none can rot (``make test-slow``)."""

import ast
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _code_cells(nb):
  return [c for c in nb.cells if c.cell_type == "code"]


def _python_source(cell_source: str) -> str:
  """The cell with IPython magics and shell escapes (lines starting with ``%`` or ``!``) blanked."""
  return "\n".join(
    "" if line.lstrip().startswith(("%", "!")) else line for line in cell_source.splitlines()
  )


def test_notebooks_exist():
  assert NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_with_outputs(path):
  """Valid nbformat, every code cell parses and was executed in order, no stored error, a figure."""
  nb = nbformat.read(path, as_version=4)
  nbformat.validate(nb)
  cells = _code_cells(nb)
  assert cells
  for i, cell in enumerate(cells, start=1):
    ast.parse(_python_source(cell.source), filename=f"{path.name}[{i}]")
    assert cell.execution_count == i, (path.name, i, cell.execution_count)
  errors = [o for c in cells for o in c.outputs if o.output_type == "error"]
  assert not errors
  assert any("image/png" in o.get("data", {}) for c in cells for o in c.outputs), "no stored figure"


@pytest.mark.slow
@pytest.mark.filterwarnings(
  "ignore::DeprecationWarning"
)  # jupyter_client / zmq internals, not ours
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path):
  nbclient = pytest.importorskip("nbclient")
  nb = nbformat.read(path, as_version=4)
  client = nbclient.NotebookClient(
    nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
  )
  client.execute()  # raises CellExecutionError with the failing cell on any error
  errors = [o for c in _code_cells(nb) for o in c.outputs if o.output_type == "error"]
  assert not errors
  images = [o for c in _code_cells(nb) for o in c.outputs if "image/png" in o.get("data", {})]
  assert images, "every notebook shows at least one figure"
