"""Clusters held together by weak links are split, and say so (issue 14, item 4).

The chained table is built for the trap: households whose members share a surname and an
address, and between two households one person (a relative, a lodger) who shares the surname
of one and the address of the next. Rules that match on a shared surname or a shared address
chain every household into one component; the split cuts it at the weak links.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import linkage
from linkage.clustering import split_weak_links
from linkage.errors import RulesError
from linkage.settings import Rules
from tests.conftest import ROOT, f1_score, pairs_of_clusters, run_cli

HOUSEHOLDS = 150
GIVEN = ["anna", "ben", "clara", "david", "emma", "felix", "greta", "hugo", "ida", "jon"]

CHAIN_RULES = {
    "id_column": "id",
    "blocking": [{"keys": [["surname"], ["address"]]}],
    "comparisons": [{"type": "exact", "column": "surname"},
                    {"type": "exact", "column": "address"},
                    {"type": "exact", "column": "given_name"}],
    "scoring": {"type": "rule_sum", "threshold": 2.0,
                "weights": {"surname": {"exact": 2.0, "else": 0.0},
                            "address": {"exact": 2.0, "else": 0.0},
                            "given_name": {"exact": 1.0, "else": 0.0}}},
}


def households(n: int = HOUSEHOLDS, seed: int = 5) -> pd.DataFrame:
    """Three people per household (surname s_h, address a_h), and between households h and
    h + 1 one person with surname s_h who lives at a_(h+1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n):
        for k in range(3):
            rows.append((f"s{h}", f"{h} main street", GIVEN[(3 * h + k) % len(GIVEN)]))
        if h + 1 < n:
            rows.append((f"s{h}", f"{h + 1} main street", f"lodger{int(rng.integers(1000))}"))
    frame = pd.DataFrame(rows, columns=["surname", "address", "given_name"])
    frame.insert(0, "id", [f"r{i:05d}" for i in range(len(frame))])
    return frame


def _run(frame: pd.DataFrame, split: bool):
    rules = Rules.from_dict({**CHAIN_RULES, "split_weak_links": split})
    return linkage.dedupe(frame, rules, progress=False)


def test_a_chain_of_households_is_split_at_its_weak_links():
    frame = households()
    whole = _run(frame, split=False)
    assert whole.summary()["stages"]["cluster"]["largest_cluster"] == len(frame)  # the trap

    result = _run(frame, split=True)
    summary = result.summary()
    split = summary["stages"]["cluster"]["split_weak_links"]
    assert split["clusters_split"] == 1 and split["largest_before_split"] == len(frame)
    # Cut at the weak (surname-only, address-only) links: each household is whole again.
    sizes = result.clusters.groupby("cluster_id").size()
    assert sizes.max() == 3
    members = result.clusters.merge(frame, on="id")
    household_of = members.groupby("cluster_id")["address"].nunique()
    assert (household_of == 1).all()
    # The removed links are recorded, per record, with the reason.
    decisions = result.guard_decisions
    mine = decisions[decisions["guard"] == "split_weak_links"]
    assert len(mine) == len(frame) and (mine["decision"] == "split").all()
    assert "held together by weak links" in mine["detail"].iloc[0]
    # ... and the pairs it cut are no longer matched.
    cut = split["pairs_removed"]
    assert cut > 0
    assert int(result.pairs["is_match"].sum()) == int(whole.pairs["is_match"].sum()) - cut
    # A run whose pairs chained the whole table is not a result: it says so.
    codes = {d["code"]: d["severity"] for d in summary["diagnostics"]}
    assert codes.get("giant_cluster") == "unreliable" and summary["model_reliable"] is False


def test_the_split_repeats_byte_for_byte():
    frame = households(60)
    first, second = _run(frame, True), _run(frame.sample(frac=1, random_state=1)
                                              .reset_index(drop=True), True)
    a = first.clusters.set_index("id")["cluster_size"].sort_index()
    b = second.clusters.set_index("id")["cluster_size"].sort_index()
    assert a.equals(b)


def test_dense_duplicate_clusters_are_not_split(datasets):
    """FEBRL3's clusters (an original and up to several copies) are supported: the split
    changes nothing, cluster for cluster."""
    path = datasets / "febrl" / "dataset3.csv"
    rules = Rules.from_yaml(ROOT / "rules" / "febrl.yaml")
    on = linkage.dedupe(path, rules, progress=False)
    rules.split_weak_links = False
    off = linkage.dedupe(path, rules, progress=False)
    assert on.summary()["stages"]["cluster"]["split_weak_links"]["clusters_split"] == 0
    assert on.clusters["cluster_id"].equals(off.clusters["cluster_id"])
    truth = pd.read_csv(path, skipinitialspace=True)
    truth["entity"] = truth["rec_id"].str.extract(r"rec-(\d+)")[0]
    f1, _, _ = f1_score(pairs_of_clusters(on.clusters, "rec_id", "cluster_id"),
                        pairs_of_clusters(truth, "rec_id", "entity"))
    assert f1 >= 0.99


def test_stars_cliques_and_chains_by_the_rule():
    # A star of 40 (one original, 39 copies): a hub, never split.
    keep, splits = split_weak_links(40, np.zeros(39, int), np.arange(1, 40), np.ones(39))
    assert keep.all() and splits == []
    # A chain of 100 records with one pair weaker than the rest: far above what 99 pairs
    # support (k > 10 * (1 + 2m/k)), cut at the weak pair first, then until pieces hold.
    left = np.arange(99)
    weight = np.full(99, 5.0)
    weight[49] = 1.0
    keep, splits = split_weak_links(100, left, left + 1, weight)
    assert not keep[49] and splits[0]["pieces"] >= 2 and splits[0]["size"] == 100
    # Identical records (a stage's pairs) are never cut, even in a chain.
    keep, _ = split_weak_links(100, left, left + 1, weight, unbreakable=np.ones(99, bool))
    assert keep.all()


def test_the_rules_key_is_validated_and_off_keeps_components_whole():
    with pytest.raises(RulesError, match="split_weak_links"):
        Rules.from_dict({**CHAIN_RULES, "split_weak_links": "yes"})
    result = _run(households(30), split=False)
    summary = result.summary()
    assert "split_weak_links" not in summary["stages"]["cluster"]
    assert summary["stages"]["cluster"]["largest_cluster"] == len(result.clusters)
    # Kept whole, the chain is the result's largest cluster, and the run says it is wrong.
    giant = [d for d in summary["diagnostics"] if d["code"] == "giant_cluster"]
    assert giant and giant[0]["message"].startswith("The largest cluster holds 119 of 119")
    assert summary["model_reliable"] is False


def test_validate_says_whether_clusters_are_split(tmp_path):
    path = tmp_path / "chain.yaml"
    Rules.from_dict({**CHAIN_RULES, "split_weak_links": False}).to_yaml(path)
    done = run_cli("validate", path)
    assert done.returncode == 0 and "split_weak_links: false" in done.stdout


def test_summary_json_and_report_carry_the_split(tmp_path):
    out = tmp_path / "run"
    _run(households(60), split=True).write(out)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["stages"]["cluster"]["split_weak_links"]["clusters_split"] == 1
    guards = pd.read_parquet(out / "guards.parquet")
    assert set(guards["guard"]) == {"split_weak_links"}
