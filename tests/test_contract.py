"""The output contract: nothing is lost, and the same input gives the same bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linkage as lk
from linkage.blocking import KeyBlocker, SortedNeighbourhood
from linkage.comparators import Date, Exact, JaroWinkler
from linkage.scoring import RuleSum
from tests.conftest import ROOT

RULES = lk.Rules(
    id_column="id",
    normalize=[lk.Normalize("name", "name"), lk.Normalize("phone", "phone")],
    blocking=[
        KeyBlocker([["first(name, 1)"], ["last(phone, 4)"]], name="keys"),
        SortedNeighbourhood(["name"], window=3, name="window"),
    ],
    comparisons=[JaroWinkler("name"), Exact("phone"), Date("dob")],
    scoring=RuleSum(threshold=2.0),
)

names = st.sampled_from(
    ["김민수", "김민슈", "이영희", "Robert Smith", "Bob Smith", "Ann Lee", None]
)
phones = st.sampled_from(["010-1234-5678", "+82 10 1234 5678", "01099998888", None])
dobs = st.sampled_from(["1990-03-05", "1990-05-03", "1985-01-01", None])
rows = st.lists(st.tuples(names, phones, dobs), min_size=1, max_size=40)


def _table(data, prefix="r"):
    frame = pd.DataFrame(data, columns=["name", "phone", "dob"])
    frame.insert(0, "id", [f"{prefix}{i:03d}" for i in range(len(frame))])
    # Every rule column must hold at least one value, as the pipeline insists.
    for column, value in (("name", "x"), ("phone", "0"), ("dob", "2000-01-01")):
        if frame[column].isna().all():
            frame.loc[0, column] = value
    return frame


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows)
def test_every_record_exactly_once_dedupe(data):
    frame = _table(data)
    result = lk.dedupe(frame, RULES, progress=False)
    clusters = result.clusters
    assert sorted(clusters["id"]) == sorted(frame["id"])
    assert clusters["id"].is_unique
    assert set(clusters["action"]) <= {"keep", "duplicate"}
    # One keeper per cluster, and every representative is a kept record of that cluster.
    keepers = clusters[clusters["action"] == "keep"]
    assert keepers["cluster_id"].is_unique
    assert set(keepers["cluster_id"]) == set(clusters["cluster_id"])
    rep = clusters.merge(keepers[["cluster_id", "id"]], on="cluster_id", suffixes=("", "_k"))
    assert (rep["representative_id"] == rep["id_k"]).all()
    assert len(result.deduplicated) == len(keepers)
    assert clusters["reason"].notna().all()
    # Members of a cluster of several records are linked by at least one matched pair.
    matched = result.pairs[result.pairs["is_match"]]
    linked = set(matched["id_l"]) | set(matched["id_r"])
    several = clusters[clusters["cluster_size"] > 1]["id"]
    assert set(several) <= linked


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows, rows)
def test_every_record_exactly_once_link(left_rows, right_rows):
    left, right = _table(left_rows, "l"), _table(right_rows, "r")
    result = lk.link(left, right, RULES, progress=False)
    clusters = result.clusters
    assert len(clusters) == len(left) + len(right)
    assert sorted(clusters[clusters["source"] == "left"]["id"]) == sorted(left["id"])
    assert sorted(clusters[clusters["source"] == "right"]["id"]) == sorted(right["id"])
    # Links only join a left record with a right one.
    assert set(result.links["id_l"]) <= set(left["id"])
    assert set(result.links["id_r"]) <= set(right["id"])


def test_korean_variants_found_end_to_end():
    frame = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "name": ["김민수", "김 민슈", "김민수", "이영희"],
            "phone": ["010-1234-5678", "+82 10 1234 5678", "010-9999-0000", "01012345678"],
            "dob": ["1990-03-05", "1990-03-05", "1971-01-01", "1985-01-01"],
        }
    )
    result = lk.dedupe(frame, RULES, progress=False)
    c = result.clusters.set_index("id")["cluster_id"]
    assert c["a"] == c["b"]  # spacing, one jamo and the +82 spelling do not hide a duplicate
    assert c["c"] != c["a"]  # a namesake with another phone and birth date is someone else
    assert c["d"] != c["a"]


def _fresh_runs(*calls: tuple) -> list[subprocess.CompletedProcess]:
    """Each call in a fresh interpreter of its own, with its own `PYTHONHASHSEED` (1, 2, ...):
    the order of a set of strings differs between them, as between two users' runs (the
    suite's other command-line runs share one warm process's seed; tests/_cli_server.py)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(k: int, args: tuple) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONHASHSEED": str(k + 1)}
        return subprocess.run([sys.executable, "-m", "linkage", *map(str, args)], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=600)

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(one, range(len(calls)), calls))


@pytest.mark.parametrize("case", ["rules", "no_rules", "text"])
def test_byte_identical_outputs(tmp_path, datasets, case):
    """The same input and rules give the same bytes in two processes whose string hashes
    differ: with given rules (FEBRL3), without (suggested rules, EM, name swaps; FEBRL3),
    and on text (the shipped documents, MinHash and the exact stage)."""
    source = datasets / "febrl" / "dataset3.csv"
    text_rules = yaml.safe_load((ROOT / "rules" / "documents.yaml").read_text(encoding="utf-8"))
    text_rules.pop("semantic")  # embeddings: minutes on two cores; tests/test_semdedup.py
    (tmp_path / "text.yaml").write_text(yaml.safe_dump(text_rules), encoding="utf-8")
    args = {"rules": ["dedupe", source, "--rules", ROOT / "rules" / "febrl.yaml"],
            "no_rules": ["dedupe", source],
            "text": ["dedupe", ROOT / "sample_data" / "labelled_text.csv", "--rules",
                     tmp_path / "text.yaml"]}[case]
    for done in _fresh_runs(*[(*args, "--out", tmp_path / run, "--no-progress")
                              for run in ("one", "two")]):
        assert done.returncode in (0, 1), done.stderr
    files = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert "timings.json" in files
    for name in files:
        if name == "timings.json":  # wall-clock seconds, apart by design
            continue
        one, two = (tmp_path / "one" / name).read_bytes(), (tmp_path / "two" / name).read_bytes()
        assert one == two, name
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert summary["inputs"][0]["checksum"].startswith("sha256:")
    assert len(summary["rules"]["config_hash"]) == 64


def test_row_numbers_become_ids(tmp_path):
    frame = _table([("김민수", "010-1234-5678", "1990-03-05")] * 3).drop(columns=["id"])
    rules = lk.Rules.from_dict({**RULES.to_dict(), "id_column": None})
    result = lk.dedupe(frame, rules, progress=False)
    assert list(result.clusters["row_id"]) == [0, 1, 2]
    assert result.clusters["cluster_id"].nunique() == 1
    assert "row_id" in result.deduplicated.columns
