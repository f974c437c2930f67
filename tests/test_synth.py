"""Tests for linkage.synth: determinism, shape, truth, duplicates, lookalikes and variants."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from linkage import synth
from linkage.synth import _customers, perturb

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
HANGUL = re.compile("[가-힣]")


@pytest.fixture(scope="module")
def sample() -> tuple[pd.DataFrame, pd.DataFrame]:
    return synth.customers()


@pytest.fixture(scope="module")
def merged(sample: tuple[pd.DataFrame, pd.DataFrame]) -> pd.DataFrame:
    records, truth = sample
    return records.merge(truth, on="customer_id", validate="one_to_one")


def _surname(name: str) -> str:
    if HANGUL.search(name):
        name = name.replace(" ", "")
        return name[:2] if name[:2] in {"남궁", "황보", "선우", "제갈"} else name[0]
    return name.split()[-1].lower()


def _cross_person_pairs(frame: pd.DataFrame, keys: list[str]) -> int:
    """Pairs of records that agree on `keys` but belong to different people."""
    count = 0
    for _, group in frame.dropna(subset=keys).groupby(keys):
        people = group["person_id"].tolist()
        count += sum(a != b for a, b in itertools.combinations(people, 2))
    return count


# ------------------------------------------------------------------------------- customers()


def test_customers_is_deterministic(sample: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = synth.customers()
    pd.testing.assert_frame_equal(records, sample[0])
    pd.testing.assert_frame_equal(truth, sample[1])
    other, _ = synth.customers(seed=8)
    assert not other.equals(records)


def test_committed_sample_matches_a_fresh_generation(
    sample: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    records, truth = sample
    committed = (SAMPLE / "customers.csv").read_bytes().decode("utf-8")
    assert committed == synth.csv_text(records)
    committed_truth = (SAMPLE / "customers_truth.csv").read_bytes().decode("utf-8")
    assert committed_truth == synth.csv_text(truth)


def test_write_customers_writes_the_same_bytes(tmp_path: Path) -> None:
    synth.main(["--out", str(tmp_path)])
    for name in ("customers.csv", "customers_truth.csv"):
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes()


def test_customers_shape_and_types(sample: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = sample
    assert list(records.columns) == synth.CUSTOMER_COLUMNS
    assert list(truth.columns) == ["customer_id", "person_id"]
    assert 1800 <= len(records) <= 2300
    assert truth["person_id"].nunique() == 1400
    for column in records.columns:
        values = records[column].dropna()
        assert all(isinstance(v, str) for v in values), column
    assert records["customer_id"].str.fullmatch(r"C-\d{6}").all()
    assert records["customer_id"].is_unique
    assert set(records["source"]) == {"crm", "web", "shop", "import"}
    assert pd.to_datetime(records["signup_date"], format="%Y-%m-%d").notna().all()
    assert records["name"].notna().all()


def test_truth_covers_every_record_once(sample: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = sample
    assert truth["customer_id"].is_unique
    assert sorted(truth["customer_id"]) == sorted(records["customer_id"])
    assert truth["person_id"].notna().all()


def test_ids_do_not_reveal_clusters(merged: pd.DataFrame) -> None:
    # Records of one person must not sit next to each other in customer_id order.
    same_as_next = (merged["person_id"] == merged["person_id"].shift()).sum()
    assert same_as_next < 10


def test_about_30_percent_of_people_have_2_to_4_records(merged: pd.DataFrame) -> None:
    sizes = merged["person_id"].value_counts()
    assert sizes.max() <= 4
    assert 0.25 <= (sizes > 1).mean() <= 0.35
    assert set(sizes[sizes > 1]) == {2, 3, 4}


def test_language_mix(merged: pd.DataFrame) -> None:
    korean = merged["name"].str.contains(HANGUL)
    share = merged.loc[korean, "person_id"].nunique() / merged["person_id"].nunique()
    assert 0.5 <= share <= 0.7
    english = merged.loc[~korean]
    assert english["name"].str.fullmatch(r"[A-Za-z]+ [A-Za-z]+").mean() > 0.95


def test_korean_records_look_korean(merged: pd.DataFrame) -> None:
    korean = merged[merged["name"].str.contains(HANGUL)]
    assert korean["postcode"].dropna().str.fullmatch(r"\d{5}").all()
    addresses = korean["address"].dropna()
    assert addresses.str.contains(r"[가-힣]+(?:로|길) \d", regex=True).mean() > 0.95
    mobiles = korean["phone"].dropna().str.replace(r"\D", "", regex=True)
    assert mobiles.str.fullmatch(r"(?:82|0)10\d{8}").mean() > 0.8


def test_english_records_have_uk_or_us_postcodes(merged: pd.DataFrame) -> None:
    english = merged[~merged["name"].str.contains(HANGUL)]
    postcodes = english["postcode"].dropna()
    uk = postcodes.str.fullmatch(r"[A-Za-z]{1,2}\d{1,2} ?\d[A-Za-z]{2}")
    us = postcodes.str.fullmatch(r"\d{5}")
    assert (uk | us).all()
    assert uk.sum() > 100 and us.sum() > 100
    phones = english["phone"].dropna()
    assert phones.str.startswith("+1").sum() > 20
    assert phones.str.startswith("+44").sum() > 20
    assert phones.str.startswith("010").sum() > 20  # expats with a Korean mobile


def test_duplicates_carry_noise(merged: pd.DataFrame) -> None:
    names = merged.groupby("person_id")["name"].nunique()
    phones = merged.groupby("person_id")["phone"].nunique()
    dates = merged.groupby("person_id")["birth_date"].nunique()
    assert (names > 1).sum() > 50
    assert (phones > 1).sum() > 100
    assert (dates > 1).sum() > 100
    nicknames = {n for values in perturb.NICKNAMES.values() for n in values}
    assert merged["name"].str.split().str[0].isin(nicknames).sum() >= 10
    assert merged["email"].dropna().str.contains("[A-Z]").sum() >= 10


def test_korean_variants_occur(merged: pd.DataFrame) -> None:
    assert merged["phone"].str.startswith("+82 10 ", na=False).sum() >= 10
    assert merged["phone"].str.fullmatch(r"010\d{8}", na=False).sum() >= 10
    assert merged["phone"].str.fullmatch(r"010\.\d{4}\.\d{4}", na=False).sum() >= 5
    assert merged["birth_date"].str.contains("년", na=False).sum() >= 10
    assert merged["birth_date"].str.fullmatch(r"\d{8}", na=False).sum() >= 10
    assert merged["birth_date"].str.fullmatch(r"\d{4}\.\d{1,2}\.\d{1,2}", na=False).sum() >= 10
    assert merged["birth_date"].str.fullmatch(r"\d\d/\d\d/\d{4}", na=False).sum() >= 10
    assert merged["company"].str.contains("㈜", na=False).sum() >= 5
    assert merged["company"].str.contains("(주)", regex=False, na=False).sum() >= 5
    assert merged["company"].str.contains("주식회사", na=False).sum() >= 5
    assert merged["name"].str.fullmatch(r"[가-힣]{1,2} [가-힣]{1,3}").sum() >= 10


def test_english_company_legal_forms_vary(merged: pd.DataFrame) -> None:
    companies = merged["company"].dropna()
    for form in ("Inc.", "Incorporated", "Ltd", "Limited", "LLC"):
        assert companies.str.contains(form, regex=False).any(), form


def test_lookalikes_are_different_people(merged: pd.DataFrame) -> None:
    frame = merged.assign(surname=merged["name"].map(_surname))
    # Relatives: same surname and address, different person.
    assert _cross_person_pairs(frame, ["surname", "address"]) >= 50
    # Shared landlines in households.
    assert _cross_person_pairs(frame, ["phone"]) >= 10
    # Namesakes: the very same written name, different person.
    assert _cross_person_pairs(frame, ["name"]) >= 30
    # Twins: same address and birth date, different person.
    assert _cross_person_pairs(frame, ["address", "birth_date"]) >= 3


def test_small_and_invalid_customer_tables() -> None:
    records, truth = synth.customers(n_people=20, seed=1)
    assert truth["person_id"].nunique() == 20
    assert len(records) == len(truth)
    with pytest.raises(ValueError):
        synth.customers(n_people=0)


def test_every_korean_syllable_can_be_romanised() -> None:
    for (lang, _sex), (names, _weights) in _customers._GIVEN_POOLS.items():
        if lang == "ko":
            for name in names:
                assert _customers._ko_roman(name), name


def test_korean_typo_changes_one_jamo() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    for _ in range(50):
        typo = perturb.ko_name_typo(rng, "김민수", 1)
        assert typo != "김민수" and len(typo) == 3
        assert sum(a != b for a, b in zip(typo, "김민수", strict=True)) == 1
        assert all(0xAC00 <= ord(ch) <= 0xD7A3 for ch in typo)


# --------------------------------------------------------------------------------- persons()


@pytest.fixture(scope="module")
def people() -> tuple[pd.DataFrame, pd.DataFrame]:
    return synth.persons(10_000)


def test_persons_shape_and_ids(people: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = people
    assert len(records) == 10_000 and len(truth) == 10_000
    assert list(records.columns) == synth.PERSON_COLUMNS
    assert list(truth.columns) == ["rec_id", "entity_id"]
    assert records["rec_id"].is_unique
    assert (truth["rec_id"] == records["rec_id"]).all()
    assert records["rec_id"].str.fullmatch(r"P\d{7}").all()
    assert pd.to_datetime(records["dob"].dropna(), format="%Y-%m-%d").notna().all()


def test_persons_duplicate_rate(people: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    _, truth = people
    dup_share = 1 - truth["entity_id"].nunique() / len(truth)
    assert dup_share == pytest.approx(0.2, abs=0.005)
    sizes = truth["entity_id"].value_counts()
    assert sizes.max() <= 4


def test_persons_is_deterministic(people: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = synth.persons(10_000)
    pd.testing.assert_frame_equal(records, people[0])
    pd.testing.assert_frame_equal(truth, people[1])
    assert not synth.persons(10_000, seed=1)[0].equals(records)


def test_persons_noise_and_rare_collisions(people: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    records, truth = people
    frame = records.merge(truth, on="rec_id")
    per_entity = frame.groupby("entity_id")
    assert (per_entity["first_name"].nunique() > 1).sum() > 100
    assert (per_entity["surname"].nunique() > 1).sum() > 100
    assert (per_entity["dob"].nunique() > 1).sum() > 50
    assert records[["dob", "email", "phone"]].isna().any().all()
    originals = frame.drop_duplicates("entity_id")
    key = originals.groupby(["first_name", "surname", "dob"])["entity_id"].nunique()
    assert (key > 1).sum() < 5
    assert originals["email"].dropna().is_unique


def test_persons_arguments() -> None:
    records, truth = synth.persons(7, seed=3, dup_rate=0.0)
    assert truth["entity_id"].is_unique and len(records) == 7
    records, truth = synth.persons(3, dup_rate=0.5)
    assert len(records) == 3
    with pytest.raises(ValueError):
        synth.persons(0)
    with pytest.raises(ValueError):
        synth.persons(10, dup_rate=0.9)


def test_generate_persons_script(tmp_path: Path) -> None:
    out = tmp_path / "p.parquet"
    command = [sys.executable, str(ROOT / "bench" / "generate_persons.py"), "--rows", "500"]
    subprocess.run([*command, "--seed", "5", "--out", str(out)], check=True, cwd=tmp_path)
    records = pd.read_parquet(out)
    truth = pd.read_parquet(tmp_path / "p_truth.parquet")
    assert len(records) == 500 and list(truth.columns) == ["rec_id", "entity_id"]
    fresh = synth.persons(500, seed=5)[0]
    # Compare as text with one missing marker: pandas 2.2 reads Parquet nulls back as None.
    assert records.astype(object).fillna("<NA>").astype(str).equals(
        fresh.astype(object).fillna("<NA>").astype(str)
    )


# ------------------------------------------------- the README's other samples, and the oracle

# What `python -m linkage.synth --out sample_data` writes beyond customers, transactions and texts.
README_SAMPLES = ("customers_day2.csv", "customers_day2_truth.csv", "customers_day3.csv",
                  "customers_day3_truth.csv", "link_left.csv", "link_right.csv",
                  "link_truth.csv", "households.csv", "households_truth.csv")


def test_readme_samples_are_committed_as_generated(tmp_path: Path) -> None:
    for dataset in ("updates", "link", "households"):
        synth.main(["--out", str(tmp_path), "--dataset", dataset])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(README_SAMPLES)
    for name in README_SAMPLES:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_customer_updates_go_on_from_customers(sample) -> None:
    first, truth = sample
    days = synth.customer_updates(days=2, per_day=150)
    ids = [*first["customer_id"]]
    known = set(truth["person_id"])
    for records, day_truth in days:
        assert list(records.columns) == list(first.columns)
        assert (records["customer_id"] == day_truth["customer_id"]).all()
        assert not set(records["customer_id"]) & set(ids)  # new, unique ids, numbered on
        assert records["customer_id"].min() > max(ids)
        old = day_truth["person_id"].isin(known)
        assert 0.4 <= old.mean() <= 0.6  # half are later records of people already on file
        assert day_truth.loc[~old, "person_id"].duplicated().any()  # and new people twice
        ids += list(records["customer_id"])
        known |= set(day_truth["person_id"])
    again = synth.customer_updates(days=2, per_day=150)
    pd.testing.assert_frame_equal(again[1][0], days[1][0])
    with pytest.raises(ValueError):
        synth.customer_updates(days=0)


def test_link_samples_differ_in_columns_and_their_truth_covers_both() -> None:
    left = pd.read_csv(SAMPLE / "link_left.csv", dtype=str)
    right = pd.read_csv(SAMPLE / "link_right.csv", dtype=str)
    truth = pd.read_csv(SAMPLE / "link_truth.csv", dtype=str)
    assert "email" in left and "email" not in right and "mobile" in right
    assert sorted(truth["record_id"]) == sorted([*left["rec_id"], *right["id"]])
    entity = dict(zip(truth["record_id"], truth["entity_id"], strict=True))
    shared = {entity[i] for i in left["rec_id"]} & {entity[i] for i in right["id"]}
    assert 100 <= len(shared) <= len(right)


def test_answer_fills_labels_from_the_truth(tmp_path: Path) -> None:
    todo = tmp_path / "todo.csv"
    pd.DataFrame({"picked": ["a", "b"], "id_l": ["C-000001", "C-000001"],
                  "id_r": ["C-000002", "C-000003"], "label": ["", ""]}).to_csv(todo, index=False)
    truth = tmp_path / "truth.csv"
    truth.write_text("customer_id,person_id\nC-000001,P-1\nC-000002,P-1\nC-000003,P-2\n")
    done = subprocess.run([sys.executable, "-m", "linkage.synth", "answer", str(todo),
                           "--truth", str(truth)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert pd.read_csv(todo, dtype=str)["label"].tolist() == ["1", "0"]
    truth.write_text("customer_id,person_id\nC-000001,P-1\n")
    done = subprocess.run([sys.executable, "-m", "linkage.synth", "answer", str(todo),
                           "--truth", str(truth)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "C-000002" in done.stderr
