"""The notebooks are documentation that runs: execute each one top to bottom."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _execute(notebook, folder):
    """Run the notebook's cells in a kernel started in `folder`; the error outputs."""
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    return [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    """Each notebook runs top to bottom where Jupyter opens it (its own folder)."""
    assert not _execute(nbformat.read(path, as_version=4), path.parent)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_starts_from_the_repository_root(path):
    """Opened from the repository root instead, the first cell, which calls
    `linkage.examples.use_repository()` (the one setting that finds the data) and reads the
    data, runs there too and leaves the kernel in the folder the whole run above worked in; the
    later cells see the same folder either way, so they are not run twice."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert "use_repository()" in code[0].source
    check = nbformat.v4.new_code_cell(
        f"import os\nassert os.getcwd() == {str(ROOT.resolve())!r}, os.getcwd()")
    notebook.cells = [code[0], check]
    assert not _execute(notebook, ROOT)


def test_there_are_notebooks():
    assert any(p.name == "01_customers.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebooks_drive_linkage_from_python(path):
    """No notebook shells out to the command line: the linker, `lk.check` and the modules'
    functions do what the commands do, in the kernel."""
    source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "code")
    assert "subprocess" not in source and "../shared" not in source
