"""Keeper policies pick deterministically, ties broken by id."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.errors import InputError, RulesError
from linkage.keep import KeepPolicy, choose_representatives, completeness, id_rank, keeper_rank


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


# --- KeepPolicy and keeper_rank ------------------------------------------------------------

IDS = pd.Series(["r4", "r2", "r3", "r1", "r5"])
ONE_CLUSTER = np.array([7, 7, 7, 7, 7])


def ranks(policy, records, clusters=ONE_CLUSTER, ids=IDS):
    return keeper_rank(policy, records, clusters, id_rank(ids)).tolist()


def keeper(policy, records, clusters=ONE_CLUSTER, ids=IDS):
    return ids[np.asarray(ranks(policy, records, clusters, ids)) == 0].tolist()


def test_first_policy_is_id_order():
    assert ranks("first", pd.DataFrame(index=range(5))) == [3, 1, 2, 0, 4]


def test_newest_and_oldest_parse_dates_leniently_and_put_missing_last():
    records = pd.DataFrame({"updated_at": [
        "2021-03-05", "05/03/2022", "5 March 2020", None, "not a date"]})
    newest = KeepPolicy("newest", column="updated_at")
    oldest = KeepPolicy("oldest", column="updated_at")
    assert ranks(newest, records) == [1, 0, 2, 3, 4]  # missing last: r1 before r5 by id
    assert ranks(oldest, records) == [1, 2, 0, 3, 4]


def test_newest_counts_the_time_and_ties_go_to_the_smallest_id():
    records = pd.DataFrame({"t": ["2020-01-01T09:00", "2020-01-01T10:00", "2020-01-01T10:00",
                                  "2020-01-01", ""]})
    assert keeper(KeepPolicy("newest", column="t"), records) == ["r2"]
    assert ranks(KeepPolicy("newest", column="t"), records)[:3] == [2, 0, 1]


def test_newest_reads_datetime_and_numeric_columns():
    stamps = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2022-01-01", None, "2021-01-01",
                                                "2019-01-01"])})
    assert keeper(KeepPolicy("newest", column="t"), stamps) == ["r2"]
    years = pd.DataFrame({"t": [2001, 1999, np.nan, 2001, 2000]})
    assert ranks(KeepPolicy("newest", column="t"), years) == [1, 3, 4, 0, 2]


def test_most_complete_policy_object_matches_string():
    records = pd.DataFrame({"a": ["x", None, "x", "x", " "], "b": [None, None, "y", "y", "y"]})
    assert ranks("most_complete", records) == ranks(KeepPolicy("most_complete"), records)
    assert keeper("most_complete", records) == ["r1"]  # r3 and r1 tie; r1 is the smaller id


def test_longest_sums_text_over_columns():
    records = pd.DataFrame({"name": ["Jo", "Joanna", None, "Jo ", "Joanne"],
                            "city": ["Seoul", None, "Busan", "", "X"]})
    assert keeper(KeepPolicy("longest", column="name"), records) == ["r2"]
    # name+city: 7, 6, 5, 2, 7 -> r4 and r5 tie at 7; r4 wins by id.
    assert ranks(KeepPolicy("longest", column=["name", "city"]), records) == [0, 2, 3, 4, 1]


def test_highest_puts_missing_and_non_numeric_scores_last():
    records = pd.DataFrame({"score": ["0.5", "0.9", None, "n/a", "0.9"]})
    # 0.9 ties: r2 before r5; missing (r3) and "n/a" (r1) last, r1 first by id.
    assert ranks(KeepPolicy("highest", column="score"), records) == [2, 0, 4, 3, 1]


def test_source_priority_puts_unlisted_then_missing_sources_last():
    records = pd.DataFrame({"system": ["web", "billing", None, "legacy", "crm"]})
    policy = KeepPolicy("source_priority", column="system", order=["crm", "billing", "web"])
    assert ranks(policy, records) == [2, 1, 4, 3, 0]


def test_ranks_restart_in_each_cluster_and_k_keeps_the_top_k():
    records = pd.DataFrame({"score": [1, 5, 3, 4, 2]})
    clusters = np.array([0, 1, 0, 1, 0])
    policy = KeepPolicy("highest", column="score", k=2)
    r = keeper_rank(policy, records, clusters, id_rank(IDS))
    assert r.tolist() == [2, 0, 0, 1, 1]
    assert policy.kept(r).tolist() == [False, True, True, True, True]


def test_diverse_spreads_the_first_k_over_sources():
    records = pd.DataFrame({
        "system": ["crm", "crm", "web", "crm", None],
        "name": ["Kim Minjun long", "Kim", "Kim M", "Kim Minjun", "K"],
    })
    r = ranks(KeepPolicy("diverse", column="system", k=3), records)
    # Round 0: the longest crm (r4), web (r2), then the no-source record; then crm's next.
    assert r == [0, 4, 1, 3, 2]
    top = [records["system"][i] for i in np.argsort(r)[:3]]
    assert len(set(top)) == 3


def test_choose_representatives_accepts_a_policy_object():
    records = pd.DataFrame({"t": ["2020", "2021-06-01", "2019-01-01", None, "2018-01-01"]})
    clusters = np.array([0, 0, 1, 1, 1])
    rep = choose_representatives(clusters, id_rank(IDS), KeepPolicy("newest", column="t"), records)
    assert rep.tolist() == [1, 1, 2, 2, 2]


def test_coerce_takes_a_name_a_mapping_or_a_policy():
    policy = KeepPolicy("newest", column="updated_at")
    assert KeepPolicy.coerce(policy) is policy
    assert KeepPolicy.coerce("first") == KeepPolicy("first")
    assert KeepPolicy.coerce({"policy": "newest", "column": "updated_at"}) == policy
    assert KeepPolicy.from_dict(policy.to_dict()) == policy


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        (("newest",), {}, ["keep.column", "'newest'", "column: updated_at"]),
        (("highest",), {}, ["keep.column", "score column"]),
        (("source_priority",), {"column": "system"}, ["keep.order", "order: [crm, billing]"]),
        (("first",), {"column": "x"}, ["keep.column", "not used"]),
        (("newest",), {"column": "t", "order": ["a"]}, ["keep.order", "source_priority"]),
        (("first",), {"k": 0}, ["keep.k", "at least 1"]),
        (("newst",), {}, ["keep.policy", "Did you mean 'newest'"]),
    ],
)
def test_invalid_policies_say_what_to_fix(args, kwargs, words):
    with pytest.raises(RulesError) as err:
        KeepPolicy(*args, **kwargs)
    for word in words:
        assert word in str(err.value)


def test_yaml_errors_name_the_path():
    with pytest.raises(RulesError, match=r"rules: column is required for policy 'oldest'"):
        KeepPolicy.from_dict({"policy": "oldest"})
    with pytest.raises(RulesError, match="newest"):
        KeepPolicy.coerce("newest")


def test_missing_column_is_an_input_error_naming_the_setting():
    records = pd.DataFrame({"updated": ["2020-01-01"] * 5})
    with pytest.raises(InputError) as err:
        ranks(KeepPolicy("newest", column="updated_at"), records)
    message = str(err.value)
    assert "`updated_at`" in message and "keep.column" in message
    assert "Did you mean 'updated'" in message


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),
            st.one_of(st.none(), st.integers(-3, 3)),
            st.one_of(st.none(), st.sampled_from(["a", "b", "c", "", "2020-01-02", "x y"])),
        ),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["first", "oldest", "newest", "most_complete", "longest", "highest",
                     "source_priority", "diverse"]),
)
def test_every_cluster_has_ranks_zero_to_size_minus_one(rows, name):
    clusters = np.array([r[0] for r in rows])
    records = pd.DataFrame({"score": [r[1] for r in rows], "text": [r[2] for r in rows]},
                           dtype=object)
    column = {"oldest": "text", "newest": "text", "longest": "text", "highest": "score",
              "source_priority": "text", "diverse": "text"}.get(name)
    order = ["b", "a"] if name == "source_priority" else ()
    policy = KeepPolicy(name, column=column, order=order)
    ids = pd.Series(np.random.default_rng(len(rows)).permutation(len(rows)))
    r = keeper_rank(policy, records, clusters, id_rank(ids))
    for label in np.unique(clusters):
        assert sorted(r[clusters == label].tolist()) == list(range(int((clusters == label).sum())))
    assert (r == keeper_rank(policy, records, clusters, id_rank(ids))).all()


def test_a_run_keeps_the_smallest_id_of_each_cluster_and_names_it_representative():
    """End to end, `keep: first`: in every cluster of a run the record kept is the one whose id
    sorts first (the pipeline's own tie-break, not only `choose_representatives`'), and every
    record names it as its representative; the rest are the duplicates."""
    from pathlib import Path

    import yaml

    from linkage.api import dedupe
    from linkage.settings import Rules

    root = Path(__file__).resolve().parents[1]
    spec = yaml.safe_load((root / "rules/customers.yaml").read_text(encoding="utf-8"))
    spec["keep"] = "first"
    run = dedupe(root / "sample_data/customers.csv", Rules.from_dict(spec), progress=False)
    clusters = run.clusters
    ids = clusters["customer_id"].astype(str)
    smallest = ids.groupby(clusters["cluster_id"]).transform("min")
    assert (clusters["cluster_size"] > 1).sum() > 100  # many clusters to hold to it
    assert (clusters["representative_id"].astype(str) == smallest).all()
    kept = clusters["action"] == "keep"
    assert (ids[kept] == smallest[kept]).all() and (ids[~kept] != smallest[~kept]).all()
