"""`linkage forget`: every copy found, the new representative is the keeper's pick, and the
original run is never touched."""

from __future__ import annotations

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
