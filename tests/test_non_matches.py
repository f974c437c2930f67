"""A cluster whose members score as non-matches is split where the evidence says so (issue 14,
item 4: no cluster held together only by links its other pairs contradict).

The table is built for the trap: a mother and a daughter of one name living at one address
(each with three records that agree on date of birth, e-mail and phone where they have them),
and one record of that name and address with no date of birth, e-mail or phone. That record
matches every record of both women, so connected components put all seven in one cluster,
although each of the nine pairs compared between the two women disagrees on date of birth,
e-mail and phone. The cluster is dense (12 of its 21 pairs match), so the weak-link split
keeps it whole; the summed weight of the pairs between the two women is what splits it.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import linkage
from linkage.clustering import split_non_matches
from linkage.errors import RulesError
from linkage.settings import Rules

FAMILIES = 40
FIELDS = ["first", "last", "zip", "dob", "email", "phone"]
SURE = {"first": (0.95, 0.01), "last": (0.95, 0.01), "zip": (0.9, 0.05),
        "dob": (0.99, 0.001), "email": (0.99, 0.001), "phone": (0.99, 0.001)}

RULES = {
    "id_column": "id",
    "blocking": [{"keys": [["last", "zip"]]}],
    "comparisons": [{"type": "exact", "column": c} for c in FIELDS],
    # m and u as a person who knows the fields would set them: the weights are known, so the
    # test is about the clustering, not about what EM learns from 280 records.
    "scoring": {"type": "fellegi_sunter", "threshold": 5.0, "prior": 0.001,
                "tf_adjust": [], "max_iterations": 1,
                "fixed_m": {c: {"exact": m, "else": 1 - m} for c, (m, _) in SURE.items()},
                "fixed_u": {c: {"exact": u, "else": 1 - u} for c, (_, u) in SURE.items()}},
}


def families(n: int = FAMILIES) -> pd.DataFrame:
    """Per family: a mother and a daughter of one name at one address, three records each,
    and one record of that name and address that says nothing else (the person it is about
    is `None`: either woman)."""
    rows = []
    for f in range(n):
        first, last, zip_code = f"anna{f}", f"berg{f}", f"{10000 + f}"
        for person, born in (("mother", f"1955-03-{1 + f % 28:02d}"),
                             ("daughter", f"1982-07-{1 + f % 28:02d}")):
            email, phone = f"{person}{f}@mail.test", f"+4930{f:04d}{len(person)}"
            # three forms she filled in, one without her phone, one without her e-mail
            for mail, tel in ((email, phone), (email, None), (None, phone)):
                rows.append((first, last, zip_code, born, mail, tel, f"{f}-{person}"))
        rows.append((first, last, zip_code, None, None, None, None))
    frame = pd.DataFrame(rows, columns=[*FIELDS, "person"])
    frame.insert(0, "id", [f"r{i:05d}" for i in range(len(frame))])
    return frame


def _run(frame: pd.DataFrame, split: bool):
    rules = Rules.from_dict({**RULES, "split_non_matches": split})
    return linkage.dedupe(frame.drop(columns=["person"]), rules, progress=False)


def _mixed(result, frame: pd.DataFrame) -> int:
    """Clusters that hold records of both women of a family."""
    members = result.clusters.merge(frame, on="id").dropna(subset=["person"])
    return int((members.groupby("cluster_id")["person"].nunique() > 1).sum())


def test_two_people_chained_through_a_record_that_says_little_are_split():
    frame = families()
    whole = _run(frame, split=False)
    assert _mixed(whole, frame) == FAMILIES  # the trap: every family is one cluster of 7
    assert whole.summary()["stages"]["cluster"]["split_weak_links"]["clusters_split"] == 0

    result = _run(frame, split=True)
    assert _mixed(result, frame) == 0
    sizes = result.clusters.groupby("cluster_id").size()
    assert sorted(sizes.value_counts().items()) == [(3, FAMILIES), (4, FAMILIES)]
    summary = result.summary()
    split = summary["stages"]["cluster"]["split_non_matches"]
    assert split == {"clusters_split": FAMILIES, "records_in_them": 7 * FAMILIES,
                     "pieces": 2 * FAMILIES, "pairs_removed": 3 * FAMILIES}
    # Each record of a split cluster says why; the pairs cut are no longer matched.
    decisions = result.guard_decisions
    mine = decisions[decisions["guard"] == "split_non_matches"]
    assert len(mine) == 7 * FAMILIES and (mine["decision"] == "split").all()
    assert "scored as non-matches" in mine["detail"].iloc[0]
    assert int(result.pairs["is_match"].sum()) == \
        int(whole.pairs["is_match"].sum()) - 3 * FAMILIES


def test_the_split_repeats_byte_for_byte(tmp_path):
    frame = families(15)
    a, b = tmp_path / "a", tmp_path / "b"
    _run(frame, True).write(a)
    _run(frame, True).write(b)
    for name in ("clusters.parquet", "guards.parquet"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    summary = json.loads((a / "summary.json").read_text(encoding="utf-8"))
    assert summary["stages"]["cluster"]["split_non_matches"]["clusters_split"] == 15


def test_groups_join_by_the_sum_of_the_pairs_between_them():
    # A-B and B-C match strongly; A and C were compared and clearly differ: the weaker of
    # the two matched pairs is cut.
    compared = (np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([12.0, 9.0, -20.0]))
    keep, splits = split_non_matches(3, np.array([0, 1]), np.array([1, 2]),
                                     np.array([12.0, 9.0]), compared)
    assert keep.tolist() == [True, False]
    assert splits[0]["pieces"] == 2 and splits[0]["non_matches"] == 1
    # A non-match outweighed by the matches between the two groups changes nothing.
    compared = (np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([12.0, 9.0, -3.0]))
    keep, splits = split_non_matches(3, np.array([0, 1]), np.array([1, 2]),
                                     np.array([12.0, 9.0]), compared)
    assert keep.all() and splits == []
    # Identical records (a stage's pairs) are never cut.
    compared = (np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([12.0, 9.0, -20.0]))
    keep, _ = split_non_matches(3, np.array([0, 1]), np.array([1, 2]), np.array([12.0, 9.0]),
                                compared, unbreakable=np.array([True, True]))
    assert keep.all()


def test_the_rules_key_is_validated():
    with pytest.raises(RulesError, match="split_non_matches"):
        Rules.from_dict({**RULES, "split_non_matches": "yes"})
    assert Rules.from_dict(RULES).split_non_matches is True
    assert "split_non_matches: false" in Rules.from_dict(
        {**RULES, "split_non_matches": False}).to_yaml()


def test_only_log_odds_weights_split_and_validate_says_which(tmp_path):
    """A rule sum's weights are not log odds, so their sum says nothing about two groups: its
    runs keep clusters as their matched pairs connect them, and `linkage validate` says the
    split only where it happens."""
    from linkage.cli.rules import rules_lines
    from linkage.clustering import splits_non_matches

    line = "split clusters whose members score as non-matches"
    fs = Rules.from_dict(RULES)
    rule_sum = Rules.from_dict({**RULES, "scoring": {"type": "rule_sum", "threshold": 3.0}})
    assert splits_non_matches(fs, fs.scoring) and not splits_non_matches(rule_sum,
                                                                          rule_sum.scoring)
    assert any(line in x for x in rules_lines(fs))
    assert not any(line in x for x in rules_lines(rule_sum))
    assert not any(line in x for x in rules_lines(Rules.from_dict(
        {**RULES, "split_non_matches": False})))
    result = linkage.dedupe(families(5).drop(columns=["person"]), rule_sum, progress=False)
    assert "split_non_matches" not in result.summary()["stages"]["cluster"]
