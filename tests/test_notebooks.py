"""The notebooks are documentation that runs: execute each one top to bottom."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("start", ["notebooks", "root"])
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, start):
    """Each notebook runs where Jupyter opens it (its own folder) and from the repository
    root: `linkage.examples.use_repository()` is the one setting that finds the data."""
    notebook = nbformat.read(path, as_version=4)
    folder = path.parent if start == "notebooks" else ROOT
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors


def test_there_are_notebooks():
    assert any(p.name == "01_customers.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_drive_linkage_from_python(path):
    """No notebook shells out to the command line: the linker, `lk.check` and the modules'
    functions do what the commands do, in the kernel."""
    source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "code")
    assert "subprocess" not in source and "../shared" not in source
