"""The Spark engine (`--engine spark`) against the local engine, on real local Spark.

One SparkSession (`local[2]`) serves the whole test run: the engine reuses the active session,
because starting one takes seconds. The local engine is the oracle: on FEBRL and on the sample
customers the Spark engine must produce the very same tables (clusters, pairs, kept records,
links, golden records), byte for byte once written, and the same summary but for its engine.
"""

from __future__ import annotations

import hashlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import linkage as lk
from linkage.cli import main
from linkage.clustering import connected_components
from linkage.errors import BudgetError, InputError, LinkageWarning
from linkage.scoring import ComparisonMatrix, FellegiSunter
from tests.conftest import ROOT

CONTRACT = ("clusters.parquet", "pairs.parquet", "deduplicated.parquet", "golden.parquet",
            "links.parquet", "report_records.parquet")


def _rules(name: str, **changes) -> lk.Rules:
    """A shipped rules file, optionally with some keys changed (a fresh object each time:
    fitting a scorer changes it)."""
    path = ROOT / "rules" / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.update(changes)
    return lk.Rules.from_dict(data, source=str(path))


def _febrl(datasets, name: str) -> pd.DataFrame:
    return pd.read_csv(datasets / "febrl" / name, dtype=str, skipinitialspace=True,
                       keep_default_na=False)


def _opaque(frame: pd.DataFrame, salt: str) -> pd.DataFrame:
    """The table with opaque ids (FEBRL ids carry the truth, which no run may see)."""
    frame = frame.copy()
    frame["rec_id"] = ["r" + hashlib.sha256(f"{salt}:{v}".encode()).hexdigest()[:12]
                       for v in frame["rec_id"]]
    return frame.sample(frac=1.0, random_state=3).reset_index(drop=True)


def _same_result(local, spark_run) -> None:
    """Every table equal (values and dtypes), the summary equal but for the engine."""
    for name in ("clusters", "pairs", "deduplicated", "links", "golden", "review"):
        expected, got = getattr(local, name), getattr(spark_run, name)
        if expected is None:
            assert got is None, name
        else:
            pd.testing.assert_frame_equal(got, expected, obj=name)
    assert spark_run.summary_data["engine"] == "spark"
    assert local.summary_data["engine"] == "local"
    summary = json.loads(json.dumps(spark_run.summary_data))
    expected = json.loads(json.dumps(local.summary_data))
    summary["engine"] = expected["engine"]
    assert summary["versions"].pop("spark") == spark_version()
    assert summary == expected


def spark_version() -> str:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession().version


def _written(result, folder) -> dict[str, bytes]:
    result.write(folder)
    return {name: (folder / name).read_bytes() for name in CONTRACT if (folder / name).exists()}


def test_febrl3_dedupe_same_clusters_as_local(spark, datasets, tmp_path):
    frame = _opaque(_febrl(datasets, "dataset3.csv"), "d3")
    local = lk.dedupe(frame, _rules("febrl.yaml"), progress=False)
    on_spark = lk.dedupe(frame, _rules("febrl.yaml"), engine="spark", progress=False)
    _same_result(local, on_spark)
    # Not a trivial agreement: FEBRL3 has 2,000 originals and 3,000 duplicates.
    assert on_spark.summary_data["stages"]["cluster"]["clusters"] < 2200
    assert on_spark.summary_data["stages"]["block"]["blockers"]["sorted_names"][
        "proposed_pairs"] > 0
    assert _written(on_spark, tmp_path / "spark") == _written(local, tmp_path / "local")


def test_swapped_names_are_read_on_spark_as_locally(spark, datasets, tmp_path):
    """`swapped_with` reads a second column per pair: Spark brings it to the pair and finds
    the same swaps (FEBRL3 has duplicates whose given name and surname were swapped)."""
    data = yaml.safe_load((ROOT / "rules" / "febrl.yaml").read_text(encoding="utf-8"))
    for comparison in data["comparisons"][:2]:
        comparison["swapped_with"] = {"given_name": "surname",
                                      "surname": "given_name"}[comparison["column"]]
        data["scoring"]["weights"][comparison["column"]]["swapped"] = 2.0
    frame = _opaque(_febrl(datasets, "dataset3.csv"), "d3")
    local = lk.dedupe(frame, lk.Rules.from_dict(data), progress=False)
    on_spark = lk.dedupe(frame, lk.Rules.from_dict(data), engine="spark", progress=False)
    _same_result(local, on_spark)
    levels = local.pairs["given_name_level"].to_numpy()
    assert (levels == 3).sum() > 0  # "swapped": else, >=0.8, >=0.92, swapped, exact
    assert _written(on_spark, tmp_path / "spark") == _written(local, tmp_path / "local")


def test_a_spark_dataframe_is_a_table_like_any_other(spark):
    """A Spark DataFrame goes in as a pandas or polars one does (through narwhals: issue 16,
    item 2), and gives what its pandas table gives, on either engine. (It is collected: issue 17
    is the engine that never gathers it.)"""
    frame = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    from linkage.engines.spark.session import quiet_pyspark

    with quiet_pyspark():  # pyspark's own warning about pandas 3
        spark_frame = spark.createDataFrame(frame.astype(object).where(frame.notna(), None))
    rules = ROOT / "rules" / "customers.yaml"
    expected = lk.dedupe(frame, lk.Rules.from_yaml(rules), progress=False)
    for engine in ("local", "spark"):
        got = lk.dedupe(spark_frame, lk.Rules.from_yaml(rules), engine=engine, progress=False)
        for name in ("clusters", "pairs", "deduplicated"):
            pd.testing.assert_frame_equal(getattr(got, name), getattr(expected, name),
                                          obj=f"{engine}: {name}")
    # and the tables go back to Spark (in memory: handed over as Arrow)
    clusters = expected.to_spark("clusters", spark)
    assert clusters.columns == list(expected.clusters.columns)
    back = clusters.select("customer_id", "action", "cluster_id").collect()
    for k, column in enumerate(("customer_id", "action", "cluster_id")):
        assert [str(row[k]) for row in back] == expected.clusters[column].astype(str).tolist()


def test_cli_dedupe_customers_on_spark_writes_the_local_files(spark, tmp_path):
    from linkage.cli import main

    customers = ROOT / "sample_data" / "customers.csv"
    rules = ROOT / "rules" / "customers.yaml"
    done = CliRunner().invoke(main, ["dedupe", str(customers), "--rules", str(rules), "--out",
                                     str(tmp_path / "spark"), "--engine", "spark",
                                     "--spark-master", "local[2]"])
    assert done.exit_code == 0, done.output
    out = tmp_path / "spark"
    for name in ("clusters.parquet", "pairs.parquet", "deduplicated.parquet", "golden.parquet",
                 "summary.json", "rules.yaml"):
        assert (out / name).is_file(), name
    local = lk.dedupe(customers, lk.Rules.from_yaml(rules), progress=False)
    expected = _written(local, tmp_path / "local")
    assert {n: (out / n).read_bytes() for n in expected} == expected
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["engine"] == "spark"
    assert summary["actions"] == local.summary_data["actions"]
    assert summary["actions"]["duplicate"] > 400  # the sample holds ~30% duplicates
    clusters = pd.read_parquet(out / "clusters.parquet")
    records = pd.read_csv(customers, dtype=str)
    assert sorted(clusters["customer_id"]) == sorted(records["customer_id"])


def test_copies_and_a_skipped_block_as_the_local_engine(spark, tmp_path):
    """Copies are paired with their first record and left out of blocking, and a block still
    too big is sub-blocked with a warning in the summary, on both engines alike."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    # Three records of one person with other phones: not copies, one block of three.
    near = pd.concat([customers.iloc[[5]]] * 3, ignore_index=True).assign(
        phone=["010-1000-0001", "010-1000-0002", "010-1000-0003"])
    table = pd.concat([customers.head(60), *[customers.iloc[[3]]] * 20, near],
                      ignore_index=True)
    table["customer_id"] = [f"K-{k:03d}" for k in range(len(table))]
    local = lk.dedupe(table, _rules("customers.yaml", max_block_size=2), progress=False)
    on_spark = lk.dedupe(table, _rules("customers.yaml", max_block_size=2), engine="spark",
                         progress=False)
    _same_result(local, on_spark)
    assert on_spark.summary_data["stages"]["copies"]["records_collapsed"] >= 20
    # the oversized blocks are sub-blocked, as the local engine does, with its very warnings
    oversized = [w for w in on_spark.summary_data["warnings"] if "sub-blocked a block" in w]
    assert oversized
    assert oversized == [w for w in local.summary_data["warnings"] if "sub-blocked a block" in w]
    assert _written(on_spark, tmp_path / "spark") == _written(local, tmp_path / "local")


def test_a_one_key_blocker_sub_blocks_by_the_other_columns_as_the_local_engine(spark):
    """A blocker with one key has no other key to sort an oversized block by: both engines
    fall back to the other columns, in the same order, and propose the same pairs."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str).head(400)
    blocking = [{"name": "pc", "keys": [["first(postcode, 2)"]]}]
    local = lk.dedupe(customers, _rules("customers.yaml", blocking=blocking, max_block_size=5),
                      progress=False)
    on_spark = lk.dedupe(customers, _rules("customers.yaml", blocking=blocking,
                                           max_block_size=5), engine="spark", progress=False)
    _same_result(local, on_spark)
    blocked = local.summary_data["stages"]["block"]
    assert blocked["skipped_blocks"] and all(
        b["how"].startswith("sorted neighbourhood on ") for b in blocked["skipped_blocks"])
    assert on_spark.summary_data["stages"]["block"] == blocked


def test_a_link_window_and_sub_blocks_over_equal_keys_as_the_local_engine(spark):
    """A link sorted by a key that many records share (a city), and a key blocker whose
    oversized blocks are sub-blocked by columns whose values repeat: on both engines the two
    tables take turns inside each run of equal values, the window's budget counts only the
    pairs across, and the same pairs, summary and tables come out."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str).head(600)
    left, right = customers.iloc[:300].reset_index(drop=True), customers.iloc[300:]
    right = right.reset_index(drop=True)
    blocking = [{"name": "city_window", "type": "sorted_neighbourhood", "sort_key": ["city"],
                 "window": 3},
                {"name": "pc", "keys": [["first(postcode, 1)"], ["city"]]}]
    rules = dict(blocking=blocking, max_block_size=8)
    local = lk.link(left, right, _rules("customers.yaml", **rules), progress=False)
    on_spark = lk.link(left, right, _rules("customers.yaml", **rules), engine="spark",
                       progress=False)
    _same_result(local, on_spark)
    blocked = local.summary_data["stages"]["block"]
    assert blocked["skipped_blocks"]
    window = blocked["blockers"]["city_window"]
    # counted across tables: exactly what the window proposes, far below every neighbour
    assert window["estimated_pairs"] == window["proposed_pairs"] < 2 * 600 * 0.75
    assert on_spark.summary_data["stages"]["block"] == blocked


def test_ranges_on_spark_are_the_local_ones(spark):
    """Range blockers (a key and a date within days, a key and an amount within a share, a
    date with no key) in a link and in a dedupe: Spark joins buckets of the range's width and
    checks each pair; the same pairs, counts, summary and tables come out."""
    from linkage import synth

    _, (ledger, statement), _ = synth.traps(1200, seed=3, trap="payments")
    blocking = [{"name": "memo_days", "type": "range", "key": ["first(memo, 8)"],
                 "column": "date", "within_days": 10},
                {"name": "memo_amount", "type": "range", "key": ["first(memo, 4)"],
                 "column": "amount", "rel_tolerance": 0.05},
                {"name": "days", "type": "range", "column": "date", "within_days": 0}]
    rules = {"id_column": "payment_id", "rename_right": {"entry": "payment_id"},
             "normalize": [{"column": "memo", "type": "text"}],
             "blocking": blocking,
             "comparisons": [{"type": "jaro_winkler", "column": "memo", "thresholds": [0.9]},
                             {"type": "date", "column": "date", "within_days": [31]},
                             {"type": "numeric", "column": "amount", "rel_tolerance": [0.05]}],
             "scoring": {"type": "fellegi_sunter", "threshold": 0.0}}
    local = lk.link(ledger, statement, lk.Rules.from_dict(rules), progress=False)
    on_spark = lk.link(ledger, statement, lk.Rules.from_dict(rules), engine="spark",
                       progress=False)
    _same_result(local, on_spark)
    proposed = local.summary_data["stages"]["block"]["blockers"]
    assert all(proposed[name]["proposed_pairs"] > 0 for name in ("memo_days", "memo_amount"))

    one = pd.concat([ledger, statement.rename(columns={"entry": "payment_id"})],
                    ignore_index=True)
    rules = {**rules, "blocking": blocking[:2]}
    rules.pop("rename_right")
    local = lk.dedupe(one, lk.Rules.from_dict(rules), progress=False)
    _same_result(local, lk.dedupe(one, lk.Rules.from_dict(rules), engine="spark",
                                  progress=False))


def test_a_link_weighs_a_blocked_field_by_its_excess_over_chance_as_locally(spark):
    """A field that is also the blocking key (m = u = 1 among candidates) is weighed by how
    much more the two tables agree on it than chance explains: Spark sums the same counts
    (without gathering values) and fits the local engine's model."""
    from linkage.suggest import suggest_rules
    from tests.test_link_chance import _catalogues

    left, right, _truth, _persons = _catalogues()
    rules = suggest_rules([left, right]).rules
    local = lk.link(left, right, lk.Rules.from_dict(rules), progress=False)
    on_spark = lk.link(left, right, lk.Rules.from_dict(rules), engine="spark", progress=False)
    floors = local.scorer.diagnostics["chance_floor"]
    assert "name" in {f["comparison"] for f in floors}
    assert on_spark.scorer.diagnostics["chance_floor"] == floors
    _same_result(local, on_spark)


def test_link_febrl4_one_to_one_with_skipped_blocks(spark, datasets):
    """Link mode, one-to-one matching (Fellegi-Sunter, its threshold moved by the record
    prior) and oversized blocks (sub-blocked with a warning) all as the local engine does
    them."""
    left = _febrl(datasets, "dataset4a.csv").head(1500)
    right = _febrl(datasets, "dataset4b.csv")
    # The right records of the same people (and no others), chosen before the ids go opaque.
    entity = right["rec_id"].str.extract(r"rec-(\d+)-")[0]
    right = right[entity.isin(left["rec_id"].str.extract(r"rec-(\d+)-")[0])]
    left, right = _opaque(left, "4a"), _opaque(right, "4b")
    runs, warned = [], []
    for engine in ("local", "spark"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LinkageWarning)
            runs.append(lk.link(left, right, _rules("febrl.yaml", one_to_one=True,
                                                    one_to_one_threshold="record_prior",
                                                    scoring={"type": "fellegi_sunter",
                                                             "threshold": 0.0, "seed": 7,
                                                             "u_sample_size": 20000},
                                                    max_block_size=6),
                                engine=engine, progress=False))
        warned.append(sorted(str(w.message) for w in caught
                             if issubclass(w.category, LinkageWarning)))
    local, on_spark = runs
    _same_result(local, on_spark)
    assert warned[0] == warned[1] and warned[0], warned
    assert on_spark.summary_data["stages"]["block"]["skipped_blocks"]
    links = on_spark.links
    assert len(links) > 1000
    assert links["id_l"].is_unique and links["id_r"].is_unique  # one-to-one
    # the record-prior threshold moved alike (from the same weights, on the driver)
    moved = local.scorer.diagnostics["one_to_one_threshold"]
    assert moved["shift"] > 0 and on_spark.scorer.diagnostics["one_to_one_threshold"] == moved
    assert on_spark.scorer.threshold == local.scorer.threshold


def test_fellegi_sunter_with_tf_on_spark_learns_what_local_learns(spark, tmp_path):
    """EM on aggregated level-pattern counts, u from the same random pairs, TF adjustment;
    and a saved model (`--model`) scores on Spark as it scores locally."""
    scoring = {"type": "fellegi_sunter", "threshold": 3.0, "u_sample_size": 20000, "seed": 7,
               "tf_adjust": ["name"]}
    customers = ROOT / "sample_data" / "customers.csv"
    local = lk.dedupe(customers, _rules("customers.yaml", scoring=scoring), progress=False)
    on_spark = lk.dedupe(customers, _rules("customers.yaml", scoring=scoring), engine="spark",
                         progress=False)
    a, b = local.scorer, on_spark.scorer
    assert b.n_iterations_ == a.n_iterations_
    assert b.prior_ == pytest.approx(a.prior_, rel=1e-9)
    for name, levels in a.m_probabilities_.items():
        for label, m in levels.items():
            assert b.m_probabilities_[name][label] == pytest.approx(m, rel=1e-9, abs=1e-12)
            u = a.u_probabilities_[name][label]
            assert b.u_probabilities_[name][label] == pytest.approx(u, rel=1e-9, abs=1e-12)
    assert b.tf_u_ == a.tf_u_
    _same_result(local, on_spark)
    a.save(tmp_path / "model.json")
    strict = {**scoring, "threshold": 6.0}  # the model's own threshold (3.0) still applies
    loaded = lk.dedupe(customers, _rules("customers.yaml", scoring=strict), engine="spark",
                       model=tmp_path / "model.json", progress=False)
    pd.testing.assert_frame_equal(loaded.clusters, local.clusters)
    pd.testing.assert_frame_equal(loaded.pairs, local.pairs)


def test_fit_on_counts_in_any_order_is_fit_on_the_whole_matrix():
    """No Spark: EM over pattern counts arriving in Spark's (any) order, with u from random
    pairs rebuilt from their counts, learns exactly what `fit` learns from every pair."""
    from linkage.comparators import Exact, JaroWinkler
    from linkage.engines.spark._em import fit_counts, random_matrix

    rng = np.random.default_rng(5)
    comparisons = [JaroWinkler("a", thresholds=[0.9]), Exact("b"), JaroWinkler("c")]
    match = rng.random(4000) < 0.3
    levels = np.column_stack([
        np.where(match, rng.choice([2, 1, 0], 4000, p=[0.8, 0.15, 0.05]),
                 rng.choice([2, 1, 0, -1], 4000, p=[0.05, 0.1, 0.8, 0.05])),
        np.where(match, rng.choice([1, 0], 4000, p=[0.9, 0.1]), rng.choice([1, 0], 4000,
                                                                           p=[0.2, 0.8])),
        np.where(match, rng.choice([3, 2, 1, 0], 4000, p=[0.7, 0.1, 0.1, 0.1]),
                 rng.choice([3, 2, 1, 0], 4000, p=[0.02, 0.03, 0.05, 0.9])),
    ]).astype(np.int8)
    random_levels = rng.choice([0, 1], size=(3000, 3), p=[0.95, 0.05]).astype(np.int8)
    whole = FellegiSunter().fit(
        ComparisonMatrix(comparisons, levels, np.zeros(levels.shape, np.float32)),
        random=ComparisonMatrix(comparisons, random_levels, np.zeros((3000, 3), np.float32)))
    patterns, counts = np.unique(levels, axis=0, return_counts=True)
    order = rng.permutation(len(patterns))
    # One pattern split over two groups, as two partitions may report it.
    split = np.concatenate([patterns[order], patterns[order][:1]])
    halves = np.concatenate([counts[order], [0]])
    halves[0], halves[-1] = halves[0] // 2, halves[0] - halves[0] // 2
    r_patterns, r_counts = np.unique(random_levels, axis=0, return_counts=True)
    counted = fit_counts(FellegiSunter(), comparisons, split, halves,
                         random=random_matrix(comparisons, r_patterns[::-1], r_counts[::-1]))
    assert counted.m_probabilities_ == whole.m_probabilities_
    assert counted.u_probabilities_ == whole.u_probabilities_
    assert counted.prior_ == whole.prior_
    assert counted.n_iterations_ == whole.n_iterations_


def test_connected_components_on_a_long_chain_and_a_star(spark):
    """A chain of 200 nodes needs 199 rounds of label propagation; large/small star needs a
    few. Cluster ids must be those of the local `connected_components`."""
    from linkage.engines.spark._graph import cluster_ids
    from linkage.engines.spark.session import quiet_pyspark

    rng = np.random.default_rng(11)
    n = 600
    nodes = rng.permutation(n)  # the chain visits the nodes in a random order
    chain = nodes[:200]
    a, b = [chain[:-1]], [chain[1:]]
    centre, leaves = nodes[200], nodes[201:350]  # a star around a large node ...
    a.append(np.full(len(leaves), centre))
    b.append(leaves)
    a.append(rng.choice(nodes[350:], 100))  # ... and a sprinkle of small components
    b.append(rng.choice(nodes[350:], 100))
    left, right = np.concatenate(a).astype(np.int64), np.concatenate(b).astype(np.int64)
    with quiet_pyspark():
        edges = spark.createDataFrame(pd.DataFrame({"a": left, "b": right}))
        ids, rounds = cluster_ids(edges, n)
    np.testing.assert_array_equal(ids, connected_components(n, left, right))
    assert len(np.unique(ids[chain])) == 1 and len(np.unique(ids[nodes[200:350]])) == 1
    assert 1 <= rounds <= 20, rounds


def test_budget_error_is_the_local_one(spark):
    customers = ROOT / "sample_data" / "customers.csv"
    messages = []
    for engine in ("local", "spark"):
        with pytest.raises(BudgetError) as caught:
            lk.dedupe(customers, _rules("customers.yaml", max_pairs=100), engine=engine,
                      progress=False)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "blocking[1].keys" in messages[1] or "blocking[0].keys" in messages[1]


def test_a_windows_budget_error_is_the_local_one(spark):
    """A sorted neighbourhood over the budget: the same words on Spark, its window named."""
    customers = ROOT / "sample_data" / "customers.csv"
    blocking = [{"name": "by_city", "type": "sorted_neighbourhood", "sort_key": ["city"],
                 "window": 20}]
    messages = []
    for engine in ("local", "spark"):
        with pytest.raises(BudgetError) as caught:
            lk.dedupe(customers, _rules("customers.yaml", blocking=blocking, max_pairs=5000),
                      engine=engine, progress=False)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "`by_city`" in messages[1] and "Narrow its `window` (20 now; " in messages[1]


BAD_DATES = {
    # The normalizer cannot read two values: the Spark engine says what the local one says.
    "normalize": [{"column": "born", "type": "date"}],
    # No normalizer: the date comparison, inside a Spark task, finds values that are not ISO
    # and says so as the local engine does (counting what its batch of pairs holds).
    "compare": [],
}


@pytest.mark.parametrize("stage", list(BAD_DATES))
def test_bad_dates_fail_with_the_local_message(spark, stage):
    frame = pd.DataFrame({"id": ["a", "b", "c"], "name": ["Ann Lee", "Ann Lee", "Ann Lee"],
                          "born": ["1990-01-02", "1990-02-31", "not a date"]})
    rules = {"id_column": "id", "normalize": BAD_DATES[stage],
             "blocking": [{"keys": [["name"]]}],
             "comparisons": [{"type": "jaro_winkler", "column": "name"},
                             {"type": "date", "column": "born"}]}
    messages = []
    for engine in ("local", "spark"):
        with pytest.raises(InputError) as caught:
            lk.dedupe(frame, lk.Rules.from_dict(rules), engine=engine, progress=False)
        messages.append(str(caught.value))
    if stage == "normalize":
        assert messages[0] == messages[1]
    else:  # raised inside a task: the count and examples are those of the failing batch
        assert messages[1].split(":")[0] == messages[0].split(":")[0] == "column `born`"
        assert messages[1].split(").")[-1] == messages[0].split(").")[-1]
    assert "born" in messages[1] and "1990-02-31" in messages[1]


def test_a_range_that_cannot_read_a_date_fails_with_the_local_message(spark):
    """A range on a date column no normalizer made ISO: inside a Spark task the range's
    check raises what the local engine raises (count and examples from the failing batch)."""
    frame = pd.DataFrame({"id": ["a", "b", "c"], "name": ["Ann Lee", "Ann Lee", "Ann Lee"],
                          "born": ["1990-01-02", "02/01/1990", "1990-01-03"]})
    rules = {"id_column": "id",
             "blocking": [{"type": "range", "key": ["name"], "column": "born",
                           "within_days": 5}],
             "comparisons": [{"type": "jaro_winkler", "column": "name"}]}
    messages = []
    for engine in ("local", "spark"):
        with pytest.raises(InputError) as caught:
            lk.dedupe(frame, lk.Rules.from_dict(rules), engine=engine, progress=False)
        messages.append(str(caught.value))
    assert messages[1].split(":")[0] == messages[0].split(":")[0] == "column `born`"
    assert messages[1].split(").")[-1] == messages[0].split(").")[-1]
    assert "'02/01/1990'" in messages[1] and "Add a `date` normalizer for `born`" in messages[1]


UNSUPPORTED = [
    ({"blocking": [{"keys": [["name"]]}, {"type": "simhash", "column": "name"}]},
     "`blocking[1].type`"),
    ({"group_by": "email"}, "`group_by`"),
    ({"comparisons": [{"type": "token_cosine", "column": "name"}]}, "`comparisons[0].type`"),
]


@pytest.mark.parametrize(("change", "key"), UNSUPPORTED, ids=[k for _, k in UNSUPPORTED])
def test_unsupported_rules_fail_clearly_before_spark_starts(change, key):
    base = {"id_column": "id", "blocking": [{"keys": [["name"]]}],
            "comparisons": [{"type": "jaro_winkler", "column": "name"}]}
    frame = pd.DataFrame({"id": ["a", "b"], "name": ["Ann", "Ann"], "email": ["x", "y"]})
    rules = lk.Rules.from_dict({**base, **change}, source="rules/test.yaml")
    with pytest.raises(InputError) as caught:
        lk.dedupe(frame, rules, engine="spark", progress=False)
    message = str(caught.value)
    assert key in message and "--engine local" in message and "rules/test.yaml" in message


def test_resume_on_spark_reads_the_kept_stages_and_writes_the_local_files(spark, tmp_path):
    """`--resume` with Spark: the candidate and compared pairs are kept as Parquet; a rerun
    reads them (no blocking, no comparing) and gives the same result, also at another
    threshold; the CLI run writes the local engine's files."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    kept = tmp_path / "kept"
    first = lk.dedupe(customers, _rules("customers.yaml"), engine="spark", progress=False,
                      checkpoint=kept)
    assert (kept / "spark-block.json").exists() and (kept / "spark-compare.json").exists()
    again = lk.dedupe(customers, _rules("customers.yaml"), engine="spark", progress=False,
                      checkpoint=kept)
    assert again.timings["block"] == again.timings["compare"] == 0.0
    pd.testing.assert_frame_equal(again.pairs, first.pairs)
    local = lk.dedupe(customers, _rules("customers.yaml"), progress=False)
    _same_result(local, again)
    stricter = {**yaml.safe_load((ROOT / "rules" / "customers.yaml").read_text("utf-8"))}
    stricter["scoring"] = {**stricter["scoring"], "threshold": stricter["scoring"].get(
        "threshold", 0.0) + 2.0}
    moved = lk.dedupe(customers, lk.Rules.from_dict(stricter), engine="spark",
                      progress=False, checkpoint=kept)
    assert moved.timings["block"] == 0.0
    _same_result(lk.dedupe(customers, lk.Rules.from_dict(stricter), progress=False), moved)

    done = CliRunner().invoke(
        main,
        ["dedupe", str(ROOT / "sample_data" / "customers.csv"), "--rules",
         str(ROOT / "rules" / "customers.yaml"), "--out", str(tmp_path / "out"),
         "--engine", "spark", "--resume"],
    )
    assert done.exit_code == 0, done.output
    from_file = lk.dedupe(ROOT / "sample_data" / "customers.csv", _rules("customers.yaml"),
                          progress=False)
    expected = _written(from_file, tmp_path / "local")
    assert {n: (tmp_path / "out" / n).read_bytes() for n in expected} == expected
