"""Tests for linkage.comparators: the shared level contract, Korean text, dates, numbers."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import JaroWinkler as RF_JaroWinkler

from linkage.comparators import (
    NULL_LEVEL,
    DamerauLevenshtein,
    Date,
    Exact,
    JaroWinkler,
    Levenshtein,
    Numeric,
    Phonetic,
    TokenSort,
)
from linkage.errors import InputError
from linkage.normalize.hangul import to_jamo

STRING_CLASSES = [JaroWinkler, Levenshtein, DamerauLevenshtein, TokenSort]


def arr(values) -> np.ndarray:
    return np.array(list(values), dtype=object)


def one(comparison, a, b) -> tuple[int, float]:
    """Level and similarity of a single pair."""
    levels, sims = comparison.compare(arr([a]), arr([b]))
    return int(levels[0]), float(sims[0])


def label(comparison, a, b) -> str:
    return comparison.label_of(one(comparison, a, b)[0])


# --- strategies -----------------------------------------------------------------------------

# A small alphabet so that equal and near-equal values are common; Hangul syllables from the
# whole 가-힣 block plus a few fixed ones, Latin letters and a space.
_chars = st.one_of(
    st.sampled_from(list("abcsmithyABC ")),
    st.sampled_from(list("김민수슈삼성전자")),
    st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
)
_text = st.text(alphabet=_chars, min_size=1, max_size=8)
_value = st.one_of(st.none(), st.just(""), _text)
_dates = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2099, 12, 31)).map(
    dt.date.isoformat
)
_date_value = st.one_of(st.none(), st.just(""), _dates, st.sampled_from(["1990-03-05"]))
_number = st.one_of(
    st.integers(-200, 200).map(str),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(repr),
    st.sampled_from(["0", "0.0", "-0.0", "1", "1.0", "100", "100.5"]),
)
_number_value = st.one_of(st.none(), st.just(""), _number)

TEXT_COMPARISONS = [
    *(cls("col") for cls in STRING_CLASSES),
    *(cls("col", thresholds=[0.95, 0.7, 0.5]) for cls in STRING_CLASSES),
    Exact("col"),
    Phonetic("col"),
    Phonetic("col", algorithm="metaphone"),
    Phonetic("col", algorithm="nysiis"),
]
DATE_COMPARISONS = [
    Date("col"),
    Date("col", same_year=True, within_days=[7, 60]),
    Date("col", swapped=False, typo=False),
]
NUMERIC_COMPARISONS = [
    Numeric("col"),
    Numeric("col", abs_tolerance=[1, 5], rel_tolerance=[0.1, 0.5]),
]


def check_contract(comparison, pairs) -> None:
    left = arr(a for a, _ in pairs)
    right = arr(b for _, b in pairs)
    levels, sims = comparison.compare(left, right)
    assert levels.dtype == np.int8 and sims.dtype == np.float32
    assert levels.shape == sims.shape == (len(pairs),)

    # Symmetric, levels and similarities alike.
    levels_r, sims_r = comparison.compare(right, left)
    np.testing.assert_array_equal(levels, levels_r)
    np.testing.assert_array_equal(sims, sims_r)

    null = np.array([a in (None, "") or b in (None, "") for a, b in pairs], dtype=bool)
    # Level -1 exactly where either side is missing, NaN similarity exactly there too.
    np.testing.assert_array_equal(levels == NULL_LEVEL, null)
    np.testing.assert_array_equal(np.isnan(sims), null)
    n_levels = len(comparison.level_labels)
    assert np.all((levels[~null] >= 0) & (levels[~null] < n_levels))
    assert np.all((sims[~null] >= 0.0) & (sims[~null] <= 1.0))

    # Equal non-null values get the top level, "exact", with similarity 1.
    equal = np.array([a == b for a, b in pairs], dtype=bool) & ~null
    assert comparison.level_labels[-1] == "exact"
    assert np.all(levels[equal] == n_levels - 1)
    assert np.all(sims[equal] == 1.0)


@pytest.mark.parametrize("comparison", TEXT_COMPARISONS, ids=repr)
@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(_value, _value), min_size=1, max_size=15))
def test_text_contract(comparison, pairs):
    check_contract(comparison, pairs)


@pytest.mark.parametrize("comparison", TEXT_COMPARISONS, ids=repr)
@settings(max_examples=15, deadline=None)
@given(values=st.lists(_value, min_size=1, max_size=10))
def test_text_self_comparison_is_exact_or_null(comparison, values):
    """A column compared with itself: every present value is exact (checks `equal` above)."""
    check_contract(comparison, list(zip(values, values, strict=True)))


@pytest.mark.parametrize("comparison", DATE_COMPARISONS, ids=repr)
@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(_date_value, _date_value), min_size=1, max_size=15))
def test_date_contract(comparison, pairs):
    check_contract(comparison, pairs)


@pytest.mark.parametrize("comparison", NUMERIC_COMPARISONS, ids=repr)
@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(_number_value, _number_value), min_size=1, max_size=15))
def test_numeric_contract(comparison, pairs):
    check_contract(comparison, pairs)
    # Numerically equal spellings ("1" and "1.0") are exact as well.
    for (a, b), level in zip(pairs, comparison.compare(arr(p[0] for p in pairs),
                                                       arr(p[1] for p in pairs))[0],
                             strict=True):
        if a not in (None, "") and b not in (None, "") and float(a) == float(b):
            assert comparison.label_of(int(level)) == "exact"


def test_all_missing_input_is_all_null():
    levels, sims = JaroWinkler("c").compare(arr([None, "", np.nan]), arr(["a", None, "b"]))
    assert levels.tolist() == [NULL_LEVEL] * 3
    assert np.isnan(sims).all()


def test_pd_na_is_null():
    levels, sims = JaroWinkler("c").compare(arr(["a", pd.NA]), arr(["a", "b"]))
    assert levels.tolist() == [3, NULL_LEVEL]
    assert np.isnan(sims[1])


# --- labels and thresholds ------------------------------------------------------------------


@pytest.mark.parametrize("cls", STRING_CLASSES)
def test_level_labels_for_thresholds(cls):
    assert cls("c", thresholds=[0.92, 0.8]).level_labels == ["else", ">=0.8", ">=0.92", "exact"]
    assert cls("c", thresholds=[0.8, 0.92]).level_labels == ["else", ">=0.8", ">=0.92", "exact"]
    assert cls("c").level_labels == ["else", ">=0.8", ">=0.92", "exact"]
    assert cls("c", thresholds=[]).level_labels == ["else", "exact"]


def test_label_of_null_and_levels():
    comparison = JaroWinkler("c")
    assert comparison.label_of(-1) == "null"
    assert [comparison.label_of(k) for k in range(4)] == ["else", ">=0.8", ">=0.92", "exact"]


def test_threshold_is_inclusive_and_levels_follow_similarity():
    # One edit in ten characters: similarity exactly 0.9.
    a, b = "abcdefghij", "abcdefghiX"
    assert one(Levenshtein("c"), a, b) == (1, pytest.approx(0.9))
    assert label(Levenshtein("c", thresholds=[0.9]), a, b) == ">=0.9"
    assert label(Levenshtein("c", thresholds=[0.95]), a, b) == "else"
    assert label(Levenshtein("c", thresholds=[0.92, 0.8]), a, b) == ">=0.8"
    assert label(Levenshtein("c", thresholds=[0.92, 0.8]), a, "abcdefghij") == "exact"
    assert label(Levenshtein("c", thresholds=[0.92, 0.8]), a, "zzzzzzzzzz") == "else"


def test_damerau_counts_a_swap_as_one_edit():
    assert one(Levenshtein("c"), "abcd", "abdc")[1] == pytest.approx(0.5)
    assert one(DamerauLevenshtein("c"), "abcd", "abdc")[1] == pytest.approx(0.75)


def test_exact_and_case():
    assert one(Exact("c"), "Smith", "Smith") == (1, 1.0)
    assert one(Exact("c"), "Smith", "smith") == (0, 0.0)


# --- Korean ---------------------------------------------------------------------------------


def test_levenshtein_hangul_counts_jamo_edits():
    # 김(ㄱㅣㅁ) 민(ㅁㅣㄴ) 수(ㅅㅜ): eight jamo after NFD; 수 → 슈 changes one vowel.
    assert len(to_jamo("김민수")) == 8
    level, sim = one(Levenshtein("c"), "김민수", "김민슈")
    assert sim == pytest.approx(1 - 1 / 8, abs=1e-6)
    assert sim != pytest.approx(1 - 1 / 3, abs=1e-3)  # what syllable-level editing would give
    assert Levenshtein("c").label_of(level) == ">=0.8"
    # A different final consonant (김 → 길) is also a single jamo edit.
    assert one(Levenshtein("c"), "김민수", "길민수")[1] == pytest.approx(1 - 1 / 8, abs=1e-6)


def test_damerau_levenshtein_hangul():
    assert one(DamerauLevenshtein("c"), "김민수", "김민슈")[1] == pytest.approx(0.875, abs=1e-6)


def test_token_sort_korean_word_order():
    comparison = TokenSort("c")
    level, sim = one(comparison, "삼성전자 주식회사", "주식회사 삼성전자")
    assert sim == 1.0
    assert comparison.label_of(level) == ">=0.92"  # just below exact: the strings differ
    assert level == len(comparison.level_labels) - 2
    assert label(comparison, "삼성전자 주식회사", "삼성전자 주식회사") == "exact"


def test_jaro_winkler_on_jamo():
    level, sim = one(JaroWinkler("c"), "김민수", "김민슈")
    expected = RF_JaroWinkler.normalized_similarity(to_jamo("김민수"), to_jamo("김민슈"))
    syllables = RF_JaroWinkler.normalized_similarity("김민수", "김민슈")
    assert sim == pytest.approx(expected, abs=1e-6)
    assert sim > syllables + 0.05
    assert JaroWinkler("c").label_of(level) == ">=0.92"


def test_mixed_hangul_and_latin():
    sim = one(Levenshtein("c"), "LG전자", "LG전쟈")[1]
    assert sim == pytest.approx(1 - 1 / len(to_jamo("LG전자")), abs=1e-6)


# --- dates ----------------------------------------------------------------------------------


def test_date_level_labels():
    assert Date("d").level_labels == [
        "else", "within_365_days", "within_30_days", "one_typo", "day_month_swapped", "exact",
    ]
    assert Date("d", same_year=True, within_days=[30]).level_labels == [
        "else", "same_year", "within_30_days", "one_typo", "day_month_swapped", "exact",
    ]
    assert Date("d", typo=False, swapped=False).level_labels == [
        "else", "within_365_days", "within_30_days", "exact",
    ]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("1990-03-05", "1990-03-05", "exact"),
        ("1990-03-05", "1990-05-03", "day_month_swapped"),
        ("1990-03-05", "1990-03-08", "one_typo"),  # one digit: Damerau-Levenshtein 1
        ("1990-12-01", "1990-12-10", "one_typo"),  # two neighbouring digits swapped
        ("1990-03-05", "1980-03-05", "one_typo"),  # ten years apart, but one digit
        ("1990-03-05", "1990-03-20", "within_30_days"),
        ("1990-03-05", "1990-10-19", "within_365_days"),
        ("1990-12-30", "1991-01-28", "within_30_days"),
        ("1990-01-05", "1995-07-20", "else"),
    ],
)
def test_date_levels(a, b, expected):
    assert label(Date("d"), a, b) == expected
    assert label(Date("d"), b, a) == expected


def test_date_same_year_when_enabled():
    with_year = Date("d", same_year=True, within_days=[30])
    assert label(with_year, "1990-01-05", "1990-11-25") == "same_year"
    assert label(with_year, "1990-01-05", "1991-01-20") == "else"  # 380 days, other year
    without = Date("d", within_days=[30])
    assert label(without, "1990-01-05", "1990-11-25") == "else"


def test_date_switches_off_typo_and_swap():
    plain = Date("d", typo=False, swapped=False)
    assert label(plain, "1990-03-05", "1990-03-08") == "within_30_days"
    assert label(plain, "1990-03-05", "1990-05-03") == "within_365_days"
    assert label(plain, "1990-03-05", "1980-03-05") == "else"


def test_date_day_equal_to_month_is_not_a_swap():
    # 1990-03-03 swapped is itself: exact, never "swapped".
    assert label(Date("d"), "1990-03-03", "1990-03-03") == "exact"


def test_date_similarity():
    _, sim = one(Date("d"), "1990-03-05", "1990-05-03")
    assert sim == pytest.approx(1 - 59 / 3652, abs=1e-6)
    assert one(Date("d"), "1990-03-05", "1990-03-05")[1] == 1.0
    assert one(Date("d"), "1900-01-01", "2020-01-01")[1] == 0.0  # floored


def test_date_ignores_time_part():
    assert label(Date("d"), "1990-03-05T10:30:00", "1990-03-05") == "exact"


@pytest.mark.parametrize("bad", ["05/03/1990", "1990-13-01", "March 5 1990", "19900305x"])
def test_date_non_iso_raises_input_error(bad):
    with pytest.raises(InputError, match="`date` normalizer") as info:
        Date("dob").compare(arr(["1990-03-05", bad]), arr(["1990-03-05", "1990-03-05"]))
    assert "dob" in str(info.value)
    assert repr(bad) in str(info.value)


def test_date_rejects_bad_within_days():
    from linkage.errors import RulesError

    with pytest.raises(RulesError, match="within_days"):
        Date("d", within_days=[0])


# --- numbers --------------------------------------------------------------------------------


def test_numeric_labels_and_levels():
    comparison = Numeric("n", abs_tolerance=[1, 5], rel_tolerance=[0.1])
    assert comparison.level_labels == [
        "else", "within_0.1_rel", "within_5_abs", "within_1_abs", "exact",
    ]
    assert label(comparison, "100", "100") == "exact"
    assert label(comparison, "100", "100.0") == "exact"
    assert label(comparison, "100", "100.5") == "within_1_abs"
    assert label(comparison, "100", "101") == "within_1_abs"  # inclusive
    assert label(comparison, "100", "104") == "within_5_abs"
    assert label(comparison, "100", "109") == "within_0.1_rel"
    assert label(comparison, "100", "150") == "else"
    assert label(comparison, "-3", "3") == "else"


def test_numeric_similarity():
    assert one(Numeric("n"), "100", "109")[1] == pytest.approx(1 - 9 / 109, abs=1e-6)
    assert one(Numeric("n"), "0", "0")[1] == 1.0
    assert one(Numeric("n"), "-5", "5")[1] == 0.0  # clipped


def test_numeric_rejects_text():
    with pytest.raises(InputError, match="not numbers") as info:
        Numeric("amount").compare(arr(["1", "ten"]), arr(["1", "10"]))
    assert "amount" in str(info.value) and "'ten'" in str(info.value)


def test_numeric_tolerance_boundary_on_decimals():
    comparison = Numeric("price", abs_tolerance=[0.1])
    assert label(comparison, "1.1", "1.0") == "within_0.1_abs"
    assert label(comparison, "10.10", "10.00") == "within_0.1_abs"


# --- phonetic -------------------------------------------------------------------------------


def test_phonetic_soundex_level():
    comparison = Phonetic("surname")
    assert comparison.level_labels == ["else", "soundex", "exact"]
    assert one(comparison, "Smith", "Smyth") == (1, 1.0)
    assert label(comparison, "Smith", "Smith") == "exact"
    assert one(comparison, "Smith", "Jones") == (0, 0.0)


def test_phonetic_other_algorithms():
    assert Phonetic("s", algorithm="metaphone").level_labels == ["else", "metaphone", "exact"]
    metaphone = Phonetic("s", algorithm="metaphone")
    assert label(metaphone, "Catherine", "Kathryn") == "metaphone"
    assert label(metaphone, "Knight", "Night") == "metaphone"
    assert label(Phonetic("s"), "Knight", "Night") == "else"  # soundex keeps the K
    assert label(Phonetic("s", algorithm="nysiis"), "Philips", "Phillips") == "nysiis"
    assert label(Phonetic("s", algorithm="nysiis"), "Robert", "Rupert") == "else"
    assert label(Phonetic("s"), "Robert", "Rupert") == "soundex"


def test_phonetic_hangul_is_its_own_code():
    comparison = Phonetic("name")
    assert label(comparison, "김민수", "강호동") == "else"


# --- vectorised per distinct pair -----------------------------------------------------------


@pytest.mark.parametrize(
    "comparison",
    [JaroWinkler("c"), Levenshtein("c"), TokenSort("c"), Phonetic("c")],
    ids=repr,
)
def test_many_pairs_of_few_values_match_per_row(comparison):
    values = [
        "김민수", "김민슈", "이영희", "박철수", "삼성전자 주식회사", "주식회사 삼성전자",
        "smith", "smyth", "jones", "johnson", "kim minsu", "minsu kim", "a", "ab", "abc",
        "LG전자", "엘지전자", "robert", "rupert", None,
    ]
    rng = np.random.default_rng(7)
    n = 200_000
    left = arr(values)[rng.integers(0, len(values), n)]
    right = arr(values)[rng.integers(0, len(values), n)]
    levels, sims = comparison.compare(left, right)
    assert levels.shape == (n,)
    for i in rng.choice(n, 300, replace=False):
        lv, sv = comparison.compare(left[i : i + 1], right[i : i + 1])
        assert levels[i] == lv[0]
        np.testing.assert_array_equal(sims[i : i + 1], sv)


def test_many_dates_match_per_row():
    dates = [f"19{y:02d}-{m:02d}-{d:02d}" for y, m, d in
             [(90, 3, 5), (90, 5, 3), (90, 3, 8), (80, 3, 5), (91, 1, 1), (90, 12, 31)]]
    rng = np.random.default_rng(3)
    n = 200_000
    left = arr(dates)[rng.integers(0, len(dates), n)]
    right = arr(dates)[rng.integers(0, len(dates), n)]
    comparison = Date("d", same_year=True)
    levels, sims = comparison.compare(left, right)
    for i in rng.choice(n, 100, replace=False):
        lv, sv = comparison.compare(left[i : i + 1], right[i : i + 1])
        assert (levels[i], sims[i]) == (lv[0], sv[0])


# --- schema ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", STRING_CLASSES)
def test_string_thresholds_validated(cls):
    from linkage.errors import RulesError

    with pytest.raises(RulesError, match=r"\[0, 1\]"):
        cls("c", thresholds=[1.3])
    with pytest.raises(RulesError, match="repeat"):
        cls("c", thresholds=[0.8, 0.8])


def test_output_name_and_round_trip():
    comparison = JaroWinkler("surname", thresholds=[0.9], name="sn")
    assert comparison.output_name == "sn"
    assert JaroWinkler("surname").output_name == "surname"
    data = comparison.to_dict()
    assert data == {"type": "jaro_winkler", "column": "surname", "thresholds": [0.9], "name": "sn"}
    from linkage.comparators import Comparison

    assert Comparison.from_dict(data) == comparison


# ------------------------------------------------------------------ names entered swapped


SWAP_LEFT = {"given": ["lee", "anna", "lee", None, "olga", "john"],
             "family": ["jackson", "smith", "jackson", "jones", "garcia", "brown"]}
SWAP_RIGHT = {"given": ["jackson", "anna", "lea", "jones", "garcia", "peter"],
              "family": ["le", "smith", "jackson", "maria", None, "john"]}


def _swap_levels(encoded: bool) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    from linkage.normalize._encoded import encode_series
    from linkage.pipeline import compare_pairs

    both = {c: pd.Series(SWAP_LEFT[c] + SWAP_RIGHT[c], dtype=object) for c in SWAP_LEFT}
    work = {c: encode_series(v) if encoded else v.to_numpy() for c, v in both.items()}
    given = JaroWinkler("given", swapped_with="family")
    family = JaroWinkler("family", swapped_with="given")
    left, right = np.arange(6), np.arange(6) + 6
    matrix = compare_pairs([given, family], work, left, right)
    return matrix.levels[:, 0], matrix.levels[:, 1], given.level_labels, family.level_labels


@pytest.mark.parametrize("encoded", [True, False])
def test_swapped_names_get_their_own_level(encoded):
    given, family, labels, _ = _swap_levels(encoded)
    assert labels == ["else", ">=0.8", ">=0.92", "swapped", "exact"]
    named = [labels[k] if k >= 0 else "null" for k in given]
    # lee jackson / jackson le: each name is the other's, "le" within a typo of "lee"
    assert named[0] == "swapped"
    assert named[1] == "exact"  # not swapped: the names agree as they stand
    assert named[2] in (">=0.8", ">=0.92")  # a typo in place is no swap
    assert named[3] == "null"  # a missing given name: neither agreement nor a swap
    assert named[4] == "else"  # the other record's surname is missing: no swap can be read
    assert named[5] == "else"  # one name crosses over (john), the other does not (brown/peter)
    fam = [labels[k] if k >= 0 else "null" for k in family]
    assert fam[0] == "swapped" and fam[1] == "exact" and fam[4] == "null"


def test_swaps_agree_between_encoded_and_plain_columns():
    assert all(np.array_equal(a, b) for a, b in zip(_swap_levels(True)[:2],
                                                    _swap_levels(False)[:2], strict=True))


def test_swapped_with_round_trips_and_is_checked():
    from linkage._schema import SchemaViolation

    c = JaroWinkler("given", swapped_with="family")
    assert c.to_dict()["swapped_with"] == "family" and c.columns == ["given", "family"]
    assert JaroWinkler("given").level_labels == ["else", ">=0.8", ">=0.92", "exact"]
    with pytest.raises(SchemaViolation, match="swapped_with"):
        JaroWinkler("given", swapped_with="given")
