"""Where the examples find their data: one setting for the notebooks and the docs.

- The bundled sample data and rules (`sample_data/`, `rules/`) live in this repository;
  `use_repository()` makes it the working folder, so that the examples' relative paths
  (`"sample_data/customers.csv"`) resolve whether a notebook was opened from `notebooks/`
  (as Jupyter does) or from the repository root.
- The benchmark data sets with truth (FEBRL, the magellan and JedAI sets, ...) live outside it:
  `datasets()` is the folder the environment variable `LINKAGE_DATASETS` names, else
  `../shared/datasets` beside the repository, the one setting to change where they are.
"""

from __future__ import annotations

import os
from pathlib import Path

from linkage.errors import InputError

DATASETS_VARIABLE = "LINKAGE_DATASETS"


def _is_repository(folder: Path) -> bool:
    return (folder / "sample_data").is_dir() and (folder / "rules").is_dir()


def repository() -> Path:
    """The repository holding `sample_data/` and `rules/`: the working folder or one above it,
    else the one this package was installed from (an editable install)."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if _is_repository(folder):
            return folder
    installed = Path(__file__).resolve().parents[1]
    if _is_repository(installed):
        return installed
    raise InputError(f"{here}: no linkage repository here or above (a folder with sample_data/ "
                     "and rules/). Open the notebook from a clone of the repository.")


def use_repository() -> Path:
    """Make the repository the working folder (see the module's docstring) and return it."""
    root = repository()
    os.chdir(root)
    return root


def datasets() -> Path:
    """The benchmark data sets' folder: `$LINKAGE_DATASETS`, else `../shared/datasets` beside
    the repository."""
    named = os.environ.get(DATASETS_VARIABLE)
    folder = Path(named) if named else repository().parent / "shared" / "datasets"
    if not folder.is_dir():
        raise InputError(f"{folder}: the benchmark data sets are not there. Set "
                         f"{DATASETS_VARIABLE} to the folder that holds febrl/, magellan/, ...")
    return folder
