"""`Result.load` reads a written run back: the same tables, rules and a scorer ready to use."""

from __future__ import annotations

import pandas as pd
import pytest

import linkage as lk
from linkage.errors import InputError
from tests.conftest import ROOT, nulls_as_none


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    # Parquet keeps the values; categorical columns come back as plain ones.
    pd.testing.assert_frame_equal(nulls_as_none(a), nulls_as_none(b), check_dtype=False,
                                  check_categorical=False)


def test_a_written_run_loads_back_whole(tmp_path):
    run = lk.dedupe(ROOT / "sample_data" / "customers.csv", ROOT / "rules" / "customers.yaml")
    run.write(tmp_path / "run")
    loaded = lk.Result.load(tmp_path / "run")

    assert loaded.mode == "dedupe"
    same(loaded.clusters, run.clusters)
    same(loaded.pairs, run.pairs)
    same(loaded.deduplicated, run.deduplicated)
    assert loaded.summary() == run.summary()
    # the rule sum is ready to explain without the caller fitting it
    record = run.pairs["id_l"].iloc[0]
    assert loaded.explain(record) == run.explain(record)


def test_not_a_run_folder_says_what_to_pass(tmp_path):
    with pytest.raises(InputError, match="not a run folder"):
        lk.Result.load(tmp_path)
