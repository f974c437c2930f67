"""`linkage explain`: the pairs that put a record in its cluster, with contributions that add up."""

from __future__ import annotations

import pandas as pd
import pytest

import linkage as lk
from linkage.explain import contributions_table
from tests.conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_contributions_add_up_to_match_weight():
    rules = lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml")
    result = lk.dedupe(ROOT / "sample_data" / "customers.csv", rules, progress=False)
    sample = result.pairs.sample(200, random_state=1)
    for (_, pair), table in zip(sample.iterrows(),
                                contributions_table(sample, rules, result.scorer), strict=True):
        assert table["contribution"].sum() == pytest.approx(pair["match_weight"])


def test_explain_a_clustered_record(run_dir):
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    member = clusters[(clusters["cluster_size"] > 1) & (clusters["action"] == "duplicate")].iloc[0]
    done = run_cli("explain", run_dir, member["customer_id"])
    assert done.returncode == 0, done.stderr
    assert f"duplicate in cluster {member['cluster_id']}" in done.stdout
    assert f"representative {member['representative_id']}" in done.stdout
    assert "match weight" in done.stdout and "birth_date" in done.stdout


def test_explain_two_records(run_dir):
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    pair = pd.read_parquet(run_dir / "pairs.parquet").query("not is_match").iloc[0]
    done = run_cli("explain", run_dir, pair["id_l"], pair["id_r"])
    assert done.returncode == 0, done.stderr
    assert "no match" in done.stdout
    far = clusters["customer_id"].iloc[[0, -1]].tolist()
    done = run_cli("explain", run_dir, *far)
    assert done.returncode == 0


def test_explain_unknown_id_exits_2(run_dir):
    done = run_cli("explain", run_dir, "NOPE-1")
    assert done.returncode == 2
    assert "NOPE-1" in done.stderr


def test_waterfall_of_a_pair_adds_up():
    import xml.etree.ElementTree as ET

    rules = lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml")
    result = lk.dedupe(ROOT / "sample_data" / "customers.csv", rules, progress=False)
    pair = result.pairs[result.pairs["is_match"]].iloc[0]
    svg = result.waterfall(pair["id_r"], pair["id_l"])  # either order
    root = ET.fromstring(str(svg))
    assert float(root.get("data-total")) == pytest.approx(pair["match_weight"], abs=1e-6)
    with pytest.raises(lk.LinkageError, match="never compared"):
        result.waterfall("C-000001", "nope")
