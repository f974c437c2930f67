"""Tests for linkage.normalize: each Korean spelling on its own, then the shared contract."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.errors import InputError, RulesError
from linkage.normalize import (
    NORMALIZATION_VERSION,
    NORMALIZERS,
    normalize_company,
    normalize_date,
    normalize_email,
    normalize_name,
    normalize_phone,
    normalize_postcode,
    normalize_text,
    parse_dates,
)
from linkage.normalize._name import nickname_table


def one(func, value, **options):
    """Normalize a single value."""
    return func(pd.Series([value], name="col"), **options).iloc[0]


# --- text -----------------------------------------------------------------------------------


def test_text_folds_case_punctuation_and_spaces():
    assert one(normalize_text, "  Hello,   WORLD!! ") == "hello world"


def test_text_nfkc_full_width():
    assert one(normalize_text, "ＡＢＣ　１２３") == "abc 123"


def test_text_keeps_hangul():
    assert one(normalize_text, "김민수 (서울)") == "김민수 서울"


def test_text_options_off():
    assert one(normalize_text, "Hello, World", lowercase=False, strip_punctuation=False) == (
        "Hello, World"
    )


def test_text_only_punctuation_becomes_none():
    assert one(normalize_text, " !!! ") is None


# --- name -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Bob", "robert"),
        ("Bill Smith", "william smith"),
        ("Liz Taylor", "elizabeth taylor"),
        ("Beth", "elizabeth"),
        ("JIM", "james"),
        ("Peggy O'Neil", "margaret o neil"),
    ],
)
def test_name_english_nicknames(raw, expected):
    assert one(normalize_name, raw) == expected


def test_name_nicknames_can_be_turned_off():
    assert one(normalize_name, "Bob Smith", nicknames=False) == "bob smith"


def test_name_nickname_keeps_capitalization_without_lowercase():
    assert one(normalize_name, "Bob SMITH", lowercase=False) == "Robert SMITH"


def test_name_hangul_spacing_removed():
    assert one(normalize_name, "김 민수") == "김민수"


def test_name_hangul_spacing_all_spellings_agree():
    out = normalize_name(pd.Series(["김민수", "김 민수", " 김  민 수 ", "김·민수"]))
    assert out.tolist() == ["김민수"] * 4


def test_name_mixed_hangul_latin_keeps_spaces():
    assert one(normalize_name, "김민수 Bob") == "김민수 robert"


def test_nickname_table_is_sound():
    table = nickname_table()
    assert len(table) >= 200
    assert table["bob"] == "robert" and table["bill"] == "william"
    # A canonical name must never be a nickname itself, or mapping twice would differ.
    assert not set(table) & set(table.values())
    # Romanized Korean family names must not be read as English nicknames.
    assert "kim" not in table


# --- phone ----------------------------------------------------------------------------------


def test_phone_kr_dashes():
    assert one(normalize_phone, "010-1234-5678") == "01012345678"


def test_phone_kr_plain_digits():
    assert one(normalize_phone, "01012345678") == "01012345678"


def test_phone_kr_plus82_spaces():
    assert one(normalize_phone, "+82 10 1234 5678") == "01012345678"


def test_phone_kr_plus82_dashes():
    assert one(normalize_phone, "+82-10-1234-5678") == "01012345678"


def test_phone_kr_82_without_plus():
    assert one(normalize_phone, "82 10 1234 5678") == "01012345678"


def test_phone_kr_parentheses():
    assert one(normalize_phone, "(010) 1234 5678") == "01012345678"


def test_phone_kr_dots():
    assert one(normalize_phone, "010.1234.5678") == "01012345678"


def test_phone_kr_plus82_with_kept_trunk_zero():
    assert one(normalize_phone, "+82 (0)10-1234-5678") == "01012345678"


def test_phone_kr_0082_prefix():
    assert one(normalize_phone, "0082-10-1234-5678") == "01012345678"


def test_phone_kr_seoul_landline():
    assert one(normalize_phone, "02-123-4567") == "021234567"


def test_phone_kr_seoul_landline_international():
    assert one(normalize_phone, "+82 2 123 4567") == "021234567"


def test_phone_full_width_digits():
    assert one(normalize_phone, "０１０－１２３４－５６７８") == "01012345678"


def test_phone_country_none_digits_only():
    assert one(normalize_phone, "+82 10 1234 5678", country=None) == "821012345678"
    assert one(normalize_phone, "+1 (415) 555-1234", country=None) == "14155551234"


def test_phone_no_digits_is_none():
    assert one(normalize_phone, "n/a") is None


def test_phone_unknown_country_is_a_rules_error():
    with pytest.raises(RulesError, match="country"):
        normalize_phone(pd.Series(["010"]), country="XX")


# --- email ----------------------------------------------------------------------------------


def test_email_strip_and_lowercase():
    assert one(normalize_email, "  Ann.Lee+News@Example.COM ") == "ann.lee+news@example.com"


def test_email_plus_tags():
    assert one(normalize_email, "ann+news@example.com", plus_tags=True) == "ann@example.com"


def test_email_gmail_dots():
    assert one(normalize_email, "Ann.Lee@gmail.com", dots=True) == "annlee@gmail.com"
    assert one(normalize_email, "ann.lee@googlemail.com", dots=True) == "annlee@gmail.com"


def test_email_dots_only_for_gmail():
    assert one(normalize_email, "ann.lee@example.com", dots=True) == "ann.lee@example.com"


def test_email_without_at_is_kept_lowercased():
    assert one(normalize_email, " Not An Email ") == "not an email"


# --- date -----------------------------------------------------------------------------------


def test_date_korean():
    assert one(normalize_date, "1990년 3월 5일") == "1990-03-05"


def test_date_korean_without_spaces():
    assert one(normalize_date, "1990년3월5일") == "1990-03-05"


def test_date_korean_dots():
    assert one(normalize_date, "1990.3.5") == "1990-03-05"


def test_date_korean_dots_with_spaces():
    assert one(normalize_date, "1990. 3. 5.") == "1990-03-05"


def test_date_compact():
    assert one(normalize_date, "19900305") == "1990-03-05"


@pytest.mark.parametrize(
    "raw",
    [
        "1990-03-05",
        "1990-3-5",
        "1990-03-05T12:30:00",
        "1990-03-05 12:30:00+09:00",
        "1990/03/05",
        "5 March 1990",
        "March 5, 1990",
        "5 Mar 1990",
        "5th of March 1990",
        "Mon, 5 Mar 1990",
        "1990年3月5日",
    ],
)
def test_date_other_formats(raw):
    assert one(normalize_date, raw) == "1990-03-05"


def test_date_full_width_digits():
    assert one(normalize_date, "１９９０－０３－０５") == "1990-03-05"


def test_date_ambiguous_dmy_is_recorded():
    parsed = parse_dates(pd.Series(["05/03/1990"], index=["r1"]))
    assert parsed.loc["r1", "iso"] == "1990-03-05"
    assert bool(parsed.loc["r1", "ambiguous"]) is True
    assert bool(parsed.loc["r1", "valid"]) is True


def test_date_ambiguous_order_mdy_flips():
    parsed = parse_dates(pd.Series(["05/03/1990", "05-03-1990", "05.03.1990"]), order="MDY")
    assert parsed["iso"].tolist() == ["1990-05-03"] * 3
    assert parsed["ambiguous"].tolist() == [True] * 3
    assert one(normalize_date, "05/03/1990", order="MDY") == "1990-05-03"


def test_date_unambiguous_not_flagged():
    parsed = parse_dates(pd.Series(["25/12/1990", "12/25/1990", "05/05/1990", "1990-03-05"]))
    assert parsed["iso"].tolist() == ["1990-12-25", "1990-12-25", "1990-05-05", "1990-03-05"]
    assert not parsed["ambiguous"].any()
    assert parsed["valid"].all()


def test_date_not_a_calendar_date_is_invalid():
    parsed = parse_dates(pd.Series(["1990-02-30", "1990-13-01", "31/04/1990"]))
    assert not parsed["valid"].any()
    assert parsed["iso"].isna().all()


def test_date_two_digit_year_rejected():
    assert not parse_dates(pd.Series(["05/03/90"]))["valid"].iloc[0]
    assert not parse_dates(pd.Series(["90-03-05"]))["valid"].iloc[0]


def test_date_plain_forms_read_at_once_are_read_as_one_by_one():
    """The commonest forms are read over an Arrow array at once (`_parse_plain`); every value,
    whichever way it is read, gets what the reader of one value gives it (fuzzed: separators
    mixed, widths, leap years, months and days out of range, years out of `min_year` and
    `max_year`, look-alikes with spaces, letters, full-width digits or a newline)."""
    from linkage.normalize._date import _parse_one

    rng = np.random.default_rng(3)

    def number(width: int) -> str:
        return "".join(rng.choice(list("0123456789"), width))

    values = []
    for _ in range(30_000):
        y = str(rng.choice([number(4), str(rng.integers(1890, 2030)), "1900", "2000", "2004",
                            "0000", "0999", "2100"]))
        m, d = (str(rng.choice([number(rng.integers(1, 3)), str(rng.integers(0, 14)),
                                f"{rng.integers(1, 13):02d}", "29", "30", "31"]))
                for _ in range(2))
        a, b = rng.choice(list("-./"), 2) if rng.random() < 0.2 else [rng.choice(list("-./"))] * 2
        form = rng.integers(0, 4)
        value = [f"{y}{a}{m}{b}{d}", f"{d}{a}{m}{b}{y}", f"{y}{m.zfill(2)}{d.zfill(2)}",
                 number(rng.integers(6, 11))][form]
        if rng.random() < 0.1:
            value = rng.choice([" ", "x", "\n", "１", "T12:00", ".0", "."]).join(
                [value[:2], value[2:]] if rng.random() < 0.5 else [value, ""])
        values.append(value)
    junk = [*"ab Z09.-/\t\x0b\x1c\x1f\n", "é", "１", "년"]
    values += ["".join(rng.choice(junk, rng.integers(0, 9))) for _ in range(5_000)]
    phoney = [*"0123456789", " ", "+", "(", ")", "\t", "\x1c", "-"]
    values += ["".join(rng.choice(phoney, rng.integers(0, 14))) for _ in range(5_000)]
    values += [" 19900305 ", "19900305\x1c", "+44 (0)20 7946 0958", "(1990) 03 05"]
    values += [1990.0, 19900305.0, 19900305, "", "  ", "\x1c", "1990-03-05", "05/03/1990",
               "5 March 1990", "March 5, 1990", "Smith", "12 Main St", "123.0"]
    series = pd.Series(values, dtype=object)
    for order in ("DMY", "MDY", "YMD"):
        for lo, hi in ((1000, 2200), (1, 9999), (1900, 2000)):
            parsed = parse_dates(series, order=order, min_year=lo, max_year=hi)
            years = range(lo, hi + 1)
            from linkage.normalize import as_text

            expected = [_parse_one(as_text(v), order, years) for v in values]
            assert parsed["iso"].tolist() == [e[0] for e in expected]
            assert parsed["ambiguous"].tolist() == [e[1] for e in expected]
            assert parsed["valid"].tolist() == [e[2] for e in expected]


def test_date_missing_is_valid_and_none():
    parsed = parse_dates(pd.Series([None, np.nan, pd.NA, "  "], dtype=object))
    assert parsed["iso"].tolist() == [None] * 4
    assert parsed["valid"].all()
    assert not parsed["ambiguous"].any()


def test_date_invalid_raises_input_error_with_details():
    values = pd.Series(["1990-03-05", "1990-13-45", "garbage"], index=["a", "b7", "c"], name="dob")
    with pytest.raises(InputError) as info:
        normalize_date(values)
    message = str(info.value)
    assert "'dob'" in message
    assert "2 values" in message
    assert "record id 'b7': '1990-13-45'" in message
    assert "on_error: null" in message


def test_date_invalid_message_shows_at_most_three_examples():
    values = pd.Series([f"bad{i}" for i in range(5)], name="dob")
    with pytest.raises(InputError) as info:
        normalize_date(values)
    assert str(info.value).count("record id") == 3
    assert "5 values" in str(info.value)


def test_date_on_error_null():
    values = pd.Series(["1990-03-05", "1990-02-30"], name="dob")
    assert normalize_date(values, on_error="null").tolist() == ["1990-03-05", None]
    # YAML reads `on_error: null` as None; it must mean the same thing.
    assert normalize_date(values, on_error=None).tolist() == ["1990-03-05", None]


def test_date_bad_order_is_a_rules_error():
    with pytest.raises(RulesError, match="order"):
        parse_dates(pd.Series(["1990-03-05"]), order="DYM")
    # Also a ValueError, so that code checking option values the Python way catches it.
    with pytest.raises(ValueError, match="on_error"):
        normalize_date(pd.Series([], dtype=object), on_error="ignore")


# --- company --------------------------------------------------------------------------------


def test_company_jusikhoesa_suffix_removed():
    assert one(normalize_company, "삼성전자 주식회사") == "삼성전자"


def test_company_jusikhoesa_prefix_removed():
    assert one(normalize_company, "주식회사 삼성전자") == "삼성전자"


def test_company_jusikhoesa_glued_removed():
    assert one(normalize_company, "주식회사삼성전자") == "삼성전자"
    assert one(normalize_company, "삼성전자주식회사") == "삼성전자"


def test_company_ju_parenthesized_prefix_removed():
    assert one(normalize_company, "(주)삼성전자") == "삼성전자"


def test_company_ju_parenthesized_suffix_removed():
    assert one(normalize_company, "삼성전자(주)") == "삼성전자"


def test_company_ju_circled_prefix_removed():
    assert one(normalize_company, "㈜ 삼성전자") == "삼성전자"
    assert one(normalize_company, "㈜삼성전자") == "삼성전자"


def test_company_ju_circled_suffix_removed():
    assert one(normalize_company, "삼성전자㈜") == "삼성전자"


def test_company_ju_half_bracket_prefix_removed():
    assert one(normalize_company, "주)삼성전자") == "삼성전자"


def test_company_other_korean_forms():
    assert one(normalize_company, "(재)한국연구재단") == "한국연구재단"
    assert one(normalize_company, "사단법인 한국소비자연맹") == "한국소비자연맹"
    assert one(normalize_company, "한빛 유한책임회사") == "한빛"
    assert one(normalize_company, "(유)한빛") == "한빛"


def test_company_korean_suffix_mode_all_spellings_agree():
    raw = ["삼성전자 주식회사", "(주)삼성전자", "주식회사 삼성전자", "㈜삼성전자", "삼성전자(주)"]
    out = normalize_company(pd.Series(raw), legal_form="suffix")
    assert out.tolist() == ["삼성전자 주식회사"] * len(raw)


def test_company_english_remove():
    raw = [
        "Acme Inc.",
        "ACME, Inc",
        "Acme Incorporated",
        "Acme Corp.",
        "Acme Co., Ltd.",
        "Acme Co.,Ltd.",
        "Acme Limited",
        "Acme L.L.C.",
        "Acme LLC",
        "Acme PLC",
        "Acme GmbH",
        "Acme AG",
        "Acme S.A.",
        "Acme Company",
    ]
    assert normalize_company(pd.Series(raw)).tolist() == ["acme"] * len(raw)


def test_company_english_suffix():
    out = normalize_company(
        pd.Series(["Acme Inc.", "ACME, Inc", "Acme Co., Ltd.", "Acme L.L.C."]), legal_form="suffix"
    )
    assert out.tolist() == ["acme inc", "acme inc", "acme co ltd", "acme llc"]


def test_company_english_form_at_start_kept():
    # "AG Barr" is a company name, not a legal form followed by a name.
    assert one(normalize_company, "AG Barr plc") == "ag barr"


def test_company_only_a_legal_form_is_kept():
    assert one(normalize_company, "(주)") == "주식회사"


def test_company_bad_mode_is_a_rules_error():
    with pytest.raises(RulesError, match="legal_form"):
        normalize_company(pd.Series(["x"]), legal_form="drop")


# --- postcode -------------------------------------------------------------------------------


def test_postcode_korean_with_space_keeps_leading_zero():
    assert one(normalize_postcode, "06 236") == "06236"


def test_postcode_uk_upper_no_space():
    assert one(normalize_postcode, "sw1a 1aa") == "SW1A1AA"


def test_postcode_hyphen_removed():
    assert one(normalize_postcode, "100-0001") == "1000001"


def test_postcode_digits_only():
    assert one(normalize_postcode, "KR-06236", digits_only=True) == "06236"


# --- contract shared by every normalizer ----------------------------------------------------


def test_registry_and_version():
    assert set(NORMALIZERS) == {"text", "name", "phone", "email", "date", "company", "postcode",
                                "url", "date_parts"}
    assert NORMALIZERS["date"] is normalize_date
    assert NORMALIZATION_VERSION == "1"


@pytest.mark.parametrize("kind", sorted(NORMALIZERS))
@pytest.mark.parametrize("dtype", [object, "str"])
def test_missing_in_none_out_index_and_name_kept(kind, dtype):
    values = pd.Series(
        ["1990-03-05", None, np.nan, pd.NA, "1990-03-05"],
        index=pd.Index(["r5", "r1", "r9", "r3", "r2"], name="id"),
        name="field",
        dtype=dtype,
    )
    out = NORMALIZERS[kind](values)
    assert out.dtype == object
    assert out.name == "field"
    assert out.index.equals(values.index)
    assert out.iloc[1:4].tolist() == [None, None, None]
    assert isinstance(out.iloc[0], str)
    assert out.iloc[0] == out.iloc[4]


@pytest.mark.parametrize("kind", sorted(NORMALIZERS))
def test_empty_series(kind):
    out = NORMALIZERS[kind](pd.Series([], dtype=object, name="x"))
    assert len(out) == 0 and out.dtype == object and out.name == "x"


@pytest.mark.parametrize("kind", sorted(NORMALIZERS))
def test_unknown_option_is_type_error(kind):
    with pytest.raises(TypeError):
        NORMALIZERS[kind](pd.Series(["x"]), no_such_option=True)


def test_non_series_input_is_type_error():
    with pytest.raises(TypeError, match="Series"):
        normalize_text(["a", "b"])


def test_repeated_values_are_normalized_once_and_consistently():
    values = pd.Series(["Bob"] * 1000 + ["Bill"] * 1000)
    out = normalize_name(values)
    assert out.value_counts().to_dict() == {"robert": 1000, "william": 1000}


# --- properties -----------------------------------------------------------------------------

# Phone-like and date-like text finds more edge cases than arbitrary text alone.
_PHONE_LIKE = st.text(alphabet="0123456789+-() .８２", max_size=20)
_ANY_TEXT = st.text(max_size=30)
_IDEMPOTENT = {
    "text": [{}, {"lowercase": False}, {"strip_punctuation": False}],
    "name": [{}, {"lowercase": False}, {"nicknames": False}],
    "phone": [{}, {"country": None}],
    "email": [{}, {"dots": True, "plus_tags": True}],
    "postcode": [{}, {"digits_only": True}],
    "company": [{}, {"legal_form": "suffix"}],
}


@pytest.mark.parametrize(
    ("kind", "options"),
    [(kind, options) for kind, variants in _IDEMPOTENT.items() for options in variants],
)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_idempotent_on_own_output(kind, options, data):
    strategy = _PHONE_LIKE | _ANY_TEXT if kind == "phone" else _ANY_TEXT
    raw = data.draw(st.lists(strategy | st.none(), max_size=5))
    func = NORMALIZERS[kind]
    once = func(pd.Series(raw, dtype=object, name="c"), **options)
    twice = func(once, **options)
    assert twice.tolist() == once.tolist()
    assert all(v is None or (isinstance(v, str) and v) for v in once)


@settings(max_examples=300, deadline=None)
@given(
    raw=st.lists(
        st.text(max_size=30) | st.text(alphabet="0123456789/-. 년월일marchMAY,", max_size=20),
        max_size=5,
    ),
    order=st.sampled_from(["DMY", "MDY", "YMD"]),
)
def test_date_never_raises_with_on_error_null(raw, order):
    values = pd.Series(raw, dtype=object, name="d")
    out = normalize_date(values, order=order, on_error="null")
    parsed = parse_dates(values, order=order)
    assert out.tolist() == parsed["iso"].tolist()
    for iso, ambiguous, valid in parsed.itertuples(index=False):
        assert valid or iso is None
        assert not ambiguous or valid
        if iso is not None:
            # ISO output reads back as itself.
            assert one(normalize_date, iso) == iso


@settings(max_examples=200, deadline=None)
@given(raw=st.lists(st.text(max_size=30), max_size=5))
def test_every_normalizer_accepts_arbitrary_text(raw):
    values = pd.Series(raw, dtype=object, name="c")
    for kind, func in NORMALIZERS.items():
        options = {"on_error": "null"} if kind == "date" else {}
        out = func(values, **options)
        assert len(out) == len(values)


def test_url_spellings_of_one_page_become_one_value():
    from linkage.normalize import normalize_url

    same = pd.Series([
        "HTTP://WWW.Example.com:80/a/?utm_source=news&b=2&a=1#top",
        "https://example.com/a?a=1&b=2",
        "example.com/a?b=2&a=1&fbclid=zz",
    ])
    out = normalize_url(same)
    assert out.nunique() == 1 and out.iloc[0] == "https://example.com/a?a=1&b=2"
    other = normalize_url(pd.Series(["https://example.com/a?a=2", "https://example.com:8443/a",
                                     None, "   "]))
    assert other.iloc[0] != out.iloc[0] and other.iloc[1].endswith(":8443/a")
    assert other.iloc[2] is None and other.iloc[3] is None


def test_ascii_fast_paths_give_what_each_value_gives():
    """Postcodes and phone digits of ASCII text are read over an Arrow array (bytes kept or
    deleted in one pass, floats' text only where a value has a "."); fuzzed against the
    normalizers' one-value functions on ASCII text with every kind of white space, hyphens,
    dots, signs, letters and floats' text."""
    from linkage.normalize._phone import _digits
    from linkage.normalize._postcode import _normalize_one

    rng = np.random.default_rng(11)
    chars = list("0123456789 -.+aZ\t\x0b\x1c\x1f\n")
    for dots in (True, False):
        pool = chars if dots else [c for c in chars if c != "."]
        values = ["".join(rng.choice(pool, rng.integers(0, 12))) for _ in range(20_000)]
        values += ["2119.0", " 06 236 ", "100-0001", "", "-", "12.000", "+1.0"] if dots else []
        series = pd.Series(values, dtype=object)
        for digits_only in (False, True):
            expected = [_normalize_one(v, digits_only=digits_only) or None for v in values]
            assert normalize_postcode(series, digits_only=digits_only).tolist() == expected
        # (The phone path reads a float's text with RE2's \s, which lacks \x0b and
        # \x1c-\x1f: such values are left out here.)
        plain = series[~series.str.contains("[\x0b\x1c-\x1f]")]
        expected = [_digits(v, None) or None for v in plain]
        assert normalize_phone(plain, country=None).tolist() == expected


@pytest.mark.parametrize("step", [3, 1 << 15])
def test_ascii_keep_is_the_regex_over_every_string_boundary(monkeypatch, step):
    """`ascii_keep` (the bytes of ASCII text a class marks, in one pass) gives what the regex
    deleting the others gives, for empty strings, a slice of an array, and running counts
    taken a few strings at a time (`step`) across their boundaries."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from linkage.normalize import _text

    monkeypatch.setattr(_text, "_ENDS_STEP", step)
    rng = np.random.default_rng(5)
    words = ["".join(rng.choice(list("a1 2-.9"), size=int(rng.integers(0, 7))))
             for _ in range(500)]
    words[10:14] = ["", "", "", ""]
    for array in (pa.array(words, pa.large_string()), pa.array(words, pa.string()).slice(7)):
        got = _text.ascii_keep(array, _text._DIGIT_BYTES)
        assert got.type == array.type
        assert got.to_pylist() == pc.replace_substring_regex(array, "[^0-9]", "").to_pylist()


def test_ascii_names_and_text_over_arrow_are_the_per_value_functions():
    """Names and text of ASCII values go through Arrow at once (`_ascii_names`,
    `ascii_text_core`): the very strings `_normalize_one` and `text_core` give each value, for
    nicknames in any case and between punctuation, control characters, digits, runs of white
    space and empty results; values that are not ASCII go one by one beside them."""
    from linkage.normalize._name import _normalize_one
    from linkage.normalize._text import text_core

    rng = np.random.default_rng(11)
    nicknames = [*list(nickname_table())[:40], "Bill", "BOB", "liz", "smith"]
    pieces = [*nicknames, " ", "  ", "-", "'", ".", ",", "\t", "\x0b", "\x1c", "\x7f", "_", "&",
              "3", "O", "x", "Zz", "\n", "(", ")"]
    for trial in range(8):
        values = ["".join(rng.choice(pieces, int(rng.integers(0, 7)))) for _ in range(800)]
        if trial % 2:
            values += ["Élodie  Bill", "김 민수", "Straße", "Ⅷ Bob", "ﬁn bill"]
        series = pd.Series(values, dtype=object if trial % 4 < 2 else "str")
        for nick in (True, False):
            for lower in (True, False):
                expected = [_normalize_one(v, nicknames=nick, lowercase=lower) or None
                            for v in values]
                got = normalize_name(series, nicknames=nick, lowercase=lower).tolist()
                assert got == expected, (trial, nick, lower)
        expected = [text_core(v) or None for v in values]
        assert normalize_text(series).tolist() == expected, trial
