"""The text pipeline (exact -> MinHash -> semantic) on the labelled texts, with the real model."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import linkage as lk
from tests.conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs") / "out"
    done = run_cli("dedupe", ROOT / "sample_data" / "labelled_text.csv", "--rules",
                   ROOT / "rules" / "documents.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(out / "clusters.parquet")
    truth = pd.read_csv(ROOT / "sample_data" / "labelled_text_truth.csv", dtype=str)
    return out, clusters.merge(truth, on="doc_id", validate="one_to_one")


def test_every_stage_reports_its_counts(docs):
    out, _ = docs
    stages = json.loads((out / "summary.json").read_text())["stages"]
    assert stages["exact"]["records_collapsed"] > 100
    assert stages["semantic"]["records_embedded"] > 0
    assert stages["block"]["blockers"]["near_copies"]["proposed_pairs"] > 0


def test_duplicates_removed_are_copies_of_their_representative(docs):
    _, rows = docs
    groups = rows.set_index("doc_id")["text_group"]
    removed = rows[rows["action"] == "duplicate"]
    assert len(removed) > 150
    same = groups.loc[removed["representative_id"]].to_numpy() == removed["text_group"].to_numpy()
    assert same.mean() >= 0.95  # precision of removals against the generator's text groups
    exact = rows[rows["kind"] == "exact_duplicate"]
    assert (exact["action"] != "keep").mean() > 0.5
    assert (rows.loc[rows["kind"] == "conflicting_label", "action"] == "review").all()


def test_semdedup_keeps_the_record_farthest_from_its_centroid():
    texts = ["How do I reset my password?", "How can I reset my password?",
             "How do I reset my password ?", "What time does the store open on Sunday?"]
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "text": texts, "source": "qa"})
    rules = lk.Rules.from_dict({
        "id_column": "id",
        "blocking": [{"keys": ["id"]}],  # no blocker pairs: the semantic stage does the work
        "semantic": {"column": "text", "epsilon": 0.1, "n_clusters": 1},
        "comparisons": [{"type": "exact", "column": "text"}],
        "keep": "farthest_from_centroid",
    })
    result = lk.dedupe(frame, rules, progress=False)
    c = result.clusters.set_index("id")
    assert c.loc["a", "cluster_id"] == c.loc["b", "cluster_id"] == c.loc["c", "cluster_id"]
    assert c.loc["d", "cluster_size"] == 1
    assert (c["action"] == "keep").sum() == 2
    assert result.summary()["stages"]["semantic"]["duplicate_pairs"] >= 2


def test_farthest_from_centroid_needs_the_semantic_stage():
    frame = pd.DataFrame({"id": ["a", "b"], "text": ["x y", "x y"]})
    rules = lk.Rules.from_dict({
        "id_column": "id", "blocking": [{"keys": ["text"]}],
        "comparisons": [{"type": "exact", "column": "text"}], "keep": "farthest_from_centroid",
    })
    with pytest.raises(lk.LinkageError, match="semantic"):
        lk.dedupe(frame, rules, progress=False)
