"""Tests for the guard samples in linkage.synth: transactions() and labelled_texts()."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from linkage import synth

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


@pytest.fixture(scope="module")
def txns() -> tuple[pd.DataFrame, pd.DataFrame]:
    return synth.transactions()


@pytest.fixture(scope="module")
def txn_rows(txns: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    records, truth = txns
    merged = records.merge(truth, on="txn_row", validate="one_to_one")
    return merged.assign(loaded=pd.to_datetime(merged["load_ts"], format="%Y-%m-%dT%H:%M:%S"))


@pytest.fixture(scope="module")
def texts() -> tuple[pd.DataFrame, pd.DataFrame]:
    return synth.labelled_texts()


@pytest.fixture(scope="module")
def docs(texts: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    records, truth = texts
    merged = records.merge(truth, on="doc_id", validate="one_to_one")
    return merged.assign(norm=merged["text"].map(synth.normalize_text))


# ------------------------------------------------------------------------------ both samples


@pytest.mark.parametrize(
    ("make", "stem", "other_seed"),
    [(synth.transactions, "transactions", 12), (synth.labelled_texts, "labelled_text", 14)],
)
def test_deterministic_and_committed(make, stem: str, other_seed: int) -> None:
    records, truth = make()
    again = make()
    pd.testing.assert_frame_equal(records, again[0])
    pd.testing.assert_frame_equal(truth, again[1])
    assert not make(seed=other_seed)[0].equals(records)
    assert (SAMPLE / f"{stem}.csv").read_bytes().decode("utf-8") == synth.csv_text(records)
    committed_truth = (SAMPLE / f"{stem}_truth.csv").read_bytes().decode("utf-8")
    assert committed_truth == synth.csv_text(truth)


def test_main_writes_all_samples_and_keeps_customers(tmp_path: Path) -> None:
    synth.main(["--out", str(tmp_path)])
    for stem in ("customers", "transactions", "labelled_text"):
        for name in (f"{stem}.csv", f"{stem}_truth.csv"):
            assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name
    only = tmp_path / "only"
    synth.main(["--out", str(only), "--dataset", "texts"])
    written = sorted(p.name for p in only.iterdir())
    assert written == ["labelled_text.csv", "labelled_text_truth.csv"]


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError):
        synth.transactions(n_customers=0)
    with pytest.raises(ValueError):
        synth.labelled_texts(n=10)
    records, truth = synth.transactions(n_customers=20, seed=1)
    assert len(records) == len(truth) > 100


# ------------------------------------------------------------------------------ transactions()


def test_transactions_shape(txns: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = txns
    assert list(records.columns) == synth.TRANSACTION_COLUMNS
    assert "transaction_id" not in records.columns
    assert list(truth.columns) == ["txn_row", "event_id", "kind"]
    assert 1800 <= len(records) <= 2300
    assert records["txn_row"].str.fullmatch(r"T-\d{6}").all() and records["txn_row"].is_unique
    assert records["ingest_batch"].str.fullmatch(r"B-\d{4}").all()
    assert records["amount"].str.fullmatch(r"[1-9]\d*").all()
    assert pd.to_datetime(records["purchase_date"], format="%Y-%m-%d").notna().all()
    assert records["load_ts"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d").all()
    assert set(records["source"]) == {"pos", "web", "app"}
    assert records.notna().all().all()
    for column in ("product", "store"):
        values = set(records[column])
        assert any(re.search("[가-힣]", v) for v in values), column
        assert any(re.fullmatch("[A-Za-z ]+", v) for v in values), column
    assert {"아메리카노", "김밥", "Latte", "Sandwich"} <= set(records["product"])
    assert {"강남점", "Shinchon", "London Bridge"} <= set(records["store"])


def test_transaction_truth_covers_every_row_once(txn_rows: pd.DataFrame) -> None:
    assert txn_rows["txn_row"].is_unique
    assert set(txn_rows["kind"]) == {"original", "double_load", "repeat_purchase"}
    # Every event has exactly one first load (original or repeat) and maybe double loads.
    first = txn_rows[txn_rows["kind"] != "double_load"]
    assert first["event_id"].is_unique
    assert set(first["event_id"]) == set(txn_rows["event_id"])


def test_transaction_kind_proportions(txn_rows: pd.DataFrame) -> None:
    kinds = txn_rows["kind"].value_counts()
    purchases = kinds["original"] + kinds["repeat_purchase"]
    assert 0.07 <= kinds["repeat_purchase"] / purchases <= 0.13
    assert 0.06 <= kinds["double_load"] / len(txn_rows) <= 0.10


def test_double_loads_share_everything_but_a_few_seconds(txn_rows: pd.DataFrame) -> None:
    columns = [*synth.TRANSACTION_KEY, "ingest_batch", "source"]
    loads = txn_rows[txn_rows["kind"] == "double_load"]
    first = txn_rows[txn_rows["kind"] != "double_load"]
    pairs = loads.merge(first, on="event_id", suffixes=("", "_first"), validate="many_to_one")
    for column in columns:
        assert (pairs[column] == pairs[f"{column}_first"]).all(), column
    gap = (pairs["loaded"] - pairs["loaded_first"]).dt.total_seconds()
    assert gap.between(1, 5).all()
    # Whole batches or slices of them: double loads come in runs within a few batches.
    assert loads["ingest_batch"].nunique() < len(loads) / 2


def test_repeats_agree_on_the_key_but_come_in_another_batch_or_hours_later(
    txn_rows: pd.DataFrame,
) -> None:
    first = txn_rows[txn_rows["kind"] != "double_load"]
    # The business key alone never tells events apart inside a group; truth does.
    groups = first.groupby(synth.TRANSACTION_KEY)
    sizes = groups["event_id"].nunique()
    repeats = first[first["kind"] == "repeat_purchase"]
    keyed = repeats.set_index(synth.TRANSACTION_KEY).index
    assert (sizes.loc[keyed] >= 2).all()
    # No accidental collisions: a key group with one original and n-1 repeats.
    per_group = groups["kind"].agg(lambda k: (k == "original").sum())
    assert (per_group == 1).all()
    originals = first[first["kind"] == "original"]
    pairs = repeats.merge(
        originals, on=synth.TRANSACTION_KEY, suffixes=("", "_orig"), validate="many_to_one"
    )
    assert len(pairs) == len(repeats)
    assert (pairs["event_id"] != pairs["event_id_orig"]).all()
    other_batch = pairs["ingest_batch"] != pairs["ingest_batch_orig"]
    hours_apart = (pairs["loaded"] - pairs["loaded_orig"]).abs() >= pd.Timedelta(hours=1)
    assert (other_batch | hours_apart).all()
    # Both cases occur: another batch, and the same (streamed) batch hours apart.
    assert other_batch.sum() > 50
    assert (~other_batch & hours_apart).sum() > 5
    assert (sizes == 3).any()


def test_transaction_rows_are_shuffled(txn_rows: pd.DataFrame) -> None:
    same_as_next = (txn_rows["event_id"] == txn_rows["event_id"].shift()).sum()
    assert same_as_next < 10
    assert not txn_rows["ingest_batch"].is_monotonic_increasing


# ---------------------------------------------------------------------------- labelled_texts()


def test_texts_shape(texts: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = texts
    assert list(records.columns) == synth.TEXT_COLUMNS
    assert list(truth.columns) == ["doc_id", "text_group", "kind"]
    assert len(records) == 1500
    assert records["doc_id"].str.fullmatch(r"D-\d{6}").all() and records["doc_id"].is_unique
    assert set(records["label"]) == set(synth.TEXT_LABELS)
    assert set(records["source"]) == {"web", "qa", "synthetic", "import"}
    assert set(records["domain"]) == {"general", "legal"}
    assert records.notna().all().all()
    korean = records["text"].str.contains("[가-힣]")
    assert 0.3 <= korean.mean() <= 0.7


def test_text_truth_covers_every_row_once(docs: pd.DataFrame) -> None:
    assert docs["doc_id"].is_unique and len(docs) == 1500
    assert set(docs["kind"]) == {
        "original",
        "exact_duplicate",
        "near_duplicate",
        "conflicting_label",
        "protected_quote",
    }
    # A normalized text belongs to one group only, so groups are really different texts.
    assert (docs.groupby("norm")["text_group"].nunique() == 1).all()
    # Each duplicate points back to exactly one original.
    originals = docs[docs["kind"] == "original"]
    assert originals["text_group"].is_unique
    dups = docs[docs["kind"].isin(["exact_duplicate", "near_duplicate"])]
    assert dups["text_group"].isin(originals["text_group"]).all()


def test_text_kind_proportions(docs: pd.DataFrame) -> None:
    share = docs["kind"].value_counts(normalize=True)
    assert 0.08 <= share["exact_duplicate"] <= 0.12
    assert 0.08 <= share["near_duplicate"] <= 0.12
    assert 0.04 <= share["conflicting_label"] <= 0.07
    assert 0.02 <= share["protected_quote"] <= 0.07


def test_exact_and_near_duplicates(docs: pd.DataFrame) -> None:
    originals = docs[docs["kind"] == "original"]

    def with_original(kind: str) -> pd.DataFrame:
        rows = docs[docs["kind"] == kind]
        return rows.merge(originals, on="text_group", suffixes=("", "_orig"), validate="m:1")

    for kind in ("exact_duplicate", "near_duplicate"):
        rows = with_original(kind)
        assert (rows["label"] == rows["label_orig"]).all(), kind
        same_text = rows["text"] == rows["text_orig"]
        assert same_text.all() if kind == "exact_duplicate" else not same_text.any()
    near = with_original("near_duplicate")
    # Both flavours occur: only white space / punctuation / case, and a changed word.
    cosmetic = near["norm"] == near["norm_orig"]
    assert 20 <= cosmetic.sum() <= len(near) - 20


def test_conflicting_labels(docs: pd.DataFrame) -> None:
    conflicts = docs[docs["kind"] == "conflicting_label"]
    groups = conflicts.groupby("text_group")
    assert set(groups.size()) == {2, 3}
    assert (groups["norm"].nunique() == 1).all()
    assert (groups["label"].nunique() >= 2).all()
    # Conflict groups hold nothing else.
    in_conflict = docs[docs["text_group"].isin(conflicts["text_group"])]
    assert (in_conflict["kind"] == "conflicting_label").all()
    # Elsewhere one normalized text never carries two labels.
    clean = docs[docs["kind"] != "conflicting_label"]
    assert (clean.groupby("text_group")["label"].nunique() == 1).all()


def test_protected_quotes_repeat_verbatim(docs: pd.DataFrame) -> None:
    legal = docs[docs["domain"] == "legal"]
    assert (legal["kind"] == "protected_quote").all()
    assert (docs.loc[docs["kind"] == "protected_quote", "domain"] == "legal").all()
    counts = legal["text"].value_counts()
    assert set(counts.index) == set(synth.PROTECTED_QUOTES)
    assert (counts >= 5).all()
    assert legal.groupby("text")["text_group"].nunique().eq(1).all()
    assert legal["text"].str.contains("[가-힣]").any() and legal["text"].str.contains("GDPR").any()


def test_normalize_text() -> None:
    assert synth.normalize_text("  The  Kettle is GREAT!! ") == "the kettle is great"
    assert synth.normalize_text("배송이  정말 좋아요...") == "배송이 정말 좋아요"
