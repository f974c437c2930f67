"""Phone numbers: digits only, Korean numbers in national form."""

from __future__ import annotations

import pandas as pd

from ._text import (
    INTEGRAL_FLOAT,
    ON_ERROR,
    ascii_digits,
    ascii_digits_column,
    check_choice,
    check_series,
    integral_text,
    map_unique,
    raise_unreadable,
    unreadable,
)

_COUNTRIES = ("KR", None)
_KR_CALLING_CODE = "82"
# A Korean national number without its trunk 0 has 8 (02-123-4567) to 10 (010-1234-5678)
# digits; one more is allowed for "+82 (0)10 ..." where the trunk 0 was kept.
_KR_REST_LENGTHS = range(8, 12)


def _korean_national(digits: str) -> str:
    """Rewrite an international Korean number (82..., 0082...) to national form (0...)."""
    # 00 is the international dialling prefix used from Korea and most of the world.
    for prefix in (_KR_CALLING_CODE, "00" + _KR_CALLING_CODE):
        rest = digits[len(prefix) :]
        if digits.startswith(prefix) and len(rest) in _KR_REST_LENGTHS:
            return rest if rest.startswith("0") else "0" + rest
    return digits


def _digits(text: str, country: str | None) -> str | None:
    """The number's digits, or None when the value holds letters: "010-CALL-NOW" is not the
    number 010, and "n/a" is not a number at all."""
    text = integral_text(text)
    if any(ch.isalpha() for ch in text):
        return None
    digits = ascii_digits(text)
    return _korean_national(digits) if country == "KR" else digits


def _ascii_digits_column(values):
    """`_digits` of ASCII text without a country, over an Arrow string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pc.replace_substring_regex(values, f"^{INTEGRAL_FLOAT.pattern}$", r"\1")
    lettered = pc.match_substring_regex(values, "[A-Za-z]")
    return pc.if_else(lettered, pa.scalar(None, values.type), ascii_digits_column(values))


def normalize_phone(values: pd.Series, *, country: str | None = "KR",
                    on_error: str | None = "null") -> pd.Series:
    """Normalize phone numbers to digits only.

    With country="KR" every common spelling of a Korean number becomes its national form:
    "+82 10-1234-5678", "82 10 1234 5678", "(010) 1234.5678" → "01012345678", and
    "+82 2 123 4567" → "021234567". Full-width digits are read as digits; a float holding an
    integer (1012345678.0) is that integer. A value with letters ("010-CALL-NOW", "n/a") is
    unreadable: its digits alone would be another number.

    Options:
        country: "KR" (default) to rewrite Korean international forms to national form, or
            None to keep the digits only (a leading "+" is dropped).
        on_error: "null" (default) treats unreadable values as missing (a run counts them in
            a warning); "raise" raises InputError naming the column and a few of them.
    """
    check_series(values, "phone")
    check_choice("phone", "country", country, _COUNTRIES)
    check_choice("phone", "on_error", on_error, ON_ERROR)
    if country == "KR":
        out = map_unique(values, lambda s: _digits(s, country))
    else:
        out = map_unique(values, lambda s: _digits(s, None), _ascii_digits_column)
    if on_error == "raise":
        raise_unreadable(values, unreadable(values, out), "a phone number",
                         "phone numbers are digits with separators, such as 010-1234-5678 "
                         "or +82 10 1234 5678, without letters")
    return out
