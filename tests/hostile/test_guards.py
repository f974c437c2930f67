"""Hostile cases for the guards (issue 13, item 14): `max_cluster_size` splits into as few
pieces as the cap allows, and leaves `keep_up_to`'s copies kept when it sends to review."""

from __future__ import annotations

import pandas as pd

from tests.hostile._runs import dedupe

CHAIN_RULES = """\
id_column: id
blocking:
  - keys: [[a], [b]]
comparisons:
  - {type: exact, column: a}
  - {type: exact, column: b}
scoring:
  type: rule_sum
  threshold: 1
  weights:
    a: {exact: 2, else: 0}
    b: {exact: 2, else: 0}
guards:
  - {type: max_cluster_size, size: 8}
"""


def _chain(n: int) -> pd.DataFrame:
    """Record i shares `a` with one neighbour and `b` with the other: a chain of n records,
    every link of the same weight."""
    return pd.DataFrame({"id": [f"D{i:02d}" for i in range(n)],
                         "a": [f"a{i // 2}" for i in range(n)],
                         "b": [f"b{(i + 1) // 2}" for i in range(n)]})


def test_a_tied_chain_over_the_cap_splits_into_connected_pieces_not_singletons(workdir):
    dedupe(workdir, _chain(30), CHAIN_RULES)
    clusters = pd.read_parquet(workdir / "out" / "clusters.parquet")
    members = clusters.groupby("cluster_id")["id"].agg(sorted).tolist()
    # Ties broken by record order: 8 + 8 + 8 + 6, each piece a run of the chain.
    assert sorted(map(len, members)) == [6, 8, 8, 8]
    for ids in members:
        rows = [int(i[1:]) for i in ids]
        assert rows == list(range(rows[0], rows[0] + len(rows)))
    guards = pd.read_parquet(workdir / "out" / "guards.parquet")
    assert set(guards["decision"]) == {"split"} and len(guards) == 30
    assert "split into 4" in guards["detail"].iloc[0]


TEMPLATE_RULES = """\
id_column: id
blocking:
  - keys: [[text]]
comparisons:
  - {type: exact, column: text}
scoring:
  type: rule_sum
  threshold: 1
  weights:
    text: {exact: 2, else: -1}
guards:
  - {type: max_cluster_size, size: 10, action: review}
  - {type: keep_up_to, k: 4, column: domain, values: [legal]}
"""


def test_keep_up_to_keeps_its_copies_of_an_oversized_protected_cluster(workdir):
    template = [{"text": "Terms of use apply.", "domain": "legal"}] * 15
    chained = [{"text": "Buy now!", "domain": "ads"}] * 12  # oversized, unprotected
    frame = pd.DataFrame(template + chained)
    frame.insert(0, "id", [f"T{i:02d}" for i in range(len(frame))])
    dedupe(workdir, frame, TEMPLATE_RULES)
    clusters = pd.read_parquet(workdir / "out" / "clusters.parquet").set_index("id")
    legal = clusters.loc[[f"T{i:02d}" for i in range(15)]]
    # keep_up_to's 4 copies (the first by id) are kept; only the other 11 go to review.
    assert legal["action"].tolist() == ["keep"] * 4 + ["review"] * 11
    assert legal["review_group"].iloc[:4].isna().all()
    assert legal["review_group"].iloc[4:].notna().all()
    assert all("max_cluster_size 10" in r for r in legal["reason"].iloc[4:])
    ads = clusters.loc[[f"T{i:02d}" for i in range(15, 27)]]
    assert (ads["action"] == "review").all()  # no protection: the whole cluster, as before
    review = pd.read_parquet(workdir / "out" / "review.parquet")
    assert len(review) == 11 + 12
    guards = pd.read_parquet(workdir / "out" / "guards.parquet")
    kept = guards[(guards["guard"] == "max_cluster_size") & (guards["decision"] == "kept")]
    assert sorted(kept["record_id"]) == [f"T{i:02d}" for i in range(4)]
    assert "keep_up_to" in kept["detail"].iloc[0]
