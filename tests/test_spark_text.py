"""The text pipeline on Spark against the local engine, on real local Spark (issue 17, part 2).

The url and exact stages, the MinHash-LSH blocker (bands as join keys, candidates verified by
exact Jaccard, oversized buckets skipped), SemDeDup (`semantic:`), `farthest_from_centroid`
and the supervised scorer must give the local engine's tables, summary and files.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

import linkage as lk
from linkage.errors import LinkageWarning
from tests.conftest import ROOT
from tests.test_spark import _same_result, _written
from tests.test_spark_distributed import _same_tables

TEXTS = ROOT / "sample_data" / "labelled_text.csv"


def _documents(**changes) -> lk.Rules:
    """rules/documents.yaml, with some keys changed or (None) removed."""
    path = ROOT / "rules" / "documents.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return lk.Rules.from_dict(data, source=str(path))


@pytest.fixture(scope="module")
def texts() -> pd.DataFrame:
    return pd.read_csv(TEXTS, dtype=str)


def _both(frame, rules_of, **options):
    """The local and the Spark result of the same rules (a fresh object each: fitting
    changes it), with the warnings each raised."""
    results, said = [], []
    for engine in ("local", "spark"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(lk.dedupe(frame, rules_of(), engine=engine, progress=False,
                                     **options))
        said.append([str(w.message) for w in caught if issubclass(w.category, LinkageWarning)])
    return results, said


def test_documents_pipeline_on_spark_writes_the_local_files(spark, texts, tmp_path):
    """rules/documents.yaml whole: exact → MinHash-LSH → SemDeDup → jaccard → rule sum →
    max_cluster_size, conflicting_labels, keep_up_to."""
    (local, on_spark), _ = _both(texts, _documents)
    _same_result(local, on_spark)
    assert _written(on_spark, tmp_path / "spark") == _written(local, tmp_path / "local")
    # not a trivial agreement: every stage found something
    stages = on_spark.summary_data["stages"]
    proposed = stages["block"]["blockers"]["near_copies"]["proposed_pairs"]
    assert proposed > 0
    assert stages["exact"]["records_collapsed"] > 0
    assert stages["semantic"]["duplicate_pairs"] > 0
    assert (on_spark.clusters["action"] == "review").sum() > 0
    assert (on_spark.clusters["action"] == "duplicate").sum() > 100


def test_minhash_alone_with_oversized_buckets_as_locally(spark, texts):
    """A bucket above `max_block_size` is skipped, listed and warned about as locally; the
    verified pairs of the others are the local ones (no exact stage: identical texts meet in
    the blocker's buckets)."""
    def rules():
        return _documents(exact=None, semantic=None, guards=None, max_block_size=4,
                          max_removal_rate=0.9)

    (local, on_spark), (local_said, spark_said) = _both(texts, rules)
    _same_result(local, on_spark)
    skipped = on_spark.summary_data["stages"]["block"]["skipped_blocks"]
    assert len(skipped) > 0
    assert spark_said == local_said and any("minhash band" in s for s in spark_said)


def test_minhash_link_pairs_across_the_tables_as_locally(spark, texts):
    """Link mode: buckets pair only records of different tables; the estimate counts those."""
    data = yaml.safe_load((ROOT / "rules" / "documents.yaml").read_text(encoding="utf-8"))
    data = {k: data[k] for k in ("id_column", "blocking", "comparisons", "scoring")}
    left, right = texts.iloc[::2].reset_index(drop=True), texts.iloc[1::2].reset_index(drop=True)
    local = lk.link(left, right, lk.Rules.from_dict(data), progress=False)
    on_spark = lk.link(left, right, lk.Rules.from_dict(data), engine="spark", progress=False)
    _same_result(local, on_spark)
    assert len(on_spark.links) > 0


def test_url_and_exact_stages_keep_the_local_record_and_reasons(spark):
    """Copies by URL (tracking parameters, case, `www.`) and by exact normalized text: one
    record per group goes on to blocking, and the kept record and the reasons are the
    local engine's."""
    rng = np.random.default_rng(7)
    base = [f"https://example.com/item/{k}" for k in range(40)]
    urls = [u if rng.random() < 0.5 else u.replace("https://", "http://www.")
            + "?utm_source=x" for u in rng.choice(base, 160)]
    words = ["red chair for the garden", "blue lamp with a long cord", "old oak desk"]
    frame = pd.DataFrame({
        "id": [f"p{k:04d}" for k in range(160)],
        "url": urls,
        "title": [str(rng.choice(words)).upper() if rng.random() < 0.3
                  else str(rng.choice(words)) + "!" * int(rng.integers(0, 2))
                  for _ in range(160)],
        "shop": rng.choice(["a", "b", None], 160),
    })

    def rules():
        return lk.Rules.from_dict({
            "id_column": "id", "url": {"column": "url"},
            "exact": {"columns": ["title"], "normalize": True},
            "blocking": [{"keys": [["shop"]]}],
            "comparisons": [{"type": "jaro_winkler", "column": "title"}],
            "scoring": {"type": "rule_sum", "threshold": 1.0,
                        "weights": {"title": {"exact": 1.0, "else": 0.0}}},
            "keep": "first", "max_removal_rate": 1.0,
        })

    (local, on_spark), _ = _both(frame, rules)
    _same_result(local, on_spark)
    reasons = on_spark.clusters["reason"].astype(str)
    assert reasons.str.contains("URL").any() and reasons.str.contains("identical").any()


def test_farthest_from_centroid_keeps_the_local_record(spark, texts):
    def rules():
        return _documents(keep="farthest_from_centroid")

    (local, on_spark), _ = _both(texts, rules)
    _same_result(local, on_spark)


def _supervised_customers(tmp_path, model: str, **changes):
    """The sample customers, rules/customers.yaml (with `changes`) scored by a supervised
    `model`, and its labels: 300 pairs of a first run, answered by the sample's truth as a
    reviewer would, written to tmp_path/labels.csv."""
    customers = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    truth = pd.read_csv(ROOT / "sample_data" / "customers_truth.csv", dtype=str)
    person = truth.set_index("customer_id")["person_id"]
    data = yaml.safe_load((ROOT / "rules" / "customers.yaml").read_text(encoding="utf-8"))
    data.update(changes)
    first = lk.dedupe(customers, lk.Rules.from_dict(data), progress=False).pairs
    sample = first.sample(min(300, len(first)), random_state=0)[["id_l", "id_r"]]
    sample["label"] = (person.reindex(sample["id_l"]).to_numpy()
                       == person.reindex(sample["id_r"]).to_numpy()).astype(int)
    sample.to_csv(tmp_path / "labels.csv", index=False)
    data["scoring"] = {"type": "supervised", "labels": str(tmp_path / "labels.csv"),
                       "model": model}
    return customers, data, sample


@pytest.mark.parametrize("model", ["gradient_boosting", "logistic_regression"])
def test_supervised_scorer_learns_and_scores_as_locally(spark, tmp_path, model):
    """Labels for pairs sampled from a first run (the sample's truth answers them, as a
    reviewer would), then the supervised scorer: trained on the driver on the labelled pairs
    compared on Spark, applied on the executors; the model, weights and files are local's."""
    customers, data, sample = _supervised_customers(tmp_path, model)
    path = ROOT / "rules" / "customers.yaml"

    def rules():
        return lk.Rules.from_dict(data, source=str(path))

    (local, on_spark), (local_said, spark_said) = _both(customers, rules)
    _same_result(local, on_spark)
    assert spark_said == local_said
    assert on_spark.summary_data["stages"]["score"]["labelled_pairs"] == len(sample)
    assert _written(on_spark, tmp_path / "spark") == _written(local, tmp_path / "local")


def _embedding_rules(link: bool = False) -> dict:
    return {
        "id_column": "doc_id",
        "blocking": [{"name": "meaning", "type": "embedding", "column": "text",
                      "threshold": 0.8, "k": 5}],
        "comparisons": [{"type": "cosine", "column": "text", "thresholds": [0.95, 0.9]},
                        {"type": "jaccard", "column": "text", "name": "words",
                         "thresholds": [0.5]}],
        "scoring": {"type": "rule_sum", "threshold": 2.0,
                    "weights": {"text": {"exact": 3.0, ">=0.95": 2.0, ">=0.9": 1.0,
                                         "else": -1.0},
                                "words": {"exact": 1.0, ">=0.5": 0.5, "else": 0.0}}},
        **({"one_to_one": True} if link else {"keep": "first", "max_removal_rate": 1.0}),
    }


def test_embedding_blocker_and_cosine_as_locally(spark, texts):
    """Neighbours in embedding space and cosine levels: the vectors are made on the
    executors, the neighbour search is the blocker's own; the pairs, levels and weights are
    the local engine's (the vectors come from the cache the local run filled)."""
    (local, on_spark), _ = _both(texts, lambda: lk.Rules.from_dict(_embedding_rules()))
    _same_result(local, on_spark)
    assert on_spark.summary_data["stages"]["block"]["blockers"]["meaning"][
        "proposed_pairs"] > 100
    assert (on_spark.pairs["text_level"] >= 2).sum() > 0


def test_embedding_blocker_links_across_the_tables_as_locally(spark, texts):
    left, right = texts.iloc[::2].reset_index(drop=True), texts.iloc[1::2].reset_index(drop=True)
    local = lk.link(left, right, lk.Rules.from_dict(_embedding_rules(True)), progress=False)
    on_spark = lk.link(left, right, lk.Rules.from_dict(_embedding_rules(True)),
                       engine="spark", progress=False)
    _same_result(local, on_spark)
    assert len(on_spark.links) > 0


def test_semdedup_above_the_driver_limit_runs_on_the_executors(spark, texts, monkeypatch):
    """Above `DRIVER_VECTORS` embedded records, k-means is fitted on a sample on the driver
    and the vectors are assigned and compared inside their clusters on the executors: an
    approximation of the local result (here 200 of 516 vectors sampled: measured 97 of the
    local 98 pairs, none other)."""
    from linkage.engines.spark import _text
    from linkage.text.embeddings import Encoder

    monkeypatch.setattr(_text, "DRIVER_VECTORS", 200)

    def rules():
        return _documents(exact=None, guards=None, blocking=[{"keys": ["doc_id"]}],
                          max_removal_rate=1.0)

    local = lk.dedupe(texts, rules(), progress=False)
    on_spark = lk.dedupe(texts, rules(), engine="spark", progress=False)
    stats = on_spark.summary_data["stages"]["semantic"]
    assert stats["records_embedded"] == local.summary_data["stages"]["semantic"][
        "records_embedded"] > 200
    found = set(zip(on_spark.pairs["id_l"], on_spark.pairs["id_r"], strict=True))
    expected = set(zip(local.pairs["id_l"], local.pairs["id_r"], strict=True))
    assert len(found & expected) >= 0.9 * len(expected) > 50
    # every pair found is a semantic duplicate: cosine above 1 - epsilon
    text_of = texts.set_index("doc_id")["text"]
    pairs = sorted(found)
    vectors = Encoder().encode([text_of[a] for a, _ in pairs] + [text_of[b] for _, b in pairs])
    cosine = np.einsum("ij,ij->i", vectors[:len(pairs)], vectors[len(pairs):])
    assert (cosine > 1 - 0.02 - 1e-6).all()


# -- the distributed route (issue 17): the same stages with no record or pair on the driver


def _distributed(local_input, rules_of, tmp_path, monkeypatch, **options):
    """The local result over `local_input` (a frame) and the distributed route's over the
    same records written as Parquet (`LINKAGE_SPARK_DRIVER_ROWS=0`)."""
    path = tmp_path / "input.parquet"
    local_input.to_parquet(path, index=False)
    said, results = [], []
    for engine, source in (("local", local_input), ("spark", path)):
        if engine == "spark":
            monkeypatch.setenv("LINKAGE_SPARK_DRIVER_ROWS", "0")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(lk.dedupe(source, rules_of(), engine=engine, progress=False,
                                     **options))
        said.append([str(w.message) for w in caught if issubclass(w.category, LinkageWarning)])
    local, on_spark = results
    assert type(on_spark).__name__ == "DistributedResult"
    assert said[1] == said[0]  # the same warnings (oversized buckets), in the same order
    return local, on_spark


def _same_distributed(local, on_spark) -> None:
    """Every table of the distributed run equal to the local one, value for value, and the
    summary too (but for what the route leaves out or adds)."""
    from tests.test_spark_distributed import _same_summary, _table

    _same_tables(local, on_spark)
    _same_summary(local, on_spark)
    pairs, expected = _table(on_spark.pairs), _table(local.pairs)
    assert list(pairs.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(pairs.astype(str), expected.astype(str), obj="pairs")


def test_distributed_text_pipeline_as_locally(spark, texts, tmp_path, monkeypatch):
    """rules/documents.yaml with its guards (`conflicting_labels` over equal text: the
    buckets hold components widened by the same-text links), a url stage added (a URL per
    document, some written another way), `farthest_from_centroid`
    and buckets above `max_block_size`, on Spark from a Parquet file to Parquet folders: url
    → exact → MinHash-LSH (bands as join keys, verified, oversized buckets skipped and listed)
    and an embedding blocker (its own search over all vectors in one executor task, up to
    `GROUP_VECTORS`) → SemDeDup (k-means on a sample of at most `DRIVER_VECTORS` vectors:
    here all of them) → jaccard and cosine → rule sum → keep by the semantic distances,
    which stay in Spark: the local tables and summary, value for value."""
    frame = texts.iloc[::3].reset_index(drop=True)
    frame["url"] = [f"https://Example.com/d/{k % 400}" + ("?utm_source=x" if k % 3 else "")
                    for k in range(len(frame))]

    embedding = _embedding_rules()
    documents = yaml.safe_load((ROOT / "rules" / "documents.yaml").read_text(encoding="utf-8"))
    weights = {**documents["scoring"]["weights"], "meaning": {">=0.95": 0.5, "else": 0.0}}

    def rules():
        return _documents(url={"column": "url"}, keep="farthest_from_centroid",
                          max_block_size=3, max_removal_rate=1.0,
                          blocking=[*documents["blocking"], *embedding["blocking"]],
                          comparisons=[*documents["comparisons"],
                                       {**embedding["comparisons"][0], "name": "meaning"}],
                          scoring={"type": "rule_sum", "threshold": 1.0, "weights": weights})

    local, on_spark = _distributed(frame, rules, tmp_path, monkeypatch)
    _same_distributed(local, on_spark)
    stages = on_spark.summary_data["stages"]
    assert stages["block"]["blockers"]["near_copies"]["proposed_pairs"] > 0
    assert stages["block"]["blockers"]["meaning"]["proposed_pairs"] > 30
    assert (on_spark.pairs.to_pandas()["meaning_level"] >= 1).sum() > 0
    assert stages["url"]["records_collapsed"] > 0 and stages["exact"]["records_collapsed"] > 0
    assert stages["semantic"]["duplicate_pairs"] > 0
    assert len(stages["block"]["skipped_blocks"]) > 0
    reasons = on_spark.clusters.to_pandas()["reason"].astype(str)
    assert reasons.str.contains("url stage").any() and reasons.str.contains("exact").any()
    assert on_spark.summary_data["spark"]["pairs_to_driver"] == 0
    # the guards' decisions, in order, and review groups as locally; among them the same
    # text under two labels in different clusters (joined only by the same-text links)
    _same_tables(local, on_spark, ("guard_decisions", "review"))
    details = local.guard_decisions["detail"].astype(str)
    assert details.str.contains("conflicting label values").any()


def test_distributed_conflicting_labels_over_equal_text_as_locally(spark, texts, tmp_path,
                                                                     monkeypatch):
    """`conflicting_labels` with `text` groups records by cluster or by equal normalized text:
    without an exact stage, two short texts (under MinHash's `min_tokens`, so never paired)
    that normalize alike under two labels are one group only through the same-text links
    that widen the buckets' components. The local decisions, review groups and tables."""
    frame = texts.iloc[::5].reset_index(drop=True)
    extra = pd.DataFrame({"doc_id": ["X-1", "X-2", "X-3"],
                          "text": ["Great value!", "great  VALUE", "Great value"],
                          "label": ["positive", "negative", "positive"],
                          "source": ["web", "web", "qa"], "domain": ["general"] * 3})
    frame = pd.concat([frame, extra], ignore_index=True)[list(frame.columns)]

    def rules():
        return _documents(exact=None, semantic=None, max_removal_rate=1.0,
                          guards=[{"type": "conflicting_labels", "label": "label",
                                   "text": ["text"]}])

    local, on_spark = _distributed(frame, rules, tmp_path, monkeypatch)
    _same_distributed(local, on_spark)
    _same_tables(local, on_spark, ("guard_decisions", "review"))
    decided = local.guard_decisions
    assert {"X-1", "X-2", "X-3"} <= set(decided["record_id"].astype(str))
    clusters = local.clusters.set_index(local.clusters.columns[0])["cluster_id"]
    assert clusters["X-1"] != clusters["X-2"]  # not one cluster: one group by their text


def test_distributed_supervised_scorer_as_locally(spark, tmp_path, monkeypatch):
    """A logistic regression trained on the driver on the labelled pairs (only the records
    the labels name come from Spark), its weights given in the local engine's blocks on the
    executors: the local pairs, weights and clusters."""
    customers, data, sample = _supervised_customers(tmp_path, "logistic_regression",
                                                    golden=None)
    local, on_spark = _distributed(customers, lambda: lk.Rules.from_dict(data), tmp_path,
                                   monkeypatch)
    _same_distributed(local, on_spark)
    assert on_spark.summary_data["stages"]["score"]["labelled_pairs"] == len(sample)
