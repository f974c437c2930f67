"""Incremental linking: `update` equals a full re-run, cluster ids stay stable with a complete
lineage, updates chain, and `match` looks records up without changing the run.

Real runs on FEBRL3 (ids made opaque as in test_febrl.py, so no truth reaches the code) and on
the sample customers; a small hand-made table where a merge and must-not-link splits happen.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

import linkage as lk
from linkage.errors import InputError, LinkageWarning
from linkage.result import Result
from linkage.settings import Rules
from linkage.update import update
from tests.conftest import ROOT, nulls_as_none, run_cli, run_clis
from tests.test_febrl import _opaque, _read_febrl

FEBRL_FS = {"type": "fellegi_sunter", "threshold": 0.0, "u_estimation": "random",
            "u_sample_size": 50000, "seed": 7}


# --- helpers: oracles written apart from the code under test ---------------------------------

def _partition(clusters: pd.DataFrame, id_column: str) -> set[frozenset]:
    """The clusters as sets of record ids: equal partitions whatever the ids' numbers."""
    groups = clusters.groupby("cluster_id")[id_column].agg(lambda s: frozenset(map(str, s)))
    return set(groups)


def _check_lineage(old: pd.DataFrame, new: pd.DataFrame, lineage: pd.DataFrame, step: int,
                   id_column: str, added: set[str]) -> None:
    """Every old id goes to exactly one new id, every new id is old or created by a `new` or
    `split` row, every added record is in one `new`/`absorb` row, every moved record in a
    `merge`/`split` row."""
    rows = lineage[lineage["step"] == step]
    old_ids = set(old["cluster_id"].astype(int))
    new_ids = set(new["cluster_id"].astype(int))
    merged = rows[rows["event"] == "merge"]
    assert merged["old_cluster_id"].is_unique
    for cluster in old_ids:
        goes = merged.loc[merged["old_cluster_id"] == cluster, "new_cluster_id"].tolist()
        if goes:
            assert cluster not in new_ids and len(goes) == 1 and goes[0] in new_ids
            assert goes[0] < cluster  # the oldest id survives
        else:
            assert cluster in new_ids, f"old cluster {cluster} vanished without a lineage row"
    created = rows[rows["event"].isin(["new", "split"])]
    for cluster in new_ids - old_ids:
        assert cluster in set(created["new_cluster_id"].astype(int)), cluster
        assert cluster >= max(old_ids) + 1  # ids are never reused
    assert not (set(created["new_cluster_id"].astype(int)) & old_ids)
    joined = rows[rows["event"].isin(["new", "absorb"])]["record_ids"].explode()
    assert sorted(joined) == sorted(added)
    before = dict(zip(old[id_column].astype(str), old["cluster_id"], strict=True))
    after = dict(zip(new[id_column].astype(str), new["cluster_id"], strict=True))
    moved = {r for r, c in before.items() if after[r] != c}
    listed = rows[rows["event"].isin(["merge", "split"])]["record_ids"].explode()
    assert sorted(listed.dropna()) == sorted(moved)


def _same_run(incremental, full, id_column: str) -> None:
    """The update's outputs are a full run's, but for the cluster ids."""
    assert _partition(incremental.clusters, id_column) == _partition(full.clusters, id_column)
    pd.testing.assert_frame_equal(incremental.pairs, full.pairs)
    pd.testing.assert_frame_equal(incremental.clusters.drop(columns="cluster_id"),
                                  full.clusters.drop(columns="cluster_id"))
    # A missing text is None when read back from records.parquet and NaN from a CSV on
    # pandas 2.2 (both are null once written); compare them as missing.
    pd.testing.assert_frame_equal(nulls_as_none(incremental.deduplicated),
                                  nulls_as_none(full.deduplicated))
    for stage in ("block", "compare", "score", "cluster", "guard"):
        assert incremental.summary_data["stages"][stage] == full.summary_data["stages"][stage]


def _split(frame: pd.DataFrame, shares: list[float], folder, stem: str) -> list:
    """Consecutive slices of `frame` as CSV files (deterministic: no shuffling here)."""
    paths, start = [], 0
    for k, share in enumerate(shares):
        end = len(frame) if k == len(shares) - 1 else start + round(share * len(frame))
        path = folder / f"{stem}_{k}.csv"
        frame.iloc[start:end].to_csv(path, index=False)
        paths.append(path)
        start = end
    frame.to_csv(folder / f"{stem}_all.csv", index=False)
    return paths


# --- (a) FEBRL3 80/20 --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def febrl(tmp_path_factory, datasets):
    folder = tmp_path_factory.mktemp("febrl")
    frame, _hidden = _opaque(_read_febrl(datasets / "febrl" / "dataset3.csv"), "inc")
    old, new = _split(frame, [0.8, 0.2], folder, "febrl")
    return folder, old, new, folder / "febrl_all.csv"


@pytest.mark.parametrize("scorer", ["rule_sum", "fellegi_sunter"])
def test_febrl3_update_equals_a_full_rerun(febrl, tmp_path, scorer):
    _folder, old_csv, new_csv, all_csv = febrl
    rules = Rules.from_yaml(ROOT / "rules" / "febrl.yaml")
    if scorer == "fellegi_sunter":
        data = rules.to_dict()
        data["scoring"] = FEBRL_FS
        rules = Rules.from_dict(data)
    first = lk.dedupe(old_csv, rules, progress=False)
    first.write(tmp_path / "run")
    done = update(tmp_path / "run", new_csv, out=tmp_path / "next")
    model = tmp_path / "run" / "model.json" if scorer == "fellegi_sunter" else None
    full = lk.dedupe(all_csv, rules, progress=False, model=model)
    _same_run(done.result, full, "rec_id")
    # Only the pairs with a new record were blocked, compared and scored.
    new_ids = set(pd.read_csv(new_csv, dtype=str)["rec_id"])
    with_new = full.pairs["id_l"].isin(new_ids) | full.pairs["id_r"].isin(new_ids)
    assert done.result.summary_data["update"]["new_pairs"] == int(with_new.sum())
    if model is not None:  # scored with the saved model, not a refit
        assert (tmp_path / "next" / "model.json").read_bytes() == model.read_bytes()
    old_clusters = pd.read_parquet(tmp_path / "run" / "clusters.parquet")
    _check_lineage(old_clusters, done.result.clusters, done.lineage, 1, "rec_id", new_ids)


# --- (b) and (d): the sample customers, updates chained ---------------------------------------

@pytest.fixture(scope="module")
def customers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("customers")
    frame = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    parts = _split(frame, [0.6, 0.2, 0.2], folder, "customers")
    return folder, parts, folder / "customers_all.csv"


def test_customers_update_equals_a_full_rerun_and_chains(customers, tmp_path):
    _folder, parts, all_csv = customers
    rules = ROOT / "rules" / "customers.yaml"
    lk.dedupe(parts[0], rules, progress=False).write(tmp_path / "run0")
    runs = [tmp_path / "run0"]
    for step, part in enumerate(parts[1:], start=1):
        done = update(runs[-1], part, out=tmp_path / f"run{step}")
        runs.append(tmp_path / f"run{step}")
        before = pd.read_parquet(runs[-2] / "clusters.parquet")
        added = set(pd.read_csv(part, dtype=str)["customer_id"])
        _check_lineage(before, done.result.clusters, done.lineage, step, "customer_id", added)
    full = lk.dedupe(all_csv, rules, progress=False)
    _same_run(done.result, full, "customer_id")
    golden = done.result.golden.set_index("cluster_id")
    ids = dict(zip(full.clusters["cluster_id"], done.result.clusters["cluster_id"], strict=True))
    expected = full.golden.assign(cluster_id=full.golden["cluster_id"].map(ids))
    pd.testing.assert_frame_equal(golden.sort_index(), expected.set_index("cluster_id")
                                  .sort_index())
    # The lineage of the last run holds both steps; the counter only grows.
    lineage = pd.read_parquet(runs[-1] / "lineage.parquet")
    assert sorted(lineage["step"].unique()) == [1, 2]
    summaries = [Result.load(r).summary_data for r in runs]
    counters = [s.get("cluster_ids", {}).get("next_cluster_id", 0) for s in summaries]
    assert counters[1] <= counters[2]
    assert summaries[2]["cluster_ids"]["step"] == 2
    # Its report shows records as a full run's does, removed records among them.
    shown = pd.read_parquet(runs[-1] / "report_records.parquet")
    clusters = done.result.clusters.set_index("customer_id")
    assert len(shown) > 0 and set(shown["customer_id"]) <= set(clusters.index)
    assert (clusters.loc[shown["customer_id"], "action"] == "duplicate").any()
    # The chained run carries its records: old and new, in order.
    records = pd.read_parquet(runs[-1] / "records.parquet")
    assert records["customer_id"].tolist() == pd.read_csv(all_csv, dtype=str)["customer_id"]\
        .tolist()


def test_ids_stay_when_clusters_stay_together(customers, tmp_path):
    _folder, parts, _all = customers
    lk.dedupe(parts[0], ROOT / "rules" / "customers.yaml", progress=False).write(tmp_path / "r")
    done = update(tmp_path / "r", parts[1], out=tmp_path / "u")
    before = pd.read_parquet(tmp_path / "r" / "clusters.parquet")
    after = done.result.clusters.set_index("customer_id")["cluster_id"]
    merges = done.lineage[done.lineage["event"] == "merge"]
    kept = 0
    for cluster, members in before.groupby("cluster_id")["customer_id"]:
        now = set(after[members.tolist()])
        if len(now) == 1:
            (target,) = now
            if target == cluster:
                kept += 1
            else:  # joined an older cluster, and the lineage says so
                row = merges[merges["old_cluster_id"] == cluster]
                assert len(row) == 1 and row["new_cluster_id"].iloc[0] == target < cluster
    assert kept >= 0.95 * before["cluster_id"].nunique()


def test_update_with_the_exact_stage_minhash_and_review_guards(tmp_path):
    """rules/documents.yaml less its `semantic:` stage (k-means clusters change with every
    record, so update refuses it): exact copies, MinHash blocking, a review guard."""
    data = Rules.from_yaml(ROOT / "rules" / "documents.yaml").to_dict()
    data.pop("semantic")
    rules = Rules.from_dict(data)
    frame = pd.read_csv(ROOT / "sample_data" / "labelled_text.csv", dtype=str)
    old, new = _split(frame, [0.8, 0.2], tmp_path, "docs")
    lk.dedupe(old, rules, progress=False).write(tmp_path / "run")
    done = update(tmp_path / "run", new, out=tmp_path / "next")
    full = lk.dedupe(tmp_path / "docs_all.csv", rules, progress=False)
    _same_run(done.result, full, "doc_id")
    assert full.review is not None and len(full.review) > 0
    ids = dict(zip(full.clusters["cluster_id"], done.result.clusters["cluster_id"], strict=True))
    pd.testing.assert_frame_equal(
        done.result.review, full.review.assign(cluster_id=full.review["cluster_id"].map(ids)))
    # match finds a short text's exact copy (too short for MinHash) through the exact stage
    run = Result.load(tmp_path / "next")
    records = pd.read_parquet(tmp_path / "next" / "records.parquet")
    short = records[records["text"].str.split().str.len() < 4].iloc[[0]]
    found = run.match(short.assign(doc_id="Q-1"))
    mine = run.clusters.set_index("doc_id").loc[short["doc_id"].iloc[0], "cluster_id"]
    assert found["cluster_id"].iloc[0] == mine and bool(found["above_threshold"].iloc[0])
    with_semantic = Rules.from_yaml(ROOT / "rules" / "documents.yaml")
    with_semantic.to_yaml(tmp_path / "run" / "rules.yaml")
    with pytest.raises(InputError, match="semantic"):
        update(tmp_path / "run", new)


# --- (c) merge and must-not-link splits, by hand ----------------------------------------------

SMALL_RULES = {
    "id_column": "id",
    "normalize": [{"column": "name", "type": "name"}],
    "blocking": [{"name": "contact", "keys": [["email"], ["phone"]]}],
    "comparisons": [{"type": "exact", "column": "name"}, {"type": "exact", "column": "email"},
                    {"type": "exact", "column": "phone"}],
    "scoring": {"type": "rule_sum", "threshold": 3.0,
                "weights": {"name": {"exact": 1.0, "else": -1.0},
                            "email": {"exact": 3.0, "else": -1.0},
                            "phone": {"exact": 3.0, "else": -1.0}}},
    "guards": [{"type": "must_not_link", "columns": ["national_id"]}],
    "keep": "first",
}
COLUMNS = ["id", "name", "email", "phone", "national_id"]
OLD = [  # clusters A {a1,a2}, B {b1,b2}, K {k1,k2,k3}, T {t1,t2}, S {s1}
    ("a1", "ann", "a@x", "100", None), ("a2", "ann", "a@x", "101", None),
    ("b1", "ann", "b@x", "200", None), ("b2", "ann", "b@x", "200", None),
    ("k1", "kim", "k@x", "300", "111"), ("k2", "kim", "k@x", "300", "111"),
    ("k3", "kim", "k@x", "301", None),
    ("t1", "tom", "t@x", "400", "333"), ("t2", "tom", "t@x", "401", None),
    ("s1", "sue", "s@x", "500", None),
]
NEW = [
    ("n1", "ann", "a@x", "200", None),  # bridges A and B: a merge
    ("n2", "kim", None, "301", "222"),  # joins k3, whose cluster holds 111: a split
    ("n3", "tom", None, "401", "444"),  # joins t2: a split into two parts of one old record
    ("n4", "zed", "z@x", "900", None),  # nobody: a new cluster
    ("n5", "sue", "s@x", "501", None),  # joins s1: absorbed
]


@pytest.fixture()
def small(tmp_path):
    Rules.from_dict(SMALL_RULES).to_yaml(tmp_path / "rules.yaml")
    pd.DataFrame(OLD, columns=COLUMNS).to_csv(tmp_path / "old.csv", index=False)
    pd.DataFrame(NEW, columns=COLUMNS).to_csv(tmp_path / "new.csv", index=False)
    lk.dedupe(tmp_path / "old.csv", tmp_path / "rules.yaml").write(tmp_path / "run")
    return tmp_path


def test_merge_keeps_the_oldest_id_and_splits_keep_the_larger_part(small):
    before = pd.read_parquet(small / "run" / "clusters.parquet").set_index("id")["cluster_id"]
    a, b, k, t, s = (before[x] for x in ("a1", "b1", "k1", "t1", "s1"))
    assert a < b  # A was made first: A's id is the older one
    done = update(small / "run", small / "new.csv", out=small / "next")
    after = done.result.clusters.set_index("id")["cluster_id"]
    fresh = Result.load(small / "run").summary_data.get("cluster_ids", {}).get(
        "next_cluster_id", int(before.max()) + 1)
    # merge: the oldest id survives, for every record of both clusters and the bridge
    assert set(after[["a1", "a2", "b1", "b2", "n1"]]) == {a}
    # must-not-link: {k1, k2} (2 old records) keep K; {k3, n2} is a new cluster
    assert set(after[["k1", "k2"]]) == {k}
    assert after["k3"] == after["n2"] and after["k3"] >= fresh
    # a tie (one old record each side): the part with the oldest record, t1, keeps T
    assert after["t1"] == t and after["t2"] == after["n3"] != t and after["t2"] >= fresh
    assert after["s1"] == after["n5"] == s
    assert after["n4"] >= fresh
    assert len({after["k3"], after["t2"], after["n4"]}) == 3
    rows = {(r.event, r.old_cluster_id if pd.notna(r.old_cluster_id) else None,
             int(r.new_cluster_id), tuple(r.record_ids))
            for r in done.lineage.itertuples()}
    assert rows == {
        ("absorb", a, a, ("n1",)), ("merge", b, a, ("b1", "b2")),
        ("split", k, after["k3"], ("k3",)), ("absorb", after["k3"], after["k3"], ("n2",)),
        ("split", t, after["t2"], ("t2",)), ("absorb", after["t2"], after["t2"], ("n3",)),
        ("new", None, after["n4"], ("n4",)), ("absorb", s, s, ("n5",)),
    }
    _check_lineage(before.reset_index(), done.result.clusters, done.lineage, 1, "id",
                   {r[0] for r in NEW})
    # the same partition as a full run over all records
    both = pd.concat([pd.read_csv(small / "old.csv", dtype=str),
                      pd.read_csv(small / "new.csv", dtype=str)], ignore_index=True)
    full = lk.dedupe(both, small / "rules.yaml")
    _same_run(done.result, full, "id")
    # the guard's decisions are in the new run, for `explain`
    assert set(done.result.guard_decisions["record_id"]) >= {"k1", "k3", "n2", "t2", "n3"}


# --- (e) match ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def customer_run(tmp_path_factory):
    """A CLI run on 80% of the customers (its input where summary.json says), the rest."""
    folder = tmp_path_factory.mktemp("match")
    frame = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    old, new = _split(frame, [0.8, 0.2], folder, "c")
    done = run_cli("dedupe", old, "--rules", ROOT / "rules" / "customers.yaml", "--out",
                   folder / "run")
    assert done.returncode == 0, done.stderr
    return folder / "run", old, new


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_match_finds_the_known_customer_and_not_the_stranger(customer_run):
    run_dir, old_csv, _new = customer_run
    before = _snapshot(run_dir)
    run = Result.load(run_dir)
    clusters = run.clusters.copy()
    records = pd.read_csv(old_csv, dtype=str)
    big = clusters[clusters["cluster_size"] >= 3].iloc[0]
    known = records[records["customer_id"] == big["customer_id"]].assign(customer_id="NEW-1")
    found = run.match(known)
    best = found.iloc[0]
    assert best["cluster_id"] == big["cluster_id"] and bool(best["above_threshold"])
    assert best["representative_id"] == big["representative_id"]
    assert best["best_record_id"] == big["customer_id"]  # identical values score best
    assert list(found["rank"]) == list(range(1, len(found) + 1)) and len(found) <= 3
    stranger = {c: None for c in records.columns} | {
        "name": "Zebedee Quillfeather", "birth_date": "1901-02-03", "phone": "+1 555 0100",
        "email": "zq@nowhere.example"}
    assert not run.match(stranger)["above_threshold"].any()
    # the run is unchanged, on disk and in memory
    pd.testing.assert_frame_equal(run.clusters, clusters)
    assert _snapshot(run_dir) == before


def test_match_agrees_with_what_an_update_would_do(customer_run, tmp_path):
    run_dir, _old, new_csv = customer_run
    queries = pd.read_csv(new_csv, dtype=str).iloc[:60]
    queries.to_csv(tmp_path / "q.csv", index=False)
    found = Result.load(run_dir).match(queries, top=1000)
    done = update(run_dir, tmp_path / "q.csv")
    pairs = done.result.pairs
    old_ids = set(pd.read_parquet(run_dir / "clusters.parquet")["customer_id"])
    old_cluster = pd.read_parquet(run_dir / "clusters.parquet").set_index("customer_id")[
        "cluster_id"]
    position = dict(zip(queries["customer_id"], range(len(queries)), strict=True))
    expected = []
    for side, other in (("id_l", "id_r"), ("id_r", "id_l")):
        hit = pairs[pairs[side].isin(old_ids) & ~pairs[other].isin(old_ids)]
        expected.append(pd.DataFrame({"input_row": hit[other].map(position),
                                      "cluster_id": hit[side].map(old_cluster),
                                      "match_weight": hit["match_weight"]}))
    # The best pair per (query, old cluster) in the update is what match reports.
    expected = pd.concat(expected).groupby(["input_row", "cluster_id"])["match_weight"].max()
    got = found.set_index(["input_row", "cluster_id"])["match_weight"].sort_index()
    assert got.index.get_level_values(0).nunique() >= 20 and (got >= 4.0).sum() >= 10
    pd.testing.assert_series_equal(got, expected.sort_index(), check_dtype=False)


def test_match_sub_blocks_an_oversized_block_as_an_update_does(customer_run, tmp_path):
    """A query whose blocks a full run would find above `max_block_size` is paired with its
    sorted neighbours there (sub-blocked), not left without candidates: match reports, per
    cluster, the best pair that `update` with that one record makes."""
    _run_dir, old_csv, _new = customer_run
    rules = yaml.safe_load((ROOT / "rules" / "customers.yaml").read_text(encoding="utf-8"))
    rules["max_block_size"] = 2  # every block of two run records is oversized with a query
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    done = run_cli("dedupe", old_csv, "--rules", tmp_path / "rules.yaml", "--out",
                   tmp_path / "run")
    assert done.returncode == 0, done.stderr
    run = Result.load(tmp_path / "run")
    records = pd.read_csv(old_csv, dtype=str)
    clusters = run.clusters.set_index("customer_id")["cluster_id"]
    big = run.clusters[run.clusters["cluster_size"] >= 3].drop_duplicates("cluster_id")
    checked = 0
    for number, record_id in enumerate(big["customer_id"].iloc[:3]):
        # Not a copy (the exact stage would find that): one letter of the name changed.
        query = records[records["customer_id"] == record_id].assign(
            customer_id=f"Q{number}", name=lambda f: f["name"].str[:-1] + "x")
        query.to_csv(tmp_path / f"q{number}.csv", index=False)
        found = run.match(query, top=1000)
        assert clusters[record_id] in set(found["cluster_id"])  # its own cluster is found
        pairs = update(tmp_path / "run", tmp_path / f"q{number}.csv").result.pairs
        hit = pairs[(pairs["id_l"] == f"Q{number}") | (pairs["id_r"] == f"Q{number}")]
        other = hit["id_l"].where(hit["id_r"] == f"Q{number}", hit["id_r"])
        expected = hit.groupby(other.map(clusters).to_numpy())["match_weight"].max()
        got = found.set_index("cluster_id")["match_weight"]
        pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(),
                                       check_names=False, check_dtype=False,
                                       check_index_type=False)
        checked += 1
    assert checked == 3


def test_match_names_a_missing_column(customer_run):
    run = Result.load(customer_run[0])
    with pytest.raises(InputError, match="`email`"):
        run.match(pd.DataFrame({"name": ["Kim"], "birth_date": ["1990-01-01"],
                                "phone": [None]}))


def test_match_on_a_run_of_a_dataframe_uses_its_kept_records(customer_run):
    _run_dir, old_csv, _new = customer_run
    records = pd.read_csv(old_csv, dtype=str)
    run = lk.dedupe(records, ROOT / "rules" / "customers.yaml", progress=False)
    big = run.clusters[(run.clusters["cluster_size"] >= 2)
                       & (run.clusters["action"] == "duplicate")].iloc[0]
    query = records[records["customer_id"] == big["customer_id"]]
    with pytest.warns(LinkageWarning, match="kept records only"):
        found = run.match(query)
    assert found["cluster_id"].iloc[0] == big["cluster_id"]
    assert found["best_record_id"].iloc[0] == big["representative_id"]


def test_match_latency_bench_runs(tmp_path):
    import subprocess
    import sys

    results = tmp_path / "RESULTS_match.md"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "match_latency.py"), "--rows",
                           "3000", "--queries", "60", "--results", str(results)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    text = results.read_text()
    assert "python bench/match_latency.py --rows 3000 --queries 60" in text
    assert "| all | 60 |" in text
    found, known = map(int, text.split("Answers: ")[1].split(" held-out")[0].split(" of "))
    assert known >= 5 and found >= known - 1


# --- (f) the command line ---------------------------------------------------------------------

def test_cli_update_writes_a_run_folder_that_explains_and_repeats(customer_run, tmp_path):
    run_dir, _old, new_csv = customer_run
    done = run_cli("update", run_dir, new_csv, "--out", tmp_path / "next")
    assert done.returncode == 0, done.stderr
    assert "lineage:" in done.stdout
    names = {p.name for p in (tmp_path / "next").iterdir()}
    assert {"clusters.parquet", "pairs.parquet", "deduplicated.parquet", "summary.json",
            "rules.yaml", "records.parquet", "lineage.parquet"} <= names
    clusters = pd.read_parquet(tmp_path / "next" / "clusters.parquet")
    added = pd.read_csv(new_csv, dtype=str)["customer_id"]
    assert len(clusters) == len(pd.read_parquet(run_dir / "clusters.parquet")) + len(added)
    explained = run_cli("explain", tmp_path / "next", added.iloc[0])
    assert explained.returncode == 0 and added.iloc[0] in explained.stdout
    again = update(run_dir, new_csv, out=tmp_path / "again")
    for name in ("clusters.parquet", "pairs.parquet", "lineage.parquet", "records.parquet",
                 "deduplicated.parquet"):
        assert (tmp_path / "next" / name).read_bytes() == (tmp_path / "again" / name)\
            .read_bytes(), name
    assert again.step == 1


def test_cli_update_rejects_bad_input(customer_run, tmp_path):
    run_dir, old_csv, new_csv = customer_run
    (tmp_path / "empty").mkdir()
    pd.read_csv(new_csv, dtype=str).drop(columns=["email"]).to_csv(tmp_path / "no_email.csv",
                                                                    index=False)
    empty, no_email, again = run_clis(
        ("update", tmp_path / "empty", new_csv, "--out", tmp_path / "o1"),
        ("update", run_dir, tmp_path / "no_email.csv", "--out", tmp_path / "o2"),
        ("update", run_dir, old_csv, "--out", tmp_path / "o3"),
    )
    assert empty.returncode == 2 and "not a run folder" in empty.stderr
    assert (no_email.returncode == 2 and "`email`" in no_email.stderr
            and "no_email.csv" in no_email.stderr)
    assert again.returncode == 2 and "already in the run" in again.stderr
    assert not any((tmp_path / f"o{k}").exists() for k in (1, 2, 3))


def test_update_needs_its_saved_model(febrl, tmp_path):
    _folder, old_csv, new_csv, _all = febrl
    data = yaml.safe_load((ROOT / "rules" / "febrl.yaml").read_text())
    data["scoring"] = FEBRL_FS
    lk.dedupe(old_csv, Rules.from_dict(data), progress=False).write(tmp_path / "run")
    shutil.copytree(tmp_path / "run", tmp_path / "lost")
    (tmp_path / "lost" / "model.json").unlink()
    with pytest.raises(InputError, match=r"no model\.json"):
        update(tmp_path / "lost", new_csv)
    assert np.isfinite(update(tmp_path / "run", new_csv).result.pairs["match_weight"]).all()
