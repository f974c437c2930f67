"""`linkage.examples`: the one setting through which notebooks and docs find their data."""

from __future__ import annotations

import os

import pytest

from linkage.errors import InputError
from linkage.examples import datasets, repository, use_repository
from tests.conftest import ROOT


def test_the_repository_is_found_from_its_notebooks_folder_and_from_its_root(monkeypatch):
    for start in (ROOT / "notebooks", ROOT):
        monkeypatch.chdir(start)
        assert repository() == ROOT.resolve()
        assert use_repository() == ROOT.resolve() and os.getcwd() == str(ROOT.resolve())
        assert (ROOT / "sample_data" / "customers.csv").is_file()


def test_the_data_sets_follow_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("LINKAGE_DATASETS", str(tmp_path))
    assert datasets() == tmp_path
    monkeypatch.setenv("LINKAGE_DATASETS", str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match="LINKAGE_DATASETS"):
        datasets()
