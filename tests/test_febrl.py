"""FEBRL end to end through the CLI with the shipped rules: pairwise F1 asserted.

The FEBRL record id carries the truth (`rec-N-org`, `rec-N-dup-k`), so the tests replace it with
an opaque id before the run and keep the mapping to themselves: no truth reaches the code.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from tests.conftest import ROOT, f1_score, pairs_of_clusters, run_cli


def _opaque(frame: pd.DataFrame, salt: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """Swap `rec_id` for a hash, and return the hidden map back to the entity number."""
    out = frame.copy()
    opaque = [
        "r" + hashlib.sha256(f"{salt}:{v}".encode()).hexdigest()[:12] for v in out["rec_id"]
    ]
    entity = out["rec_id"].str.extract(r"rec-(\d+)-")[0]
    hidden = dict(zip(opaque, entity, strict=True))
    out["rec_id"] = opaque
    return out.sample(frac=1.0, random_state=3).reset_index(drop=True), hidden


def _read_febrl(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, skipinitialspace=True, keep_default_na=False)


def test_febrl3_dedupe_f1(tmp_path, datasets):
    frame, entity = _opaque(_read_febrl(datasets / "febrl" / "dataset3.csv"), "d3")
    frame.to_csv(tmp_path / "in.csv", index=False)
    done = run_cli("dedupe", tmp_path / "in.csv", "--rules", ROOT / "rules" / "febrl.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(tmp_path / "out" / "clusters.parquet")
    assert len(clusters) == len(frame)
    predicted = pairs_of_clusters(clusters, "rec_id", "cluster_id")
    truth_frame = pd.DataFrame({"rec_id": list(entity), "entity": list(entity.values())})
    truth = pairs_of_clusters(truth_frame, "rec_id", "entity")
    assert len(truth) == 6538
    precision, recall, f1 = f1_score(predicted, truth)
    assert f1 >= 0.97, (precision, recall, f1)
    dedup = pd.read_parquet(tmp_path / "out" / "deduplicated.parquet")
    assert len(dedup) == (clusters["action"] == "keep").sum()
    assert list(dedup.columns) == list(frame.columns)


def test_febrl4_link_f1(tmp_path, datasets):
    left, ent_l = _opaque(_read_febrl(datasets / "febrl" / "dataset4a.csv"), "4a")
    right, ent_r = _opaque(_read_febrl(datasets / "febrl" / "dataset4b.csv"), "4b")
    left.to_csv(tmp_path / "a.csv", index=False)
    right.to_csv(tmp_path / "b.csv", index=False)
    done = run_cli("link", tmp_path / "a.csv", tmp_path / "b.csv", "--rules",
                   ROOT / "rules" / "febrl.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    links = pd.read_parquet(tmp_path / "out" / "links.parquet")
    predicted = set(zip(links["id_l"], links["id_r"], strict=True))
    by_entity = {e: i for i, e in ent_r.items()}
    truth = {(i, by_entity[e]) for i, e in ent_l.items() if e in by_entity}
    assert len(truth) == 5000
    precision, recall, f1 = f1_score(predicted, truth)
    assert f1 >= 0.97, (precision, recall, f1)
    clusters = pd.read_parquet(tmp_path / "out" / "clusters.parquet")
    assert len(clusters) == len(left) + len(right)
    assert set(clusters["source"]) == {"left", "right"}


@pytest.mark.parametrize("name", ["dataset3.csv"])
def test_febrl_summary_counts(tmp_path, datasets, name):
    frame, _ = _opaque(_read_febrl(datasets / "febrl" / name), "s")
    frame.to_csv(tmp_path / "in.csv", index=False)
    done = run_cli("dedupe", tmp_path / "in.csv", "--rules", ROOT / "rules" / "febrl.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    import json

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stages"]["read"]["records"] == 5000
    assert summary["actions"]["keep"] + summary["actions"]["duplicate"] == 5000
    block = summary["stages"]["block"]
    assert block["candidate_pairs"] <= sum(b["proposed_pairs"] for b in block["blockers"].values())
    assert 0.99 < block["reduction_ratio"] < 1
    assert "removal rate" in done.stdout
