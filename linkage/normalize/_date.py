"""Dates: many written forms to ISO "YYYY-MM-DD", with day/month ambiguity recorded."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

import numpy as np
import pandas as pd

from ._text import (
    ON_ERROR,
    OptionValueError,
    as_text,
    check_choice,
    check_series,
    integral_text,
    raise_unreadable,
)

_ORDERS = ("DMY", "MDY", "YMD")
# Years outside these are placeholders (0001-01-01, 9999-12-31), not birth or event dates.
MIN_YEAR, MAX_YEAR = 1000, 2200

# An optional time after the date ("1990-03-05T12:00:00Z", "1990-03-05 9:30 pm"); it is ignored.
_TIME = (
    r"(?:[t\s]+\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:z|[+-]\d{2}(?::?\d{2})?|[ap]\.?m\.?)?)?"
)
_SEP = r"\s*([-./])\s*"

# Year first is always year-month-day: "1990-03-05", "1990.3.5", "1990. 3. 5.", "1990/03/05".
_YEAR_FIRST = re.compile(rf"(\d{{4}}){_SEP}(\d{{1,2}})\s*\2\s*(\d{{1,2}})\s*\.?{_TIME}")
# 년/월/일, and the 年/月/日 of Chinese and Japanese, which the same pattern covers for free.
_KOREAN = re.compile(r"(\d{4})\s*[년年]\s*(\d{1,2})\s*[월月]\s*(\d{1,2})\s*[일日]?")
_COMPACT = re.compile(r"(\d{4})(\d{2})(\d{2})")
# Year last: day/month order is not visible in the value itself ("05/03/1990").
_YEAR_LAST = re.compile(rf"(\d{{1,2}}){_SEP}(\d{{1,2}})\s*\2\s*(\d{{4}}){_TIME}")

_ORDINAL = r"(?:st|nd|rd|th)?"
_WEEKDAY = re.compile(r"^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s+")
_DAY_NAME_YEAR = re.compile(rf"(\d{{1,2}}){_ORDINAL}(?:\s+of)?[\s./-]*([a-z]+)\.?[\s./-]*(\d{{4}})")
_NAME_DAY_YEAR = re.compile(rf"([a-z]+)\.?[\s./-]*(\d{{1,2}}){_ORDINAL}[\s./-]*(\d{{4}})")
_YEAR_NAME_DAY = re.compile(r"(\d{4})[\s./-]*([a-z]+)\.?[\s./-]*(\d{1,2})")

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

# (iso, ambiguous, valid) for one value.
_Parsed = tuple[str | None, bool, bool]
_INVALID: _Parsed = (None, False, False)


def _iso(year: int, month: int, day: int) -> _Parsed:
    try:
        return dt.date(year, month, day).isoformat(), False, True
    except ValueError:  # not a calendar date: 1990-02-30, month 13, year 0
        return _INVALID


def _day_month(a: int, b: int, order: str) -> tuple[int, int, bool]:
    """(day, month, ambiguous) for "a/b/YYYY"; `order` decides only when both could be months."""
    a_month, b_month = 1 <= a <= 12, 1 <= b <= 12
    if a_month and b_month and a != b:
        return (b, a, True) if order == "MDY" else (a, b, True)
    if order == "MDY":
        return (b, a, False) if a_month else (a, b, False)
    # DMY, and YMD, which says nothing about a year-last value, so the common reading wins.
    return (a, b, False) if b_month else (b, a, False)


def _parse_named(text: str) -> _Parsed | None:
    """Dates with English month names: "5 March 1990", "March 5, 1990", "Tue, 5 Mar 1990"."""
    text = _WEEKDAY.sub("", text.replace(",", " "), count=1).strip()
    if m := _DAY_NAME_YEAR.fullmatch(text):
        day, name, year = m.groups()
    elif m := _NAME_DAY_YEAR.fullmatch(text):
        name, day, year = m.groups()
    elif m := _YEAR_NAME_DAY.fullmatch(text):
        year, name, day = m.groups()
    else:
        return None
    month = _MONTHS.get(name)
    if month is None:
        return _INVALID
    return _iso(int(year), month, int(day))


def _parse_one(text: str, order: str, years: range) -> _Parsed:
    iso, ambiguous, valid = _parse_text(integral_text(text), order)
    if iso is not None and int(iso[:4]) not in years:
        return _INVALID
    return iso, ambiguous, valid


def _parse_text(text: str, order: str) -> _Parsed:
    text = unicodedata.normalize("NFKC", text).strip().lower()
    if not text:
        return None, False, True  # blank is missing, not wrong
    for pattern in (_YEAR_FIRST, _KOREAN):
        if m := pattern.fullmatch(text):
            groups = m.groups()
            year, month, day = groups[0], groups[-2], groups[-1]
            return _iso(int(year), int(month), int(day))
    if m := _COMPACT.fullmatch(text):
        return _iso(*(int(g) for g in m.groups()))
    if m := _YEAR_LAST.fullmatch(text):
        day, month, ambiguous = _day_month(int(m.group(1)), int(m.group(3)), order)
        iso, _, valid = _iso(int(m.group(4)), month, day)
        return iso, ambiguous and valid, valid
    named = _parse_named(text)
    return named if named is not None else _INVALID


# The plain forms `_parse_plain` reads over a whole Arrow array, in RE2 (Arrow's regex): ASCII
# digits and one separator written twice, or eight digits.
_PLAIN_YEAR_FIRST = "^(?P<a>[0-9]{4})(?P<s>[-./])(?P<b>[0-9]{1,2})(?P<t>[-./])(?P<c>[0-9]{1,2})$"
_PLAIN_YEAR_LAST = "^(?P<a>[0-9]{1,2})(?P<s>[-./])(?P<b>[0-9]{1,2})(?P<t>[-./])(?P<c>[0-9]{4})$"
_PLAIN_COMPACT = "^(?P<a>[0-9]{4})(?P<b>[0-9]{2})(?P<c>[0-9]{2})$"
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def _parse_plain(uniques: np.ndarray, order: str, years: range
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """`_parse_one` of the values in the commonest forms ("1990-03-05", "1990.3.5",
    "05/03/1990", "19900305"), over an Arrow array at once: (read here, iso, ambiguous,
    valid), one entry per value; the values not read here are left to `_parse_one`.

    The same answers: such a value is ASCII without spaces, so `integral_text`, NFKC,
    `strip` and `lower` leave it as it is (with two separators it is no float's text), and
    `_parse_text` reads it with `_YEAR_FIRST`, `_YEAR_LAST` or `_COMPACT` (each form fits only
    its own); here the same groups are read and judged alike (`_iso`, `_day_month`, `years`).
    ASCII text that is not blank and has no four digits in a row, or holds only digits, white
    space, "+" and brackets and is not eight digits, is read here as no date (all forms need a
    four-digit year; all but eight digits a separator or letters). None where pyarrow is
    missing."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - pyarrow comes with pandas 3
        return None
    n = len(uniques)
    text = np.fromiter((type(u) is str for u in uniques), dtype=bool, count=n)
    where = np.flatnonzero(text)
    array = pa.array(uniques[where], type=pa.string())
    read = np.zeros(n, dtype=bool)
    year, month, day = (np.zeros(n, dtype=np.int64) for _ in range(3))
    ambiguous = np.zeros(n, dtype=bool)
    year_text = np.full(n, None, dtype=object)

    def groups(pattern: str, separated: bool):
        found = pc.extract_regex(array, pattern)
        hit = found.is_valid().to_numpy(zero_copy_only=False)
        if separated:  # one separator, twice (RE2 has no back-references)
            same = pc.equal(found.field("s"), found.field("t")).fill_null(False)
            hit &= same.to_numpy(zero_copy_only=False)
        keep = pa.array(hit)
        fields = [found.field(k).filter(keep) for k in "abc"]
        numbers = [pc.cast(f, pa.int64()).to_numpy() for f in fields]
        texts = fields[2 if pattern == _PLAIN_YEAR_LAST else 0]
        return where[hit], numbers, texts.to_numpy(zero_copy_only=False)

    # ASCII text with a character but without four digits in a row holds no year: every
    # form reads one (`_INVALID`, as `valid` below finds for year 0).
    space = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f "  # what `strip` removes from ASCII text
    filled = pc.and_(pc.string_is_ascii(array), pc.match_substring_regex(array, f"[^{space}]"))
    no_year = pc.invert(pc.match_substring_regex(array, "[0-9]{4}"))
    # Nor does text of digits, white space, "+" and brackets (a phone number) unless it is
    # eight digits once stripped (`_COMPACT`): every other form needs a separator or letters.
    numbers = pc.and_(pc.match_substring_regex(array, f"^[0-9{space}+()]*$"), pc.invert(
        pc.match_substring_regex(array, f"^[{space}]*[0-9]{{8}}[{space}]*$")))
    none = pc.and_(filled, pc.or_(no_year, numbers))
    read[where[none.to_numpy(zero_copy_only=False)]] = True
    for pattern, separated in ((_PLAIN_YEAR_FIRST, True), (_PLAIN_COMPACT, False)):
        at, (y, m, d), texts = groups(pattern, separated)
        read[at], year[at], month[at], day[at], year_text[at] = True, y, m, d, texts
    at, (a, b, y), texts = groups(_PLAIN_YEAR_LAST, True)
    a_month, b_month = (a >= 1) & (a <= 12), (b >= 1) & (b <= 12)
    both = a_month & b_month & (a != b)
    if order == "MDY":  # `_day_month`: both could be months only where `both`
        d, m = np.where(a_month, b, a), np.where(a_month, a, b)
    else:
        d, m = np.where(b_month, a, b), np.where(b_month, b, a)
    read[at], year[at], month[at], day[at], year_text[at] = True, y, m, d, texts
    ambiguous[at] = both
    # `_iso`: a calendar date (years 1 to 9999); then `_parse_one`: a year of `years`.
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_days = _MONTH_DAYS[np.clip(month, 0, 12)] + (leap & (month == 2))
    valid = read & (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & \
        (day <= month_days) & (year >= years.start) & (year < years.stop)
    iso = np.full(n, None, dtype=object)
    ok = np.flatnonzero(valid)
    if len(ok):
        two = [pc.utf8_lpad(pc.cast(pa.array(x[ok]), pa.string()), 2, "0") for x in (month, day)]
        year_text = pa.array(year_text[ok], type=pa.string())
        iso[ok] = pc.binary_join_element_wise(year_text, *two, "-").to_numpy(
            zero_copy_only=False)
    return read, iso, ambiguous & valid, valid


def parse_dates(values: pd.Series, *, order: str = "DMY", min_year: int = MIN_YEAR,
                max_year: int = MAX_YEAR) -> pd.DataFrame:
    """Parse dates and report, per record, the ISO date, whether it was ambiguous, and validity.

    Returns a DataFrame with the index of `values` and the columns
        iso: "YYYY-MM-DD", or None when missing or unreadable;
        ambiguous: True when the value was like "05/03/1990", where both day and month could
            be either number, so `order` decided;
        valid: False when a non-missing value could not be read or is not a calendar date.
    Accepted: ISO dates (a time part is ignored), "19900305", "1990.3.5", "1990. 3. 5.",
    "1990/03/05", "1990년 3월 5일", "05/03/1990" with "/", "-" or "." and English month
    names ("5 March 1990", "March 5, 1990", "5 Mar 1990"). Two-digit years are not accepted:
    the century cannot be known. A float holding an integer (19900305.0, how pandas reads
    such a column with blanks) is that integer.

    Options:
        order: "DMY" (default), "MDY" or "YMD": how to read an ambiguous year-last value;
            "YMD" reads it as day first.
        min_year, max_year: dates outside these years (default 1000 and 2200) are not valid:
            0001-01-01 and 9999-12-31 are placeholders, not dates anything happened on.
    """
    check_series(values, "date")
    check_choice("date", "order", order, _ORDERS)
    for option, year in (("min_year", min_year), ("max_year", max_year)):
        if type(year) is not int:
            raise OptionValueError(f"normalizer 'date': option {option}={year!r} must be a "
                                   "whole year, such as 1900")
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    uniques = np.asarray(uniques, dtype=object)
    years = range(min_year, max_year + 1)
    # One more entry, what code -1 (missing) picks up: (None, False, True).
    iso = np.full(len(uniques) + 1, None, dtype=object)
    ambiguous = np.zeros(len(uniques) + 1, dtype=bool)
    valid = np.ones(len(uniques) + 1, dtype=bool)
    fast = _parse_plain(uniques, order, years)
    rest = np.flatnonzero(~fast[0]) if fast is not None else np.arange(len(uniques))
    if fast is not None:
        done = np.flatnonzero(fast[0])
        iso[done], ambiguous[done], valid[done] = fast[1][done], fast[2][done], fast[3][done]
    for k in rest:
        iso[k], ambiguous[k], valid[k] = _parse_one(as_text(uniques[k]), order, years)
    return pd.DataFrame(
        {
            "iso": pd.Series(iso[codes], index=values.index, dtype=object),
            "ambiguous": pd.Series(ambiguous[codes], index=values.index, dtype=bool),
            "valid": pd.Series(valid[codes], index=values.index, dtype=bool),
        },
        index=values.index,
    )


def normalize_date(
    values: pd.Series, *, order: str = "DMY", on_error: str | None = "raise",
    min_year: int = MIN_YEAR, max_year: int = MAX_YEAR,
) -> pd.Series:
    """Normalize dates to ISO "YYYY-MM-DD" (see `parse_dates` for the forms accepted).

    Options:
        order: "DMY" (default), "MDY" or "YMD": how to read "05/03/1990", where day and month
            could be either number. `parse_dates` reports which values were ambiguous.
        on_error: "raise" (default) raises InputError naming the column, the count and up to
            three bad values; "null" (or None) treats unreadable values as missing (a run
            counts them in a warning).
        min_year, max_year: years outside them (default 1000 and 2200) are unreadable.
    """
    check_series(values, "date")
    check_choice("date", "on_error", on_error, ON_ERROR)
    parsed = parse_dates(values, order=order, min_year=min_year, max_year=max_year)
    if on_error == "raise":
        raise_unreadable(values, ~parsed["valid"], "a date", (
            f"dates must be real calendar dates with a four-digit year from {min_year} to "
            f"{max_year} (`min_year`, `max_year`), such as 1990-03-05, 19900305, "
            "1990년 3월 5일, 05/03/1990 or 5 March 1990"))
    return parsed["iso"].rename(values.name)


# The parts of a date in one value, as a multi-column step joins them (`PARTS_SEPARATOR`).
PARTS_SEPARATOR = "\x1f"


def normalize_date_parts(
    values: pd.Series, *, month: str | None = None, day: str | None = None,
    on_error: str | None = "null", min_year: int = MIN_YEAR, max_year: int = MAX_YEAR,
) -> pd.Series:
    """One ISO date "YYYY-MM-DD" from a year column and the `month` and `day` columns.

    YAML: `{type: date_parts, column: birth_year, month: birth_month, day: birth_day,
    output: birth_date}`. The run joins the three values of each record (a float that holds an
    integer, 1990.0, reads as 1990); a record missing any part, or whose parts are no calendar
    date (31 February), has no date. Options `on_error`, `min_year` and `max_year` as in
    `date`. Compare the output with a `date` comparison.
    """
    check_series(values, "date_parts")
    check_choice("date_parts", "on_error", on_error, ON_ERROR)
    for option, value in (("month", month), ("day", day)):
        if value is not None and (not isinstance(value, str) or not value):
            raise OptionValueError(f"date_parts: `{option}` must name the column that holds it")

    if month is None and day is None:  # no parts named: the column holds whole dates
        return normalize_date(values, order="YMD", on_error=on_error, min_year=min_year,
                              max_year=max_year)

    def one(value) -> str | None:
        if value is None or pd.isna(value):
            return None
        parts = [integral_text(p.strip()) for p in str(value).split(PARTS_SEPARATOR)]
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            return None
        y, m, d = (int(p) for p in parts)
        if not min_year <= y <= max_year:
            return None
        try:
            return dt.date(y, m, d).isoformat()
        except ValueError:
            return None

    text = values.to_numpy(dtype=object)
    out = pd.Series([one(v) for v in text], index=values.index, name=values.name, dtype=object)
    if on_error == "raise":
        present = pd.Series([v is not None and not pd.isna(v) and PARTS_SEPARATOR * 2 in str(v)
                             and all(p.strip() for p in str(v).split(PARTS_SEPARATOR))
                             for v in text], index=values.index)
        raise_unreadable(values, present & out.isna(), "a date",
                         "year, month and day must form a calendar date")
    return out


# The options of `date_parts` that name further input columns, in the order they are joined.
normalize_date_parts.input_options = ("month", "day")
