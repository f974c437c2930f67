"""Guards on the Spark engine (`--engine spark`) against the local engine, on real local Spark.

The local engine is the oracle: with guards, a Spark run must give the very same tables
(clusters, pairs, kept records, review, guard decisions in the same order), byte for byte once
written, and the same summary but for its engine. Each case is chosen so that every guard in
it really acts (its local decisions are asserted non-empty): an agreement where no guard does
anything would prove nothing. One SparkSession serves the test run, and each case is run once
per engine and shared by the tests that read it.
"""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import linkage as lk
from linkage.cli import main
from linkage.errors import InputError
from linkage.result import Result
from tests.conftest import ROOT
from tests.test_spark import _same_result

# Every file a run writes with a row per record, pair or decision.
WRITTEN = ("clusters.parquet", "pairs.parquet", "deduplicated.parquet", "golden.parquet",
           "review.parquet", "guards.parquet")

# On the sample customers: listed out of stage order on purpose (thresholds run first, then
# the edge guards, then the record guards, which must see the clusters after the splits).
CUSTOMER_GUARDS = [
    {"type": "max_cluster_size", "size": 3},
    {"type": "conflicting_labels", "label": "city", "text": ["email"]},
    {"type": "must_not_link", "columns": ["postcode"]},
    {"type": "max_cluster_size", "size": 2, "action": "review", "name": "too_big"},
    {"type": "keep_up_to", "k": 2, "column": "source", "values": ["import"]},
    {"type": "domain_thresholds", "column": "source",
     "thresholds": {"import": 9.0, "crm": 2.0}},
]
CASES = {
    "transactions": ("transactions.csv", "transactions.yaml", None),  # distinct_events
    "labelled_text": ("labelled_text.csv", "labelled_text.yaml", None),  # labels, keep_up_to
    "customers": ("customers.csv", "customers.yaml", CUSTOMER_GUARDS),
}


def _rules(case: str) -> lk.Rules:
    """The case's rules (a fresh object for each run: fitting a scorer changes it)."""
    _, name, guards = CASES[case]
    path = ROOT / "rules" / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if guards is not None:
        data["guards"] = guards
    return lk.Rules.from_dict(data, source=str(path))


@pytest.fixture(scope="module")
def runs(spark):
    """(local, spark) results per case, run on first use."""
    done: dict[str, tuple[Result, Result]] = {}

    def get(case: str) -> tuple[Result, Result]:
        if case not in done:
            data = ROOT / "sample_data" / CASES[case][0]
            local = lk.dedupe(data, _rules(case), progress=False)
            on_spark = lk.dedupe(data, _rules(case), engine="spark", progress=False)
            done[case] = local, on_spark
        return done[case]

    return get


def _written(result: Result, folder) -> dict[str, bytes]:
    result.write(folder)
    return {name: (folder / name).read_bytes() for name in WRITTEN if (folder / name).exists()}


@pytest.mark.parametrize("case", list(CASES))
def test_guards_on_spark_decide_as_local(runs, case, tmp_path):
    local, on_spark = runs(case)
    # Not vacuous: every guard of the rules made decisions.
    decided = local.guard_decisions["guard"].value_counts()
    for guard in _rules(case).guards:
        assert decided.get(guard.guard_name, 0) > 0, guard.guard_name
    _same_result(local, on_spark)
    # The decisions, in the same order (the summary only counts them).
    pd.testing.assert_frame_equal(on_spark.guard_decisions, local.guard_decisions)
    written = _written(on_spark, tmp_path / "spark")
    assert written == _written(local, tmp_path / "local")
    assert "guards.parquet" in written


def test_distinct_events_unmatch_and_preserve_on_spark(runs):
    local, on_spark = runs("transactions")
    pairs = on_spark.pairs
    # Pairs above the threshold that the guard unmatched: separate purchases, not copies.
    unmatched = (pairs["match_weight"] >= 5.0) & ~pairs["is_match"]
    assert unmatched.sum() > 0
    actions = on_spark.clusters["action"].value_counts()
    assert actions["preserved"] == local.summary_data["actions"]["preserved"] > 0
    assert actions["duplicate"] > 0  # double loads still go


def test_keep_up_to_keeps_several_copies_on_spark(runs):
    """The keeper honours the guard's keep limit: protected clusters keep up to k copies."""
    _, on_spark = runs("labelled_text")
    clusters = on_spark.clusters
    kept = clusters[clusters["action"] == "keep"].groupby("cluster_id").size()
    assert kept.max() > 1
    assert set(on_spark.review["review_group"].str.split(":").str[0]) == {"conflicting_labels"}


def test_edge_guards_recluster_on_spark(runs):
    """The clusters are the components of the guarded pairs: none is above the size."""
    local, on_spark = runs("customers")
    assert on_spark.summary_data["stages"]["cluster"]["largest_cluster"] == 3
    unguarded = lk.dedupe(ROOT / "sample_data" / "customers.csv",
                          lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml"), progress=False)
    assert unguarded.summary_data["stages"]["cluster"]["largest_cluster"] == 4
    matched = on_spark.pairs["is_match"]
    assert matched.sum() != unguarded.pairs["is_match"].sum()
    pd.testing.assert_series_equal(matched, local.pairs["is_match"])


def test_explain_shows_the_local_guard_decisions(runs, tmp_path):
    """`linkage explain` on a Spark run prints, for a record several guards touched, the
    decisions the local run printed; `result.guard_decisions` and a loaded run agree."""
    local, on_spark = runs("customers")
    decisions = local.guard_decisions
    touched = decisions.groupby("record_id")["guard"].nunique()
    record = str(touched[touched >= 3].index[0])
    local.write(tmp_path / "local")
    on_spark.write(tmp_path / "spark")
    printed = []
    for run_dir in (tmp_path / "local", tmp_path / "spark"):
        done = CliRunner().invoke(main, ["explain", str(run_dir), record])
        assert done.exit_code == 0, done.output
        printed.append(done.output)
    assert printed[0] == printed[1]
    mine = decisions[decisions["record_id"] == record]
    assert len(mine) >= 3
    for _, row in mine.iterrows():
        assert f"guard {row['guard']}: {row['decision']} ({row['detail']})" in printed[1]
    loaded = Result.load(tmp_path / "spark").guard_decisions
    pd.testing.assert_frame_equal(
        loaded[loaded["record_id"] == record].reset_index(drop=True),
        mine.reset_index(drop=True))
    assert record in on_spark.explain(record) and on_spark.explain(record) == local.explain(
        record)


def _purchases() -> pd.DataFrame:
    """Six small clusters A ~ B ~ C (names one edit apart; A and C two edits, not matched),
    in which A and C are the same purchase from other batches: two separate events chained
    through B. In the last, B is that purchase too (a direct pair). D is alone by its name,
    with A's text written differently."""
    rows = []
    for g in range(6):
        day, hour = "2025-01-01", f"2025-01-0{g + 1}T10:00:"
        rows += [
            {"id": f"{g}A", "grp": g, "name": "aaaaaaaaaa", "item": "latte", "day": day,
             "batch": "b1", "ts": hour + "00", "label": "x", "text": f"hello {g}"},
            {"id": f"{g}B", "grp": g, "name": "aaaaaaaaab", "item": "latte" if g == 5
             else "mocha", "day": day, "batch": "b2", "ts": hour + "10", "label": "x",
             "text": f"other {g}"},
            {"id": f"{g}C", "grp": g, "name": "aaaaaaaabb", "item": "latte", "day": day,
             "batch": "b3" if g % 2 else "b1", "ts": hour + "30",
             "label": "y" if g % 3 == 0 else "x", "text": f"third {g}"},
            {"id": f"{g}D", "grp": 100 + g, "name": "zzzz", "item": "tea", "day": day,
             "batch": "b1", "ts": None, "label": "z", "text": f"HELLO  {g}"},
        ]
    return pd.DataFrame(rows)


def _purchase_rules(guards: list[dict], threshold: float = 2.0, **more) -> lk.Rules:
    return lk.Rules.from_dict({
        "id_column": "id", "blocking": [{"keys": [["grp"]]}],
        "comparisons": [{"type": "levenshtein", "column": "name", "thresholds": [0.9]}],
        "scoring": {"type": "rule_sum", "threshold": threshold,
                    "weights": {"name": {"exact": 3.0, ">=0.9": 2.0, "else": -5.0}}},
        "guards": guards, **more}, source="purchases.yaml")


def _assert_same_tables(local, on_spark, names) -> None:
    for name in names:
        expected, got = getattr(local, name), getattr(on_spark, name)
        if expected is None:
            assert got is None, name
        else:
            pd.testing.assert_frame_equal(got, expected, obj=name)


def test_chained_events_then_record_guards_on_spark(spark):
    """Separate events chained through a third record are split (the chained path, not a
    direct pair); the record guards after it see the clusters as split."""
    guards = [  # record guards run in list order: the events first
        {"type": "distinct_events", "key": ["item", "day"],
         "double_load": {"same": ["batch"], "within_seconds": {"ts": 60}}},
        {"type": "conflicting_labels", "label": "label"},
        {"type": "keep_up_to", "k": 2, "column": "label", "pattern": "^y$"},
    ]
    frame = _purchases()
    local = lk.dedupe(frame, _purchase_rules(guards), progress=False)
    on_spark = lk.dedupe(frame, _purchase_rules(guards), engine="spark", progress=False)
    _same_result(local, on_spark)
    _assert_same_tables(local, on_spark, ["guard_decisions"])
    details = on_spark.guard_decisions.groupby("guard")["detail"].apply(list)
    assert sum("another record of its cluster" in d for d in details["distinct_events"]) == 10
    # After the split, B and C (labels x and y) are one cluster: review, and keep up to 2.
    review = on_spark.review
    assert set(review["id"]) == {"0B", "0C", "3B", "3C"}
    assert len(details["keep_up_to"]) == 4


def test_guards_in_link_mode_with_one_to_one_on_spark(spark):
    frame = _purchases()
    left, right = frame.iloc[::2].reset_index(drop=True), frame.iloc[1::2].reset_index(drop=True)
    guards = [{"type": "must_not_link", "columns": ["item"]}]
    runs = [lk.link(left, right, _purchase_rules(guards, threshold=-10.0, one_to_one=True),
                    engine=engine, progress=False) for engine in ("local", "spark")]
    local, on_spark = runs
    assert (local.guard_decisions["decision"] == "split").sum() > 0
    _same_result(local, on_spark)
    _assert_same_tables(local, on_spark, ["guard_decisions"])


def test_unreadable_timestamps_fail_with_the_local_message(spark):
    """A guard's bad input is told as locally: the timestamps are read from the whole column
    on the driver, so the message names the same record and value."""
    frame = _purchases()
    frame.loc[frame["id"] == "3C", "ts"] = "half past ten"
    guards = [{"type": "distinct_events", "key": ["item", "day"],
               "double_load": {"within_seconds": {"ts": 60}}}]
    messages = []
    for engine in ("local", "spark"):
        with pytest.raises(InputError) as caught:
            lk.dedupe(frame, _purchase_rules(guards), engine=engine, progress=False)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "guards[0]" in messages[1] and "'3C'" in messages[1] and "half past ten" in messages[1]
