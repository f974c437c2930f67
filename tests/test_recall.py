"""Recall by injection: the perturbations change what they say, the counts are exact, a case
whose outcome the rules decide in advance comes out as decided, and the CLI reports it."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from rapidfuzz.distance import OSA

import linkage as lk
from linkage.errors import InputError
from linkage.measure.calibrate import wilson
from linkage.measure.recall import _new_ids, measure_recall
from linkage.normalize import normalize_company, normalize_phone, parse_dates
from linkage.normalize.hangul import to_jamo
from linkage.synth.perturb import (
    KINDS,
    date_styles,
    korean_phone_styles,
    perturb,
    perturb_format,
    perturb_punctuation,
    perturb_spaces,
    perturb_typo,
    perturb_word,
)
from tests.conftest import ROOT, run_cli, run_clis

CUSTOMERS = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"

# Rules that see only the e-mail: block on it, compare it exactly. A copy is found exactly when
# its normalized e-mail equals its source's, so the outcome of each kind is known in advance.
EMAIL_ONLY = {
    "id_column": "customer_id",
    "normalize": [{"column": "email", "type": "email"}],
    "blocking": [{"name": "email", "keys": [["email"]]}],
    "comparisons": [{"type": "exact", "column": "email"}],
    "scoring": {"type": "rule_sum", "threshold": 1.0,
                "weights": {"email": {"exact": 5.0, "else": -5.0}}},
}


def outputs(function, value, seeds=range(40), **options):
    """Every distinct output of a perturbation over a few seeds."""
    return {function(value, np.random.default_rng(s), **options) for s in seeds}


def only_marks_changed(a: str, b: str) -> bool:
    return re.sub(r"[\W_]", "", a) == re.sub(r"[\W_]", "", b) and a != b


# -- the perturbations, one by one -----------------------------------------------------------


@pytest.mark.parametrize("value", ["John Smith", "9394 CENTER DRIVE", "김민수",
                                   "서울특별시 종로구 통일로 578"])
def test_spaces_change_only_white_space(value):
    seen = outputs(perturb_spaces, value)
    for new in seen:
        assert new != value and new.replace(" ", "") == value.replace(" ", "")
    assert len(seen) > 1


def test_spaces_split_a_hangul_name():
    assert outputs(perturb_spaces, "김민수") == {"김 민수", "김민 수"}


@pytest.mark.parametrize("value", ["3572 5th Pl, Apt. 21D", "Smith-Jones", "Grace Simpson",
                                   "정광수", "(주)동해해운"])
def test_punctuation_changes_only_marks(value):
    for new in outputs(perturb_punctuation, value):
        assert only_marks_changed(value, new), (value, new)


def test_punctuation_removes_and_adds():
    assert "Apt 21D" in {v[-7:] for v in outputs(perturb_punctuation, "3572 5th Pl, Apt. 21D")}
    assert outputs(perturb_punctuation, "정광수") == {"정-광수"}
    emails = outputs(perturb_punctuation, "john.kim@example.com", email=True)
    assert "johnkim@example.com" in emails
    for new in emails:
        assert new.endswith("@example.com") and only_marks_changed("john.kim", new[:-12])


def test_word_swaps_drops_or_abbreviates():
    address = "5274 Chestnut Avenue"
    expected = {"Chestnut 5274 Avenue", "5274 Avenue Chestnut", "5274 Avenue", "5274 Chestnut",
                "5274 Chestnut Ave"}
    seen = outputs(perturb_word, address)
    assert seen <= expected and len(seen) >= 3
    assert outputs(perturb_word, "John Smith", role="name") == {"Smith John", "J. Smith"}
    words = ["서울특별시", "종로구", "통일로", "578"]
    swaps = {" ".join([*words[:j], words[j + 1], words[j], *words[j + 2 :]]) for j in range(3)}
    drops = {" ".join(words[:j] + words[j + 1 :]) for j in range(1, 4)}
    korean = outputs(perturb_word, " ".join(words))
    assert "서울 종로구 통일로 578" in korean
    assert korean <= swaps | drops | {"서울 종로구 통일로 578"}
    assert perturb_word("김민수", np.random.default_rng(0), role="name") is None


@pytest.mark.parametrize("value", ["Jessica", "Jessica Williams", "Highland Road"])
def test_latin_typo_is_one_edit_not_on_the_first_letter(value):
    for new in outputs(perturb_typo, value, role="name"):
        assert OSA.distance(value.lower(), new.lower()) == 1, new
        assert new[0] == value[0]


@pytest.mark.parametrize("value", ["김민수", "이은영", "송예린"])
def test_hangul_typo_is_one_jamo_or_one_syllable(value):
    seen = outputs(perturb_typo, value, seeds=range(80), role="name")
    jamo_edits = 0
    for new in seen:
        assert new[0] == value[0]  # the surname is left alone
        if len(new) == len(value):
            assert OSA.distance(to_jamo(value), to_jamo(new)) == 1, new
            jamo_edits += 1
        else:  # a syllable dropped or doubled
            assert abs(len(new) - len(value)) == 1 and OSA.distance(value, new) == 1
    assert jamo_edits >= 3
    assert "김민슈" in outputs(perturb_typo, "김민수", seeds=range(200), role="name")


def test_digit_typos_keep_dates_valid_and_phone_prefixes():
    for new in outputs(perturb_typo, "1982-09-12", role="date"):
        assert sum(a != b for a, b in zip(new, "1982-09-12", strict=True)) == 1
        iso = parse_dates(pd.Series([new]))["iso"].iloc[0]
        assert iso is not None and iso != "1982-09-12" and 1900 <= int(iso[:4]) <= 2100
    for new in outputs(perturb_typo, "010-1234-5678", role="phone"):
        assert new.startswith("010-") and sum(a != b for a, b in zip(new, "010-1234-5678",
                                                                     strict=True)) == 1
    email = outputs(perturb_typo, "jwilliams@gmail.com", role="email")
    assert all(n.endswith("@gmail.com") and n.lower() != "jwilliams@gmail.com" for n in email)


def test_format_dates_keep_the_date():
    for value in ("1982-09-12", "1982년 9월 12일", "12/09/1982"):
        seen = outputs(perturb_format, value, role="date")
        assert seen <= set(date_styles("1982-09-12", "DMY")) - {value}
        assert parse_dates(pd.Series(sorted(seen)))["iso"].eq("1982-09-12").all()
    assert "1982년 9월 12일" in outputs(perturb_format, "1982-09-12", role="date")
    assert "09/12/1982" in outputs(perturb_format, "1982-09-12", role="date", date_order="MDY")


def test_format_phones_keep_the_number():
    seen = outputs(perturb_format, "010-1234-5678", role="phone")
    assert {"01012345678", "+82 10 1234 5678"} <= seen
    assert seen <= set(korean_phone_styles("01012345678"))
    assert normalize_phone(pd.Series(sorted(seen))).eq("01012345678").all()
    assert "010-1234-5678" in outputs(perturb_format, "+82 10 1234 5678", role="phone")
    us = outputs(perturb_format, "(415) 617-9409", role="phone")
    assert "415-617-9409" in us and normalize_phone(pd.Series(sorted(us))).nunique() == 1


def test_format_company_legal_forms():
    korean = outputs(perturb_format, "(주)삼성전자", role="company")
    assert {"삼성전자 주식회사", "주식회사 삼성전자", "삼성전자(주)", "㈜삼성전자"} <= korean
    assert normalize_company(pd.Series(sorted(korean))).eq("삼성전자").all()
    english = outputs(perturb_format, "Acme Inc.", role="company")
    assert {"Acme Incorporated", "Acme, Inc."} <= english
    assert normalize_company(pd.Series(sorted(english))).eq("acme").all()
    assert "Initech L.L.C." in outputs(perturb_format, "Initech LLC", role="company")


def test_format_case_and_where_it_does_not_apply():
    assert outputs(perturb_format, "John Smith", role="name") == {"JOHN SMITH", "john smith"}
    assert perturb("format", "김민수", "name", np.random.default_rng(0)) is None
    assert perturb("spaces", "010-1234-5678", "phone", np.random.default_rng(0)) is None
    assert perturb("exact", "김민수", "name", np.random.default_rng(0)) == "김민수"


def test_new_ids_never_collide():
    ids = pd.Series(["inj-000001", "C-1"], name="id", dtype=object)
    fresh = _new_ids(ids, 3, row_numbers=False)
    assert fresh == ["_inj-000001", "_inj-000002", "_inj-000003"]
    assert _new_ids(pd.Series([5, 9], name="id"), 2, row_numbers=False) == [10, 11]
    assert _new_ids(pd.Series(["a", "b"]), 2, row_numbers=True) == [2, 3]


# -- measured recall ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def customers_report():
    return measure_recall(CUSTOMERS, RULES, 120, seed=3)


def test_counts_are_exact_and_consistent(customers_report):
    report = customers_report
    table = report.by_kind.set_index("kind")
    assert list(table.index) == [*KINDS, "overall"]
    assert (table.loc[list(KINDS), "injected"] == 20).all()  # 120 copies, six kinds take turns
    assert (table["found"] + table["missed"] == table["injected"]).all()
    assert table.loc["exact", "found"] == 20  # an unchanged copy is always found
    assert table.loc["overall", "found"] == table.loc[list(KINDS), "found"].sum()
    for kind, row in table.iterrows():
        assert (row["ci_low"], row["ci_high"]) == wilson(int(row["found"]), int(row["injected"]))
        assert row["recall"] == row["found"] / row["injected"], kind

    # "found" recomputed from the run's clusters, independently of the report.
    log, clusters = report.outcomes, report.result.clusters.set_index("customer_id")
    same = [clusters.loc[c, "cluster_id"] == clusters.loc[s, "cluster_id"]
            for c, s in zip(log["injected_id"], log["source_id"], strict=True)]
    assert list(log["found"]) == same
    assert len(report.result.clusters) == 2004 + 120


def test_copies_are_what_the_log_says(customers_report):
    report = customers_report
    source = lk.read(CUSTOMERS).set_index("customer_id")
    copies = report.injection.copies.set_index("customer_id")
    log = report.outcomes
    assert not set(copies.index) & set(source.index)  # new ids
    for _, row in log.iterrows():
        copy, original = copies.loc[row["injected_id"]], source.loc[row["source_id"]]
        changed = [c for c in source.columns if copy[c] != original[c]
                   and not (pd.isna(copy[c]) and pd.isna(original[c]))]
        if row["kind"] == "exact":
            assert changed == []
        else:
            assert changed == [row["field"]]
            assert original[row["field"]] == row["before"] and copy[row["field"]] == row["after"]
    # Korean and English values were both perturbed.
    before = log.loc[log["kind"] != "exact", "before"]
    assert before.str.contains("[가-힣]").any() and before.str.contains("[A-Za-z]").any()


def test_sources_are_clean_records(customers_report):
    baseline = lk.dedupe(CUSTOMERS, RULES).clusters.set_index("customer_id")
    sources = customers_report.outcomes["source_id"]
    assert sources.is_unique
    assert (baseline.loc[sources, "cluster_size"] == 1).all()


def test_known_outcome_from_the_rules():
    """E-mail-only rules: an unchanged or re-cased e-mail is found every time; a typo or a mark
    in the local part makes another address, never blocked with its source: zero found."""
    report = measure_recall(CUSTOMERS, EMAIL_ONLY, 40, kinds="exact,format,typo,punctuation")
    table = report.by_kind.set_index("kind")
    assert table["injected"].to_dict() == {"exact": 10, "format": 10, "typo": 10,
                                           "punctuation": 10, "overall": 40}
    assert table["found"].to_dict() == {"exact": 10, "format": 10, "typo": 0, "punctuation": 0,
                                        "overall": 20}
    assert table.loc["typo", "never_compared"] == 10 and table.loc["overall", "false_merges"] == 0
    assert (report.outcomes.loc[report.outcomes["kind"] != "exact", "field"] == "email").all()


def test_row_numbers_as_ids():
    frame = lk.read(CUSTOMERS).drop(columns=["customer_id"])
    rules = {k: v for k, v in EMAIL_ONLY.items() if k != "id_column"}
    report = measure_recall(frame, rules, 10, kinds="exact,typo")
    assert report.outcomes["injected_id"].tolist() == list(range(len(frame), len(frame) + 10))
    assert report.by_kind.set_index("kind")["found"].to_dict() == {"exact": 5, "typo": 0,
                                                                   "overall": 5}


def test_same_seed_same_copies():
    kinds = "exact,typo,format"
    first = measure_recall(CUSTOMERS, EMAIL_ONLY, 30, kinds=kinds, seed=11)
    again = measure_recall(CUSTOMERS, EMAIL_ONLY, 30, kinds=kinds, seed=11)
    other = measure_recall(CUSTOMERS, EMAIL_ONLY, 30, kinds=kinds, seed=12)
    pd.testing.assert_frame_equal(first.injection.copies, again.injection.copies)
    pd.testing.assert_frame_equal(first.outcomes, again.outcomes)
    assert set(first.outcomes["source_id"]) != set(other.outcomes["source_id"])


def test_bad_input_names_the_option():
    with pytest.raises(InputError, match=r"--inject 5000 .* at most \d+"):
        measure_recall(CUSTOMERS, EMAIL_ONLY, 5000)
    with pytest.raises(InputError, match="Did you mean 'typo'"):
        measure_recall(CUSTOMERS, EMAIL_ONLY, 10, kinds="typos")
    # E-mail has no words to change: the kind cannot be served, and the fix is named.
    with pytest.raises(InputError, match=r"`word` perturbation.*--kinds exact"):
        measure_recall(CUSTOMERS, EMAIL_ONLY, 10, kinds="exact,word")


# -- the command line --------------------------------------------------------------------------


def test_cli_json_and_out(tmp_path):
    done = run_cli("recall", CUSTOMERS, "--rules", RULES, "--inject", "60", "--seed", "5",
                   "--json", "--out", tmp_path / "a")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["injected"] == 60 and report["records"] == 2004
    assert [k["kind"] for k in report["kinds"]] == list(KINDS)
    assert all(k["found"] + k["missed"] == k["injected"] == 10 for k in report["kinds"])
    assert report["overall"]["found"] == sum(k["found"] for k in report["kinds"])
    outcomes = pd.read_csv(tmp_path / "a" / "outcomes.csv", dtype=str, keep_default_na=False)
    assert len(outcomes) == 60
    assert int((outcomes["found"] == "True").sum()) == report["overall"]["found"]
    injected = pd.read_csv(tmp_path / "a" / "injected.csv", dtype=str)
    assert list(injected.columns) == list(lk.read(CUSTOMERS).columns) and len(injected) == 60
    assert json.loads((tmp_path / "a" / "recall.json").read_text(encoding="utf-8")) == report
    # The run with the copies is kept, so a miss can be explained.
    run = lk.Result.load(tmp_path / "a" / "run")
    assert len(run.clusters) == 2064

    table = run_cli("recall", CUSTOMERS, "--rules", RULES, "--inject", "60", "--seed", "5",
                    "--out", tmp_path / "b")
    assert table.returncode == 0, table.stderr
    assert "overall" in table.stdout and "95% CI" in table.stdout
    for name in ("injected.csv", "outcomes.csv", "recall.json"):  # same seed, same bytes
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_cli_bad_input_exits_2(tmp_path):
    lk.read(CUSTOMERS).drop(columns=["email"]).to_csv(tmp_path / "no_email.csv", index=False)
    too_many, unknown, missing = run_clis(
        ("recall", CUSTOMERS, "--rules", RULES, "--inject", "5000"),
        ("recall", CUSTOMERS, "--rules", RULES, "--kinds", "typo,misspell"),
        ("recall", tmp_path / "no_email.csv", "--rules", RULES),
    )
    assert too_many.returncode == 2 and "--inject" in too_many.stderr
    assert unknown.returncode == 2 and "'misspell'" in unknown.stderr
    assert missing.returncode == 2
    assert "no_email.csv" in missing.stderr and "`email`" in missing.stderr
