"""Keeper policies pick deterministically, ties broken by id."""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.keep import choose_representatives, completeness, id_rank


def test_first_keeps_smallest_id_whatever_the_row_order():
    ids = pd.Series(["C-3", "C-1", "C-2", "C-9"])
    clusters = np.array([0, 0, 0, 1])
    keeper = choose_representatives(clusters, id_rank(ids), "first", pd.DataFrame(index=ids.index))
    assert ids[keeper].tolist() == ["C-1", "C-1", "C-1", "C-9"]


def test_numeric_ids_sort_as_numbers():
    ids = pd.Series([10, 9, 100])
    assert id_rank(ids).tolist() == [1, 0, 2]


def test_most_complete_counts_blank_as_missing_and_breaks_ties_by_id():
    records = pd.DataFrame(
        {"a": ["x", "x", "x", "x"], "b": ["  ", "y", None, "y"], "c": [None, None, "z", "z"]}
    )
    assert completeness(records).tolist() == [1, 2, 2, 3]
    ids = pd.Series(["d", "c", "b", "a"])
    clusters = np.array([0, 0, 0, 1])
    keeper = choose_representatives(clusters, id_rank(ids), "most_complete", records)
    # rows 1 and 2 tie on completeness (2); row 2 has the smaller id "b".
    assert keeper.tolist() == [2, 2, 2, 3]
