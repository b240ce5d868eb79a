"""Every committed notebook executes top to bottom with the installed package (so none can rot)."""

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # jupyter_client / zmq internals, not ours
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path):
  nb = nbformat.read(path, as_version=4)
  client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
  client.execute()  # raises CellExecutionError with the failing cell on any error
  errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
  assert not errors
  images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
  assert images, "every notebook shows at least one figure"
