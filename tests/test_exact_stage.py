"""The exact stage: identical (normalized) records are linked without blocking them all."""

from __future__ import annotations

import pandas as pd

import linkage as lk
from tests.conftest import ROOT


def _rules(exact: bool) -> lk.Rules:
    data = lk.Rules.from_yaml(ROOT / "rules" / "labelled_text.yaml").to_dict()
    data["guards"] = []  # compare the stage alone
    if exact:
        data["exact"] = {"columns": ["text"]}
    return lk.Rules.from_dict(data)


def test_exact_stage_keeps_the_partition_and_saves_pairs():
    source = ROOT / "sample_data" / "labelled_text.csv"
    plain = lk.dedupe(source, _rules(False), progress=False)
    staged = lk.dedupe(source, _rules(True), progress=False)
    stats = staged.summary()["stages"]["exact"]
    assert stats["records_collapsed"] > 100
    # Copies are linked to their group's first member by the exact bit, not by blocking.
    exact_bit = 1 << len(staged.rules.blocking)
    assert ((staged.pairs["blockers"] & exact_bit) > 0).sum() == stats["records_collapsed"]
    # A plain run collapses copies equal on every compared column too (the copies stage).
    assert len(staged.pairs) <= len(plain.pairs)
    assert plain.summary()["stages"]["copies"]["records_collapsed"] > 100
    same = plain.clusters.merge(staged.clusters, on="doc_id", suffixes=("_a", "_b"))
    # The same partition: each plain cluster maps to exactly one staged cluster and back.
    assert same.groupby("cluster_id_a")["cluster_id_b"].nunique().max() == 1
    assert same.groupby("cluster_id_b")["cluster_id_a"].nunique().max() == 1


def test_exact_groups_normalize_case_and_spaces():
    frame = pd.DataFrame({"id": ["a", "b", "c"], "text": ["Hello,  World", "hello world",
                                                          "goodbye world"]})
    rules = lk.Rules.from_dict({
        "id_column": "id",
        "exact": {"columns": ["text"]},
        "blocking": [{"keys": ["first(text, 3)"]}],
        "comparisons": [{"type": "exact", "column": "text"}],
        "scoring": {"threshold": 1.0},
    })
    result = lk.dedupe(frame, rules, progress=False)
    c = result.clusters.set_index("id")["cluster_id"]
    assert c["a"] == c["b"] != c["c"]


def test_url_stage_joins_pages_crawled_twice_and_leaves_missing_alone():
    frame = pd.DataFrame({
        "id": ["a", "b", "c", "d", "e"],
        "url": ["https://news.example/story?id=7&utm_source=x", "http://www.news.example/story?id=7",
                "https://news.example/story?id=8", None, None],
        "text": ["first version", "second version of the same page", "another story",
                 "no url here", "no url there"],
    })
    rules = lk.Rules.from_dict({
        "id_column": "id",
        "url": {"column": "url"},
        "exact": {"columns": ["url"]},
        "blocking": [{"keys": ["first(text, 2)"]}],
        "comparisons": [{"type": "exact", "column": "text"}],
        "scoring": {"threshold": 1.0},
    })
    result = lk.dedupe(frame, rules, progress=False)
    c = result.clusters.set_index("id")["cluster_id"]
    assert c["a"] == c["b"]
    assert len({c["c"], c["d"], c["e"], c["a"]}) == 4  # empty urls are nobody's copy
    stages = result.summary()["stages"]
    assert stages["url"]["records_collapsed"] == 1 and stages["exact"]["records_collapsed"] == 0
