"""`linkage forget`: every copy found, the new representative is the keeper's pick, and the
original run is never touched."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from linkage.keep import completeness
from tests.conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forget")
    shutil.copy(ROOT / "sample_data" / "customers.csv", folder / "customers.csv")
    done = run_cli("dedupe", folder / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", folder / "run")
    assert done.returncode == 0, done.stderr
    return folder / "run"


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _a_kept_record_with_copies(run_dir):
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    keeper = clusters[(clusters["cluster_size"] >= 3) & (clusters["action"] == "keep")].iloc[0]
    return clusters, keeper


def test_forget_removes_every_copy(run_dir, tmp_path):
    before = _snapshot(run_dir)
    clusters, keeper = _a_kept_record_with_copies(run_dir)
    members = set(clusters.loc[clusters["cluster_id"] == keeper["cluster_id"], "customer_id"])
    duplicate = sorted(members - {keeper["customer_id"]})[0]
    done = run_cli("forget", run_dir, duplicate, "--out", tmp_path / "new")  # any copy works
    assert done.returncode == 0, done.stderr
    after = pd.read_parquet(tmp_path / "new" / "clusters.parquet")
    assert not set(after["customer_id"]) & members
    assert len(after) == len(clusters) - len(members)
    pairs = pd.read_parquet(tmp_path / "new" / "pairs.parquet")
    assert not (set(pairs["id_l"]) | set(pairs["id_r"])) & members
    dedup = pd.read_parquet(tmp_path / "new" / "deduplicated.parquet")
    assert not set(dedup["customer_id"]) & members
    assert _snapshot(run_dir) == before  # the original run is untouched


def test_the_new_report_names_none_of_the_forgotten(run_dir, tmp_path):
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    largest = clusters.sort_values(["cluster_size", "cluster_id"], ascending=[False, True])
    members = set(clusters.loc[clusters["cluster_id"] == largest["cluster_id"].iloc[0],
                               "customer_id"])
    old_report = (run_dir / "report.html").read_text(encoding="utf-8")
    assert all(m in old_report for m in members)  # the largest cluster is listed by id
    done = run_cli("forget", run_dir, sorted(members)[0], "--out", tmp_path / "new")
    assert done.returncode == 0, done.stderr
    new_report = (tmp_path / "new" / "report.html").read_text(encoding="utf-8")
    assert not [m for m in members if m in new_report]


def test_forget_one_record_picks_the_keepers_next_choice(run_dir, tmp_path):
    _clusters, keeper = _a_kept_record_with_copies(run_dir)
    done = run_cli("forget", run_dir, keeper["customer_id"], "--only-record", "--out",
                   tmp_path / "new")
    assert done.returncode == 0, done.stderr
    after = pd.read_parquet(tmp_path / "new" / "clusters.parquet")
    rest = after[after["cluster_id"] == keeper["cluster_id"]]
    assert len(rest) == keeper["cluster_size"] - 1
    # The policy is most_complete, ties by id: recompute it from the input by hand.
    records = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    candidates = records[records["customer_id"].isin(rest["customer_id"])].copy()
    candidates["filled"] = completeness(candidates)
    expected = candidates.sort_values(["filled", "customer_id"], ascending=[False, True]).iloc[0]
    assert set(rest["representative_id"]) == {expected["customer_id"]}
    assert (rest.set_index("customer_id").loc[expected["customer_id"], "action"]) == "keep"
    assert f"new representative {expected['customer_id']}" in done.stdout
    dedup = pd.read_parquet(tmp_path / "new" / "deduplicated.parquet")
    assert expected["customer_id"] in set(dedup["customer_id"])
    assert keeper["customer_id"] not in set(dedup["customer_id"])


def test_forget_by_column_value(run_dir, tmp_path):
    records = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    email = records["email"].dropna().iloc[5]
    done = run_cli("forget", run_dir, "--column", "email", "--value", email, "--out",
                   tmp_path / "new")
    assert done.returncode == 0, done.stderr
    after = pd.read_parquet(tmp_path / "new" / "clusters.parquet")
    assert not set(records.loc[records["email"] == email, "customer_id"]) & set(
        after["customer_id"])


def test_forget_unknown_id_and_changed_input(run_dir, tmp_path):
    done = run_cli("forget", run_dir, "NOPE", "--out", tmp_path / "new")
    assert done.returncode == 2 and "NOPE" in done.stderr
    assert not (tmp_path / "new").exists()
    source = run_dir.parent / "customers.csv"
    original = source.read_bytes()
    try:
        source.write_bytes(original + b"C-999999,x,,,,,,,,web,2020-01-01\n")
        _clusters, keeper = _a_kept_record_with_copies(run_dir)
        done = run_cli("forget", run_dir, keeper["customer_id"], "--only-record", "--out",
                       tmp_path / "new")
        assert done.returncode == 2 and "changed since the run" in done.stderr
    finally:
        source.write_bytes(original)


# --- incremental forget: stable ids and lineage ------------------------------------------------

BRIDGE_RULES = {
    "id_column": "id",
    "blocking": [{"name": "contact", "keys": [["email"], ["phone"]]}],
    "comparisons": [{"type": "exact", "column": "name"}, {"type": "exact", "column": "email"},
                    {"type": "exact", "column": "phone"}],
    "scoring": {"type": "rule_sum", "threshold": 3.0,
                "weights": {"name": {"exact": 1.0, "else": -1.0},
                            "email": {"exact": 3.0, "else": -1.0},
                            "phone": {"exact": 3.0, "else": -1.0}}},
    "keep": "first",
}
BRIDGE = [  # c2 holds {c1} and {c3, c4} together: c1-c2 share an e-mail, c2-c3-c4 a phone
    ("a1", "ann", "a@x", "100"), ("a2", "ann", "a@x", "100"),
    ("c1", "cat", "c@x", "600"), ("c2", "cat", "c@x", "601"),
    ("c3", "cat", None, "601"), ("c4", "cat", None, "601"),
    ("s1", "sue", "s@x", "500"),
]


@pytest.fixture()
def bridge_run(tmp_path):
    from linkage.settings import Rules

    Rules.from_dict(BRIDGE_RULES).to_yaml(tmp_path / "rules.yaml")
    pd.DataFrame(BRIDGE, columns=["id", "name", "email", "phone"]).to_csv(
        tmp_path / "in.csv", index=False)
    done = run_cli("dedupe", tmp_path / "in.csv", "--rules", tmp_path / "rules.yaml", "--out",
                   tmp_path / "run")
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_forgetting_a_bridge_splits_and_the_larger_part_keeps_the_id(bridge_run):
    before = pd.read_parquet(bridge_run / "run" / "clusters.parquet").set_index("id")
    c = before.loc["c1", "cluster_id"]
    assert set(before.loc[["c1", "c2", "c3", "c4"], "cluster_id"]) == {c}
    done = run_cli("forget", bridge_run / "run", "c2", "--only-record", "--out",
                   bridge_run / "new")
    assert done.returncode == 0, done.stderr
    after = pd.read_parquet(bridge_run / "new" / "clusters.parquet").set_index("id")
    assert "c2" not in after.index
    assert after.loc["c3", "cluster_id"] == after.loc["c4", "cluster_id"] == c  # larger part
    fresh = after.loc["c1", "cluster_id"]
    assert fresh == before["cluster_id"].max() + 1  # a new id, never a reused one
    assert after.loc["c1", "representative_id"] == "c1" and after.loc["c1", "action"] == "keep"
    assert after.loc["c1", "cluster_size"] == 1 and after.loc["c3", "cluster_size"] == 2
    assert set(after.loc[["c3", "c4"], "representative_id"]) == {"c3"}
    for other in ("a1", "a2", "s1"):  # untouched clusters keep their ids
        assert after.loc[other, "cluster_id"] == before.loc[other, "cluster_id"]
    lineage = pd.read_parquet(bridge_run / "new" / "lineage.parquet")
    rows = {(r.event, r.old_cluster_id, r.new_cluster_id, tuple(r.record_ids))
            for r in lineage.itertuples()}
    assert rows == {("forget", c, c, ("c2",)), ("split", c, fresh, ("c1",))}
    assert f"became cluster(s) {fresh}" in done.stdout
    summary = json.loads((bridge_run / "new" / "summary.json").read_text())
    assert summary["cluster_ids"]["step"] == 1
    assert summary["cluster_ids"]["next_cluster_id"] == fresh + 1
    dedup = pd.read_parquet(bridge_run / "new" / "deduplicated.parquet")
    assert set(dedup["id"]) == {"a1", "c1", "c3", "s1"}


def test_forgetting_a_cluster_writes_its_lineage_and_keeps_the_other_ids(bridge_run):
    before = pd.read_parquet(bridge_run / "run" / "clusters.parquet").set_index("id")
    done = run_cli("forget", bridge_run / "run", "a2", "--out", bridge_run / "new")
    assert done.returncode == 0, done.stderr
    after = pd.read_parquet(bridge_run / "new" / "clusters.parquet").set_index("id")
    assert (after["cluster_id"] == before.loc[after.index, "cluster_id"]).all()
    lineage = pd.read_parquet(bridge_run / "new" / "lineage.parquet")
    assert len(lineage) == 1
    row = lineage.iloc[0]
    assert row["event"] == "forget" and row["old_cluster_id"] == before.loc["a1", "cluster_id"]
    assert pd.isna(row["new_cluster_id"]) and sorted(row["record_ids"]) == ["a1", "a2"]


def test_forgotten_records_never_come_back_through_an_update(bridge_run):
    from linkage.update import update

    # run -> forget (the run has no records.parquet: the input file is read and filtered)
    done = run_cli("forget", bridge_run / "run", "s1", "--out", bridge_run / "f1")
    assert done.returncode == 0, done.stderr
    new = pd.DataFrame([("n1", "ann", "a@x", "102"), ("n2", "sue", "s@x", "500")],
                       columns=["id", "name", "email", "phone"])
    first = update(bridge_run / "f1", new, out=bridge_run / "u1")
    assert "s1" not in set(first.result.clusters["id"])
    assert "s1" not in set(pd.read_parquet(bridge_run / "u1" / "records.parquet")["id"])
    # update -> forget (records.parquet is passed on without the forgotten record) -> update
    done = run_cli("forget", bridge_run / "u1", "n1", "--only-record", "--out",
                   bridge_run / "f2")
    assert done.returncode == 0, done.stderr
    records = pd.read_parquet(bridge_run / "f2" / "records.parquet")
    assert "n1" not in set(records["id"]) and "a1" in set(records["id"])
    second = update(bridge_run / "f2", pd.DataFrame([("n3", "zed", "z@x", "900")],
                                                   columns=["id", "name", "email", "phone"]),
                    out=bridge_run / "u2")
    ids = set(second.result.clusters["id"])
    assert not ids & {"s1", "n1"} and {"n2", "n3"} <= ids
    lineage = pd.read_parquet(bridge_run / "u2" / "lineage.parquet")
    assert sorted(lineage["step"].unique()) == [1, 2, 3, 4]
    assert set(lineage.loc[lineage["step"] == 3, "event"]) == {"forget"}
    # ids stay stable through all of it: a1's cluster kept its first id
    first_id = pd.read_parquet(bridge_run / "run" / "clusters.parquet").set_index("id").loc[
        "a1", "cluster_id"]
    assert second.result.clusters.set_index("id").loc["a1", "cluster_id"] == first_id
