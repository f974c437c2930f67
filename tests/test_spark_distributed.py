"""The Spark engine's distributed route (issue 17): inputs read by Spark, outputs written by
Spark as Parquet folders, no record or pair on the driver. Forced on small tables by
`LINKAGE_SPARK_DRIVER_ROWS=0`; the local engine is the oracle for the clusters and the kept
records. Real local Spark (`local[2]`), one session for the test run (the `spark` fixture).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import yaml

import linkage as lk
from linkage.errors import EngineError, InputError
from tests.conftest import ROOT


@pytest.fixture
def distributed(monkeypatch):
    """Every Spark run of the test takes the distributed route."""
    monkeypatch.setenv("LINKAGE_SPARK_DRIVER_ROWS", "0")


def _rules(path, **changes) -> lk.Rules:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(changes)
    return lk.Rules.from_dict(data, source=str(path))


def _febrl(datasets, name: str, salt: str) -> pd.DataFrame:
    frame = pd.read_csv(datasets / "febrl" / name, dtype=str, skipinitialspace=True,
                        keep_default_na=False)
    # Opaque ids: FEBRL ids carry the truth, which no run may see.
    frame["rec_id"] = ["r" + hashlib.sha256(f"{salt}:{v}".encode()).hexdigest()[:12]
                       for v in frame["rec_id"]]
    return frame.sample(frac=1.0, random_state=3).reset_index(drop=True)


def _table(frame) -> pd.DataFrame:
    """A Parquet folder or a frame read back as pandas, nulls as None, for comparing."""
    frame = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    return frame.astype(object).where(frame.notna(), None).reset_index(drop=True)


def _same_tables(local, spark_run, names=("clusters", "deduplicated", "links")) -> None:
    """The tables alike value for value (as text, nulls as None)."""
    for name in names:
        expected = getattr(local, name)
        if expected is None:
            assert getattr(spark_run, name) is None, name
            continue
        got = _table(getattr(spark_run, name))
        expected = _table(expected)
        assert list(got.columns) == list(expected.columns), name
        pd.testing.assert_frame_equal(got.astype(str), expected.astype(str), obj=name)


def _same_summary(local, spark_run) -> None:
    """summary.json alike but for the engine, its versions, `before_after` (not computed on
    the distributed route) and `spark` (the route's own key)."""
    got = json.loads(json.dumps(spark_run.summary_data))
    expected = json.loads(json.dumps(local.summary_data))
    assert got.pop("spark")["route"] == "distributed"
    for summary in (got, expected):
        summary.pop("engine")
        summary.pop("versions")
        summary.pop("before_after", None)
        summary["inputs"] = [{"records": i["records"]} for i in summary["inputs"]]
    assert got == expected


def test_febrl3_dedupe_from_a_parquet_file_as_the_local_engine(spark, datasets, tmp_path,
                                                               distributed):
    frame = _febrl(datasets, "dataset3.csv", "d3")
    path = tmp_path / "febrl3.parquet"
    frame.to_parquet(path, index=False)
    rules = ROOT / "rules" / "febrl.yaml"
    local = lk.dedupe(frame, _rules(rules), progress=False)
    tracker = spark.sparkContext.statusTracker()
    before = {stage: set(tracker.getJobIdsForGroup(f"linkage: {stage}"))
              for stage in ("read", "block", "cluster", "outputs")}
    on_spark = lk.dedupe(path, _rules(rules), engine="spark", progress=False)
    assert type(on_spark).__name__ == "DistributedResult"
    # Spark's jobs carry the name of the linkage stage that ran them (UI, event log), and
    # the engine leaves no group set on the session it shares.
    for stage, earlier in before.items():
        assert set(tracker.getJobIdsForGroup(f"linkage: {stage}")) - earlier, stage
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
    _same_tables(local, on_spark)
    _same_summary(local, on_spark)
    pairs, expected = _table(on_spark.pairs), _table(local.pairs)
    assert list(pairs.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(pairs.astype(str), expected.astype(str))
    # Written as Parquet folders by Spark, the report from the summary's counts.
    out = on_spark.write(tmp_path / "out")
    assert (out / "clusters.parquet").is_dir() and (out / "pairs.parquet").is_dir()
    assert len(pd.read_parquet(out / "clusters.parquet")) == len(frame)
    assert "distributed" in json.loads((out / "summary.json").read_text())["spark"]["route"]
    assert (out / "report.html").stat().st_size > 1000


@pytest.mark.parametrize(("threshold", "non_matches", "split"), [
    (-10.0, True, "split_non_matches"),  # 39 clusters hold a scored non-match
    (-22.0, False, "split_weak_links"),  # one chain of 4,317 records, cut into 684 pieces
])
def test_fellegi_sunter_splits_on_a_spark_dataframe_as_the_local_engine(
        spark, datasets, distributed, threshold, non_matches, split):
    """A Spark DataFrame in; Fellegi-Sunter with term frequencies (fitted from Spark's
    aggregates), then `split_non_matches` or `split_weak_links`, whose clusters alone reach
    the driver: the same clusters and kept records as the local engine. (The low thresholds
    make clusters to split on FEBRL3.)"""
    frame = _febrl(datasets, "dataset3.csv", "fs")
    from linkage.engines.spark.session import quiet_pyspark

    with quiet_pyspark():  # three partitions, in the frame's order (ties go by record order)
        spark_frame = spark.createDataFrame(frame).coalesce(3)
    path = ROOT / "bench" / "febrl_fs.yaml"
    scoring = {**yaml.safe_load(path.read_text(encoding="utf-8"))["scoring"],
               "threshold": threshold}
    local = lk.dedupe(frame, _rules(path, scoring=scoring, split_non_matches=non_matches),
                      progress=False)
    on_spark = lk.dedupe(spark_frame, _rules(path, scoring=scoring,
                                             split_non_matches=non_matches),
                         engine="spark", progress=False)
    # Compared by id (a DataFrame's records are numbered in its partitions' order).
    got = _table(on_spark.clusters).set_index("rec_id").loc[frame["rec_id"]]
    expected = _table(local.clusters).set_index("rec_id").loc[frame["rec_id"]]
    assert (got["action"] == expected["action"]).all()
    assert (got["cluster_size"] == expected["cluster_size"]).all()
    assert (got["representative_id"] == expected["representative_id"]).all()
    same = pd.DataFrame({"a": got["cluster_id"].to_numpy(), "b": expected["cluster_id"]
                         .to_numpy()}).drop_duplicates()
    assert same["a"].is_unique and same["b"].is_unique  # the same partition of the records
    kept = set(_table(on_spark.deduplicated)["rec_id"])
    assert kept == set(local.deduplicated["rec_id"])
    expected = local.summary_data["stages"]["cluster"][split]
    assert on_spark.summary_data["stages"]["cluster"][split] == expected
    assert expected["clusters_split"] > 0
    pd.testing.assert_frame_equal(_table(on_spark.guard_decisions), _table(
        local.guard_decisions))  # one row per record of each split cluster, in order
    gathered = on_spark.summary_data["spark"]["records_to_driver"]
    assert 0 < gathered < len(frame)  # the clusters to split, not the table
    # A Spark DataFrame in, Spark DataFrames out: read by Spark from the run's folders.
    clusters = on_spark.to_spark("clusters")
    assert type(clusters) is type(spark_frame) and clusters.count() == len(frame)
    assert clusters.columns == list(local.clusters.columns)
    assert clusters.where("action = 'duplicate'").count() == (
        local.clusters["action"] == "duplicate").sum()
    with pytest.raises(InputError, match="Its tables: clusters, pairs, deduplicated"):
        on_spark.to_spark("links")


def test_link_febrl4_one_to_one_as_the_local_engine(spark, datasets, tmp_path, distributed):
    left = _febrl(datasets, "dataset4a.csv", "4a").head(1500)
    right = _febrl(datasets, "dataset4b.csv", "4b").head(1500)
    left.to_parquet(tmp_path / "left.parquet", index=False)
    right.to_csv(tmp_path / "right.csv", index=False)
    rules = ROOT / "rules" / "febrl.yaml"
    local = lk.link(tmp_path / "left.parquet", tmp_path / "right.csv",
                    _rules(rules, one_to_one=True), progress=False)
    on_spark = lk.link(tmp_path / "left.parquet", tmp_path / "right.csv",
                       _rules(rules, one_to_one=True), engine="spark", progress=False)
    _same_tables(local, on_spark, ("clusters", "links"))
    _same_summary(local, on_spark)
    assert len(local.links) > 100


def _customers(tmp_path, rows: int = 400):
    """The sample customers' first rows as a Parquet file (and the frame)."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str).head(rows)
    path = tmp_path / "customers.parquet"
    customers.to_parquet(path, index=False)
    return customers, path


# On the sample customers: a lower threshold for one source (it matches a pair below the run's),
# a higher one for another, then one for cities on what that left.
DOMAINS = [{"type": "domain_thresholds", "column": "source",
            "thresholds": {"web": -10.0, "crm": 11.5}},
           {"type": "domain_thresholds", "column": "city", "name": "by_city",
            "thresholds": {"서울": 40.0, "부산": -30.0}}]


def test_guards_golden_records_keep_diverse_and_resume_as_the_local_engine(spark, tmp_path,
                                                                            distributed):
    """Guards (domain thresholds over every scored pair, listed out of stage order; edge
    guards that split; record guards that send to review, protect and keep
    copies, with review held for keep_up_to's copies until the keeper has ranked), golden
    records (every survivorship rule of rules/customers.yaml) and `keep: diverse` (a
    record's rank depends on its cluster's other records): run per bucket of whole clusters
    on the executors by the local code, the same tables, decisions (in order), review groups
    and summary as the local engine. A rerun with the same checkpoint folder (--resume) reads
    the candidate and compared pairs back from its Parquet folders and writes the same
    outputs."""
    _, path = _customers(tmp_path)
    rules = ROOT / "rules" / "customers.yaml"
    keep = {"policy": "diverse", "column": "source", "k": 2}
    guards = [{"type": "must_not_link", "columns": ["birth_date"]},
              {"type": "max_cluster_size", "size": 2, "name": "cap"},
              DOMAINS[0],
              {"type": "max_cluster_size", "size": 1, "action": "review"},
              {"type": "conflicting_labels", "label": "postcode"},
              {"type": "keep_up_to", "k": 2, "column": "source", "values": ["crm"]},
              DOMAINS[1]]
    local = lk.dedupe(path, _rules(rules, keep=keep, guards=guards), progress=False)
    counts = local.summary_data["stages"]["guard"]
    assert counts["must_not_link"]["split"] > 0 and counts["cap"]["split"] > 0
    # the domain thresholds first, over every pair: one domain's lower threshold matches,
    # a higher one unmatches; the second guard works on what the first left
    assert counts["domain_thresholds"]["matched"] > 0
    assert counts["domain_thresholds"]["unmatched"] > 0 and counts["by_city"]["unmatched"] > 0
    # held for keep_up_to's copies, which the diverse keeper picks, the rest to review
    assert counts["max_cluster_size"]["kept"] > 0 and counts["max_cluster_size"]["review"] > 0
    assert counts["conflicting_labels"]["review"] > 0 and counts["keep_up_to"]["keep_up_to"] > 0
    checkpoint = tmp_path / "checkpoint"
    first = lk.dedupe(path, _rules(rules, keep=keep, guards=guards), engine="spark",
                      progress=False, checkpoint=checkpoint)
    _same_tables(local, first, ("clusters", "deduplicated", "golden", "guard_decisions",
                                "review", "pairs"))
    _same_summary(local, first)
    assert (checkpoint / "spark-block.json").is_file()
    assert (checkpoint / "spark-compare.parquet" / "_SUCCESS").is_file()
    again = lk.dedupe(path, _rules(rules, keep=keep, guards=guards), engine="spark",
                      progress=False, checkpoint=checkpoint)
    assert again.timings["block"] == 0.0 and again.timings["compare"] == 0.0
    _same_tables(local, again, ("clusters", "deduplicated", "golden"))
    _same_summary(local, again)


def test_transactions_distinct_events_as_the_local_engine(spark, tmp_path, distributed):
    """rules/transactions.yaml on the sample transactions: `distinct_events` (preserved
    purchases, separate events of double loads) and `keep: oldest` by load time, per bucket
    of whole clusters: the local engine's tables, decisions in order and summary."""
    frame = pd.read_csv(ROOT / "sample_data" / "transactions.csv", dtype=str)
    path = tmp_path / "transactions.parquet"
    frame.to_parquet(path, index=False)
    rules = ROOT / "rules" / "transactions.yaml"
    local = lk.dedupe(path, _rules(rules), progress=False)
    on_spark = lk.dedupe(path, _rules(rules), engine="spark", progress=False)
    counts = local.summary_data["stages"]["guard"]["distinct_events"]
    assert counts["preserved"] > 0 and counts["separate_event"] > 0
    _same_tables(local, on_spark, ("clusters", "deduplicated", "guard_decisions"))
    _same_summary(local, on_spark)


def test_one_to_one_record_prior_threshold_as_the_local_engine(spark, datasets, tmp_path,
                                                               distributed):
    """`one_to_one_threshold: record_prior`: each left record's best weight by a groupBy,
    the local fixed point summed by Spark aggregates: the same moved threshold and links."""
    _febrl(datasets, "dataset4a.csv", "4a").head(600).to_parquet(tmp_path / "l.parquet")
    _febrl(datasets, "dataset4b.csv", "4b").head(700).to_parquet(tmp_path / "r.parquet")
    path = ROOT / "bench" / "febrl_fs.yaml"
    local = lk.link(tmp_path / "l.parquet", tmp_path / "r.parquet",
                    _rules(path, one_to_one=True, one_to_one_threshold="record_prior"),
                    progress=False)
    on_spark = lk.link(tmp_path / "l.parquet", tmp_path / "r.parquet",
                       _rules(path, one_to_one=True, one_to_one_threshold="record_prior"),
                       engine="spark", progress=False)
    moved = local.scorer.diagnostics["one_to_one_threshold"]
    assert moved["shift"] > 0
    assert on_spark.scorer.diagnostics["one_to_one_threshold"] == moved
    assert on_spark.scorer.threshold == local.scorer.threshold
    _same_tables(local, on_spark, ("clusters",))
    links, expected = _table(on_spark.links), _table(local.links)
    assert len(links) == len(expected) > 50
    for column in ("id_l", "id_r", "cluster_id"):
        assert list(links[column]) == list(expected[column])
    np.testing.assert_allclose(links["match_weight"].astype(float),
                               expected["match_weight"].astype(float), rtol=1e-9)


def test_ranges_on_the_distributed_route_as_the_local_engine(spark, tmp_path, distributed):
    """A link blocked by ranges (a memo's start and the date within days, the start and the
    amount within a share) from Parquet files on the distributed route: the same candidate
    counts, summary and tables as the local engine."""
    from linkage import synth

    _, (ledger, statement), _ = synth.traps(1500, seed=5, trap="payments")
    ledger.to_parquet(tmp_path / "l.parquet")
    statement.to_parquet(tmp_path / "r.parquet")
    rules = {"id_column": "payment_id", "rename_right": {"entry": "payment_id"},
             "normalize": [{"column": "memo", "type": "text"}],
             "blocking": [{"name": "days", "type": "range", "key": ["first(memo, 8)"],
                           "column": "date", "within_days": 10},
                          {"name": "amounts", "type": "range", "key": ["first(memo, 4)"],
                           "column": "amount", "rel_tolerance": 0.05}],
             "comparisons": [{"type": "jaro_winkler", "column": "memo", "thresholds": [0.9]},
                             {"type": "date", "column": "date", "within_days": [31]},
                             {"type": "numeric", "column": "amount",
                              "rel_tolerance": [0.05]}],
             "scoring": {"type": "fellegi_sunter", "threshold": 0.0}, "one_to_one": True}
    local = lk.link(tmp_path / "l.parquet", tmp_path / "r.parquet", lk.Rules.from_dict(rules),
                    progress=False)
    on_spark = lk.link(tmp_path / "l.parquet", tmp_path / "r.parquet",
                       lk.Rules.from_dict(rules), engine="spark", progress=False)
    blocked = local.summary_data["stages"]["block"]["blockers"]
    assert blocked["days"]["proposed_pairs"] > 0 and blocked["amounts"]["proposed_pairs"] > 0
    _same_summary(local, on_spark)
    _same_tables(local, on_spark, ("clusters", "links"))


@pytest.mark.parametrize(("change", "message"), [
    ({"id_column": "nope"}, "id column `nope` is not in the table"),
    ({"id_column": "source"}, "repeated value(s)"),
    ({"id_column": "city"}, "is missing in 110 record(s) (rows ["),
    ({"normalize": [{"column": "no_such", "type": "text"}]}, "column `no_such`"),
])
def test_input_checks_are_spark_aggregates_with_the_local_messages(spark, tmp_path,
                                                                    distributed, change,
                                                                    message):
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    path = tmp_path / "customers.parquet"
    customers.to_parquet(path, index=False)
    rules = ROOT / "rules" / "customers.yaml"
    with pytest.raises(InputError) as local:
        lk.dedupe(customers, _rules(rules, golden=None, **change), progress=False)
    with pytest.raises(InputError) as on_spark:
        lk.dedupe(path, _rules(rules, golden=None, **change), engine="spark", progress=False)
    assert message in str(local.value)
    assert str(on_spark.value).split(": ", 1)[1] == str(local.value).split(": ", 1)[1]


def test_domain_thresholds_alone_on_the_distributed_route_as_the_local_engine(spark, tmp_path,
                                                                              distributed):
    """A domain threshold and no guard that runs per cluster: the pairs (each `is_match`),
    clusters, decisions and summary of the local engine; the pair it matched below the
    run's threshold holds its records together. (With the per-cluster guards:
    `test_guards_golden_records_keep_diverse_and_resume_as_the_local_engine`.)"""
    _, path = _customers(tmp_path)
    rules = ROOT / "rules" / "customers.yaml"
    local = lk.dedupe(path, _rules(rules, guards=DOMAINS[:1]), progress=False)
    assert local.summary_data["stages"]["guard"]["domain_thresholds"]["matched"] > 0
    on_spark = lk.dedupe(path, _rules(rules, guards=DOMAINS[:1]), engine="spark",
                         progress=False)
    assert type(on_spark).__name__ == "DistributedResult"
    _same_tables(local, on_spark, ("clusters", "deduplicated", "pairs", "guard_decisions"))
    _same_summary(local, on_spark)
    pairs = _table(on_spark.pairs)
    below = pairs["match_weight"] < local.summary_data["stages"]["score"]["threshold"]
    added = pairs[pairs["is_match"] & below]
    assert len(added) > 0
    clusters = _table(on_spark.clusters).set_index("customer_id")["cluster_id"]
    assert (clusters[added["id_l"]].to_numpy() == clusters[added["id_r"]].to_numpy()).all()


def test_a_java_out_of_memory_error_names_the_setting_to_raise():
    from linkage.engines.spark.session import java_memory_errors

    with pytest.raises(EngineError, match="LINKAGE_SPARK_DRIVER_MEMORY"), \
            java_memory_errors("local[2]"):
        raise RuntimeError("An error occurred while calling o97.collectToPython.\n: "
                           "java.lang.OutOfMemoryError: Java heap space")
    with pytest.raises(EngineError, match=r"spark\.executor\.memory"), \
            java_memory_errors("spark://head:7077"):
        raise RuntimeError("java.lang.OutOfMemoryError: GC overhead limit exceeded")
    # The system killed the JVM (no Java error): the connection to it breaks.
    with pytest.raises(EngineError, match="LINKAGE_SPARK_DRIVER_MEMORY lower"), \
            java_memory_errors("local[2]"):
        raise ConnectionRefusedError(111, "Connection refused")


class _Gathered:
    """The rows every `collect` and `toPandas` of pyspark brings to the driver during a run,
    by call (pyspark's own methods, wrapped to count what they return)."""

    def __init__(self, spark, monkeypatch):
        kind = type(spark.range(1))  # pyspark 4's classic DataFrame, which defines both
        self.calls: list[int] = []
        collect, to_pandas = kind.collect, kind.toPandas

        def counted_collect(frame):
            rows = collect(frame)
            self.calls.append(len(rows))
            return rows

        def counted_to_pandas(frame):
            table = to_pandas(frame)
            self.calls.append(len(table))
            return table

        monkeypatch.setattr(kind, "collect", counted_collect)
        monkeypatch.setattr(kind, "toPandas", counted_to_pandas)


def _persons_run(spark, tmp_path, rows: int, monkeypatch):
    import tracemalloc

    from linkage.synth import persons

    records, _ = persons(rows, seed=5, dup_rate=0.3)
    path = tmp_path / f"persons_{rows}.parquet"
    records.to_parquet(path, index=False)
    rules = _rules(ROOT / "bench" / "persons_scale.yaml", max_pairs=10**9)
    gathered = _Gathered(spark, monkeypatch)
    tracemalloc.start()
    result = lk.dedupe(path, rules, engine="spark", progress=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    monkeypatch.undo()
    return result, peak, gathered.calls, int(records.memory_usage(deep=True).sum())


def test_the_drivers_memory_stays_flat_as_the_table_grows(spark, tmp_path, monkeypatch):
    """Ten times the records: no collect brings back anything of the table's size, and the
    Python driver's peak allocation (tracemalloc) stays where it was, far below the records
    it would hold as a pandas table."""
    monkeypatch.setenv("LINKAGE_SPARK_DRIVER_ROWS", "0")
    small, small_peak, small_calls, _ = _persons_run(spark, tmp_path, 2_000, monkeypatch)
    monkeypatch.setenv("LINKAGE_SPARK_DRIVER_ROWS", "0")
    big, big_peak, big_calls, big_bytes = _persons_run(spark, tmp_path, 20_000, monkeypatch)
    assert len(big.clusters) == 20_000 and small_calls and big_calls
    pairs = big.summary_data["stages"]["block"]["candidate_pairs"]
    assert pairs > 5 * small.summary_data["stages"]["block"]["candidate_pairs"]
    # Counts, level patterns, partition offsets, the few clusters a split acts on: no
    # collect returns a part of the table (the largest is far below a tenth of it).
    assert max(big_calls) < 20_000 / 10, (max(small_calls), max(big_calls))
    # The driver's Python heap grows by a small part of what the records alone take in
    # pandas (the run allocates the same fixed things at both sizes: the seeded random
    # pairs of u, the model).
    growth = big_peak - small_peak
    assert growth < big_bytes / 4, (small_peak, big_peak, big_bytes)


# Every rules file of rules/ runs on the distributed route with the local engine's outputs:
# the dedupe files in the tests named here, the link files in the test below, each on the
# whole of the data it was written for, read from its CSV files by each engine's own reader.
_RULES_TESTED_ELSEWHERE = {  # rules file: (test file, test)
    "customers.yaml": ("test_spark_distributed.py",
                       "test_guards_golden_records_keep_diverse_and_resume_as_the_local_engine"),
    "documents.yaml": ("test_spark_text.py", "test_distributed_text_pipeline_as_locally"),
    "febrl.yaml": ("test_spark_distributed.py",
                   "test_febrl3_dedupe_from_a_parquet_file_as_the_local_engine"),
    "labelled_text.yaml": ("test_spark_distributed.py",
                           "test_labelled_text_rules_on_the_distributed_route_as_locally"),
    "transactions.yaml": ("test_spark_distributed.py",
                          "test_transactions_distinct_events_as_the_local_engine"),
}
_LINK_RULES = {  # rules file: the data's folder (under the data sets), left, right, separator
    "abt_buy.yaml": ("magellan/abt_buy", "abt.csv", "buy.csv", "|"),
    "amazon_google.yaml": ("magellan/amazon_google", "amazon.csv", "gp.csv", "#"),
    "dblp_acm.yaml": ("magellan/dblp_acm", "dblp.csv", "acm.csv", "%"),
    "link.yaml": (None, "link_left.csv", "link_right.csv", None),
}


def test_every_rules_file_has_a_spark_test():
    """A rules file added to rules/ needs its Spark test (a line in one of the two maps), and
    each test named for one exists in its file, which reads that rules file."""
    names = sorted(path.name for path in (ROOT / "rules").glob("*.yaml"))
    assert names == sorted({**_RULES_TESTED_ELSEWHERE, **_LINK_RULES})
    for name, (where, test) in _RULES_TESTED_ELSEWHERE.items():
        source = (ROOT / "tests" / where).read_text(encoding="utf-8")
        assert name in source and f"def {test}(" in source, (name, where, test)


@pytest.mark.parametrize("name", sorted(_LINK_RULES))
def test_the_link_rules_files_on_the_distributed_route_as_locally(spark, datasets, tmp_path,
                                                                  distributed, name):
    folder, left, right, sep = _LINK_RULES[name]
    base = datasets / folder if folder else ROOT / "sample_data"
    rules = ROOT / "rules" / name
    local = lk.link(base / left, base / right, _rules(rules), sep=sep, progress=False)
    on_spark = lk.link(base / left, base / right, _rules(rules), sep=sep, engine="spark",
                       progress=False)
    assert type(on_spark).__name__ == "DistributedResult"
    _same_tables(local, on_spark, ("clusters", "links"))
    _same_summary(local, on_spark)
    assert len(local.links) > 20


def test_labelled_text_rules_on_the_distributed_route_as_locally(spark, distributed):
    """rules/labelled_text.yaml (conflicting labels over equal texts, keep_up_to for one
    domain, a source column) on the sample texts: the local tables, guard decisions and
    summary (tests/test_spark_guards.py runs it on the driver route)."""
    data = ROOT / "sample_data" / "labelled_text.csv"
    rules = ROOT / "rules" / "labelled_text.yaml"
    local = lk.dedupe(data, _rules(rules), progress=False)
    on_spark = lk.dedupe(data, _rules(rules), engine="spark", progress=False)
    assert type(on_spark).__name__ == "DistributedResult"
    _same_tables(local, on_spark, ("clusters", "deduplicated"))
    _same_summary(local, on_spark)
    pd.testing.assert_frame_equal(_table(on_spark.guard_decisions),
                                  _table(local.guard_decisions))
    assert len(local.guard_decisions) > 0


def test_nullable_integers_read_back_as_the_local_engine_gives_them(spark, tmp_path, distributed):
    """A column of integers with gaps (pandas Int64 in a Parquet input) comes back from the
    distributed route's Parquet folders as Int64, as the local engine gives it: not as
    float64 (an age of 41 read as 41.0). Spark writes no pandas metadata, so the folders'
    reader maps Arrow integers and booleans with nulls to pandas' nullable types itself;
    columns without nulls keep their plain types."""
    frame = pd.DataFrame({
        "id": [f"r{i}" for i in range(40)],
        "name": ["ann", "bob", "cat", "dan"] * 10,
        "age": pd.array([41, None, 3, 4, 5] * 8, dtype="Int64"),
        "visits": np.arange(40, dtype=np.int64),
        "active": pd.array([True, None, False, True] * 10, dtype="boolean"),
    })
    path = tmp_path / "people.parquet"
    frame.to_parquet(path, index=False)
    rules = lk.Rules.from_dict({
        "id_column": "id", "blocking": [{"name": "k", "keys": [["name"]]}],
        "comparisons": [{"type": "exact", "column": "name"}],
        "scoring": {"type": "rule_sum", "threshold": 1}})
    local = lk.dedupe(path, rules, progress=False)
    on_spark = lk.dedupe(path, rules, engine="spark", progress=False)
    assert type(on_spark).__name__ == "DistributedResult"
    got, expected = on_spark.deduplicated.to_pandas(), local.deduplicated
    for column in ("age", "visits", "active"):
        assert got[column].dtype == expected[column].dtype, column
    assert str(got["age"].dtype) == "Int64" and str(got["visits"].dtype) == "int64"
    pd.testing.assert_frame_equal(got.reset_index(drop=True),
                                  expected.reset_index(drop=True), check_dtype=False)
    assert got["age"].isna().sum() == expected["age"].isna().sum() > 0
    assert got[["age"]].equals(on_spark.deduplicated[["age"]])  # a column read alone: alike
