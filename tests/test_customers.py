"""The demo job: the sample customers through the CLI with rules/customers.yaml."""

from __future__ import annotations

import json

import pandas as pd

import linkage as lk
from tests.conftest import ROOT, f1_score, pairs_of_clusters, run_cli


def test_demo_job_finds_the_duplicates(tmp_path):
    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(tmp_path / "out" / "clusters.parquet")
    records = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    assert sorted(clusters["customer_id"]) == sorted(records["customer_id"])
    truth = pd.read_csv(ROOT / "sample_data" / "customers_truth.csv", dtype=str)
    predicted = pairs_of_clusters(clusters, "customer_id", "cluster_id")
    actual = pairs_of_clusters(truth, "customer_id", "person_id")
    precision, recall, f1 = f1_score(predicted, actual)
    # Look-alikes (relatives, twins, namesakes) must mostly stay apart, variants together.
    assert precision >= 0.97 and recall >= 0.95 and f1 >= 0.97, (precision, recall, f1)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stages"]["keep"]["policy"] == "most_complete"
    assert summary["actions"]["duplicate"] == len(records) - len(
        pd.read_parquet(tmp_path / "out" / "deduplicated.parquet")
    )


def test_korean_spellings_land_in_one_cluster():
    """Phones, dates and company forms spelled differently are one person."""
    frame = pd.DataFrame(
        {
            "customer_id": ["K1", "K2", "K3"],
            "name": ["김민수", "김 민슈", "박지훈"],
            "birth_date": ["1990년 3월 5일", "1990.3.5", "1988-11-02"],
            "phone": ["+82 10 1234 5678", "010-1234-5678", "010-5555-1212"],
            "email": [None, "minsu.kim@example.kr", "jh.park@example.kr"],
            "company": ["㈜삼성전자", "삼성전자 주식회사", "(주)카카오"],
            "address": ["서울특별시 강남구 테헤란로 123", "서울 강남구 테헤란로 123", None],
            "postcode": ["06236", "06 236", "13529"],
            "source": ["crm", "web", "shop"],
            "signup_date": ["2020-01-01", "2021-05-05", "2022-02-02"],
        }
    )
    result = lk.dedupe(frame, lk.Rules.from_yaml(ROOT / "rules" / "customers.yaml"),
                       progress=False)
    c = result.clusters.set_index("customer_id")
    assert c.loc["K1", "cluster_id"] == c.loc["K2", "cluster_id"]
    assert c.loc["K3", "cluster_size"] == 1
    # most_complete keeps the record with more filled fields (K2 has an e-mail, K1 has none).
    assert c.loc["K1", "representative_id"] == "K2"
    assert c.loc["K1", "action"] == "duplicate" and c.loc["K2", "action"] == "keep"
    assert "duplicate of K2" in c.loc["K1", "reason"]


SOURCE_ORDER = {"crm": 0, "shop": 1, "web": 2, "import": 3}  # as rules/customers.yaml says


def test_golden_records_take_each_field_from_the_named_record(tmp_path):
    done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                   ROOT / "rules" / "customers.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    golden = pd.read_parquet(tmp_path / "out" / "golden.parquet")
    clusters = pd.read_parquet(tmp_path / "out" / "clusters.parquet")
    records = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str)
    assert len(golden) == clusters["cluster_id"].nunique()
    rows = records.merge(clusters[["customer_id", "cluster_id"]], on="customer_id")
    by_id = rows.set_index("customer_id")
    several = golden[golden["cluster_id"].isin(
        clusters.loc[clusters["cluster_size"] > 1, "cluster_id"])]
    for _, g in several.head(50).iterrows():
        members = rows[rows["cluster_id"] == g["cluster_id"]]
        # phone: most recent signup among members with a phone, ties by id
        with_phone = members.dropna(subset=["phone"]).sort_values(
            ["signup_date", "customer_id"], ascending=[False, True])
        assert g["phone__from"] == with_phone["customer_id"].iloc[0]
        assert g["phone"] == by_id.loc[g["phone__from"], "phone"]
        # company: best-ranked source (crm, shop, web, import) among members with a company
        with_company = members.dropna(subset=["company"])
        with_company = with_company.assign(rank=with_company["source"].map(SOURCE_ORDER))\
            .sort_values(["rank", "customer_id"])
        if len(with_company):
            assert g["company__from"] == with_company["customer_id"].iloc[0]
        else:
            assert pd.isna(g["company"])
