"""Guard rules end to end on the sample data, against the generator's truth.

Transactions: the same purchase made twice is two events (kept), a batch loaded twice is
duplicates (removed). Labelled texts: the same text with different labels goes to review,
never dropped; statute quotes in the legal domain are kept.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def transactions(tmp_path_factory):
    out = tmp_path_factory.mktemp("txn") / "out"
    done = run_cli("dedupe", ROOT / "sample_data" / "transactions.csv", "--rules",
                   ROOT / "rules" / "transactions.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(out / "clusters.parquet")
    truth = pd.read_csv(ROOT / "sample_data" / "transactions_truth.csv", dtype=str)
    return out, clusters.merge(truth, on="txn_row", validate="one_to_one"), done.stdout


def test_every_double_load_removed(transactions):
    _, rows, _ = transactions
    loads = rows[rows["kind"] == "double_load"]
    assert len(loads) > 0 and (loads["action"] == "duplicate").all()
    # ... and only double loads: no real purchase is removed.
    assert (rows.loc[rows["kind"] != "double_load", "action"] != "duplicate").all()
    # The kept copy of each double load is the same event.
    kept = rows.set_index("txn_row")
    assert (kept.loc[loads["representative_id"], "event_id"].to_numpy()
            == loads["event_id"].to_numpy()).all()


def test_legitimate_repeats_all_kept_and_preserved(transactions):
    out, rows, _ = transactions
    repeats = rows[rows["kind"] == "repeat_purchase"]
    assert (repeats["action"].isin(["keep", "preserved"])).all()
    preserved = rows[rows["action"] == "preserved"]
    assert preserved["reason"].str.contains("distinct event").all()
    # Every repeat that was not itself loaded twice is marked preserved, with its reason.
    events_loaded_twice = set(rows.loc[rows["kind"] == "double_load", "event_id"])
    single = repeats[~repeats["event_id"].isin(events_loaded_twice)]
    assert (single["action"] == "preserved").all()
    dedup = pd.read_parquet(out / "deduplicated.parquet")
    assert set(repeats["txn_row"]) <= set(dedup["txn_row"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["actions"]["preserved"] == int((rows["action"] == "preserved").sum())
    assert summary["stages"]["guard"]["distinct_events"]["preserved"] > 0


def test_explain_shows_the_guard_decision(transactions):
    out, rows, _ = transactions
    record = rows.loc[rows["action"] == "preserved", "txn_row"].iloc[0]
    done = run_cli("explain", out, record)
    assert done.returncode == 0, done.stderr
    assert "guard distinct_events" in done.stdout


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    out = tmp_path_factory.mktemp("text") / "out"
    done = run_cli("dedupe", ROOT / "sample_data" / "labelled_text.csv", "--rules",
                   ROOT / "rules" / "labelled_text.yaml", "--out", out)
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(out / "clusters.parquet")
    truth = pd.read_csv(ROOT / "sample_data" / "labelled_text_truth.csv", dtype=str)
    return out, clusters.merge(truth, on="doc_id", validate="one_to_one"), done.stdout


def test_conflicting_labels_all_flagged_none_dropped(texts):
    out, rows, _ = texts
    conflicts = rows[rows["kind"] == "conflicting_label"]
    assert len(conflicts) > 0 and (conflicts["action"] == "review").all()
    assert conflicts["review_group"].notna().all()
    # One review group per conflicting text group (a group never straddles two).
    per_group = conflicts.groupby("text_group")["review_group"].nunique()
    assert (per_group == 1).all()
    dedup = pd.read_parquet(out / "deduplicated.parquet")
    assert set(conflicts["doc_id"]) <= set(dedup["doc_id"])
    review = pd.read_parquet(out / "review.parquet")
    assert set(conflicts["doc_id"]) <= set(review["doc_id"])
    assert {"review_group", "text", "label"} <= set(review.columns)


def test_protected_quotes_kept(texts):
    _, rows, _ = texts
    quotes = rows[rows["kind"] == "protected_quote"]
    assert len(quotes) > 0 and (quotes["action"] == "keep").all()


def test_copies_with_one_label_are_removed(texts):
    _, rows, _ = texts
    copies = rows[rows["kind"] == "exact_duplicate"]
    assert (copies["action"] == "duplicate").mean() > 0.5


def _terminal_actions(stdout: str) -> dict[str, int]:
    """The action counts of the terminal summary's `kept ...` line."""
    import re

    line = next(x for x in stdout.splitlines() if x.strip().startswith("kept "))
    return {name: int(count.replace(",", ""))
            for name, count in re.findall(r"(kept|duplicates|preserved|review) ([\d,]+)", line)}


@pytest.mark.parametrize("fixture", ["transactions", "texts"])
def test_terminal_summary_counts_every_action(fixture, request):
    """The terminal's counts add up to the records read: the repeats a guard keeps
    (`preserved`) and the records sent to a person (`review`) are said, not left out."""
    _, rows, stdout = request.getfixturevalue(fixture)
    said = _terminal_actions(stdout)
    actions = rows["action"].value_counts()
    assert said == {"kept": int(actions.get("keep", 0)),
                    "duplicates": int(actions.get("duplicate", 0)),
                    "preserved": int(actions.get("preserved", 0)),
                    "review": int(actions.get("review", 0))}
    assert sum(said.values()) == len(rows)
    assert said["preserved" if fixture == "transactions" else "review"] > 0
