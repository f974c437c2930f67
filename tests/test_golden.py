"""Golden records: each field from the record its survivorship rule names, with provenance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from linkage.errors import InputError, RulesError
from linkage.golden import GoldenRecord, build_golden

# Cluster 0: ids c, a, d, b (rows 0-3); cluster 1: e (row 4, a singleton); cluster 2: f, g.
IDS = pd.Series(["c", "a", "d", "b", "e", "f", "g"])
CLUSTERS = np.array([0, 0, 0, 0, 1, 2, 2])
RECORDS = pd.DataFrame({
    "name": ["Kim Min-jun", "Kim M", None, "Kim Minjun", "Lee", "  ", None],
    "phone": ["010-1", "010-2", "010-3", "010-2", None, "010-9", "010-8"],
    "email": ["k@x", "k@y", "k@y", "k@x", "l@z", None, None],
    "updated_at": ["2021-01-01", "05/03/2023", "2023-03-05T10:00", None, "2020-01-01",
                   "junk", "2019-01-01"],
    "system": ["web", "crm", "billing", "crm", "web", "legacy", None],
})
SPEC = GoldenRecord(
    {"name": "longest", "phone": "most_recent", "email": "most_frequent",
     "system": "source_priority", "updated_at": "first"},
    recency_column="updated_at",
    source_column="system",
    source_order=["crm", "billing", "web"],
)


def golden(spec=SPEC, records=RECORDS, ids=IDS, clusters=CLUSTERS):
    return build_golden(spec, records, ids, clusters, "customer_id")


def cell(frame, cluster, field):
    row = frame.set_index("cluster_id").loc[cluster]
    return row[field], row[f"{field}__from"]


def test_one_row_per_cluster_in_a_fixed_column_order():
    g = golden()
    assert g["cluster_id"].tolist() == [0, 1, 2]
    fields = ["name", "phone", "email", "system", "updated_at"]
    assert g.columns.tolist() == ["cluster_id", *fields, *(f"{f}__from" for f in fields)]


def test_longest_takes_the_longest_text():
    g = golden()
    assert cell(g, 0, "name") == ("Kim Min-jun", "c")
    assert cell(g, 1, "name") == ("Lee", "e")


def test_most_recent_takes_the_newest_dated_record_and_the_time_counts():
    g = golden()
    # d: 2023-03-05 10:00 is newer than a: 05/03/2023 (day first, so the same day at 00:00).
    assert cell(g, 0, "phone") == ("010-3", "d")
    # f's date is unreadable, so g's dated record wins.
    assert cell(g, 2, "phone") == ("010-8", "g")


def test_most_recent_ties_go_to_the_smallest_id():
    records = pd.DataFrame({"v": ["x", "y"], "t": ["2020-01-01", "2020-01-01"]})
    spec = GoldenRecord({"v": "most_recent"}, recency_column="t")
    g = build_golden(spec, records, pd.Series([2, 1]), np.array([0, 0]), "id")
    assert cell(g, 0, "v") == ("y", 1)


def test_most_frequent_takes_the_common_value_ties_to_the_smallest_id():
    g = golden()
    # k@x (c, b) and k@y (a, d) both appear twice; k@y holds the smallest id a.
    assert cell(g, 0, "email") == ("k@y", "a")
    records = pd.DataFrame({"v": ["p", "q", "q", "p", "q"]})
    spec = GoldenRecord({"v": "most_frequent"})
    g = build_golden(spec, records, pd.Series([1, 2, 3, 4, 5]), np.zeros(5, dtype=int), "id")
    assert cell(g, 0, "v") == ("q", 2)


def test_source_priority_takes_the_best_listed_source():
    g = golden()
    assert cell(g, 0, "system") == ("crm", "a")  # a and b are both crm; a is smaller
    assert cell(g, 2, "system") == ("legacy", "f")  # unlisted, but the only value


def test_first_takes_the_smallest_id_with_a_value():
    g = golden()
    assert cell(g, 0, "updated_at") == ("05/03/2023", "a")
    assert cell(g, 2, "updated_at") == ("junk", "f")


def test_null_only_fields_give_null_value_and_provenance():
    g = golden()
    value, source = cell(g, 2, "name")  # "  " is blank and None is missing
    assert pd.isna(value) and pd.isna(source)
    value, source = cell(g, 1, "phone")
    assert pd.isna(value) and pd.isna(source)


def test_deterministic_whatever_the_row_order():
    g = golden()
    shuffled = np.random.default_rng(0).permutation(len(IDS))
    h = golden(records=RECORDS.iloc[shuffled], ids=IDS.iloc[shuffled],
               clusters=CLUSTERS[shuffled])
    pd.testing.assert_frame_equal(g, h)
    pd.testing.assert_frame_equal(g, golden())


def test_rules_needing_columns_say_so():
    with pytest.raises(RulesError, match=r"recency_column.*required.*updated_at"):
        GoldenRecord({"phone": "most_recent"})
    with pytest.raises(RulesError, match=r"source_column.*required"):
        GoldenRecord({"phone": "source_priority"}, source_order=["crm"])
    with pytest.raises(RulesError, match=r"source_order.*required"):
        GoldenRecord({"phone": "source_priority"}, source_column="system")
    with pytest.raises(RulesError, match="Did you mean 'longest'"):
        GoldenRecord({"phone": "longst"})
    with pytest.raises(RulesError, match=r"rules: recency_column is required"):
        GoldenRecord.from_dict({"fields": {"phone": "most_recent"}})


def test_round_trips_through_a_mapping():
    assert GoldenRecord.from_dict(SPEC.to_dict()) == SPEC


def test_missing_column_is_an_input_error():
    with pytest.raises(InputError, match=r"`phone`.*golden"):
        golden(records=RECORDS.drop(columns="phone"))
